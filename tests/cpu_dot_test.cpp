// The CPU backend's dots and convolutions against the interpreter: dot_general through Eigen (plain, transposed,
// batched, integer), output fusions (a dot and its epilogue in one kernel), and convolutions of every layout,
// stride, padding, dilation and grouping, all run natively.
#include <catch2/catch.hpp>

#include "backend_test_util.h"

using namespace jitx;
using namespace jitx::testing;

TEST_CASE("cpu: dot_general through Eigen (plain, transposed, batched) and integer dots", "[cpu]") {
  auto check_dot = [](const std::string& text) { check_module(text, -3, 3, kDotAtolScale); };
  auto dot = [](DType d, std::vector<int64_t> l, std::vector<int64_t> r, std::vector<int64_t> o, const char* attrs) {
    return one_op(shape_text(d, o), "dot", {shape_text(d, l), shape_text(d, r)}, attrs);
  };
  for (DType d : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int32}) {
    check_dot(dot(d, {37, 64}, {64, 29}, {37, 29},
                  ", lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, "
                  "rhs_contracting_dimensions={0}"));
    check_dot(dot(d, {64, 37}, {29, 64}, {37, 29},
                  ", lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, "
                  "rhs_contracting_dimensions={1}"));
    check_dot(dot(d, {3, 8, 5}, {5, 3, 7}, {3, 8, 7},
                  ", lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={1}, "
                  "rhs_contracting_dimensions={0}"));
    check_dot(dot(d, {16}, {16}, {},
                  ", lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, "
                  "rhs_contracting_dimensions={0}"));
  }
}

TEST_CASE("cpu: output fusions (dot + epilogue) run natively and match the interpreter", "[cpu]") {
  // The dot sums K products in another order than the interpreter: atol scales as for plain dots. bf16/f16 dots
  // accumulate in f32 and round the product to their type before the epilogue, as the unfused dot does.
  auto gelu_bias = [](DType d, DType out, const std::string& ldims, const std::string& rdims, const std::string& cd) {
    std::string s = hlo_name(d), o = hlo_name(out);
    std::string tail = d == out ? "ROOT %g = {0}[24,40] multiply(%hx, %p1)"
                                : "%g0 = {0}[24,40] multiply(%hx, %p1)\n  ROOT %g = {3}[24,40] convert(%g0)";
    return fmt::format(R"(HloModule m

%fused (x: {0}{1}, w: {0}{2}, b: {0}[40]) -> {3}[24,40] {{
  %x = {0}{1} parameter(0)
  %w = {0}{2} parameter(1)
  %b = {0}[40] parameter(2)
  %d = {0}[24,40] dot(%x, %w), {4}
  %bb = {0}[24,40] broadcast(%b), broadcast_dimensions={{1}}
  %h = {0}[24,40] add(%d, %bb)
  %c = {0}[] constant(0.7978845608)
  %cb = {0}[24,40] broadcast(%c), broadcast_dimensions={{}}
  %k = {0}[] constant(0.044715)
  %kb = {0}[24,40] broadcast(%k), broadcast_dimensions={{}}
  %h2 = {0}[24,40] multiply(%h, %h)
  %h3 = {0}[24,40] multiply(%h2, %h)
  %kh3 = {0}[24,40] multiply(%kb, %h3)
  %in = {0}[24,40] add(%h, %kh3)
  %ic = {0}[24,40] multiply(%in, %cb)
  %t = {0}[24,40] tanh(%ic)
  %one = {0}[] constant(1)
  %ob = {0}[24,40] broadcast(%one), broadcast_dimensions={{}}
  %p1 = {0}[24,40] add(%t, %ob)
  %half = {0}[] constant(0.5)
  %hb = {0}[24,40] broadcast(%half), broadcast_dimensions={{}}
  %hx = {0}[24,40] multiply(%h, %hb)
  {5}
}}

ENTRY %main (x: {0}{1}, w: {0}{2}, b: {0}[40]) -> ({3}[24,40]) {{
  %x = {0}{1} parameter(0)
  %w = {0}{2} parameter(1)
  %b = {0}[40] parameter(2)
  %f = {3}[24,40] fusion(%x, %w, %b), kind=kOutput, calls=%fused
  ROOT %t = ({3}[24,40]) tuple(%f)
}}
)", s, ldims, rdims, o, cd, fmt::format(fmt::runtime(tail), s, "", "", o));
  };
  const std::string plain =
      "lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, "
      "rhs_contracting_dimensions={0}";
  const std::string trans =
      "lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, "
      "rhs_contracting_dimensions={1}";
  for (DType d : kFloats) {
    INFO(hlo_name(d));
    check_native(gelu_bias(d, d, "[24,96]", "[96,40]", plain), -1, 1, kDotAtolScale);
    check_native(gelu_bias(d, d, "[96,24]", "[40,96]", trans), -1, 1, kDotAtolScale);
    // An epilogue whose result type is not the product's (no in-place rewrite: a temporary holds the product),
    // compared at the tolerance of the less precise of the two types (the epilogue rounds in d).
    DType out = d == DType::float32 ? DType::bfloat16 : DType::float32;
    check_native(gelu_bias(d, out, "[24,96]", "[96,40]", plain), -1, 1, kDotAtolScale,
                 dtype_size(d) < dtype_size(out) ? d : out);
  }
  // Batched dot with a per-batch bias and a transcendental epilogue, large enough to split across threads.
  for (DType d : {DType::float32, DType::bfloat16}) {
    check_native(fmt::format(R"(HloModule m

%fused (x: {0}[4,64,80], w: {0}[4,80,300], b: {0}[4,300]) -> {0}[4,64,300] {{
  %x = {0}[4,64,80] parameter(0)
  %w = {0}[4,80,300] parameter(1)
  %b = {0}[4,300] parameter(2)
  %d = {0}[4,64,300] dot(%x, %w), lhs_batch_dimensions={{0}}, lhs_contracting_dimensions={{2}}, rhs_batch_dimensions={{0}}, rhs_contracting_dimensions={{1}}
  %bb = {0}[4,64,300] broadcast(%b), broadcast_dimensions={{0,2}}
  %h = {0}[4,64,300] add(%d, %bb)
  ROOT %e = {0}[4,64,300] logistic(%h)
}}

ENTRY %main (x: {0}[4,64,80], w: {0}[4,80,300], b: {0}[4,300]) -> ({0}[4,64,300]) {{
  %x = {0}[4,64,80] parameter(0)
  %w = {0}[4,80,300] parameter(1)
  %b = {0}[4,300] parameter(2)
  %f = {0}[4,64,300] fusion(%x, %w, %b), kind=kOutput, calls=%fused
  ROOT %t = ({0}[4,64,300]) tuple(%f)
}}
)",
                             hlo_name(d)),
                 -1, 1, kDotAtolScale);
  }
}

