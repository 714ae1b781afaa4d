// Control flow: lax::cond, switch_, while_loop, fori_loop, scan against C++ loops; jaxprs, StableHLO, HLO, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>

#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/pipeline.h"
#include "lowering/lower.h"
#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;

struct Carry {
  Array count;
  Array x;
};
JITX_PYTREE(Carry, count, x)

namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }
Array f32(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float32); }

/// Instructions in all computations of an HLO module's text.
int64_t instruction_count(const std::string& hlo) {
  int64_t n = 0;
  std::istringstream in(hlo);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("  %") || line.starts_with("  ROOT %")) ++n;
  return n;
}

template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception");
  return "";
}

}  // namespace

TEST_CASE("cond: both branches against a C++ if, eager and jitted, pytree operands", "[control]") {
  auto f = [](Array p, Array x, Array y) {
    return lax::cond(
        p, [](const std::pair<Array, Array>& xy) { return std::make_pair(xy.first * 2.0f, jnp::sin(xy.second)); },
        [](const std::pair<Array, Array>& xy) { return std::make_pair(xy.first - 1.0f, jnp::cos(xy.second)); },
        std::make_pair(x, y));
  };
  auto jf = jit(f);
  auto xv = uniform(6, -2, 2), yv = uniform(6, -2, 2);
  Array x = f32(xv, {2, 3}), y = f32(yv, {6});
  for (bool p : {true, false}) {
    std::vector<double> r1, r2;
    for (size_t i = 0; i < 6; ++i) {
      r1.push_back(p ? xv[i] * 2 : xv[i] - 1);
      r2.push_back(p ? std::sin(yv[i]) : std::cos(yv[i]));
    }
    for (auto [a, b] : {f(Array(p), x, y), jf(Array(p), x, y)}) {
      check_close(a, rounded(r1, DType::float32), DType::float32, "first");
      check_close(b, r2, DType::float32, "second");
      CHECK(a.shape() == Shape{2, 3});
    }
  }
  CHECK(jf.num_compiles() == 1);  // the predicate is data: one trace for both values
}

TEST_CASE("switch_: index selects a branch, clamped out of range, tuple and vector branches", "[control]") {
  auto f = [](Array i, Array x) {
    return lax::switch_(i, std::tuple{[](Array v) { return v + 1.0f; }, [](Array v) { return v * v; },
                                      [](Array v) { return -v; }},
                        x);
  };
  auto jf = jit(f);
  Array x = f32({1.5, -2.0, 3.0}, {3});
  for (int idx : {-3, 0, 1, 2, 7}) {
    int b = std::clamp(idx, 0, 2);
    std::vector<double> ref;
    for (double v : {1.5, -2.0, 3.0}) ref.push_back(b == 0 ? v + 1 : b == 1 ? v * v : -v);
    check_close(jf(Array(idx), x), ref, DType::float32, "switch " + std::to_string(idx));
  }
  std::vector<std::function<Array(Array)>> fs;
  for (int k = 0; k < 4; ++k) fs.push_back([k](Array v) { return v * static_cast<float>(k); });
  auto g = jit([&](Array i, Array x) { return lax::switch_(i, fs, x); });
  check_close(g(Array(3), x), {4.5, -6.0, 9.0}, DType::float32, "vector branches");
}

