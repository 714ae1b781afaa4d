// Values at the ends of the ranges against JAX: unary math (sin/cos of large arguments, expm1/log1p near overflow,
// tanh, erfc, gelu), max/min of signed zeros, floor_divide and remainder, take's "clip", integer division by zero and
// int -> float conversions; eagerly and under jit (the interpreter run of the suite covers the reference evaluator).
// Reference values are JAX 0.10's (jax_enable_x64, CPU) unless a comment says otherwise.
#include <cmath>
#include <cstdint>
#include <map>

#include "numerics_unary_table.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {

/// got equals want exactly: NaN where want is NaN (of either sign), zeros of want's sign.
void check_same(const Array& got, const std::vector<double>& want, const std::string& what) {
  INFO(what << " dtype=" << dtype_name(got.dtype()));
  auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = std::isnan(want[i]) ? std::isnan(g[i]) : g[i] == want[i] && std::signbit(g[i]) == std::signbit(want[i]);
    if (!ok && bad++ < 5) FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << want[i]);
  }
  CHECK(bad == 0);
}
void both_same(const Fn& f, const std::vector<Array>& xs, const std::vector<double>& want, const std::string& what) {
  auto r = eager_and_jit(f, xs);
  check_same(r[0], want, what + " (eager)");
  check_same(r[1], want, what + " (jit)");
}

/// check_close, and a result of zero has the sign of a zero reference (odd functions keep -0).
void check_ref(const Array& got, const std::vector<double>& want, DType d, const std::string& what) {
  check_close(got, want, d, what);
  auto g = got.to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i)
    if (g[i] == 0 && want[i] == 0 && std::signbit(g[i]) != std::signbit(want[i]))
      FAIL_CHECK(what << " dtype=" << dtype_name(d) << ": element " << i << " is " << g[i] << ", want " << want[i]);
}
void both_ref(const Fn& f, const std::vector<Array>& xs, const std::vector<double>& want, DType d,
              const std::string& what) {
  auto r = eager_and_jit(f, xs);
  check_ref(r[0], want, d, what + " (eager)");
  check_ref(r[1], want, d, what + " (jit)");
}

/// got within rtol of want relative to itself (atol for results that underflow), with want's sign (-0.0 wants a
/// negative or -0 result).
void check_relative(const Array& got, const std::vector<double>& want, double rtol, double atol,
                    const std::string& what) {
  INFO(what << " dtype=" << dtype_name(got.dtype()));
  auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g[i]));
    } else {
      CHECK(std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]));
      CHECK(std::signbit(g[i]) == std::signbit(want[i]));
    }
  }
}

Array f32(const std::vector<double>& v) { return make(v, DType::float32); }

/// ULPs between got and ref (a double) in f32.
double ulps_f32(float got, double ref) {
  float r = static_cast<float>(ref);
  float a = std::fabs(r);
  double ulp = a < 1.17549435e-38f ? 1.4e-45 : std::nextafter(a, INFINITY) - a;
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

using UnaryFn = Array (*)(const Array&, Loc);
Array round_afz(const Array& x, Loc l) { return lax::round(x, lax::RoundingMethod::AWAY_FROM_ZERO, l); }
const std::map<std::string, UnaryFn>& unary_ops() {
  static const std::map<std::string, UnaryFn> m{
      {"neg", lax::neg},       {"abs", lax::abs},       {"sign", lax::sign},       {"floor", lax::floor},
      {"ceil", lax::ceil},     {"round", round_afz},    {"exp", lax::exp},         {"exp2", lax::exp2},
      {"expm1", lax::expm1},   {"log", lax::log},       {"log1p", lax::log1p},     {"sqrt", lax::sqrt},
      {"rsqrt", lax::rsqrt},   {"cbrt", lax::cbrt},     {"tanh", lax::tanh},       {"logistic", lax::logistic},
      {"sin", lax::sin},       {"cos", lax::cos},       {"tan", lax::tan},         {"asin", lax::asin},
      {"acos", lax::acos},     {"atan", lax::atan},     {"sinh", lax::sinh},       {"cosh", lax::cosh},
      {"asinh", lax::asinh},   {"acosh", lax::acosh},   {"atanh", lax::atanh},     {"erf", lax::erf},
      {"erfc", lax::erfc},     {"erf_inv", lax::erf_inv}, {"lgamma", lax::lgamma}, {"digamma", lax::digamma}};
  return m;
}

}  // namespace

TEST_CASE("numerics: every unary op at the ends of the f32 and f64 ranges gives JAX's result", "[numerics]") {
  // +-0, +-inf, NaN, the smallest subnormal and normal, tiny, huge and the largest values (numerics_unary_table.h).
  for (auto [d, inputs, rows] : {std::tuple{DType::float32, &kF32Inputs, &kF32Rows},
                                 std::tuple{DType::float64, &kF64Inputs, &kF64Rows}}) {
    Array x = make(*inputs, d);
    for (const UnaryRow& row : *rows) {
      UnaryFn op = unary_ops().at(row.op);
      both_ref([op](auto& a) { return op(a[0], Loc::current()); }, {x}, row.want, d, row.op);
    }
  }
}

