// Every registered primitive against plain double-precision loops, eagerly and under jit, across dtypes.
#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "core/primitive.h"
#include "test_util.h"

namespace {
// The pow primitive itself (XLA's integer power: x^-n is 0 unless |x| = 1), which lax::pow refuses for integer
// bases as JAX's does and jnp::power replaces with JAX's binary exponentiation.
jitx::Array pow_prim(const jitx::Array& x, const jitx::Array& y, jitx::Loc = jitx::Loc::current()) {
  return jitx::detail::bind1(*jitx::detail::find_primitive("pow"), {x, y});
}
}  // namespace

using namespace jitx;
using namespace jitx::testing;

namespace {


// --- the coverage table: every primitive a test below exercises ------------------------------------------
const std::set<std::string>& covered() {
  static const std::set<std::string> s{
      // float unary (FloatUnary)
      "neg", "abs", "sign", "floor", "ceil", "round", "exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt",
      "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
      "erfc", "erf_inv", "lgamma", "digamma", "is_finite",
      // float binary, comparisons, integer ops (FloatBinary, IntegerOps, Bool)
      "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
      "xor", "not", "shift_left", "shift_right_arithmetic", "shift_right_logical", "population_count",
      // the rest, one test each
      "select_n", "clamp", "convert_element_type", "bitcast_convert_type", "reduce_sum", "reduce_prod", "reduce_max",
      "reduce_min", "reduce_and", "reduce_or", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
      "reduce_window_sum", "reduce_window_max", "reduce_window_min", "dot_general", "broadcast_in_dim", "reshape",
      "transpose", "rev", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate", "pad", "iota",
      // tested against double loops in indexing_test.cpp
      "gather", "scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max", "sort", "top_k",
      "conv_general_dilated",
      // the identity with a zero derivative: values (eager and jit) and gradients in autodiff_api_test.cpp
      "stop_gradient",
      // host callbacks: debug::print/callback and pure_callback, on both platforms, in debug_test.cpp
      "debug_callback", "pure_callback",
      // with_sharding_constraint: values under jit, grad and vmap in spmd_jit_test.cpp
      "sharding_constraint",
      // shard_map and its collectives: against host loops, eager and jit, on both platforms, in shard_map_test.cpp
      "psum", "pmax", "pmin", "all_gather", "reduce_scatter", "all_to_all", "ppermute", "axis_index", "shard_map",
      // custom_vjp's linear part: never evaluated, only transposed (autodiff_custom_test.cpp)
      "custom_lin",
      // custom functions inside cond/scan/checkpoint: values and rules in autodiff_custom_test.cpp
      "custom_jvp_call", "custom_vjp_call",
      // tested against C++ loops in control_flow_test.cpp
      "cond", "while", "scan",
      // checkpoint's: values (eager, jit, linearize's jvp) and gradients in autodiff_control_test.cpp
      "optimization_barrier", "remat", "checkpoint",
      // against JAX's numbers and invariants in linalg_decomp_test.cpp, gradients in linalg_grad_test.cpp
      "lu", "cholesky", "triangular_solve", "qr", "eigh", "svd"};
  return s;
}


// digamma reference: recurrence up to x >= 20, then the asymptotic series (error < 1e-16 there).
double ref_digamma(double x) {
  double r = 0;
  while (x < 20) r -= 1 / x, x += 1;
  double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240))));
}
// erf_inv reference: bisection on std::erf (slow but obviously right).
double ref_erf_inv(double y) {
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) {
    double m = 0.5 * (lo + hi);
    (std::erf(m) < y ? lo : hi) = m;
  }
  return 0.5 * (lo + hi);
}

