// The CPU backend's library ops against the interpreter, all run natively: sort (stable, multi-operand, several
// keys) and top-k, gather and scatter with every reducer, reduce-window and the argmax/argmin reduces.
#include <catch2/catch.hpp>

#include <utility>

#include "backend_test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
/// An entry computation `<body>` whose root returns the named results as a flat tuple.
std::string module_with(const std::vector<std::string>& params, const std::string& body,
                        const std::vector<std::pair<std::string, std::string>>& results) {
  std::string sig, ps, rs, rn;
  for (size_t i = 0; i < params.size(); ++i) {
    sig += fmt::format("{}p{}: {}", i ? ", " : "", i, params[i]);
    ps += fmt::format("  %p{} = {} parameter({})\n", i, params[i], i);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    rs += (i ? ", " : "") + results[i].second;
    rn += std::string(i ? ", " : "") + "%" + results[i].first;
  }
  return fmt::format("HloModule m\n\nENTRY %main ({}) -> ({}) {{\n{}{}  ROOT %t = ({}) tuple({})\n}}\n", sig, rs, ps,
                     body, rs, rn);
}
}  // namespace

TEST_CASE("cpu: sort (stable, multi-operand, several keys) and top-k run natively", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::float64, DType::int32, DType::uint8, DType::int64}) {
    std::string s = shape_text(d, {6, 33}), t = shape_text(d, {5, 7, 4});
    INFO(hlo_name(d));
    // Values in [-4, 4): many ties (stability is visible through the payload), -0.0 and 0.0 for floats.
    check_native(one_op(s, "sort", {s}, ", dimension=1, num_keys=1, is_stable=true"), -4, 4);
    check_native(one_op(t, "sort", {t}, ", dimension=1, num_keys=1, is_stable=true"), -4, 4);
    check_native(one_op(t, "sort", {t}, ", dimension=0, num_keys=1, is_stable=true"), -4, 4);
    // Keys with a payload; two keys with a payload.
    std::string u = shape_text(DType::int32, {6, 33});
    check_native(
        module_with({s, u},
                    "  %r = (" + s + ", " + u +
                        ") sort(%p0, %p1), dimension=1, num_keys=1, is_stable=true\n"
                        "  %a = " +
                        s + " get-tuple-element(%r), index=0\n  %b = " + u + " get-tuple-element(%r), index=1\n",
                    {{"a", s}, {"b", u}}),
        -4, 4);
    check_native(
        module_with({s, s, u},
                    "  %r = (" + s + ", " + s + ", " + u +
                        ") sort(%p0, %p1, %p2), dimension=1, num_keys=2, is_stable=true\n"
                        "  %a = " +
                        s + " get-tuple-element(%r), index=0\n  %c = " + u + " get-tuple-element(%r), index=2\n",
                    {{"a", s}, {"c", u}}),
        -2, 2);
    std::string k = shape_text(d, {6, 5}), ki = shape_text(DType::int32, {6, 5});
    check_native(module_with({s},
                             "  %r = (" + k + ", " + ki + ") topk(%p0), k=5\n  %a = " + k +
                                 " get-tuple-element(%r), index=0\n  %b = " + ki + " get-tuple-element(%r), index=1\n",
                             {{"a", k}, {"b", ki}}),
                 -4, 4);
  }
  // NaNs sort last (the interpreter's order); check through a float key computed as log of negative numbers.
  check_native(
      module_with({"f32[4,20]"},
                  "  %l = f32[4,20] log(%p0)\n  %r = f32[4,20] sort(%l), dimension=1, num_keys=1, is_stable=true\n",
                  {{"r", "f32[4,20]"}}),
      -1, 3);
}

TEST_CASE("cpu: gather and scatter (every reducer, clamped and dropped indices) run natively", "[cpu]") {
  const std::string gdn = ", offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                          "slice_sizes={1,7}, operand_batching_dims={}, start_indices_batching_dims={}";
  const std::string gdn2 = ", offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, "
                           "slice_sizes={3,2}, operand_batching_dims={}, start_indices_batching_dims={}";
  for (DType d : {DType::float32, DType::bfloat16, DType::float64, DType::int32, DType::uint8}) {
    INFO(hlo_name(d));
    // Indices in [-3, 14) over 10 rows: some clamp at either end.
    check_native(one_op(shape_text(d, {9, 7}), "gather", {shape_text(d, {10, 7}), "s32[9,1]"}, gdn), -3, 14);
    check_native(one_op(shape_text(d, {5, 3, 2}), "gather", {shape_text(d, {10, 6}), "s64[5,2]"}, gdn2), -3, 14);
    for (const char* r : {"add", "mul", "max", "min", "replace"}) {
      INFO(r);
      // 12 updates into 10 rows: duplicates combine in update order; windows out of range are dropped.
      check_native(
          one_op(shape_text(d, {10, 7}), "scatter", {shape_text(d, {10, 7}), "s32[12,1]", shape_text(d, {12, 7})},
                 fmt::format(
                     ", update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, "
                     "index_vector_dim=1, input_batching_dims={{}}, scatter_indices_batching_dims={{}}, reducer={}",
                     r)),
          -2, 12);
    }
  }
}

