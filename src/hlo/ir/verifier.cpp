// The HLO verifier: structural invariants and per-op shape rules, checked after lowering and passes.
#include <algorithm>
#include <unordered_set>

#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/hlo.h"

namespace jitx::hlo {
namespace {

[[noreturn]] void fail(const Instruction& i, std::string_view msg) {
  throw CompileError(fmt::format("[hlo verifier] %{} ({} {}): {}", i.name, opcode_name(i.opcode), i.shape.str(), msg));
}

void check(bool ok, const Instruction& i, std::string_view msg) {
  if (!ok) fail(i, msg);
}

void verify_instruction(const Instruction& i) {
  int arity = opcode_arity(i.opcode);
  if (arity >= 0)
    check(static_cast<int>(i.operands.size()) == arity, i,
          fmt::format("expects {} operands, has {}", arity, i.operands.size()));
  auto op_shape = [&](size_t k) -> const Shape& { return i.operands[k]->shape; };
  if (is_elementwise(i.opcode) && i.opcode != Opcode::kSelect && i.opcode != Opcode::kClamp) {
    for (size_t k = 0; k < i.operands.size(); ++k)
      check(!op_shape(k).is_tuple && op_shape(k).dims == i.shape.dims, i,
            fmt::format("operand {} has shape {}, expected dims of {}", k, op_shape(k).str(), i.shape.str()));
    if (i.opcode == Opcode::kCompare) Comparison::of(i);
    bool out_bool = i.opcode == Opcode::kCompare || i.opcode == Opcode::kIsFinite;
    if (i.opcode != Opcode::kConvert) {
      for (size_t k = 1; k < i.operands.size(); ++k)
        check(op_shape(k).dtype == op_shape(0).dtype, i, "operands have different dtypes");
      check(out_bool ? i.shape.dtype == DType::bool_ : i.shape.dtype == op_shape(0).dtype, i, "result dtype is wrong");
    }
    return;
  }
  switch (i.opcode) {
    case Opcode::kSelect:
      check(op_shape(0).dtype == DType::bool_, i, "predicate must be pred");
      check(op_shape(1).same_type(i.shape) && op_shape(2).same_type(i.shape), i, "cases must match the result");
      check(op_shape(0).dims.empty() || op_shape(0).dims == i.shape.dims, i, "predicate shape mismatch");
      break;
    case Opcode::kClamp:
      check(op_shape(1).same_type(i.shape), i, "operand must match the result");
      break;
    case Opcode::kBroadcastInDim: {
      const auto& bd = broadcast_dimensions_of(i);
      for (size_t k = 0; k < bd.size(); ++k)
        check(op_shape(0).dims[k] == 1 || op_shape(0).dims[k] == i.shape.dims[bd[k]], i,
              "operand dimension does not broadcast");
      break;
    }
    case Opcode::kReshape:
      check(op_shape(0).num_elements() == i.shape.num_elements(), i, "reshape changes the element count");
      break;
    case Opcode::kTranspose: {
      const auto& perm = permutation_of(i);
      check(i.shape.rank() == op_shape(0).rank(), i, "transpose changes the rank");
      for (size_t k = 0; k < perm.size(); ++k)
        check(op_shape(0).dims[perm[k]] == i.shape.dims[k], i, "permuted dims mismatch");
      break;
    }
    case Opcode::kSlice: {
      auto slice = SliceConfig::of(i);
      const auto &s = slice.start_indices, &l = slice.limit_indices, &st = slice.strides;
      check(i.shape.rank() == op_shape(0).rank(), i, "slice changes the rank");
      for (int64_t k = 0; k < op_shape(0).rank(); ++k) {
        check(s[k] >= 0 && l[k] <= op_shape(0).dims[k] && s[k] <= l[k], i, "slice out of bounds");
        check(i.shape.dims[k] == (l[k] > s[k] ? (l[k] - s[k] - 1) / st[k] + 1 : 0), i, "slice result size mismatch");
      }
      break;
    }
    case Opcode::kReduce: {
      size_t n = i.operands.size() / 2;
      check(i.operands.size() % 2 == 0, i, "reduce needs operands and inits in pairs");
      for (size_t k = n; k < i.operands.size(); ++k) check(op_shape(k).dims.empty(), i, "init values must be scalars");
      // Reducers are named, not computations: the only variadic ones are the (value, index) argmax/argmin.
      Reducer reducer = reducer_of(i);
      bool arg = reducer == Reducer::kArgmax || reducer == Reducer::kArgmin;
      check(arg ? n == 2 : n == 1, i, arg ? "an argmax/argmin reduce takes (values, indices, inits)"
                                          : "a reduce with several operands needs the argmax or argmin reducer");
      const auto& dims = dimensions_of(i);
      std::vector<int64_t> expect;
      for (int64_t k = 0; k < op_shape(0).rank(); ++k)
        if (std::find(dims.begin(), dims.end(), k) == dims.end()) expect.push_back(op_shape(0).dims[k]);
      const Shape& r = n == 1 ? i.shape : i.shape.tuple_shapes.at(0);
      check(r.dims == expect, i, "reduced shape mismatch");
      break;
    }
    case Opcode::kDot: {
      auto dn = DotDimensionNumbers::of(i);
      for (size_t k = 0; k < dn.lhs_contracting_dims.size(); ++k)
        check(op_shape(0).dims[dn.lhs_contracting_dims[k]] == op_shape(1).dims[dn.rhs_contracting_dims[k]], i,
              "contracting sizes differ");
      for (size_t k = 0; k < dn.lhs_batch_dims.size(); ++k)
        check(op_shape(0).dims[dn.lhs_batch_dims[k]] == op_shape(1).dims[dn.rhs_batch_dims[k]], i,
              "batch sizes differ");
      break;
    }
    case Opcode::kGetTupleElement:
      check(op_shape(0).is_tuple, i, "operand is not a tuple");
      check(op_shape(0).tuple_shapes[tuple_index_of(i)].same_type(i.shape), i, "element shape mismatch");
      break;
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
      check(i.shape.is_tuple && i.shape.tuple_shapes.size() == i.operands.size(), i, "tuple arity mismatch");
      for (size_t k = 0; k < i.operands.size(); ++k)
        check(op_shape(k).same_type(i.shape.tuple_shapes[k]), i, "tuple element mismatch");
      break;
    case Opcode::kConstant:
      check(i.literal && i.literal->dims == i.shape.dims && i.literal->dtype == i.shape.dtype, i, "literal mismatch");
      break;
    case Opcode::kConcatenate: {
      int64_t d = concatenate_dimension_of(i), total = 0;
      for (size_t k = 0; k < i.operands.size(); ++k) {
        check(op_shape(k).rank() == i.shape.rank(), i, fmt::format("operand {} has another rank", k));
        total += op_shape(k).dims[d];
      }
      check(total == i.shape.dims.at(d), i, "concatenated size mismatch");
      break;
    }
    case Opcode::kGather: {
      auto dn = GatherDimensionNumbers::of(i);
      check(i.shape.dtype == op_shape(0).dtype, i, "result dtype differs from the operand's");
      for (int64_t a = 0; a < op_shape(0).rank(); ++a)
        check(dn.slice_sizes[a] <= op_shape(0).dims[a], i,
              fmt::format("slice_sizes[{}]={} exceeds the operand's extent {}", a, dn.slice_sizes[a],
                          op_shape(0).dims[a]));
      break;
    }
    case Opcode::kScatter:
      ScatterDimensionNumbers::of(i);
      reducer_of(i);
      check(op_shape(0).same_type(i.shape), i, "result must match the operand");
      check(op_shape(2).dtype == op_shape(0).dtype, i, "updates dtype differs from the operand's");
      break;
    case Opcode::kSort: {
      size_t n = i.operands.size();
      check(n >= 1 && (n == 1 ? !i.shape.is_tuple : i.shape.tuple_shapes.size() == n), i, "one result per operand");
      for (size_t k = 0; k < n; ++k) {
        check(op_shape(k).dims == op_shape(0).dims, i, "sort operands must share a shape");
        check(op_shape(k).same_type(n == 1 ? i.shape : i.shape.tuple_shapes[k]), i, "sort result mismatch");
      }
      SortConfig::of(i);
      break;
    }
    case Opcode::kTopK:
      top_k_of(i);
      check(i.shape.is_tuple && i.shape.tuple_shapes.size() == 2 && i.shape.tuple_shapes[1].dtype == DType::int32, i,
            "top_k returns (values, s32 indices)");
      break;
    case Opcode::kWhile: {
      check(i.called.size() == 2, i, "while calls (condition, body)");
      check(i.shape.is_tuple && i.shape.tuple_shapes.size() == i.operands.size(), i,
            "while's shape is the tuple of its operands' shapes");
      for (size_t k = 0; k < i.operands.size(); ++k)
        check(op_shape(k).same_type(i.shape.tuple_shapes[k]), i, fmt::format("carry {} changes type", k));
      for (const Computation* c : i.called) {
        check(c->root != nullptr, i, fmt::format("%{} has no root", c->name));
        check(c->parameters.size() == i.operands.size(), i,
              fmt::format("%{} takes {} parameters, the loop carries {}", c->name, c->parameters.size(),
                          i.operands.size()));
        for (size_t k = 0; k < c->parameters.size(); ++k)
          check(c->parameters[k]->shape.same_type(op_shape(k)), i,
                fmt::format("%{} parameter {} type mismatch", c->name, k));
      }
      const Shape& pred = i.called[0]->root->shape;
      check(!pred.is_tuple && pred.dims.empty() && pred.dtype == DType::bool_, i, "the condition must return pred[]");
      check(i.called[1]->root->shape.same_type(i.shape), i, "the body must return the carry's tuple type");
      break;
    }
    case Opcode::kConditional: {
      check(!i.operands.empty() && !i.called.empty(), i, "conditional needs an index and branches");
      const Shape& idx = op_shape(0);
      check(idx.dims.empty() && (idx.dtype == DType::int32 || (idx.dtype == DType::bool_ && i.called.size() == 2)), i,
            "the index must be s32[] (or pred[] with two branches)");
      for (const Computation* c : i.called) {
        check(c->root != nullptr, i, fmt::format("%{} has no root", c->name));
        check(c->parameters.size() + 1 == i.operands.size(), i,
              fmt::format("branch %{} takes {} parameters for {} operands", c->name, c->parameters.size(),
                          i.operands.size() - 1));
        for (size_t k = 0; k < c->parameters.size(); ++k)
          check(c->parameters[k]->shape.same_type(op_shape(k + 1)), i,
                fmt::format("branch %{} parameter {} type mismatch", c->name, k));
        check(c->root->shape.same_type(i.shape), i,
              fmt::format("branch %{} returns {}", c->name, c->root->shape.str()));
      }
      break;
    }
    case Opcode::kConvolution:
    {
      check(op_shape(0).dtype == op_shape(1).dtype && op_shape(0).rank() == op_shape(1).rank(), i,
            "convolution operands need equal dtypes and ranks");
      // Feature and batch counts, and each output spatial size, as the attributes make them: a backend writes
      // the result it computes into a buffer of the declared shape.
      ConvConfig c = ConvConfig::of(i);
      const auto& d = c.dnums;
      const auto &ld = op_shape(0).dims, &rd = op_shape(1).dims, &od = i.shape.dims;
      int64_t fg = c.feature_group_count, bg = c.batch_group_count;
      int64_t in_f = ld[d.input_feature_dimension], k_in = rd[d.kernel_input_feature_dimension],
              k_out = rd[d.kernel_output_feature_dimension], in_b = ld[d.input_batch_dimension];
      check(in_f == k_in * fg, i,
            fmt::format("convolution: lhs features {} must be kernel input features {} x feature_group_count {}", in_f,
                        k_in, fg));
      check(k_out % fg == 0 && k_out % bg == 0 && in_b % bg == 0, i,
            fmt::format("convolution: kernel output features {} and lhs batch {} must divide by the group counts",
                        k_out, in_b));
      check(od[d.output_feature_dimension] == k_out && od[d.output_batch_dimension] * bg == in_b, i,
            fmt::format("convolution: result {} needs {} features and batch {}", i.shape.str(), k_out, in_b / bg));
      for (size_t k = 0; k < d.input_spatial_dimensions.size(); ++k) {
        int64_t in = ld[d.input_spatial_dimensions[k]], w = rd[d.kernel_spatial_dimensions[k]];
        int64_t din = in == 0 ? 0 : (in - 1) * c.window.base_dilations[k] + 1;
        int64_t dw = w == 0 ? 0 : (w - 1) * c.window.window_dilations[k] + 1;
        int64_t span = din + c.window.padding[k].low + c.window.padding[k].high - dw;
        int64_t want = span < 0 ? 0 : span / c.window.strides[k] + 1;
        check(od[d.output_spatial_dimensions[k]] == want, i,
              fmt::format("convolution: result {} has {} along spatial axis {}, the window gives {}", i.shape.str(),
                          od[d.output_spatial_dimensions[k]], k, want));
      }
      break;
    }
    case Opcode::kIota:
      iota_dimension_of(i);
      break;
    case Opcode::kReverse:
      check(op_shape(0).same_type(i.shape), i, "reverse changes the type");
      dimensions_of(i);
      break;
    case Opcode::kPad:
      check(op_shape(0).rank() == i.shape.rank(), i, "pad changes the rank");
      PaddingConfig::of(i);
      break;
    case Opcode::kReduceWindow:
      Window::of(i);
      reducer_of(i);
      break;
    case Opcode::kCopy:
      check(op_shape(0).same_type(i.shape), i, "copy changes the type");
      break;
    case Opcode::kPartitionId:
      check(i.shape.dtype == DType::uint32 && i.shape.dims.empty() && !i.shape.is_tuple, i, "partition-id is u32[]");
      break;
    case Opcode::kAllReduceDone:
    case Opcode::kAllGatherDone:
    case Opcode::kReduceScatterDone:
    case Opcode::kAllToAllDone:
    case Opcode::kCollectivePermuteDone:
      check(i.operand(0)->opcode == async_start_of(sync_collective_of(i.opcode)), i,
            fmt::format("the operand of {} must be an {}", opcode_name(i.opcode),
                        opcode_name(async_start_of(sync_collective_of(i.opcode)))));
      check(op_shape(0).same_type(i.shape), i, "a done has its start's type");
      check(i.operand(0)->users().size() == 1, i, "a collective's start has exactly one user, its done");
      break;
    case Opcode::kAllReduceStart:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatterStart:
    case Opcode::kAllToAllStart:
    case Opcode::kCollectivePermuteStart:
      check(i.parent && i.parent->root != &i && i.users().size() == 1 &&
                i.users()[0]->opcode == async_done_of(sync_collective_of(i.opcode)),
            i, fmt::format("{} must have exactly one user, its {} (and not be the root)", opcode_name(i.opcode),
                           opcode_name(async_done_of(sync_collective_of(i.opcode)))));
      [[fallthrough]];
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute: {
      auto cfg = CollectiveConfig::of(i);
      Opcode op = sync_collective_of(i.opcode);
      check(!op_shape(0).is_tuple && op_shape(0).dtype == i.shape.dtype && op_shape(0).rank() == i.shape.rank(), i,
            "a collective keeps its operand's dtype and rank");
      if (op == Opcode::kAllReduce || op == Opcode::kReduceScatter) reducer_of(i);
      int64_t g = cfg.replica_groups.empty() ? -1 : static_cast<int64_t>(cfg.replica_groups[0].size());
      for (int64_t k = 0; k < i.shape.rank(); ++k) {
        int64_t in = op_shape(0).dims[static_cast<size_t>(k)], out = i.shape.dims[static_cast<size_t>(k)];
        bool ok = in == out;
        if (k == cfg.dimension && op == Opcode::kAllGather)
          ok = g > 0 ? out == in * g : (in > 0 ? out % in == 0 : out == 0);
        if (k == cfg.dimension && op == Opcode::kReduceScatter)
          ok = g > 0 ? out * g == in : (out > 0 ? in % out == 0 : in == 0);
        if (k == cfg.dimension && op == Opcode::kAllToAll && g > 0) ok = ok && in % g == 0;
        check(ok, i, fmt::format("dimension {} of the result ({}) does not fit the operand's ({})", k, out, in));
      }
      if (auto s = sharding_of(i); s && !s->replicated)
        check(s->rank() == i.shape.rank(), i, "the sharding's rank differs from the shape's");
      break;
    }
    case Opcode::kFusion: {
      check(i.called.size() == 1, i, "a fusion calls exactly one computation");
      const Computation* f = i.called[0];
      check(f->parameters.size() == i.operands.size(), i, "fused computation parameters != operands");
      for (size_t k = 0; k < i.operands.size(); ++k)
        check(f->parameters[k]->shape.same_type(op_shape(k)), i, fmt::format("fused parameter {} type mismatch", k));
      check(f->root && f->root->shape.same_type(i.shape), i, "fused root type != fusion type");
      fusion_kind_of(i);
      in_place_parameter_of(i);
      for (auto& fi : f->instructions) check(fi->called.empty(), i, "a fused computation calls another computation");
      break;
    }
    default:
      break;
  }
}

void verify_sharding(const Instruction& i) {
  if (!i.attrs.has("sharding")) return;
  std::optional<HloSharding> s;
  try {
    s = sharding_of(i);
  } catch (const std::bad_variant_access&) {
    fail(i, "the sharding attribute is not text");
  } catch (const Error& e) {
    fail(i, e.what());
  }
  if (!s->replicated && !i.shape.is_tuple)
    check(s->rank() == i.shape.rank(), i,
          fmt::format("sharding {} tiles {} dimensions, the shape has {}", s->to_string(), s->rank(), i.shape.rank()));
}

void verify_layout(const Instruction& i, const Shape& s) {
  if (s.is_tuple) {
    for (auto& t : s.tuple_shapes) verify_layout(i, t);
    return;
  }
  if (s.layout.empty()) return;
  std::vector<int64_t> sorted = s.layout;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(sorted.size()) == s.rank();
  for (size_t k = 0; ok && k < sorted.size(); ++k) ok = sorted[k] == static_cast<int64_t>(k);
  check(ok, i, fmt::format("layout {{{}}} is not a permutation of the dimensions", fmt::join(s.layout, ",")));
}
}  // namespace

void verify(const Module& m) {
  if (!m.entry) throw CompileError(fmt::format("[hlo verifier] module {} has no entry computation", m.name));
  for (auto& c : m.computations) {
    std::unordered_set<const Instruction*> seen;
    std::unordered_set<std::string> names;
    for (auto& up : c->instructions) {
      const Instruction& i = *up;
      check(i.parent == c.get(), i, "instruction belongs to another computation");
      check(names.insert(i.name).second, i, "duplicate instruction name");
      for (auto* o : i.operands)
        check(o && seen.count(o), i, "operand is not defined before its use in this computation");
      verify_instruction(i);
      verify_layout(i, i.shape);
      verify_sharding(i);
      seen.insert(&i);
    }
    if (!c->root) throw CompileError(fmt::format("[hlo verifier] computation {} has no root", c->name));
    if (!seen.count(c->root)) throw CompileError(fmt::format("[hlo verifier] root of {} is not in it", c->name));
    for (size_t k = 0; k < c->parameters.size(); ++k)
      if (c->parameters[k]->parameter_number != static_cast<int64_t>(k))
        throw CompileError(fmt::format("[hlo verifier] parameters of {} are not numbered 0..n-1", c->name));
  }
}

}  // namespace jitx::hlo