struct UnaryCase {
  const char* name;
  Array (*op)(const Array&, Loc);
  double lo, hi;
  double (*ref)(double);
};
Array round_afz(const Array& x, Loc l) { return lax::round(x, lax::RoundingMethod::AWAY_FROM_ZERO, l); }
Array round_even(const Array& x, Loc l) { return lax::round(x, lax::RoundingMethod::TO_NEAREST_EVEN, l); }

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> v{
      {"neg", lax::neg, -3, 3, [](double x) { return -x; }},
      {"abs", lax::abs, -3, 3, [](double x) { return std::fabs(x); }},
      {"sign", lax::sign, -3, 3, [](double x) { return double((x > 0) - (x < 0)); }},
      {"floor", lax::floor, -5, 5, [](double x) { return std::floor(x); }},
      {"ceil", lax::ceil, -5, 5, [](double x) { return std::ceil(x); }},
      {"round(afz)", round_afz, -5, 5, [](double x) { return std::round(x); }},
      {"round(even)", round_even, -5, 5, [](double x) { return std::nearbyint(x); }},
      {"exp", lax::exp, -5, 5, [](double x) { return std::exp(x); }},
      {"exp2", lax::exp2, -5, 5, [](double x) { return std::exp2(x); }},
      {"expm1", lax::expm1, -3, 3, [](double x) { return std::expm1(x); }},
      {"log", lax::log, 0.05, 10, [](double x) { return std::log(x); }},
      {"log1p", lax::log1p, -0.9, 5, [](double x) { return std::log1p(x); }},
      {"sqrt", lax::sqrt, 0.01, 10, [](double x) { return std::sqrt(x); }},
      {"rsqrt", lax::rsqrt, 0.01, 10, [](double x) { return 1 / std::sqrt(x); }},
      {"cbrt", lax::cbrt, -10, 10, [](double x) { return std::cbrt(x); }},
      {"tanh", lax::tanh, -4, 4, [](double x) { return std::tanh(x); }},
      {"logistic", lax::logistic, -6, 6, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"sin", lax::sin, -3, 3, [](double x) { return std::sin(x); }},
      {"cos", lax::cos, -3, 3, [](double x) { return std::cos(x); }},
      {"tan", lax::tan, -1.4, 1.4, [](double x) { return std::tan(x); }},
      {"asin", lax::asin, -0.95, 0.95, [](double x) { return std::asin(x); }},
      {"acos", lax::acos, -0.95, 0.95, [](double x) { return std::acos(x); }},
      {"atan", lax::atan, -4, 4, [](double x) { return std::atan(x); }},
      {"sinh", lax::sinh, -3, 3, [](double x) { return std::sinh(x); }},
      {"cosh", lax::cosh, -3, 3, [](double x) { return std::cosh(x); }},
      {"asinh", lax::asinh, -4, 4, [](double x) { return std::asinh(x); }},
      {"acosh", lax::acosh, 1.05, 6, [](double x) { return std::acosh(x); }},
      {"atanh", lax::atanh, -0.9, 0.9, [](double x) { return std::atanh(x); }},
      {"erf", lax::erf, -2.5, 2.5, [](double x) { return std::erf(x); }},
      {"erfc", lax::erfc, -2, 2.5, [](double x) { return std::erfc(x); }},
      {"erf_inv", lax::erf_inv, -0.95, 0.95, ref_erf_inv},
      {"lgamma", lax::lgamma, 0.1, 6, [](double x) { return std::lgamma(x); }},
      {"digamma", lax::digamma, 0.2, 6, ref_digamma},
  };
  return v;
}
}  // namespace

TEST_CASE("every registered primitive has a test entry", "[primitives]") {
  for (const auto* p : detail::all_primitives()) {
    INFO("primitive " << p->name << " is registered but has no test in primitives_test.cpp");
    CHECK(covered().count(p->name) == 1);
  }
}

