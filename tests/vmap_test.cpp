// vmap: every primitive's batching rule against a loop over the examples (the independent reference), with mapped
// axes 0, 1, -1 and unmapped arguments, out_axes variations; per-example gradients; jit and nested vmap; control
// flow; custom rules; errors.
#include <map>

#include "core/primitive.h"
#include "lowering/lower_ctx.h"
#include "test_util.h"

namespace {
using namespace jitx;
using jitx::testing::make;
using jitx::testing::make_int;
using jitx::testing::uniform;
using jitx::testing::Bound;
using jitx::testing::kBatchedDraws;
using jitx::testing::Tol;
using jitx::testing::tol;
using Arrays = std::vector<Array>;

// --- the reference: a loop over the examples -------------------------------------------------------------
/// Example i of x along axis (which may be negative).
Array example(const Array& x, int64_t axis, int64_t i) {
  int64_t a = axis < 0 ? axis + x.ndim() : axis;
  Shape s = x.shape(), sizes = x.shape();
  s.erase(s.begin() + a);
  sizes[a] = 1;
  // A dynamic slice (the index an operand, not a param) compiles once per shape, not once per example.
  Arrays starts(x.ndim(), Array(0));
  starts[a] = Array(static_cast<int>(i));
  return lax::reshape(lax::dynamic_slice(x, starts, sizes), s);
}

/// f on each example (args mapped along axes[k], unmapped where std::nullopt), outputs stacked along out_axis.
Arrays loop_reference(const std::function<Arrays(const Arrays&)>& f, const Arrays& args, const std::vector<Axis>& axes,
                      int64_t n, int64_t out_axis) {
  std::vector<Arrays> per_example;
  for (int64_t i = 0; i < n; ++i) {
    Arrays xs;
    for (size_t k = 0; k < args.size(); ++k) xs.push_back(axes[k] ? example(args[k], *axes[k], i) : args[k]);
    per_example.push_back(f(xs));
  }
  Arrays out;
  for (size_t o = 0; o < per_example[0].size(); ++o) {
    Arrays col;
    for (auto& e : per_example) col.push_back(e[o]);
    out.push_back(jnp::stack(col, out_axis));
  }
  return out;
}

/// got == want: same type, values within t for floats, exact for integers and bools; NaN matches NaN. The second
/// form takes the table's bound b (kSum where a batched op sums in another order than its per-example loop).
void check_same(const Array& got, const Array& want, const std::string& what, Tol t) {
  INFO(what << ": got " << got.aval().str() << ", want " << want.aval().str());
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  bool fl = is_floating(want.dtype());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": " << g[i] << " vs " << w[i]);
    if (std::isnan(w[i])) CHECK(std::isnan(g[i]));
    else if (fl) CHECK(std::fabs(g[i] - w[i]) <= t.atol + t.rtol * std::fabs(w[i]));
    else CHECK(g[i] == w[i]);
  }
}
void check_same(const Array& got, const Array& want, const std::string& what, Bound b = Bound::kOp) {
  check_same(got, want, what, tol(want.dtype(), b));
}

// --- the table ---------------------------------------------------------------------------------------------
/// One argument of a case, per example: shape, dtype and the range its random values come from.
struct ArgSpec {
  Shape shape;
  DType dtype = DType::float32;
  double lo = -2, hi = 2;
};
struct Case {
  std::string name;
  std::vector<ArgSpec> args;
  std::function<Arrays(const Arrays&)> f;
};

ArgSpec F(Shape s, double lo = -2, double hi = 2) { return {std::move(s), DType::float32, lo, hi}; }
ArgSpec I(Shape s, double lo, double hi, DType d = DType::int32) { return {std::move(s), d, lo, hi}; }

Array random_array(const ArgSpec& a, Shape shape) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  auto v = uniform(n, a.lo, a.hi);
  for (auto& x : v) {
    if (a.dtype == DType::bool_) x = x > 0 ? 1 : 0;
    else if (!is_floating(a.dtype)) x = std::floor(x);
  }
  return make(v, std::move(shape), a.dtype);
}

template <class G>
Case unary(std::string name, G g, double lo = -2, double hi = 2, Shape s = {3, 4}) {
  return Case{name, {F(s, lo, hi)}, [g](const Arrays& a) { return Arrays{g(a[0])}; }};
}
template <class G>
Case binary(std::string name, G g, ArgSpec x, ArgSpec y) {
  return Case{name, {x, y}, [g](const Arrays& a) { return Arrays{g(a[0], a[1])}; }};
}

