// Gradients through control flow (cond, switch_, scan, fori_loop, while_loop): against the unrolled C++
// equivalent (the same math with C++ if/for, differentiated by the per-primitive rules) and against float64
// central differences, on random inputs.
#include <cmath>
#include <random>

#include "core/primitive.h"
#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;
using Arrays = std::vector<Array>;

/// This file's own random stream: the shared one (testing::rng) feeds later test files, whose inputs should
/// not depend on how many numbers these tests draw.
std::vector<double> uniform(size_t n, double lo, double hi) {
  static std::mt19937 g(913u);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}
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

/// Checks f's gradient at xs (f64): equal to the unrolled reference's gradient (when ref is given) (1e-10 relative, the
/// same math in a different order), its directional derivative equal to a central difference (1e-6: the difference's
/// truncation and rounding error at eps 1e-5) and to jvp's (1e-10).
void check_grad(const Fn& f, const Fn& ref, const Arrays& xs) {
  if (ref)
    CHECK(std::fabs(f(xs).item<double>() - ref(xs).item<double>()) <= 1e-12 * (1 + std::fabs(ref(xs).item<double>())));
  Arrays g = jitx::grad(f)(xs), gr = ref ? jitx::grad(ref)(xs) : g;
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
      auto b2 = [&](const Array& a) {
        return std::make_pair(jitx::zeros_like(a), Array::scalar(2.0, DType::float64));
      };  // no tangent
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
        return jnp::sum(jnp::stack(ys) * jitx::arange(int64_t{5}, DType::float64).reshape({5, 1})) +
               jnp::sum(h * h * h);
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

TEST_CASE("grad through a scan nested in a scan (closing over the outer slice), under jit too",
          "[autodiff][control]") {
  Fn f = [](const Arrays& p) {  // p: h0 [3], xs [4, 2, 3], w [3, 3]
    auto [h, ys] = lax::scan(
        [&](const Array& c, const Array& x) {  // x: [2, 3], scanned again inside
          auto [c2, zs] = lax::scan(
              [&](const Array& d, const Array& r) {
                Array n = jnp::tanh(jnp::matmul(d, p[2]) + r * jnp::sum(x));
                return std::make_pair(n, n * c);
              },
              c, x);
          return std::make_pair(c2, jnp::sum(zs));
        },
        p[0], p[1]);
    return jnp::sum(h) + jnp::sum(ys * ys);
  };
  Fn ref = [](const Arrays& p) {
    Array h = p[0], s = Array::scalar(0.0, DType::float64);
    for (int t = 0; t < 4; ++t) {
      Array x = p[1][t], c = h, zsum = Array::scalar(0.0, DType::float64);
      for (int u = 0; u < 2; ++u) {
        Array n = jnp::tanh(jnp::matmul(h, p[2]) + x[u] * jnp::sum(x));
        zsum = zsum + jnp::sum(n * c);
        h = n;
      }
      s = s + zsum * zsum;
    }
    return jnp::sum(h) + s;
  };
  Arrays xs{rand64({3}), rand64({4, 2, 3}), rand64({3, 3})};
  check_grad(f, ref, xs);
  Arrays gj = jit(grad(f))(xs), ge = grad(ref)(xs);
  for (size_t k = 0; k < xs.size(); ++k) {
    auto a = gj[k].to_vector<double>(), b = ge[k].to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-10 * (1 + std::fabs(b[i])));
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
    return lax::scan(
               [](const Array& c, const std::tuple<>&) { return std::make_pair(jnp::sin(c) * c, std::tuple<>{}); }, x,
               std::tuple<>{}, lax::ScanOptions{.length = 3})
        .first;
  };
  double x0 = 0.9, eps = 1e-5;
  double d2g = grad(grad(g))(f64({x0}, {})).item<double>();
  double fd = (grad(g)(f64({x0 + eps}, {})).item<double>() - grad(g)(f64({x0 - eps}, {})).item<double>()) / (2 * eps);
  CHECK(std::fabs(d2g - fd) <= 1e-6 * (1 + std::fabs(fd)));
}

