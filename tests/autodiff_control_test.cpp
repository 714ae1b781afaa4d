// Gradients through control flow (cond, switch_, scan, fori_loop, while_loop): against the unrolled C++
// equivalent (the same math with C++ if/for, differentiated by the per-primitive rules) and against float64
// central differences, on random inputs.
#include <cmath>

#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;
using jitx::testing::make_int;
using jitx::testing::uniform;
using Arrays = std::vector<Array>;
using Fn = std::function<Array(const Arrays&)>;

Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }
Array rand64(Shape s, double lo = -1, double hi = 1) {
  return f64(uniform(static_cast<size_t>(jitx::testing::numel(s)), lo, hi), s);
}
double dot(const Arrays& a, const Arrays& b) {
  double s = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    auto x = a[k].to_vector<double>(), y = b[k].to_vector<double>();
    for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  }
  return s;
}
Arrays axpy(const Arrays& x, const Arrays& v, double s) {
  Arrays r;
  for (size_t i = 0; i < x.size(); ++i) r.push_back(x[i] + v[i] * s);
  return r;
}

/// Checks f's gradient at xs (f64): equal to the unrolled reference's gradient (1e-10 relative, the same math
/// in a different order), its directional derivative equal to a central difference (1e-6: the difference's
/// truncation and rounding error at eps 1e-5) and to jvp's (1e-10).
void check_grad(const Fn& f, const Fn& ref, const Arrays& xs) {
  CHECK(std::fabs(f(xs).item<double>() - ref(xs).item<double>()) <= 1e-12 * (1 + std::fabs(ref(xs).item<double>())));
  Arrays g = jitx::grad(f)(xs), gr = jitx::grad(ref)(xs);
  REQUIRE(g.size() == xs.size());
  for (size_t k = 0; k < g.size(); ++k) {
    REQUIRE(g[k].shape() == xs[k].shape());
    auto a = g[k].to_vector<double>(), b = gr[k].to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i)
      if (std::fabs(a[i] - b[i]) > 1e-10 * (1 + std::fabs(b[i])))
        FAIL_CHECK("gradient of input " << k << " element " << i << ": " << a[i] << ", unrolled " << b[i]);
  }
  Arrays v;
  for (auto& x : xs) v.push_back(rand64(x.shape()));
  const double eps = 1e-5;
  double fd = (f(axpy(xs, v, eps)).item<double>() - f(axpy(xs, v, -eps)).item<double>()) / (2 * eps);
  double gv = dot(g, v);
  CHECK(std::fabs(gv - fd) <= 1e-6 * (1 + std::fabs(fd)));
  auto [y, ty] = jitx::jvp(f, std::tuple<Arrays>{xs}, std::tuple<Arrays>{v});
  CHECK(std::fabs(ty.item<double>() - gv) <= 1e-10 * (1 + std::fabs(gv)));
}

bool positive(const Array& a) { return jnp::sum(a).item<double>() > 0; }

TEST_CASE("grad through cond matches the C++ if and finite differences, both branches", "[autodiff][control]") {
  auto tf = [](const Array& a, const Array& b) { return jnp::sin(a) * b; };
  auto ff = [](const Array& a, const Array& b) { return a * a + jnp::exp(b); };
  Fn f = [&](const Arrays& x) { return jnp::sum(lax::cond(jnp::sum(x[0]) > 0.0, tf, ff, x[0], x[1])); };
  Fn ref = [&](const Arrays& x) { return jnp::sum(positive(x[0]) ? tf(x[0], x[1]) : ff(x[0], x[1])); };
  for (double lo : {0.1, -1.0}) {
    DYNAMIC_SECTION("operands in [" << lo << ", " << lo + 0.9 << "]") {
      check_grad(f, ref, {rand64({3, 2}, lo, lo + 0.9), rand64({3, 2})});
    }
  }
}

