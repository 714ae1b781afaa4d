// Every primitive's JVP and VJP against central finite differences in float64, and VJP/JVP consistency.
#include <map>
#include <set>

#include "core/primitive.h"
#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;
using jitx::testing::make_int;
using jitx::testing::uniform;
using Arrays = std::vector<Array>;

struct Input {
  Shape shape;
  double lo = -1, hi = 1;
};
struct Case {
  std::string prim;  // the primitive whose rules this exercises
  std::vector<Input> inputs;
  std::function<Array(const Arrays&)> f;
};

Array f64(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float64); }
double dot(const Array& a, const Array& b) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}
Array bind_prim(const char* name, Arrays xs, detail::Params ps) {
  return detail::bind1(*detail::find_primitive(name), std::move(xs), ps);
}

#define UNARY(name, lo, hi) \
  Case { #name, {{{3, 4}, lo, hi}}, [](const Arrays& x) { return lax::name(x[0]); } }
#define BINARY(name, prim, lo0, hi0, lo1, hi1)                 \
  Case {                                                       \
    prim, {{{3, 4}, lo0, hi0}, {{3, 4}, lo1, hi1}},            \
        [](const Arrays& x) { return lax::name(x[0], x[1]); } \
  }

lax::ConvDimensionNumbers nchw() { return lax::conv_dimension_numbers("NCHW", "OIHW", "NCHW"); }

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      UNARY(neg, -2, 2),
      UNARY(abs, -2, 2),
      UNARY(exp, -2, 2),
      UNARY(exp2, -2, 2),
      UNARY(expm1, -2, 2),
      UNARY(log, 0.5, 2),
      UNARY(log1p, -0.5, 2),
      UNARY(sqrt, 0.5, 2),
      UNARY(rsqrt, 0.5, 2),
      UNARY(cbrt, 0.5, 2),
      UNARY(tanh, -2, 2),
      UNARY(logistic, -3, 3),
      UNARY(sin, -3, 3),
      UNARY(cos, -3, 3),
      UNARY(tan, -1, 1),
      UNARY(asin, -0.8, 0.8),
      UNARY(acos, -0.8, 0.8),
      UNARY(atan, -2, 2),
      UNARY(sinh, -2, 2),
      UNARY(cosh, -2, 2),
      UNARY(asinh, -2, 2),
      UNARY(acosh, 1.5, 3),
      UNARY(atanh, -0.7, 0.7),
      UNARY(erf, -2, 2),
      UNARY(erfc, -2, 2),
      UNARY(erf_inv, -0.8, 0.8),
      UNARY(lgamma, 0.5, 3),
      UNARY(sign, -2, 2),
      UNARY(floor, -2, 2),
      UNARY(ceil, -2, 2),
      Case{"round", {{{3, 4}, -2, 2}}, [](const Arrays& x) { return lax::round(x[0]); }},
      BINARY(add, "add", -2, 2, -2, 2),
      BINARY(sub, "sub", -2, 2, -2, 2),
      BINARY(mul, "mul", -2, 2, -2, 2),
      BINARY(div, "div", -2, 2, 0.5, 2),
      BINARY(rem, "rem", 1, 5, 0.6, 0.9),
      BINARY(pow, "pow", 0.5, 2, -1.5, 1.5),
      BINARY(max, "max", -2, 2, -2, 2),
      BINARY(min, "min", -2, 2, -2, 2),
      BINARY(atan2, "atan2", 0.3, 2, 0.3, 2),
      // a scalar operand next to an array: its cotangent is summed
      Case{"mul", {{{}, -2, 2}, {{3, 4}}}, [](const Arrays& x) { return lax::mul(x[0], x[1]); }},
      Case{"sub", {{{3, 4}}, {{}}}, [](const Arrays& x) { return lax::sub(x[0], x[1]); }},
      Case{"div", {{{}, 1, 2}, {{3, 4}, 0.5, 2}}, [](const Arrays& x) { return lax::div(x[0], x[1]); }},
      Case{"select_n",
           {{{3, 4}}, {{3, 4}}},
           [](const Arrays& x) {
             Array pred = make_int({1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}, {3, 4}, DType::bool_);
             return lax::select_n(pred, x[0], x[1]);
           }},
      Case{"clamp",
           {{{}, -0.5, -0.3}, {{3, 4}, -1, 1}, {{}, 0.3, 0.5}},
           [](const Arrays& x) { return lax::clamp(x[0], x[1], x[2]); }},
      Case{"convert_element_type",
           {{{3, 4}}},
           [](const Arrays& x) {
             return bind_prim("convert_element_type", {x[0]}, {{"new_dtype", DType::float64}, {"weak_type", true}});
           }},
      Case{"broadcast_in_dim",
           {{{3, 1}}},
           [](const Arrays& x) { return lax::broadcast_in_dim(x[0], {2, 3, 4}, {1, 2}); }},
      Case{"reshape", {{{3, 4}}}, [](const Arrays& x) { return lax::reshape(x[0], {2, 6}); }},
      Case{"transpose", {{{2, 3, 4}}}, [](const Arrays& x) { return lax::transpose(x[0], {2, 0, 1}); }},
      Case{"rev", {{{3, 4}}}, [](const Arrays& x) { return lax::rev(x[0], {1}); }},
      Case{"slice", {{{5, 6}}}, [](const Arrays& x) { return lax::slice(x[0], {1, 0}, {5, 6}, {2, 3}); }},
      Case{"dynamic_slice",
           {{{5, 6}}},
           [](const Arrays& x) { return lax::dynamic_slice(x[0], {Array(1), Array(4)}, {2, 3}); }},
      Case{"dynamic_update_slice",
           {{{5, 6}}, {{2, 3}}},
           [](const Arrays& x) { return lax::dynamic_update_slice(x[0], x[1], {Array(3), Array(1)}); }},
      Case{"concatenate", {{{2, 3}}, {{4, 3}}}, [](const Arrays& x) { return lax::concatenate({x[0], x[1]}, 0); }},
      Case{"pad", {{{3, 4}}, {{}}}, [](const Arrays& x) { return lax::pad(x[0], x[1], {{1, 2, 1}, {-1, 0, 0}}); }},
      Case{"reduce_sum", {{{3, 4, 5}}}, [](const Arrays& x) { return lax::reduce_sum(x[0], {0, 2}); }},
      Case{"reduce_prod", {{{3, 4}, 0.5, 1.5}}, [](const Arrays& x) { return lax::reduce_prod(x[0], {1}); }},
      Case{"reduce_prod", {{{2, 3, 4}, 0.5, 1.5}}, [](const Arrays& x) { return lax::reduce_prod(x[0], {0, 2}); }},
      Case{"reduce_max", {{{3, 4}}}, [](const Arrays& x) { return lax::reduce_max(x[0], {0}); }},
      Case{"reduce_min", {{{3, 4}}}, [](const Arrays& x) { return lax::reduce_min(x[0], {1}); }},
      Case{"reduce_window_sum",
           {{{2, 5, 6}}},
           [](const Arrays& x) {
             return lax::reduce_window_sum(x[0],
                                           {{1, 2, 3}, {1, 2, 1}, {{0, 0}, {1, 0}, {0, 1}}, {1, 2, 1}, {1, 1, 2}});
           }},
      Case{"reduce_window_max",
           {{{5, 6}}},
           [](const Arrays& x) { return lax::reduce_window_max(x[0], {{2, 2}, {2, 1}, {{1, 0}, {0, 1}}, {}, {}}); }},
      Case{"reduce_window_min",
           {{{5, 6}}},
           [](const Arrays& x) { return lax::reduce_window_min(x[0], {{3, 2}, {1, 2}, {}, {1, 2}, {}}); }},
      Case{"cumsum", {{{3, 4}}}, [](const Arrays& x) { return lax::cumsum(x[0], 1); }},
      Case{"cumsum", {{{3, 4}}}, [](const Arrays& x) { return lax::cumsum(x[0], 0, true); }},
      Case{"cumprod", {{{3, 5}, 0.5, 1.5}}, [](const Arrays& x) { return lax::cumprod(x[0], 1); }},
      Case{"cumprod", {{{3, 5}, 0.5, 1.5}}, [](const Arrays& x) { return lax::cumprod(x[0], 1, true); }},
      Case{"cummax", {{{3, 5}}}, [](const Arrays& x) { return lax::cummax(x[0], 1); }},
      Case{"cummin", {{{4, 3}}}, [](const Arrays& x) { return lax::cummin(x[0], 0, true); }},
      Case{"dot_general", {{{3, 4}}, {{4, 5}}}, [](const Arrays& x) { return lax::dot(x[0], x[1]); }},
      Case{"dot_general",
           {{{2, 3, 4}}, {{2, 5, 4}}},
           [](const Arrays& x) { return lax::dot_general(x[0], x[1], {{2}, {2}, {0}, {0}}); }},
      Case{"gather",
           {{{5, 4}}},
           [](const Arrays& x) { return jnp::take(x[0], make_int({4, 0, 2, 2, 9}, DType::int32), 0, "clip"); }},
      Case{"scatter-add",
           {{{5, 3}}, {{4, 3}}},
           [](const Arrays& x) { return jnp::at(x[0], make_int({1, 3, 1, 7}, DType::int32)).add(x[1]); }},
      Case{"scatter",
           {{{5, 3}}, {{4, 3}}},
           [](const Arrays& x) { return jnp::at(x[0], make_int({1, 3, 1, 7}, DType::int32)).set(x[1]); }},
      Case{"sort", {{{3, 5}}}, [](const Arrays& x) { return lax::sort(x[0], 1); }},
      Case{"sort", {{{4, 3}}, {{4, 3}}}, [](const Arrays& x) { return lax::sort({x[0], x[1]}, 0, true, 1)[1]; }},
      Case{"top_k", {{{3, 6}}}, [](const Arrays& x) { return lax::top_k(x[0], 2).first; }},
      Case{"conv_general_dilated",
           {{{2, 3, 6, 5}}, {{4, 3, 3, 2}}},
           [](const Arrays&
                  x) { return lax::conv_general_dilated(x[0], x[1], {2, 1}, {{1, 0}, {0, 1}}, {}, {1, 2}, nchw()); }},
      Case{"conv_general_dilated",
           {{{1, 5, 4, 4}}, {{3, 2, 2, 6}}},  // NHWC / HWIO, lhs dilation, feature groups
           [](const Arrays& x) {
             return lax::conv_general_dilated(x[0], x[1], {1, 2}, {{1, 1}, {2, 0}}, {2, 1}, {},
                                              lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC"), 2);
           }},
      Case{"conv_general_dilated",
           {{{4, 2, 5, 5}}, {{6, 2, 3, 3}}},  // batch groups
           [](const Arrays& x) {
             return lax::conv_general_dilated(x[0], x[1], {1, 1}, {{0, 0}, {1, 1}}, {}, {}, nchw(), 1, 2);
           }},
  };
  return c;
}

