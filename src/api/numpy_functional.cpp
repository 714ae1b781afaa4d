// jnp's functional helpers (numpy_functional.h): vectorize's signature parsing, broadcasting and nested vmaps,
// apply_along_axis, apply_over_axes and piecewise, each as JAX's jax/_src/numpy does it.
#include "jitx/numpy_functional.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/lax.h"
#include "jitx/lax_control.h"

namespace jitx::detail {
using numpy::Axes;
using numpy::broadcast_shapes;
using numpy::expand_dims;
using numpy::reshape;

namespace {

using CoreDims = std::vector<std::string>;

// "(m,n),(n)->(m)" as JAX's _parse_gufunc_signature reads it (no spaces; names are \w+; "()" is a scalar).
bool parse_arg_list(std::string_view s, size_t& i, std::vector<CoreDims>* out) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (true) {
    if (i >= s.size() || s[i] != '(') return false;
    ++i;
    CoreDims dims;
    if (i < s.size() && s[i] != ')') {
      while (true) {
        size_t b = i;
        while (i < s.size() && word(s[i])) ++i;
        if (i == b) return false;
        dims.emplace_back(s.substr(b, i - b));
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        break;
      }
    }
    if (i >= s.size() || s[i] != ')') return false;
    ++i;
    out->push_back(std::move(dims));
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    return true;
  }
}

std::pair<std::vector<CoreDims>, std::vector<CoreDims>> parse_signature(const std::string& sig) {
  std::vector<CoreDims> in, out;
  size_t arrow = sig.find("->");
  bool ok = arrow != std::string::npos;
  if (ok) {
    std::string_view a(sig.data(), arrow), b(sig.data() + arrow + 2, sig.size() - arrow - 2);
    size_t i = 0, j = 0;
    ok = parse_arg_list(a, i, &in) && i == a.size() && parse_arg_list(b, j, &out) && j == b.size();
  }
  if (!ok)
    throw_error<TypeError>("vectorize", "not a valid gufunc signature: '{}' (expected e.g. '(m,n),(n)->(m)')", sig);
  return {in, out};
}

std::string core_str(const CoreDims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += fmt::format("{}'{}'", i ? ", " : "", d[i]);
  s += d.size() == 1 ? ",)" : ")";
  return s;
}

void update_dim_sizes(std::map<std::string, int64_t>& sizes, const Shape& shape, const CoreDims& core, bool is_input,
                      const std::string& context) {
  size_t n = core.size();
  if (is_input && shape.size() < n)
    throw_error<ShapeError>("vectorize",
                            "input with shape {} does not have enough dimensions for all core dimensions {} {}",
                            shape_str(shape), core_str(core), context);
  if (!is_input && shape.size() != n)
    throw_error<ShapeError>("vectorize", "output shape {} does not match core dimensions {} {}", shape_str(shape),
                            core_str(core), context);
  for (size_t k = 0; k < n; ++k) {
    int64_t size = shape[shape.size() - n + k];
    auto [it, fresh] = sizes.emplace(core[k], size);
    if (!fresh && it->second != size)
      throw_error<ShapeError>("vectorize", "inconsistent size for core dimension '{}': {} vs {} {}", core[k], size,
                              it->second, context);
  }
}

}  // namespace

