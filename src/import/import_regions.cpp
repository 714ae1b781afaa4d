// The StableHLO importer's ops with regions: while and case/if (their regions become called computations, with the
// values they read from enclosing scopes passed as extra operands), and the ops whose regions jitx stores as
// attributes (sort's comparator, scatter's and reduce_window's update, the argmax/argmin reduce), which are
// recognised by pattern and otherwise refused with a CompileError naming the op.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "import/stablehlo_import.h"

namespace jitx::import {
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

/// Gives c exactly shapes.size() parameters: its parameter k becomes number pos[k]; the other numbers get new,
/// unused parameters. The root stays.
void renumber_parameters(Computation& c, const std::vector<hlo::Shape>& shapes, const std::vector<size_t>& pos) {
  Instruction* root = c.root;
  std::vector<Instruction*> params(shapes.size(), nullptr);
  for (size_t k = 0; k < c.parameters.size(); ++k) {
    params.at(pos.at(k)) = c.parameters[k];
    c.parameters[k]->parameter_number = static_cast<int64_t>(pos[k]);
  }
  for (size_t j = 0; j < params.size(); ++j) {
    if (params[j]) continue;
    params[j] = c.add(Opcode::kParameter, shapes[j], {}, {}, c.parent->unique_name("unused"));
    params[j]->parameter_number = static_cast<int64_t>(j);
  }
  c.parameters = params;
  c.root = root;
}

void check_declared(const OpSyntax& op, const Region& r, const std::vector<Instruction*>& values,
                    std::string_view what) {
  if (r.declared() != values.size())
    op_bad(op, fmt::format("{} takes {} argument(s), expected {}", what, r.declared(), values.size()));
  for (size_t k = 0; k < values.size(); ++k)
    if (!r.comp->parameters[k]->shape.same_type(values[k]->shape))
      op_bad(op, fmt::format("{} argument {} is {}, expected {}", what, k, r.comp->parameters[k]->shape.str(),
                             values[k]->shape.str()));
}

std::vector<Instruction*> build_while(Computation& comp, OpSyntax& op) {
  if (op.region_info.size() != 2) op_bad(op, "expected a cond and a body region");
  Region &cond = op.region_info[0], &body = op.region_info[1];
  size_t n = op.operands.size();
  check_declared(op, cond, op.operands, "the cond region");
  check_declared(op, body, op.operands, "the body region");
  if (cond.rets.size() != 1 || cond.rets[0]->shape.is_tuple || !cond.rets[0]->shape.dims.empty() ||
      cond.rets[0]->shape.dtype != DType::bool_)
    op_bad(op, "the cond region must return one tensor<i1>");
  if (body.rets.size() != n)
    op_bad(op, fmt::format("the body returns {} values for {} loop values", body.rets.size(), n));
  if (op.result_types.size() != n)
    op_bad(op, fmt::format("{} result types for {} loop values", op.result_types.size(), n));
  // The carry: the loop values, then cond's captures, then body's (passed through unchanged).
  std::vector<Instruction*> carry = op.operands;
  carry.insert(carry.end(), cond.captured.begin(), cond.captured.end());
  carry.insert(carry.end(), body.captured.begin(), body.captured.end());
  std::vector<hlo::Shape> shapes;
  for (auto* v : carry) shapes.push_back(v->shape);
  std::vector<size_t> cpos, bpos;
  for (size_t k = 0; k < n + cond.captured.size(); ++k) cpos.push_back(k);
  for (size_t k = 0; k < n; ++k) bpos.push_back(k);
  for (size_t k = 0; k < body.captured.size(); ++k) bpos.push_back(n + cond.captured.size() + k);
  renumber_parameters(*cond.comp, shapes, cpos);
  renumber_parameters(*body.comp, shapes, bpos);
  for (size_t k = 0; k < n; ++k)
    if (!body.rets[k]->shape.same_type(shapes[k]))
      op_bad(op, fmt::format("the body returns {} for loop value {} of type {}", body.rets[k]->shape.str(), k,
                             shapes[k].str()));
  std::vector<Instruction*> rets = body.rets;
  for (size_t k = n; k < carry.size(); ++k) rets.push_back(body.comp->parameters[k]);
  body.comp->add(Opcode::kTuple, hlo::Shape::tuple(shapes), rets);
  body.comp->remove_dead_instructions();
  cond.comp->root = cond.rets[0];
  Instruction* w = comp.add(Opcode::kWhile, hlo::Shape::tuple(shapes), carry);
  w->called = {cond.comp, body.comp};
  std::vector<Instruction*> outs;
  for (size_t k = 0; k < n; ++k)
    outs.push_back(comp.add(Opcode::kGetTupleElement, shapes[k], {w}, {{"index", static_cast<int64_t>(k)}}));
  return outs;
}

/// stablehlo.case (s32 index) and stablehlo.if (pred: true branch first, as jitx's conditional orders them). The
/// branches take no arguments; every value they read from outside becomes an operand.
std::vector<Instruction*> build_case(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 1) op_bad(op, fmt::format("expected one index operand, got {}", op.operands.size()));
  const hlo::Shape& idx = op.operands[0]->shape;
  bool is_if = op.name == "stablehlo.if";
  if (!idx.dims.empty() || idx.dtype != (is_if ? DType::bool_ : DType::int32))
    op_bad(op, fmt::format("expected a {} index, got {}", is_if ? "tensor<i1>" : "tensor<i32>", idx.str()));
  if (op.region_info.empty() || (is_if && op.region_info.size() != 2))
    op_bad(op, is_if ? "expected two regions (true, false)" : "expected at least one branch region");
  std::vector<Instruction*> operands = {op.operands[0]};
  std::vector<hlo::Shape> shapes;
  for (auto& r : op.region_info) {
    if (r.declared() != 0) op_bad(op, "branch regions take no arguments");
    for (auto* v : r.captured) {
      operands.push_back(v);
      shapes.push_back(v->shape);
    }
  }
  std::vector<hlo::Shape> results;
  for (auto& t : op.result_types) results.push_back(shape_of(t));
  hlo::Shape result = results.size() == 1 ? results[0] : hlo::Shape::tuple(results);
  size_t offset = 0;
  for (size_t b = 0; b < op.region_info.size(); ++b) {
    Region& r = op.region_info[b];
    if (!r.comp->root || !r.comp->root->shape.same_type(result))
      op_bad(op, fmt::format("branch {} returns {}, expected {}", b, r.comp->root ? r.comp->root->shape.str() : "()",
                             result.str()));
    std::vector<size_t> pos;
    for (size_t k = 0; k < r.captured.size(); ++k) pos.push_back(offset + k);
    offset += r.captured.size();
    renumber_parameters(*r.comp, shapes, pos);
  }
  Instruction* c = comp.add(Opcode::kConditional, result, operands);
  c->called = op.regions;
  return results_of(comp, c, results.size());
}