TEST_CASE("grad through switch_: pytree outputs, a closed-over value, a branch with a zero tangent",
          "[autodiff][control]") {
  Array w = rand64({4});
  for (int idx = 0; idx < 3; ++idx) {
    DYNAMIC_SECTION("branch " << idx) {
      auto b0 = [&](const Array& a) { return std::make_pair(a * w, jnp::sum(a)); };
      auto b1 = [&](const Array& a) { return std::make_pair(jnp::tanh(a), jnp::sum(a * a) * 0.5); };
      auto b2 = [&](const Array& a) { return std::make_pair(jitx::zeros_like(a), Array::scalar(2.0, DType::float64)); };  // no tangent
      auto loss = [&](const std::pair<Array, Array>& p, const Arrays& x) {
        return jnp::sum(p.first * x[1]) + p.second * p.second;
      };
      Fn f = [&](const Arrays& x) {
        return loss(lax::switch_(Array::scalar_int(idx, DType::int32), std::tuple{b0, b1, b2}, x[0]), x);
      };
      Fn ref = [&](const Arrays& x) {
        return loss(idx == 0 ? b0(x[0]) : idx == 1 ? b1(x[0]) : b2(x[0]), x);
      };
      check_grad(f, ref, {rand64({4}), rand64({4})});
    }
  }
}

/// An RNN over xs: h = tanh(h W + x), y = h * h; loss sums the ys and the final carry.
Array rnn_step(const Array& h, const Array& x, const Array& w) { return jnp::tanh(jnp::matmul(h, w) + x); }

TEST_CASE("grad through scan (forward and reverse) matches the unrolled loop", "[autodiff][control]") {
  for (bool reverse : {false, true}) {
    DYNAMIC_SECTION("reverse=" << reverse) {
      Fn f = [&](const Arrays& p) {  // p: h0, xs, w (closed over by the body)
        auto [h, ys] = lax::scan(
            [&](const Array& c, const Array& x) {
              Array n = rnn_step(c, x, p[2]);
              return std::make_pair(n, n * n);
            },
            p[0], p[1], lax::ScanOptions{.reverse = reverse});
        return jnp::sum(ys * jitx::arange(int64_t{5}, DType::float64).reshape({5, 1})) + jnp::sum(h * h * h);
      };
      Fn ref = [&](const Arrays& p) {
        Array h = p[0];
        std::vector<Array> ys(5);
        for (int k = 0; k < 5; ++k) {
          int t = reverse ? 4 - k : k;
          h = rnn_step(h, p[1][t], p[2]);
          ys[t] = h * h;
        }
        return jnp::sum(jnp::stack(ys) * jitx::arange(int64_t{5}, DType::float64).reshape({5, 1})) + jnp::sum(h * h * h);
      };
      check_grad(f, ref, {rand64({3}), rand64({5, 3}), rand64({3, 3})});
    }
  }
}

TEST_CASE("grad through scan with a pytree carry (with an int counter) and pytree xs", "[autodiff][control]") {
  Fn f = [](const Arrays& p) {
    auto init = std::make_tuple(p[0], p[1], Array::scalar_int(0, DType::int32));
    auto xs = std::make_pair(p[2], p[3]);
    auto [c, ys] = lax::scan(
        [](const auto& c, const auto& x) {
          auto [a, b, i] = c;
          Array na = a * jnp::cos(b) + x.first;
          Array nb = b + jnp::sin(a) * x.second + lax::convert_element_type(i, DType::float64);
          return std::make_pair(std::make_tuple(na, nb, i + 1), std::make_pair(na - nb, x.second * a));
        },
        init, xs);
    return jnp::sum(std::get<0>(c)) + jnp::sum(std::get<1>(c) * std::get<1>(c)) + jnp::sum(ys.first) +
           jnp::sum(jnp::tanh(ys.second));
  };
  Fn ref = [](const Arrays& p) {
    Array a = p[0], b = p[1];
    Array s = Array::scalar(0.0, DType::float64);
    for (int t = 0; t < 4; ++t) {
      Array na = a * jnp::cos(b) + p[2][t];
      Array nb = b + jnp::sin(a) * p[3][t] + static_cast<double>(t);
      s = s + jnp::sum(na - nb) + jnp::sum(jnp::tanh(p[3][t] * a));
      a = na;
      b = nb;
    }
    return jnp::sum(a) + jnp::sum(b * b) + s;
  };
  check_grad(f, ref, {rand64({2}), rand64({2}), rand64({4, 2}), rand64({4, 2})});
}