std::vector<Case> cases() {
  std::vector<Case> c;
  // unary elementwise
  c.push_back(unary("neg", [](const Array& x) { return lax::neg(x); }));
  c.push_back(unary("abs", [](const Array& x) { return lax::abs(x); }));
  c.push_back(unary("sign", [](const Array& x) { return lax::sign(x); }));
  c.push_back(unary("floor", [](const Array& x) { return lax::floor(x); }));
  c.push_back(unary("ceil", [](const Array& x) { return lax::ceil(x); }));
  c.push_back(unary("round", [](const Array& x) { return lax::round(x, lax::RoundingMethod::TO_NEAREST_EVEN); }));
  c.push_back(unary("exp", [](const Array& x) { return lax::exp(x); }));
  c.push_back(unary("exp2", [](const Array& x) { return lax::exp2(x); }));
  c.push_back(unary("expm1", [](const Array& x) { return lax::expm1(x); }));
  c.push_back(unary("log", [](const Array& x) { return lax::log(x); }, 0.1, 3));
  c.push_back(unary("log1p", [](const Array& x) { return lax::log1p(x); }, -0.5, 3));
  c.push_back(unary("sqrt", [](const Array& x) { return lax::sqrt(x); }, 0.1, 3));
  c.push_back(unary("rsqrt", [](const Array& x) { return lax::rsqrt(x); }, 0.1, 3));
  c.push_back(unary("cbrt", [](const Array& x) { return lax::cbrt(x); }));
  c.push_back(unary("tanh", [](const Array& x) { return lax::tanh(x); }));
  c.push_back(unary("logistic", [](const Array& x) { return lax::logistic(x); }));
  c.push_back(unary("sin", [](const Array& x) { return lax::sin(x); }));
  c.push_back(unary("cos", [](const Array& x) { return lax::cos(x); }));
  c.push_back(unary("tan", [](const Array& x) { return lax::tan(x); }, -1, 1));
  c.push_back(unary("asin", [](const Array& x) { return lax::asin(x); }, -0.9, 0.9));
  c.push_back(unary("acos", [](const Array& x) { return lax::acos(x); }, -0.9, 0.9));
  c.push_back(unary("atan", [](const Array& x) { return lax::atan(x); }));
  c.push_back(unary("sinh", [](const Array& x) { return lax::sinh(x); }));
  c.push_back(unary("cosh", [](const Array& x) { return lax::cosh(x); }));
  c.push_back(unary("asinh", [](const Array& x) { return lax::asinh(x); }));
  c.push_back(unary("acosh", [](const Array& x) { return lax::acosh(x); }, 1.1, 4));
  c.push_back(unary("atanh", [](const Array& x) { return lax::atanh(x); }, -0.9, 0.9));
  c.push_back(unary("erf", [](const Array& x) { return lax::erf(x); }));
  c.push_back(unary("erfc", [](const Array& x) { return lax::erfc(x); }));
  c.push_back(unary("erf_inv", [](const Array& x) { return lax::erf_inv(x); }, -0.9, 0.9));
  c.push_back(unary("lgamma", [](const Array& x) { return lax::lgamma(x); }, 0.2, 5));
  c.push_back(unary("digamma", [](const Array& x) { return lax::digamma(x); }, 0.2, 5));
  c.push_back(unary("is_finite", [](const Array& x) { return lax::is_finite(lax::log(x)); }, -1, 2));
  c.push_back(
      unary("convert_element_type", [](const Array& x) { return lax::convert_element_type(x, DType::int32); }, -9, 9));
  c.push_back(
      unary("bitcast_convert_type", [](const Array& x) { return lax::bitcast_convert_type(x, DType::uint32); }));
  c.push_back(unary("stop_gradient", [](const Array& x) { return stop_gradient(x) * 2.0; }));
  c.push_back(Case{"not/population_count", {I({5}, -100, 100)}, [](const Arrays& a) {
                     return Arrays{lax::bitwise_not(a[0]), lax::population_count(a[0])};
                   }});
  // binary elementwise, equal shapes and a per-example scalar next to an array
  auto f34 = F({3, 4}), g34 = F({3, 4}, 0.5, 2), s = F({});
  c.push_back(binary("add", [](const Array& x, const Array& y) { return lax::add(x, y); }, f34, f34));
  c.push_back(binary("add scalar+array", [](const Array& x, const Array& y) { return lax::add(x, y); }, s, f34));
  c.push_back(binary("sub array-scalar", [](const Array& x, const Array& y) { return lax::sub(x, y); }, f34, s));
  c.push_back(binary("mul", [](const Array& x, const Array& y) { return lax::mul(x, y); }, f34, f34));
  c.push_back(binary("div", [](const Array& x, const Array& y) { return lax::div(x, y); }, f34, g34));
  c.push_back(binary("rem", [](const Array& x, const Array& y) { return lax::rem(x, y); }, f34, g34));
  c.push_back(binary("pow", [](const Array& x, const Array& y) { return lax::pow(x, y); }, g34, f34));
  c.push_back(binary("max", [](const Array& x, const Array& y) { return lax::max(x, y); }, f34, f34));
  c.push_back(binary("min", [](const Array& x, const Array& y) { return lax::min(x, y); }, f34, s));
  c.push_back(binary("atan2", [](const Array& x, const Array& y) { return lax::atan2(x, y); }, f34, f34));
  c.push_back(Case{"comparisons", {f34, s}, [](const Arrays& a) {
                     return Arrays{lax::eq(lax::floor(a[0]), lax::floor(a[1])),
                                   lax::ne(a[0], a[1]),
                                   lax::lt(a[0], a[1]),
                                   lax::le(a[0], a[1]),
                                   lax::gt(a[0], a[1]),
                                   lax::ge(a[0], a[1])};
                   }});
  c.push_back(Case{"bitwise and shifts", {I({4}, -50, 50), I({4}, 0, 5)}, [](const Arrays& a) {
                     return Arrays{lax::bitwise_and(a[0], a[1]), lax::bitwise_or(a[0], a[1]),
                                   lax::bitwise_xor(a[0], a[1]), lax::shift_left(a[0], a[1]),
                                   lax::shift_right_arithmetic(a[0], a[1]), lax::shift_right_logical(a[0], a[1])};
                   }});
  c.push_back(Case{"select_n (scalar predicate)", {F({}), f34, f34}, [](const Arrays& a) {
                     return Arrays{lax::select_n(lax::gt(a[0], Array(0.0f)), a[1], a[2])};
                   }});
  c.push_back(Case{"select_n", {f34, f34, f34}, [](const Arrays& a) {
                     return Arrays{lax::select(lax::gt(a[0], Array(0.0f)), a[1], a[2])};
                   }});
  c.push_back(Case{"clamp", {F({}, -1, 0), f34, F({}, 0, 1)}, [](const Arrays& a) {
                     return Arrays{lax::clamp(a[0], a[1], a[2])};
                   }});
  // A scalar operand between bounds batched without it: the operand is broadcast (found by the differential fuzzer).
  c.push_back(Case{"clamp, scalar operand", {F({}, -1, 0), F({}, -2, 2), F({}, 0, 1)},
                   [](const Arrays& a) { return Arrays{lax::clamp(a[0], a[1], a[2])}; }});
  // shapes
  c.push_back(unary("broadcast_in_dim", [](const Array& x) { return lax::broadcast_in_dim(x, {2, 3, 5, 4}, {1, 3}); }));
  c.push_back(unary("reshape", [](const Array& x) { return lax::reshape(x, {2, 6}); }));
  c.push_back(unary("transpose", [](const Array& x) { return lax::transpose(x, {1, 0}); }));
  c.push_back(unary("rev", [](const Array& x) { return lax::rev(x, {1}); }));
  c.push_back(unary("expand_dims/squeeze", [](const Array& x) {
    return jnp::squeeze(jnp::expand_dims(x, {1}) * 2.0, {1});
  }));
  c.push_back(unary("slice", [](const Array& x) { return lax::slice(x, {0, 1}, {3, 4}, {2, 2}); }));
  c.push_back(Case{"dynamic_slice", {f34, I({}, -1, 4), I({}, 0, 4)}, [](const Arrays& a) {
                     return Arrays{lax::dynamic_slice(a[0], {a[1], a[2]}, {2, 2})};
                   }});
  c.push_back(Case{"dynamic_update_slice", {f34, F({2, 3}), I({}, 0, 4), I({}, -1, 3)}, [](const Arrays& a) {
                     return Arrays{lax::dynamic_update_slice(a[0], a[1], {a[2], a[3]})};
                   }});
  c.push_back(
      Case{"concatenate", {f34, F({3, 2})}, [](const Arrays& a) { return Arrays{lax::concatenate({a[0], a[1]}, 1)}; }});
  c.push_back(Case{"pad", {f34, F({})}, [](const Arrays& a) {
                     return Arrays{lax::pad(a[0], a[1], {{1, 2, 1}, {-1, 1, 0}})};
                   }});
  c.push_back(unary("iota", [](const Array& x) {
    return x + lax::convert_element_type(lax::broadcasted_iota(DType::int32, {3, 4}, 1), DType::float32);
  }));
  // reductions
  c.push_back(unary("reduce_sum", [](const Array& x) { return lax::reduce_sum(x, {1}); }));
  c.push_back(unary("reduce_max", [](const Array& x) { return lax::reduce_max(x, {0}); }));
  c.push_back(unary("reduce_min", [](const Array& x) { return lax::reduce_min(x, {0, 1}); }));
  c.push_back(unary("reduce_prod", [](const Array& x) { return lax::reduce_prod(x, {1}); }));
  c.push_back(Case{"reduce_and/or", {I({3, 4}, -1, 1, DType::bool_)}, [](const Arrays& a) {
                     return Arrays{lax::reduce_and(a[0], {1}), lax::reduce_or(a[0], {0})};
                   }});
  c.push_back(unary("argmax", [](const Array& x) { return lax::argmax(x, 1); }));
  c.push_back(unary("argmin", [](const Array& x) { return lax::argmin(x, 0); }));
  c.push_back(unary("cumsum", [](const Array& x) { return lax::cumsum(x, 1); }));
  c.push_back(unary("cumprod", [](const Array& x) { return lax::cumprod(x, 0, true); }));
  c.push_back(unary("cummax", [](const Array& x) { return lax::cummax(x, 1); }));
  c.push_back(unary("cummin", [](const Array& x) { return lax::cummin(x, 1, true); }));
  c.push_back(unary("reduce_window_sum", [](const Array& x) {
    return lax::reduce_window_sum(x, lax::WindowConfig{{2, 2}, {1, 2}, {{0, 1}, {1, 0}}, {}, {}});
  }));
  c.push_back(unary("reduce_window_max", [](const Array& x) {
    return lax::reduce_window_max(x, lax::WindowConfig{{2, 3}, {1, 1}, {}, {}, {}});
  }));
  c.push_back(binary(
      "dot_general (matmul)", [](const Array& x, const Array& y) { return lax::dot(x, y); }, F({3, 4}), F({4, 2})));
  c.push_back(binary("dot_general (batch dims)", [](const Array& x, const Array& y) {
    return lax::dot_general(x, y, {{2}, {1}, {0}, {0}});
  }, F({2, 3, 4}), F({2, 4, 5})));
  c.push_back(
      binary("dot_general (vector)", [](const Array& x, const Array& y) { return lax::dot(x, y); }, F({4}), F({4, 3})));
  c.push_back(binary("conv_general_dilated", [](const Array& x, const Array& w) {
    return lax::conv_general_dilated(x, w, {1, 2}, {{1, 0}, {0, 1}});
  }, F({2, 3, 5, 5}), F({4, 3, 2, 2})));
  // indexing
  c.push_back(Case{
      "gather (take)", {F({5, 3}), I({4}, 0, 5)}, [](const Arrays& a) { return Arrays{jnp::take(a[0], a[1], 0)}; }});
  c.push_back(Case{"scatter-add", {F({5, 3}), I({4}, 0, 5), F({4, 3})}, [](const Arrays& a) {
                     return Arrays{jnp::at(a[0], a[1]).add(a[2])};
                   }});
  c.push_back(Case{"scatter", {F({5}), I({2}, 0, 5), F({2})}, [](const Arrays& a) {
                     // Distinct indices, so which update wins is defined.
                     return Arrays{
                         jnp::at(a[0], lax::rem(lax::add(a[1], lax::iota(DType::int32, 2)), Array(5))).set(a[2])};
                   }});
  c.push_back(Case{"scatter-max/min/mul", {F({5}), I({3}, 0, 5), F({3})}, [](const Arrays& a) {
                     return Arrays{jnp::at(a[0], a[1]).max(a[2]), jnp::at(a[0], a[1]).min(a[2]),
                                   jnp::at(a[0], a[1]).mul(a[2])};
                   }});
  c.push_back(unary("sort", [](const Array& x) { return lax::sort(x, 1); }));
  c.push_back(
      Case{"sort (two operands)", {F({6}), F({6})}, [](const Arrays& a) { return lax::sort({a[0], a[1]}, 0); }});
  c.push_back(Case{"top_k", {F({3, 6})}, [](const Arrays& a) {
                     auto [v, i] = lax::top_k(a[0], 2);
                     return Arrays{v, i};
                   }});
  return c;
}

