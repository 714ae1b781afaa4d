// Differentiation rules of the control-flow primitives (cond, while, scan), registered with them in
// control_flow.cpp.
//
// Forward mode (jvp) differentiates the sub-jaxprs and emits one equation over primals and tangents. Under
// linearize (reverse mode) such an equation would be recorded into the linear jaxpr with its primal half,
// so cond and scan split instead, as JAX's partial evaluation rules for them do: a "known" equation computes
// the primal outputs and the residuals now, and a "tangent" equation over (residuals, tangents), linear in
// the tangents, is recorded into the linear jaxpr. Its transpose is again a cond (the taken branch
// transposed) or a scan (in the opposite direction, carrying the cotangents). The tangent equations' `linear`
// param marks which operands are tangents, so the transposes know them even where a tangent is a known
// value (zeros instantiated for a carry).
#include <algorithm>

#include "core/errors.h"
#include "primitives/control_flow_rules.h"
#include "transforms/ad.h"

namespace jitx::detail {
namespace {

std::vector<ShapedArray> avals_of(std::span<const Array> xs) {
  std::vector<ShapedArray> v;
  for (auto& x : xs) v.push_back(x.aval());
  return v;
}

bool any_linearize_tangent(std::span<const Array> tangents) {
  return std::any_of(tangents.begin(), tangents.end(), is_linearize_tangent);
}

template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t begin, size_t n) {
  return std::vector<T>(v.begin() + begin, v.begin() + begin + n);
}

std::vector<bool> all(size_t n, bool v) { return std::vector<bool>(n, v); }

template <class T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

/// The elements of v with flags[i] set.
template <class T>
std::vector<T> select(const std::vector<T>& v, const std::vector<bool>& flags) {
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); ++i)
    if (flags[i]) out.push_back(v[i]);
  return out;
}

std::shared_ptr<const ClosedJaxpr> share(ClosedJaxpr cj) { return std::make_shared<const ClosedJaxpr>(std::move(cj)); }

/// Reorders a jaxpr's invars (or outvars) by a permutation: perm[k] is the old index of the new k-th one.
template <class T>
std::vector<T> permute(const std::vector<T>& v, const std::vector<size_t>& perm) {
  std::vector<T> out;
  for (size_t k : perm) out.push_back(v[k]);
  return out;
}

/// Concatenation of index ranges [b, b + n).
struct Perm {
  std::vector<size_t> idx;
  Perm& range(size_t b, size_t n) {
    for (size_t k = 0; k < n; ++k) idx.push_back(b + k);
    return *this;
  }
};

/// Which operands of a tangent equation are linear: its `linear` param, else the backward pass's view.
std::vector<bool> linear_flags(std::span<const LinearArg> args, size_t first, const Params& ps) {
  std::vector<bool> lin;
  if (ps.has("linear")) {
    for (auto v : ps.get_ints("linear")) lin.push_back(v != 0);
  } else {
    for (size_t i = first; i < args.size(); ++i) lin.push_back(args[i].is_linear());
  }
  JITX_ASSERT(lin.size() + first == args.size(), "linear flags: {} for {} operands", lin.size(), args.size() - first);
  return lin;
}

std::vector<int64_t> to_ints(const std::vector<bool>& v) { return std::vector<int64_t>(v.begin(), v.end()); }

/// The known value of a non-linear operand of a tangent equation in the backward pass.
const Array& known_value(std::string_view op, const LinearArg& a, size_t i) {
  if (a.is_linear())
    throw_error<TypeError>(op, "cannot transpose: operand {} ({}) is not a tangent but its value is unknown in the "
                               "backward pass", i, a.aval.str());
  return a.value;
}

// --- cond -------------------------------------------------------------------------------------------------
// cond[branches](index, operands...): differentiated branch by branch. The branches must agree on which outputs
// have tangents: an output with a nonzero tangent in any branch gets zeros in the others.

