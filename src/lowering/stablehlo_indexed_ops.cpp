// The StableHLO printer's ops with dimension numbers, windows or a comparator: reduce_window, gather, scatter,
// sort, top_k, convolution (all in the generic form, with their attributes in MLIR's order).
#include "core/errors.h"
#include "hlo/ir/attributes.h"
#include "lowering/stablehlo_format.h"
#include "lowering/stablehlo_printer.h"

namespace jitx::detail {
namespace {
/// A gather's or scatter's dimension numbers as MLIR prints them: `key = [1, 2]` for the non-empty lists, then
/// index_vector_dim.
std::string dimension_numbers(std::initializer_list<std::pair<std::string_view, const std::vector<int64_t>*>> lists,
                              int64_t index_vector_dim) {
  std::vector<std::string> dn;
  for (auto& [key, v] : lists)
    if (!v->empty()) dn.push_back(fmt::format("{} = [{}]", key, fmt::join(*v, ", ")));
  dn.push_back(fmt::format("index_vector_dim = {}", index_vector_dim));
  return fmt::format("{}", fmt::join(dn, ", "));
}

/// "[b, 0, 1, f]" style labels of a convolution operand: first/second are the labels of spec[0] and spec[1].
std::string conv_labels(const std::vector<int64_t>& spec, const char* first, const char* second) {
  std::vector<std::string> l(spec.size());
  l[spec[0]] = first;
  l[spec[1]] = second;
  for (size_t k = 2; k < spec.size(); ++k) l[spec[k]] = std::to_string(k - 2);
  return fmt::format("[{}]", fmt::join(l, ", "));
}
}  // namespace

/// Ops with dimension numbers, windows or a comparator: reduce_window, gather, scatter, sort, top_k, convolution.
void print_indexed_op(StablehloPrinter& p, std::string& out, const Instruction& i, std::string_view op) {
  switch (i.opcode) {
    case Opcode::kReduceWindow: {
      auto w = hlo::Window::of(i);
      std::vector<std::string> pairs;
      for (auto& pad : w.padding) pairs.push_back(fmt::format("[{}, {}]", pad.low, pad.high));
      // Properties in MLIR's (alphabetical) order, as JAX prints them.
      std::string attrs = fmt::format(
          "base_dilations = {}, padding = dense<{}> : tensor<{}x2xi64>, window_dilations = {}, window_dimensions = {}, "
          "window_strides = {}",
          i64_array(w.base_dilations), pairs.empty() ? "" : fmt::format("[{}]", fmt::join(pairs, ", ")),
          pairs.size(), i64_array(w.window_dilations), i64_array(w.dimensions), i64_array(w.strides));
      return p.generic(out, i, op, attrs, binary_region(p, hlo::reducer_of(i), i.operand(0)->shape.dtype));
    }
    case Opcode::kGather: {
      auto g = hlo::GatherDimensionNumbers::of(i);
      std::string dn = dimension_numbers({{"offset_dims", &g.offset_dims},
                                          {"collapsed_slice_dims", &g.collapsed_slice_dims},
                                          {"operand_batching_dims", &g.operand_batching_dims},
                                          {"start_indices_batching_dims", &g.start_indices_batching_dims},
                                          {"start_index_map", &g.start_index_map}},
                                         g.index_vector_dim);
      return p.generic(
          out, i, op,
          fmt::format("dimension_numbers = #stablehlo.gather<{}>, indices_are_sorted = {}, slice_sizes = {}", dn,
                      g.indices_are_sorted ? "true" : "false", i64_array(g.slice_sizes)));
    }
    case Opcode::kScatter: {
      auto s = hlo::ScatterDimensionNumbers::of(i);
      std::string dn = dimension_numbers({{"update_window_dims", &s.update_window_dims},
                                          {"inserted_window_dims", &s.inserted_window_dims},
                                          {"input_batching_dims", &s.input_batching_dims},
                                          {"scatter_indices_batching_dims", &s.scatter_indices_batching_dims},
                                          {"scatter_dims_to_operand_dims", &s.scatter_dims_to_operand_dims}},
                                         s.index_vector_dim);
      return p.generic(out, i, op,
                       fmt::format("indices_are_sorted = {}, scatter_dimension_numbers = #stablehlo.scatter<{}>, "
                                   "unique_indices = {}",
                                   s.indices_are_sorted ? "true" : "false", dn, s.unique_indices ? "true" : "false"),
                       scatter_region(p, hlo::reducer_of(i), i.operand(0)->shape.dtype));
    }
    case Opcode::kSort: {
      std::vector<DType> types;
      for (auto* o : i.operands) types.push_back(o->shape.dtype);
      auto cfg = hlo::SortConfig::of(i);
      return p.generic(
          out, i, op,
          fmt::format("dimension = {} : i64, is_stable = {}", cfg.dimension, cfg.is_stable ? "true" : "false"),
          sort_region(types, cfg.num_keys, "    "));
    }
    case Opcode::kTopK: return p.generic(out, i, op, fmt::format("k = {} : i64", hlo::top_k_of(i)));
    case Opcode::kConvolution: {
      auto c = hlo::ConvConfig::of(i);
      std::string attrs = fmt::format(
          "batch_group_count = {} : i64, dimension_numbers = #stablehlo.conv<{}x{}->{}>, feature_group_count = {} : "
          "i64",
          c.batch_group_count, conv_labels(c.dnums.lhs_spec(), "b", "f"), conv_labels(c.dnums.rhs_spec(), "o", "i"),
          conv_labels(c.dnums.out_spec(), "b", "f"), c.feature_group_count);
      if (c.window.rank() > 0) {  // no spatial axes: the window attributes are left out (their defaults)
        std::vector<std::string> pairs;
        for (auto& pad : c.window.padding) pairs.push_back(fmt::format("[{}, {}]", pad.low, pad.high));
        attrs += fmt::format(", lhs_dilation = {}, padding = dense<[{}]> : tensor<{}x2xi64>, rhs_dilation = {}, "
                             "window_strides = {}",
                             i64_array(c.window.base_dilations), fmt::join(pairs, ", "), pairs.size(),
                             i64_array(c.window.window_dilations), i64_array(c.window.strides));
      }
      return p.generic(out, i, op, attrs);
    }
    default:
      JITX_ASSERT(false, "print_indexed_op: {} is not an indexed op", hlo::opcode_name(i.opcode));
  }
}

}  // namespace jitx::detail
