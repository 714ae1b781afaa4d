// Control-flow primitives: cond, while and scan, whose params carry closed sub-jaxprs; lowered to HLO
// conditional and while instructions with sub-computations (tuple-shaped results, read back with get-tuple-element).
#include <algorithm>

#include "primitives/control_flow_rules.h"
#include "core/primitive.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using Outs = std::vector<ShapedArray>;
using Insts = std::vector<hlo::Instruction*>;

bool same_type(const ShapedArray& a, const ShapedArray& b) { return a.shape == b.shape && a.dtype == b.dtype; }

/// in[k] against want[k] (shape and dtype; weak types may differ): an internal invariant, the API checked it.
void check_avals(std::string_view op, std::string_view what, std::span<const ShapedArray> in,
                 const std::vector<ShapedArray>& want) {
  if (in.size() != want.size())
    throw_error<TypeError>(op, "{} takes {} values but was given {}", what, want.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k)
    if (!same_type(in[k], want[k]))
      throw_error<TypeError>(op, "{} input {} is {} but the jaxpr expects {}", what, k, in[k].str(), want[k].str());
}

hlo::Shape tuple_of(const std::vector<hlo::Instruction*>& xs) {
  std::vector<hlo::Shape> s;
  for (auto* x : xs) s.push_back(x->shape);
  return hlo::Shape::tuple(s);
}

Insts unpack(hlo::Computation* comp, hlo::Instruction* t, size_t first, size_t n) {
  Insts out;
  for (size_t k = 0; k < n; ++k)
    out.push_back(comp->add(Opcode::kGetTupleElement, t->shape.tuple_shapes[first + k], {t},
                            Params{{"index", static_cast<int64_t>(first + k)}}));
  return out;
}

/// A fresh computation with one parameter per shape.
hlo::Computation* new_comp(LowerCtx& c, const std::string& name, const std::vector<hlo::Shape>& shapes, Insts& params) {
  auto* comp = c.module->add_computation(name);
  for (size_t k = 0; k < shapes.size(); ++k) params.push_back(comp->add_parameter(static_cast<int64_t>(k), shapes[k]));
  return comp;
}

hlo::Instruction* s32(hlo::Computation* comp, int64_t v) {
  auto lit = Literal::make(DType::int32, {});
  lit.set_i64(0, v);
  return comp->add_constant(std::move(lit));
}

hlo::Instruction* add_i(hlo::Computation* comp, hlo::Instruction* a, hlo::Instruction* b) {
  return comp->add(Opcode::kAdd, a->shape, {a, b});
}

// --- cond -------------------------------------------------------------------------------------------------
Outs cond_abstract_eval(std::span<const ShapedArray> in, const Params& ps) {
  const auto& branches = ps.get_jaxprs("branches");
  if (branches.empty()) throw_error<TypeError>("cond", "needs at least one branch");
  if (in.empty() || in[0].ndim() != 0 || in[0].dtype != DType::int32)
    throw_error<TypeError>("cond", "the branch index must be an int32 scalar, got {}",
                           in.empty() ? "nothing" : in[0].str());
  Outs out = branches[0]->out_avals();
  for (auto& b : branches) {
    check_avals("cond", "a branch", in.subspan(1), b->in_avals());
    Outs o = b->out_avals();
    if (o.size() != out.size()) throw_error<TypeError>("cond", "branches return different numbers of values");
    for (size_t k = 0; k < o.size(); ++k) {
      if (!same_type(o[k], out[k]))
        throw_error<TypeError>("cond", "branch outputs {} differ: {} vs {}", k, o[k].str(), out[k].str());
      // The output's weak type is the first branch's (cond's false_fn), as JAX's cond_p abstract eval.
    }
  }
  return out;
}

Insts cond_lower(LowerCtx& c, std::span<hlo::Instruction* const> a) {
  const auto& branches = c.params.get_jaxprs("branches");
  Insts ops(a.begin() + 1, a.end());
  std::vector<hlo::Shape> in_shapes;
  for (auto* o : ops) in_shapes.push_back(o->shape);
  std::vector<hlo::Shape> out_shapes;
  for (auto& av : c.out_avals) out_shapes.push_back(hlo_shape(av));
  std::vector<hlo::Computation*> called;
  for (size_t b = 0; b < branches.size(); ++b) {
    Insts params;
    auto* comp = new_comp(c, fmt::format("branch_{}", b), in_shapes, params);
    Insts outs = c.lower_into(comp, *branches[b], params);
    comp->add(Opcode::kTuple, tuple_of(outs), outs);  // every branch returns a tuple, like the conditional
    called.push_back(comp);
  }
  Insts operands{a[0]};
  operands.insert(operands.end(), ops.begin(), ops.end());
  auto* cond = c.comp->add(Opcode::kConditional, hlo::Shape::tuple(out_shapes), operands);
  cond->called = called;
  return unpack(c.comp, cond, 0, out_shapes.size());
}

