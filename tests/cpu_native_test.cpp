// Every registered primitive, jitted on the CPU backend across its dtypes (and axes, dimension numbers, operand
// counts), runs natively: executable_stats() reports no interpreter fallback, and the results match the reference
// interpreter run on the same optimised HLO. Primitives that cannot be jitted on their own are listed with why.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <set>

#include "hlo/evaluator/evaluator.h"
#include "core/trace.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/config.h"
#include "core/primitive.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "compile_log.h"
#include "test_util.h"

namespace {
// The pow primitive itself (XLA's integer power), which lax::pow refuses for integer bases as JAX's does.
jitx::Array pow_prim(const jitx::Array& x, const jitx::Array& y, jitx::Loc = jitx::Loc::current()) {
  return jitx::detail::bind1(*jitx::detail::find_primitive("pow"), {x, y});
}
}  // namespace

using namespace jitx;
using namespace jitx::testing;

namespace {
using WalkFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

const std::vector<DType> kAllDtypes{DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                    DType::int8,    DType::int16,   DType::int32,    DType::int64,
                                    DType::uint8,   DType::uint16,  DType::uint32,   DType::uint64, DType::bool_};
/// For ops whose code depends on the dtype's kind and width only (reductions, data movement, windows): one of
/// each float kind, signed and unsigned integers of three widths, and bool. Keeps the walk to a few seconds.
const std::vector<DType> kSomeDtypes{DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int8,
                                     DType::int32,   DType::uint16,  DType::uint64,   DType::bool_};

/// Primitives that never reach a backend on their own, with the reason (checked to be registered and absent from
/// the walk below).
const std::map<std::string, std::string>& exceptions() {
  static const std::map<std::string, std::string> m{
      {"custom_lin", "custom_vjp's linear part: only transposed, never evaluated (its transpose, the user's bwd, is "
                     "walked as 'custom_vjp bwd' below)"},
      {"debug_callback", "a host callback (debug::print/callback): run by the cpu backend and the interpreter in "
                         "debug_test.cpp, on both platforms"},
      {"pure_callback", "a host callback: debug_test.cpp checks its results on both platforms"},
      {"sharding_constraint", "with_sharding_constraint: an annotation the partitioner consumes (the identity on one "
                              "device); spmd_jit_test.cpp checks its values on both platforms"},
      {"psum", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"pmax", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"pmin", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"all_gather", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"reduce_scatter", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"all_to_all", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"ppermute", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"axis_index", "a collective: only inside shard_map (expanded there; shard_map_test.cpp, both platforms)"},
      {"shard_map", "lowered as its expansion over the mesh: shard_map_test.cpp checks jit values on both "
                    "platforms"}};
  return m;
}

/// Random inputs of dtype d and shape s: floats uniform in [lo, hi), integers with the extremes mixed in, bools.
Array random_array(DType d, Shape s, double lo = -2, double hi = 2) {
  int64_t n = 1;
  for (auto k : s) n *= k;
  if (is_floating(d)) return make(uniform(static_cast<size_t>(n), lo, hi), std::move(s), d);
  if (d == DType::bool_) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = rng()() & 1;
    return make_int(v, std::move(s), d);
  }
  return make_int(random_ints(static_cast<size_t>(n), d), std::move(s), d);
}

/// Small non-negative integers (indices, shift amounts, exponents) of dtype d.
Array small_ints(DType d, Shape s, int64_t hi) {
  int64_t n = 1;
  for (auto k : s) n *= k;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int64_t>(rng()() % static_cast<uint32_t>(hi));
  return make_int(v, std::move(s), d);
}

/// One case of the walk: a primitive, a program using it, and its inputs for a dtype.
struct Entry {
  std::string prim;
  WalkFn f;
  std::function<std::vector<Array>(DType)> args;
};

struct Walk {
  std::map<std::string, int> ran;  // primitive -> (dtype, case) pairs that compiled and ran
  int fallbacks = 0;