/// The axes patterns a case is run with: every argument at 0, at -1 and at 1 (when its rank allows), and the
/// first argument mapped with the others unmapped (and the reverse).
std::vector<std::vector<Axis>> axis_patterns(const Case& c) {
  size_t k = c.args.size();
  std::vector<std::vector<Axis>> ps{std::vector<Axis>(k, 0), std::vector<Axis>(k, -1)};
  std::vector<Axis> ones;
  for (auto& a : c.args) ones.push_back(a.shape.empty() ? Axis(0) : Axis(1));
  ps.push_back(ones);
  if (k > 1) {
    std::vector<Axis> first(k, std::nullopt), rest(k, 1);
    first[0] = c.args[0].shape.empty() ? 0 : 1;
    rest[0] = std::nullopt;
    for (size_t i = 1; i < k; ++i)
      if (c.args[i].shape.empty()) rest[i] = 0;
    ps.push_back(first);
    ps.push_back(rest);
  }
  return ps;
}

TEST_CASE("vmap of every primitive matches a loop over the examples", "[vmap]") {
  const int64_t n = 3;
  for (const Case& c : cases()) {
    int pattern = 0;
    for (const auto& axes : axis_patterns(c)) {
      Arrays args;
      for (size_t k = 0; k < c.args.size(); ++k) {
        Shape s = c.args[k].shape;
        if (axes[k]) s.insert(s.begin() + (*axes[k] < 0 ? *axes[k] + static_cast<int64_t>(s.size()) + 1 : *axes[k]), n);
        args.push_back(random_array(c.args[k], s));
      }
      // out_axes: 0, then the last axis, then 1, cycling over the patterns.
      int64_t out_axis = std::vector<int64_t>{0, -1, 1}[pattern % 3];
      Arrays ref = loop_reference(c.f, args, axes, n, 0);
      bool fits = true;  // out axis 1 needs outputs of rank 1 or more per example
      for (auto& r : ref) fits = fits && r.ndim() > 1;
      if (out_axis == 1 && !fits) out_axis = 0;
      if (out_axis != 0) ref = loop_reference(c.f, args, axes, n, out_axis);
      Arrays got = vmap([&](const Arrays& a) { return c.f(a); }, InAxes::per_leaf(axes), out_axis)(args);
      REQUIRE(got.size() == ref.size());
      for (size_t o = 0; o < got.size(); ++o)
        check_same(got[o], ref[o], c.name + " pattern " + std::to_string(pattern) + " output " + std::to_string(o));
      ++pattern;
    }
  }
}

