// The batch trace (vmap), vmap of flat functions, batching of closed jaxprs, and the helpers batching rules share.
#include "transforms/batching.h"

#include <algorithm>
#include <numeric>

#include "core/errors.h"
#include "transforms/ad.h"

namespace jitx::detail {

Array BatchTrace::make_tracer(Array val, int64_t bdim) {
  if (bdim == not_mapped) return val;
  JITX_ASSERT(bdim >= 0 && bdim < val.ndim() && val.shape()[bdim] == axis_size,
              "vmap: a batched value {} with batch axis {} in a batch of size {}", val.aval().str(), bdim, axis_size);
  auto t = std::make_shared<BatchTracer>();
  t->aval = val.aval();
  t->aval.shape.erase(t->aval.shape.begin() + bdim);
  t->trace = shared_from_this();
  t->val = std::move(val);
  t->bdim = bdim;
  return Array(t);
}

std::pair<Array, int64_t> BatchTrace::unpack(const Array& a) const {
  if (a.is_tracer()) {
    auto& t = static_cast<const Tracer&>(*a.impl());
    if (t.trace.get() == this) {
      auto& b = static_cast<const BatchTracer&>(t);
      return {b.val, b.bdim};
    }
  }
  return {a, not_mapped};
}

void not_batchable(std::string_view prim, std::string_view why) {
  throw_error<TypeError>("vmap", "cannot batch primitive '{}': {}", prim, why);
}

std::vector<Array> BatchTrace::process_primitive(const Primitive& p, std::span<const Array> inputs,
                                                 const Params& params) {
  std::vector<Array> vals;
  std::vector<int64_t> dims;
  bool any = false;
  for (auto& a : inputs) {
    auto [v, d] = unpack(a);
    any = any || d != not_mapped;
    vals.push_back(std::move(v));
    dims.push_back(d);
  }
  if (!any) return bind(p, vals, params);
  if (!p.batch) throw_error<TypeError>("vmap", "no batching rule for {} yet", p.name);
  auto [outs, out_dims] = p.batch(vals, dims, params);
  JITX_ASSERT(outs.size() == out_dims.size(), "batching rule of {} returned mismatched outputs", p.name);
  // The rule must give, per example, what the primitive gives: checked against its shape rule, so that a rule's
  // mistake is an internal error rather than a wrong answer.
  std::vector<ShapedArray> in_avals;
  for (auto& a : inputs) in_avals.push_back(a.aval());
  std::vector<ShapedArray> want = p.abstract_eval(in_avals, params);
  JITX_ASSERT(want.size() == outs.size(), "batching rule of {} returned {} outputs, expected {}", p.name, outs.size(),
              want.size());
  std::vector<Array> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    Array t = make_tracer(outs[i], out_dims[i]);
    JITX_ASSERT(t.shape() == want[i].shape && t.dtype() == want[i].dtype,
                "batching rule of {} gave {} (batch axis {}) for an output of type {}", p.name, outs[i].aval().str(),
                out_dims[i], want[i].str());
    result.push_back(std::move(t));
  }
  return result;
}

namespace {
thread_local const BatchTraceFactory* t_factory = nullptr;
}  // namespace
BatchTraceFactoryScope::BatchTraceFactoryScope(const BatchTraceFactory* f) : prev_(t_factory) { t_factory = f; }
BatchTraceFactoryScope::~BatchTraceFactoryScope() { t_factory = prev_; }

BatchResult batch_call(int64_t n, const LeafFn& fn, std::span<const Array> args, std::span<const int64_t> dims) {
  std::shared_ptr<BatchTrace> trace = t_factory ? (*t_factory)(n) : nullptr;
  if (!trace) trace = std::make_shared<BatchTrace>();
  BatchTraceFactoryScope plain(nullptr);  // fn's own vmaps are ordinary ones
  trace->fn_name = "vmap";
  trace->axis_size = n;
  BatchResult r;
  TraceScope scope(trace);
  std::vector<Array> ins;
  for (size_t i = 0; i < args.size(); ++i) ins.push_back(trace->make_tracer(args[i], dims[i]));
  for (auto& o : fn(ins)) {
    if (!o.valid()) throw_error<TypeError>("vmap", "the function returned an empty (default-constructed) Array");
    auto [v, d] = trace->unpack(o);
    r.first.push_back(std::move(v));
    r.second.push_back(d);
  }
  return r;
}