// --- while ------------------------------------------------------------------------------------------------
Outs while_abstract_eval(std::span<const ShapedArray> in, const Params& ps) {
  const auto& cj = *ps.get_jaxpr("cond_jaxpr");
  const auto& bj = *ps.get_jaxpr("body_jaxpr");
  size_t cn = ps.get_int("cond_nconsts"), bn = ps.get_int("body_nconsts");
  if (in.size() < cn + bn) throw_error<TypeError>("while", "has {} inputs, fewer than its consts", in.size());
  auto carry = in.subspan(cn + bn);
  std::vector<ShapedArray> cin(in.begin(), in.begin() + cn), bin(in.begin() + cn, in.begin() + cn + bn);
  cin.insert(cin.end(), carry.begin(), carry.end());
  bin.insert(bin.end(), carry.begin(), carry.end());
  check_avals("while", "cond_jaxpr", cin, cj.in_avals());
  check_avals("while", "body_jaxpr", bin, bj.in_avals());
  auto co = cj.out_avals();
  if (co.size() != 1 || co[0].ndim() != 0 || co[0].dtype != DType::bool_)
    throw_error<TypeError>("while", "cond_jaxpr must return one bool scalar");
  check_avals("while", "body_jaxpr output", bj.out_avals(), Outs(carry.begin(), carry.end()));
  return Outs(carry.begin(), carry.end());
}

Insts while_lower(LowerCtx& c, std::span<hlo::Instruction* const> a) {
  size_t cn = c.params.get_int("cond_nconsts"), bn = c.params.get_int("body_nconsts");
  Insts ops(a.begin(), a.end());
  std::vector<hlo::Shape> shapes;
  for (auto* o : ops) shapes.push_back(o->shape);
  // JAX's layout: the loop carries (cond consts, body consts, carry); consts pass through unchanged.
  Insts cp;
  auto* cond = new_comp(c, "while_cond", shapes, cp);
  Insts cargs(cp.begin(), cp.begin() + cn);
  cargs.insert(cargs.end(), cp.begin() + cn + bn, cp.end());
  cond->root = c.lower_into(cond, *c.params.get_jaxpr("cond_jaxpr"), cargs).at(0);
  Insts bp;
  auto* body = new_comp(c, "while_body", shapes, bp);
  Insts bargs(bp.begin() + cn, bp.begin() + cn + bn);
  bargs.insert(bargs.end(), bp.begin() + cn + bn, bp.end());
  Insts bouts = c.lower_into(body, *c.params.get_jaxpr("body_jaxpr"), bargs);
  Insts next(bp.begin(), bp.begin() + cn + bn);
  next.insert(next.end(), bouts.begin(), bouts.end());
  body->add(Opcode::kTuple, tuple_of(next), next);
  auto* w = c.comp->add(Opcode::kWhile, hlo::Shape::tuple(shapes), ops);
  w->called = {cond, body};
  return unpack(c.comp, w, cn + bn, ops.size() - cn - bn);
}

// --- scan -------------------------------------------------------------------------------------------------
Outs scan_abstract_eval(std::span<const ShapedArray> in, const Params& ps) {
  const auto& j = *ps.get_jaxpr("jaxpr");
  int64_t length = ps.get_int("length");
  size_t nconsts = ps.get_int("num_consts"), ncarry = ps.get_int("num_carry");
  if (in.size() < nconsts + ncarry)
    throw_error<TypeError>("scan", "has {} inputs, fewer than consts + carry", in.size());
  std::vector<ShapedArray> body_in(in.begin(), in.begin() + nconsts + ncarry);
  for (size_t k = nconsts + ncarry; k < in.size(); ++k) {
    if (in[k].ndim() == 0 || in[k].shape[0] != length)
      throw_error<TypeError>("scan", "xs input {} is {}, expected a leading axis of length {}", k, in[k].str(), length);
    ShapedArray x = in[k];
    x.shape.erase(x.shape.begin());
    body_in.push_back(x);
  }
  check_avals("scan", "jaxpr", body_in, j.in_avals());
  Outs jo = j.out_avals();
  if (jo.size() < ncarry) throw_error<TypeError>("scan", "jaxpr returns fewer values than the carry");
  Outs out(in.begin() + nconsts, in.begin() + nconsts + ncarry);
  check_avals("scan", "jaxpr carry output", std::span<const ShapedArray>(jo.data(), ncarry), out);
  for (size_t k = ncarry; k < jo.size(); ++k) {
    ShapedArray y = jo[k];
    y.shape.insert(y.shape.begin(), length);
    out.push_back(y);
  }
  return out;
}