TEST_CASE("cpu: convolution (layouts, strides, padding, dilations, groups) runs natively", "[cpu]") {
  struct Conv {
    int64_t n, c, h, w, o, kh, kw, sh, sw, plo, phi, ldil, rdil, fg, bg;
    bool nhwc;
  };
  // Output spatial size of one dimension.
  auto out_size = [](int64_t in, int64_t k, int64_t s, int64_t plo, int64_t phi, int64_t ld, int64_t rd) {
    int64_t din = (in - 1) * ld + 1, dk = (k - 1) * rd + 1;
    return (din + plo + phi - dk) / s + 1;
  };
  std::vector<Conv> grid{
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false},  // same padding
      {2, 3, 7, 6, 4, 3, 2, 2, 1, 0, 1, 1, 1, 1, 1, true},   // strided, asymmetric, NHWC/HWIO
      {1, 4, 6, 6, 6, 3, 3, 1, 2, 2, 0, 2, 1, 2, 1, false},  // lhs dilation (transposed conv), 2 feature groups
      {2, 2, 9, 8, 4, 2, 3, 1, 1, 1, 2, 1, 2, 1, 1, true},   // rhs (atrous) dilation
      {1, 6, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6, 1, true},   // depthwise
      {4, 3, 5, 6, 6, 2, 2, 1, 1, 0, 0, 1, 1, 1, 2, false},  // batch groups (a weight gradient)
  };
  for (DType d : {DType::float32, DType::bfloat16, DType::float64}) {
    for (auto& g : grid) {
      int64_t oh = out_size(g.h, g.kh, g.sh, g.plo, g.phi, g.ldil, g.rdil);
      int64_t ow = out_size(g.w, g.kw, g.sw, g.phi, g.plo, g.ldil, g.rdil);
      int64_t ob = g.n / g.bg, ci = g.c / g.fg;
      std::string lhs = g.nhwc ? shape_text(d, {g.n, g.h, g.w, g.c}) : shape_text(d, {g.n, g.c, g.h, g.w});
      std::string rhs = g.nhwc ? shape_text(d, {g.kh, g.kw, ci, g.o}) : shape_text(d, {g.o, ci, g.kh, g.kw});
      std::string out = g.nhwc ? shape_text(d, {ob, oh, ow, g.o}) : shape_text(d, {ob, g.o, oh, ow});
      std::string spec = g.nhwc ? "lhs_spec={0,3,1,2}, rhs_spec={3,2,0,1}, out_spec={0,3,1,2}"
                                : "lhs_spec={0,1,2,3}, rhs_spec={0,1,2,3}, out_spec={0,1,2,3}";
      std::string attrs = fmt::format(
          ", window_strides={{{},{}}}, padding={{{},{},{},{}}}, lhs_dilation={{{},{}}}, rhs_dilation={{{},{}}}, {}, "
          "feature_group_count={}, batch_group_count={}",
          g.sh, g.sw, g.plo, g.phi, g.phi, g.plo, g.ldil, g.ldil, g.rdil, g.rdil, spec, g.fg, g.bg);
      // Sums of up to c*kh*kw products in another order than the interpreter's: atol as for dots.
      check_native(one_op(out, "convolution", {lhs, rhs}, attrs), -1, 1, kDotAtolScale);
    }
  }
}