std::pair<ClosedJaxpr, std::vector<bool>> batch_jaxpr(const ClosedJaxpr& cj, int64_t n,
                                                      const std::vector<bool>& in_batched,
                                                      const std::vector<bool>& instantiate) {
  std::vector<ShapedArray> avals = cj.in_avals();
  JITX_ASSERT(avals.size() == in_batched.size(), "batch_jaxpr: {} flags for {} inputs", in_batched.size(),
              avals.size());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < avals.size(); ++i) {
    if (in_batched[i]) avals[i].shape.insert(avals[i].shape.begin(), n);
    dims.push_back(in_batched[i] ? 0 : not_mapped);
  }
  std::vector<bool> out_batched;
  ClosedJaxpr out = trace_to_jaxpr("vmap", avals, [&](const std::vector<Array>& args) {
    LeafFn fn = [&](const std::vector<Array>& xs) { return eval_jaxpr(cj.jaxpr, cj.consts, xs); };
    auto [outs, odims] = batch_call(n, fn, args, dims);
    for (size_t i = 0; i < outs.size(); ++i) {
      bool b = odims[i] != not_mapped || (i < instantiate.size() && instantiate[i]);
      if (b) outs[i] = batch_at(outs[i], odims[i], n, 0);
      out_batched.push_back(b);
    }
    return outs;
  });
  return {std::move(out), std::move(out_batched)};
}

// --- vmap of a flat function -------------------------------------------------------------------------------
namespace {
std::string axis_str(const Axis& a) { return a ? std::to_string(*a) : "None"; }

/// Each leaf's in axis from the user's in_axes (checking that their number fits the call).
std::vector<Axis> leaf_axes(const InAxes& in_axes, size_t num_leaves, const std::vector<int>& leaf_args,
                            size_t num_args) {
  switch (in_axes.kind) {
    case InAxes::Kind::kAll: return std::vector<Axis>(num_leaves, in_axes.all);
    case InAxes::Kind::kPerArgument: {
      if (in_axes.axes.size() != num_args)
        throw_error<TypeError>("vmap", "in_axes has {} entries (one per positional argument), but the function was "
                                       "called with {} positional arguments",
                               in_axes.axes.size(), num_args);
      std::vector<Axis> out;
      for (size_t k = 0; k < num_leaves; ++k) out.push_back(in_axes.axes[static_cast<size_t>(leaf_args[k])]);
      return out;
    }
    case InAxes::Kind::kPerLeaf:
      if (in_axes.axes.size() != num_leaves)
        throw_error<TypeError>("vmap", "InAxes::per_leaf has {} entries, but the arguments have {} leaves",
                               in_axes.axes.size(), num_leaves);
      return in_axes.axes;
  }
  return {};
}
}  // namespace

namespace api_names {
// A source location inside a function named vmap: the name an ApiScope reports.
std::source_location vmap() { return std::source_location::current(); }
}  // namespace api_names