TEST_CASE("vmap under jit batches the same way (one batched jaxpr)", "[vmap]") {
  // A sample of the table under jit(vmap(f)): the compiled module computes what the eager rules do.
  std::map<std::string, Case> by_name;
  for (auto& c : cases()) by_name.emplace(c.name, c);
  for (std::string name : {"add scalar+array", "dot_general (matmul)", "gather (take)", "dynamic_slice", "pad",
                           "reduce_window_sum", "sort", "cumsum"}) {
    const Case& c = by_name.at(name);
    std::vector<Axis> axes(c.args.size(), 0);
    Arrays args;
    for (auto& a : c.args) {
      Shape s = a.shape;
      s.insert(s.begin(), 4);
      args.push_back(random_array(a, s));
    }
    Arrays ref = loop_reference(c.f, args, axes, 4, 0);
    Arrays got = jit(vmap([&](const Arrays& a) { return c.f(a); }))(args);
    for (size_t o = 0; o < got.size(); ++o) check_same(got[o], ref[o], "jit(vmap) " + name);
  }
}

// --- API: in_axes forms, pytrees, out_axes, axis_size ------------------------------------------------------
Array f32(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float32); }
Array rand_f32(Shape s) {
  size_t n = 1;
  for (auto d : s) n *= static_cast<size_t>(d);
  return f32(uniform(n, -1, 1), std::move(s));
}

TEST_CASE("vmap in_axes per argument, unmapped arguments and negative axes", "[vmap]") {
  Array w = rand_f32({4, 3}), xs = rand_f32({4, 5});  // xs mapped along its last axis: 5 examples of f32[4]
  auto f = [](const Array& w, const Array& x) { return lax::dot(x, w) + 1.0f; };
  Array got = vmap(f, {std::nullopt, -1})(w, xs);
  CHECK(got.shape() == Shape{5, 3});
  check_same(
      got, loop_reference([&](const Arrays& a) { return Arrays{f(a[0], a[1])}; }, {w, xs}, {std::nullopt, -1}, 5, 0)[0],
      "per-argument in_axes");
  // A C++ number argument is a weak scalar leaf; unmapped it is shared.
  Array scaled = vmap([](const Array& x, const Array& k) { return x * k; }, {0, std::nullopt})(xs, 3.0f);
  check_same(scaled, xs * 3.0f, "number argument");
}