JvpResult cond_jvp_forward(const JaxprList& branches, const Array& index, const std::vector<Array>& ops,
                           const std::vector<Array>& tops, const std::vector<bool>& nz) {
  size_t nout = branches[0]->jaxpr.outvars.size();
  std::vector<bool> out_nz = all(nout, false);
  for (auto& b : branches) {
    auto j = jvp_jaxpr(*b, nz, {});
    for (size_t k = 0; k < nout; ++k) out_nz[k] = out_nz[k] || j.out_nz[k];
  }
  JaxprList jb;
  for (auto& b : branches) jb.push_back(share(jvp_jaxpr(*b, nz, out_nz).jaxpr));
  std::vector<Array> inputs{index};
  append(inputs, ops);
  append(inputs, select(tops, nz));
  std::vector<Array> outs = detail::bind(primitive("cond"), inputs, Params{{"branches", jb}});
  JvpResult r{slice(outs, 0, nout), {}};
  for (size_t k = 0, t = nout; k < nout; ++k) r.tangents_out.push_back(out_nz[k] ? outs[t++] : Array());
  return r;
}

JvpResult cond_jvp_split(const JaxprList& branches, const Array& index, const std::vector<Array>& ops,
                         const std::vector<Array>& tops, const std::vector<bool>& nz) {
  size_t nout = branches[0]->jaxpr.outvars.size();
  std::vector<ShapedArray> op_avals = avals_of(ops), out_avals = branches[0]->out_avals();
  std::vector<LinearizedJaxpr> lins;
  for (size_t b = 0; b < branches.size(); ++b)
    lins.push_back(linearize_jaxpr(fmt::format("cond branch {}", b), *branches[b], nz));
  std::vector<bool> out_nz = all(nout, false);
  for (auto& l : lins)
    for (size_t k = 0; k < nout; ++k) out_nz[k] = out_nz[k] || l.out_nz[k];
  // Residuals: every branch's, side by side; a branch fills the others' slots with zeros (JAX's _join_cond_outputs).
  std::vector<ShapedArray> res_avals;
  std::vector<size_t> res_off;
  for (auto& l : lins) {
    res_off.push_back(res_avals.size());
    append(res_avals, l.res_avals);
  }
  JaxprList known;
  for (size_t b = 0; b < lins.size(); ++b) {
    known.push_back(share(trace_to_jaxpr("cond known branch", op_avals, [&](const std::vector<Array>& args) {
      std::vector<Array> o = eval_jaxpr(lins[b].known.jaxpr, lins[b].known.consts, args);
      std::vector<Array> outs = slice(o, 0, nout);
      for (size_t b2 = 0; b2 < lins.size(); ++b2) {
        for (size_t r = 0; r < lins[b2].res_avals.size(); ++r)
          outs.push_back(b2 == b ? o[nout + r] : zeros_like_aval(lins[b2].res_avals[r]));
      }
      return outs;
    })));
  }
  std::vector<Array> kin{index};
  append(kin, ops);
  std::vector<Array> kout = detail::bind(primitive("cond"), kin, Params{{"branches", known}});
  std::vector<Array> res(kout.begin() + nout, kout.end());

  std::vector<ShapedArray> tan_in = res_avals;
  append(tan_in, select(op_avals, nz));
  JaxprList tangent;
  for (size_t b = 0; b < lins.size(); ++b) {
    tangent.push_back(share(trace_to_jaxpr("cond tangent branch", tan_in, [&](const std::vector<Array>& args) {
      std::vector<Array> own = slice(args, res_off[b], lins[b].res_avals.size());
      std::vector<Array> ts(args.begin() + res_avals.size(), args.end());
      std::vector<Array> to = eval_jaxpr(lins[b].linear, own, ts);
      std::vector<Array> outs;
      for (size_t k = 0, t = 0; k < nout; ++k) {
        Array v = lins[b].out_nz[k] ? to[t++] : Array();
        if (out_nz[k]) outs.push_back(instantiate(v, out_avals[k]));
      }
      return outs;
    })));
  }
  std::vector<Array> tin{index};
  append(tin, res);
  append(tin, select(tops, nz));
  std::vector<bool> linear = all(res.size(), false);
  append(linear, all(tin.size() - 1 - res.size(), true));
  std::vector<Array> tout =
      detail::bind(primitive("cond"), tin, Params{{"branches", tangent}, {"linear", to_ints(linear)}});
  JvpResult r{slice(kout, 0, nout), {}};
  for (size_t k = 0, t = 0; k < nout; ++k) r.tangents_out.push_back(out_nz[k] ? tout[t++] : Array());
  return r;
}

