// The non-template half of lax control flow: tracing bodies into sub-jaxprs, closure conversion, type checks, bind.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/errors.h"
#include "core/trace.h"
#include "jitx/lax.h"
#include "core/primitive.h"
#include "ops/convert.h"

namespace jitx::detail {
namespace {

/// A user function traced over in_avals: its jaxpr with the captured values (consts) turned into leading invars.
struct Sub {
  std::shared_ptr<ClosedJaxpr> jaxpr;
  std::vector<Array> consts;  // concrete arrays (hoisted into the enclosing trace) or tracers of an enclosing trace
  FlatResult result;
  std::vector<ShapedArray> out_avals() const { return jaxpr->out_avals(); }
};

Sub trace_sub(const std::string& name, const std::vector<ShapedArray>& in_avals, const FlatFn& fn) {
  Sub s;
  ClosedJaxpr cj = trace_to_jaxpr(name, in_avals, [&](const std::vector<Array>& args) {
    CallSiteReset reset;  // API calls inside the body report their own call sites
    s.result = fn(args);
    return s.result.leaves;
  });
  // Closure conversion: each constvar (a captured outer tracer or a constant) becomes a leading invar, and its value
  // an explicit operand of the equation; constants thereby become consts of the enclosing jaxpr.
  s.consts = cj.consts;
  cj.jaxpr.invars.insert(cj.jaxpr.invars.begin(), cj.jaxpr.constvars.begin(), cj.jaxpr.constvars.end());
  cj.jaxpr.constvars.clear();
  cj.consts.clear();
  s.jaxpr = std::make_shared<ClosedJaxpr>(std::move(cj));
  return s;
}

std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
  std::vector<ShapedArray> v;
  for (auto& x : xs) v.push_back(x.aval());
  return v;
}

bool same_type(const ShapedArray& a, const ShapedArray& b) { return a.shape == b.shape && a.dtype == b.dtype; }

/// Checks that `got` (tree and leaf types) matches `want`; the message names op, the leaf's path and both types.
void check_tree(std::string_view op, std::string_view what, const TreeInfo& want_tree,
                const std::vector<ShapedArray>& want, std::string_view want_name, const TreeInfo& got_tree,
                const std::vector<ShapedArray>& got, std::string_view got_name) {
  if (want.size() != got.size() || want_tree.paths != got_tree.paths)
    throw_error<TypeError>(op,
                           "{}: the tree structure differs: {} has {} leaves ({}) but {} has {} leaves ({}); they must "
                           "have the same pytree structure",
                           what, want_name, want.size(), fmt::join(want_tree.paths, ", "), got_name, got.size(),
                           fmt::join(got_tree.paths, ", "));
  if (want_tree.structure != got_tree.structure)  // the same leaves in other containers (a vector and an array)
    throw_error<TypeError>(op,
                           "{}: the tree structure differs: {} is {} but {} is {} (the same leaves, {}, in other "
                           "containers); they must have the same pytree structure",
                           what, want_name, want_tree.structure, got_name, got_tree.structure,
                           fmt::join(want_tree.paths, ", "));
  for (size_t k = 0; k < want.size(); ++k)
    if (!same_type(want[k], got[k]))
      throw_error<TypeError>(op, "{}: {} is {} in {} but {} in {}; the types (shape and dtype) must be identical", what,
                             want_tree.paths[k], want[k].str(), want_name, got[k].str(), got_name);
}

/// Leaves whose weak type differs between the carry and the body's output become strongly typed (as JAX retraces).
/// A weakly typed init leaf of another dtype than the body's output of the same shape (0.0, a weak f64, where the
/// body returns f32) takes the promoted dtype, as JAX's _promote_weak_typed_inputs does before it retraces:
/// fori_loop(0, n, body, 0.0) over f32 values carries f32.
bool strengthen(std::vector<ShapedArray>& carry, const std::vector<ShapedArray>& out) {
  bool changed = false;
  for (size_t k = 0; k < carry.size() && k < out.size(); ++k) {
    if (!carry[k].weak_type) continue;
    if (carry[k].dtype != out[k].dtype && carry[k].shape == out[k].shape) {
      carry[k].dtype = promote_types(carry[k].dtype, true, out[k].dtype, out[k].weak_type);
      carry[k].weak_type = false;
      changed = true;
    } else if (!out[k].weak_type) {
      carry[k].weak_type = false;
      changed = true;
    }
  }
  return changed;
}

/// The init values in the carry's (possibly promoted or strengthened) types: a weak init whose body output is
/// strong is strong, so the loop's result is too (JAX: while_loop(c, b, 0) with an int64 body gives a strong int64).
std::vector<Array> init_as(const std::vector<Array>& init, const std::vector<ShapedArray>& carry) {
  std::vector<Array> out = init;
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k].dtype() != carry[k].dtype || (out[k].weak_type() && !carry[k].weak_type))
      out[k] = lax::convert_element_type(out[k], carry[k].dtype);
  return out;
}