TEST_CASE("cpu: convolutions as autodiff writes them for NHWC: kernel gradients, input gradients, lhs dilation",
          "[cpu]") {
  // The kernel gradient of an NHWC convolution treats the channels as its batch and the batch as its features (the
  // lhs then has neither its features nor its innermost window dimension contiguous: the backend copies it first
  // and builds patches a run of window positions at a time), with the output gradient as a window as large as the
  // image; an NHWC input gradient with lhs dilation (a strided forward convolution's) reads channels in runs. Each
  // against the interpreter, f32, bf16 and f64.
  struct Case {
    std::string lhs, rhs, out, attrs;
  };
  auto shape = [](DType d, std::vector<int64_t> s) { return shape_text(d, s); };
  for (DType d : {DType::float32, DType::bfloat16, DType::float64}) {
    std::vector<Case> cases{
        // kernel gradient of a 3x2 kernel, SAME-like padding (1,1),(0,1), over x [3,7,6,5] and dy [3,7,6,4]
        {shape(d, {3, 7, 6, 5}), shape(d, {3, 7, 6, 4}), shape(d, {3, 2, 5, 4}),
         ", window_strides={1,1}, padding={1,1,0,1}, lhs_dilation={1,1}, rhs_dilation={1,1}, "
         "lhs_spec={3,0,1,2}, rhs_spec={3,0,1,2}, out_spec={2,3,0,1}, feature_group_count=1, batch_group_count=1"},
        // the same for a forward stride of 2: the output gradient is dilated as a window
        {shape(d, {2, 9, 8, 3}), shape(d, {2, 5, 4, 6}), shape(d, {3, 3, 3, 6}),
         ", window_strides={1,1}, padding={1,1,1,0}, lhs_dilation={1,1}, rhs_dilation={2,2}, "
         "lhs_spec={3,0,1,2}, rhs_spec={3,0,1,2}, out_spec={2,3,0,1}, feature_group_count=1, batch_group_count=1"},
        // a 1-D kernel gradient (one spatial dimension)
        {shape(d, {4, 11, 3}), shape(d, {4, 11, 2}), shape(d, {3, 3, 2}),
         ", window_strides={1}, padding={1,1}, lhs_dilation={1}, rhs_dilation={1}, "
         "lhs_spec={2,0,1}, rhs_spec={2,0,1}, out_spec={1,2,0}, feature_group_count=1, batch_group_count=1"},
        // the input gradient of a stride-2 NHWC convolution: lhs dilation 2, reversed kernel
        {shape(d, {2, 5, 4, 6}), shape(d, {3, 3, 3, 6}), shape(d, {2, 9, 8, 3}),
         ", window_strides={1,1}, padding={1,1,1,2}, lhs_dilation={2,2}, rhs_dilation={1,1}, "
         "lhs_spec={0,3,1,2}, rhs_spec={2,3,0,1}, out_spec={0,3,1,2}, feature_group_count=1, batch_group_count=1"},
        // NHWC with two feature groups (the output is not one row per product row)
        {shape(d, {2, 6, 5, 4}), shape(d, {3, 3, 2, 6}), shape(d, {2, 6, 5, 6}),
         ", window_strides={1,1}, padding={1,1,1,1}, lhs_dilation={1,1}, rhs_dilation={1,1}, "
         "lhs_spec={0,3,1,2}, rhs_spec={3,2,0,1}, out_spec={0,3,1,2}, feature_group_count=2, batch_group_count=1"},
    };
    for (auto& c : cases) {
      INFO(hlo_name(d) << " " << c.attrs);
      check_native(one_op(c.out, "convolution", {c.lhs, c.rhs}, c.attrs), -1, 1, kDotAtolScale);
    }
  }
}

TEST_CASE("cpu: a jitted integer and float matmul against hand-computed products", "[cpu]") {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]], exact in every dtype that holds them.
  auto mm = jit([](Array a, Array b) { return jnp::matmul(a, b); });
  Array ai = array(std::vector<int32_t>{1, 2, 3, 4}, {2, 2}), bi = array(std::vector<int32_t>{5, 6, 7, 8}, {2, 2});
  CHECK(mm(ai, bi).to_vector<int32_t>() == std::vector<int32_t>{19, 22, 43, 50});
  Array af = array(std::vector<float>{1, 2, 3, 4}, {2, 2}), bf = array(std::vector<float>{5, 6, 7, 8}, {2, 2});
  CHECK(mm(af, bf).to_vector<float>() == std::vector<float>{19, 22, 43, 50});
}