/// The values one scan step reads and writes, inside some computation.
struct ScanState {
  Insts consts, xs;
  hlo::Instruction* i;
  Insts carry, ys;
};

/// Emits one step of the scan into comp at state s (slices xs at i, runs the body, writes ys at i, i += 1).
void scan_step(LowerCtx& c, hlo::Computation* comp, ScanState& s, int64_t length, bool reverse) {
  const auto& j = *c.params.get_jaxpr("jaxpr");
  hlo::Instruction* zero = s32(comp, 0);
  hlo::Instruction* idx = s.i;
  if (reverse) idx = comp->add(Opcode::kSubtract, s.i->shape, {s32(comp, length - 1), s.i});
  Insts args = s.consts;
  args.insert(args.end(), s.carry.begin(), s.carry.end());
  for (auto* x : s.xs) {
    std::vector<int64_t> sizes = x->shape.dims;
    sizes[0] = 1;
    Insts starts{x, idx};
    for (size_t d = 1; d < sizes.size(); ++d) starts.push_back(zero);
    auto* sl = comp->add(Opcode::kDynamicSlice, hlo::Shape(x->shape.dtype, sizes), starts,
                         Params{{"slice_sizes", sizes}});
    args.push_back(comp->add(Opcode::kReshape, hlo::Shape(x->shape.dtype, {sizes.begin() + 1, sizes.end()}), {sl}));
  }
  Insts outs = c.lower_into(comp, j, args);
  size_t nc = s.carry.size();
  s.carry.assign(outs.begin(), outs.begin() + nc);
  for (size_t k = 0; k < s.ys.size(); ++k) {
    hlo::Instruction* y = outs[nc + k];
    std::vector<int64_t> dims = y->shape.dims;
    dims.insert(dims.begin(), 1);
    auto* upd = comp->add(Opcode::kReshape, hlo::Shape(y->shape.dtype, dims), {y});
    Insts ops{s.ys[k], upd, idx};
    for (size_t d = 1; d < dims.size(); ++d) ops.push_back(zero);
    s.ys[k] = comp->add(Opcode::kDynamicUpdateSlice, s.ys[k]->shape, ops);
  }
  s.i = add_i(comp, s.i, s32(comp, 1));
}

Insts flatten_state(const ScanState& s) {
  Insts v = s.consts;
  v.insert(v.end(), s.xs.begin(), s.xs.end());
  v.push_back(s.i);
  v.insert(v.end(), s.carry.begin(), s.carry.end());
  v.insert(v.end(), s.ys.begin(), s.ys.end());
  return v;
}

ScanState unflatten_state(const Insts& v, const ScanState& like) {
  ScanState s;
  size_t p = 0;
  auto take = [&](size_t n) { Insts r(v.begin() + p, v.begin() + p + n); p += n; return r; };
  s.consts = take(like.consts.size());
  s.xs = take(like.xs.size());
  s.i = v[p++];
  s.carry = take(like.carry.size());
  s.ys = take(like.ys.size());
  return s;
}