struct Params2 {
  Array w, b;
};
}  // namespace
JITX_PYTREE(Params2, w, b)
namespace {

TEST_CASE("vmap over pytrees: per-leaf in_axes, structured outputs, out_axes per leaf", "[vmap]") {
  Params2 p{rand_f32({3, 2}), rand_f32({2})};
  Array xs = rand_f32({6, 3});
  auto f = [](const Params2& p, const Array& x) {
    Array y = lax::dot(x, p.w) + p.b;
    return std::make_pair(y, std::map<std::string, Array>{{"norm", jnp::sum(y * y)}});
  };
  // Parameters shared (not mapped), inputs mapped: per argument.
  auto [y, aux] = vmap(f, {std::nullopt, 0})(p, xs);
  CHECK(y.shape() == Shape{6, 2});
  CHECK(aux.at("norm").shape() == Shape{6});
  for (int64_t i = 0; i < 6; ++i) {
    auto [yi, auxi] = f(p, example(xs, 0, i));
    check_same(example(y, 0, i), yi, "pytree output y");
    check_same(example(aux.at("norm"), 0, i), auxi.at("norm"), "pytree output aux");
  }
  // Per leaf: w shared, b mapped (a batch of biases), x mapped along axis 1 of a transposed batch; out_axes per
  // output leaf (y with the batch last, the norm first).
  Array bs = rand_f32({6, 2});
  auto [y2, aux2] = vmap(f, InAxes::per_leaf({std::nullopt, 0, 1}), {-1, 0})(Params2{p.w, bs}, xs.T());
  CHECK(y2.shape() == Shape{2, 6});
  for (int64_t i = 0; i < 6; ++i) {
    auto [yi, auxi] = f(Params2{p.w, example(bs, 0, i)}, example(xs, 0, i));
    check_same(example(y2, 1, i), yi, "per-leaf y");
    check_same(example(aux2.at("norm"), 0, i), auxi.at("norm"), "per-leaf aux");
  }
}

TEST_CASE("vmap broadcasts outputs that do not depend on a mapped input, axis_size", "[vmap]") {
  Array xs = rand_f32({4, 3}), c = rand_f32({3});
  auto [a, b] = vmap([&](const Array& x) { return std::make_pair(x * 2.0f, c + 1.0f); }, 0, 1)(xs);
  check_same(a, (xs * 2.0f).T(), "mapped output at out axis 1");
  CHECK(b.shape() == Shape{3, 4});
  check_same(b, lax::broadcast_in_dim(c + 1.0f, {3, 4}, {0}), "unmapped output broadcast along out axis 1");
  // Nothing mapped: axis_size says how many copies.
  Array r = vmap([](const Array& x) { return jnp::sum(x); }, std::nullopt, 0, 5)(c);
  check_same(r, lax::broadcast_in_dim(jnp::sum(c), {5}, {}), "axis_size");
  // out_axes std::nullopt for an output that is the same for every example.
  auto [m, k] = vmap([&](const Array& x) { return std::make_pair(x + 1.0f, c * 2.0f); }, 0, {0, std::nullopt})(xs);
  check_same(m, xs + 1.0f, "mapped output");
  check_same(k, c * 2.0f, "unmapped output with out_axes nullopt");
}

// --- composition --------------------------------------------------------------------------------------------
Array mlp_loss(const Params2& p, const Array& x, const Array& y) {
  Array h = lax::tanh(lax::dot(x, p.w) + p.b);
  return jnp::sum((h - y) * (h - y));
}

TEST_CASE("per-example gradients: vmap(grad(f)) matches a loop of grad", "[vmap][autodiff]") {
  Params2 p{rand_f32({3, 2}), rand_f32({2})};
  Array xs = rand_f32({5, 3}), ys = rand_f32({5, 2});
  Params2 g = vmap(grad(mlp_loss), {std::nullopt, 0, 0})(p, xs, ys);
  CHECK(g.w.shape() == Shape{5, 3, 2});
  CHECK(g.b.shape() == Shape{5, 2});
  for (int64_t i = 0; i < 5; ++i) {
    Params2 gi = grad(mlp_loss)(p, example(xs, 0, i), example(ys, 0, i));
    check_same(example(g.w, 0, i), gi.w, "per-example dW", Bound::kSum);
    check_same(example(g.b, 0, i), gi.b, "per-example db", Bound::kSum);
  }
  // Under jit too.
  Params2 gj = jit(vmap(grad(mlp_loss), {std::nullopt, 0, 0}))(p, xs, ys);
  check_same(gj.w, g.w, "jit(vmap(grad)) dW", Bound::kSum);
}

TEST_CASE("checkpoint under vmap: per-example gradients of a rematerialised loss match a loop", "[vmap][autodiff]") {
  Params2 p{rand_f32({3, 2}), rand_f32({2})};
  Array xs = rand_f32({4, 3}), ys = rand_f32({4, 2});
  for (auto policy : {checkpoint_policies::nothing_saveable, checkpoint_policies::dots_saveable}) {
    auto loss = checkpoint(mlp_loss, policy);
    Params2 g = vmap(grad(loss), {std::nullopt, 0, 0})(p, xs, ys);
    Params2 gj = jit(vmap(grad(loss), {std::nullopt, 0, 0}))(p, xs, ys);
    for (int64_t i = 0; i < 4; ++i) {
      Params2 gi = grad(mlp_loss)(p, example(xs, 0, i), example(ys, 0, i));
      check_same(example(g.w, 0, i), gi.w, "checkpointed per-example dW", Bound::kSum);
      check_same(example(gj.b, 0, i), gi.b, "jit checkpointed per-example db", Bound::kSum);
    }
  }
}

TEST_CASE("grad of vmap: the gradient of a batched loss", "[vmap][autodiff]") {
  Params2 p{rand_f32({3, 2}), rand_f32({2})};
  Array xs = rand_f32({5, 3}), ys = rand_f32({5, 2});
  auto batched = [&](const Params2& q) { return jnp::sum(vmap(mlp_loss, {std::nullopt, 0, 0})(q, xs, ys)); };
  Params2 g = grad(batched)(p);
  // The reference: the sum over examples of each example's gradient.
  Array gw = zeros({3, 2}), gb = zeros({2});
  for (int64_t i = 0; i < 5; ++i) {
    Params2 gi = grad(mlp_loss)(p, example(xs, 0, i), example(ys, 0, i));
    gw = gw + gi.w;
    gb = gb + gi.b;
  }
  check_same(g.w, gw, "grad(vmap) dW", Bound::kSum);
  check_same(g.b, gb, "grad(vmap) db", Bound::kSum);
  // Gradient with respect to the mapped input: each example's gradient, stacked.
  Array gx = grad([&](const Array& x) { return jnp::sum(vmap(mlp_loss, {std::nullopt, 0, 0})(p, x, ys)); })(xs);
  for (int64_t i = 0; i < 5; ++i)
    check_same(example(gx, 0, i), grad(mlp_loss, argnums<1>)(p, example(xs, 0, i), example(ys, 0, i)), "d/dx",
               Bound::kSum);
}

TEST_CASE("jit(vmap(f)) traces to one batched jaxpr, vmap(jit(f)) works", "[vmap][jit]") {
  auto f = [](const Array& w, const Array& x) { return lax::tanh(lax::dot(w, x)); };
  Array w = rand_f32({3, 4}), xs = rand_f32({6, 4});
  auto jv = jit(vmap(f, {std::nullopt, 0}));
  Array got = jv(w, xs);
  Array ref =
      loop_reference([&](const Arrays& a) { return Arrays{f(a[0], a[1])}; }, {w, xs}, {std::nullopt, 0}, 6, 0)[0];
  check_same(got, ref, "jit(vmap)");
  std::string text = jv.lower(w, xs).as_text();
  INFO(text);
  CHECK(text.find("dot_general") != std::string::npos);
  CHECK(text.find("6x3") != std::string::npos);  // the batched result type
  CHECK(text.find("while") == std::string::npos);  // no loop over the examples
  std::string jaxpr = make_jaxpr(vmap(f, {std::nullopt, 0}))(w, xs).str();
  INFO(jaxpr);
  CHECK(jaxpr.find("dot_general") != std::string::npos);
  CHECK(jaxpr.find("f32[6,3]") != std::string::npos);
  check_same(vmap(jit(f), {std::nullopt, 0})(w, xs), ref, "vmap(jit)");
  check_same(jit(vmap(jit(f), {std::nullopt, 0}))(w, xs), ref, "jit(vmap(jit))");
}

TEST_CASE("nested vmap maps over two axes", "[vmap]") {
  Array a = rand_f32({3, 4}), b = rand_f32({5, 4});
  // Pairwise dot products: the outer vmap over a's rows, the inner over b's rows.
  auto pair = [](const Array& x, const Array& y) { return jnp::sum(x * y); };
  Array got = vmap([&](const Array& x) { return vmap([&](const Array& y) { return pair(x, y); })(b); })(a);
  CHECK(got.shape() == Shape{3, 5});
  check_same(got, lax::dot(a, b.T()), "pairwise dots", Bound::kSum);
  // Inner mapped along axis 1, outer along axis 0 of a batch of matrices, with out_axes 1 inside.
  Array m = rand_f32({2, 3, 4});
  Array r = vmap(vmap([](const Array& col) { return jnp::cumsum(col) * 2.0f; }, 1, 1))(m);
  check_same(r, jnp::cumsum(m, 1) * 2.0f, "nested cumsum", Bound::kSum);
  // Three levels of vmap around grad.
  Array g = vmap(vmap(vmap(grad([](const Array& x) { return lax::sin(x) * x; }))))(m);
  check_same(g, lax::cos(m) * m + lax::sin(m), "nested per-element grad", Bound::kSum);
}

// --- control flow --------------------------------------------------------------------------------------------
TEST_CASE("cond under vmap: a batched predicate selects, an unbatched one picks a batched branch", "[vmap][control]") {
  Array xs = rand_f32({6, 3});
  auto f = [](const Array& x) {
    return lax::cond(jnp::sum(x) > 0.0f, [](const Array& v) { return v * 2.0f; },
                     [](const Array& v) { return lax::sin(v) - 1.0f; }, x);
  };
  check_same(vmap(f)(xs), loop_reference([&](const Arrays& a) { return Arrays{f(a[0])}; }, {xs}, {0}, 6, 0)[0],
             "batched predicate");
  check_same(jit(vmap(f))(xs), vmap(f)(xs), "batched predicate under jit");
  auto g = [](const Array& p, const Array& x) {
    return lax::cond(p, [](const Array& v) { return v * 2.0f; }, [](const Array& v) { return v - 1.0f; }, x);
  };
  for (bool p : {true, false}) {
    Array pa = Array(p);
    check_same(vmap(g, {std::nullopt, 0})(pa, xs), g(pa, xs), "unbatched predicate");
  }
  // switch_ with a batched index over three branches; an operand captured from outside the vmap.
  Array c = rand_f32({3});
  auto h = [&](const Array& i, const Array& x) {
    return lax::switch_(i,
                        std::tuple{[&](const Array& v) { return v + c; }, [](const Array& v) { return v * v; },
                                   [](const Array& v) { return -v; }},
                        x);
  };
  Array idx = make_int({2, 0, 1, 5, -1, 1}, {6}, DType::int32);
  check_same(vmap(h)(idx, xs),
             loop_reference([&](const Arrays& a) { return Arrays{h(a[0], a[1])}; }, {idx, xs}, {0, 0}, 6, 0)[0],
             "switch with a batched index");
}

TEST_CASE("while_loop under vmap: batched carries, batched predicates run until every example is done",
          "[vmap][control]") {
  // Doubling until above a per-example limit: each example takes a different number of steps.
  Array limits = f32({1.5, 10, 100, 0.5, 40}, {5});
  auto f = [](const Array& lim) {
    auto out =
        lax::while_loop([&](const std::pair<Array, Array>& c) { return c.first < lim; },
                        [](const std::pair<Array, Array>& c) { return std::make_pair(c.first * 2.0f, c.second + 1); },
                        std::make_pair(Array(1.0f), Array(0)));
    return std::vector<Array>{out.first, out.second};
  };
  Arrays got = vmap(f)(limits);
  Arrays ref = loop_reference([&](const Arrays& a) { return f(a[0]); }, {limits}, {0}, 5, 0);
  check_same(got[0], ref[0], "while value");
  check_same(got[1], ref[1], "while steps");
  CHECK(got[1].to_vector<int>() == std::vector<int>{1, 4, 7, 0, 6});
  Arrays gj = jit(vmap(f))(limits);
  check_same(gj[1], ref[1], "while under jit");
  // Unbatched predicate (a counter), batched carry.
  Array xs = rand_f32({4, 3});
  auto g = [](const Array& x) {
    return lax::fori_loop(Array(0), Array(3), [](const Array&, const Array& v) { return lax::sin(v) + v; }, x);
  };
  check_same(vmap(g)(xs), loop_reference([&](const Arrays& a) { return Arrays{g(a[0])}; }, {xs}, {0}, 4, 0)[0],
             "fori_loop");
  auto h = [](const Array& x, const Array& n) {  // traced bounds: a while_loop
    return lax::fori_loop(Array(0), n, [](const Array&, const Array& v) { return v * 0.5f + 1.0f; }, x);
  };
  Array ns = make_int({0, 3, 1, 5}, {4}, DType::int32);
  check_same(vmap(h)(xs, ns),
             loop_reference([&](const Arrays& a) { return Arrays{h(a[0], a[1])}; }, {xs, ns}, {0, 0}, 4, 0)[0],
             "fori_loop with batched bounds");
}

TEST_CASE("scan under vmap: batched xs, carries and captured values", "[vmap][control]") {
  Array xs = rand_f32({4, 7, 3}), inits = rand_f32({4, 3}), w = rand_f32({3});
  auto f = [&](const Array& init, const Array& x) {
    auto [c, ys] = lax::scan([&](const Array& carry, const Array& xi) {
      Array nc = lax::tanh(carry * w + xi);
      return std::make_pair(nc, jnp::sum(nc));
    }, init, x);
    return std::vector<Array>{c, ys};
  };
  for (auto axes : std::vector<std::vector<Axis>>{{0, 0}, {std::nullopt, 0}, {0, std::nullopt}, {-1, 2}}) {
    Array a0 = axes[0] ? (*axes[0] == 0 ? inits : inits.T()) : example(inits, 0, 0);
    Array a1 = !axes[1] ? example(xs, 0, 1) : *axes[1] == 0 ? xs : jnp::transpose(xs, {1, 2, 0});
    Arrays got = vmap(f, InAxes(std::vector<Axis>(axes)))(a0, a1);
    int64_t n = 4;
    Arrays ref = loop_reference([&](const Arrays& a) { return f(a[0], a[1]); }, {a0, a1}, axes, n, 0);
    check_same(got[0], ref[0], "scan carry", Bound::kSum);
    check_same(got[1], ref[1], "scan ys", Bound::kSum);
  }
}

// --- custom rules, random -----------------------------------------------------------------------------------
TEST_CASE("custom_jvp and custom_vjp under vmap keep their rules", "[vmap][autodiff]") {
  // A rule that is observably not the true derivative: d/dx f = 3 (instead of cos x).
  auto f = custom_jvp([](const Array& x) { return lax::sin(x); },
                      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        return std::make_pair(lax::sin(std::get<0>(p)), std::get<0>(t) * 3.0f);
                      });
  Array xs = rand_f32({5});
  check_same(vmap(f)(xs), lax::sin(xs), "custom_jvp value");
  check_same(grad([&](const Array& x) { return jnp::sum(vmap(f)(x)); })(xs), full({5}, 3.0f), "grad(vmap(custom_jvp))");
  check_same(vmap(grad(f))(xs), full({5}, 3.0f), "vmap(grad(custom_jvp))");
  // custom_vjp with a shared (unmapped) argument: its cotangent sums the examples'.
  auto g = custom_vjp([](const Array& x, const Array& s) { return x * s; },
                      [](const Array& x, const Array& s) { return std::make_pair(x * s, std::make_tuple(x, s)); },
                      [](const std::tuple<Array, Array>& res, const Array& ct) {
                        // Deliberately scaled: dx = 10 s ct, ds = 10 x ct.
                        return std::make_tuple(std::get<1>(res) * ct * 10.0f, std::get<0>(res) * ct * 10.0f);
                      });
  Array s = Array(2.0f);
  auto loss = [&](const Array& x, const Array& sc) { return jnp::sum(vmap(g, {0, std::nullopt})(x, sc)); };
  check_same(vmap(g, {0, std::nullopt})(xs, s), xs * 2.0f, "custom_vjp value");
  auto [gx, gs] = grad(loss, argnums<0, 1>)(xs, s);
  check_same(gx, full({5}, 20.0f), "custom_vjp dx");
  check_same(gs, jnp::sum(xs) * 10.0f, "custom_vjp ds (summed over examples)", Bound::kSum);
  check_same(vmap(grad(g), {0, std::nullopt})(xs, s), full({5}, 20.0f), "vmap(grad(custom_vjp))");
}

