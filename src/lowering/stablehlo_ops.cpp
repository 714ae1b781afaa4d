// The StableHLO printer's plain ops: constants, tuple elements, elementwise and structural ops in their pretty
// forms, and the generic form for the rest.
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/custom_call.h"
#include "lowering/stablehlo_format.h"
#include "lowering/stablehlo_printer.h"

namespace jitx::detail {

/// Constants, tuple elements, elementwise and structural ops (broadcast, reshape, slice, pad, dot, ...), in their
/// pretty forms; anything else without a pretty form here in the generic form.
void print_plain_op(StablehloPrinter& p, std::string& out, const Instruction& i, std::string_view op) {
  switch (i.opcode) {
    case Opcode::kConstant: {
      std::string n = p.fresh_named(is_floating(i.shape.dtype) ? "cst" : "c");
      p.set_name(i, n);
      out += fmt::format("    {} = stablehlo.constant {} : {}\n", n, dense_literal(*i.literal), i.shape.mlir());
      return;
    }
    case Opcode::kGetTupleElement:
      if (i.operand(0)->opcode != Opcode::kTuple && !multi_result(*i.operand(0))) {
        p.set_name(i, p.name(i.operand(0)));  // the single result of a one-element tuple op
        return;
      }
      if (i.operand(0)->opcode != Opcode::kTuple) {
        p.set_name(i, fmt::format("{}#{}", p.name(i.operand(0)), hlo::tuple_index_of(i)));
        return;
      }
      p.set_name(i, p.name(i.operand(0)->operand(hlo::tuple_index_of(i))));
      return;
    case Opcode::kCompare: {
      auto c = hlo::Comparison::of(i);
      return p.pretty(out, i, op,
                      fmt::format("{}, {}, {}, {} : {}", hlo::comparison_direction_name(c.direction),
                                  p.name(i.operand(0)), p.name(i.operand(1)), hlo::comparison_type_name(c.type),
                                  functional_type(i)));
    }
    case Opcode::kSelect: {
      // custom<SelectOpType>: `pred type, result type` when both cases have the result's type.
      bool same = i.operand(1)->shape.mlir() == i.shape.mlir() && i.operand(2)->shape.mlir() == i.shape.mlir();
      return p.pretty(out, i, op,
                      fmt::format("{} : {}", p.operand_list(i),
                                  same ? fmt::format("{}, {}", i.operand(0)->shape.mlir(), i.shape.mlir())
                                       : functional_type(i)));
    }
    case Opcode::kBroadcastInDim:
      return p.pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", p.operand_list(i), dims_list(hlo::broadcast_dimensions_of(i)),
                                  functional_type(i)));
    case Opcode::kReshape:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
      return p.pretty(out, i, op, fmt::format("{} : {}", p.operand_list(i), functional_type(i)));
    case Opcode::kTranspose:
      return p.pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", p.operand_list(i), dims_list(hlo::permutation_of(i)),
                                  functional_type(i)));
    case Opcode::kReverse:
      return p.pretty(out, i, op,
                      fmt::format("{}, dims = {} : {}", p.operand_list(i), dims_list(hlo::dimensions_of(i)),
                                  same_or_functional_type(i)));
    case Opcode::kIota:
      return p.pretty(out, i, op, fmt::format("dim = {} : {}", hlo::iota_dimension_of(i), i.shape.mlir()));
    case Opcode::kConcatenate:
      return p.pretty(
          out, i, op,
          fmt::format("{}, dim = {} : {}", p.operand_list(i), hlo::concatenate_dimension_of(i), functional_type(i)));
    case Opcode::kSlice: {
      auto slice = hlo::SliceConfig::of(i);
      const auto &start = slice.start_indices, &limit = slice.limit_indices, &strides = slice.strides;
      std::vector<std::string> ranges;
      for (size_t k = 0; k < start.size(); ++k)
        ranges.push_back(strides[k] == 1 ? fmt::format("{}:{}", start[k], limit[k])
                                         : fmt::format("{}:{}:{}", start[k], limit[k], strides[k]));
      return p.pretty(out, i, op,
                      fmt::format("{} [{}] : {}", p.operand_list(i), fmt::join(ranges, ", "), functional_type(i)));
    }
    case Opcode::kDynamicSlice:
      return p.pretty(out, i, op,
                      fmt::format("{}, sizes = {} : {}", p.operand_list(i), dims_list(i.shape.dims),
                                  functional_type(i)));
    case Opcode::kDynamicUpdateSlice:
      return p.pretty(out, i, op, fmt::format("{} : {}", p.operand_list(i), functional_type(i)));
    case Opcode::kPad: {
      auto pad = hlo::PaddingConfig::of(i);
      return p.pretty(out, i, op,
                      fmt::format("{}, low = {}, high = {}, interior = {} : {}", p.operand_list(i), dims_list(pad.low),
                                  dims_list(pad.high), dims_list(pad.interior), functional_type(i)));
    }
    case Opcode::kDot: {
      auto dn = hlo::DotDimensionNumbers::of(i);
      const auto &lb = dn.lhs_batch_dims, &rb = dn.rhs_batch_dims;
      std::string batch = lb.empty() ? "" : fmt::format("batching_dims = {} x {}, ", dims_list(lb), dims_list(rb));
      return p.pretty(
          out, i, op,
          fmt::format("{}, {}contracting_dims = {} x {}, precision = [DEFAULT, DEFAULT] : {}", p.operand_list(i), batch,
                      dims_list(dn.lhs_contracting_dims), dims_list(dn.rhs_contracting_dims), functional_type(i)));
    }
    case Opcode::kCustomCall: {
      if (print_collective_op(p, out, i)) return;  // shard_map's sharding custom-calls
      // jitx's linalg ops: the target names the op, backend_config carries its flags ("lower=true,...").
      if (hlo::is_host_callback(i))  // a host callback, named by its id in this process
        return p.generic(out, i, op, fmt::format("api_version = 1 : i32, backend_config = \"callback_id={}\", "
                                                 "call_target_name = \"{}\", has_side_effect = {}",
                                                 i.attrs.get_int("callback_id"), hlo::custom_call_target(i),
                                                 i.attrs.get_bool("has_side_effect", true) ? "true" : "false"));
      if (!hlo::is_pure_custom_call(i)) break;
      std::vector<std::string> cfg;
      for (auto& [k, v] : i.attrs.items())
        if (auto* b = std::get_if<bool>(&v)) cfg.push_back(fmt::format("{}={}", k, *b ? "true" : "false"));
      return p.generic(out, i, op, fmt::format("api_version = 1 : i32, backend_config = \"{}\", call_target_name = "
                                               "\"{}\", has_side_effect = false", fmt::join(cfg, ","),
                                               hlo::custom_call_target(i)));
    }
    default:
      if (print_collective_op(p, out, i)) return;
      break;
  }
  if (op.empty() || op == "stablehlo.custom_call" || op == "func.call" || op == "stablehlo.while" ||
    op == "stablehlo.case")
    throw_error<CompileError>("stablehlo", "printing {} as StableHLO is not supported yet", hlo::opcode_name(i.opcode));
  if (hlo::is_elementwise(i.opcode)) {
    // chlo ops print `%x : T -> R`; stablehlo ones one type when operands and result agree, else (..) -> R.
    if (op.starts_with("chlo."))
    return p.pretty(out, i, op, fmt::format("{} : {} -> {}", p.operand_list(i), operand_types(i), result_types(i)));
    return p.pretty(out, i, op, fmt::format("{} : {}", p.operand_list(i), same_or_functional_type(i)));
  }
  // Anything else without a pretty form here.
  p.generic(out, i, op, "");
}

}  // namespace jitx::detail