/// scan as JAX lowers it: a while over (consts, xs, i, carry, ys) whose body slices xs at i and updates ys at i;
/// with unroll u each iteration runs u steps and the length % u remaining steps follow the loop.
Insts scan_lower(LowerCtx& c, std::span<hlo::Instruction* const> a) {
  int64_t length = c.params.get_int("length");
  bool reverse = c.params.get_bool("reverse");
  size_t nconsts = c.params.get_int("num_consts"), ncarry = c.params.get_int("num_carry");
  int64_t unroll = std::max<int64_t>(1, std::min<int64_t>(c.params.get_int("unroll", 1), std::max<int64_t>(length, 1)));
  int64_t rem = length % unroll;
  ScanState s;
  s.consts.assign(a.begin(), a.begin() + nconsts);
  s.carry.assign(a.begin() + nconsts, a.begin() + nconsts + ncarry);
  s.xs.assign(a.begin() + nconsts + ncarry, a.end());
  s.i = s32(c.comp, 0);
  for (size_t k = ncarry; k < c.out_avals.size(); ++k) {
    hlo::Shape ys = hlo_shape(c.out_avals[k]);
    auto* zero = c.comp->add_scalar_constant(ys.dtype, 0);
    s.ys.push_back(
        c.comp->add(Opcode::kBroadcastInDim, ys, {zero}, Params{{"broadcast_dimensions", std::vector<int64_t>{}}}));
  }
  Insts init = flatten_state(s);
  std::vector<hlo::Shape> shapes;
  for (auto* x : init) shapes.push_back(x->shape);

  Insts cp;
  auto* cond = new_comp(c, "scan_cond", shapes, cp);
  ScanState cs = unflatten_state(cp, s);
  cond->root = cond->add(Opcode::kCompare, hlo::Shape(DType::bool_, {}), {cs.i, s32(cond, length - rem)},
                         Params{{"direction", std::string("LT")}, {"compare_type", std::string("SIGNED")}});
  Insts bp;
  auto* body = new_comp(c, "scan_body", shapes, bp);
  ScanState bs = unflatten_state(bp, s);
  for (int64_t u = 0; u < unroll; ++u) scan_step(c, body, bs, length, reverse);
  Insts next = flatten_state(bs);
  body->add(Opcode::kTuple, tuple_of(next), next);

  auto* w = c.comp->add(Opcode::kWhile, hlo::Shape::tuple(shapes), init);
  w->called = {cond, body};
  ScanState out = unflatten_state(unpack(c.comp, w, 0, init.size()), s);
  for (int64_t r = 0; r < rem; ++r) scan_step(c, c.comp, out, length, reverse);
  Insts result = out.carry;
  result.insert(result.end(), out.ys.begin(), out.ys.end());
  return result;
}

// --- batching rules ----------------------------------------------------------------------------------------
using Arrays = std::vector<Array>;
using Dims = std::span<const int64_t>;
using Ins = std::span<const Array>;
using Flags = std::vector<bool>;

