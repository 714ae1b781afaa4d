// The CPU backend's math library: erf_inv, digamma and the f32 polynomial math within a few ULP of long-double and
// double references (tolerances.h's ULP bounds), f32 exp at the ends of its range, logistic staged in long rows,
// and GELU's tanh form run as a logistic, accurate in the negative tail.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <utility>

#include "backend_test_util.h"
#include "jitx/jit.h"
#include "jitx/nn.h"
#include "jitx/random.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;
using Catch::Matchers::Contains;

namespace {
/// The largest error of the CPU backend's `op` on inputs xs of dtype d (f32 or f64), in ULP of the dtype at the
/// reference value (long double); also the input where it occurs.
std::pair<double, double> max_ulp_error(const std::string& op, DType d, const std::vector<double>& xs,
                                        long double (*ref)(long double)) {
  int64_t n = static_cast<int64_t>(xs.size());
  std::string t = shape_text(d, {n});
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(t, op, {t}));
  Literal x = Literal::make(d, {n});
  for (int64_t i = 0; i < n; ++i) x.set_f64(i, xs[i]);
  Literal y = run(native(), m, {x})[0];
  bool f32 = d == DType::float32;
  double worst = 0, at = 0;
  for (int64_t i = 0; i < n; ++i) {
    long double r = ref(static_cast<long double>(x.get_f64(i)));
    double got = y.get_f64(i);
    double err;
    if (std::isnan(static_cast<double>(r)) || std::isinf(static_cast<double>(r))) {
      err = (std::isnan(got) && std::isnan(static_cast<double>(r))) || got == static_cast<double>(r) ? 0 : INFINITY;
    } else {
      int e = f32 ? std::max(std::ilogb(static_cast<float>(r)), -126) - 23
                  : std::max(std::ilogb(static_cast<double>(r)), -1022) - 52;
      err = static_cast<double>(std::fabs(static_cast<long double>(got) - r) / std::ldexp(1.0L, e));
    }
    if (!(err <= worst)) worst = err, at = x.get_f64(i);
  }
  return {worst, at};
}

/// erf_inv in long double: bisection (70 halvings of [0, 10]) on f(y) = erf(y) - |x|, or (1 - |x|) - erfc(y) above
/// 1/2 (1 - |x| is exact and erfc keeps its relative accuracy), then Newton steps (which also resolve tiny |x|,
/// below the bisection's resolution).
long double ref_erf_inv(long double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  long double a = std::fabs(x);
  if (a == 1) return std::copysign(static_cast<long double>(INFINITY), x);
  auto f = [a](long double y) { return a <= 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y); };
  long double lo = 0, hi = 10;
  for (int i = 0; i < 70; ++i) {
    long double mid = (lo + hi) / 2;
    (f(mid) < 0 ? lo : hi) = mid;
  }
  long double y = (lo + hi) / 2;
  for (int i = 0; i < 3; ++i) y -= f(y) / (1.12837916709551257390L * std::exp(-y * y));
  return std::copysign(y, x);
}