// --- regions that become attributes ---

/// The one parameter an instruction depends on (constants aside): its number, -1 for none, -2 for several.
int64_t source_param(const Instruction* i, std::map<const Instruction*, int64_t>& memo) {
  if (auto it = memo.find(i); it != memo.end()) return it->second;
  int64_t s = -1;
  if (i->opcode == Opcode::kParameter) {
    s = i->parameter_number;
  } else {
    for (auto* o : i->operands) {
      int64_t t = source_param(o, memo);
      if (t == -1) continue;
      s = (s == -1 || s == t) ? t : -2;
    }
  }
  memo[i] = s;
  return s;
}

/// The instructions root depends on (itself included).
std::set<const Instruction*> live_set(const Instruction* root) {
  std::set<const Instruction*> live;
  std::vector<const Instruction*> work = {root};
  while (!work.empty()) {
    const Instruction* i = work.back();
    work.pop_back();
    if (!i || !live.insert(i).second) continue;
    for (auto* o : i->operands) work.push_back(o);
  }
  return live;
}

/// The sort comparator as jitx can run it: lexicographically ordered on the first num_keys operands (JAX's
/// comparators: `lt` per key, floats in TOTALORDER after mapping -0.0 to 0.0 and NaNs to one NaN, which is
/// jitx's ascending order with NaNs last; `gt` for a descending key, as lax.top_k's decomposition sorts). Returns
/// num_keys, or throws naming what it found; descending gets the keys sorted in descending order.
int64_t sort_keys(const OpSyntax& op, const Region& r, std::set<int64_t>& descending) {
  const Computation& c = *r.comp;
  if (!r.captured.empty()) op_unsupported(op, "with a comparator that reads values from outside it is not supported");
  if (!c.root || c.root->shape.is_tuple || c.root->shape.dtype != DType::bool_)
    op_bad(op, "the comparator must return one tensor<i1>");
  std::map<const Instruction*, int64_t> memo;
  std::set<int64_t> ascending, equal;
  std::set<const Instruction*> live = live_set(c.root);
  for (auto& i : c.instructions) {
    if (i->opcode != Opcode::kCompare || !live.count(i.get())) continue;
    auto cmp = hlo::Comparison::of(*i);
    bool lt = cmp.direction == hlo::ComparisonDirection::kLt, gt = cmp.direction == hlo::ComparisonDirection::kGt;
    bool le = cmp.direction == hlo::ComparisonDirection::kLe, ge = cmp.direction == hlo::ComparisonDirection::kGe;
    int64_t a = source_param(i->operand(0), memo), b = source_param(i->operand(1), memo);
    if (a < 0 || b < 0 || a == b || a / 2 != b / 2) continue;
    if (le || ge) op_unsupported(op, "with a non-strict (LE/GE) comparator is not supported");
    if (cmp.direction == hlo::ComparisonDirection::kEq) equal.insert(a / 2);
    if (!lt && !gt) continue;
    bool asc = lt == (a % 2 == 0);
    if (!asc) descending.insert(a / 2);
    ascending.insert(a / 2);  // (a key, in either direction)
  }
  if (ascending.empty())
    op_unsupported(op, "with a comparator that is not a less-than on its operands is not supported");
  int64_t num_keys = *ascending.rbegin() + 1;
  if (static_cast<int64_t>(ascending.size()) != num_keys)
    op_unsupported(op, "with a comparator whose keys are not the leading operands is not supported");
  for (int64_t k = 0; k + 1 < num_keys; ++k)  // lexicographic: a later key decides only among equal earlier ones
    if (!equal.count(k))
      op_unsupported(op, fmt::format("with a comparator that is not lexicographic (no tie test on key {}) is not "
                                     "supported", k));
  // The result must depend on the key parameters only.
  for (auto* p : c.parameters)
    if (p->parameter_number >= 2 * num_keys && live.count(p))
      op_unsupported(op, "with a comparator that reads a non-key operand is not supported");
  return num_keys;
}