/// Primitives whose outputs carry no tangent (integer, bool, or identity-with-zero-derivative results).
const std::set<std::string> kNoTangent = {
    "is_finite", "not", "population_count", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "bitcast_convert_type", "iota", "reduce_and",
    "reduce_or", "argmax", "argmin", "stop_gradient"};
/// Primitives whose differentiation throws a clear error for now.
const std::set<std::string> kThrows = {"custom_lin" /* custom_vjp's linear part: reverse mode only */};
/// Primitives whose rules are tested in autodiff_control_test.cpp (kept out of the table above so that its
/// random inputs, and those of the files after it, stay as they were).
const std::set<std::string> kTestedElsewhere = {"digamma", "scatter-mul", "scatter-min", "scatter-max",
                                                 // the linalg primitives: linalg_grad_test.cpp
                                                 "lu", "cholesky", "triangular_solve", "qr", "eigh", "svd",
                                                 // host callbacks: debug_test.cpp (grad of each)
                                                 "debug_callback", "pure_callback",
                                                 // with_sharding_constraint: grad/vmap in spmd_jit_test.cpp
                                                 "sharding_constraint",
                                                 // shard_map's collectives: grad inside the body and from
                                                 // outside (finite differences) in shard_map*_test.cpp
                                                 "psum", "pmax", "pmin", "all_gather", "reduce_scatter",
                                                 "all_to_all", "ppermute", "axis_index"};