TEST_CASE("jvp through while_loop, reverse mode names the fix", "[autodiff][control]") {
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
  auto yp = run(x + tx * eps, c + tc * eps).to_vector<double>(),
       ym = run(x - tx * eps, c - tc * eps).to_vector<double>();
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
  // linearize works (JAX's partial evaluation of while: the whole JVP loop is the linear function), eagerly and
  // under jit; its transpose (vjp's backward pass) is the reverse-mode error, raised when the pullback is called.
  auto [yl, fl] = linearize(run, x, c);
  CHECK(yl.to_vector<double>() == yr.to_vector<double>());
  auto tl = fl(tx, tc).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(tl[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i])));
  auto lj = jit([&](const Array& a, const Array& b, const Array& ta, const Array& tb) {
    auto [out, lf] = linearize(run, a, b);
    return lf(ta, tb);
  })(x, c, tx, tc).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(lj[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i])));
  auto [yv, pullback] = vjp(run, x, c);
  CHECK(yv.to_vector<double>() == yr.to_vector<double>());
  CHECK_THROWS_WITH(pullback(yv), Catch::Contains("Reverse-mode differentiation does not work for lax::while_loop"));
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
      // Under jit the checkpoint equations lower inline: the same value to rounding.
      double jv = jit(fp)(x, ws).item<double>(), ev = deep_mlp(x, ws, nullptr).item<double>();
      CHECK(std::fabs(jv - ev) <= 1e-13 * (1 + std::fabs(ev)));
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

TEST_CASE("checkpoint inside a scan body: the mark survives tracing, the same gradients", "[autodiff][control]") {
  // Layers in a scan over stacked weights, the body checkpointed (the usual way to remat a deep stack).
  auto layer = [](const Array& h, const Array& w) { return jnp::tanh(jnp::matmul(jnp::tanh(jnp::matmul(h, w)), w)); };
  auto loss = [&](const Array& x, const Array& ws, bool remat) {
    auto body = [&](const Array& h, const Array& w) {
      Array n = remat ? checkpoint(layer)(h, w) : layer(h, w);
      return std::make_pair(n, jnp::sum(n));
    };
    auto [h, ys] = lax::scan(body, x, ws);
    return jnp::sum(h * h) + jnp::sum(ys);
  };
  Array x = rand64({4, 5}), ws = rand64({6, 5, 5}, -0.6, 0.6);
  auto gp = grad([&](const Array& a, const Array& w) { return loss(a, w, false); }, argnums<0, 1>)(x, ws);
  auto fr = [&](const Array& a, const Array& w) { return loss(a, w, true); };
  for (int mode = 0; mode < 2; ++mode) {
    auto gr = mode == 0 ? grad(fr, argnums<0, 1>)(x, ws) : jit(grad(fr, argnums<0, 1>))(x, ws);
    for (auto [a, b] : {std::pair{std::get<0>(gr), std::get<0>(gp)}, std::pair{std::get<1>(gr), std::get<1>(gp)}}) {
      auto av = a.to_vector<double>(), bv = b.to_vector<double>();
      for (size_t i = 0; i < av.size(); ++i) CHECK(std::fabs(av[i] - bv[i]) <= 1e-13 * (1 + std::fabs(bv[i])));
    }
  }
  // The scan's jaxpr holds the checkpoint equation; its gradient recomputes behind a barrier.
  CHECK(make_jaxpr(fr)(x, ws).str().find("checkpoint[") != std::string::npos);
  CHECK(make_jaxpr(grad(fr))(x, ws).str().find("optimization_barrier") != std::string::npos);
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
  // it only each layer's input is (measured: 2293760 bytes plain, 1441792 checkpointed; in a scan 9699392 and
  // 3407936): at least 4 of the 8 layers' activations smaller. Saving everything keeps what plain keeps.
  CHECK(remat + 4 * act <= plain);
  CHECK(all >= plain - act);
  // The same layers in a scan over stacked weights, the body checkpointed or not.
  Array wst = jnp::stack(ws);
  auto scan_temp = [&](bool remat) {
    auto g = jit(grad(
        [remat](const Array& a, const Array& w) {
          auto layer = [](const Array& h, const Array& v) {
            return jnp::tanh(jnp::matmul(jnp::tanh(jnp::matmul(h, v)), v));
          };
          auto [h, ys] = lax::scan(
              [&](const Array& c, const Array& v) {
                return std::make_pair(remat ? checkpoint(layer)(c, v) : layer(c, v), std::tuple<>{});
              },
              a, w);
          return jnp::sum(h * h);
        },
        argnums<1>));
    return g.lower(x, wst).compile().memory_analysis().temp_size_in_bytes;
  };
  int64_t scan_plain = scan_temp(false), scan_remat = scan_temp(true);
  INFO("scan temp bytes: plain " << scan_plain << ", checkpointed body " << scan_remat);
  CHECK(scan_remat + 4 * act <= scan_plain);
}