Instruction* splat_of(Computation& comp, DType d, double v, const std::vector<int64_t>& dims);

/// A sort with descending keys, as an ascending one: each key is replaced by keys whose ascending order is its
/// descending order (integers and bools: their bitwise complement; floats: their negation, NaN mapped to -inf,
/// then a second key that puts the NaNs before the -inf that +inf became, as TOTALORDER's GT puts NaN first),
/// and the original operands ride along after them; the results are those last n outputs.
std::vector<Instruction*> sort_with_descending_keys(Computation& comp, const OpSyntax& op, hlo::SortConfig cfg,
                                                    const std::set<int64_t>& descending,
                                                    const std::vector<hlo::Shape>& shapes) {
  std::vector<Instruction*> keys;
  auto compare = [&](Instruction* a, Instruction* b, hlo::ComparisonDirection dir) {
    hlo::Comparison c;
    c.direction = dir;
    c.type = hlo::ComparisonType::kFloat;
    detail::Params p;
    c.set_on(p);
    return comp.add(Opcode::kCompare, hlo::Shape(DType::bool_, a->shape.dims), {a, b}, p);
  };
  for (int64_t k = 0; k < cfg.num_keys; ++k) {
    Instruction* x = op.operands[static_cast<size_t>(k)];
    if (!descending.count(k)) {
      keys.push_back(x);
      continue;
    }
    DType d = x->shape.dtype;
    if (!is_floating(d)) {
      keys.push_back(comp.add(Opcode::kNot, x->shape, {x}));
      continue;
    }
    Instruction* is_nan = compare(x, x, hlo::ComparisonDirection::kNe);
    Instruction* neg = comp.add(Opcode::kNegate, x->shape, {x});
    keys.push_back(comp.add(Opcode::kSelect, x->shape, {is_nan, splat_of(comp, d, -INFINITY, x->shape.dims), neg}));
    keys.push_back(comp.add(Opcode::kSelect, hlo::Shape(DType::int32, x->shape.dims),
                            {is_nan, splat_of(comp, DType::int32, 0, x->shape.dims),
                             splat_of(comp, DType::int32, 1, x->shape.dims)}));
  }
  size_t nk = keys.size(), n = op.operands.size();
  std::vector<Instruction*> operands = keys;
  operands.insert(operands.end(), op.operands.begin(), op.operands.end());
  std::vector<hlo::Shape> all;
  for (auto* k : keys) all.push_back(k->shape);
  all.insert(all.end(), shapes.begin(), shapes.end());
  cfg.num_keys = static_cast<int64_t>(nk);
  Instruction* s = comp.add(Opcode::kSort, hlo::Shape::tuple(all), operands, hlo::to_params(cfg));
  std::vector<Instruction*> outs;
  for (size_t i = 0; i < n; ++i)
    outs.push_back(comp.add(Opcode::kGetTupleElement, shapes[i], {s}, {{"index", static_cast<int64_t>(nk + i)}}));
  return outs;
}