TEST_CASE("grad through fori_loop with a static trip count (a scan)", "[autodiff][control]") {
  Fn f = [](const Arrays& p) {
    Array x = lax::fori_loop(Array(0), Array(6), [&](const Array& i, const Array& x) {
      return x * jnp::cos(x) + p[1] * lax::convert_element_type(i, DType::float64);
    }, p[0]);
    return jnp::sum(x * x);
  };
  Fn ref = [](const Arrays& p) {
    Array x = p[0];
    for (int i = 0; i < 6; ++i) x = x * jnp::cos(x) + p[1] * static_cast<double>(i);
    return jnp::sum(x * x);
  };
  check_grad(f, ref, {rand64({3}), rand64({3})});
}

TEST_CASE("grad through a scan inside a cond, and a cond inside a scan", "[autodiff][control]") {
  auto body = [](const Array& c, const Array& x) {
    Array n = jnp::sin(c * x) + c;
    return std::make_pair(n, n * x);
  };
  Fn f = [&](const Arrays& p) {
    auto out = lax::cond(
        jnp::sum(p[0]) > 0.0,
        [&](const Array& c, const Array& xs) {
          auto [h, ys] = lax::scan(body, c, xs);
          return jnp::sum(h) + jnp::sum(ys);
        },
        [&](const Array& c, const Array& xs) { return jnp::sum(c * c) + jnp::sum(xs); }, p[0], p[1]);
    // A cond in a scan body: each step picks its branch on the sign of x.
    auto [h2, ys2] = lax::scan(
        [](const Array& c, const Array& x) {
          Array n = lax::cond(x > 0.0, [](const Array& a, const Array& b) { return a * b; },
                              [](const Array& a, const Array& b) { return jnp::sin(a) + b; }, c, x);
          return std::make_pair(n, n);
        },
        p[2], p[3]);
    return out + jnp::sum(h2) + jnp::sum(ys2 * ys2);
  };
  Fn ref = [&](const Arrays& p) {
    Array out;
    if (positive(p[0])) {
      Array h = p[0], s = Array::scalar(0.0, DType::float64);
      for (int t = 0; t < 4; ++t) {
        auto [n, y] = body(h, p[1][t]);
        h = n;
        s = s + jnp::sum(y);
      }
      out = jnp::sum(h) + s;
    } else {
      out = jnp::sum(p[0] * p[0]) + jnp::sum(p[1]);
    }
    Array h = p[2], s = Array::scalar(0.0, DType::float64);
    for (int t = 0; t < 5; ++t) {
      Array x = p[3][t];
      h = x.item<double>() > 0 ? h * x : jnp::sin(h) + x;
      s = s + h * h;
    }
    return out + h + s;
  };
  for (double lo : {0.1, -1.0}) {
    DYNAMIC_SECTION("operands in [" << lo << ", " << lo + 0.9 << "]") {
      check_grad(f, ref, {rand64({2}, lo, lo + 0.9), rand64({4, 2}), rand64({}), rand64({5})});
    }
  }
}