TEST_CASE("optimization_barrier passes values through (eager, jit, HLO), remat evaluates forward",
          "[autodiff][control]") {
  const auto& barrier = *detail::find_primitive("optimization_barrier");
  Array a = rand64({3, 4}), b = make(uniform(5, -1, 1), {5}, DType::float32);
  auto f = [&](const Array& x, const Array& y) {
    auto outs = detail::bind(barrier, {x, y});
    return std::make_pair(outs[0] * 2.0, outs[1] + 1.0f);
  };
  auto [e0, e1] = f(a, b);
  auto jf = jit(f);
  auto [j0, j1] = jf(a, b);
  auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    CHECK(e0.to_vector<double>()[i] == av[i] * 2);
    CHECK(j0.to_vector<double>()[i] == av[i] * 2);
  }
  for (size_t i = 0; i < bv.size(); ++i) {
    CHECK(e1.to_vector<float>()[i] == static_cast<float>(bv[i]) + 1.0f);
    CHECK(j1.to_vector<float>()[i] == static_cast<float>(bv[i]) + 1.0f);
  }
  // The optimiser keeps the barrier; StableHLO prints it.
  CHECK(jf.lower(a, b).compile().as_text().find("opt-barrier") != std::string::npos);
  CHECK(jf.lower(a, b).as_text().find("stablehlo.optimization_barrier") != std::string::npos);
  // Its derivative passes tangents and cotangents through.
  Array v = rand64({3, 4});
  auto [y, ty] = jitx::jvp([&](const Array& x) { return detail::bind(barrier, {x})[0] * x; }, a, v);
  auto g = grad([&](const Array& x) { return jnp::sum(detail::bind(barrier, {x})[0] * x); })(a);
  auto tv = ty.to_vector<double>(), gv = g.to_vector<double>(), vv = v.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    CHECK(std::fabs(tv[i] - 2 * av[i] * vv[i]) < 1e-15);
    CHECK(std::fabs(gv[i] - 2 * av[i]) < 1e-15);
  }
  // linearize's jvp evaluates the remat equation forward (its lowering inlines the recomputation).
  auto fc = checkpoint([](const Array& x) { return jnp::sin(x) * jnp::exp(x); });
  auto [out, f_jvp] = linearize(fc, a);
  Array lt = f_jvp(v);
  auto [y2, t2] = jitx::jvp(fc, a, v);
  auto lv = lt.to_vector<double>(), t2v = t2.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    CHECK(std::fabs(lv[i] - t2v[i]) <= 1e-15 * (1 + std::fabs(t2v[i])));
    CHECK(std::fabs(lv[i] - (std::cos(av[i]) + std::sin(av[i])) * std::exp(av[i]) * vv[i]) < 1e-14);
  }
}