JvpResult cond_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
  const auto& branches = ps.get_jaxprs("branches");
  std::vector<Array> ops(primals.begin() + 1, primals.end()), tops(tangents.begin() + 1, tangents.end());
  std::vector<bool> nz;
  for (size_t i = 0; i < ops.size(); ++i) nz.push_back(tops[i].valid() && is_floating(ops[i].dtype()));
  if (any_linearize_tangent(tangents)) return cond_jvp_split(branches, primals[0], ops, tops, nz);
  return cond_jvp_forward(branches, primals[0], ops, tops, nz);
}

/// The transpose of a tangent cond: a cond over (index, known operands..., output cotangents...) whose branch
/// b is branch b's backward pass, returning the cotangents of the linear operands.
std::vector<Array> cond_transpose(std::span<const Array> cts, std::span<const LinearArg> args, const Params& ps) {
  const auto& branches = ps.get_jaxprs("branches");
  if (args[0].is_linear()) not_differentiable("cond", "the branch index cannot be a tangent");
  std::vector<bool> lin = linear_flags(args, 1, ps);
  size_t n = lin.size();
  std::vector<ShapedArray> in_avals = branches[0]->in_avals(), out_avals = branches[0]->out_avals();
  std::vector<Array> known;
  std::vector<ShapedArray> avals;
  for (size_t i = 0; i < n; ++i)
    if (!lin[i]) {
      known.push_back(known_value("cond", args[i + 1], i + 1));
      avals.push_back(in_avals[i]);
    }
  append(avals, out_avals);
  JaxprList tb;
  for (auto& b : branches) {
    tb.push_back(share(trace_to_jaxpr("cond transposed branch", avals, [&](const std::vector<Array>& a) {
      std::vector<Array> bargs(n);
      size_t k = 0;
      for (size_t i = 0; i < n; ++i)
        if (!lin[i]) bargs[i] = a[k++];
      std::vector<Array> bcts(a.begin() + k, a.end());
      std::vector<Array> cin = backward_pass(b->jaxpr, b->consts, bargs, bcts);
      std::vector<Array> outs;
      for (size_t i = 0; i < n; ++i)
        if (lin[i]) outs.push_back(instantiate(cin[i], in_avals[i]));
      return outs;
    })));
  }
  std::vector<Array> inputs{args[0].value};
  append(inputs, known);
  for (size_t k = 0; k < out_avals.size(); ++k) inputs.push_back(instantiate(cts[k], out_avals[k]));
  std::vector<bool> tlin = all(known.size(), false);
  append(tlin, all(out_avals.size(), true));
  std::vector<Array> outs =
      detail::bind(primitive("cond"), inputs, Params{{"branches", tb}, {"linear", to_ints(tlin)}});
  std::vector<Array> result(args.size());
  for (size_t i = 0, k = 0; i < n; ++i)
    if (lin[i]) result[i + 1] = outs[k++];
  return result;
}

// --- while ------------------------------------------------------------------------------------------------
// while[cond_jaxpr, body_jaxpr](cond consts..., body consts..., carry...): forward mode only. The carry's
// tangents join the loop state; which carries have tangents is a fixed point over the body.