std::vector<Instruction*> build_sort(Computation& comp, OpSyntax& op) {
  size_t n = op.operands.size();
  if (n == 0) op_bad(op, "expected at least one operand");
  if (op.region_info.size() != 1) op_bad(op, "expected one comparator region");
  if (op.result_types.size() != n)
    op_bad(op, fmt::format("{} result types for {} operands", op.result_types.size(), n));
  Region& r = op.region_info[0];
  if (r.declared() != 2 * n)
    op_bad(op, fmt::format("the comparator takes {} arguments, expected {}", r.declared(), 2 * n));
  hlo::SortConfig cfg;
  std::set<int64_t> descending;
  cfg.num_keys = sort_keys(op, r, descending);
  cfg.dimension = -1;
  if (auto* d = op_attr(op, {"dimension"})) {
    auto v = ints_of(*d);
    if (v.size() != 1) op_bad(op, "expected one integer for dimension");
    cfg.dimension = v[0];
  }
  if (cfg.dimension < 0) cfg.dimension += static_cast<int64_t>(op.operands[0]->shape.rank());
  if (auto* s = op_attr(op, {"is_stable"})) cfg.is_stable = s->find("true") != std::string::npos;
  op.regions.clear();
  std::vector<hlo::Shape> shapes;
  for (auto& t : op.result_types) shapes.push_back(shape_of(t));
  if (!descending.empty()) return sort_with_descending_keys(comp, op, cfg, descending, shapes);
  Instruction* s =
      comp.add(Opcode::kSort, n == 1 ? shapes[0] : hlo::Shape::tuple(shapes), op.operands, hlo::to_params(cfg));
  return results_of(comp, s, n);
}

/// (values, indices) reduce whose body keeps the larger (smaller) value, ties to the lower index: JAX's argmax.
std::vector<Instruction*> build_arg_reduce(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 4 || op.region_info.size() != 1 || op.region_info[0].declared() != 4 ||
      !op.region_info[0].captured.empty() || op.result_types.size() != 2)
    op_unsupported(op, "of several operands other than JAX's (values, indices) argmax/argmin is not supported");
  const Computation& c = *op.region_info[0].comp;
  std::map<const Instruction*, int64_t> memo;
  int better = 0;  // +1 argmax, -1 argmin
  bool index_tie = false;
  std::set<const Instruction*> live = live_set(c.root);
  for (auto& i : c.instructions) {
    if (i->opcode != Opcode::kCompare || !live.count(i.get())) continue;
    auto cmp = hlo::Comparison::of(*i);
    int64_t a = source_param(i->operand(0), memo), b = source_param(i->operand(1), memo);
    bool lt = cmp.direction == hlo::ComparisonDirection::kLt, gt = cmp.direction == hlo::ComparisonDirection::kGt;
    if (!lt && !gt) continue;
    if ((a == 0 && b == 2) || (a == 2 && b == 0)) {
      int d = (gt == (a == 0)) ? 1 : -1;
      if (better != 0 && better != d)
        better = 2;
      else
        better = d;
    }
    if ((a == 1 && b == 3 && lt) || (a == 3 && b == 1 && gt)) index_tie = true;
  }
  const Instruction* root = c.root;
  bool selects = root && root->opcode == Opcode::kTuple && root->operands.size() == 2 &&
                 root->operand(0)->opcode == Opcode::kSelect && root->operand(1)->opcode == Opcode::kSelect;
  if (!selects || (better != 1 && better != -1) || !index_tie)
    op_unsupported(op,
                   "of several operands with a reducer that is not JAX's argmax/argmin (larger/smaller value, "
                   "ties to the lower index) is not supported");
  op.regions.clear();
  detail::Params p;
  auto* dims = op_attr(op, {"dimensions"});
  if (!dims) op_bad(op, "expected dimensions");
  p.set("dimensions", ints_of(*dims));
  p.set("reducer", std::string(better == 1 ? "argmax" : "argmin"));
  std::vector<hlo::Shape> shapes = {shape_of(op.result_types[0]), shape_of(op.result_types[1])};
  Instruction* r = comp.add(Opcode::kReduce, hlo::Shape::tuple(shapes), op.operands, p);
  return results_of(comp, r, 2);
}