TEST_CASE("cpu: reduce-window and argmax/argmin reduces run natively", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::float16, DType::int32}) {
    INFO(hlo_name(d));
    std::string in = shape_text(d, {8, 9}), init = shape_text(d, {});
    for (const char* r : {"add", "max", "min"}) {
      INFO(r);
      // 3x3 windows, stride 2, padding 1: [8,9] -> [4,5].
      check_native(one_op(shape_text(d, {4, 5}), "reduce-window", {in, init},
                          fmt::format(", window_dimensions={{3,3}}, window_strides={{2,2}}, padding={{1,1,1,1}}, "
                                      "base_dilations={{1,1}}, window_dilations={{1,1}}, reducer={}", r)));
      // Base dilation 2 on dim 0 (15 rows), window dilation 2 on dim 1 (effective width 5): [8,9] -> [8,3].
      check_native(one_op(shape_text(d, {8, 3}), "reduce-window", {in, init},
                          fmt::format(", window_dimensions={{3,3}}, window_strides={{2,2}}, padding={{1,1,1,1}}, "
                                      "base_dilations={{2,1}}, window_dilations={{1,2}}, reducer={}", r)));
    }
    if (d == DType::float32) {
      // NHWC pooling (the last dim not windowed: the row path): 2x2 stride 2 ([2,7,9,5] -> [2,4,5,5], padding
      // high 1 on the odd dims), and 3x3 stride 1 with padding 1 on both sides; f64 too.
      for (DType f : {DType::float32, DType::float64})
        for (const char* r : {"add", "max", "min"}) {
          INFO(hlo_name(f) << " pooling " << r);
          std::string x4 = shape_text(f, {2, 7, 9, 5}), i4 = shape_text(f, {});
          check_native(one_op(shape_text(f, {2, 4, 5, 5}), "reduce-window", {x4, i4},
                              fmt::format(", window_dimensions={{1,2,2,1}}, window_strides={{1,2,2,1}}, "
                                          "padding={{0,0,0,1,0,1,0,0}}, base_dilations={{1,1,1,1}}, "
                                          "window_dilations={{1,1,1,1}}, reducer={}", r)));
          check_native(one_op(shape_text(f, {2, 7, 9, 5}), "reduce-window", {x4, i4},
                              fmt::format(", window_dimensions={{1,3,3,1}}, window_strides={{1,1,1,1}}, "
                                          "padding={{0,0,1,1,1,1,0,0}}, base_dilations={{1,1,1,1}}, "
                                          "window_dilations={{1,1,1,1}}, reducer={}", r)));
        }
    }
    for (const char* r : {"argmax", "argmin"})
      for (int dim : {0, 1}) {
        INFO(r << " over " << dim);
        std::string od = shape_text(d, {dim == 0 ? 9 : 8}), oi = shape_text(DType::int32, {dim == 0 ? 9 : 8});
        // Values in [-3, 3) rounded to integers for int32: ties pick the first index.
        check_native(module_with(
            {in},
            fmt::format("  %i = s32[8,9] iota(), iota_dimension={0}\n"
                        "  %c0 = {1} constant(0)\n  %c1 = s32[] constant(0)\n"
                        "  %r = ({2}, {3}) reduce(%p0, %i, %c0, %c1), dimensions={{{0}}}, reducer={4}\n"
                        "  %v = {2} get-tuple-element(%r), index=0\n  %x = {3} get-tuple-element(%r), index=1\n",
                        dim, init, od, oi, r),
            {{"v", od}, {"x", oi}}));
      }
  }
}

TEST_CASE("cpu: jitted sort and argsort against a hand-sorted vector", "[cpu]") {
  Array x = array(std::vector<float>{3.5f, -1.f, 2.f, -7.25f, 0.f, 9.f});
  auto srt = jit([](Array v) { return jnp::sort(v); });
  auto arg = jit([](Array v) { return jnp::argsort(v); });
  CHECK(srt(x).to_vector<float>() == std::vector<float>{-7.25f, -1.f, 0.f, 2.f, 3.5f, 9.f});
  CHECK(arg(x).to_vector<int32_t>() == std::vector<int32_t>{3, 1, 4, 2, 0, 5});
}