std::vector<ShapedArray> slice_avals(const std::vector<ShapedArray>& v, size_t begin, size_t n) {
  return std::vector<ShapedArray>(v.begin() + begin, v.begin() + begin + n);
}

}  // namespace

bool is_concrete(const Array& a) { return a.valid() && !a.is_tracer(); }

namespace api_names {
// Source locations inside functions named as the public API: the names an ApiScope reports ("..., in fori_loop"),
// rather than the implementation's (while_impl).
std::source_location fori_loop() { return std::source_location::current(); }
std::source_location while_loop() { return std::source_location::current(); }
std::source_location scan() { return std::source_location::current(); }
std::source_location cond() { return std::source_location::current(); }
std::source_location switch_() { return std::source_location::current(); }
}  // namespace api_names

std::shared_ptr<void> fori_loop_scope(const Loc& loc) {
  return std::make_shared<ApiScope>(loc, api_names::fori_loop());
}

ForiBounds fori_bounds(const Array& lower, const Array& upper, const Loc& loc) {
  ApiScope s(loc);
  for (const Array* b : {&lower, &upper})
    if (!b->valid() || b->ndim() != 0)
      throw_error<TypeError>("fori_loop", "the loop bounds must be scalars, got {}",
                             b->valid() ? b->aval().str() : "an empty Array");
  // JAX's rule: equal dtypes, or two signed integers of which exactly one is weak (it takes the other's dtype).
  DType lt = lower.dtype(), ut = upper.dtype();
  std::optional<DType> dt;
  if (lt == ut) dt = lt;
  else if (is_signed_integer(lt) && is_signed_integer(ut) && lower.weak_type() != upper.weak_type())
    dt = lower.weak_type() ? ut : lt;
  if (!dt)
    throw_error<TypeError>("fori_loop", "lower and upper arguments to fori_loop must have equal types, got {} and {}",
                           dtype_name(lt), dtype_name(ut));
  ForiBounds out;
  if (is_concrete(lower) && is_concrete(upper)) {
    // Static bounds run as a scan whose index is a weak integer (JAX carries the Python int int(lower)), so it does
    // not promote a narrow carry (x + i stays int8). Concrete float bounds count from int(lower), as JAX's.
    auto as_int = [](const Array& b) {
      if (is_floating(b.dtype())) {
        double v = b.item<double>();
        if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
          throw_error<TypeError>("fori_loop", "the loop bound {} is not a finite integer", v);
        return static_cast<int64_t>(v);  // truncates toward zero, as Python's int()
      }
      return b.item<int64_t>();
    };
    if (!is_integer(*dt) && !is_floating(*dt) && *dt != DType::bool_)
      throw_error<TypeError>("fori_loop", "the loop bounds must be numbers, got {}", dtype_name(*dt));
    out.is_static = true;
    out.lo = as_int(lower);
    out.hi = as_int(upper);
    DType idx = is_integer(*dt) ? *dt : DType::int32;
    if (idx == DType::int32 && (out.lo < INT32_MIN || out.hi > INT32_MAX)) idx = DType::int64;
    out.lower = convert_weak(Array::scalar_int(out.lo, idx), idx, true);
    return out;
  }
  if (!is_integer(*dt))
    throw_error<TypeError>("fori_loop", "traced loop bounds must be integers, got {}", dtype_name(*dt));
  out.lower = lower.dtype() == *dt ? lower : lax::convert_element_type(lower, *dt);
  out.upper = upper.dtype() == *dt ? upper : lax::convert_element_type(upper, *dt);
  return out;
}