TEST_CASE("grad of a jitted function with a scan, and jit of its grad", "[autodiff][control]") {
  auto f = [](const Array& h0, const Array& xs, const Array& w) {
    auto [h, ys] = lax::scan(
        [&](const Array& c, const Array& x) {
          Array n = rnn_step(c, x, w);
          return std::make_pair(n, jnp::sum(n));
        },
        h0, xs);
    return jnp::sum(ys) + jnp::sum(h);
  };
  Array h0 = rand64({3}), xs = rand64({6, 3}), w = rand64({3, 3});
  auto ge = grad(f, argnums<0, 1, 2>)(h0, xs, w);
  auto gj = grad(jit(f), argnums<0, 1, 2>)(h0, xs, w);
  auto jg = jit(grad(f, argnums<0, 1, 2>))(h0, xs, w);
  Arrays e{std::get<0>(ge), std::get<1>(ge), std::get<2>(ge)};
  Arrays a{std::get<0>(gj), std::get<1>(gj), std::get<2>(gj)};
  Arrays b{std::get<0>(jg), std::get<1>(jg), std::get<2>(jg)};
  for (size_t k = 0; k < e.size(); ++k) {
    auto ev = e[k].to_vector<double>(), av = a[k].to_vector<double>(), bv = b[k].to_vector<double>();
    for (size_t i = 0; i < ev.size(); ++i) {
      CHECK(std::fabs(av[i] - ev[i]) <= 1e-12 * (1 + std::fabs(ev[i])));
      CHECK(std::fabs(bv[i] - ev[i]) <= 1e-12 * (1 + std::fabs(ev[i])));
    }
  }
  // The eager gradient itself against the unrolled loop.
  Fn ff = [&](const Arrays& p) { return f(p[0], p[1], p[2]); };
  Fn ref = [&](const Arrays& p) {
    Array h = p[0], s = Array::scalar(0.0, DType::float64);
    for (int t = 0; t < 6; ++t) {
      h = rnn_step(h, p[1][t], p[2]);
      s = s + jnp::sum(h);
    }
    return s + jnp::sum(h);
  };
  check_grad(ff, ref, {h0, xs, w});
  // The backward pass is a scan too: the jaxpr of the gradient holds two scans (forward, transposed).
  std::string text = make_jaxpr(grad(f, argnums<0, 1, 2>))(h0, xs, w).str();
  size_t n = 0;
  for (size_t p = text.find("scan["); p != std::string::npos; p = text.find("scan[", p + 1)) ++n;
  CHECK(n == 2);
}

TEST_CASE("second derivatives through cond and scan", "[autodiff][control]") {
  auto f = [](const Array& x) {
    return lax::cond(x > 0.0, [](const Array& a) { return a * a * a; }, [](const Array& a) { return jnp::sin(a); }, x);
  };
  auto d2 = grad(grad(f));
  for (double v : {0.7, -1.3}) {
    double want = v > 0 ? 6 * v : -std::sin(v);
    CHECK(std::fabs(d2(f64({v}, {})).item<double>() - want) < 1e-12);
  }
  // Through scan: g(x) = x_3 with x_{k+1} = sin(x_k) * x_k; the second derivative against a difference of
  // the (reverse-mode) first derivative.
  auto g = [](const Array& x) {
    return lax::scan([](const Array& c, const std::tuple<>&) { return std::make_pair(jnp::sin(c) * c, std::tuple<>{}); },
                     x, std::tuple<>{}, lax::ScanOptions{.length = 3})
        .first;
  };
  double x0 = 0.9, eps = 1e-5;
  double d2g = grad(grad(g))(f64({x0}, {})).item<double>();
  double fd = (grad(g)(f64({x0 + eps}, {})).item<double>() - grad(g)(f64({x0 - eps}, {})).item<double>()) / (2 * eps);
  CHECK(std::fabs(d2g - fd) <= 1e-6 * (1 + std::fabs(fd)));
}