TEST_CASE("float unary primitives match double references", "[primitives]") {
  for (const auto& c : unary_cases()) {
    for (DType d : float_dtypes()) {
      auto raw = uniform(12, c.lo, c.hi);
      if (std::string(c.name).rfind("round", 0) == 0) raw.insert(raw.end(), {-2.5, -0.5, 0.5, 1.5, 2.5});
      auto in = rounded(raw, d);
      std::vector<double> ref;
      // exp2 is exp(x * ln 2) with ln 2 a constant of x's dtype, as JAX lowers it: in f16/bf16 the rounded ln 2
      // alone moves exp2(5) by ~4 ULP, so the reference takes the same constant.
      double ln2 = rounded({M_LN2}, d)[0];
      for (double x : in) ref.push_back(std::string(c.name) == "exp2" ? std::exp(x * ln2) : c.ref(x));
      auto op = c.op;
      both_close([op](const std::vector<Array>& a) { return op(a[0], Loc::current()); },
                 {make(in, {1, (int64_t)in.size()}, d)}, ref, d, c.name);
    }
  }
}

TEST_CASE("is_finite and NaN/inf inputs", "[primitives]") {
  const double inf = INFINITY;
  for (DType d : float_dtypes()) {
    std::vector<double> in{1.5, -inf, inf, NAN, 0.0, -3.0};
    both_exact([](auto& a) { return lax::is_finite(a[0]); }, {make(in, d)}, {1, 0, 0, 0, 1, 1}, DType::bool_,
               "is_finite");
    // max/min propagate NaN; sign(NaN) is NaN; abs(-inf) is inf.
    both_close([](auto& a) { return lax::max(a[0], a[1]); }, {make(in, d), make({0, 0, 0, 1, NAN, -4}, d)},
               {1.5, 0, inf, NAN, NAN, -3}, d, "max with NaN");
    both_close([](auto& a) { return lax::min(a[0], a[1]); }, {make(in, d), make({0, 0, 0, 1, NAN, -4}, d)},
               {0, -inf, 0, NAN, NAN, -4}, d, "min with NaN");
    both_close([](auto& a) { return lax::sign(a[0]); }, {make(in, d)}, {1, -1, 1, NAN, 0, -1}, d, "sign");
    both_close([](auto& a) { return lax::abs(a[0]); }, {make(in, d)}, {1.5, inf, inf, NAN, 0, 3}, d, "abs");
  }
}

TEST_CASE("float binary primitives match double references", "[primitives]") {
  struct Case {
    const char* name;
    Array (*op)(const Array&, const Array&, Loc);
    double xlo, xhi, ylo, yhi;
    double (*ref)(double, double);
  };
  const std::vector<Case> cases{
      {"add", lax::add, -10, 10, -10, 10, [](double x, double y) { return x + y; }},
      {"sub", lax::sub, -10, 10, -10, 10, [](double x, double y) { return x - y; }},
      {"mul", lax::mul, -10, 10, -10, 10, [](double x, double y) { return x * y; }},
      {"div", lax::div, -10, 10, 0.5, 4, [](double x, double y) { return x / y; }},
      {"rem", lax::rem, -10, 10, 0.5, 4, [](double x, double y) { return std::fmod(x, y); }},
      {"pow", lax::pow, 0.1, 3, -2, 2, [](double x, double y) { return std::pow(x, y); }},
      {"max", lax::max, -3, 3, -3, 3, [](double x, double y) { return std::max(x, y); }},
      {"min", lax::min, -3, 3, -3, 3, [](double x, double y) { return std::min(x, y); }},
      {"atan2", lax::atan2, -3, 3, -3, 3, [](double x, double y) { return std::atan2(x, y); }},
  };
  for (const auto& c : cases) {
    for (DType d : float_dtypes()) {
      auto x = rounded(uniform(12, c.xlo, c.xhi), d), y = rounded(uniform(12, c.ylo, c.yhi), d);
      if (c.op == lax::div) y[3] = -y[3];  // a negative divisor too
      std::vector<double> ref, scale;
      for (size_t i = 0; i < x.size(); ++i) {
        ref.push_back(c.ref(x[i], y[i]));
        // fmod is exact, but rounding its operands amplifies: scale the allowance by |x|.
        scale.push_back(c.op == lax::rem || c.op == lax::add || c.op == lax::sub
                            ? std::max(std::fabs(x[i]), std::fabs(ref.back()))
                            : std::fabs(ref.back()));
      }
      auto op = c.op;
      both_close([op](auto& a) { return op(a[0], a[1], Loc::current()); }, {make(x, {3, 4}, d), make(y, {3, 4}, d)},
                 ref, d, c.name, scale);
    }
  }
  // A scalar operand next to an array (lax allows rank-0 with any shape).
  both_close([](auto& a) { return lax::mul(a[0], a[1]); },
             {make({1, 2, 3}, DType::float32), Array::scalar(0.5, float32)}, {0.5, 1, 1.5}, DType::float32,
             "mul by a scalar");
}