  /// Jits f on args; false when tracing rejects the dtypes (a TypeError: the primitive does not take them).
  bool run(const std::string& what, const WalkFn& f, const std::vector<Array>& args) {
    auto j = jit([f](std::vector<Array> a) { return f(a); });
    std::string log;
    std::optional<decltype(j.lower(args).compile())> c;
    {
      CompileLogCapture capture;
      try {
        c.emplace(j.lower(args).compile());
      } catch (const TypeError&) {
        return false;
      }
      log = capture.text;
    }
    INFO(what);
    auto got = (*c)(args);
    if (default_platform() == "cpu") {
      auto st = c->executable_stats();
      INFO(log);
      CHECK(st.at("whole_module_fallback") == 0);
      CHECK(st.at("interpreter_fallbacks") == 0);
      fallbacks += static_cast<int>(st.at("interpreter_fallbacks") + st.at("whole_module_fallback"));
    }
    // The oracle: the interpreter on the same optimised module and inputs.
    auto m = hlo::parse_hlo(c->as_text());
    std::vector<detail::Literal> lits;
    for (auto& a : args) lits.push_back(detail::concrete_buffer(a, "test")->literal());
    evaluator::Value want = evaluator::evaluate(*m, lits);
    REQUIRE(want.tuple.size() == got.size());
    for (size_t k = 0; k < got.size(); ++k) {
      const auto& w = want.tuple[k].array;
      auto g = detail::concrete_buffer(got[k], "test")->literal();
      REQUIRE(g.dims == w.dims);
      REQUIRE(g.dtype == w.dtype);
      // A primitive lowers to a short chain, perhaps a reduction (sums in blocks) or a fused chain rounded once.
      auto [rtol, atol] = tol(w.dtype, Bound::kSum);
      int bad = 0;
      for (int64_t i = 0; i < w.size(); ++i) {
        bool ok;
        if (is_floating(w.dtype)) {
          double gv = g.get_f64(i), wv = w.get_f64(i);
          ok = (std::isnan(gv) && std::isnan(wv)) || gv == wv || std::fabs(gv - wv) <= atol + rtol * std::fabs(wv);
          if (!ok && bad < 3) UNSCOPED_INFO("output " << k << " element " << i << ": got " << gv << " want " << wv);
        } else {
          ok = g.get_i64(i) == w.get_i64(i);
          if (!ok && bad < 3)
            UNSCOPED_INFO("output " << k << " element " << i << ": got " << g.get_i64(i) << " want " << w.get_i64(i));
        }
        bad += !ok;
      }
      CHECK(bad == 0);
    }
    return true;
  }

  /// The entries as one jitted program per dtype (one compile for many cases keeps the walk quick); an entry whose
  /// primitive rejects the dtype (a TypeError while tracing) is left out of that dtype's program.
  void group(const std::string& what, const std::vector<Entry>& es, const std::vector<DType>& dtypes) {
    for (DType d : dtypes) {
      std::vector<Array> args;
      std::vector<size_t> start;
      for (auto& e : es) {
        start.push_back(args.size());
        for (auto& a : e.args(d)) args.push_back(a);
      }
      start.push_back(args.size());
      auto traced = std::make_shared<std::set<size_t>>();
      WalkFn f = [es, start, traced](const std::vector<Array>& a) {
        std::vector<Array> out;
        for (size_t k = 0; k < es.size(); ++k) {
          std::vector<Array> sub(a.begin() + static_cast<std::ptrdiff_t>(start[k]),
                                 a.begin() + static_cast<std::ptrdiff_t>(start[k + 1]));
          try {
            for (auto& o : es[k].f(sub)) out.push_back(o);
            traced->insert(k);
          } catch (const TypeError&) {
          }
        }
        if (out.empty()) throw TypeError("no case of this group takes the dtype");
        return out;
      };
      if (run(what + " " + std::string(dtype_name(d)), f, args))
        for (size_t k : *traced) ran[es[k].prim]++;
    }
  }
};

// Input ranges where the float unary functions are defined (and not so steep that f16 rounding of the input
// dominates the comparison).
std::pair<double, double> unary_range(const std::string& name) {
  static const std::map<std::string, std::pair<double, double>> r{
      {"log", {0.05, 5}},    {"log1p", {-0.9, 5}},  {"sqrt", {0.01, 5}},   {"rsqrt", {0.05, 5}},
      {"asin", {-0.95, 0.95}}, {"acos", {-0.95, 0.95}}, {"atanh", {-0.9, 0.9}}, {"acosh", {1.05, 5}},
      {"erf_inv", {-0.9, 0.9}}, {"lgamma", {0.1, 6}},  {"digamma", {0.2, 6}},   {"tan", {-1.2, 1.2}}};
  auto it = r.find(name);
  return it == r.end() ? std::pair<double, double>{-2, 2} : it->second;
}