TEST_CASE("numerics: expm1 and log1p stay finite up to the top of the range, in every float dtype", "[numerics]") {
  // Before: f32 expm1 was inf from x = 85 (its (e^x - 1) x overflowed) and log1p inf from x = 4e36.
  struct Case {
    DType d;
    std::vector<double> x, want;
  };
  Fn expm1 = [](auto& a) { return lax::expm1(a[0]); };
  Fn log1p = [](auto& a) { return lax::log1p(a[0]); };
  for (const auto& c : std::vector<Case>{
           {DType::float32,
            {85, 88, 88.72, 88.7228, 88.7229, 89, 20, 1e-30, -0.0, -20, -103, -INFINITY, INFINITY, NAN},
            {8.223012393018281e+36, 1.6516362661361307e+38, 3.3931795862669443e+38, 3.4026938617879213e+38, INFINITY,
             INFINITY, 485165184.0, 1.0000000031710769e-30, -0.0, -1.0, -1.0, -1.0, INFINITY, NAN}},
           {DType::bfloat16,
            {85, 88, 88.5, 89, 20, -20, -INFINITY, INFINITY},
            {8.224598223919167e+36, 1.6548888547522203e+38, 2.7249173913590775e+38, INFINITY, 484442112.0, -1.0, -1.0,
             INFINITY}},
           {DType::float16, {10, 11, 11.09375, 12, -20, -INFINITY, INFINITY},
            {22032.0, 59872.0, INFINITY, INFINITY, -1.0, -1.0, INFINITY}},
           {DType::float64, {700, 709.78, 709.79, 1e-300, -0.0, -800, INFINITY},
            {1.0142320547350045e+304, 1.7928227943945155e+308, INFINITY, 1e-300, -0.0, -1.0, INFINITY}}})
    both_ref(expm1, {make(c.x, c.d)}, c.want, c.d, "expm1");
  for (const auto& c : std::vector<Case>{
           {DType::float32,
            {1e37, 1e38, 3.4028235e38, 4e36, 1e30, 3, 1e-30, -0.0, -0.5, -1, -2, INFINITY, NAN},
            {85.19564819335938, 87.49822998046875, 88.72283935546875, 84.27935791015625, 69.07755279541016,
             1.3862943649291992, 1.0000000031710769e-30, -0.0, -0.6931471824645996, -INFINITY, NAN, INFINITY, NAN}},
           {DType::bfloat16, {1e37, 1e38, 3.3e38, 3, -0.5, -1, INFINITY},
            {85.0, 87.5, 88.5, 1.3828125, -0.69140625, -INFINITY, INFINITY}},
           {DType::float16, {60000, 65504, 3, -0.5, -1, INFINITY},
            {11.0, 11.09375, 1.38671875, -0.693359375, -INFINITY, INFINITY}},
           {DType::float64, {1e307, 1.7976931348623157e308, 1e-300, -1, INFINITY},
            {706.893623549172, 709.782712893384, 1e-300, -INFINITY, INFINITY}}})
    both_ref(log1p, {make(c.x, c.d)}, c.want, c.d, "log1p");
}

TEST_CASE("numerics: sin and cos reduce f32 arguments of every size exactly", "[numerics]") {
  // Before: the reduction by pi/2 lost all bits from |x| = 1e17 on (sin(1e18) = 3.5e11, sin(1e30) = -inf,
  // cos(FLT_MAX) = NaN). 16367173 * 2^72 is the f32 closest to a multiple of pi/2 (cos ~ -1.6e-9), 2^48 the first
  // argument of the slow path.
  std::vector<double> x{1e17, 1e18, -1e18, 1e20, 1e22, 1e30, -1e30, 1e37, 1e38, 3.4028235e38, -3.4028235e38,
                        std::ldexp(1.0, 48), std::ldexp(1.0, 48) - std::ldexp(1.0, 24), 16367173 * std::ldexp(1.0, 72),
                        1e4, 8.5e6, -0.0, 0.0, INFINITY, NAN};
  std::vector<double> sin_want{
      -0.5699716806411743, -0.21673788130283356, 0.21673788130283356, 0.6565766930580139, -0.734081506729126,
      -0.791163444519043, 0.791163444519043, 0.06952835619449615, 0.9891644716262817, -0.5218765139579773,
      0.5218765139579773, 0.1294960230588913, 0.8541060090065002, 1.0, -0.3056143820285797, 0.10211890935897827,
      -0.0, 0.0, NAN, NAN};
  std::vector<double> cos_want{
      -0.8216643333435059, 0.9762298464775085, 0.9762298464775085, 0.7542592883110046, 0.6790613532066345,
      -0.6116048097610474, -0.6116048097610474, -0.9975799918174744, 0.14681167900562286, 0.8530210256576538,
      0.8530210256576538, 0.9915799498558044, 0.5200989246368408, -1.6147697623480894e-09, -0.952155351638794,
      0.99477219581604, 1.0, 1.0, NAN, NAN};
  Fn sin = [](auto& a) { return lax::sin(a[0]); };
  Fn cos = [](auto& a) { return lax::cos(a[0]); };
  both_ref(sin, {f32(x)}, sin_want, DType::float32, "sin");
  both_ref(cos, {f32(x)}, cos_want, DType::float32, "cos");
  // bf16 (computed in f32) reaches the top of f32's range too; f16 its own.
  std::vector<double> xb{1e30, -1e20, 3.0e38, 65504, 1e4, std::ldexp(1.0, 60)};
  both_ref(sin, {make(xb, DType::bfloat16)}, {-0.90234375, 1.0, 0.392578125, 0.69140625, 0.0185546875, -0.83203125},
           DType::bfloat16, "sin");
  both_ref(cos, {make(xb, DType::bfloat16)}, {-0.4296875, -0.0294189453125, 0.91796875, -0.72265625, 1.0, -0.55859375},
           DType::bfloat16, "cos");
  std::vector<double> xh{65504, -60000, 1e4, 3e4};
  both_ref(sin, {make(xh, DType::float16)}, {0.9755859375, -0.95751953125, -0.3056640625, -0.802734375},
           DType::float16, "sin");
  both_ref(cos, {make(xh, DType::float16)}, {-0.2205810546875, -0.28857421875, -0.9521484375, -0.59619140625},
           DType::float16, "cos");

  // In a vectorised loop, large arguments among ordinary ones (single lanes, a run of them, the scalar remainder)
  // against the C library's double sin/cos (hand-checked reference: correctly rounded to within 0.5 ULP).
  std::vector<double> v = uniform(4099, -10, 10);
  auto big = uniform(4099, 14, 38.5);
  for (size_t i = 0; i < v.size(); ++i)
    if (i % 7 == 3 || (i >= 1000 && i < 1040) || i >= 4096) v[i] = std::copysign(std::pow(10.0, big[i]), v[i]);
  Array xs = f32(v);
  std::vector<double> xv = xs.to_vector<double>();
  for (bool is_cos : {false, true}) {
    Fn f = [is_cos](auto& a) { return is_cos ? lax::cos(a[0]) * 2.0 + a[0] * 0.0 : lax::sin(a[0]) * 2.0 + a[0] * 0.0; };
    auto r = eager_and_jit(f, {xs});
    for (const Array& got : r) {
      std::vector<double> g = got.to_vector<double>();
      double worst = 0;
      for (size_t i = 0; i < xv.size(); ++i)
        worst = std::max(worst, ulps_f32(static_cast<float>(g[i] / 2), is_cos ? std::cos(xv[i]) : std::sin(xv[i])));
      INFO((is_cos ? "cos" : "sin") << ": worst " << worst << " ULP");
      CHECK(worst <= 2);
    }
  }
}

