// The bad-input walk: every registered primitive, fed wrong ranks, dtypes, zero-size and missing or extra operands,
// and out-of-range, negative or huge values of its integer parameters, either accepts the input (and then runs it
// eagerly without crashing) or throws a jitx::Error. Anything else (a std::exception that is not a jitx::Error, a
// crash, a hang) fails. A primitive registered without a valid use here fails the coverage case: add one below.
#include <set>

#include "core/primitive.h"
#include "core/trace.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::detail;

namespace {

/// One valid use of a primitive: its parameters and operand types, taken from a traced program.
struct Use {
  const Primitive* prim;
  Params params;
  std::vector<ShapedArray> avals;
};

void harvest(const Jaxpr& j, std::vector<Use>& out) {
  for (const Eqn& e : j.eqns) {
    std::vector<ShapedArray> avals;
    for (const Atom& a : e.inputs) avals.push_back(a.aval());
    out.push_back({e.prim, e.params, avals});
    for (const auto& [k, v] : e.params.items()) {
      if (auto* cj = std::get_if<std::shared_ptr<const detail::ClosedJaxpr>>(&v)) harvest((*cj)->jaxpr, out);
      if (auto* list = std::get_if<JaxprList>(&v))
        for (const auto& b : *list) harvest(b->jaxpr, out);
    }
  }
}

ShapedArray sa(Shape s, DType d = DType::float32) { return ShapedArray{std::move(s), d}; }

void trace(std::vector<Use>& out, std::vector<ShapedArray> in,
           const std::function<std::vector<Array>(const std::vector<Array>&)>& fn) {
  detail::ClosedJaxpr cj = trace_to_jaxpr("walk", in, fn);
  harvest(cj.jaxpr, out);
}

/// Valid uses of every primitive: elementwise ones bound directly, the rest through the lax/jnp functions that
/// emit them.
std::vector<Use> valid_uses() {
  std::vector<Use> uses;
  auto direct = [&](std::initializer_list<const char*> names, std::vector<ShapedArray> avals) {
    for (const char* n : names) uses.push_back({&primitive(n), {}, avals});
  };
  ShapedArray f23 = sa({2, 3}), i23 = sa({2, 3}, DType::int32), b23 = sa({2, 3}, DType::bool_);
  direct({"abs",   "acos",      "acosh",   "asin", "asinh",   "atan",         "atanh", "cbrt",  "ceil",
          "cos",   "cosh",      "digamma", "erf",  "erf_inv", "erfc",         "exp",   "exp2",  "expm1",
          "floor", "is_finite", "lgamma",  "log",  "log1p",   "logistic",     "neg",   "rsqrt", "sign",
          "sin",   "sinh",      "sqrt",    "tan",  "tanh",    "stop_gradient"},
         {f23});
  direct({"add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "eq", "ne", "lt", "le", "gt", "ge"},
         {f23, f23});
  direct({"and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"}, {i23, i23});
  direct({"not", "population_count"}, {i23});
  direct({"select_n"}, {b23, f23, f23});
  direct({"clamp"}, {f23, f23, f23});
  direct({"optimization_barrier"}, {f23, i23});
  auto one = [](Array a) { return std::vector<Array>{a}; };
  trace(uses, {f23}, [&](auto& a) { return one(lax::round(a[0], lax::RoundingMethod::TO_NEAREST_EVEN)); });
  trace(uses, {f23}, [&](auto& a) {
    return std::vector<Array>{lax::convert_element_type(a[0], DType::int32),
                              lax::bitcast_convert_type(a[0], DType::uint32),
                              lax::broadcast_in_dim(a[0], {4, 2, 3}, {1, 2}),
                              lax::reshape(a[0], {3, 2}),
                              lax::transpose(a[0], {1, 0}),
                              lax::rev(a[0], {0}),
                              lax::slice(a[0], {0, 1}, {2, 3}, {1, 2}),
                              lax::concatenate({a[0], a[0]}, 1),
                              lax::pad(a[0], Array(0.0f), {{1, 0, 1}, {0, 2, 0}}),
                              lax::broadcasted_iota(DType::int32, {2, 3}, 1)};
  });
  trace(uses, {f23}, [&](auto& a) {
    return std::vector<Array>{lax::reduce_sum(a[0], {1}),    lax::reduce_prod(a[0], {0}), lax::reduce_max(a[0], {1}),
                              lax::reduce_min(a[0], {0, 1}), lax::argmax(a[0], 1),        lax::argmin(a[0], 0),
                              lax::cumsum(a[0], 1),          lax::cumprod(a[0], 0),       lax::cummax(a[0], 1),
                              lax::cummin(a[0], 0, true)};
  });
  trace(uses, {b23},
        [&](auto& a) { return std::vector<Array>{lax::reduce_and(a[0], {1}), lax::reduce_or(a[0], {0})}; });
  trace(uses, {sa({1, 4, 4, 2})}, [&](auto& a) {
    lax::WindowConfig w{{1, 2, 2, 1}, {1, 2, 2, 1}, {{0, 0}, {0, 1}, {1, 0}, {0, 0}}, {}, {}};
    return std::vector<Array>{lax::reduce_window_sum(a[0], w), lax::reduce_window_max(a[0], w),
                              lax::reduce_window_min(a[0], w)};
  });
  trace(uses, {sa({2, 3, 4}), sa({2, 4, 5})},
        [&](auto& a) { return one(lax::dot_general(a[0], a[1], {{2}, {1}, {0}, {0}})); });
  trace(uses, {sa({5, 3}), sa({2, 1}, DType::int32)},
        [&](auto& a) { return one(lax::gather(a[0], a[1], {{1}, {0}, {}, {}, {0}, -1}, {1, 3})); });
  trace(uses, {sa({5, 3}), sa({2, 1}, DType::int32), sa({2, 3})}, [&](auto& a) {
    lax::ScatterDimensionNumbers dn{{1}, {0}, {}, {}, {0}, -1};
    return std::vector<Array>{lax::scatter(a[0], a[1], a[2], dn), lax::scatter_add(a[0], a[1], a[2], dn),
                              lax::scatter_mul(a[0], a[1], a[2], dn), lax::scatter_min(a[0], a[1], a[2], dn),
                              lax::scatter_max(a[0], a[1], a[2], dn)};
  });
  trace(uses, {f23, sa({}, DType::int32)}, [&](auto& a) {
    return std::vector<Array>{lax::dynamic_slice(a[0], {a[1], a[1]}, {1, 2}),
                              lax::dynamic_update_slice(a[0], lax::slice(a[0], {0, 0}, {1, 2}), {a[1], a[1]})};
  });
  trace(uses, {f23}, [&](auto& a) {
    auto [v, i] = lax::top_k(a[0], 2);
    return std::vector<Array>{lax::sort(a[0], 1), v, i};
  });
  trace(uses, {sa({2, 3, 6, 6}), sa({4, 3, 3, 3})},
        [&](auto& a) { return one(lax::conv_general_dilated(a[0], a[1], {1, 2}, {{1, 1}, {0, 1}}, {1, 1}, {1, 2})); });
  trace(uses, {sa({2, 3, 3}), sa({2, 3, 2})}, [&](auto& a) {
    auto f = lax::linalg::lu(a[0]);
    auto q = jnp::linalg::qr(a[0]);
    auto e = jnp::linalg::eigh(a[0]);
    auto s = jnp::linalg::svd(a[0], false);
    return std::vector<Array>{f.lu, f.pivots, lax::linalg::cholesky(a[0]),
                              lax::linalg::triangular_solve(a[0], a[1], true, true), q.Q, q.R, e.eigenvalues,
                              e.eigenvectors, s.U, s.S, s.Vh};
  });
  trace(uses, {f23, sa({}, DType::bool_)}, [&](auto& a) {
    return one(lax::cond(a[1], [](Array x) { return x + 1.0f; }, [](Array x) { return x * 2.0f; }, a[0]));
  });
  trace(uses, {f23}, [&](auto& a) {
    return one(lax::while_loop([](Array x) { return jnp::sum(x) < 10.0f; }, [](Array x) { return x + 1.0f; }, a[0]));
  });
  trace(uses, {sa({3}), sa({4, 3})}, [&](auto& a) {
    auto [c, ys] = lax::scan([](Array c, Array x) { return std::pair{c + x, c * x}; }, a[0], a[1]);
    return std::vector<Array>{c, ys};
  });
  trace(uses, {f23}, [&](auto& a) {
    auto f = checkpoint([](Array x) { return jnp::sin(x) * x; });
    return std::vector<Array>{f(a[0]), grad([&](Array x) { return jnp::sum(f(x)); })(a[0])};
  });
  trace(uses, {f23}, [&](auto& a) { return one(remat([](Array x) { return jnp::exp(x) * x; })(a[0])); });
  trace(uses, {f23}, [&](auto& a) {
    auto sq = custom_jvp([](const Array& x) { return x * x; },
                         [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                           const Array& x = std::get<0>(p);
                           return std::make_pair(x * x, 2.0f * x * std::get<0>(t));
                         });
    return one(grad([&](Array x) { return jnp::sum(sq(x)); })(a[0]));
  });
  return uses;
}

// Primitives that user code cannot reach with operands of its choosing, or that the walk reaches only through
// others (each with its reason).
const std::set<std::string> kNotWalked = {
    "iota",        // takes no operands; its sizes are checked by broadcasted_iota's use (the size params are walked)
    "remat",       // made by grad of a checkpoint (the backward pass's recomputation) from the checkpoint's own jaxpr
    "custom_lin",  // made only by linearize inside grad of a custom_jvp function, from operands it typed itself
    // a custom function called where a jaxpr is traced: its operands are the traced function's own (its bad inputs
    // are the function's, walked through the ops it calls); autodiff_custom_test.cpp
    "custom_jvp_call", "custom_vjp_call",
    "debug_callback", "pure_callback",  // host callbacks: their params name a registered callback (debug_test.cpp)
    "sharding_constraint",  // its params name a registered sharding; its bad input (rank) in spmd_jit_test.cpp
    // shard_map's collectives: bound only inside a shard_map (their axes must be bound); their bad inputs (axes,
    // sizes, perms, empty Arrays) in shard_map_test.cpp and the API walk
    "psum", "pmax", "pmin", "all_gather", "reduce_scatter", "all_to_all", "ppermute", "axis_index",
    "shard_map",  // its params name a registered mesh and specs; its bad inputs in shard_map_test.cpp
};

std::string avals_list(const std::vector<ShapedArray>& a) {
  std::string s;
  for (auto& x : a) s += (s.empty() ? "" : ", ") + x.str();
  return s;
}

/// The inputs that must be refused or handled: each operand with a rank more or less, another dtype, a zero-size
/// first dimension; an operand missing or one too many.
std::vector<std::vector<ShapedArray>> bad_operands(const std::vector<ShapedArray>& avals) {
  std::vector<std::vector<ShapedArray>> out;
  for (size_t i = 0; i < avals.size(); ++i) {
    auto with = [&](ShapedArray a) {
      auto v = avals;
      v[i] = std::move(a);
      out.push_back(std::move(v));
    };
    ShapedArray a = avals[i];
    ShapedArray more = a;
    more.shape.push_back(2);
    with(more);
    if (a.ndim() > 0) {
      ShapedArray less = a;
      less.shape.pop_back();
      with(less);
      ShapedArray zero = a;
      zero.shape[0] = 0;
      with(zero);
      ShapedArray other = a;
      other.shape[0] += 1;
      with(other);
    }
    for (DType d : {DType::float32, DType::int32, DType::bool_, DType::uint8, DType::float64})
      if (d != a.dtype) with(sa(a.shape, d));
  }
  if (!avals.empty()) out.push_back({avals.begin(), avals.end() - 1});
  if (!avals.empty()) {
    auto v = avals;
    v.push_back(avals[0]);
    out.push_back(v);
  }
  return out;
}

/// The same parameters with one integer (or one entry of a list of integers) made negative, huge or out of range.
std::vector<std::pair<std::string, Params>> bad_params(const Params& p) {
  std::vector<std::pair<std::string, Params>> out;
  for (const auto& [key, v] : p.items()) {
    auto with = [&, key = key](ParamValue nv, std::string what) {
      Params q = p;
      q.set(key, std::move(nv));
      out.push_back({key + " " + what, std::move(q)});
    };
    if (auto* i = std::get_if<int64_t>(&v)) {
      for (int64_t bad : {int64_t(-7), int64_t(-1), *i + 100, int64_t(1) << 40}) with(bad, fmt::format("= {}", bad));
    } else if (auto* ints = std::get_if<std::vector<int64_t>>(&v)) {
      for (size_t k = 0; k < ints->size(); ++k)
        for (int64_t bad : {int64_t(-9), int64_t(99), int64_t(1) << 40}) {
          auto w = *ints;
          w[k] = bad;
          with(w, fmt::format("[{}] = {}", k, bad));
        }
      auto longer = *ints;
      longer.push_back(1);
      with(longer, "one entry longer");
      if (!ints->empty()) with(std::vector<int64_t>(ints->begin(), ints->end() - 1), "one entry shorter");
    } else if (std::holds_alternative<DType>(v)) {
      with(static_cast<DType>(200), "= DType(200)");
    }
  }
  return out;
}

/// Random concrete operands of these types (small integers, so shifts and powers stay defined).
std::vector<Array> concrete(const std::vector<ShapedArray>& avals) {
  std::vector<Array> xs;
  for (auto& a : avals) {
    auto n = static_cast<size_t>(std::max<int64_t>(a.size(), 0));
    std::vector<double> v = testing::uniform(n, -3, 3);
    for (auto& x : v) x = std::round(x);
    xs.push_back(testing::make(v, a.shape, a.dtype));
  }
  return xs;
}

/// Params as text; a parameter the walk made invalid (a DType(200)) may not print.
std::string params_str(const Params& p) {
  try {
    return p.str();
  } catch (const Error& e) {
    return "[params that do not print]";
  }
}

int64_t total_elements(const std::vector<ShapedArray>& avals) {
  int64_t n = 0;
  for (auto& a : avals) n += a.size();
  return n;
}

/// Runs one input through abstract evaluation and, if accepted and small, eagerly; returns a failure or "".
std::string try_input(const Use& u, const std::vector<ShapedArray>& avals, const Params& params) {
  // To find which input crashed: JITX_WALK_VERBOSE=1 prints each before it runs; JITX_WALK_FROM=n skips the first n.
  static const bool verbose = std::getenv("JITX_WALK_VERBOSE") != nullptr;
  static const int64_t from = std::getenv("JITX_WALK_FROM") ? std::atoll(std::getenv("JITX_WALK_FROM")) : 0;
  static int64_t index = 0;
  if (index++ < from) return "";
  if (verbose)
    fmt::print(stderr, "walk {}: {}({}) {}\n", index - 1, u.prim->name, avals_list(avals), params_str(params));
  try {
    auto outs = u.prim->abstract_eval(avals, params);
    if (total_elements(avals) > 4096 || params.has("jaxpr") || params.has("branches") || params.has("body_jaxpr"))
      return "";
    for (auto& o : outs)
      if (o.size() > 4096) return "";
    auto got = bind(*u.prim, concrete(avals), params);
    if (got.size() != outs.size())
      return fmt::format("eager gave {} results, abstract eval {}", got.size(), outs.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i].shape() != outs[i].shape || got[i].dtype() != outs[i].dtype)
        return fmt::format("eager result {} is {}, abstract eval said {}", i, got[i].aval().str(), outs[i].str());
    for (auto& g : got) g.block_until_ready();
    return "";
  } catch (const Error&) {
    return "";
  } catch (const std::exception& e) {
    return fmt::format("threw a non-jitx exception: {}", e.what());
  }
}

}  // namespace