std::vector<Instruction*> build_scatter(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 3 || op.result_types.size() != 1)
    op_unsupported(op, "of several operands is not supported (one operand, indices and updates)");
  if (op.region_info.size() != 1) op_bad(op, "expected an update region");
  hlo::Reducer red = reducer_of_region(op, *op.region_info[0].comp);
  const std::string* dn = op_attr(op, {"scatter_dimension_numbers"});
  if (!dn) op_bad(op, "expected scatter_dimension_numbers");
  hlo::ScatterDimensionNumbers s;
  s.update_window_dims = attr_field(*dn, "update_window_dims");
  s.inserted_window_dims = attr_field(*dn, "inserted_window_dims");
  s.input_batching_dims = attr_field(*dn, "input_batching_dims");
  s.scatter_indices_batching_dims = attr_field(*dn, "scatter_indices_batching_dims");
  s.scatter_dims_to_operand_dims = attr_field(*dn, "scatter_dims_to_operand_dims");
  auto ivd = attr_field(*dn, "index_vector_dim");  // absent: 0 (MLIR leaves the default out)
  s.index_vector_dim = ivd.empty() ? 0 : ivd[0];
  auto flag = [&](const char* k) {
    auto* a = op_attr(op, {k});
    return a && a->find("true") != std::string::npos;
  };
  s.indices_are_sorted = flag("indices_are_sorted");
  s.unique_indices = flag("unique_indices");
  op.regions.clear();
  auto p = hlo::to_params(s);
  p.set("reducer", std::string(hlo::reducer_name(red)));
  return {comp.add(Opcode::kScatter, shape_of(op.result_types[0]), op.operands, p)};
}

/// `padding = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>` (or a splat) -> per-axis (low, high).
std::vector<hlo::WindowPadding> padding_pairs(const OpSyntax& op, const std::string* raw, size_t rank) {
  std::vector<hlo::WindowPadding> out(rank);
  if (!raw) return out;
  auto v = ints_of(*raw);
  if (v.size() == 1) v.assign(2 * rank, v[0]);
  if (v.size() != 2 * rank) op_bad(op, fmt::format("expected {} padding pairs", rank));
  for (size_t k = 0; k < rank; ++k) out[k] = {v[2 * k], v[2 * k + 1]};
  return out;
}

/// True when the region is one add, multiply, maximum, minimum, and or or of its two arguments (a Reducer).
bool is_known_reducer_region(const Computation& rc) {
  const Instruction* r = rc.root;
  if (!r || rc.instructions.size() != 3 || r->operands.size() != 2 || r->operands[0] == r->operands[1] ||
      r->operands[0]->opcode != Opcode::kParameter || r->operands[1]->opcode != Opcode::kParameter)
    return false;
  switch (r->opcode) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kAnd:
    case Opcode::kOr: return true;
    default: return false;
  }
}

/// The region's scalar body applied elementwise to arrays of shape `dims`: its arguments become `args`, its scalar
/// constants splats, every elementwise op the same op on the arrays. A region with another kind of op (a reduce, a
/// call) is refused.
Instruction* inline_scalar_region(Computation& comp, const OpSyntax& op, const Region& r,
                                  const std::vector<Instruction*>& args, const std::vector<int64_t>& dims) {
  std::map<const Instruction*, Instruction*> m;
  for (size_t k = 0; k < args.size(); ++k) m[r.comp->parameters.at(k)] = args[k];
  for (auto& up : r.comp->instructions) {
    const Instruction* i = up.get();
    if (i->opcode == Opcode::kParameter) {
      if (!m.count(i)) op_unsupported(op, "with a reducer region that reads enclosing values is not supported");
      continue;
    }
    if (i->shape.is_tuple || !i->shape.dims.empty() || !i->called.empty())
      op_unsupported(op, fmt::format("with a reducer region holding {} ({}) is not supported",
                                     hlo::opcode_name(i->opcode), i->shape.str()));
    std::vector<Instruction*> ops;
    for (auto* o : i->operands) ops.push_back(m.at(o));
    hlo::Shape s(i->shape.dtype, dims);
    if (i->opcode == Opcode::kConstant) {
      Instruction* c = comp.add_constant(*i->literal);
      m[i] = comp.add(Opcode::kBroadcastInDim, s, {c}, {{"broadcast_dimensions", std::vector<int64_t>{}}});
    } else if ((i->opcode == Opcode::kBroadcastInDim || i->opcode == Opcode::kReshape || i->opcode == Opcode::kCopy) &&
               ops.size() == 1 && ops[0]->shape.dtype == s.dtype) {
      m[i] = ops[0];  // scalar to scalar
    } else if (hlo::is_elementwise(i->opcode)) {
      m[i] = comp.add(i->opcode, s, ops, i->attrs);
    } else {
      op_unsupported(op, fmt::format("with a reducer region holding {} is not supported", hlo::opcode_name(i->opcode)));
    }
  }
  if (r.rets.size() != 1) op_bad(op, "the reducer region must return one value");
  return m.at(r.rets[0]);
}