TEST_CASE("while_loop: pytree carry against a C++ loop", "[control]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  auto f = jit([](Array x, Array limit) {
    return lax::while_loop([&](const Carry& c) { return jnp::sum(c.x) < limit; },
                           [](const Carry& c) { return Carry{c.count + 1, c.x * 1.5f + 0.25f}; },
                           Carry{Array(0), x});
  });
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<double> xv{u(rng), u(rng), u(rng)};
    double limit = 50 * u(rng);
    std::vector<float> ref(xv.begin(), xv.end());
    int count = 0;
    while (ref[0] + ref[1] + ref[2] < static_cast<float>(limit)) {
      for (auto& v : ref) v = v * 1.5f + 0.25f;
      ++count;
    }
    Carry out = f(f32(xv, {3}), Array::scalar(limit, DType::float32));
    CHECK(out.count.item<int>() == count);
    check_close(out.x, std::vector<double>(ref.begin(), ref.end()), DType::float32, "carry x");
  }
  // Eagerly (no jit) the loop runs as one while executable too.
  auto c = lax::while_loop([](const std::tuple<Array, Array>& c) { return std::get<0>(c) < 5; },
                           [](const std::tuple<Array, Array>& c) {
                             return std::make_tuple(std::get<0>(c) + 1, std::get<1>(c) * 2.0f);
                           },
                           std::make_tuple(0, Array::scalar(1, DType::float32)));
  CHECK(std::get<1>(c).item<float>() == 32.0f);
}

TEST_CASE("fori_loop: static bounds become a scan, traced bounds a while", "[control]") {
  auto body = [](Array i, Array x) { return x + i.astype(DType::float32) * x; };
  auto f = [&](Array x) { return lax::fori_loop(1, 5, body, x); };
  auto jaxpr = make_jaxpr(f)(Array::scalar(2.0, DType::float32)).str();
  CHECK_THAT(jaxpr, Contains("scan[") && Contains("length=4"));
  float ref = 2.0f;
  for (int i = 1; i < 5; ++i) ref = ref + static_cast<float>(i) * ref;
  CHECK(jit(f)(Array::scalar(2.0, DType::float32)).item<float>() == ref);

  auto g = jit([&](Array x, Array n) { return lax::fori_loop(Array(1), n, body, x); });
  CHECK_THAT(g.lower(Array::scalar(2.0, DType::float32), Array(5)).jaxpr().str(), Contains("while["));
  CHECK(g(Array::scalar(2.0, DType::float32), Array(5)).item<float>() == ref);
  CHECK(g(Array::scalar(2.0, DType::float32), Array(-3)).item<float>() == 2.0f);  // empty range
}

TEST_CASE("scan: carry and stacked ys against a C++ loop, reverse, unroll with a remainder", "[control]") {
  const int64_t n = 7, d = 3;
  auto xv = uniform(n * d, -1, 1), cv = uniform(d, -1, 1);
  for (bool reverse : {false, true}) {
    for (int64_t unroll : {1, 3}) {
      auto f = jit([=](Array c0, Array xs) {
        return lax::scan([](Array c, Array x) { return std::make_pair(c * 0.5f + x, jnp::sum(c * x)); }, c0, xs,
                         {.reverse = reverse, .unroll = unroll});
      });
      auto [c, ys] = f(f32(cv, {d}), f32(xv, {n, d}));
      std::vector<float> cr(cv.begin(), cv.end());
      std::vector<double> yr(n);
      for (int64_t s = 0; s < n; ++s) {
        int64_t t = reverse ? n - 1 - s : s;
        double dot = 0;
        for (int64_t k = 0; k < d; ++k) dot += double(cr[k]) * float(xv[t * d + k]);
        yr[t] = dot;
        for (int64_t k = 0; k < d; ++k) cr[k] = cr[k] * 0.5f + float(xv[t * d + k]);
      }
      INFO("reverse=" << reverse << " unroll=" << unroll);
      check_close(c, std::vector<double>(cr.begin(), cr.end()), DType::float32, "carry");
      CHECK(ys.shape() == Shape{n});
      check_close(ys, yr, DType::float32, "ys");
    }
  }
}