Array cond_index(const Array& pred, const Loc& loc) {
  ApiScope s(loc, api_names::cond());
  if (!pred.valid()) throw_error<TypeError>("cond", "the predicate is an empty Array");
  if (pred.ndim() != 0)
    throw_error<TypeError>("cond", "the predicate must be a scalar, got {} (use jnp::any/all to reduce it, or "
                           "lax::select for elementwise choice)", pred.aval().str());
  // A number is true where it is not 0 (NaN too), as JAX's cond takes it.
  Array p = pred.dtype() == DType::bool_ ? pred : lax::ne(pred, lax::convert_element_type(Array(0), pred.dtype()));
  return lax::convert_element_type(p, DType::int32, loc);
}

Array switch_index(const Array& index, int64_t num_branches, const Loc& loc) {
  ApiScope s(loc, api_names::switch_());
  if (!index.valid()) throw_error<TypeError>("switch", "the index is an empty Array");
  if (index.ndim() != 0 || !is_integer(index.dtype()))
    throw_error<TypeError>("switch", "the index must be an integer scalar, got {}", index.aval().str());
  Array i = lax::convert_element_type(index, DType::int32, loc);
  // Out-of-range indices are clamped, as JAX does.
  return lax::clamp(Array::scalar_int(0, DType::int32), i, Array::scalar_int(num_branches - 1, DType::int32), loc);
}

std::vector<Array> cond_impl(std::string_view op, const Array& index, const std::vector<FlatFn>& branches,
                             const std::vector<std::string>& branch_names, const std::vector<Array>& operands,
                             const Loc& loc) {
  ApiScope scope(loc, op == "switch" ? api_names::switch_() : api_names::cond());
  std::vector<ShapedArray> in_avals = avals_of(operands);
  std::vector<Sub> subs;
  for (size_t b = 0; b < branches.size(); ++b)
    subs.push_back(trace_sub(fmt::format("{} {}", op, branch_names[b]), in_avals, branches[b]));
  // Every branch must return what the first one does (JAX's `_check_tree_and_avals`).
  size_t ref = branches.size() - 1;  // cond: compare against true_fn; switch: the last branch is as good as any
  if (op == "switch") ref = 0;
  for (size_t b = 0; b < subs.size(); ++b) {
    if (b == ref) continue;
    check_tree(op, "branches must return the same types", subs[ref].result.parts[0], subs[ref].out_avals(),
               branch_names[ref] + "'s output", subs[b].result.parts[0], subs[b].out_avals(),
               branch_names[b] + "'s output");
  }
  // Common consts: branch b takes every branch's consts (its own bound, the others' unused), then the operands.
  std::vector<Array> consts;
  for (auto& s : subs) consts.insert(consts.end(), s.consts.begin(), s.consts.end());
  JaxprList jaxprs;
  size_t offset = 0;
  for (auto& s : subs) {
    std::vector<Var> lead;
    for (size_t k = 0; k < consts.size(); ++k) {
      if (k >= offset && k < offset + s.consts.size()) lead.push_back(s.jaxpr->jaxpr.invars[k - offset]);
      else lead.push_back(new_var(consts[k].aval()));
    }
    auto& iv = s.jaxpr->jaxpr.invars;
    iv.erase(iv.begin(), iv.begin() + s.consts.size());
    iv.insert(iv.begin(), lead.begin(), lead.end());
    offset += s.consts.size();
    jaxprs.push_back(s.jaxpr);
  }
  std::vector<Array> inputs{index};
  inputs.insert(inputs.end(), consts.begin(), consts.end());
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  return detail::bind(primitive("cond"), inputs, Params{{"branches", jaxprs}});
}