/// reduce_window with a reducer region that is not one known op (cumlogsumexp's logaddexp): the operand padded
/// (padding and base dilation), then for each window offset k in row-major order (XLA's order) the strided slice
/// X_k, folded as acc = region(acc, X_k) from acc = init, the region's body inlined on whole arrays; positions in
/// padding or holes are skipped, as XLA's evaluator and CPU backend skip them.
std::vector<Instruction*> general_reduce_window(Computation& comp, OpSyntax& op, const hlo::Window& w) {
  Instruction *x = op.operands[0], *init = op.operands[1];
  const Region& r = op.region_info[0];
  check_declared(op, r, {init, init}, "the reducer region");
  size_t rank = x->shape.dims.size();
  hlo::Shape out = shape_of(op.result_types[0]);
  const auto& g = out.dims;
  if (g.size() != rank || out.dtype != x->shape.dtype) op_bad(op, "the result must have the operand's rank and dtype");
  hlo::PaddingConfig pc;
  std::vector<int64_t> padded(rank);
  bool any_pad = false;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (w.padding[d].low < 0 || w.padding[d].high < 0 || w.base_dilations[d] < 1 || w.strides[d] < 1 ||
        w.window_dilations[d] < 1 || w.dimensions[d] < 0)
      op_unsupported(op, "with negative padding or non-positive strides or dilations is not supported");
    pc.low.push_back(w.padding[d].low);
    pc.high.push_back(w.padding[d].high);
    pc.interior.push_back(w.base_dilations[d] - 1);
    int64_t n = x->shape.dims[d];
    padded[d] = (n == 0 ? 0 : (n - 1) * w.base_dilations[d] + 1) + w.padding[d].low + w.padding[d].high;
    any_pad = any_pad || padded[d] != n;
    count *= w.dimensions[d];
    int64_t span = w.dimensions[d] == 0 ? 0 : (w.dimensions[d] - 1) * w.window_dilations[d] + 1;
    int64_t want = padded[d] < span ? 0 : (padded[d] - span) / w.strides[d] + 1;
    if (g[d] != want) op_bad(op, fmt::format("the result's shape {} does not match the windows", out.str()));
  }
  if (count > 4096) op_unsupported(op, "with a general reducer region and more than 4096 window elements");
  Instruction* src = any_pad ? comp.add(Opcode::kPad, hlo::Shape(x->shape.dtype, padded), {x, init},
                                        hlo::to_params(pc))
                             : x;
  // XLA skips the window positions that fall in padding or dilation holes (it does not combine init there): a
  // mask of the real positions, padded the same way, keeps acc at those.
  Instruction* real = nullptr;
  if (any_pad) {
    Instruction* yes = comp.add(Opcode::kBroadcastInDim, hlo::Shape(DType::bool_, x->shape.dims),
                                {comp.add_scalar_constant(DType::bool_, 1)},
                                {{"broadcast_dimensions", std::vector<int64_t>{}}});
    real = comp.add(Opcode::kPad, hlo::Shape(DType::bool_, padded), {yes, comp.add_scalar_constant(DType::bool_, 0)},
                    hlo::to_params(pc));
  }
  Instruction* acc = comp.add(Opcode::kBroadcastInDim, out, {init}, {{"broadcast_dimensions", std::vector<int64_t>{}}});
  bool empty = false;
  for (auto v : g) empty = empty || v == 0;
  for (int64_t k = 0; k < count && !empty; ++k) {
    hlo::SliceConfig sc;
    for (int64_t d = static_cast<int64_t>(rank) - 1, rest = k; d >= 0; --d) {
      int64_t off = (rest % w.dimensions[d]) * w.window_dilations[d];
      rest /= w.dimensions[d];
      sc.start_indices.insert(sc.start_indices.begin(), off);
      sc.limit_indices.insert(sc.limit_indices.begin(), off + (g[d] - 1) * w.strides[d] + 1);
      sc.strides.insert(sc.strides.begin(), w.strides[d]);
    }
    Instruction* xk = comp.add(Opcode::kSlice, out, {src}, hlo::to_params(sc));
    Instruction* next = inline_scalar_region(comp, op, r, {acc, xk}, g);
    if (real) {
      Instruction* mk = comp.add(Opcode::kSlice, hlo::Shape(DType::bool_, g), {real}, hlo::to_params(sc));
      next = comp.add(Opcode::kSelect, out, {mk, next, acc});
    }
    acc = next;
  }
  op.regions.clear();
  return {acc};
}