TEST_CASE("scan: pytree xs and ys, zero length, no xs", "[control]") {
  auto f = jit([](Array a, Array b) {
    return lax::scan(
        [](Array c, const std::pair<Array, Array>& x) {
          Array s = c + x.first * x.second;
          return std::make_pair(s, std::make_tuple(s, x.first.astype(DType::int32)));
        },
        Array::scalar(0, DType::float32), std::make_pair(a, b));
  });
  auto [c, ys] = f(f32({1, 2, 3}, {3}), f32({4, 5, 6}, {3}));
  CHECK(c.item<float>() == 32.0f);
  CHECK(vals(std::get<0>(ys)) == std::vector<double>{4, 14, 32});
  CHECK(std::get<1>(ys).dtype() == DType::int32);

  auto [c0, ys0] = jit([](Array a) {
    return lax::scan([](Array c, Array x) { return std::make_pair(c * 2.0f, x + c); }, Array::scalar(1, DType::float32),
                     a);
  })(zeros({0, 2}));
  CHECK(c0.item<float>() == 1.0f);
  CHECK(ys0.shape() == Shape{0, 2});

  auto [cn, ysn] = lax::scan([](Array c, std::tuple<>) { return std::make_pair(c + 1, c); }, Array(0), std::tuple<>{},
                             {.length = 4});
  CHECK(cn.item<int>() == 4);
  CHECK(ysn.to_vector<int>() == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("nested: scan inside while inside cond, closing over outer tracers", "[control]") {
  auto f = jit([](Array p, Array w, Array xs) {
    return lax::cond(
        p,
        [&](Array x0) {
          return lax::while_loop([](const std::pair<Array, Array>& c) { return c.first < 3; },
                                 [&](const std::pair<Array, Array>& c) {
                                   auto [s, ys] = lax::scan(
                                       [&](Array a, Array x) { return std::make_pair(a + x * w, a); }, c.second, xs);
                                   return std::make_pair(c.first + 1, s);
                                 },
                                 std::make_pair(Array(0), x0))
              .second;
        },
        [](Array x0) { return x0; }, jnp::sum(xs));
  });
  auto xv = uniform(4, -1, 1);
  double w = 0.75;
  Array xs = f32(xv, {4});
  float sum = 0;
  for (double x : xv) sum += float(x);
  float ref = sum;
  for (int it = 0; it < 3; ++it)
    for (double x : xv) ref = ref + float(x) * float(w);
  CHECK(std::fabs(f(Array(true), Array::scalar(w, DType::float32), xs).item<float>() - ref) < 1e-5);
  CHECK(std::fabs(f(Array(false), Array::scalar(w, DType::float32), xs).item<float>() - sum) < 1e-5);
  std::string text = f.lower(Array(true), Array::scalar(w, DType::float32), xs).jaxpr().str();
  CHECK_THAT(text, Contains("cond[") && Contains("while[") && Contains("scan["));
}

TEST_CASE("closures: outer tracers and constants become explicit operands", "[control]") {
  Array table = f32({1, 2, 3}, {3});  // a concrete array captured by the body: hoisted as a const of the outer jaxpr
  auto f = [&](Array x, Array w) {
    return lax::scan([&](Array c, Array xi) { return std::make_pair(c + xi * w + table, c); }, x, zeros({2, 3}));
  };
  auto jaxpr = make_jaxpr(f)(f32({0, 0, 0}, {3}), Array::scalar(2, DType::float32)).str();
  INFO(jaxpr);
  CHECK_THAT(jaxpr, Contains("num_consts=2"));
  CHECK(jaxpr.starts_with("{ lambda a:f32[3]; "));  // the table is a const of the outer jaxpr
  auto [c, ys] = jit(f)(f32({0, 0, 0}, {3}), Array::scalar(2, DType::float32));
  CHECK(vals(c) == std::vector<double>{2, 4, 6});
}

TEST_CASE("jaxpr: control flow prints as JAX prints it", "[control]") {
  auto w = [](Array x, Array y) {
    return lax::while_loop([](const std::tuple<Array, Array>& c) { return std::get<0>(c) < 10; },
                           [&](const std::tuple<Array, Array>& c) {
                             Array i = std::get<0>(c) + 1;  // named: C++ evaluates call arguments in any order
                             Array v = std::get<1>(c) * y;
                             return std::make_tuple(i, v);
                           },
                           std::make_tuple(0, x));
  };
  Array s = Array::scalar(1, DType::float32);
  CHECK(make_jaxpr(w)(s, s).str() == R"({ lambda ; a:f32[] b:f32[]. let
    c:i32[] d:f32[] = while[
      body_jaxpr={ lambda ; e:f32[] f:i32[] g:f32[]. let
          h:i32[] = add f 1:i32[]
          i:f32[] = mul g e
        in (h, i) }
      body_nconsts=1
      cond_jaxpr={ lambda ; j:i32[] k:f32[]. let
          l:bool[] = lt j 10:i32[]
        in (l,) }
      cond_nconsts=0
    ] b 0:i32[] a
  in (c, d) })");

  auto c = [](Array p, Array x) {
    return lax::cond(p, [](Array v) { return jnp::sin(v); }, [](Array v) { return jnp::cos(v) * 2.0f; }, x);
  };
  CHECK(make_jaxpr(c)(Array(true), s).str() == R"({ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let
            f:f32[] = cos e
            g:f32[] = mul f 2.0:f32[]
          in (g,) }
        { lambda ; h:f32[]. let i:f32[] = sin h in (i,) }
      )
    ] c b
  in (d,) })");

  auto sc = [](Array c0, Array xs) {
    return lax::scan([](Array c, Array x) { return std::make_pair(c + x, c); }, c0, xs, {.reverse = true});
  };
  CHECK_THAT(make_jaxpr(sc)(s, zeros({3})).str(),
             Contains("jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g, e) }") &&
                 Contains("length=3") && Contains("num_carry=1") && Contains("num_consts=0") &&
                 Contains("reverse=True") && Contains("unroll=1"));
}