TEST_CASE("random: vmap over keys matches a loop", "[vmap][random]") {
  Array keys = random::split(random::PRNGKey(7), 4);
  auto f = [](const Array& k) { return random::normal(k, {3}); };
  Array got = vmap(f)(keys);
  check_same(got, loop_reference([&](const Arrays& a) { return Arrays{f(a[0])}; }, {keys}, {0}, 4, 0)[0], "normal",
             kBatchedDraws);
}

// --- errors ---------------------------------------------------------------------------------------------------
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
void check_mentions(const std::string& msg, std::initializer_list<const char*> parts) {
  INFO(msg);
  CHECK(!msg.empty());
  for (auto* p : parts) CHECK(msg.find(p) != std::string::npos);
}

TEST_CASE("vmap errors name vmap, the argument and what was expected", "[vmap][errors]") {
  auto add = [](const Array& a, const Array& b) { return a + b; };
  check_mentions(error_of([&] { vmap(add)(zeros({3, 2}), zeros({4, 2})); }),
                 {"[vmap]", "inconsistent sizes", "args[0]", "args[1]", "size 3", "size 4"});
  check_mentions(error_of([&] { vmap(add, {0, 2})(zeros({3, 2}), zeros({3, 2})); }),
                 {"[vmap]", "args[1]", "axis 2", "rank 2", "[-2, 2)"});
  check_mentions(error_of([&] { vmap(add, {0, -3})(zeros({3, 2}), zeros({3, 2})); }), {"[vmap]", "args[1]", "axis -3"});
  check_mentions(error_of([&] { vmap(add)(zeros({3}), Array(1.0f)); }), {"[vmap]", "args[1]", "rank 0"});
  check_mentions(error_of([&] { vmap(add, std::nullopt)(zeros({3}), zeros({3})); }), {"[vmap]", "axis_size"});
  check_mentions(error_of([&] { vmap(add, {0})(zeros({3}), zeros({3})); }),
                 {"[vmap]", "in_axes has 1 entries", "2 positional arguments"});
  check_mentions(error_of([&] { vmap(add, 0, 0, 4)(zeros({3}), zeros({3})); }), {"[vmap]", "axis_size is 4", "size 3"});
  check_mentions(error_of([&] { vmap(add, 0, std::nullopt)(zeros({3}), zeros({3})); }),
                 {"[vmap]", "out_axes is std::nullopt", "output leaf 0"});
  check_mentions(error_of([&] { vmap(add, 0, 2)(zeros({3}), zeros({3})); }),
                 {"[vmap]", "out_axes is 2", "output leaf 0 (f32[])", "rank 1", "[-1, 1)"});
  check_mentions(error_of([&] { vmap([](const Array& a) { return std::make_pair(a, a); }, 0, {0})(zeros({3})); }),
                 {"[vmap]", "out_axes has 1 entries", "2 leaves"});
  // Reading a batched value on the host is a tracer error, as in JAX.
  check_mentions(error_of([&] { vmap([](const Array& a) { return a * a.item<float>(); })(zeros({3})); }),
                 {"tracer", "vmap"});
}