TEST_CASE("comparisons, including NaN and all dtypes", "[primitives]") {
  struct Cmp {
    const char* name;
    Array (*op)(const Array&, const Array&, Loc);
    bool (*ref)(double, double);
  };
  const std::vector<Cmp> cmps{{"eq", lax::eq, [](double a, double b) { return a == b; }},
                              {"ne", lax::ne, [](double a, double b) { return a != b; }},
                              {"lt", lax::lt, [](double a, double b) { return a < b; }},
                              {"le", lax::le, [](double a, double b) { return a <= b; }},
                              {"gt", lax::gt, [](double a, double b) { return a > b; }},
                              {"ge", lax::ge, [](double a, double b) { return a >= b; }}};
  for (const auto& c : cmps) {
    for (DType d : float_dtypes()) {
      std::vector<double> x{1, 2, NAN, -0.0, 3, -INFINITY, 5}, y{1, 3, 1, 0.0, NAN, -INFINITY, 4};
      std::vector<int64_t> ref;
      for (size_t i = 0; i < x.size(); ++i) ref.push_back(c.ref(x[i], y[i]));
      auto op = c.op;
      both_exact([op](auto& a) { return op(a[0], a[1], Loc::current()); }, {make(x, d), make(y, d)}, ref, DType::bool_,
                 std::string(c.name) + " float");
    }
    for (DType d : int_dtypes()) {
      auto x = random_ints(16, d), y = random_ints(16, d);
      for (int i = 0; i < 4; ++i) y[i + 8] = x[i + 8];  // some equal pairs
      std::vector<int64_t> ref;
      for (size_t i = 0; i < x.size(); ++i) {
        // Unsigned dtypes compare as unsigned (u64 patterns are wrapped into int64); the exact order is
        // mapped to -1/0/1 so no value goes through a double.
        bool u = is_unsigned_integer(d);
        bool less = u ? uint64_t(x[i]) < uint64_t(y[i]) : x[i] < y[i];
        double cmp = x[i] == y[i] ? 0 : less ? -1 : 1;
        ref.push_back(c.ref(cmp, 0));
      }
      auto op = c.op;
      both_exact([op](auto& a) { return op(a[0], a[1], Loc::current()); }, {make_int(x, d), make_int(y, d)}, ref,
                 DType::bool_, std::string(c.name) + " int");
    }
  }
}