TEST_CASE("bad-input walk: every primitive has a valid use in the walk", "[errors][walk]") {
  std::set<std::string> covered;
  for (const Use& u : valid_uses()) covered.insert(u.prim->name);
  std::vector<std::string> missing;
  for (const Primitive* p : all_primitives())
    if (!covered.count(p->name) && !kNotWalked.count(p->name)) missing.push_back(p->name);
  INFO("primitives without a valid use in bad_input_walk_test.cpp's valid_uses(): " << fmt::format(
           "{}", fmt::join(missing, ", ")));
  CHECK(missing.empty());
}

TEST_CASE("bad-input walk: wrong operands and out-of-range parameters end in a jitx::Error or a right-shaped result",
          "[errors][walk]") {
  std::vector<std::string> failures;
  std::set<std::string> seen;
  int64_t tried = 0;
  for (const Use& u : valid_uses()) {
    // The valid use itself must work.
    if (std::string f = try_input(u, u.avals, u.params); !f.empty())
      failures.push_back(
          fmt::format("{}({}) {}: valid use: {}", u.prim->name, avals_list(u.avals), params_str(u.params), f));
    for (auto& avals : bad_operands(u.avals)) {
      ++tried;
      if (std::string f = try_input(u, avals, u.params); !f.empty())
        failures.push_back(fmt::format("{}({}) {}: {}", u.prim->name, avals_list(avals), params_str(u.params), f));
    }
    for (auto& [what, params] : bad_params(u.params)) {
      ++tried;
      if (std::string f = try_input(u, u.avals, params); !f.empty())
        failures.push_back(fmt::format("{}({}) with {}: {}", u.prim->name, avals_list(u.avals), what, f));
    }
  }
  INFO(tried << " bad inputs tried; failures:\n" << fmt::format("{}", fmt::join(failures, "\n")));
  CHECK(failures.empty());
  CHECK(tried > 500);
}