TEST_CASE("numerics: f32 tanh stays within [-1, 1] and erfc is within 5 ULP", "[numerics]") {
  // Before: tanh's rational form gave 1 + 2^-23 from |x| = 9 on (to +-inf), which made 1 + tanh(u) negative.
  std::vector<double> v;
  for (double x = 6; x <= 12; x += 1.0 / 4096) v.push_back(x);
  v.push_back(INFINITY);
  for (DType d : {DType::float32, DType::bfloat16, DType::float16}) {
    Array x = make(v, d);
    for (const Array& r : eager_and_jit([](auto& a) { return lax::tanh(a[0]); }, {x})) {
      auto g = r.to_vector<double>();
      INFO(dtype_name(d));
      CHECK(*std::max_element(g.begin(), g.end()) == 1.0);
    }
    for (const Array& r : eager_and_jit([](auto& a) { return lax::tanh(-a[0]); }, {x})) {
      auto g = r.to_vector<double>();
      CHECK(*std::min_element(g.begin(), g.end()) == -1.0);
    }
  }
  // erfc is a vectorised f32 kernel (JAX's f32 erfc is 66 ULP off near 8.6); the C library's double erfc as the
  // reference. Across 1 (where its two forms meet) and into the underflow past 10.05.
  std::vector<double> e;
  for (int i = 0; i <= 1 << 16; ++i) e.push_back(-4 + 14.5 * i / (1 << 16));
  Array xe = f32(e);
  std::vector<double> ev = xe.to_vector<double>();
  for (const Array& r : eager_and_jit([](auto& a) { return lax::erfc(a[0]); }, {xe})) {
    auto g = r.to_vector<double>();
    double worst = 0;
    for (size_t i = 0; i < ev.size(); ++i)
      worst = std::max(worst, ulps_f32(static_cast<float>(g[i]), std::erfc(ev[i])));
    INFO("erfc: worst " << worst << " ULP");
    CHECK(worst <= 5);
  }
  both_same([](auto& a) { return lax::erfc(a[0]); }, {f32({INFINITY, -INFINITY, 1e30, -1e30, NAN, 0.0})},
            {0.0, 2.0, 0.0, 2.0, NAN, 1.0}, "erfc at the ends");
}