namespace {
// XLA's integer semantics, computed on 64-bit patterns and wrapped to d.
int64_t int_ref(const std::string& op, int64_t x, int64_t y, DType d) {
  int bits = dtype_bits(d);
  bool sg = is_signed_integer(d);
  uint64_t ux = uint64_t(x), uy = uint64_t(y);
  if (!sg && bits < 64) ux &= (uint64_t{1} << bits) - 1, uy &= (uint64_t{1} << bits) - 1;
  int64_t smin = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
  uint64_t amount = bits == 64 ? uy : (uy & ((uint64_t{1} << bits) - 1));  // shift amounts read as unsigned
  if (op == "add") return wrap(ux + uy, d);
  if (op == "sub") return wrap(ux - uy, d);
  if (op == "mul") return wrap(ux * uy, d);
  if (op == "div") {
    if (sg) return y == 0 ? -1 : (x == smin && y == -1) ? x : x / y;
    return uy == 0 ? wrap(~uint64_t{0}, d) : wrap(ux / uy, d);
  }
  if (op == "rem") {
    if (sg) return y == 0 ? x : (x == smin && y == -1) ? 0 : x % y;
    return uy == 0 ? wrap(ux, d) : wrap(ux % uy, d);
  }
  if (op == "max") return sg ? std::max(x, y) : wrap(std::max(ux, uy), d);
  if (op == "min") return sg ? std::min(x, y) : wrap(std::min(ux, uy), d);
  if (op == "and") return wrap(ux & uy, d);
  if (op == "or") return wrap(ux | uy, d);
  if (op == "xor") return wrap(ux ^ uy, d);
  if (op == "shift_left") return amount >= uint64_t(bits) ? 0 : wrap(ux << amount, d);
  if (op == "shift_right_logical") {
    uint64_t m = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    return amount >= uint64_t(bits) ? 0 : wrap((ux & m) >> amount, d);
  }
  if (op == "shift_right_arithmetic") {
    int64_t s = wrap(ux, sg ? d
                            : (bits == 8    ? DType::int8
                               : bits == 16 ? DType::int16
                               : bits == 32 ? DType::int32
                                            : DType::int64));
    return wrap(uint64_t(amount >= uint64_t(bits) ? (s < 0 ? -1 : 0) : s >> amount), d);
  }
  FAIL("unknown op " << op);
  return 0;
}
}  // namespace

TEST_CASE("integer binary primitives: wrapping, division by zero, INT_MIN/-1, wide shifts", "[primitives]") {
  const std::vector<std::pair<std::string, Array (*)(const Array&, const Array&, Loc)>> ops{
      {"add", lax::add}, {"sub", lax::sub}, {"mul", lax::mul}, {"div", lax::div}, {"rem", lax::rem},
      {"max", lax::max}, {"min", lax::min}, {"and", lax::bitwise_and}, {"or", lax::bitwise_or},
      {"xor", lax::bitwise_xor}, {"shift_left", lax::shift_left},
      {"shift_right_logical", lax::shift_right_logical}, {"shift_right_arithmetic", lax::shift_right_arithmetic}};
  for (auto& [name, op] : ops) {
    for (DType d : int_dtypes()) {
      auto x = random_ints(24, d), y = random_ints(24, d);
      int bits = dtype_bits(d);
      if (name.rfind("shift", 0) == 0) {
        // Amounts 0..bits+3 (at and past the width too); x keeps its extremes.
        for (size_t i = 0; i < y.size(); ++i) y[i] = wrap(uint64_t((i * 7) % (bits + 4)), d);
        y[1] = bits, y[2] = bits + 1;
      }
      if (name == "div" || name == "rem") {
        y[5] = 0, y[6] = 0;                  // division by zero
        y[0] = wrap(uint64_t(-1), d);        // INT_MIN / -1 (x[0] is the minimum)
        y[7] = 3, x[7] = wrap(uint64_t(-7), d);  // truncation toward zero
      }
      std::vector<int64_t> ref;
      for (size_t i = 0; i < x.size(); ++i) ref.push_back(int_ref(name, x[i], y[i], d));
      auto f = op;
      both_exact([f](auto& a) { return f(a[0], a[1], Loc::current()); },
                 {make_int(x, {4, 6}, d), make_int(y, {4, 6}, d)}, ref, d, name);
    }
  }
}