TEST_CASE("jvp through while_loop; reverse mode names the fix", "[autodiff][control]") {
  // x_{k+1} = sin(x_k) + c * x_k while k < n, with n traced (a while loop, not a scan).
  auto f = [](const Array& x, const Array& c, const Array& n) {
    auto out = lax::while_loop([&](const auto& s) { return std::get<0>(s) < n; },
                               [&](const auto& s) {
                                 auto [k, v] = s;
                                 return std::make_tuple(k + 1, jnp::sin(v) + c * v);
                               },
                               std::make_tuple(Array::scalar_int(0, DType::int32), x));
    return std::get<1>(out);
  };
  Array x = rand64({3}), c = rand64({3}), tx = rand64({3}), tc = rand64({3});
  Array n = Array::scalar_int(5, DType::int32);
  auto run = [&](const Array& a, const Array& b) { return f(a, b, n); };
  auto [y, ty] = jitx::jvp(run, std::tuple<Array, Array>{x, c}, std::tuple<Array, Array>{tx, tc});
  // Against the unrolled loop's jvp and a central difference.
  auto unrolled = [](const Array& a, const Array& b) {
    Array v = a;
    for (int k = 0; k < 5; ++k) v = jnp::sin(v) + b * v;
    return v;
  };
  auto [yr, tyr] = jitx::jvp(unrolled, std::tuple<Array, Array>{x, c}, std::tuple<Array, Array>{tx, tc});
  double eps = 1e-6;
  auto yp = run(x + tx * eps, c + tc * eps).to_vector<double>(), ym = run(x - tx * eps, c - tc * eps).to_vector<double>();
  auto got = ty.to_vector<double>(), want = tyr.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(std::fabs(got[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i])));
    CHECK(std::fabs(got[i] - (yp[i] - ym[i]) / (2 * eps)) <= 1e-6);
  }
  CHECK(y.to_vector<double>() == yr.to_vector<double>());
  // Inside jit, too (the loop bound is a tracer there).
  auto [yj, tyj] = jitx::jvp(jit(f), std::tuple<Array, Array, Array>{x, c, n},
                             std::tuple<Array, Array, Array>{tx, tc, Array::scalar_int(0, DType::int32)});
  auto gj = tyj.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(gj[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i])));
  // Reverse mode throws, naming scan and a static fori_loop.
  try {
    grad([&](const Array& a) { return jnp::sum(run(a, c)); })(x);
    FAIL("grad through while_loop should throw");
  } catch (const TypeError& e) {
    std::string m = e.what();
    CHECK(m.find("Reverse-mode differentiation does not work for lax::while_loop") != std::string::npos);
    CHECK(m.find("lax::scan") != std::string::npos);
    CHECK(m.find("fori_loop with a static trip count") != std::string::npos);
  }
  // A loop whose carry has no tangent (only an integer) differentiates fine in reverse: nothing to save.
  auto g = grad([&](const Array& a) {
    auto k = lax::while_loop([&](const Array& i) { return i < n; }, [](const Array& i) { return i + 1; },
                             Array::scalar_int(0, DType::int32));
    return jnp::sum(a * a) * lax::convert_element_type(k, DType::float64);
  })(x);
  auto gv = g.to_vector<double>(), xv = x.to_vector<double>();
  for (size_t i = 0; i < gv.size(); ++i) CHECK(std::fabs(gv[i] - 10 * xv[i]) < 1e-12);
}

}  // namespace