std::vector<Array> while_impl(const FlatFn& cond_fn, const FlatFn& body_fn, const std::vector<Array>& init,
                              const TreeInfo& init_tree, const Loc& loc) {
  ApiScope scope(loc, api_names::while_loop());
  std::vector<ShapedArray> carry = avals_of(init);
  Sub c, b;
  for (int attempt = 0; attempt < 3; ++attempt) {
    c = trace_sub("while_loop cond_fn", carry, cond_fn);
    b = trace_sub("while_loop body_fn", carry, body_fn);
    auto co = c.out_avals();
    if (co.size() != 1 || co[0].ndim() != 0 || co[0].dtype != DType::bool_)
      throw_error<TypeError>("while_loop", "cond_fn must return a scalar bool, got ({})", avals_str(co));
    if (!c.result.parts.empty() && c.result.parts[0].structure != "*")  // JAX refuses [pred] and (pred,) too
      throw_error<TypeError>("while_loop", "cond_fn must return a scalar bool Array, but got a container of one "
                             "(pytree structure {})", c.result.parts[0].structure);
    if (attempt == 0 && b.out_avals().size() == carry.size() && strengthen(carry, b.out_avals())) continue;
    check_tree("while_loop", "body_fn output and input must have identical types", init_tree, carry, "the init carry",
               b.result.parts[0], b.out_avals(), "body_fn's output");
    if (!strengthen(carry, b.out_avals())) break;
  }
  std::vector<Array> inputs = c.consts;
  inputs.insert(inputs.end(), b.consts.begin(), b.consts.end());
  std::vector<Array> init_c = init_as(init, carry);
  inputs.insert(inputs.end(), init_c.begin(), init_c.end());
  Params ps{{"cond_jaxpr", std::shared_ptr<const ClosedJaxpr>(c.jaxpr)},
            {"body_jaxpr", std::shared_ptr<const ClosedJaxpr>(b.jaxpr)},
            {"cond_nconsts", static_cast<int64_t>(c.consts.size())},
            {"body_nconsts", static_cast<int64_t>(b.consts.size())}};
  return detail::bind(primitive("while"), inputs, ps);
}

std::vector<Array> scan_impl(const FlatFn& f, const std::vector<Array>& init, const TreeInfo& init_tree,
                             const std::vector<Array>& xs, const lax::ScanOptions& options, const Loc& loc) {
  ApiScope scope(loc, api_names::scan());
  int64_t length = -1;
  for (auto& x : xs) {
    if (x.ndim() == 0)
      throw_error<TypeError>("scan", "every leaf of xs needs a leading axis to scan over, got a scalar {}",
                             x.aval().str());
    if (length >= 0 && x.shape()[0] != length)
      throw_error<ShapeError>("scan", "the leaves of xs have different leading axis sizes ({} and {})", length,
                              x.shape()[0]);
    length = x.shape()[0];
  }
  if (options.length) {
    if (*options.length < 0) throw_error<ShapeError>("scan", "length must be non-negative, got {}", *options.length);
    if (length >= 0 && length != *options.length)
      throw_error<ShapeError>("scan", "length={} but xs has a leading axis of size {}", *options.length, length);
    length = *options.length;
  }
  if (length < 0) throw_error<TypeError>("scan", "xs has no leaves: pass ScanOptions{{.length = n}}");
  // JAX takes a non-negative unroll; 0 runs one step per iteration, as 1 does.
  if (options.unroll < 0)
    throw_error<TypeError>("scan", "unroll must be a non-negative integer, got {}", options.unroll);
  std::vector<ShapedArray> carry = avals_of(init);
  std::vector<ShapedArray> x_avals;
  for (auto& x : xs) {
    ShapedArray a = x.aval();
    a.shape.erase(a.shape.begin());
    x_avals.push_back(a);
  }
  Sub s;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<ShapedArray> in = carry;
    in.insert(in.end(), x_avals.begin(), x_avals.end());
    s = trace_sub("scan f", in, f);
    auto out = s.out_avals();
    if (attempt == 0 && s.result.part_sizes[0] == carry.size() &&
        strengthen(carry, slice_avals(out, 0, carry.size())))
      continue;
    check_tree("scan", "the carry output of f must have the carry input's types", init_tree, carry, "the init carry",
               s.result.parts[0], slice_avals(out, 0, s.result.part_sizes[0]), "f's carry output");
    if (!strengthen(carry, out)) break;
  }
  std::vector<Array> inputs = s.consts;
  std::vector<Array> init_c = init_as(init, carry);
  inputs.insert(inputs.end(), init_c.begin(), init_c.end());
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  Params ps{{"jaxpr", std::shared_ptr<const ClosedJaxpr>(s.jaxpr)},
            {"length", length},
            {"reverse", options.reverse},
            {"unroll", std::max<int64_t>(options.unroll, 1)},
            {"num_consts", static_cast<int64_t>(s.consts.size())},
            {"num_carry", static_cast<int64_t>(init.size())}};
  return detail::bind(primitive("scan"), inputs, ps);
}

}  // namespace jitx::detail