/// digamma in long double. Near the positive root x0 (|x - x0| < 0.3): psi(x) = (x - x0) sum_n 1 / ((n + x0)(n + x))
/// (psi(x) - psi(x0) term by term from psi's series), 10^4 terms plus the tail as the integral from N - 1/2 with
/// its midpoint-rule correction f'(N - 1/2) / 24 (error ~1e-20): no cancellation; x - x0 with x0 in two parts, so
/// it is exact to ~1e-36 however close x is to the root. Elsewhere for x > 0: the recurrence up to x >= 30, then
/// the asymptotic series (terms to x^-18: error < 1e-25). x < 0: reflection with pi cot(pi r), r = x - round(x)
/// exact. Poles give NaN.
long double ref_digamma(long double x) {
  const long double x0 = 0xb.b16c31ab5f1fb71p-3L, x0_lo = -0x1.58dde687d6c3ep-66L;  // x0 + x0_lo: the root
  const long double pi = 3.14159265358979323846264338327950288L;
  if (std::isnan(x) || x == -INFINITY || (x <= 0 && std::nearbyint(x) == x)) return NAN;
  if (x == INFINITY) return x;
  if (x < 0) {
    long double r = x - std::nearbyint(x);
    return ref_digamma(1 - x) - pi / std::tan(pi * r);
  }
  if (std::fabs(x - x0) < 0.3L) {
    long double t = (x - x0) - x0_lo, s = 0;
    const int N = 10000;
    for (int k = N - 1; k >= 0; --k) s += 1 / ((k + x0) * (k + x));
    long double m = N - 0.5L, u = t / (m + x0);
    s += u == 0 ? 1 / (m + x0) : std::log1p(u) / u / (m + x0);
    s -= ((m + x0) + (m + x)) / ((m + x0) * (m + x) * (m + x0) * (m + x)) / 24;
    return t * s;
  }
  long double r = 0;
  while (x < 30) r -= 1 / x, x += 1;
  long double f = 1 / (x * x);
  long double series = f * (1.0L / 12 - f * (1.0L / 120 - f * (1.0L / 252 - f * (1.0L / 240 - f * (1.0L / 132 -
                       f * (691.0L / 32760 - f * (1.0L / 12 - f * (3617.0L / 8160 - f * (43867.0L / 14364)))))))));
  return r + std::log(x) - 0.5L / x - series;
}

/// Test inputs of dtype d (as doubles): dense uniform samples of [lo, hi), then `extra`.
std::vector<double> samples(DType d, double lo, double hi, int64_t n, std::vector<double> extra = {}) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    double x = lo + (i + 0.5) / n * (hi - lo);
    v.push_back(d == DType::float32 ? static_cast<double>(static_cast<float>(x)) : x);
  }
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}
}  // namespace

TEST_CASE("cpu: erf_inv and digamma are within a few ULP of long-double references", "[cpu]") {
  // Bounds checked (measured maxima in brackets; JITX_PRINT_ULP=1 prints them):
  //   erf_inv f32 on (-1, 1), including 1 - k 2^-24 and tiny arguments:         <= 4 ULP   [3.2]
  //   erf_inv f64 on (-1, 1), including 1 - k 2^-53 and tiny arguments:         <= 2 ULP   [1.4]
  //   digamma on (0, 1e6), near the pole at 0 and around the positive root:   f32 <= 1 ULP [0.5], f64 <= 5 [3.9]
  //   digamma on (-20, 0), next to the poles too: psi crosses zero between each pair of poles, where the reflection
  //     psi(1 - x) - pi cot(pi x) cancels, so the error is taken in ULP of max(|psi(x)|, 1): f32 <= 1 [0.5],
  //     f64 <= 10 [8.0].
  for (DType d : {DType::float32, DType::float64}) {
    bool f32 = d == DType::float32;
    double eps = f32 ? 0x1p-24 : 0x1p-53;
    std::vector<double> edges, tiny;
    for (int k = 1; k <= 2000; ++k) edges.push_back(1 - k * eps), edges.push_back(-(1 - k * eps));
    for (int k = 0; k < 200; ++k) tiny.push_back(std::pow(10.0, -30 + 27.0 * k / 200) * (k % 2 ? -1 : 1));
    edges.insert(edges.end(), tiny.begin(), tiny.end());
    auto [e1, at1] = max_ulp_error("erf-inv", d, samples(d, -1, 1, 1 << 15, edges), ref_erf_inv);
    INFO(dtype_name(d) << " erf_inv: max error " << e1 << " ULP at " << at1);
    CHECK(e1 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).erf_inv);
    if (std::getenv("JITX_PRINT_ULP")) WARN(dtype_name(d) << " erf_inv: max error " << e1 << " ULP at " << at1);

    std::vector<double> pos;
    for (int k = 0; k < 400; ++k) pos.push_back(std::pow(10.0, -30 + 36.0 * k / 400));  // 1e-30 .. 1e6
    for (int k = -500; k <= 500; ++k) pos.push_back(1.4616321449683623 + k * (f32 ? 1e-7 : 1e-9));  // the root
    auto [e2, at2] =
        max_ulp_error("digamma", d, samples(d, 0, 12, 1 << 14, pos), [](long double x) { return ref_digamma(x); });
    INFO(dtype_name(d) << " digamma (x > 0): max error " << e2 << " ULP at " << at2);
    CHECK(e2 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).digamma);
    if (std::getenv("JITX_PRINT_ULP")) WARN(dtype_name(d) << " digamma (x > 0): max error " << e2 << " ULP at " << at2);

    // x < 0: the absolute error in ULP of max(|psi(x)|, 1).
    std::vector<double> neg;
    for (int k = 1; k <= 20; ++k)
      for (double dx : {1e-6, 1e-4, 1e-2, 0.25}) neg.push_back(-k + dx), neg.push_back(-k - dx);
    auto negs = samples(d, -20, 0, 1 << 14, neg);
    std::erase_if(negs, [](double x) { return x == std::nearbyint(x); });
    int64_t n = static_cast<int64_t>(negs.size());
    std::string t = shape_text(d, {n});
    Literal x = Literal::make(d, {n});
    for (int64_t i = 0; i < n; ++i) x.set_f64(i, negs[i]);
    Literal y = run(native(), hlo::parse_hlo(one_op(t, "digamma", {t})), {x})[0];
    double e3 = 0, at3 = 0;
    for (int64_t i = 0; i < n; ++i) {
      long double r = ref_digamma(x.get_f64(i));
      double scale = std::max(static_cast<double>(std::fabs(r)), 1.0);
      int e = f32 ? std::ilogb(static_cast<float>(scale)) - 23 : std::ilogb(scale) - 52;
      double err = static_cast<double>(std::fabs(static_cast<long double>(y.get_f64(i)) - r) / std::ldexp(1.0L, e));
      if (!(err <= e3)) e3 = err, at3 = x.get_f64(i);
    }
    INFO(dtype_name(d) << " digamma (x < 0): max error " << e3 << " ULP of max(|psi|, 1) at " << at3);
    CHECK(e3 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).digamma_negative);
    if (std::getenv("JITX_PRINT_ULP"))
      WARN(dtype_name(d) << " digamma (x < 0): max error " << e3 << " ULP of max(|psi|, 1) at " << at3);
  }
}