TEST_CASE("stablehlo: while, case and if with regions", "[control]") {
  auto w = [](Array x, Array y) {
    return lax::while_loop([](const std::tuple<Array, Array>& c) { return std::get<0>(c) < 10; },
                           [&](const std::tuple<Array, Array>& c) {
                             Array i = std::get<0>(c) + 1;  // named: C++ evaluates call arguments in any order
                             Array v = std::get<1>(c) * y;
                             return std::make_tuple(i, v);
                           },
                           std::make_tuple(0, x));
  };
  Array s = Array::scalar(1, DType::float32);
  // Byte for byte what jax.jit(w).lower(1.0, 2.0).as_text() prints (JAX 0.10).
  CHECK(jit(w, {.name = "w"}).lower(s, s).as_text() ==
        R"(module @jit_w attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<i32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %c, %iterArg_1 = %arg0) : tensor<f32>, tensor<i32>, tensor<f32>
    cond {
      %c_2 = stablehlo.constant dense<10> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg_0, %c_2 : tensor<i32>
      %2 = stablehlo.multiply %iterArg_1, %iterArg : tensor<f32>
      stablehlo.return %iterArg, %1, %2 : tensor<f32>, tensor<i32>, tensor<f32>
    }
    return %0#1, %0#2 : tensor<i32>, tensor<f32>
  }
}
)");
  auto c = [](Array p, Array x) {
    return lax::cond(p, [](Array v) { return jnp::sin(v); }, [](Array v) { return jnp::cos(v) * 2.0f; }, x);
  };
  CHECK(jit(c, {.name = "f"}).lower(Array(true), s).as_text() ==
        R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i1>, %arg1: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.cosine %arg1 : tensor<f32>
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %3 = stablehlo.multiply %2, %cst : tensor<f32>
      stablehlo.return %3 : tensor<f32>
    }, {
      %2 = stablehlo.sine %arg1 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}
)");
  // A pred-indexed conditional (XLA's if form, e.g. from imported HLO) prints as stablehlo.if, true branch first.
  auto m = hlo::parse_hlo(R"(HloModule m, entry_computation_layout={(pred[], f32[])->(f32[])}

%t.1 (a.2: f32[]) -> (f32[]) {
  %a.2 = f32[] parameter(0)
  %negate.3 = f32[] negate(%a.2)
  ROOT %tuple.4 = (f32[]) tuple(%negate.3)
}

%f.5 (b.6: f32[]) -> (f32[]) {
  %b.6 = f32[] parameter(0)
  ROOT %tuple.7 = (f32[]) tuple(%b.6)
}

ENTRY %main.8 (p.9: pred[], x.10: f32[]) -> (f32[]) {
  %p.9 = pred[] parameter(0)
  %x.10 = f32[] parameter(1)
  %conditional.11 = (f32[]) conditional(%p.9, %x.10), calls=%t.1, %f.5
  %get-tuple-element.12 = f32[] get-tuple-element(%conditional.11), index=0
  ROOT %tuple.13 = (f32[]) tuple(%get-tuple-element.12)
}
)");
  hlo::verify(*m);
  std::string text = detail::print_stablehlo(*m);
  CHECK_THAT(text, Contains(R"(%0 = "stablehlo.if"(%arg0) ({
      %1 = stablehlo.negate %arg1 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }, {
      stablehlo.return %arg1 : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>)"));
  auto run = [&](bool p) {
    auto lp = detail::Literal::make(DType::bool_, {});
    lp.set_i64(0, p);
    auto lx = detail::Literal::make(DType::float32, {});
    lx.set_f64(0, 2.5);
    return evaluator::evaluate(*m, {lp, lx}).tuple.at(0).array.get_f64(0);
  };
  CHECK(run(true) == -2.5);
  CHECK(run(false) == 2.5);
}