VectorizePlan vectorize_plan(const std::optional<std::string>& signature, std::vector<Array> args, const Loc& loc) {
  ApiScope s(loc, nullptr);
  VectorizePlan plan;
  plan.context = signature ? fmt::format("on vectorized function with signature='{}'", *signature)
                           : std::string("on vectorized function with signature=None");
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].valid()) throw_error<TypeError>("vectorize", "argument {} is an empty (default-constructed) Array", i);
  std::vector<CoreDims> in_core(args.size());
  if (signature) {
    auto [in, out] = parse_signature(*signature);
    if (in.size() != args.size())
      throw_error<TypeError>("vectorize", "wrong number of positional arguments: expected {}, got {} {}", in.size(),
                             args.size(), plan.context);
    in_core = std::move(in);
    plan.has_signature = true;
    plan.out_core = std::move(out);
  }
  std::map<std::string, int64_t> sizes;
  std::vector<Shape> loop_shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    update_dim_sizes(sizes, args[i].shape(), in_core[i], true, plan.context);
    const Shape& sh = args[i].shape();
    loop_shapes.emplace_back(sh.begin(), sh.end() - static_cast<int64_t>(in_core[i].size()));
  }
  plan.dim_sizes.assign(sizes.begin(), sizes.end());
  Shape bshape = broadcast_shapes(loop_shapes, "vectorize");
  const size_t nb = bshape.size();
  // Squeeze each argument's size-1 loop dimensions; pad its loop shape on the left with 1s to the broadcast rank.
  std::vector<Shape> filled;
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& ls = loop_shapes[i];
    Shape f(nb - ls.size(), 1);
    f.insert(f.end(), ls.begin(), ls.end());
    filled.push_back(f);
    Shape kept;
    for (size_t d = 0; d < args[i].shape().size(); ++d)
      if (d >= ls.size() || ls[d] != 1) kept.push_back(args[i].shape()[d]);
    if (kept.size() != args[i].shape().size()) args[i] = reshape(args[i], kept);
  }
  for (size_t neg = 0; neg < nb; ++neg) {
    size_t dim = nb - 1 - neg;
    std::vector<Axis> axes;
    bool any = false;
    for (const Shape& f : filled) {
      if (f[dim] == 1) {
        axes.emplace_back(std::nullopt);
      } else {
        axes.emplace_back(0);
        any = true;
      }
    }
    if (any) {
      plan.level_axes.push_back(std::move(axes));
    } else {
      plan.dims_to_expand.push_back(static_cast<int64_t>(dim));
    }
  }
  plan.args = std::move(args);
  return plan;
}

void vectorize_check_outputs(const VectorizePlan& plan, const std::vector<Array>& outs, const Loc& loc) {
  if (!plan.has_signature) return;
  ApiScope s(loc, nullptr);
  if (outs.size() != plan.out_core.size())
    throw_error<TypeError>("vectorize", "wrong number of output arguments: expected {}, got {} {}",
                           plan.out_core.size(), outs.size(), plan.context);
  std::map<std::string, int64_t> sizes(plan.dim_sizes.begin(), plan.dim_sizes.end());
  for (size_t i = 0; i < outs.size(); ++i)
    update_dim_sizes(sizes, outs[i].shape(), plan.out_core[i], false, plan.context);
}

std::vector<Array> vectorize_run(const std::function<std::vector<Array>(const std::vector<Array>&)>& inner,
                                 const VectorizePlan& plan, const Loc& loc) {
  using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
  Fn g = inner;
  for (const auto& axes : plan.level_axes) {
    Fn prev = g;
    g = [prev, axes, loc](const std::vector<Array>& v) {
      return jitx::vmap(prev, InAxes::per_leaf(axes), 0, std::nullopt, loc)(v);
    };
  }
  std::vector<Array> outs = g(plan.args);
  if (!plan.dims_to_expand.empty()) {
    ApiScope s(loc, nullptr);
    Axes ax(plan.dims_to_expand.begin(), plan.dims_to_expand.end());
    for (Array& o : outs) o = expand_dims(o, ax);
  }
  return outs;
}

}  // namespace jitx::detail

namespace jitx::numpy {
using jitx::detail::ApiScope;
using jitx::detail::shape_str;
using jitx::detail::throw_error;

Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis, const Array& arr, Loc loc) {
  using Fn = std::function<Array(const Array&)>;
  int64_t nd;
  {
    ApiScope s(loc);
    if (!arr.valid()) throw_error<TypeError>("apply_along_axis", "got an empty (default-constructed) Array");
    if (!func1d) throw_error<TypeError>("apply_along_axis", "func1d is empty");
    nd = arr.ndim();
    axis = jitx::detail::canonical_axis(axis, nd, "apply_along_axis");
  }
  Fn func = func1d;
  for (int64_t i = 1; i < nd - axis; ++i) {
    Fn prev = func;
    func = [prev, i, loc](const Array& x) -> Array { return jitx::vmap(prev, i, -1, std::nullopt, loc)(x); };
  }
  for (int64_t i = 0; i < axis; ++i) {
    Fn prev = func;
    func = [prev, loc](const Array& x) -> Array { return jitx::vmap(prev, 0, 0, std::nullopt, loc)(x); };
  }
  return func(arr);
}