TEST_CASE("cpu: f32 math is within a few ULP of double-precision references", "[cpu]") {
  // Bound checked below for every function over dense samples of each range: max error <= 4 ULP, except tanh
  // (a rational approximation with one division, for speed): <= 5 ULP.
  struct F {
    const char* op;
    double lo, hi;
    double (*ref)(double);
    double max_ulp = kF32MathUlp.polynomial;
  };
  const std::vector<F> fs{{"exponential", -87, 88, [](double x) { return std::exp(x); }},
                          {"exponential-minus-one", -10, 10, [](double x) { return std::expm1(x); }},
                          {"log", 1e-30, 1e30, [](double x) { return std::log(x); }},
                          {"log-plus-one", -0.99, 100, [](double x) { return std::log1p(x); }},
                          {"tanh", -10, 10, [](double x) { return std::tanh(x); }, kF32MathUlp.tanh},
                          {"tanh", -1e-3, 1e-3, [](double x) { return std::tanh(x); }, kF32MathUlp.tanh},
                          {"logistic", -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }},
                          {"erf", -5, 5, [](double x) { return std::erf(x); }},
                          {"sine", -1e4, 1e4, [](double x) { return std::sin(x); }},
                          {"cosine", -1e4, 1e4, [](double x) { return std::cos(x); }}};
  const int64_t n = 1 << 16;
  for (auto& f : fs) {
    std::shared_ptr<const hlo::Module> m =
        hlo::parse_hlo(one_op(fmt::format("f32[{}]", n), f.op, {fmt::format("f32[{}]", n)}));
    Literal x = Literal::make(DType::float32, {n});
    bool log_scale = std::string(f.op) == "log";
    for (int64_t i = 0; i < n; ++i) {
      double t = (i + 0.5) / n;
      x.set_f64(
          i, log_scale ? std::exp(std::log(f.lo) + t * (std::log(f.hi) - std::log(f.lo))) : f.lo + t * (f.hi - f.lo));
    }
    Literal y = run(native(), m, {x})[0];
    double max_ulp = 0;
    for (int64_t i = 0; i < n; ++i) {
      double ref = f.ref(static_cast<float>(x.get_f64(i)));
      double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
      max_ulp = std::max(max_ulp, std::fabs(y.get_f64(i) - ref) / ulp);
    }
    INFO(f.op << ": max error " << max_ulp << " ULP");
    CHECK(max_ulp <= f.max_ulp);
    if (std::getenv("JITX_PRINT_ULP")) WARN(f.op << ": max error " << max_ulp << " ULP");
  }
}