JvpResult while_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
  const auto& cj = *ps.get_jaxpr("cond_jaxpr");
  const auto& bj = *ps.get_jaxpr("body_jaxpr");
  size_t cn = ps.get_int("cond_nconsts"), bn = ps.get_int("body_nconsts");
  size_t nk = primals.size() - cn - bn;
  std::vector<Array> p(primals.begin(), primals.end()), t(tangents.begin(), tangents.end());
  // Body inputs: (body consts, carry); nz over them.
  std::vector<bool> nz;
  for (size_t i = cn; i < p.size(); ++i) nz.push_back(t[i].valid() && is_floating(p[i].dtype()));
  JvpJaxpr j;
  for (;;) {
    std::vector<bool> inst = slice(nz, bn, nk);
    j = jvp_jaxpr(bj, nz, inst);
    bool grew = false;
    for (size_t k = 0; k < nk; ++k)
      if (j.out_nz[k] && !nz[bn + k]) nz[bn + k] = grew = true;
    if (!grew) break;
  }
  std::vector<bool> carry_nz = slice(nz, bn, nk);
  if (std::none_of(carry_nz.begin(), carry_nz.end(), [](bool b) { return b; })) {
    // No carry has a tangent: the loop's outputs have none either (integer carries, or tangents only of
    // consts the carry never depends on).
    return JvpResult{detail::bind(primitive("while"), p, ps), std::vector<Array>(nk)};
  }
  size_t nbt = 0;
  for (size_t i = 0; i < bn; ++i) nbt += nz[i];
  size_t nkt = std::count(carry_nz.begin(), carry_nz.end(), true);
  // The body's jvp jaxpr takes (bconsts, carry, t_bconsts, t_carry); the loop state is (bconsts, t_bconsts,
  // carry, t_carry), and its outputs (carry, t_carry) already are the loop's order.
  ClosedJaxpr body = j.jaxpr;
  body.jaxpr.invars =
      permute(body.jaxpr.invars, Perm().range(0, bn).range(bn + nk, nbt).range(bn, nk).range(bn + nk + nbt, nkt).idx);
  // The cond takes (cconsts, carry, t_carry) and ignores the tangents.
  ClosedJaxpr cond = cj;
  for (size_t k = 0; k < nk; ++k)
    if (carry_nz[k]) cond.jaxpr.invars.push_back(new_var(p[cn + bn + k].aval()));
  std::vector<Array> inputs = slice(p, 0, cn + bn);
  for (size_t i = 0; i < bn; ++i)
    if (nz[i]) inputs.push_back(t[cn + i]);
  append(inputs, slice(p, cn + bn, nk));
  for (size_t k = 0; k < nk; ++k)
    if (carry_nz[k]) inputs.push_back(instantiate(t[cn + bn + k], p[cn + bn + k].aval()));
  Params nps{{"cond_jaxpr", share(std::move(cond))},
             {"body_jaxpr", share(std::move(body))},
             {"cond_nconsts", static_cast<int64_t>(cn)},
             {"body_nconsts", static_cast<int64_t>(bn + nbt)}};
  std::vector<Array> outs = detail::bind(primitive("while"), inputs, nps);
  JvpResult r{slice(outs, 0, nk), {}};
  // Under linearize (JAX's partial evaluation of while): the trip count is unknown until the loop runs, so the
  // whole JVP loop, primal carries included, goes into the linear jaxpr, recomputing the primal there; the
  // primal outputs come from the original loop, run now. Transposing it is refused (while_transpose).
  if (any_linearize_tangent(tangents)) r.primals_out = detail::bind(primitive("while"), p, ps);
  for (size_t k = 0, q = nk; k < nk; ++k) r.tangents_out.push_back(carry_nz[k] ? outs[q++] : Array());
  return r;
}