std::vector<Array> vmap_flat(const LeafFn& fn, const std::vector<Array>& leaves, const std::vector<std::string>& paths,
                             const std::vector<int>& leaf_args, size_t num_args, const InAxes& in_axes,
                             const OutAxes& out_axes, std::optional<int64_t> axis_size, const Loc& loc) {
  ApiScope scope(loc, api_names::vmap());
  std::vector<Axis> axes = leaf_axes(in_axes, leaves.size(), leaf_args, num_args);
  std::vector<int64_t> dims;
  std::vector<std::string> mapped;  // "path of type T, axis a (size s)" for the size error
  std::optional<int64_t> n;
  bool sizes_differ = false;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const Array& x = leaves[k];
    if (!x.valid()) throw_error<TypeError>("vmap", "argument {} is an empty (default-constructed) Array", paths[k]);
    if (!axes[k]) {
      dims.push_back(not_mapped);
      continue;
    }
    int64_t a = *axes[k], r = x.ndim();
    if (a < -r || a >= r)
      throw_error<ShapeError>("vmap", "in_axes maps {} of type {} along axis {}, but it has rank {}; expected an axis "
                                      "in [{}, {}) (or std::nullopt to leave it unmapped)",
                              paths[k], x.aval().str(), a, r, -r, r);
    int64_t d = a < 0 ? a + r : a;
    dims.push_back(d);
    int64_t s = x.shape()[d];
    mapped.push_back(fmt::format("{} of type {} along axis {} has size {}", paths[k], x.aval().str(), a, s));
    if (n && *n != s) sizes_differ = true;
    if (!n) n = s;
  }
  if (sizes_differ)
    throw_error<ShapeError>("vmap", "got inconsistent sizes for the axes to be mapped; expected one size, got:\n  * {}",
                            fmt::join(mapped, "\n  * "));
  if (axis_size) {
    if (*axis_size < 0) throw_error<ShapeError>("vmap", "axis_size must be non-negative, got {}", *axis_size);
    if (n && *n != *axis_size)
      throw_error<ShapeError>("vmap", "axis_size is {}, but the mapped arguments have size {}: {}", *axis_size, *n,
                              mapped.front());
    n = axis_size;
  }
  if (!n)
    throw_error<TypeError>("vmap", "no argument is mapped (in_axes are all std::nullopt, or the arguments have no "
                                   "leaves); give axis_size to say how many copies to make");

  BatchResult r = [&] {
    CallSiteReset reset;  // API calls inside f report their own call sites
    return batch_call(*n, fn, leaves, dims);
  }();
  auto& [outs, odims] = r;
  if (out_axes.per_leaf && out_axes.axes.size() != outs.size())
    throw_error<TypeError>("vmap", "out_axes has {} entries (one per output leaf), but the function returned {} leaves",
                           out_axes.axes.size(), outs.size());
  std::vector<Array> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    Axis oa = out_axes.per_leaf ? out_axes.axes[i] : out_axes.all;
    ShapedArray per_example = outs[i].aval();
    if (odims[i] != not_mapped) per_example.shape.erase(per_example.shape.begin() + odims[i]);
    std::string path = fmt::format("output leaf {} ({})", i, per_example.str());
    if (!oa) {
      if (odims[i] != not_mapped)
        throw_error<TypeError>("vmap", "out_axes is std::nullopt for {}, but it depends on a mapped input (its value "
                                       "differs per example); expected an out axis",
                               path);
      result.push_back(outs[i]);
      continue;
    }
    int64_t rank = odims[i] == not_mapped ? outs[i].ndim() + 1 : outs[i].ndim();
    if (*oa < -rank || *oa >= rank)
      throw_error<ShapeError>("vmap", "out_axes is {} for {}, but the batched output has rank {}; expected an axis in "
                                      "[{}, {})",
                              axis_str(oa), path, rank, -rank, rank);
    int64_t to = *oa < 0 ? *oa + rank : *oa;
    // Outputs that do not depend on a mapped input are broadcast along the out axis, as JAX does.
    result.push_back(batch_at(outs[i], odims[i], *n, to));
  }
  return result;
}

// --- helpers for rules ---------------------------------------------------------------------------------------
Array move_axis(const Array& x, int64_t from, int64_t to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return lax::transpose(x, perm);
}

Array batch_at(const Array& x, int64_t bdim, int64_t n, int64_t to) {
  if (bdim != not_mapped) return move_axis(x, bdim, to);
  Shape s = x.shape();
  s.insert(s.begin() + to, n);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i)
    if (i != to) keep.push_back(i);
  return lax::broadcast_in_dim(x, s, keep);
}