TEST_CASE("a primitive without a batching rule throws, never answers wrongly", "[vmap][errors]") {
  using namespace jitx::detail;
  static const Primitive& p = [] () -> const Primitive& {
    Primitive q;
    q.name = "vmap_test_unbatchable";
    q.abstract_eval = [](std::span<const ShapedArray> in, const Params&) { return std::vector<ShapedArray>{in[0]}; };
    q.lower = [](LowerCtx&, std::span<hlo::Instruction* const> a) { return std::vector<hlo::Instruction*>{a[0]}; };
    return register_primitive(std::move(q));
  }();
  Array x = rand_f32({3});
  check_same(bind1(p, {x}), x, "unbatched use works");
  check_mentions(error_of([&] { vmap([&](const Array& a) { return bind1(p, {a}); })(rand_f32({2, 3})); }),
                 {"[vmap]", "no batching rule for vmap_test_unbatchable yet"});
  // Every primitive that can see a batched input has a rule (iota and axis_index take no inputs; custom_lin only
  // appears under forward-mode differentiation of custom_vjp, which is unsupported).
  std::vector<std::string> missing;
  for (const Primitive* q : all_primitives())
    if (!q->batch && q->name != "iota" && q->name != "axis_index" && q->name != "custom_lin" &&
        q->name != "vmap_test_unbatchable")
      missing.push_back(q->name);
  INFO(fmt::format("{}", fmt::join(missing, ", ")));
  CHECK(missing.empty());
}

}  // namespace