std::vector<Instruction*> build_reduce_window(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 2 || op.result_types.size() != 1)
    op_unsupported(op, "of several operands is not supported");
  if (op.region_info.size() != 1) op_bad(op, "expected a reducer region");
  bool single = is_known_reducer_region(*op.region_info[0].comp);
  hlo::Reducer red = single ? reducer_of_region(op, *op.region_info[0].comp) : hlo::Reducer::kAdd;
  size_t rank = op.operands[0]->shape.dims.size();
  auto list = [&](const char* k) {
    auto* a = op_attr(op, {k});
    auto v = a ? ints_of(*a) : std::vector<int64_t>(rank, 1);
    if (v.size() != rank) op_bad(op, fmt::format("expected {} values for {}", rank, k));
    return v;
  };
  if (!op_attr(op, {"window_dimensions"})) op_bad(op, "expected window_dimensions");
  hlo::Window w;
  w.dimensions = list("window_dimensions");
  w.strides = list("window_strides");
  w.base_dilations = list("base_dilations");
  w.window_dilations = list("window_dilations");
  w.padding = padding_pairs(op, op_attr(op, {"padding"}), rank);
  if (!single) return general_reduce_window(comp, op, w);
  op.regions.clear();
  auto p = hlo::to_params(w);
  p.set("reducer", std::string(hlo::reducer_name(red)));
  return {comp.add(Opcode::kReduceWindow, shape_of(op.result_types[0]), op.operands, p)};
}

Instruction* splat_of(Computation& comp, DType d, double v, const std::vector<int64_t>& dims) {
  Instruction* c = comp.add_scalar_constant(d, v);
  return comp.add(Opcode::kBroadcastInDim, hlo::Shape(d, dims), {c},
                  {{"broadcast_dimensions", std::vector<int64_t>{}}});
}