TEST_CASE("hlo: while and conditional survive the optimiser, print and parse back", "[control]") {
  auto f = jit([](Array p, Array x, Array w) {
    Array y = lax::cond(p, [&](Array v) { return v * (w + 0.0f) * 1.0f; }, [](Array v) { return v - v; }, x);
    return lax::fori_loop(0, 3, [&](Array, Array c) { return c + jnp::exp(w) * 1.0f; }, y);
  });
  Array x = f32({1, 2}, {2}), w = f32({0.5, -0.5}, {2});
  auto compiled = f.lower(Array(true), x, w).compile();
  std::string text = compiled.as_text();
  auto m = hlo::parse_hlo(text);
  hlo::verify(*m);
  CHECK(hlo::print_hlo(*m) == text);
  CHECK_THAT(text, Contains("while(") && Contains("conditional("));
  // The simplifier ran inside the branch (x * 1, x + 0 are gone) and LICM moved exp(w) out of the loop body.
  CHECK(text.find("f32[] constant(1)") == std::string::npos);
  CHECK(text.find("f32[] constant(0)") == std::string::npos);
  CHECK(text.find("exponential(") > text.find("ENTRY"));
  auto got = vals(compiled(Array(true), x, w));
  for (int k = 0; k < 2; ++k) {
    float wk = k ? -0.5f : 0.5f, v = (k ? 2.0f : 1.0f) * wk;
    for (int i = 0; i < 3; ++i) v += std::exp(wk);
    CHECK(std::fabs(got[k] - v) < 1e-5);
  }
}