Flags batched_flags(Dims dims, size_t first, size_t count) {
  Flags f;
  for (size_t k = first; k < first + count; ++k) f.push_back(dims[k] != not_mapped);
  return f;
}
Flags concat(Flags a, const Flags& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
/// The values batched where `batched` says so, with the batch axis in front (broadcast if they were not).
Arrays front(Ins args, Dims dims, size_t first, const Flags& batched, int64_t n) {
  Arrays out;
  for (size_t k = 0; k < batched.size(); ++k)
    out.push_back(batched[k] ? batch_at(args[first + k], dims[first + k], n) : args[first + k]);
  return out;
}
BatchResult outputs(Arrays outs, const Flags& batched, int64_t at) {
  std::vector<int64_t> d;
  for (bool b : batched) d.push_back(b ? at : not_mapped);
  return {std::move(outs), std::move(d)};
}
std::shared_ptr<const ClosedJaxpr> shared(ClosedJaxpr j) { return std::make_shared<const ClosedJaxpr>(std::move(j)); }
const Primitive& self(const char* name) { return *find_primitive(name); }

/// Grows the batched carries until the body keeps them (a carry the body makes batched must start batched).
Flags carry_fixed_point(const ClosedJaxpr& body, int64_t n, const Flags& consts_b, Flags carry_b, const Flags& xs_b) {
  while (true) {
    Flags out_b = batch_jaxpr(body, n, concat(concat(consts_b, carry_b), xs_b), {}).second;
    bool changed = false;
    for (size_t k = 0; k < carry_b.size(); ++k)
      if (out_b[k] && !carry_b[k]) carry_b[k] = changed = true;
    if (!changed) return carry_b;
  }
}

/// cond. A batched branch index runs every branch on the whole batch and selects each example's outputs (as JAX
/// does: the branches are pure, so this is exact). An unbatched index picks one batched branch for all examples;
/// an output is batched if it is in any branch.
BatchResult cond_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  const auto& branches = ps.get_jaxprs("branches");
  Arrays ops(args.begin() + 1, args.end());
  std::vector<int64_t> op_dims(dims.begin() + 1, dims.end());
  if (dims[0] != not_mapped) {
    Array index = move_axis(args[0], dims[0], 0);
    // Each branch sees an example's float operands through stop_gradient unless it is that example's branch (JAX's
    // rule, "for safety of reverse-mode autodiff"): the select below sends a zero cotangent to an untaken branch,
    // and zero times that branch's derivative is NaN where the derivative is infinite or NaN (sqrt of a negative).
    Arrays front_ops;
    for (size_t i = 0; i < ops.size(); ++i) front_ops.push_back(batch_at(ops[i], op_dims[i], n));
    std::vector<int64_t> front_dims(ops.size(), 0);
    std::vector<BatchResult> rs;
    Array other;  // an earlier branch is taken; the last branch takes every other index, as the select below
    for (size_t b = 0; b < branches.size(); ++b) {
      Array taken = b + 1 == branches.size()
                        ? (other.valid() ? lax::bitwise_not(other) : lax::ne(index, index))
                        : lax::eq(index, Array::scalar_int(static_cast<int64_t>(b), index.dtype()));
      if (b + 1 == branches.size() && !other.valid()) taken = lax::bitwise_not(taken);  // one branch: always taken
      if (b + 1 < branches.size()) other = other.valid() ? lax::bitwise_or(other, taken) : taken;
      Arrays guarded;
      for (const Array& x : front_ops)
        guarded.push_back(is_floating(x.dtype())
                              ? lax::select(lax::broadcast_in_dim(taken, x.shape(), {0}), x, stop_gradient(x))
                              : x);
      const auto& br = branches[b];
      LeafFn fn = [&](const Arrays& xs) { return eval_jaxpr(br->jaxpr, br->consts, xs); };
      rs.push_back(batch_call(n, fn, guarded, front_dims));
    }
    Arrays outs;
    size_t last = rs.size() - 1;  // an index out of range takes the last branch, as HLO's conditional does
    for (size_t k = 0; k < rs[last].first.size(); ++k) {
      Array acc = batch_at(rs[last].first[k], rs[last].second[k], n);
      for (size_t b = 0; b < last; ++b) {
        Array v = batch_at(rs[b].first[k], rs[b].second[k], n);
        Array pick = lax::eq(index, Array::scalar_int(static_cast<int64_t>(b), index.dtype()));
        acc = lax::select(lax::broadcast_in_dim(pick, v.shape(), {0}), v, acc);
      }
      outs.push_back(acc);
    }
    return outputs(outs, Flags(outs.size(), true), 0);
  }
  Flags in_b = batched_flags(dims, 1, ops.size());
  Flags out_b(branches[0]->jaxpr.outvars.size(), false);
  for (auto& b : branches) {
    Flags ob = batch_jaxpr(*b, n, in_b, {}).second;
    for (size_t k = 0; k < out_b.size(); ++k) out_b[k] = out_b[k] || ob[k];
  }
  JaxprList batched;
  for (auto& b : branches) batched.push_back(shared(batch_jaxpr(*b, n, in_b, out_b).first));
  Arrays inputs{args[0]};
  Arrays rest = front(args, dims, 1, in_b, n);
  inputs.insert(inputs.end(), rest.begin(), rest.end());
  Params q = ps;
  q.set("branches", batched);
  return outputs(detail::bind(self("cond"), inputs, q), out_b, 0);
}