TEST_CASE("numerics: nn::gelu gives the same values eagerly and under jit, with the tails' sign and accuracy",
          "[numerics][nn]") {
  // Before, eagerly: gelu(-30) = +1.8e-6, gelu(-1e4) = 6e-4, gelu(-inf) = inf; the jitted form (rewritten to
  // x logistic(2u)) was right. References: both forms in 50-digit mpmath (JAX's own f32 tanh form is 0 from x = -5 on).
  std::vector<double> x{-1e4, -100, -30, -10, -5, -1, -0.5, 0, 0.5, 1, 5, 10, 30, 100, 1e4};
  std::vector<double> tanh_form{-0.0, -0.0, -0.0, -1.204092348209806e-37, -2.291796196629506e-07, -0.1588080093917233,
                                -0.15428599017485609, 0.0, 0.34571400982514394, 0.8411919906082767, 4.999999770820381,
                                10.0, 30.0, 100.0, 10000.0};
  std::vector<double> erf_form{-0.0, -0.0, -1.472014178144456e-196, -7.619853024160526e-23, -1.4332578593959695e-06,
                               -0.15865525393145705, -0.15426876936299344, 0.0, 0.34573123063700656, 0.8413447460685429,
                               4.999998566742141, 10.0, 30.0, 100.0, 10000.0};
  for (DType d : {DType::float32, DType::float64}) {
    double rtol = d == DType::float32 ? 2e-5 : 1e-13, atol = d == DType::float32 ? 1e-37 : 1e-300;
    for (bool approximate : {true, false}) {
      auto r = eager_and_jit([approximate](auto& a) { return nn::gelu(a[0], approximate); }, {make(x, d)});
      for (const Array& g : r) check_relative(g, approximate ? tanh_form : erf_form, rtol, atol, "gelu");
      // JAX's values at the infinities and NaN.
      both_same([approximate](auto& a) { return nn::gelu(a[0], approximate); },
                {make({INFINITY, -INFINITY, NAN, -1e20}, d)}, {INFINITY, NAN, NAN, -0.0}, "gelu at the ends");
    }
  }
  // Random arguments: eager and jit within 2e-5 of the double-precision tanh form, relative to the value.
  Array xs = random::uniform(random::PRNGKey(3), {4096}, DType::float32, -12.0, 8.0);
  std::vector<double> xv = xs.to_vector<double>(), want;
  for (double v : xv) want.push_back(v / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  for (const Array& g : eager_and_jit([](auto& a) { return nn::gelu(a[0]); }, {xs}))
    check_relative(g, want, 2e-5, 1e-37, "gelu on random arguments");
}

TEST_CASE("numerics: max and min order -0 below +0 everywhere, as XLA does", "[numerics]") {
  // Before: reductions, clamp, cummax/cummin, reduce_window, scatter-max/min and top_k treated -0 and +0 as equal
  // (and kept whichever came first); the interpreter's maximum/minimum too. JAX: max([0, -0, 0, -0]) = 0.
  for (DType d : {DType::float32, DType::float64, DType::bfloat16}) {
    auto arr = [d](std::vector<double> v) { return make(v, d); };
    Fn max = [](auto& a) { return jnp::max(a[0]); };
    Fn min = [](auto& a) { return jnp::min(a[0]); };
    both_same(max, {arr({0.0, -0.0, 0.0, -0.0})}, {0.0}, "max");
    both_same(max, {arr({-0.0, 0.0})}, {0.0}, "max");
    both_same(max, {arr({-0.0, -0.0})}, {-0.0}, "max");
    both_same(min, {arr({0.0, -0.0, 0.0})}, {-0.0}, "min");
    both_same(min, {arr({0.0, 0.0})}, {0.0}, "min");
    Array m = make({-0.0, 0.0, 0.0, -0.0}, {2, 2}, d);
    both_same([](auto& a) { return jnp::max(a[0], {1}); }, {m}, {0.0, 0.0}, "max along rows");
    both_same([](auto& a) { return jnp::min(a[0], {1}); }, {m}, {-0.0, -0.0}, "min along rows");
    both_same([](auto& a) { return jnp::max(a[0], {0}); }, {m}, {0.0, 0.0}, "max along columns");
    both_same([](auto& a) { return jnp::min(a[0], {0}); }, {m}, {-0.0, -0.0}, "min along columns");
    // Long rows (vectorised reductions), the +0 (or -0) in one place.
    std::vector<double> neg(1000, -0.0), pos(1000, 0.0);
    neg[517] = 0.0;
    pos[517] = -0.0;
    both_same(max, {arr(neg)}, {0.0}, "max of 1000");
    both_same(min, {arr(pos)}, {-0.0}, "min of 1000");
    std::vector<double> rows(10, -0.0);
    rows[5] = 0.0;
    both_same([](auto& a) { return jnp::max(jnp::reshape(a[0], {10, 100}), {1}); }, {arr(neg)}, rows, "max of rows");
    both_same([](auto& a) { return jnp::maximum(a[0], a[1]); }, {arr({0.0, -0.0}), arr({-0.0, 0.0})}, {0.0, 0.0},
              "maximum");
    both_same([](auto& a) { return jnp::minimum(a[0], a[1]); }, {arr({0.0, -0.0}), arr({-0.0, 0.0})}, {-0.0, -0.0},
              "minimum");
    // clamp is min(max(x, lo), hi): NaN from any operand.
    Fn clamp = [](auto& a) { return lax::clamp(a[0], a[1], a[2]); };
    both_same(clamp, {arr({0.0}), arr({-0.0}), arr({1.0})}, {0.0}, "clamp(0, -0, 1)");
    both_same(clamp, {arr({-0.0}), arr({0.0}), arr({1.0})}, {0.0}, "clamp(-0, 0, 1)");
    both_same(clamp, {arr({NAN}), arr({1.5}), arr({2.0})}, {NAN}, "clamp(nan, 1.5, 2)");
    both_same(clamp, {arr({0.0}), arr({1.5}), arr({NAN})}, {NAN}, "clamp(0, 1.5, nan)");
    both_same([](auto& a) { return jnp::clip(a[0], a[1], a[2]); }, {arr({-0.0, 0.0}), arr({0.0}), arr({1.0})},
              {0.0, 0.0}, "clip");
    both_same([](auto& a) { return lax::cummax(a[0]); }, {arr({-0.0, 0.0, -0.0})}, {-0.0, 0.0, 0.0}, "cummax");
    both_same([](auto& a) { return lax::cummin(a[0]); }, {arr({0.0, -0.0, 0.0})}, {0.0, -0.0, -0.0}, "cummin");
    lax::WindowConfig w;
    w.window_dimensions = {2};
    w.window_strides = {1};
    w.padding = {{0, 0}};
    both_same([w](auto& a) { return lax::reduce_window_max(a[0], w); }, {arr({-0.0, 0.0, -0.0, -0.0})},
              {0.0, 0.0, -0.0}, "reduce_window_max");
    both_same([w](auto& a) { return lax::reduce_window_min(a[0], w); }, {arr({0.0, -0.0, 0.0, 0.0})},
              {-0.0, -0.0, 0.0}, "reduce_window_min");
    both_same([](auto& a) { return jnp::at(a[0], array<int32_t>({0, 0})).max(a[1]); },
              {arr({-0.0, -0.0}), arr({0.0, -0.0})}, {0.0, -0.0}, "scatter-max");
    both_same([](auto& a) { return jnp::at(a[0], array<int32_t>({0})).min(a[1]); }, {arr({0.0, 0.0}), arr({-0.0})},
              {-0.0, 0.0}, "scatter-min");
    // top_k ranks in IEEE's total order: +NaN above everything, -NaN below, +0 above -0.
    auto top = [](auto& a) { return lax::top_k(a[0], a[0].dim(0)).first; };
    auto top_i = [](auto& a) { return jnp::astype(lax::top_k(a[0], a[0].dim(0)).second, DType::float32); };
    both_same(top, {arr({-0.0, 0.0})}, {0.0, -0.0}, "top_k");
    both_same(top_i, {arr({-0.0, 0.0})}, {1, 0}, "top_k indices");
    both_same(top_i, {arr({1, NAN, -INFINITY, -0.0, 0.0, 2})}, {1, 5, 0, 4, 3, 2}, "top_k indices with NaN");
    both_same(top_i, {arr({1, -NAN, -INFINITY, -0.0, 0.0, 2})}, {5, 0, 4, 3, 2, 1}, "top_k indices with -NaN");
    // sort and argmax keep treating the zeros as equal (stable, first index), as JAX does.
    both_same([](auto& a) { return lax::sort(a[0]); }, {arr({0.0, -0.0, 0.0, -0.0})}, {0.0, -0.0, 0.0, -0.0}, "sort");
    both_same([](auto& a) { return jnp::astype(jnp::argmax(a[0]), DType::float32); }, {arr({-0.0, 0.0})}, {0},
              "argmax");
  }
}

TEST_CASE("numerics: jnp::take with mode clip clamps negative indices to 0", "[numerics]") {
  // Before: -1 took the last element (the index was wrapped before clamping). JAX and NumPy: the first.
  Array x = f32({0, 1, 2, 3, 4});
  for (DType id : {DType::int32, DType::int64, DType::int8}) {
    Array i = make_int({-1, -7, 7, 2}, id);
    both_same([](auto& a) { return jnp::take(a[0], a[1], std::nullopt, "clip"); }, {x, i}, {0, 0, 4, 2}, "clip");
    both_same([](auto& a) { return jnp::take(a[0], a[1], std::nullopt, "fill"); }, {x, make_int({-1, -5, -6, 5}, id)},
              {4, 0, NAN, NAN}, "fill");
    both_same([](auto& a) { return jnp::take(a[0], a[1], std::nullopt, "wrap"); }, {x, make_int({-1, -6, 7}, id)},
              {4, 4, 2}, "wrap");
  }
  // Unsigned indices past int64's range are past the end.
  both_same([](auto& a) { return jnp::take(a[0], a[1], std::nullopt, "clip"); },
            {x, make_int({-1, 3}, DType::uint64)}, {4, 3}, "clip, uint64");
}

TEST_CASE("numerics: float floor_divide and remainder at zeros, infinities and NaN", "[numerics]") {
  // Before: +-inf // 3 was +-inf (JAX: NaN) and 5 // -inf was -0 (JAX and NumPy: -1). All pairs of x and y.
  std::vector<double> xs{5, -5, 0, -0.0, INFINITY, -INFINITY, NAN, 7.5, -7.5, 1e300};
  std::vector<double> ys{3, -3, 0, -0.0, INFINITY, -INFINITY, NAN, 2.5, -2.5, 1e-300};
  std::vector<double> x, y;
  for (double a : xs)
    for (double b : ys) x.push_back(a), y.push_back(b);
  Fn fd = [](auto& a) { return jnp::floor_divide(a[0], a[1]); };
  Fn rm = [](auto& a) { return jnp::remainder(a[0], a[1]); };
  const std::vector<double> floor_divide64{
      1.0, -2.0, INFINITY, -INFINITY, 0.0, -1.0, NAN, 2.0, -2.0, 4.9999999999999997e+300, -2.0, 1.0, -INFINITY,
      INFINITY, -1.0, -0.0, NAN, -2.0, 2.0, -4.9999999999999997e+300, 0.0, -0.0, NAN, NAN, 0.0, -0.0, NAN, 0.0, -0.0,
      0.0, 0.0, -0.0, NAN, NAN, 0.0, -0.0, NAN, 0.0, -0.0, 0.0, NAN, NAN, INFINITY, -INFINITY, NAN, NAN, NAN, NAN,
      NAN, NAN, NAN, NAN, -INFINITY, INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
      NAN, NAN, 2.0, -3.0, INFINITY, -INFINITY, 0.0, -1.0, NAN, 3.0, -3.0, 7.5e+300, -3.0, 2.0, -INFINITY, INFINITY,
      -1.0, -0.0, NAN, -3.0, 3.0, -7.5e+300, 3.3333333333333335e+299, -3.3333333333333335e+299, INFINITY, -INFINITY,
      0.0, -1.0, NAN, 4e+299, -4e+299, INFINITY};
  const std::vector<double> remainder64{
      2.0, -1.0, NAN, NAN, 5.0, -INFINITY, NAN, 0.0, 0.0, 4.8159326401985574e-301, 1.0, -2.0, NAN, NAN, INFINITY,
      -5.0, NAN, -0.0, -0.0, 5.184067359801443e-301, 0.0, 0.0, NAN, NAN, 0.0, 0.0, NAN, 0.0, 0.0, 0.0, -0.0, -0.0,
      NAN, NAN, -0.0, -0.0, NAN, -0.0, -0.0, -0.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
      NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 1.5, -1.5, NAN, NAN, 7.5,
      -INFINITY, NAN, 0.0, 0.0, 7.223898960297836e-301, 1.5, -1.5, NAN, NAN, INFINITY, -7.5, NAN, -0.0, -0.0,
      2.776101039702164e-301, 0.0, 0.0, NAN, NAN, 1e+300, -INFINITY, NAN, 0.0, 0.0, 4.891554850853602e-301};
  // In f32, 1e300 is inf and 1e-300 is 0.
  const std::vector<double> floor_divide32{
      1.0, -2.0, INFINITY, -INFINITY, 0.0, -1.0, NAN, 2.0, -2.0, INFINITY, -2.0, 1.0, -INFINITY, INFINITY, -1.0,
      -0.0, NAN, -2.0, 2.0, -INFINITY, 0.0, -0.0, NAN, NAN, 0.0, -0.0, NAN, 0.0, -0.0, NAN, 0.0, -0.0, NAN, NAN, 0.0,
      -0.0, NAN, 0.0, -0.0, NAN, NAN, NAN, INFINITY, -INFINITY, NAN, NAN, NAN, NAN, NAN, INFINITY, NAN, NAN,
      -INFINITY, INFINITY, NAN, NAN, NAN, NAN, NAN, -INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 2.0,
      -3.0, INFINITY, -INFINITY, 0.0, -1.0, NAN, 3.0, -3.0, INFINITY, -3.0, 2.0, -INFINITY, INFINITY, -1.0, -0.0,
      NAN, -3.0, 3.0, -INFINITY, NAN, NAN, INFINITY, -INFINITY, NAN, NAN, NAN, NAN, NAN, INFINITY};
  const std::vector<double> remainder32{
      2.0, -1.0, NAN, NAN, 5.0, -INFINITY, NAN, 0.0, 0.0, NAN, 1.0, -2.0, NAN, NAN, INFINITY, -5.0, NAN, -0.0, -0.0,
      NAN, 0.0, 0.0, NAN, NAN, 0.0, 0.0, NAN, 0.0, 0.0, NAN, -0.0, -0.0, NAN, NAN, -0.0, -0.0, NAN, -0.0, -0.0, NAN,
      NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
      NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 1.5, -1.5, NAN, NAN, 7.5, -INFINITY, NAN, 0.0, 0.0, NAN, 1.5, -1.5,
      NAN, NAN, INFINITY, -7.5, NAN, -0.0, -0.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
  for (auto [d, fd_want, rm_want] : {std::tuple{DType::float64, &floor_divide64, &remainder64},
                                     std::tuple{DType::float32, &floor_divide32, &remainder32}}) {
    std::vector<Array> args{make(x, d), make(y, d)};
    both_same(fd, args, *fd_want, "floor_divide");
    both_same(rm, args, *rm_want, "remainder");
  }
}

TEST_CASE("numerics: integer floor_divide and remainder by zero and at the extremes, every integer dtype",
          "[numerics]") {
  // Before: floor_divide(5, 0) was -1 (JAX: lax.div's -1, less one as the signs differ: -2) and remainder(x, 0) x
  // (JAX: 0, it divides by 1 instead). All pairs of x and y, x major.
  struct Case {
    DType d;
    std::vector<int64_t> xs, ys, floor_divide, remainder;
  };
  for (const Case& c : std::vector<Case>{
    {DType::int8, {-128, -7, -5, -1, 0, 5, 7, 127}, {0, 3, -3, -1},
      {-2, -43, 42, -128, -2, -3, 2, 7, -2, -2, 1, 5, -2, -1, 0, 1, -1, 0, 0, 0, -2, 1, -2, -5, -2, 2, -3, -7, -2,
      42, -43, -127},
      {0, 1, -2, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 2, -1, 0, 0, 0, 0, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 1, -2, 0}},
    {DType::int16, {-32768, -7, -5, -1, 0, 5, 7, 32767}, {0, 3, -3, -1},
      {-2, -10923, 10922, -32768, -2, -3, 2, 7, -2, -2, 1, 5, -2, -1, 0, 1, -1, 0, 0, 0, -2, 1, -2, -5, -2, 2, -3,
      -7, -2, 10922, -10923, -32767},
      {0, 1, -2, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 2, -1, 0, 0, 0, 0, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 1, -2, 0}},
    {DType::int32, {-2147483648, -7, -5, -1, 0, 5, 7, 2147483647}, {0, 3, -3, -1},
      {-2, -715827883, 715827882, -2147483648, -2, -3, 2, 7, -2, -2, 1, 5, -2, -1, 0, 1, -1, 0, 0, 0, -2, 1, -2, -5,
      -2, 2, -3, -7, -2, 715827882, -715827883, -2147483647},
      {0, 1, -2, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 2, -1, 0, 0, 0, 0, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 1, -2, 0}},
    {DType::int64, {INT64_MIN, -7, -5, -1, 0, 5, 7, 9223372036854775807}, {0, 3, -3, -1},
      {-2, -3074457345618258603, 3074457345618258602, INT64_MIN, -2, -3, 2, 7, -2, -2, 1, 5, -2, -1, 0, 1, -1, 0, 0,
      0, -2, 1, -2, -5, -2, 2, -3, -7, -2, 3074457345618258602, -3074457345618258603, -9223372036854775807},
      {0, 1, -2, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 2, -1, 0, 0, 0, 0, 0, 0, 2, -1, 0, 0, 1, -2, 0, 0, 1, -2, 0}},
    {DType::uint8, {0, 1, 5, 7, 255}, {0, 3, 255},
      {255, 0, 0, 255, 0, 0, 255, 1, 0, 255, 2, 0, 255, 85, 1},
      {0, 0, 0, 0, 1, 1, 0, 2, 5, 0, 1, 7, 0, 0, 0}},
    {DType::uint16, {0, 1, 5, 7, 65535}, {0, 3, 65535},
      {65535, 0, 0, 65535, 0, 0, 65535, 1, 0, 65535, 2, 0, 65535, 21845, 1},
      {0, 0, 0, 0, 1, 1, 0, 2, 5, 0, 1, 7, 0, 0, 0}},
    {DType::uint32, {0, 1, 5, 7, 4294967295}, {0, 3, 4294967295},
      {4294967295, 0, 0, 4294967295, 0, 0, 4294967295, 1, 0, 4294967295, 2, 0, 4294967295, 1431655765, 1},
      {0, 0, 0, 0, 1, 1, 0, 2, 5, 0, 1, 7, 0, 0, 0}},
    {DType::uint64, {0, 1, 5, 7, -1}, {0, 3, -1},
      {-1, 0, 0, -1, 0, 0, -1, 1, 0, -1, 2, 0, -1, 6148914691236517205, 1},
      {0, 0, 0, 0, 1, 1, 0, 2, 5, 0, 1, 7, 0, 0, 0}}
       }) {
    std::vector<int64_t> x, y;
    for (int64_t a : c.xs)
      for (int64_t b : c.ys) x.push_back(a), y.push_back(b);
    std::vector<Array> args{make_int(x, c.d), make_int(y, c.d)};
    both_exact([](auto& a) { return jnp::floor_divide(a[0], a[1]); }, args, c.floor_divide, c.d, "floor_divide");
    both_exact([](auto& a) { return jnp::remainder(a[0], a[1]); }, args, c.remainder, c.d, "remainder");
  }
}

TEST_CASE("numerics: int -> float conversions round as JAX's", "[numerics]") {
  // Before, in the interpreter: i64/u64 -> f32 went through double (2^62 + 2^38 + 1 gave 2^62, not 2^62 + 2^39).
  // XLA converts integers to f16/bf16 through f32, rounding twice (int32 2^30 + 2^22 + 1: bf16 2^30), and so do the
  // CPU kernels and the interpreter now (before: once, to 2^30 + 2^23). Inputs below 2^53 + 1 and 2^63 check the
  // double and unsigned paths.
  struct Case {
    DType from;
    std::vector<int64_t> in;
    std::vector<double> f16, bf16, f32, f64;
  };
  for (const Case& c : std::vector<Case>{
    {DType::int8,
      {-128, -1, 0, 1, 127, 100, -100},
      {-128.0, -1.0, 0.0, 1.0, 127.0, 100.0, -100.0},
      {-128.0, -1.0, 0.0, 1.0, 127.0, 100.0, -100.0},
      {-128.0, -1.0, 0.0, 1.0, 127.0, 100.0, -100.0},
      {-128.0, -1.0, 0.0, 1.0, 127.0, 100.0, -100.0}},
    {DType::int16,
      {-32768, 32767, 2049, 2051, 4097, -2051, 257, 257, 259},
      {-32768.0, 32768.0, 2048.0, 2052.0, 4096.0, -2052.0, 257.0, 257.0, 259.0},
      {-32768.0, 32768.0, 2048.0, 2048.0, 4096.0, -2048.0, 256.0, 256.0, 260.0},
      {-32768.0, 32767.0, 2049.0, 2051.0, 4097.0, -2051.0, 257.0, 257.0, 259.0},
      {-32768.0, 32767.0, 2049.0, 2051.0, 4097.0, -2051.0, 257.0, 257.0, 259.0}},
    {DType::int32,
      {2147483647, -2147483648, 16777217, 16777219, 1077936129, 1077936128, -1077936129, 65519, 65520, -65520,
      16842753, 16777217},
      {INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, -INFINITY, 65504.0, INFINITY, -INFINITY, INFINITY,
      INFINITY},
      {2147483648.0, -2147483648.0, 16777216.0, 16777216.0, 1073741824.0, 1073741824.0, -1073741824.0, 65536.0,
      65536.0, -65536.0, 16777216.0, 16777216.0},
      {2147483648.0, -2147483648.0, 16777216.0, 16777220.0, 1077936128.0, 1077936128.0, -1077936128.0, 65519.0,
      65520.0, -65520.0, 16842752.0, 16777216.0},
      {2147483647.0, -2147483648.0, 16777217.0, 16777219.0, 1077936129.0, 1077936128.0, -1077936129.0, 65519.0,
      65520.0, -65520.0, 16842753.0, 16777217.0}},
    {DType::int64,
      {4611686293305294849, 4611686293305294848, -4611686293305294849, 9223372036854775807, INT64_MIN,
      9007199254740993, 9007199254740995, 18014398509481987, 1103806595073, 1077936129},
      {INFINITY, INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY},
      {4.611686018427388e+18, 4.611686018427388e+18, -4.611686018427388e+18, 9.223372036854776e+18,
      -9.223372036854776e+18, 9007199254740992.0, 9007199254740992.0, 1.8014398509481984e+16, 1099511627776.0,
      1073741824.0},
      {4.611686568183202e+18, 4.611686018427388e+18, -4.611686568183202e+18, 9.223372036854776e+18,
      -9.223372036854776e+18, 9007199254740992.0, 9007199254740992.0, 1.8014398509481984e+16, 1103806595072.0,
      1077936128.0},
      {4.611686293305295e+18, 4.611686293305295e+18, -4.611686293305295e+18, 9.223372036854776e+18,
      -9.223372036854776e+18, 9007199254740992.0, 9007199254740996.0, 1.8014398509481988e+16, 1103806595073.0,
      1077936129.0}},
    {DType::uint8,
      {255, 0, 200},
      {255.0, 0.0, 200.0},
      {255.0, 0.0, 200.0},
      {255.0, 0.0, 200.0},
      {255.0, 0.0, 200.0}},
    {DType::uint16,
      {65535, 65519, 65520, 2049, 2051},
      {INFINITY, 65504.0, INFINITY, 2048.0, 2052.0},
      {65536.0, 65536.0, 65536.0, 2048.0, 2048.0},
      {65535.0, 65519.0, 65520.0, 2049.0, 2051.0},
      {65535.0, 65519.0, 65520.0, 2049.0, 2051.0}},
    {DType::uint32,
      {4294967295, 2155872257, 16777217, 2147483777},
      {INFINITY, INFINITY, INFINITY, INFINITY},
      {4294967296.0, 2147483648.0, 16777216.0, 2147483648.0},
      {4294967296.0, 2155872256.0, 16777216.0, 2147483904.0},
      {4294967295.0, 2155872257.0, 16777217.0, 2147483777.0}},
    {DType::uint64,
      {-1, INT64_MIN, -9223371487098961919, -9223371487098961920, -9223372036854774783, -9223372036854773760,
      -1099511627776, -549755813888, 9007199254740993, -9223372036854775807},
      {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY},
      {1.8446744073709552e+19, 9.223372036854776e+18, 9.223372036854776e+18, 9.223372036854776e+18,
      9.223372036854776e+18, 9.223372036854776e+18, 1.8446744073709552e+19, 1.8446744073709552e+19,
      9007199254740992.0, 9.223372036854776e+18},
      {1.8446744073709552e+19, 9.223372036854776e+18, 9.223373136366404e+18, 9.223372036854776e+18,
      9.223372036854776e+18, 9.223372036854776e+18, 1.8446742974197924e+19, 1.8446744073709552e+19,
      9007199254740992.0, 9.223372036854776e+18},
      {1.8446744073709552e+19, 9.223372036854776e+18, 9.22337258661059e+18, 9.22337258661059e+18,
      9.223372036854778e+18, 9.223372036854778e+18, 1.8446742974197924e+19, 1.8446743523953738e+19,
      9007199254740992.0, 9.223372036854776e+18}}
       }) {
    Array a = make_int(c.in, c.from);
    for (auto [to, want] : {std::pair{DType::float16, &c.f16}, std::pair{DType::bfloat16, &c.bf16},
                            std::pair{DType::float32, &c.f32}, std::pair{DType::float64, &c.f64}})
      both_same([to](auto& x) { return lax::convert_element_type(x[0], to); }, {a}, *want,
                std::string(dtype_name(c.from)) + " -> " + std::string(dtype_name(to)));
  }
  // Host conversions (array_from_data, as NumPy and ml_dtypes convert) round once, 64-bit integers included.
  int64_t i = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  uint64_t u = (uint64_t{1} << 63) + (uint64_t{1} << 39) + 1;
  int32_t h = (1 << 30) + (1 << 22) + 1;
  CHECK(array_from_data(&i, DType::int64, {}, DType::float32).item<double>() == 4611686568183201792.0);
  CHECK(array_from_data(&u, DType::uint64, {}, DType::float32).item<double>() == 9223373136366403584.0);
  CHECK(array_from_data(&h, DType::int32, {}, DType::bfloat16).item<double>() == 1082130432.0);
  int64_t j = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;  // above the bf16 tie 2^62 + 2^54: rounds up
  CHECK(array_from_data(&j, DType::int64, {}, DType::bfloat16).item<double>() == 4647714815446351872.0);
}