TEST_CASE("digamma's derivative is trigamma (f64 central differences, reflection, f32)", "[autodiff]") {
  // Positive arguments (recurrence + series) and negative non-integers (reflection).
  for (auto [lo, hi] : {std::pair{0.2, 8.0}, std::pair{-2.8, -2.2}, std::pair{-0.7, 0.4}}) {
    Array x = f64(uniform(8, lo, hi), {8}), v = rand64({8});
    auto [y, ty] = jitx::jvp([](const Array& a) { return lax::digamma(a); }, x, v);
    const double eps = 1e-6;
    auto yp = lax::digamma(x + v * eps).to_vector<double>(), ym = lax::digamma(x - v * eps).to_vector<double>();
    auto got = ty.to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) {
      double fd = (yp[i] - ym[i]) / (2 * eps);
      CHECK(std::fabs(got[i] - fd) <= 1e-6 * (1 + std::fabs(fd)));
    }
    auto g = grad([](const Array& a) { return jnp::sum(lax::digamma(a)); })(x);
    auto gv = g.to_vector<double>(), vv = v.to_vector<double>();
    for (size_t i = 0; i < gv.size(); ++i) CHECK(std::fabs(gv[i] * vv[i] - got[i]) <= 1e-12 * (1 + std::fabs(got[i])));
  }
  // Known values: psi1(1) = pi^2/6, psi1(1/2) = pi^2/2; lgamma's second derivative is trigamma.
  auto d2 = grad(grad([](const Array& a) { return lax::lgamma(a); }));
  CHECK(std::fabs(d2(f64({1.0}, {})).item<double>() - M_PI * M_PI / 6) < 1e-11);
  CHECK(std::fabs(d2(f64({0.5}, {})).item<double>() - M_PI * M_PI / 2) < 1e-11);
  // f32 within a few ULP-scale of the f64 value.
  Array x32 = make({0.3, 1.7, 4.0, 25.0, -1.5}, {5}, DType::float32);
  auto g32 = grad([](const Array& a) { return jnp::sum(lax::digamma(a)); })(x32).to_vector<double>();
  auto g64 = grad([](const Array& a) { return jnp::sum(lax::digamma(a)); })(
                 lax::convert_element_type(x32, DType::float64)).to_vector<double>();
  for (size_t i = 0; i < g32.size(); ++i) CHECK(std::fabs(g32[i] - g64[i]) <= 1e-5 * std::fabs(g64[i]));
}


TEST_CASE("scatter-mul/min/max derivatives: finite differences, ties averaged, unique_indices", "[autodiff]") {
  Array idx = jitx::testing::make_int({1, 3, 1, 7}, {4, 1}, DType::int32);  // a repeat and a dropped window
  lax::ScatterDimensionNumbers dn{.update_window_dims = {1}, .inserted_window_dims = {0},
                                  .scatter_dims_to_operand_dims = {0}, .index_vector_dim = 1};
  Array w = rand64({5, 3});
  using Scatter =
      Array (*)(const Array&, const Array&, const Array&, const lax::ScatterDimensionNumbers&, bool, bool, Loc);
  for (auto [name, op] : {std::pair<const char*, Scatter>{"min", lax::scatter_min}, {"max", lax::scatter_max},
                          {"mul", lax::scatter_mul}}) {
    DYNAMIC_SECTION("scatter-" << name) {
      std::string n = name;
      Fn f = [&](const Arrays& p) { return jnp::sum(op(p[0], idx, p[1], dn, false, false, Loc::current()) * w); };
      if (n == "mul") {
        // Non-unique indices: the operand's derivative only; the updates' throws.
        Array u = rand64({4, 3});
        check_grad([&](const Arrays& p) { return f({p[0], u}); }, nullptr, {rand64({5, 3})});
        CHECK_THROWS_AS(grad([&](const Array& v) { return f({rand64({5, 3}), v}); })(u), TypeError);
        // unique_indices: both.
        Array uidx = jitx::testing::make_int({1, 3, 0}, {3, 1}, DType::int32);
        check_grad([&](const Arrays& p) {
          return jnp::sum(lax::scatter_mul(p[0], uidx, p[1], dn, false, true) * w);
        }, nullptr, {rand64({5, 3}), rand64({3, 3})});
      } else {
        check_grad(f, nullptr, {rand64({5, 3}), rand64({4, 3})});
      }
    }
  }
  // Ties: operand 1 at row 1 and two updates of 1 there: the max's tangent is the mean of the three tangents.
  Array one_idx = jitx::testing::make_int({1, 1}, {2, 1}, DType::int32);
  lax::ScatterDimensionNumbers d1{.update_window_dims = {}, .inserted_window_dims = {0},
                                  .scatter_dims_to_operand_dims = {0}, .index_vector_dim = 1};
  auto g = [&](const Array& x, const Array& u) { return lax::scatter_max(x, one_idx, u, d1); };
  Array x = f64({0.0, 1.0, 2.0}, {3}), u = f64({1.0, 1.0}, {2});
  auto [y, ty] = jitx::jvp(g, std::tuple<Array, Array>{x, u},
                           std::tuple<Array, Array>{f64({1, 3, 5}, {3}), f64({6, 9}, {2})});
  CHECK(ty.to_vector<double>() == std::vector<double>{1, 6, 5});  // (3 + 6 + 9) / 3 at the tie
}

}  // namespace