lax::ConvDimensionNumbers nchw() { return {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}; }
}  // namespace

TEST_CASE("cpu: every primitive runs natively (no interpreter fallback) and matches the interpreter",
          "[cpu][primitives]") {
  Walk w;
  using V = std::vector<Array>;
  using Unary = Array (*)(const Array&, Loc);
  using Binary = Array (*)(const Array&, const Array&, Loc);

  // Elementwise ops: every dtype (their code depends on each).
  std::vector<Entry> es;
  for (auto [name, op] : std::vector<std::pair<const char*, Unary>>{
           {"neg", lax::neg}, {"abs", lax::abs}, {"sign", lax::sign}, {"floor", lax::floor}, {"ceil", lax::ceil},
           {"exp", lax::exp}, {"exp2", lax::exp2}, {"expm1", lax::expm1}, {"log", lax::log}, {"log1p", lax::log1p},
           {"sqrt", lax::sqrt}, {"rsqrt", lax::rsqrt}, {"cbrt", lax::cbrt}, {"tanh", lax::tanh},
           {"logistic", lax::logistic}, {"sin", lax::sin}, {"cos", lax::cos}, {"tan", lax::tan}, {"asin", lax::asin},
           {"acos", lax::acos}, {"atan", lax::atan}, {"sinh", lax::sinh}, {"cosh", lax::cosh}, {"asinh", lax::asinh},
           {"acosh", lax::acosh}, {"atanh", lax::atanh}, {"erf", lax::erf}, {"erfc", lax::erfc},
           {"erf_inv", lax::erf_inv}, {"lgamma", lax::lgamma}, {"digamma", lax::digamma},
           {"is_finite", lax::is_finite}, {"not", lax::bitwise_not}, {"population_count", lax::population_count}}) {
    auto [lo, hi] = unary_range(name);
    es.push_back({name, [op](const V& a) { return V{op(a[0], Loc::current())}; },
                  [lo, hi](DType d) { return V{random_array(d, {2, 9}, lo, hi)}; }});
  }
  es.push_back({"round", [](const V& a) {
                  return V{lax::round(a[0], lax::RoundingMethod::AWAY_FROM_ZERO),
                           lax::round(a[0], lax::RoundingMethod::TO_NEAREST_EVEN)};
                }, [](DType d) { return V{random_array(d, {2, 9}, -4, 4)}; }});
  w.group("unary", es, kAllDtypes);

  es.clear();
  for (auto [name, op, lo, hi] : std::vector<std::tuple<const char*, Binary, double, double>>{
           {"add", lax::add, -2, 2}, {"sub", lax::sub, -2, 2}, {"mul", lax::mul, -2, 2}, {"div", lax::div, 0.5, 2},
           {"rem", lax::rem, 0.5, 3}, {"max", lax::max, -2, 2}, {"min", lax::min, -2, 2},
           {"atan2", lax::atan2, -2, 2}, {"and", lax::bitwise_and, -2, 2}, {"or", lax::bitwise_or, -2, 2},
           {"xor", lax::bitwise_xor, -2, 2}, {"eq", lax::eq, -2, 2}, {"ne", lax::ne, -2, 2}, {"lt", lax::lt, -2, 2},
           {"le", lax::le, -2, 2}, {"gt", lax::gt, -2, 2}, {"ge", lax::ge, -2, 2}})
    es.push_back({name, [op](const V& a) { return V{op(a[0], a[1], Loc::current())}; },
                  [lo, hi](DType d) { return V{random_array(d, {2, 9}, lo, hi), random_array(d, {2, 9}, lo, hi)}; }});
  // Shift amounts and integer exponents: small, some past the width (shifts), some negative (signed pow).
  for (auto [name, op] : std::vector<std::pair<const char*, Binary>>{
           {"shift_left", lax::shift_left}, {"shift_right_arithmetic", lax::shift_right_arithmetic},
           {"shift_right_logical", lax::shift_right_logical}, {"pow", pow_prim}}) {
    std::string n = name;
    es.push_back({n, [op](const V& a) { return V{op(a[0], a[1], Loc::current())}; }, [n](DType d) {
                    if (is_floating(d)) return V{random_array(d, {2, 9}, 0.2, 3), random_array(d, {2, 9}, -2, 2)};
                    if (d == DType::bool_) return V{random_array(d, {2, 9}), random_array(d, {2, 9})};
                    Array e = small_ints(d, {2, 9}, n == "pow" ? 12 : 70);
                    if (n == "pow" && is_signed_integer(d)) e = lax::sub(e, lax::convert_element_type(Array(2), d));
                    return V{random_array(d, {2, 9}), e};
                  }});
  }
  es.push_back({"select_n", [](const V& a) { return V{lax::select_n(a[0], a[1], a[2])}; }, [](DType d) {
                  return V{random_array(DType::bool_, {2, 9}), random_array(d, {2, 9}), random_array(d, {2, 9})};
                }});
  es.push_back({"clamp", [](const V& a) { return V{lax::clamp(a[0], a[1], a[2])}; }, [](DType d) {
                  return V{random_array(d, {}, -1, -0.5), random_array(d, {2, 9}), random_array(d, {}, 0.5, 1)};
                }});
  for (DType to : kSomeDtypes)
    es.push_back({"convert_element_type", [to](const V& a) { return V{lax::convert_element_type(a[0], to)}; },
                  [](DType d) { return V{random_array(d, {2, 9}, -100, 100)}; }});
  w.group("binary and conversions", es, kAllDtypes);

  es.clear();
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{
           {DType::float32, DType::int32}, {DType::int32, DType::float32}, {DType::float64, DType::uint64},
           {DType::bfloat16, DType::int16}, {DType::float16, DType::uint16}, {DType::int8, DType::uint8},
           {DType::float32, DType::uint16}, {DType::uint16, DType::float32}})
    es.push_back(
        {"bitcast_convert_type", [to](const V& a) { return V{lax::bitcast_convert_type(a[0], to)}; },
         [from](DType) { return V{random_array(from, from == DType::uint16 ? Shape{2, 9, 2} : Shape{2, 9})}; }});
  w.group("bitcast_convert_type", es, {DType::float32});

  // Reductions over axis subsets of a rank-3 array, argmax/argmin (the variadic (value, index) reduce) over each
  // axis with two index dtypes, cumulative ops both ways, windows with strides, padding and dilations.
  es.clear();
  for (auto [name, op] : std::vector<std::pair<const char*, Array (*)(const Array&, std::vector<int64_t>, Loc)>>{
           {"reduce_sum", lax::reduce_sum}, {"reduce_prod", lax::reduce_prod}, {"reduce_max", lax::reduce_max},
           {"reduce_min", lax::reduce_min}, {"reduce_and", lax::reduce_and}, {"reduce_or", lax::reduce_or}})
    for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {0, 2}, {0, 1, 2}})
      es.push_back({name, [op, axes](const V& a) { return V{op(a[0], axes, Loc::current())}; },
                    [](DType d) { return V{random_array(d, {3, 4, 5}, 0.5, 1.5)}; }});
  for (auto [name, op] : std::vector<std::pair<const char*, Array (*)(const Array&, int64_t, DType, Loc)>>{
           {"argmax", lax::argmax}, {"argmin", lax::argmin}})
    for (auto [axis, idx] :
         std::vector<std::pair<int64_t, DType>>{{0, DType::int32}, {1, DType::uint8}, {2, DType::int64}})
      es.push_back({name, [op, axis, idx](const V& a) { return V{op(a[0], axis, idx, Loc::current())}; },
                    [](DType d) { return V{random_array(d, {3, 4, 5})}; }});
  for (auto [name, op] : std::vector<std::pair<const char*, Array (*)(const Array&, int64_t, bool, Loc)>>{
           {"cumsum", lax::cumsum}, {"cumprod", lax::cumprod}, {"cummax", lax::cummax}, {"cummin", lax::cummin}})
    for (auto [axis, reverse] : std::vector<std::pair<int64_t, bool>>{{0, false}, {1, true}})
        es.push_back({name, [op, axis, reverse](const V& a) { return V{op(a[0], axis, reverse, Loc::current())}; },
                      [](DType d) { return V{random_array(d, {4, 6}, 0.5, 1.5)}; }});
  lax::WindowConfig wc{{2, 3}, {1, 2}, {{1, 0}, {0, 1}}, {1, 2}, {1, 1}};
  for (auto [name, op] : std::vector<std::pair<const char*, Array (*)(const Array&, const lax::WindowConfig&, Loc)>>{
           {"reduce_window_sum", lax::reduce_window_sum}, {"reduce_window_max", lax::reduce_window_max},
           {"reduce_window_min", lax::reduce_window_min}})
    es.push_back({name, [op, wc](const V& a) { return V{op(a[0], wc, Loc::current())}; },
                  [](DType d) { return V{random_array(d, {6, 7})}; }});
  w.group("reductions", es, kSomeDtypes);

  // dot_general: a batched contraction and a matrix product (integer dots wrap, bool is OR of ANDs), and with
  // preferred_element_type (int8 -> int32, bf16 -> f32, ...; float operands into an integer result are not walked:
  // see make_general_dot).
  es.clear();
  es.push_back({"dot_general", [](const V& a) {
                  return V{lax::dot_general(a[0], a[1], {{2}, {1}, {0}, {0}}), lax::dot(a[2], a[3])};
                }, [](DType d) {
                  return V{random_array(d, {2, 3, 4}), random_array(d, {2, 4, 5}), random_array(d, {5, 6}),
                           random_array(d, {6, 3})};
                }});
  for (DType pref : {DType::int32, DType::int64, DType::float32, DType::float64})
    es.push_back({"dot_general", [pref](const V& a) {
                    if (is_floating(a[0].dtype()) && !is_floating(pref)) throw TypeError("float into integer");
                    return V{lax::dot_general(a[0], a[1], {{1}, {0}, {}, {}}, pref)};
                  }, [](DType d) { return V{random_array(d, {4, 6}), random_array(d, {6, 3})}; }});
  // Convolutions: strides, padding, both dilations; feature groups; batch groups.
  es.push_back({"conv_general_dilated",
                [](const V& a) {
                  return V{
                      lax::conv_general_dilated(a[0], a[1], {1, 2}, {{1, 1}, {0, 1}}, {1, 1}, {1, 2}, nchw()),
                      lax::conv_general_dilated(a[0], a[1], {1, 1}, {{0, 0}, {1, 0}}, {2, 1}, {1, 1}, nchw()),
                      lax::conv_general_dilated(a[2], a[3], {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, {1, 1}, nchw(), 2),
                      lax::conv_general_dilated(a[4], a[5], {1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}, nchw(), 1, 2)};
                },
                [](DType d) {
                  return V{random_array(d, {2, 3, 6, 7}), random_array(d, {4, 3, 3, 2}), random_array(d, {2, 4, 5, 5}),
                           random_array(d, {6, 2, 3, 3}), random_array(d, {4, 2, 4, 4}), random_array(d, {4, 2, 2, 2})};
                }});
  w.group("dots and convolutions", es, kAllDtypes);

  // Linear algebra (Eigen against the interpreter's loops): well-conditioned spd inputs; the vectors of qr, eigh and
  // svd only squared (their signs differ between the two algorithms), and only in f64.
  auto spd = [](const Array& x) { return jnp::matmul(x, jnp::swapaxes(x, -1, -2)) + 4.0 * eye(4, 4, 0, x.dtype()); };
  auto linalg_args = [](DType d) { return V{random_array(d, {2, 4, 4}, -1, 1), random_array(d, {2, 4, 3})}; };
  es.clear();
  es.push_back({"lu", [spd](const V& a) {
                  auto f = lax::linalg::lu(spd(a[0]));
                  return V{f.lu, f.pivots, f.permutation};
                }, linalg_args});
  es.push_back({"cholesky", [spd](const V& a) { return V{lax::linalg::cholesky(spd(a[0]))}; }, linalg_args});
  es.push_back({"triangular_solve", [spd](const V& a) {
                  Array t = spd(a[0]);
                  Array bt = jnp::swapaxes(a[1], 1, 2);
                  return V{lax::linalg::triangular_solve(t, a[1], true, true),
                           lax::linalg::triangular_solve(t, bt, false, false, true, false, true)};
                }, linalg_args});
  w.group("linear algebra", es, {DType::float32, DType::float64});
  es.clear();
  es.push_back({"qr", [spd](const V& a) {
                  auto q = jnp::linalg::qr(spd(a[0]));
                  return V{q.Q * q.Q, q.R * q.R};
                }, linalg_args});
  es.push_back({"eigh", [spd](const V& a) {
                  auto e = jnp::linalg::eigh(spd(a[0]));
                  return V{e.eigenvalues, e.eigenvectors * e.eigenvectors};
                }, linalg_args});
  es.push_back({"svd", [](const V& a) {
                  auto r = jnp::linalg::svd(a[1], false);
                  return V{r.S, r.U * r.U, r.Vh * r.Vh};
                }, linalg_args});
  w.group("linear algebra vectors", es, {DType::float64});

  // Data movement, gather/scatter (rows picked by index, repeated and out of range), sort (one and two keys,
  // with a payload), top-k.
  es.clear();
  auto move = [&](const std::string& name, const WalkFn& f, Shape s) {
    es.push_back({name, f, [s](DType d) { return V{random_array(d, s)}; }});
  };
  move("broadcast_in_dim", [](const V& a) { return V{lax::broadcast_in_dim(a[0], {2, 3, 4}, {1, 2})}; }, {3, 1});
  move("reshape", [](const V& a) { return V{lax::reshape(a[0], {2, 6})}; }, {3, 4});
  move("transpose", [](const V& a) { return V{lax::transpose(a[0], {2, 0, 1})}; }, {2, 3, 4});
  move("rev", [](const V& a) { return V{lax::rev(a[0], {0, 2})}; }, {2, 3, 4});
  move("slice", [](const V& a) { return V{lax::slice(a[0], {1, 0}, {5, 7}, {2, 3})}; }, {6, 7});
  move("concatenate", [](const V& a) { return V{lax::concatenate({a[0], lax::rev(a[0], {0}), a[0]}, 1)}; }, {2, 3});
  move("pad",
       [](const V& a) {
         return V{lax::pad(a[0], lax::slice(lax::reshape(a[0], {12}), {5}, {6}).reshape({}), {{1, -1, 1}, {2, 0, 0}})};
       },
       {3, 4});
  move("iota", [](const V& a) { return V{lax::broadcasted_iota(a[0].dtype(), {3, 4}, 1), lax::iota(a[0].dtype(), 5)}; },
       {1});
  es.push_back({"dynamic_slice", [](const V& a) { return V{lax::dynamic_slice(a[0], {a[1], a[2]}, {2, 3})}; },
                [](DType d) { return V{random_array(d, {5, 6}), Array(3), Array(-1)}; }});
  es.push_back({"dynamic_update_slice",
                [](const V& a) { return V{lax::dynamic_update_slice(a[0], a[1], {a[2], a[3]})}; },
                [](DType d) { return V{random_array(d, {5, 6}), random_array(d, {2, 3}), Array(4), Array(1)}; }});
  lax::GatherDimensionNumbers gd{{1}, {0}, {}, {}, {0}, 1};
  lax::ScatterDimensionNumbers sd{{1}, {0}, {}, {}, {0}, 1};
  es.push_back({"gather", [gd](const V& a) { return V{lax::gather(a[0], a[1], gd, {1, 3})}; },
                [](DType d) { return V{random_array(d, {5, 3}), make_int({3, 0, 3, 7}, {4, 1}, DType::int32)}; }});
  for (auto [name, op] : std::vector<std::pair<const char*, decltype(&lax::scatter)>>{
           {"scatter", lax::scatter}, {"scatter-add", lax::scatter_add}, {"scatter-mul", lax::scatter_mul},
           {"scatter-min", lax::scatter_min}, {"scatter-max", lax::scatter_max}})
    es.push_back({name, [op, sd](const V& a) { return V{op(a[0], a[1], a[2], sd, false, false, Loc::current())}; },
                  [](DType d) {
                    return V{random_array(d, {5, 3}), make_int({3, 0, 1, 4}, {4, 1}, DType::int32),
                             random_array(d, {4, 3})};
                  }});
  for (int64_t dim : {0, 1})
    es.push_back({"sort", [dim](const V& a) {
                    V out{lax::sort(a[0], dim)};
                    for (auto& x : lax::sort({a[0], a[1]}, dim, true, 1)) out.push_back(x);
                    for (auto& x : lax::sort({a[1], a[0]}, dim, true, 2)) out.push_back(x);
                    return out;
                  }, [](DType d) { return V{random_array(d, {4, 6}), small_ints(DType::int32, {4, 6}, 3)}; }});
  es.push_back({"top_k", [](const V& a) {
                  auto [v, i] = lax::top_k(a[0], 3);
                  return V{v, i};
                }, [](DType d) { return V{random_array(d, {3, 8})}; }});
  w.group("data movement", es, kSomeDtypes);

  // Control flow and the autodiff-only primitives, through programs that contain them.
  es.clear();
  auto f32s = [](Shape s) { return [s](DType d) { return V{random_array(d, s)}; }; };
  es.push_back({"while", [](const V& a) {
                  auto [n, y] = lax::while_loop(
                      [](const std::pair<Array, Array>& c) { return c.first < 5; },
                      [](const std::pair<Array, Array>& c) { return std::make_pair(c.first + 1, jnp::sin(c.second)); },
                      std::make_pair(Array(0), a[0]));
                  return V{n, y};
                }, f32s({3, 4})});
  es.push_back({"scan", [](const V& a) {
                  auto [c, ys] = lax::scan([](Array c, Array x) { return std::make_pair(c * 0.5f + x, jnp::sum(c)); },
                                           a[0], lax::reshape(a[1], {6, 4}));
                  return V{c, ys};
                }, [](DType d) { return V{random_array(d, {4}), random_array(d, {24})}; }});
  es.push_back({"cond", [](const V& a) {
                  return V{lax::cond(jnp::sum(a[0]) > 0, [](Array v) { return jnp::exp(v); },
                                     [](Array v) { return v * v; }, a[0])};
                }, f32s({3})});
  es.push_back({"stop_gradient", [](const V& a) { return V{stop_gradient(a[0]) * a[0]}; }, f32s({5})});
  auto layer = [](const Array& h) { return jnp::sum(jnp::tanh(h) * jnp::sin(h)); };
  for (const char* name : {"checkpoint", "remat", "optimization_barrier"})
    es.push_back({name, [layer](const V& a) { return V{grad(checkpoint(layer))(a[0])}; }, f32s({6})});
  auto sin2 = custom_vjp([](const Array& x) { return jnp::sin(x); },
                         [](const Array& x) { return std::make_pair(jnp::sin(x), jnp::cos(x)); },
                         [](const Array& cos_x, const Array& g) { return std::make_tuple(cos_x * g * 2.0); });
  es.push_back({"custom_vjp bwd", [sin2](const V& a) {
                  return V{grad([sin2](const Array& x) { return jnp::sum(sin2(x)); })(a[0])};
                }, f32s({4})});
  // Custom functions called inside a traced body: one equation each, lowered as the function.
  es.push_back({"custom_jvp_call", [](const V& a) {
                  return V{lax::cond(jnp::sum(a[0]) > 0, [](Array v) { return nn::relu(v) * 2.0; },
                                     [](Array v) { return nn::relu(-v); }, a[0])};
                }, f32s({5})});
  es.push_back({"custom_vjp_call", [sin2](const V& a) {
                  return V{lax::cond(jnp::sum(a[0]) > 0, [sin2](Array v) { return sin2(v); },
                                     [](Array v) { return v * v; }, a[0])};
                }, f32s({4})});
  w.group("control flow and autodiff", es, {DType::float32, DType::float64});

  CHECK(w.fallbacks == 0);
  // Every registered primitive was walked with at least one dtype, or is an exception with its reason.
  for (const auto* p : detail::all_primitives()) {
    INFO("primitive " << p->name);
    if (exceptions().count(p->name)) {
      CHECK(w.ran.count(p->name) == 0);
      continue;
    }
    CHECK(w.ran[p->name] > 0);
  }
}