/// A JVP while in a linear jaxpr (linearize of a while_loop) cannot be transposed.
std::vector<Array> while_transpose(std::span<const Array>, std::span<const LinearArg>, const Params&) {
  throw_error<TypeError>("while_loop",
                         "Reverse-mode differentiation does not work for lax::while_loop or lax::fori_loop with "
                         "traced (dynamic) bounds: the trip count is not known before the loop runs, so the "
                         "values of each iteration cannot be saved for the backward pass. Try using lax::scan, "
                         "or lax::fori_loop with a static trip count (bounds that are C++ numbers or concrete "
                         "Arrays); forward mode (jvp, linearize) works with while_loop");
}

// --- scan -------------------------------------------------------------------------------------------------
// scan[jaxpr, length, reverse, unroll, num_consts, num_carry](consts..., carry..., xs...) -> (carry..., ys...).

struct ScanInfo {
  const ClosedJaxpr* body;
  size_t nc, nk, nx, ny;
  int64_t length, unroll;
  bool reverse;
  explicit ScanInfo(const Params& ps, size_t num_inputs) {
    body = ps.get_jaxpr("jaxpr").get();
    nc = ps.get_int("num_consts");
    nk = ps.get_int("num_carry");
    nx = num_inputs - nc - nk;
    ny = body->jaxpr.outvars.size() - nk;
    length = ps.get_int("length");
    unroll = ps.get_int("unroll", 1);
    reverse = ps.get_bool("reverse");
  }
  Params params(ClosedJaxpr j, size_t consts, size_t carry, bool rev) const {
    return Params{{"jaxpr", share(std::move(j))},
                  {"length", length},
                  {"reverse", rev},
                  {"unroll", unroll},
                  {"num_consts", static_cast<int64_t>(consts)},
                  {"num_carry", static_cast<int64_t>(carry)}};
  }
};

/// The type of a value stacked over the iterations.
ShapedArray stacked(ShapedArray a, int64_t length) {
  a.shape.insert(a.shape.begin(), length);
  return a;
}

JvpResult scan_jvp_forward(const ScanInfo& s, const std::vector<Array>& p, const std::vector<Array>& t,
                           std::vector<bool> nz) {
  JvpJaxpr j;
  for (;;) {
    std::vector<bool> inst = slice(nz, s.nc, s.nk);
    j = jvp_jaxpr(*s.body, nz, inst);
    bool grew = false;
    for (size_t k = 0; k < s.nk; ++k)
      if (j.out_nz[k] && !nz[s.nc + k]) nz[s.nc + k] = grew = true;
    if (!grew) break;
  }
  std::vector<bool> cnz = slice(nz, 0, s.nc), knz = slice(nz, s.nc, s.nk), xnz = slice(nz, s.nc + s.nk, s.nx);
  std::vector<bool> ynz = slice(j.out_nz, s.nk, s.ny);
  size_t tc = std::count(cnz.begin(), cnz.end(), true), tk = std::count(knz.begin(), knz.end(), true);
  size_t tx = std::count(xnz.begin(), xnz.end(), true), ty = std::count(ynz.begin(), ynz.end(), true);
  // jvp jaxpr: in (consts, carry, xs, tc, tk, tx), out (carry, ys, tk, ty); the scan wants in (consts, tc,
  // carry, tk, xs, tx), out (carry, tk, ys, ty).
  size_t n = s.nc + s.nk + s.nx;
  ClosedJaxpr body = j.jaxpr;
  body.jaxpr.invars = permute(body.jaxpr.invars, Perm()
                                                     .range(0, s.nc)
                                                     .range(n, tc)
                                                     .range(s.nc, s.nk)
                                                     .range(n + tc, tk)
                                                     .range(s.nc + s.nk, s.nx)
                                                     .range(n + tc + tk, tx)
                                                     .idx);
  size_t m = s.nk + s.ny;
  body.jaxpr.outvars =
      permute(body.jaxpr.outvars, Perm().range(0, s.nk).range(m, tk).range(s.nk, s.ny).range(m + tk, ty).idx);
  std::vector<Array> inputs = slice(p, 0, s.nc);
  append(inputs, select(slice(t, 0, s.nc), cnz));
  append(inputs, slice(p, s.nc, s.nk));
  for (size_t k = 0; k < s.nk; ++k)
    if (knz[k]) inputs.push_back(instantiate(t[s.nc + k], p[s.nc + k].aval()));
  append(inputs, slice(p, s.nc + s.nk, s.nx));
  append(inputs, select(slice(t, s.nc + s.nk, s.nx), xnz));
  std::vector<Array> outs =
      detail::bind(primitive("scan"), inputs, s.params(std::move(body), s.nc + tc, s.nk + tk, s.reverse));
  JvpResult r;
  append(r.primals_out, slice(outs, 0, s.nk));
  append(r.primals_out, slice(outs, s.nk + tk, s.ny));
  for (size_t k = 0, q = s.nk; k < s.nk; ++k) r.tangents_out.push_back(knz[k] ? outs[q++] : Array());
  for (size_t k = 0, q = s.nk + tk + s.ny; k < s.ny; ++k) r.tangents_out.push_back(ynz[k] ? outs[q++] : Array());
  return r;
}