TEST_CASE("errors: carry, branch and predicate types name the combinator, the path and both types", "[control]") {
  Array s = Array::scalar(1, DType::float32);
  auto m1 = error_of<TypeError>([&] {
    jit([](Array x) {
      return lax::while_loop([](const Carry& c) { return c.count < 3; },
                             [](const Carry& c) { return Carry{c.count + 1, c.x.astype(DType::int32)}; },
                             Carry{Array(0), x});
    })(f32({1, 2}, {2}));
  });
  CHECK_THAT(m1, Contains("while_loop") && Contains("carry.x") && Contains("f32[2]") && Contains("i32[2]"));

  auto m2 = error_of<TypeError>([&] {
    lax::while_loop([](const std::vector<Array>& c) { return c[0] < 3; },
                    [](const std::vector<Array>& c) { return std::vector<Array>{c[0] + 1}; },
                    std::vector<Array>{Array(0), s});
  });
  CHECK_THAT(m2, Contains("while_loop") && Contains("tree structure") && Contains("carry[1]"));

  auto m3 = error_of<TypeError>([&] {
    jit([](Array p, Array x) { return lax::cond(p, [](Array v) { return v; }, [](Array v) { return v.sum(); }, x); })(
        Array(true), zeros({3}));
  });
  CHECK_THAT(m3, Contains("cond") && Contains("out") && Contains("f32[3]") && Contains("f32[]"));

  // A number is a predicate where it is not 0, NaN included (JAX's cond takes numbers so).
  for (auto [p, want] : {std::pair{0.5, 1.0}, {0.0, -1.0}, {NAN, 1.0}}) {
    Array got = lax::cond(
        Array(static_cast<float>(p)), [](Array v) { return v + 1.0; }, [](Array v) { return v - 1.0; }, Array(0.0));
    CHECK(got.item<double>() == want);
  }
  CHECK(lax::cond(Array(int64_t{-3}), [](Array v) { return v + 1.0; }, [](Array v) { return v; }, Array(0.0))
            .item<double>() == 1.0);
  auto m5 = error_of<TypeError>(
      [&] { lax::cond(array<bool>({true, false}), [](Array v) { return v; }, [](Array v) { return v; }, s); });
  CHECK_THAT(m5, Contains("cond") && Contains("bool[2]"));
  auto m6 = error_of<TypeError>([&] {
    lax::scan([](Array c, Array x) { return std::make_pair(x, c); }, Array::scalar(0, DType::float32), zeros({4, 2}));
  });
  CHECK_THAT(m6, Contains("scan") && Contains("carry") && Contains("f32[]") && Contains("f32[2]"));
  auto m7 = error_of<TypeError>(
      [&] { lax::switch_(s, std::tuple{[](Array v) { return v; }, [](Array v) { return v; }}, s); });
  CHECK_THAT(m7, Contains("switch") && Contains("integer scalar"));

  auto m8 = error_of<TracerError>([] {
    jit([](Array x) { return x > 0 ? x : -x; })(Array::scalar(1, DType::float32));
  });
  CHECK_THAT(m8, Contains("lax::cond"));
}

namespace {
/// An MLP of `layers` tanh(x W + b) layers, written as a scan over stacked weights or as a C++ loop.
Array mlp_scan(Array x, Array ws, Array bs) {
  return lax::scan(
             [](Array h, const std::pair<Array, Array>& wb) {
               return std::make_pair(jnp::tanh(jnp::matmul(h, wb.first) + wb.second), std::tuple<>{});
             },
             x, std::make_pair(ws, bs))
      .first;
}
Array mlp_loop(Array x, Array ws, Array bs) {
  for (int64_t l = 0; l < ws.dim(0); ++l) x = jnp::tanh(jnp::matmul(x, ws[l]) + bs[l]);
  return x;
}
}  // namespace

TEST_CASE("scan keeps the program size independent of the layer count, a C++ loop unrolls", "[control]") {
  const int64_t d = 8;
  auto count = [&](auto fn, int64_t layers) {
    Array x = zeros({4, d}), ws = zeros({layers, d, d}), bs = zeros({layers, d});
    return instruction_count(jit(fn).lower(x, ws, bs).compile().as_text());
  };
  int64_t scan4 = count(mlp_scan, 4), scan48 = count(mlp_scan, 48);
  int64_t loop4 = count(mlp_loop, 4), loop48 = count(mlp_loop, 48);
  INFO("scan " << scan4 << " / " << scan48 << ", loop " << loop4 << " / " << loop48);
  CHECK(scan4 == scan48);
  CHECK(loop48 > 5 * loop4);
  // And both compute the same thing.
  std::vector<double> wv = uniform(3 * d * d, -0.3, 0.3), bv = uniform(3 * d, -0.1, 0.1), xv = uniform(4 * d, -1, 1);
  Array x = f32(xv, {4, d}), ws = f32(wv, {3, d, d}), bs = f32(bv, {3, d});
  check_close(jit(mlp_scan)(x, ws, bs), vals(jit(mlp_loop)(x, ws, bs)), DType::float32, "scan vs loop");
}