int64_t batch_size(std::span<const Array> args, std::span<const int64_t> dims) {
  for (size_t i = 0; i < args.size(); ++i)
    if (dims[i] != not_mapped) return args[i].shape()[dims[i]];
  JITX_ASSERT(false, "a batching rule ran without a batched input");
  return 0;
}

std::vector<int64_t> shifted(const std::vector<int64_t>& v, int64_t by) {
  std::vector<int64_t> out;
  for (auto x : v) out.push_back(x + by);
  return out;
}

std::vector<int64_t> prepended(int64_t first, const std::vector<int64_t>& v) {
  std::vector<int64_t> out{first};
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

std::vector<Array> bind_named(std::string_view prim, std::vector<Array> inputs, const Params& params) {
  const Primitive* p = find_primitive(prim);
  JITX_ASSERT(p, "primitive {} is not registered", prim);
  return bind(*p, std::move(inputs), params);
}

BatchFn elementwise_batch(std::string prim) {
  return [prim](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) -> BatchResult {
    // Fast path: every batched operand has its batch axis at the same place and the same rank, and the unbatched
    // ones are scalars, which lax ops accept next to arrays: the primitive applies as it is. select_n takes a
    // scalar predicate but not scalar cases next to an array predicate: its unbatched cases are broadcast. clamp takes
    // scalar bounds but not a scalar operand next to array bounds: an unbatched operand is broadcast.
    bool cases_full = prim == "select_n", operand_full = prim == "clamp";
    auto must_be_full = [&](size_t i) { return (cases_full && i > 0) || (operand_full && i == 1); };
    int64_t common = not_mapped, rank = -1;
    bool fast = true;
    Shape example;  // the per-example shape of the non-scalar operands (equal, by lax's rule)
    for (size_t i = 0; i < args.size(); ++i) {
      if (dims[i] == not_mapped) {
        fast = fast && args[i].ndim() == 0 && !must_be_full(i);
        if (args[i].ndim() > 0) example = args[i].shape();
        continue;
      }
      if (common == not_mapped) {
        common = dims[i];
        rank = args[i].ndim();
      }
      fast = fast && dims[i] == common && args[i].ndim() == rank;
      if (args[i].ndim() > 1) {
        example = args[i].shape();
        example.erase(example.begin() + dims[i]);
      }
    }
    if (fast) {
      auto outs = bind_named(prim, {args.begin(), args.end()}, ps);
      return {outs, std::vector<int64_t>(outs.size(), common)};
    }
    int64_t n = batch_size(args, dims);
    Shape full = prepended(n, example);
    std::vector<Array> xs;
    for (size_t i = 0; i < args.size(); ++i) {
      int64_t r = args[i].ndim() - (dims[i] == not_mapped ? 0 : 1);
      if (dims[i] == not_mapped) {
        if (r == 0 && !must_be_full(i)) xs.push_back(args[i]);
        else {
          std::vector<int64_t> bd(static_cast<size_t>(r));
          std::iota(bd.begin(), bd.end(), 1);
          xs.push_back(lax::broadcast_in_dim(args[i], full, bd));
        }
      } else {
        Array x = move_axis(args[i], dims[i], 0);
        if (r == 0 && !example.empty()) x = lax::broadcast_in_dim(x, full, {0});
        xs.push_back(x);
      }
    }
    auto outs = bind_named(prim, xs, ps);
    return {outs, std::vector<int64_t>(outs.size(), 0)};
  };
}

BatchFn leading_batch(std::string prim, std::function<void(Params&, int64_t)> adjust) {
  return [prim, adjust](std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) -> BatchResult {
    JITX_ASSERT(args.size() == 1, "leading_batch is for primitives with one operand ({})", prim);
    Array x = move_axis(args[0], dims[0], 0);
    Params q = ps;
    adjust(q, x.shape()[0]);
    auto outs = bind_named(prim, {x}, q);
    return {outs, std::vector<int64_t>(outs.size(), 0)};
  };
}

}  // namespace jitx::detail