/// select_and_scatter (the gradient of max pooling) in jitx's ops: for each window offset k, the strided slice X_k
/// of the operand; a running selection over k as the select region decides (XLA's order: keep the current pick
/// while select(current, X_k) holds); then each window's source value goes to its pick (a pad with interior
/// padding puts offset k's values back in place) and the contributions are added to init.
std::vector<Instruction*> build_select_and_scatter(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 3 || op.result_types.size() != 1 || op.region_info.size() != 2)
    op_bad(op, "expected (operand, source, init), two regions and one result");
  Instruction *x = op.operands[0], *src = op.operands[1], *init = op.operands[2];
  const Computation& sel = *op.region_info[0].comp;
  const Instruction* r = sel.root;
  if (!r || r->opcode != Opcode::kCompare || sel.instructions.size() != 3 || r->operand(0) == r->operand(1) ||
      r->operand(0)->opcode != Opcode::kParameter || r->operand(1)->opcode != Opcode::kParameter)
    op_unsupported(op, "with a select region other than one compare of its two arguments is not supported");
  auto cmp = hlo::Comparison::of(*r);
  if (r->operand(0)->parameter_number != 0) {  // compare(b, a): the mirrored direction of compare(a, b)
    using D = hlo::ComparisonDirection;
    D d = cmp.direction;
    cmp.direction = d == D::kLt ? D::kGt : d == D::kGt ? D::kLt : d == D::kLe ? D::kGe : d == D::kGe ? D::kLe : d;
  }
  if (reducer_of_region(op, *op.region_info[1].comp) != hlo::Reducer::kAdd)
    op_unsupported(op, "with a scatter region other than add is not supported");
  size_t rank = x->shape.dims.size();
  auto list = [&](const char* k, int64_t dflt) {
    auto* a = op_attr(op, {k});
    auto v = a ? ints_of(*a) : std::vector<int64_t>(rank, dflt);
    if (v.size() == 1 && rank != 1 && std::string(k) == "padding") v.assign(2 * rank, v[0]);
    return v;
  };
  auto win = list("window_dimensions", 1), stride = list("window_strides", 1), pad = list("padding", 0);
  if (win.size() != rank || stride.size() != rank) op_bad(op, fmt::format("expected {} window values", rank));
  for (auto p : pad)
    if (p != 0) op_unsupported(op, "with padding is not supported (JAX pads the operand before it)");
  const auto& g = src->shape.dims;
  if (g.size() != rank || !init->shape.dims.empty() || src->shape.dtype != x->shape.dtype)
    op_bad(op, "the source must have the operand's rank and dtype, init must be a scalar");
  for (size_t d = 0; d < rank; ++d)
    if (win[d] < 1 || stride[d] < 1 || win[d] > x->shape.dims[d] || g[d] != (x->shape.dims[d] - win[d]) / stride[d] + 1)
      op_bad(op, fmt::format("the source's shape {} does not match the windows of the operand", src->shape.str()));
  int64_t count = 1;
  for (auto w : win) count *= w;
  if (count > 4096) op_unsupported(op, "with windows of more than 4096 elements is not supported");
  DType dt = x->shape.dtype;
  hlo::Shape gs(dt, g), gi(DType::int32, g), gp(DType::bool_, g);
  std::vector<std::vector<int64_t>> offsets;
  Instruction *cur = nullptr, *idx = nullptr;
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> off(rank);
    for (int64_t d = static_cast<int64_t>(rank) - 1, rest = k; d >= 0; --d) {
      off[d] = rest % win[d];
      rest /= win[d];
    }
    offsets.push_back(off);
    hlo::SliceConfig sc;
    for (size_t d = 0; d < rank; ++d) {
      sc.start_indices.push_back(off[d]);
      sc.limit_indices.push_back(off[d] + (g[d] - 1) * stride[d] + 1);
      sc.strides.push_back(stride[d]);
    }
    Instruction* xk = comp.add(Opcode::kSlice, gs, {x}, hlo::to_params(sc));
    if (!cur) {
      cur = xk;
      idx = splat_of(comp, DType::int32, 0, g);
      continue;
    }
    Instruction* keep = comp.add(Opcode::kCompare, gp, {cur, xk}, hlo::to_params(cmp));
    cur = comp.add(Opcode::kSelect, gs, {keep, cur, xk});
    idx = comp.add(Opcode::kSelect, gi, {keep, idx, splat_of(comp, DType::int32, static_cast<double>(k), g)});
  }
  hlo::Comparison eq{hlo::ComparisonDirection::kEq, hlo::ComparisonType::kSigned};
  Instruction* zero = comp.add_scalar_constant(dt, 0);
  Instruction* zeros = splat_of(comp, dt, 0, g);
  Instruction* sum =
      comp.add(Opcode::kBroadcastInDim, x->shape, {init}, {{"broadcast_dimensions", std::vector<int64_t>{}}});
  for (int64_t k = 0; k < count; ++k) {
    Instruction* is_k = comp.add(Opcode::kCompare, gp, {idx, splat_of(comp, DType::int32, static_cast<double>(k), g)},
                                 hlo::to_params(eq));
    Instruction* ck = comp.add(Opcode::kSelect, gs, {is_k, src, zeros});
    hlo::PaddingConfig pc;
    for (size_t d = 0; d < rank; ++d) {
      pc.low.push_back(offsets[k][d]);
      pc.interior.push_back(stride[d] - 1);
      pc.high.push_back(x->shape.dims[d] - offsets[k][d] - (g[d] - 1) * stride[d] - 1);
    }
    Instruction* placed = comp.add(Opcode::kPad, x->shape, {ck, zero}, hlo::to_params(pc));
    sum = comp.add(Opcode::kAdd, x->shape, {sum, placed});
  }
  op.regions.clear();
  return {sum};
}
}  // namespace

std::vector<Instruction*> build_region_op(Computation& comp, OpSyntax& op, bool* handled) {
  *handled = true;
  const std::string& n = op.name;
  if (n == "stablehlo.while") return build_while(comp, op);
  if (n == "stablehlo.case" || n == "stablehlo.if") return build_case(comp, op);
  if (n == "stablehlo.sort") return build_sort(comp, op);
  if (n == "stablehlo.scatter") return build_scatter(comp, op);
  if (n == "stablehlo.reduce_window") return build_reduce_window(comp, op);
  if (n == "stablehlo.reduce" && op.operands.size() > 2) return build_arg_reduce(comp, op);
  if (n == "stablehlo.select_and_scatter") return build_select_and_scatter(comp, op);
  *handled = false;
  return {};
}

}  // namespace jitx::import