TEST_CASE("cpu: f32 exp at the ends of its range: overflow, subnormal results, specials (staged and not)", "[cpu]") {
  // exp clamps its argument and lets the clamped ends give the limits (no selects on the result): the correctly
  // rounded result within 1 ULP (2^-149 for subnormal results), +inf above ln(FLT_MAX), 0 far below, NaN kept.
  const std::vector<double> xs{-INFINITY, INFINITY, NAN, 88.72283935546875, 88.7228317, 88.0, 80.5, -87.3, -87.5,
                               -95.0, -100.0, -103.0, -103.9, -103.97, -103.972084045410, -103.98, -104.0, -105.0,
                               -150.0, -1e30, 1e30, 0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5};
  for (int64_t cols : {int64_t{7}, int64_t{4096}}) {  // 7: one loop; 4096: staged (two loops per block)
    INFO("columns: " << cols);
    std::string shape = fmt::format("f32[4,{}]", cols);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(shape, "exponential", {shape}));
    Literal x = Literal::make(DType::float32, {4, cols});
    for (int64_t i = 0; i < x.size(); ++i) x.set_f64(i, xs[static_cast<size_t>(i) % xs.size()]);
    Literal y = run(native(), m, {x})[0];
    for (int64_t i = 0; i < x.size(); ++i) {
      double a = x.get_f64(i), g = y.get_f64(i);
      double ref = static_cast<float>(std::exp(a));  // correctly rounded, subnormals included
      INFO("exp(" << a << "): got " << g << ", want " << ref);
      if (std::isnan(a)) {
        CHECK(std::isnan(g));
      } else if (std::isinf(ref) || ref == 0) {
        CHECK(g == ref);
      } else {
        double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
        CHECK(std::fabs(g - ref) <= kF32MathUlp.exp_range_ends * ulp);
      }
    }
  }
}