/// Reverse mode: a known scan computes (carry, ys) and stacks each iteration's residuals as extra ys; a
/// tangent scan maps (residuals, tangents) to the output tangents. Residuals that are consts of the scan stay
/// consts, and those that are slices of xs are read from xs, instead of being stacked.
JvpResult scan_jvp_split(const ScanInfo& s, const std::vector<Array>& p, const std::vector<Array>& t,
                         std::vector<bool> nz) {
  LinearizedJaxpr lin;
  for (;;) {
    lin = linearize_jaxpr("scan body", *s.body, nz);
    bool grew = false;
    for (size_t k = 0; k < s.nk; ++k)
      if (lin.out_nz[k] && !nz[s.nc + k]) nz[s.nc + k] = grew = true;
    if (!grew) break;
  }
  nz = lin.diff;
  std::vector<bool> knz = slice(nz, s.nc, s.nk), ynz = slice(lin.out_nz, s.nk, s.ny);
  const Jaxpr& kj = lin.known.jaxpr;
  size_t nres = lin.res_avals.size(), nout = s.nk + s.ny;
  // Classify the residuals: 0 a const operand, 1 a concrete constant of the known body, 2 an xs operand,
  // 3 computed per iteration (stacked).
  std::vector<int> kind(nres);
  std::vector<Array> res_value(nres);
  std::vector<Atom> stacked_out;
  for (size_t r = 0; r < nres; ++r) {
    const Atom& a = kj.outvars[nout + r];
    JITX_ASSERT(!a.is_literal, "scan: a literal residual");
    kind[r] = 3;
    for (size_t i = 0; i < kj.invars.size(); ++i)
      if (kj.invars[i].id == a.var.id && (i < s.nc || i >= s.nc + s.nk)) {
        kind[r] = i < s.nc ? 0 : 2;
        res_value[r] = p[i];
      }
    for (size_t i = 0; i < kj.constvars.size(); ++i)
      if (kj.constvars[i].id == a.var.id) {
        kind[r] = 1;
        res_value[r] = lin.known.consts[i];
      }
    if (kind[r] == 3) stacked_out.push_back(a);
  }
  ClosedJaxpr known = lin.known;
  known.jaxpr.outvars.resize(nout);
  append(known.jaxpr.outvars, stacked_out);
  std::vector<Array> kout = detail::bind(primitive("scan"), p, s.params(std::move(known), s.nc, s.nk, s.reverse));
  for (size_t r = 0, q = nout; r < nres; ++r)
    if (kind[r] == 3) res_value[r] = kout[q++];

  // The tangent scan: consts (invariant residuals, t_consts), carry (t_carry), xs (per-iteration residuals, t_xs).
  std::vector<size_t> res_c, res_x;
  for (size_t r = 0; r < nres; ++r) (kind[r] <= 1 ? res_c : res_x).push_back(r);
  std::vector<ShapedArray> in_avals = s.body->in_avals();
  std::vector<ShapedArray> avals;
  for (size_t r : res_c) avals.push_back(lin.res_avals[r]);
  size_t ntc = 0, ntk = 0, ntx = 0;
  for (size_t i = 0; i < in_avals.size(); ++i)
    if (nz[i] && i < s.nc) avals.push_back(in_avals[i]), ++ntc;
  for (size_t i = 0; i < in_avals.size(); ++i)
    if (nz[i] && i >= s.nc && i < s.nc + s.nk) avals.push_back(in_avals[i]), ++ntk;
  for (size_t r : res_x) avals.push_back(lin.res_avals[r]);
  for (size_t i = 0; i < in_avals.size(); ++i)
    if (nz[i] && i >= s.nc + s.nk) avals.push_back(in_avals[i]), ++ntx;
  std::vector<ShapedArray> out_avals = s.body->out_avals();
  ClosedJaxpr tbody = trace_to_jaxpr("scan tangent body", avals, [&](const std::vector<Array>& a) {
    std::vector<Array> res(nres), ts;
    size_t q = 0;
    for (size_t r : res_c) res[r] = a[q++];
    append(ts, slice(a, q, ntc + ntk));
    q += ntc + ntk;
    for (size_t r : res_x) res[r] = a[q++];
    append(ts, slice(a, q, ntx));
    std::vector<Array> to = eval_jaxpr(lin.linear, res, ts);
    std::vector<Array> outs;
    for (size_t k = 0, u = 0; k < nout; ++k) {
      Array v = lin.out_nz[k] ? to[u++] : Array();
      if (k < s.nk ? knz[k] : ynz[k - s.nk]) outs.push_back(instantiate(v, out_avals[k]));
    }
    return outs;
  });
  std::vector<Array> inputs;
  std::vector<bool> linear;
  auto add = [&](const Array& v, bool l) {
    inputs.push_back(v);
    linear.push_back(l);
  };
  for (size_t r : res_c) add(res_value[r], false);
  for (size_t i = 0; i < s.nc; ++i)
    if (nz[i]) add(t[i], true);
  for (size_t i = s.nc; i < s.nc + s.nk; ++i)
    if (nz[i]) add(instantiate(t[i], p[i].aval()), true);
  for (size_t r : res_x) add(res_value[r], false);
  for (size_t i = s.nc + s.nk; i < p.size(); ++i)
    if (nz[i]) add(t[i], true);
  Params tps = s.params(std::move(tbody), res_c.size() + ntc, ntk, s.reverse);
  tps.set("linear", to_ints(linear));
  std::vector<Array> tout = detail::bind(primitive("scan"), inputs, tps);
  JvpResult r;
  append(r.primals_out, slice(kout, 0, nout));
  size_t q = 0;
  for (size_t k = 0; k < s.nk; ++k) r.tangents_out.push_back(knz[k] ? tout[q++] : Array());
  for (size_t k = 0; k < s.ny; ++k) r.tangents_out.push_back(ynz[k] ? tout[q++] : Array());
  return r;
}