TEST_CASE("integer unary primitives and integer pow", "[primitives]") {
  for (DType d : int_dtypes()) {
    auto x = random_ints(20, d);
    int bits = dtype_bits(d);
    bool sg = is_signed_integer(d);
    std::vector<int64_t> neg, abs_, sign, nt, pop;
    for (auto v : x) {
      uint64_t u = uint64_t(v);
      neg.push_back(wrap(0 - u, d));
      abs_.push_back(sg ? wrap(v < 0 ? 0 - u : u, d) : v);
      sign.push_back(sg ? (v > 0) - (v < 0) : v != 0);
      nt.push_back(wrap(~u, d));
      pop.push_back(std::popcount(bits == 64 ? u : u & ((uint64_t{1} << bits) - 1)));
    }
    Array a = make_int(x, {4, 5}, d);
    both_exact([](auto& v) { return lax::neg(v[0]); }, {a}, neg, d, "neg");
    if (sg)
      both_exact([](auto& v) { return lax::abs(v[0]); }, {a}, abs_, d, "abs");
    else  // as jax.lax.abs (jnp::abs returns unsigned inputs unchanged)
      CHECK_THROWS_AS(lax::abs(a), TypeError);
    both_exact([](auto& v) { return jnp::abs(v[0]); }, {a}, abs_, d, "jnp::abs");
    both_exact([](auto& v) { return lax::sign(v[0]); }, {a}, sign, d, "sign");
    both_exact([](auto& v) { return lax::bitwise_not(v[0]); }, {a}, nt, d, "not");
    both_exact([](auto& v) { return lax::population_count(v[0]); }, {a}, pop, d, "population_count");

    // pow: small bases and exponents, negative exponents for signed types (1, -1 and 0 otherwise).
    std::vector<int64_t> b{2, 3, 0, 1, 5, 7, 2, 1, 0, 3}, e{3, 4, 0, 7, 2, 1, 7, 0, 5, 5};
    if (sg) b.insert(b.end(), {-2, -1, -1, 1, 2}), e.insert(e.end(), {3, 3, -3, -2, -1});
    std::vector<int64_t> ref;
    for (size_t i = 0; i < b.size(); ++i) {
      if (e[i] < 0) ref.push_back(b[i] == 1 ? 1 : b[i] == -1 ? ((-e[i]) % 2 ? -1 : 1) : 0);
      else {
        uint64_t r = 1;
        for (int k = 0; k < e[i]; ++k) r *= uint64_t(b[i]);
        ref.push_back(wrap(r, d));
      }
    }
    both_exact([](auto& v) { return pow_prim(v[0], v[1]); }, {make_int(b, d), make_int(e, d)}, ref, d, "int pow");
  }
}

TEST_CASE("bool logic primitives", "[primitives]") {
  std::vector<int64_t> x{0, 0, 1, 1}, y{0, 1, 0, 1};
  Array a = make_int(x, bool_), b = make_int(y, bool_);
  both_exact([](auto& v) { return lax::bitwise_and(v[0], v[1]); }, {a, b}, {0, 0, 0, 1}, bool_, "and");
  both_exact([](auto& v) { return lax::bitwise_or(v[0], v[1]); }, {a, b}, {0, 1, 1, 1}, bool_, "or");
  both_exact([](auto& v) { return lax::bitwise_xor(v[0], v[1]); }, {a, b}, {0, 1, 1, 0}, bool_, "xor");
  both_exact([](auto& v) { return lax::bitwise_not(v[0]); }, {a}, {1, 1, 0, 0}, bool_, "not");
  both_exact([](auto& v) { return lax::max(v[0], v[1]); }, {a, b}, {0, 1, 1, 1}, bool_, "max");
  both_exact([](auto& v) { return lax::min(v[0], v[1]); }, {a, b}, {0, 0, 0, 1}, bool_, "min");
  both_exact([](auto& v) { return lax::lt(v[0], v[1]); }, {a, b}, {0, 1, 0, 0}, bool_, "lt");
}