TEST_CASE("cpu: logistic in long rows runs as two loops per block (staged) and stays within a few ULP", "[cpu]") {
  // Rows of 1500 columns (five blocks of 256 and a partial one), three rows: x * logistic(3x). The kernel computes
  // logistic's range reduction for a block in one loop and finishes it in the element loop (two_stage_math_parts).
  auto text = [](DType d) {
    return fmt::format(R"(HloModule m

%fused (a: {0}[3,1500]) -> {0}[3,1500] {{
  %a = {0}[3,1500] parameter(0)
  %c = {0}[] constant(3)
  %cb = {0}[3,1500] broadcast(%c), broadcast_dimensions={{}}
  %z = {0}[3,1500] multiply(%a, %cb)
  %l = {0}[3,1500] logistic(%z)
  ROOT %r = {0}[3,1500] multiply(%a, %l)
}}

ENTRY %main (a: {0}[3,1500]) -> ({0}[3,1500]) {{
  %a = {0}[3,1500] parameter(0)
  %f = {0}[3,1500] fusion(%a), kind=kLoop, calls=%fused
  ROOT %t = ({0}[3,1500]) tuple(%f)
}}
)",
                       hlo_name(d));
  };
  // f32 against double precision on [-32, 32] (3x reaches past both ends of exp's range) and special values at
  // a row start, around the block boundary and at the end. The kernel folds both multiplies into the logistic
  // (3x is not rounded to f32 first: the reference takes it exact; x * l is x / (1 + e)). Allowance: logistic's 4
  // ULP plus the product's rounding; a logistic below the normal range (3x < -87.3) may be flushed to 0, an error
  // of at most |x| 2^-126.
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text(DType::float32));
  Literal x = random_literal(hlo::Shape(DType::float32, {3, 1500}), -32, 32);
  const std::vector<std::pair<int64_t, double>> specials{
      {0, NAN}, {1, INFINITY}, {2, -INFINITY}, {1023, 29.47}, {1024, -29.47}, {1025, -29.1}, {1500, 0.0},
      {1501, -0.0}, {2000, 1e30}, {2001, -1e30}, {4499, -29.0}, {3000, 1e-30}, {3001, -1e-30}};
  for (auto [i, v] : specials) x.set_f64(i, v);
  Literal y = run(native(), m, {x})[0];
  double max_ulp = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    double a = x.get_f64(i), g = y.get_f64(i);
    double z = 3.0 * a;
    double ref = a / (1 + std::exp(-z));
    INFO("x = " << a << ": got " << g << ", want " << ref);
    if (std::isnan(ref)) {
      CHECK(std::isnan(g));
      continue;
    }
    if (std::isinf(ref)) {
      CHECK(g == ref);
      continue;
    }
    double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
    double err = std::fabs(g - ref);
    CHECK(err <= kF32MathUlp.logistic_product * ulp + std::fabs(a) * std::ldexp(1.0, -126));
    if (std::fabs(z) < 87) max_ulp = std::max(max_ulp, err / ulp);
  }
  CHECK(max_ulp <= kF32MathUlp.logistic_product);
  // bf16/f16 (computed in f32, rounded like the interpreter) against the interpreter.
  for (DType d : {DType::bfloat16, DType::float16}) check_module(text(d), -12, 12);
}

TEST_CASE("cpu: GELU's tanh form runs as x * logistic(2u), accurate in the negative tail too", "[cpu]") {
  // nn::gelu(x) = 0.5 x (1 + tanh(u)); the simplifier rewrites 1 + tanh(u) = 2 logistic(2u). In f32 the tanh form
  // loses relative accuracy where u < 0 (1 + tanh(u) cancels); the logistic form does not. Reference: the tanh
  // formula in double precision on the f32 inputs.
  auto f = jit([](Array v) { return nn::gelu(v); });
  Array x = random::uniform(random::PRNGKey(7), {4, 2048}, DType::float32, -9.0, 6.0);
  std::vector<double> xs = x.to_vector<double>();
  std::vector<double> got = f(x).to_vector<double>();
  std::string optimised = f.lower(x).compile().as_text();
  CHECK_THAT(optimised, Contains("logistic("));
  CHECK_THAT(optimised, !Contains("tanh("));
  double worst_rel = 0, worst_abs = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = xs[i];
    // 0.5 (1 + tanh(u)) as 1 / (1 + exp(-2u)), which does not cancel in double either.
    double ref = v / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    double err = std::fabs(got[i] - ref);
    INFO("x = " << v << ": got " << got[i] << ", want " << ref);
    // u is computed in f32 (its constants rounded too): a relative error of a few 1e-8 in u is an absolute one of
    // ~1e-6 at u = -33 (x = -9), which exp(2u) turns into a relative one of ~2|u| 1e-8. Measured: below 1e-5
    // relative everywhere |gelu| > 1e-30, while the f32 tanh form is off by 100% past x = -5 (1 + tanh(u) is 0).
    if (std::fabs(ref) > 1e-30) {
      CHECK(err <= kF32Accuracy.gelu * std::fabs(ref));
      worst_rel = std::max(worst_rel, err / std::fabs(ref));
    } else {
      CHECK(err <= kF32Accuracy.gelu_tiny);
    }
    worst_abs = std::max(worst_abs, err);
  }
  if (std::getenv("JITX_PRINT_ULP")) WARN("gelu: worst relative error " << worst_rel << ", absolute " << worst_abs);
}