/// while. With an unbatched predicate the loop runs as it is over batched carries. With a batched one (JAX's
/// rule) it runs while any example's predicate holds, and each step keeps the carry of the examples that are done
/// (a select); every carry is then batched.
BatchResult while_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  const auto& cj = *ps.get_jaxpr("cond_jaxpr");
  const auto& bj = *ps.get_jaxpr("body_jaxpr");
  size_t cn = ps.get_int("cond_nconsts"), bn = ps.get_int("body_nconsts"), nc = args.size() - cn - bn;
  Flags cc_b = batched_flags(dims, 0, cn), bc_b = batched_flags(dims, cn, bn);
  Flags carry_b = carry_fixed_point(bj, n, bc_b, batched_flags(dims, cn + bn, nc), {});
  bool pred_b = batch_jaxpr(cj, n, concat(cc_b, carry_b), {false}).second[0];
  if (pred_b) carry_b = Flags(nc, true);
  ClosedJaxpr cond_b = batch_jaxpr(cj, n, concat(cc_b, carry_b), {false}).first;
  ClosedJaxpr body_b = batch_jaxpr(bj, n, concat(bc_b, carry_b), carry_b).first;
  Arrays cconsts = front(args, dims, 0, cc_b, n), bconsts = front(args, dims, cn, bc_b, n);
  Arrays carry = front(args, dims, cn + bn, carry_b, n);
  Params q = ps;
  Arrays inputs = cconsts;
  if (!pred_b) {
    q.set("cond_jaxpr", shared(std::move(cond_b)));
    q.set("body_jaxpr", shared(std::move(body_b)));
    inputs.insert(inputs.end(), bconsts.begin(), bconsts.end());
  } else {
    std::vector<ShapedArray> c_avals = cond_b.in_avals(), b_avals = body_b.in_avals();
    q.set("cond_jaxpr", shared(trace_to_jaxpr("vmap while cond", c_avals, [&](const Arrays& a) {
            Array p = eval_jaxpr(cond_b.jaxpr, cond_b.consts, a)[0];
            return Arrays{lax::reduce_or(p, {0})};
          })));
    // The body takes the cond's consts too (to know which examples are still running).
    std::vector<ShapedArray> avals(c_avals.begin(), c_avals.begin() + cn);
    avals.insert(avals.end(), b_avals.begin(), b_avals.end());
    q.set("body_jaxpr", shared(trace_to_jaxpr("vmap while body", avals, [&](const Arrays& a) {
            Arrays cargs(a.begin(), a.begin() + cn), bargs(a.begin() + cn, a.end());
            Arrays c(a.begin() + cn + bn, a.end());
            cargs.insert(cargs.end(), c.begin(), c.end());
            Array p = eval_jaxpr(cond_b.jaxpr, cond_b.consts, cargs)[0];
            Arrays next = eval_jaxpr(body_b.jaxpr, body_b.consts, bargs);
            for (size_t k = 0; k < next.size(); ++k)
              next[k] = lax::select(lax::broadcast_in_dim(p, next[k].shape(), {0}), next[k], c[k]);
            return next;
          })));
    q.set("body_nconsts", static_cast<int64_t>(cn + bn));
    inputs.insert(inputs.end(), cconsts.begin(), cconsts.end());
    inputs.insert(inputs.end(), bconsts.begin(), bconsts.end());
  }
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  return outputs(detail::bind(self("while"), inputs, q), carry_b, 0);
}

/// scan: batched xs get the batch axis second (after the scanned axis), so each step's slice has it in front;
/// stacked ys have it second too. Carries are batched at their fixed point.
BatchResult scan_batch(Ins args, Dims dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  const auto& j = *ps.get_jaxpr("jaxpr");
  size_t nconsts = ps.get_int("num_consts"), ncarry = ps.get_int("num_carry"), nxs = args.size() - nconsts - ncarry;
  Flags consts_b = batched_flags(dims, 0, nconsts), xs_b = batched_flags(dims, nconsts + ncarry, nxs);
  Flags carry_b = carry_fixed_point(j, n, consts_b, batched_flags(dims, nconsts, ncarry), xs_b);
  Flags inst = carry_b;
  inst.resize(j.jaxpr.outvars.size(), false);
  auto [body, out_b] = batch_jaxpr(j, n, concat(concat(consts_b, carry_b), xs_b), inst);
  Arrays inputs = front(args, dims, 0, consts_b, n), carry = front(args, dims, nconsts, carry_b, n);
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  for (size_t k = 0; k < nxs; ++k) {
    size_t i = nconsts + ncarry + k;
    inputs.push_back(xs_b[k] ? batch_at(args[i], dims[i], n, 1) : args[i]);
  }
  Params q = ps;
  q.set("jaxpr", shared(std::move(body)));
  Arrays outs = detail::bind(self("scan"), inputs, q);
  std::vector<int64_t> out_dims;
  for (size_t k = 0; k < outs.size(); ++k) out_dims.push_back(!out_b[k] ? not_mapped : k < ncarry ? 0 : 1);
  return {outs, out_dims};
}

const bool kControlFlowRegistered = [] {
  register_primitive(
      Primitive{"cond", cond_abstract_eval, cond_lower, cond_jvp_rule(), cond_transpose_rule(), cond_batch});
  register_primitive(Primitive{"while", while_abstract_eval, while_lower, while_jvp_rule(), while_transpose_rule(),
                               while_batch});
  register_primitive(
      Primitive{"scan", scan_abstract_eval, scan_lower, scan_jvp_rule(), scan_transpose_rule(), scan_batch});
  return true;
}();

}  // namespace
}  // namespace jitx::detail