/// Higher-order primitives and checkpoint's (remat, optimization_barrier): their rules are tested in
/// autodiff_control_test.cpp (kept out of this table so its random inputs stay as they were).
const std::set<std::string> kControlFlow = {"cond", "while", "scan", "pjit", "closed_call", "custom_jvp_call",
                                             "custom_vjp_call", "checkpoint", "remat", "optimization_barrier",
                                             "shard_map" /* grad/jvp of jit(shard_map): shard_map_test.cpp */};

void check_case(const Case& c) {
  Arrays xs, vs;
  for (auto& in : c.inputs) {
    size_t n = static_cast<size_t>(testing::numel(in.shape));
    xs.push_back(f64(uniform(n, in.lo, in.hi), in.shape));
    vs.push_back(f64(uniform(n, -1, 1), in.shape));
  }
  auto [y, ty] = jitx::jvp(c.f, std::tuple<Arrays>{xs}, std::tuple<Arrays>{vs});
  const double eps = 1e-6;
  auto shifted = [&](double s) {
    Arrays z;
    for (size_t i = 0; i < xs.size(); ++i) z.push_back(xs[i] + vs[i] * s);
    return c.f(z).to_vector<double>();
  };
  auto yp = shifted(eps), ym = shifted(-eps), got = ty.to_vector<double>();
  REQUIRE(ty.shape() == y.shape());
  REQUIRE(ty.dtype() == DType::float64);
  std::vector<double> fd(yp.size());
  int bad = 0;
  for (size_t i = 0; i < fd.size(); ++i) {
    fd[i] = (yp[i] - ym[i]) / (2 * eps);
    if (std::fabs(got[i] - fd[i]) > 1e-6 * (1 + std::fabs(fd[i])) && bad++ < 5)
      FAIL_CHECK("jvp element " << i << ": got " << got[i] << ", finite difference " << fd[i]);
  }
  CHECK(bad == 0);
  // Reverse mode: <vjp(u), v> against <u, jvp(v)> (tight) and against <u, finite difference> (loose).
  Array u = f64(uniform(static_cast<size_t>(y.size()), -1, 1), y.shape());
  auto [y2, f_vjp] = jitx::vjp(c.f, xs);
  Arrays cts = std::get<0>(f_vjp(u));
  REQUIRE(cts.size() == xs.size());
  double lhs = 0, fd_dot = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    REQUIRE(cts[i].shape() == xs[i].shape());
    lhs += dot(cts[i], vs[i]);
  }
  for (size_t i = 0; i < fd.size(); ++i) fd_dot += u.to_vector<double>()[i] * fd[i];
  double rhs = dot(u, ty);
  CHECK(std::fabs(lhs - rhs) <= 1e-10 * (1 + std::fabs(rhs)));
  CHECK(std::fabs(lhs - fd_dot) <= 1e-6 * (1 + std::fabs(fd_dot)));
}