TEST_CASE("select_n and clamp", "[primitives]") {
  for (DType d : {float32, bfloat16, int8, uint64}) {
    auto x = random_ints(6, d), y = random_ints(6, d);
    std::vector<int64_t> p{1, 0, 0, 1, 1, 0}, ref;
    for (int i = 0; i < 6; ++i) ref.push_back(is_floating(d) ? 0 : (p[i] ? y[i] : x[i]));
    if (is_floating(d)) {
      auto xf = rounded(uniform(6, -5, 5), d), yf = rounded(uniform(6, -5, 5), d);
      std::vector<double> r;
      for (int i = 0; i < 6; ++i) r.push_back(p[i] ? yf[i] : xf[i]);
      both_close([](auto& v) { return lax::select_n(v[0], v[1], v[2]); },
                 {make_int(p, bool_), make(xf, d), make(yf, d)}, r, d, "select_n");
      // scalar predicate
      both_close([](auto& v) { return lax::select_n(v[0], v[1], v[2]); },
                 {Array(true), make(xf, d), make(yf, d)}, yf, d, "select_n scalar pred");
      std::vector<double> c;
      for (double v : xf) c.push_back(std::clamp(v, -1.0, 2.0));
      both_close([](auto& v) { return lax::clamp(v[0], v[1], v[2]); },
                 {make({-1}, {}, d), make(xf, d), make({2}, {}, d)}, c, d, "clamp scalar bounds");
      auto lo = rounded(uniform(6, -3, 0), d), hi = rounded(uniform(6, 0, 3), d);
      c.clear();
      for (int i = 0; i < 6; ++i) c.push_back(std::clamp(xf[i], lo[i], hi[i]));
      both_close([](auto& v) { return lax::clamp(v[0], v[1], v[2]); }, {make(lo, d), make(xf, d), make(hi, d)}, c, d,
                 "clamp array bounds");
    } else {
      both_exact([](auto& v) { return lax::select_n(v[0], v[1], v[2]); },
                 {make_int(p, bool_), make_int(x, d), make_int(y, d)}, ref, d, "select_n int");
      std::vector<int64_t> c;
      bool u = is_unsigned_integer(d);
      for (auto v : x)
        c.push_back(u ? int64_t(std::clamp<uint64_t>(uint64_t(v), 3, 200)) : std::clamp<int64_t>(v, -5, 100));
      both_exact([](auto& v) { return lax::clamp(v[0], v[1], v[2]); },
                 {make_int({u ? 3 : -5}, {}, d), make_int(x, d), make_int({u ? 200 : 100}, {}, d)}, c, d, "clamp int");
    }
  }
}