namespace {
/// A deep MLP-ish function: 8 layers of tanh(tanh(x W) W), each optionally checkpointed.
Array deep_mlp(const Array& x, const std::vector<Array>& ws, const CheckpointPolicy* policy) {
  auto layer = [](const Array& h, const Array& w) { return jnp::tanh(jnp::matmul(jnp::tanh(jnp::matmul(h, w)), w)); };
  Array h = x;
  for (auto& w : ws) h = policy ? checkpoint(layer, *policy)(h, w) : layer(h, w);
  return jnp::sum(h * h);
}

TEST_CASE("checkpoint: the same gradients under every policy, recomputation in the backward pass",
          "[autodiff][control]") {
  Array x = rand64({6, 5});
  std::vector<Array> ws;
  for (int k = 0; k < 8; ++k) ws.push_back(rand64({5, 5}, -0.6, 0.6));
  auto g_plain = grad([](const Array& a, const std::vector<Array>& w) { return deep_mlp(a, w, nullptr); },
                      argnums<0, 1>)(x, ws);
  for (const CheckpointPolicy* p : {&checkpoint_policies::nothing_saveable, &checkpoint_policies::dots_saveable,
                                    &checkpoint_policies::everything_saveable}) {
    DYNAMIC_SECTION(p->name) {
      auto fp = [p](const Array& a, const std::vector<Array>& w) { return deep_mlp(a, w, p); };
      CHECK(fp(x, ws).item<double>() == deep_mlp(x, ws, nullptr).item<double>());
      for (int mode = 0; mode < 2; ++mode) {  // eager, and jit of grad
        auto g = mode == 0 ? grad(fp, argnums<0, 1>)(x, ws) : jit(grad(fp, argnums<0, 1>))(x, ws);
        Arrays got{std::get<0>(g)}, want{std::get<0>(g_plain)};
        for (int k = 0; k < 8; ++k) {
          got.push_back(std::get<1>(g)[k]);
          want.push_back(std::get<1>(g_plain)[k]);
        }
        for (size_t k = 0; k < got.size(); ++k) {
          auto a = got[k].to_vector<double>(), b = want[k].to_vector<double>();
          for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-13 * (1 + std::fabs(b[i])));
        }
      }
      // Forward mode and jvp/vjp consistency are unchanged by checkpoint.
      Array v = rand64({6, 5});
      auto [y, ty] = jitx::jvp([&](const Array& a) { return fp(a, ws); }, x, v);
      double gv = dot({std::get<0>(g_plain)}, {v});
      CHECK(std::fabs(ty.item<double>() - gv) <= 1e-12 * (1 + std::fabs(gv)));
      // The backward pass recomputes behind a barrier unless everything may be saved; nothing_saveable
      // recomputes the 16 forward matrix products, dots_saveable only the tanhs around them.
      auto count = [](const std::string& text, const std::string& what) {
        size_t n = 0;
        for (size_t q = text.find(what); q != std::string::npos; q = text.find(what, q + 1)) ++n;
        return n;
      };
      std::string text = make_jaxpr(grad(fp))(x, ws).str();
      std::string plain = make_jaxpr(grad([](const Array& a, const std::vector<Array>& w) {
                            return deep_mlp(a, w, nullptr);
                          }))(x, ws).str();
      bool everything = p == &checkpoint_policies::everything_saveable;
      CHECK((text.find("optimization_barrier") != std::string::npos) == !everything);
      size_t extra = p == &checkpoint_policies::nothing_saveable ? 16 : 0;
      CHECK(count(text, "= dot_general") == count(plain, "= dot_general") + extra);
      CHECK((count(text, "= tanh") > count(plain, "= tanh")) == !everything);
    }
  }
  // Grad of grad through a checkpointed function: the second derivative of sum(tanh(a w)^2) along a.
  auto inner = checkpoint([](const Array& a, const Array& w) { return jnp::sum(jnp::tanh(a * w) * jnp::tanh(a * w)); });
  Array a = rand64({4}), w = rand64({4});
  auto hv = grad([&](const Array& b) { return jnp::sum(grad(inner)(b, w)); })(a);
  auto av = a.to_vector<double>(), wv = w.to_vector<double>(), hvv = hv.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    double t = std::tanh(av[i] * wv[i]), s = 1 - t * t;  // d/da 2 t s w = 2 w^2 s (s - 2 t^2)
    CHECK(std::fabs(hvv[i] - 2 * wv[i] * wv[i] * s * (s - 2 * t * t)) < 1e-12);
  }
}

TEST_CASE("checkpoint(nothing_saveable) shrinks the compiled gradient's temp memory", "[autodiff][control]") {
  // f32 activations of 256 x 128 (128 KiB each); the weights are small next to them.
  Array x = make(uniform(256 * 128, -1, 1), {256, 128}, DType::float32);
  std::vector<Array> ws;
  for (int k = 0; k < 8; ++k) ws.push_back(make(uniform(128 * 128, -0.1, 0.1), {128, 128}, DType::float32));
  auto temp = [&](const CheckpointPolicy* p) {
    auto g = jit(grad([p](const Array& a, const std::vector<Array>& w) { return deep_mlp(a, w, p); }, argnums<1>));
    return g.lower(x, ws).compile().memory_analysis().temp_size_in_bytes;
  };
  int64_t plain = temp(nullptr), remat = temp(&checkpoint_policies::nothing_saveable);
  int64_t all = temp(&checkpoint_policies::everything_saveable);
  INFO("temp bytes: plain " << plain << ", nothing_saveable " << remat << ", everything_saveable " << all);
  const int64_t act = 256 * 128 * 4;
  // Without checkpoint each layer keeps several activations alive until the backward pass reaches it; with
  // it only each layer's input is (measured: 2293760 bytes plain, 1441792 checkpointed): at least 4 of the
  // 8 layers' activations smaller. Saving everything keeps what plain keeps.
  CHECK(remat + 4 * act <= plain);
  CHECK(all >= plain - act);
}
}  // namespace