TEST_CASE("every primitive's JVP and VJP match central finite differences (f64)", "[autodiff]") {
  for (auto& c : cases()) {
    DYNAMIC_SECTION(c.prim << " on " << c.inputs.size() << " input(s), first "
                           << detail::shape_str(c.inputs[0].shape)) {
      check_case(c);
    }
  }
}

TEST_CASE("every registered primitive has differentiation rules or is listed", "[autodiff]") {
  std::set<std::string> tested;
  for (auto& c : cases()) tested.insert(c.prim);
  for (const auto* p : detail::all_primitives()) {
    if (kControlFlow.count(p->name)) continue;
    INFO("primitive " << p->name);
    CHECK((tested.count(p->name) + kNoTangent.count(p->name) + kThrows.count(p->name) +
           kTestedElsewhere.count(p->name)) == 1);
    CHECK(p->jvp != nullptr);
  }
}

TEST_CASE("primitives without tangents give zero tangents, unsupported ones throw clear errors", "[autodiff]") {
  Array x = f64({0.5, -1.5, 2.0}, {3});
  Array t = f64({1, 1, 1}, {3});
  auto [y, ty] = jitx::jvp(
      [](const Array& a) { return lax::convert_element_type(lax::gt(a, lax::neg(a)), DType::float64); }, x, t);
  CHECK(ty.to_vector<double>() == std::vector<double>{0, 0, 0});
  auto [s, ts] = jitx::jvp([](const Array& a) { return a * stop_gradient(a); }, x, t);
  CHECK(ts.to_vector<double>() == x.to_vector<double>());
  Array base = f64({1, 2, 3, 4}, {4});
  // scatter-mul differentiates in its updates only with unique_indices (as JAX).
  CHECK_THROWS_AS(jitx::grad([&](const Array& v) {
                    return jnp::sum(jnp::at(base, make_int({1}, DType::int32)).mul(v));
                  })(f64({2.0}, {1})),
                  TypeError);
}

TEST_CASE("ties: max/min split the tangent, reductions average it (JAX's rules)", "[autodiff]") {
  Array x = f64({1.0, 3.0, 3.0}, {3});
  auto g = jitx::grad([](const Array& a) { return lax::reduce_max(a, {0}); })(x);
  CHECK(g.to_vector<double>() == std::vector<double>{0, 0.5, 0.5});
  auto g2 = jitx::grad([](const Array& a) { return jnp::sum(lax::max(a, a)); })(x);
  CHECK(g2.to_vector<double>() == std::vector<double>{1, 1, 1});
  // reduce_prod is exact where an entry is zero.
  auto gp = jitx::grad([](const Array& a) { return lax::reduce_prod(a, {0}); })(f64({2.0, 0.0, 3.0}, {3}));
  CHECK(gp.to_vector<double>() == std::vector<double>{0, 6, 0});
}

}  // namespace