TEST_CASE("convert_element_type: rounding, saturation, NaN, bool", "[primitives]") {
  const double inf = INFINITY;
  std::vector<double> f{1.7, -1.7, 300.0, -300.0, NAN, inf, -inf, 0.0, -0.5, 127.9};
  Fn to_i8 = [](auto& a) { return lax::convert_element_type(a[0], int8); };
  both_exact(to_i8, {make(f, float32)}, {1, -1, 127, -128, 0, 127, -128, 0, 0, 127}, int8, "f32->i8 saturates");
  Fn to_u8 = [](auto& a) { return lax::convert_element_type(a[0], uint8); };
  both_exact(to_u8, {make(f, float64)}, {1, 0, 255, 0, 0, 255, 0, 0, 0, 127}, uint8, "f64->u8 saturates");
  Fn to_i64 = [](auto& a) { return lax::convert_element_type(a[0], int64); };
  both_exact(to_i64, {make({1e30, -1e30, NAN, -2.9}, float32)},
             {INT64_MAX, INT64_MIN, 0, -2}, int64, "f32->i64 saturates");
  Fn to_bool = [](auto& a) { return lax::convert_element_type(a[0], bool_); };
  both_exact(to_bool, {make({0.0, -0.0, 0.25, NAN, -inf}, bfloat16)}, {0, 0, 1, 1, 1}, bool_, "bf16->bool");
  both_exact(to_bool, {make_int({0, 256, -1, 2}, int32)}, {0, 1, 1, 1}, bool_, "i32->bool (256 is not 0)");
  Fn to_f32 = [](auto& a) { return lax::convert_element_type(a[0], float32); };
  both_close(to_f32, {make_int({0, 1}, bool_)}, {0, 1}, float32, "bool->f32");
  both_close(to_f32, {make_int({-1, INT64_MIN}, uint64)}, {18446744073709551615.0, 9223372036854775808.0}, float32,
             "u64->f32 (unsigned)");
  // Integer narrowing wraps; widening sign- or zero-extends.
  Fn to_i8b = [](auto& a) { return lax::convert_element_type(a[0], int8); };
  both_exact(to_i8b, {make_int({300, -129, 255}, int32)}, {44, 127, -1}, int8, "i32->i8 wraps");
  Fn to_u32 = [](auto& a) { return lax::convert_element_type(a[0], uint32); };
  both_exact(to_u32, {make_int({-1, 5}, int8)}, {4294967295, 5}, uint32, "i8->u32 sign-extends then wraps");
  // Float narrowing rounds to nearest even.
  Fn to_f16 = [](auto& a) { return lax::convert_element_type(a[0], float16); };
  both_close(to_f16, {make({1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048, 70000, 1e-8}, float32)},
             {1.0, 1.0 + 4.0 / 2048, inf, 0.0}, float16, "f32->f16 rounds to even and overflows to inf");
  Fn to_bf16 = [](auto& a) { return lax::convert_element_type(a[0], bfloat16); };
  both_close(to_bf16, {make({1.0 + 1.0 / 256, 1.0 + 3.0 / 256, -2.0}, float32)}, {1.0, 1.0 + 4.0 / 256, -2.0}, bfloat16,
             "f32->bf16 rounds to even");
  // f64 -> bf16/f16 goes through f32, as XLA converts (JAX: astype of 1 + 2^-8 + 2^-30 to bf16 is 1.0): the f32
  // rounding makes 1 + 2^-8 + 2^-40, just above the halfway point, the tie 1 + 2^-8, which rounds down to even.
  // (The host conversion, make(), rounds once, as NumPy and ml_dtypes do.)
  for (auto [d, lsb] : std::vector<std::pair<DType, int>>{{bfloat16, 7}, {float16, 10}}) {
    double above_tie = 1 + std::ldexp(1, -lsb - 1) + std::ldexp(1, -40);
    Fn f = [d](auto& a) { return lax::convert_element_type(a[0], d); };
    for (auto& r : eager_and_jit(f, {make({above_tie}, float64)})) CHECK(r.item<double>() == 1.0);
    CHECK(make({above_tie}, d).item<double>() == 1 + std::ldexp(1, -lsb));
  }
  // A random round trip through every float dtype: f64 -> d -> f64 keeps d's rounding of the input.
  for (DType d : float_dtypes()) {
    auto v = uniform(10, -100, 100);
    Fn f = [d](auto& a) { return lax::convert_element_type(lax::convert_element_type(a[0], d), float64); };
    both_close(f, {make(v, float64)}, v, float64, std::string("round trip via ") + std::string(dtype_name(d)), [&] {
      std::vector<double> s;
      for (double x : v) s.push_back(std::fabs(x) * tol(d).rtol / tol(float64).rtol);
      return s;
    }());
  }
}

TEST_CASE("bitcast_convert_type reinterprets bits", "[primitives]") {
  Fn f2i = [](auto& a) { return lax::bitcast_convert_type(a[0], int32); };
  both_exact(f2i, {make({1.0, -2.0, 0.0}, float32)},
             {int64_t(std::bit_cast<int32_t>(1.0f)), int64_t(std::bit_cast<int32_t>(-2.0f)), 0}, int32, "f32->i32");
  Fn i2f = [](auto& a) { return lax::bitcast_convert_type(a[0], float64); };
  both_close(i2f, {make_int({std::bit_cast<int64_t>(3.25), std::bit_cast<int64_t>(-0.125)}, uint64)}, {3.25, -0.125},
             float64, "u64->f64");
  Fn h2u = [](auto& a) { return lax::bitcast_convert_type(a[0], uint16); };
  both_exact(h2u, {make({1.0, -2.0}, float16), }, {0x3c00, 0xc000}, uint16, "f16->u16");
  Fn b2i = [](auto& a) { return lax::bitcast_convert_type(a[0], int16); };
  both_exact(b2i, {make({1.0, -2.0}, bfloat16)}, {0x3f80, wrap(0xc000, int16)}, int16, "bf16->i16");
}

// Reductions, windows, dot_general and the shape primitives: primitives_structural_test.cpp.