Array apply_over_axes(const std::function<Array(const Array&, int64_t)>& func, const Array& a,
                      const std::vector<int64_t>& axes, Loc loc) {
  ApiScope s(loc);
  if (!a.valid()) throw_error<TypeError>("apply_over_axes", "got an empty (default-constructed) Array");
  if (!func) throw_error<TypeError>("apply_over_axes", "func is empty");
  Array cur = a;
  for (int64_t axis : axes) {
    Array b = func(cur, axis);
    if (b.ndim() == cur.ndim()) {
      cur = b;
    } else if (b.ndim() == cur.ndim() - 1) {
      cur = expand_dims(b, axis);
    } else {
      throw_error<ShapeError>("apply_over_axes",
                              "function is not returning an array of the correct shape: func(a of shape {}, axis {}) "
                              "returned shape {} (expected rank {} or {})",
                              shape_str(cur.shape()), axis, shape_str(b.shape()), cur.ndim(), cur.ndim() - 1);
    }
  }
  return cur;
}

namespace {
Array piecewise_impl(const Array& x, const Array& condlist, const std::vector<Piece>& funclist, const Loc& loc) {
  using Fn = std::function<Array(const Array&)>;
  Array indices;
  DType dtype;
  std::vector<Fn> branches;
  {
    ApiScope s(loc, nullptr);
    if (!x.valid() || !condlist.valid())
      throw_error<TypeError>("piecewise", "got an empty (default-constructed) Array for {}",
                             x.valid() ? "condlist" : "x");
    if (condlist.ndim() == 0)
      throw_error<ShapeError>("piecewise",
                              "condlist must be a sequence of conditions (an array of rank >= 1), got "
                              "a scalar; wrap it: {{cond}}");
    int64_t nc = condlist.dim(0), nf = static_cast<int64_t>(funclist.size());
    std::vector<const Piece*> order;
    Piece zero(0);
    if (nf == nc + 1) {
      order.push_back(&funclist.back());
      for (int64_t i = 0; i < nc; ++i) order.push_back(&funclist[static_cast<size_t>(i)]);
    } else if (nf == nc) {
      order.push_back(&zero);
      for (const Piece& p : funclist) order.push_back(&p);
    } else {
      throw_error<TypeError>("piecewise", "with {} condition(s), either {} or {} functions are expected; got {}", nc,
                             nc, nc + 1, nf);
    }
    Array conds = astype(condlist, DType::bool_);
    Array first = lax::slice_in_dim(conds, 0, 1, 1, 0);
    indices = argmax(cumsum(concatenate({zeros_like(first), conds}, 0), 0), 0);
    dtype = x.dtype();
    for (const Piece* p : order) {
      if (p->fn) {
        Fn f = p->fn;
        branches.push_back([f, dtype](const Array& e) { return astype(f(e), dtype); });
      } else {
        Array v = *p->value;
        if (!v.valid()) throw_error<TypeError>("piecewise", "a constant in funclist is an empty Array");
        if (v.ndim() != 0)
          throw_error<ShapeError>("piecewise", "a constant in funclist must be a scalar, got shape {}",
                                  shape_str(v.shape()));
        branches.push_back([v, dtype](const Array&) { return astype(v, dtype); });
      }
    }
  }
  auto sw = [&branches](const Array& i, const Array& e) { return lax::switch_(i, branches, e); };
  return vectorize(sw, std::nullopt, loc)(indices, x);
}
}  // namespace

Array piecewise(const Array& x, const std::vector<Array>& condlist, const std::vector<Piece>& funclist, Loc loc) {
  std::vector<Array> conds;
  {
    ApiScope s(loc);
    for (size_t i = 0; i < condlist.size(); ++i)
      if (!condlist[i].valid()) throw_error<TypeError>("piecewise", "condlist[{}] is an empty Array", i);
    if (condlist.empty())
      throw_error<ShapeError>("piecewise", "condlist is empty (JAX's argmax over no conditions fails too)");
    // As JAX's asarray(condlist, dtype=bool): the conditions stacked (they must share one shape).
    for (const Array& c : condlist) conds.push_back(astype(c, DType::bool_));
    for (size_t i = 1; i < conds.size(); ++i)
      if (conds[i].shape() != conds[0].shape())
        throw_error<ShapeError>("piecewise",
                                "the conditions must have one shape, got {} (condlist[0]) and {} "
                                "(condlist[{}])",
                                shape_str(conds[0].shape()), shape_str(conds[i].shape()), i);
  }
  return piecewise_impl(x, stack(conds, 0), funclist, loc);
}

}  // namespace jitx::numpy

namespace jitx {
Array detail::piecewise_array(const Array& x, const Array& condlist, const std::vector<numpy::Piece>& funclist,
                              const Loc& loc) {
  return numpy::piecewise_impl(x, condlist, funclist, loc);
}
}  // namespace jitx