TEST_CASE("a variadic reduce needs the argmax/argmin reducer (the only variadic one): a clear verifier error",
          "[cpu][hlo][errors]") {
  // Reducers are named attributes, not computations, so a tuple reduce with an arbitrary reducer cannot be written;
  // one with a named elementwise reducer is rejected rather than run with a guessed meaning.
  const char* text = R"(HloModule m

ENTRY %main (a: f32[3,4], b: s32[3,4]) -> ((f32[3], s32[3])) {
  %a = f32[3,4] parameter(0)
  %b = s32[3,4] parameter(1)
  %z = f32[] constant(0)
  %zi = s32[] constant(0)
  %r = (f32[3], s32[3]) reduce(%a, %b, %z, %zi), dimensions={1}, reducer=add
  ROOT %t = ((f32[3], s32[3])) tuple(%r)
}
)";
  CHECK_THROWS_WITH(hlo::verify(*hlo::parse_hlo(text)),
                    Catch::Matchers::Contains("needs the argmax or argmin reducer"));
}

TEST_CASE("interpreter: Jacobi svd and eigh of matrices near 1e+-150 and 1e300 (scaled by a power of two)",
          "[interpreter][linalg]") {
  // A rank-1 4x4 matrix times s: the sums of squares in the Jacobi sweeps overflowed (1e150: U not orthogonal,
  // s0 wrong; 1e300: inf/NaN) or underflowed (1e-150). The reference interpreter's factors are now orthogonal and
  // its values the cpu backend's (Eigen's), within f64 rounding.
  Array u = jnp::array({0.3, -1.2, 0.7, 2.1}), v = jnp::array({1.1, 0.4, -0.9, 0.25});
  auto fs = jit([](const Array& a) {
    auto r = jnp::linalg::svd(a);
    auto e = jnp::linalg::eigh(a + jnp::transpose(a));
    return std::vector<Array>{r.U, r.S, r.Vh, e.eigenvalues, e.eigenvectors};
  });
  for (double scale : {1e150, 1e-150, 1e300}) {
    INFO("scale " << scale);
    Array a = jnp::outer(u, v) * scale;
    auto c = fs.lower(a).compile();
    auto cpu = c(a);
    auto m = hlo::parse_hlo(c.as_text());
    evaluator::Value got = evaluator::evaluate(*m, {detail::concrete_buffer(a, "test")->literal()});
    REQUIRE(got.tuple.size() == 5);
    auto vec = [&](int k) {
      const auto& l = got.tuple[static_cast<size_t>(k)].array;
      std::vector<double> out(static_cast<size_t>(l.size()));
      for (int64_t i = 0; i < l.size(); ++i) out[static_cast<size_t>(i)] = l.get_f64(i);
      return out;
    };
    auto orthogonal = [](const std::vector<double>& q) {  // 4x4, columns orthonormal
      double worst = 0;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          double d = 0;
          for (int r = 0; r < 4; ++r) d += q[r * 4 + i] * q[r * 4 + j];
          worst = std::max(worst, std::fabs(d - (i == j ? 1.0 : 0.0)));
        }
      return worst;
    };
    CHECK(orthogonal(vec(0)) < 1e-12);
    CHECK(orthogonal(vec(4)) < 1e-12);
    std::vector<double> s = vec(1), w = vec(3);
    std::vector<double> s_cpu = cpu[1].to_vector<double>(), w_cpu = cpu[3].to_vector<double>();
    CHECK(std::fabs(s[0] - s_cpu[0]) <= 1e-14 * s_cpu[0]);
    CHECK(std::fabs(w[0] - w_cpu[0]) <= 1e-14 * std::fabs(w_cpu[0]));
    CHECK(std::fabs(w[3] - w_cpu[3]) <= 1e-14 * std::fabs(w_cpu[3]));
    for (int k = 1; k < 4; ++k) CHECK(s[static_cast<size_t>(k)] <= 1e-14 * s[0]);  // rank 1
  }
}