JvpResult scan_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
  ScanInfo s(ps, primals.size());
  std::vector<Array> p(primals.begin(), primals.end()), t(tangents.begin(), tangents.end());
  std::vector<bool> nz;
  for (size_t i = 0; i < p.size(); ++i) nz.push_back(t[i].valid() && is_floating(p[i].dtype()));
  if (any_linearize_tangent(tangents)) return scan_jvp_split(s, p, t, nz);
  return scan_jvp_forward(s, p, t, nz);
}

/// The transpose of a tangent scan: a scan in the opposite direction whose carry is (cotangents of the linear
/// consts, summed over iterations; cotangents of the carry) and whose ys are the cotangents of the linear xs.
std::vector<Array> scan_transpose(std::span<const Array> cts, std::span<const LinearArg> args, const Params& ps) {
  ScanInfo s(ps, args.size());
  std::vector<bool> lin = linear_flags(args, 0, ps);
  for (size_t k = s.nc; k < s.nc + s.nk; ++k)
    if (!lin[k]) not_differentiable("scan", "cannot transpose a scan whose carry is not linear in the tangents");
  std::vector<ShapedArray> in_avals = s.body->in_avals(), out_avals = s.body->out_avals();
  std::vector<size_t> res_c, tc, res_x, tx;
  for (size_t i = 0; i < s.nc; ++i) (lin[i] ? tc : res_c).push_back(i);
  for (size_t i = s.nc + s.nk; i < args.size(); ++i) (lin[i] ? tx : res_x).push_back(i);
  std::vector<ShapedArray> avals;
  for (size_t i : res_c) avals.push_back(in_avals[i]);
  for (size_t i : tc) avals.push_back(in_avals[i]);
  append(avals, slice(in_avals, s.nc, s.nk));
  for (size_t i : res_x) avals.push_back(in_avals[i]);
  append(avals, slice(out_avals, s.nk, s.ny));
  const ClosedJaxpr& body = *s.body;
  ClosedJaxpr tbody = trace_to_jaxpr("scan transposed body", avals, [&](const std::vector<Array>& a) {
    std::vector<Array> bargs(in_avals.size());
    size_t q = 0;
    for (size_t i : res_c) bargs[i] = a[q++];
    std::vector<Array> acc = slice(a, q, tc.size());
    q += tc.size();
    std::vector<Array> bcts = slice(a, q, s.nk);
    q += s.nk;
    for (size_t i : res_x) bargs[i] = a[q++];
    append(bcts, slice(a, q, s.ny));
    std::vector<Array> cin = backward_pass(body.jaxpr, body.consts, bargs, bcts);
    std::vector<Array> outs;
    for (size_t k = 0; k < tc.size(); ++k) outs.push_back(add_tangents(acc[k], cin[tc[k]]));
    for (size_t k = s.nc; k < s.nc + s.nk; ++k) outs.push_back(instantiate(cin[k], in_avals[k]));
    for (size_t i : tx) outs.push_back(instantiate(cin[i], in_avals[i]));
    return outs;
  });
  std::vector<Array> inputs;
  std::vector<bool> tlin;
  auto add = [&](const Array& v, bool l) {
    inputs.push_back(v);
    tlin.push_back(l);
  };
  for (size_t i : res_c) add(known_value("scan", args[i], i), false);
  for (size_t i : tc) add(zeros_like_aval(in_avals[i]), true);
  for (size_t k = 0; k < s.nk; ++k) add(instantiate(cts[k], out_avals[k]), true);
  for (size_t i : res_x) add(known_value("scan", args[i], i), false);
  for (size_t k = 0; k < s.ny; ++k) add(instantiate(cts[s.nk + k], stacked(out_avals[s.nk + k], s.length)), true);
  Params tps = s.params(std::move(tbody), res_c.size(), tc.size() + s.nk, !s.reverse);
  tps.set("linear", to_ints(tlin));
  std::vector<Array> outs = detail::bind(primitive("scan"), inputs, tps);
  std::vector<Array> result(args.size());
  size_t q = 0;
  for (size_t i : tc) result[i] = outs[q++];
  for (size_t k = s.nc; k < s.nc + s.nk; ++k) result[k] = outs[q++];
  for (size_t i : tx) result[i] = outs[q++];
  return result;
}

}  // namespace

JvpFn cond_jvp_rule() { return cond_jvp; }
TransposeFn cond_transpose_rule() { return cond_transpose; }
JvpFn while_jvp_rule() { return while_jvp; }
TransposeFn while_transpose_rule() { return while_transpose; }
JvpFn scan_jvp_rule() { return scan_jvp; }
TransposeFn scan_transpose_rule() { return scan_transpose; }

}  // namespace jitx::detail
