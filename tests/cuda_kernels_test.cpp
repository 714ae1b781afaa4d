// The CUDA backend's dot, gather and scatter kernels on machines without a GPU: PTX for every form accepted by ptxas
// for sm_80 and sm_90, and the kernels' own code run on the host emulator against the reference evaluator.
#include <catch2/catch.hpp>

#ifdef JITX_HAS_CUDA
#include <optional>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/gpu_emulator.h"
#include "cuda_kernel_check.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/jitx.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;

TEST_CASE("cuda: generated dot kernels (where cuBLASLt cannot run a dot) for every form and dtype", "[cuda]") {
  struct Case {
    DType a, b, out;
    std::vector<int64_t> ad, bd, od;
    std::string dims;
  };
  const std::string mm = ", lhs_contracting_dimensions={1}, rhs_contracting_dimensions={0}";
  const std::vector<Case> cases{
      {DType::float32, DType::float32, DType::float32, {37, 50}, {50, 21}, {37, 21}, mm},
      {DType::float32, DType::float32, DType::float32, {16, 16}, {16, 16}, {16, 16}, mm},  // exactly one tile
      {DType::float32, DType::float32, DType::float32, {1, 300}, {300, 1}, {1, 1}, mm},
      {DType::float64, DType::float64, DType::float64, {19, 45}, {45, 33}, {19, 33}, mm},
      {DType::bfloat16, DType::bfloat16, DType::float32, {33, 64}, {64, 48}, {33, 48}, mm},
      {DType::bfloat16, DType::bfloat16, DType::bfloat16, {33, 64}, {64, 48}, {33, 48}, mm},
      {DType::float16, DType::float16, DType::float16, {20, 70}, {70, 9}, {20, 9}, mm},
      {DType::int8, DType::int8, DType::int32, {25, 40}, {40, 17}, {25, 17}, mm},
      {DType::int32, DType::int32, DType::int32, {8, 300}, {300, 5}, {8, 5}, mm},
      {DType::uint8, DType::uint8, DType::uint32, {9, 30}, {30, 4}, {9, 4}, mm},
      // batch dims first and elsewhere, contracting dims anywhere, several of them
      {DType::float32,
       DType::float32,
       DType::float32,
       {3, 17, 40},
       {3, 40, 33},
       {3, 17, 33},
       ", lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, "
       "rhs_contracting_dimensions={1}"},
      {DType::float32,
       DType::float32,
       DType::float32,
       {18, 4, 7},
       {5, 7, 4},
       {4, 18, 5},
       ", lhs_batch_dimensions={1}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={2}, "
       "rhs_contracting_dimensions={1}"},
      {DType::float32,
       DType::float32,
       DType::float32,
       {6, 5, 4, 3},
       {4, 5, 19},
       {6, 3, 19},
       ", lhs_contracting_dimensions={2,1}, rhs_contracting_dimensions={0,1}"},
      {DType::float32,
       DType::float32,
       DType::float32,
       {77},
       {77},
       {},
       ", lhs_contracting_dimensions={0}, rhs_contracting_dimensions={0}"},
      {DType::float32,
       DType::float32,
       DType::float32,
       {5},
       {7},
       {5, 7},
       ", lhs_contracting_dimensions={}, rhs_contracting_dimensions={}"},  // an outer product (K = 1)
  };
  int bad = 0;
  int64_t barriers0 = cuda::emulator_stats().barriers;
  for (auto& c : cases) {
    std::string text = one_op(shape_text(c.out, c.od), "dot", {shape_text(c.a, c.ad), shape_text(c.b, c.bd)}, c.dims);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    const hlo::Instruction* r = m->entry->find("r");
    REQUIRE(r);
    cuda::GpuKernel k = cuda::compile_kernel(*r, cuda::GpuTarget::sm90());
    CHECK(k.plan.block == 256);
    CHECK_THAT(k.ptx, Contains("bar.sync"));
    bad += check_ptx(*r);
  }
  CHECK(bad == 0);
  CHECK(cuda::emulator_stats().barriers > barriers0);
}

TEST_CASE("cuda: gather kernels (takes, multi-dim windows, batching dims, clamped indices of every type)", "[cuda]") {
  struct Case {
    std::string out, operand, indices, attrs;
  };
  const std::vector<Case> cases{
      {"f32[4,6]", "f32[10,6]", "s32[4]",
       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}"},
      {"bf16[7,3]", "bf16[3,50]", "u32[7,1]",
       "offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={3,1}"},
      {"f32[2,4,4,2]", "f32[5,7,3]", "s32[2,4,2]",
       "offset_dims={2,3}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=2, slice_sizes={1,4,2}"},
      {"f64[3,6,5]", "f64[3,8,5]", "s64[3,6,1]",
       "offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
       "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,5}"},
      {"s8[2,6]", "s8[4,2,9]", "u64[2,6,2]",
       "offset_dims={}, collapsed_slice_dims={0,2}, start_index_map={0,2}, operand_batching_dims={1}, "
       "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,1}"},
      {"f32[5]", "f32[9]", "s16[5]",
       "offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}"},
      {"u16[5,3,2]", "u16[6,8]", "s32[5,2]",
       "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={3,2}"},
  };
  int bad = 0;
  for (auto& c : cases) {
    std::string text = fmt::format(
        "HloModule m\n\nENTRY %main (p0: {1}, p1: {2}) -> ({0}) {{\n  %p0 = {1} parameter(0)\n  %p1 = {2} "
        "parameter(1)\n  %r = {0} gather(%p0, %p1), {3}\n  ROOT %t = ({0}) tuple(%r)\n}}\n",
        c.out, c.operand, c.indices, c.attrs);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == 1);  // the gather is a kernel, not a host fallback
    CHECK(g.no_kernel.empty());
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: scatter kernels (every update kind, duplicate and out-of-range indices, batching dims)", "[cuda]") {
  struct Case {
    std::string out, indices, updates, attrs;
    bool kernel = true;  // false: windows that overlap, which the host runs
  };
  const std::vector<Case> cases{
      // an embedding's gradient: rows added at (duplicate) token ids
      {"f32[10,6]", "s32[40]", "f32[40,6]",
       "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add"},
      {"bf16[10,6]", "s32[40,1]", "bf16[40,6]",
       "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add"},
      {"s32[30]", "u32[25]", "s32[25]",
       "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=replace"},
      {"f64[5,7,3]", "s64[6,2]", "f64[6,3]",
       "update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, "
       "reducer=max"},
      {"f32[5,7,3]", "s16[6,2]", "f32[6,3]",
       "update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, "
       "reducer=min"},
      {"u8[4,9]", "s32[4,5,1]", "u8[4,5]",
       "update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, "
       "scatter_dims_to_operand_dims={1}, index_vector_dim=2, reducer=mul"},
      {"pred[12]", "s32[20]", "pred[20]",
       "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add"},
      // an indexed dim with a window of 1 that is not inserted
      {"f32[8,5]", "s32[12,1]", "f32[12,1,5]",
       "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add"},
      // an update window narrower than the operand in a dim the indices do not address: the rest is left alone
      {"f32[8,5]", "s32[12,1]", "f32[12,1,3]",
       "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add"},
      // windows of 3 along the indexed dim overlap: the host runs it
      {"f32[10]", "s32[4,1]", "f32[4,3]",
       "update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
       "reducer=add",
       false},
  };
  int bad = 0;
  for (auto& c : cases) {
    std::string text = fmt::format(
        "HloModule m\n\nENTRY %main (p0: {0}, p1: {1}, p2: {2}) -> ({0}) {{\n  %p0 = {0} parameter(0)\n  %p1 = {1} "
        "parameter(1)\n  %p2 = {2} parameter(2)\n  %r = {0} scatter(%p0, %p1, %p2), {3}\n  ROOT %t = ({0}) "
        "tuple(%r)\n}}\n",
        c.out, c.indices, c.updates, c.attrs);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == (c.kernel ? 1u : 0u));
    if (!c.kernel) {
      REQUIRE(g.no_kernel.size() == 1);
      CHECK_THAT(g.no_kernel[0].second, Contains("overlapping windows"));
      continue;
    }
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: loop kernels load and store 128 bits at a time (f32, bf16, f64, multi-output, broadcasts)", "[cuda]") {
  struct Case {
    std::string text, ld, st;
  };
  auto binary = [](const std::string& s, const std::string& op) { return one_op(s, op, {s, s}); };
  const std::vector<Case> cases{
      {binary("f32[1024,1024]", "add"), "ld.global.nc.v4.f32", "st.global.v4.f32"},
      {binary("bf16[512,1024]", "multiply"), "ld.global.nc.v4", "st.global.v4"},
      {binary("f64[4096,64]", "subtract"), "ld.global.nc.v2.f64", "st.global.v2.f64"},
      {one_op("f32[256,1024]", "broadcast", {"f32[1024]"}, ", broadcast_dimensions={1}"), "ld.global.nc.v4.f32",
       "st.global.v4.f32"},
  };
  int bad = 0;
  for (auto& c : cases) {
    INFO(c.text);
    auto m = hlo::parse_hlo(c.text);
    hlo::verify(*m);
    cuda::GpuKernel k = cuda::compile_kernel(*m->entry->find("r"), cuda::GpuTarget::sm90());
    CHECK_THAT(k.ptx, Contains(c.ld));
    CHECK_THAT(k.ptx, Contains(c.st));
    bad += check_ptx(*m->entry->find("r"));  // and the unrolled elements still compute the right values
  }
  // An odd count keeps one element per thread.
  auto odd = hlo::parse_hlo(binary("f32[1001,3]", "add"));
  CHECK_THAT(cuda::compile_kernel(*odd->entry->find("r"), cuda::GpuTarget::sm90()).ptx, !Contains(".v4.f32"));
  CHECK(bad == 0);
}

TEST_CASE("cuda: column-reduction kernels: multi-output and nested column fusions", "[cuda]") {
  const std::string text = R"(HloModule m

%colf (a: f32[300,40], b: f32[300,40]) -> (f32[40], f32[40]) {
  %a = f32[300,40] parameter(0)
  %b = f32[300,40] parameter(1)
  %z = f32[] constant(0)
  %ab = f32[300,40] multiply(%a, %b)
  %s1 = f32[40] reduce(%ab, %z), dimensions={0}, reducer=add
  %s2 = f32[40] reduce(%b, %z), dimensions={0}, reducer=add
  ROOT %o = (f32[40], f32[40]) tuple(%s1, %s2)
}

%varf (a: f32[500,70]) -> f32[70] {
  %a = f32[500,70] parameter(0)
  %z = f32[] constant(0)
  %s = f32[70] reduce(%a, %z), dimensions={0}, reducer=add
  %n = f32[] constant(500)
  %nb = f32[70] broadcast(%n), broadcast_dimensions={}
  %m = f32[70] divide(%s, %nb)
  %mb = f32[500,70] broadcast(%m), broadcast_dimensions={1}
  %d = f32[500,70] subtract(%a, %mb)
  %d2 = f32[500,70] multiply(%d, %d)
  %v = f32[70] reduce(%d2, %z), dimensions={0}, reducer=add
  ROOT %r = f32[70] divide(%v, %nb)
}

ENTRY %main (a: f32[300,40], b: f32[300,40], c: f32[500,70]) -> ((f32[40], f32[40]), f32[70]) {
  %a = f32[300,40] parameter(0)
  %b = f32[300,40] parameter(1)
  %c = f32[500,70] parameter(2)
  %p = (f32[40], f32[40]) fusion(%a, %b), kind=kInput, calls=%colf
  %q = f32[70] fusion(%c), kind=kInput, calls=%varf
  ROOT %t = ((f32[40], f32[40]), f32[70]) tuple(%p, %q)
}
)";
  auto m = hlo::parse_hlo(text);
  hlo::verify(*m);
  int bad = 0;
  for (const char* name : {"p", "q"}) {
    const hlo::Instruction* f = m->entry->find(name);
    REQUIRE(f);
    CHECK(cuda::compile_kernel(*f, cuda::GpuTarget::sm90()).plan.kind == cuda::KernelKind::kColumnReduction);
    bad += check_ptx(*f);
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: output fusions that are cuBLASLt epilogues (bias, ReLU, GELU) and ones that are not", "[cuda]") {
  // The kind of the optimised module's output fusion, or "none" (its dot and a kernel for the rest).
  auto kind_of = [](auto f, DType d, std::vector<int64_t> bias_shape = {48}) {
    Array x = jnp::ones({64, 32}).astype(d), w = jnp::ones({32, 48}).astype(d), b = jnp::ones(bias_shape).astype(d);
    auto m = hlo::parse_hlo(jit(f).lower(x, w, b).compile().as_text());
    for (auto& c : m->computations)
      for (auto& i : c->instructions)
        if (i->opcode == hlo::Opcode::kFusion && hlo::fusion_kind_of(*i) == hlo::FusionKind::kOutput) {
          const hlo::Computation& fc = *i->called.at(0);
          for (auto& fi : fc.instructions)
            if (fi->opcode == hlo::Opcode::kDot) {
              std::optional<cuda::GemmPlan> g = cuda::plan_gemm(*fi);
              if (!g) return std::string("no gemm");
              std::optional<cuda::EpiloguePlan> e = cuda::plan_epilogue(fc, *g);
              return std::string(e ? cuda::epilogue_name(e->kind) : "none");
            }
        }
    return std::string("no output fusion");
  };
  auto bias = [](Array x, Array w, Array b) { return jnp::matmul(x, w) + b; };
  auto relu = [](Array x, Array w, Array b) { return nn::relu(jnp::matmul(x, w) + b); };
  auto gelu = [](Array x, Array w, Array b) { return nn::gelu(jnp::matmul(x, w) + b); };
  for (DType d : {DType::float32, DType::bfloat16, DType::float16}) {
    INFO(dtype_name(d));
    CHECK(kind_of(bias, d) == "bias");
    CHECK(kind_of(relu, d) == "relu_bias");
    CHECK(kind_of(gelu, d) == "gelu_bias");
  }
  CHECK(kind_of(bias, DType::float64) == "none");  // f64: the epilogue kernel
  // Not epilogues: the exact GELU, a scaled result, a bias along the other dim, a bias used twice.
  CHECK(kind_of([](Array x, Array w, Array b) { return nn::gelu(jnp::matmul(x, w) + b, false); }, DType::float32) ==
        "none");
  CHECK(kind_of([](Array x, Array w, Array b) { return (jnp::matmul(x, w) + b) * 2.0f; }, DType::float32) == "none");
  CHECK(kind_of([](Array x, Array w, Array b) { return jnp::matmul(x, w) + b; }, DType::float32, {64, 1}) == "none");
  CHECK(kind_of([](Array x, Array w, Array b) { return nn::relu(jnp::matmul(x, w) + b) + b; }, DType::float32) ==
        "none");
}

TEST_CASE("cuda: sort and top-k kernels (stable, NaNs last, -0 equal to +0, payloads, two keys, any axis)", "[cuda]") {
  struct Case {
    std::string out;
    std::vector<std::string> operands;
    std::string attrs;
    bool kernel = true;
    std::string op = "sort";
  };
  const std::vector<Case> cases{
      {"f32[6,300]", {"f32[6,300]"}, "dimension=1, is_stable=true"},
      {"s32[40,17]", {"s32[40,17]"}, "dimension=0, is_stable=true"},  // heavy ties, along the major axis
      {"(bf16[5,100], s32[5,100])", {"bf16[5,100]", "s32[5,100]"}, "dimension=1, is_stable=true"},
      {"(s8[3,64], f64[3,64], u16[3,64])",
       {"s8[3,64]", "f64[3,64]", "u16[3,64]"},
       "dimension=1, is_stable=true, num_keys=2"},
      {"f16[2048]", {"f16[2048]"}, "dimension=0"},
      {"u64[1,1]", {"u64[1,1]"}, "dimension=1"},
      {"f32[2049]", {"f32[2049]"}, "dimension=0", false},  // longer than a block sorts: the host
      // top-k: the largest first in IEEE total order, ties by position
      {"(f32[6,5], s32[6,5])", {"f32[6,300]"}, "k=5", true, "topk"},
      {"(bf16[3,2,1], s32[3,2,1])", {"bf16[3,2,40]"}, "k=1", true, "topk"},
      {"(s16[64], s32[64])", {"s16[2048]"}, "k=64", true, "topk"},
  };
  int bad = 0;
  for (auto& c : cases) {
    std::string sig, body, args;
    for (size_t k = 0; k < c.operands.size(); ++k) {
      sig += fmt::format("{}p{}: {}", k ? ", " : "", k, c.operands[k]);
      body += fmt::format("  %p{} = {} parameter({})\n", k, c.operands[k], k);
      args += fmt::format("{}%p{}", k ? ", " : "", k);
    }
    std::string text = fmt::format(
        "HloModule m\n\nENTRY %main ({}) -> ({}) {{\n{}  %r = {} {}({}), {}\n  ROOT %t = ({}) "
        "tuple(%r)\n}}\n",
        sig, c.out, body, c.out, c.op, args, c.attrs, c.out);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == (c.kernel ? 1u : 0u));
    if (!c.kernel) {
      REQUIRE(g.no_kernel.size() == 1);
      CHECK_THAT(g.no_kernel[0].second, Contains("at most 2048"));
      continue;
    }
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: reduce-window kernels (cumulative sums, pooling, padding, both dilations, any init)", "[cuda]") {
  struct Case {
    std::string out, operand, attrs;
  };
  auto w = [](const std::string& dims, const std::string& strides, const std::string& pad, const std::string& bd,
              const std::string& wd, const std::string& r) {
    return fmt::format(
        "window_dimensions={{{}}}, window_strides={{{}}}, padding={{{}}}, base_dilations={{{}}}, "
        "window_dilations={{{}}}, reducer={}",
        dims, strides, pad, bd, wd, r);
  };
  const std::vector<Case> cases{
      {"f32[8,100]", "f32[8,100]", w("1,100", "1,1", "0,0,99,0", "1,1", "1,1", "add")},  // cumsum
      {"s32[4,50]", "s32[4,50]", w("1,50", "1,1", "0,0,49,0", "1,1", "1,1", "max")},     // cummax
      {"f32[2,3,4,4]", "f32[2,3,8,8]", w("1,1,2,2", "1,1,2,2", "0,0,0,0,0,0,0,0", "1,1,1,1", "1,1,1,1", "max")},
      {"f32[1,3,3,2]", "f32[1,5,5,2]", w("1,3,3,1", "1,2,2,1", "0,0,1,1,1,1,0,0", "1,1,1,1", "1,1,1,1", "add")},
      {"f64[8,5]", "f64[7,9]", w("2,3", "1,2", "1,0,2,1", "2,1", "1,2", "add")},
      {"bf16[6,3]", "bf16[6,9]", w("1,3", "1,3", "0,0,0,0", "1,1", "1,1", "mul")},
      {"u8[5,5]", "u8[5,5]", w("2,2", "1,1", "0,1,1,0", "1,1", "1,1", "min")},
  };
  int bad = 0;
  for (auto& c : cases) {
    std::string scalar = c.out.substr(0, c.out.find('[')) + "[]";
    std::string text = one_op(c.out, "reduce-window", {c.operand, scalar}, ", " + c.attrs);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == 1);
    CHECK(g.no_kernel.empty());
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: argmax and argmin kernels (first of ties, first NaN, any axes, integer and float values)", "[cuda]") {
  struct Case {
    std::string values, indices, out_values, out_indices, dims, reducer;
  };
  const std::vector<Case> cases{
      {"f32[8,300]", "s32[8,300]", "f32[8]", "s32[8]", "1", "argmax"},
      {"f64[40,6]", "s64[40,6]", "f64[6]", "s64[6]", "0", "argmin"},
      {"s8[5,7,9]", "s32[5,7,9]", "s8[5,9]", "s32[5,9]", "1", "argmax"},  // many ties
      {"bf16[4,3,10]", "u32[4,3,10]", "bf16[4]", "u32[4]", "1,2", "argmin"},
      {"u16[33]", "s64[33]", "u16[]", "s64[]", "0", "argmax"},
  };
  int bad = 0;
  for (auto& c : cases) {
    auto scalar = [](const std::string& s) { return s.substr(0, s.find('[')) + "[]"; };
    std::string out = fmt::format("({}, {})", c.out_values, c.out_indices);
    std::string text = fmt::format(
        "HloModule m\n\nENTRY %main (p0: {0}, p1: {1}, p2: {2}, p3: {3}) -> ({4}) {{\n  %p0 = {0} parameter(0)\n  "
        "%p1 = {1} parameter(1)\n  %p2 = {2} parameter(2)\n  %p3 = {3} parameter(3)\n  %r = {4} reduce(%p0, %p1, "
        "%p2, %p3), dimensions={{{5}}}, reducer={6}\n  ROOT %t = ({4}) tuple(%r)\n}}\n",
        c.values, c.indices, scalar(c.values), scalar(c.indices), out, c.dims, c.reducer);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == 1);
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

TEST_CASE("cuda: convolution kernels (layouts, strides, padding, both dilations, feature and batch groups)", "[cuda]") {
  struct Case {
    std::string out, lhs, rhs, attrs;
  };
  // NHWC/HWIO (lhs_spec={0,3,1,2}, rhs_spec={3,2,0,1}) unless said otherwise.
  auto nhwc = [](const std::string& strides, const std::string& pad, const std::string& ld, const std::string& rd,
                 int fg = 1, int bg = 1) {
    return fmt::format(
        "lhs_spec={{0,3,1,2}}, rhs_spec={{3,2,0,1}}, out_spec={{0,3,1,2}}, window_strides={{{}}}, padding={{{}}}, "
        "lhs_dilation={{{}}}, rhs_dilation={{{}}}, feature_group_count={}, batch_group_count={}",
        strides, pad, ld, rd, fg, bg);
  };
  const std::vector<Case> cases{
      {"f32[2,6,6,4]", "f32[2,6,6,3]", "f32[3,3,3,4]", nhwc("1,1", "1,1,1,1", "1,1", "1,1")},
      {"f32[2,5,4,4]", "f32[2,3,9,9]", "f32[5,3,3,3]",  // NCHW/OIHW, stride 2
       "lhs_spec={0,1,2,3}, rhs_spec={0,1,2,3}, out_spec={0,1,2,3}, window_strides={2,2}, padding={0,0,0,0}, "
       "lhs_dilation={1,1}, rhs_dilation={1,1}, feature_group_count=1, batch_group_count=1"},
      {"f32[1,6,6,4]", "f32[1,8,8,4]", "f32[3,3,1,4]", nhwc("1,1", "0,0,0,0", "1,1", "1,1", 4)},     // depthwise
      {"f32[1,9,9,3]", "f32[1,4,4,2]", "f32[3,3,2,3]", nhwc("1,1", "2,2,2,2", "2,2", "1,1")},        // lhs dilation
      {"f64[1,4,4,2]", "f64[1,6,6,1]", "f64[2,2,1,2]", nhwc("1,1", "0,0,0,0", "1,1", "2,2")},        // rhs dilation
      {"f32[2,3,3,6]", "f32[4,5,5,3]", "f32[3,3,3,6]", nhwc("1,1", "0,0,0,0", "1,1", "1,1", 1, 2)},  // batch groups
      {"s32[2,8,4]", "s8[2,10,3]", "s8[3,3,4]",
       "lhs_spec={0,2,1}, rhs_spec={2,1,0}, out_spec={0,2,1}, window_strides={1}, padding={0,0}, lhs_dilation={1}, "
       "rhs_dilation={1}, feature_group_count=1, batch_group_count=1"},
      {"bf16[2,4,4,8]", "bf16[2,4,4,8]", "bf16[3,3,8,8]", nhwc("1,1", "1,1,1,1", "1,1", "1,1")},
  };
  int bad = 0;
  for (auto& c : cases) {
    std::string text = one_op(c.out, "convolution", {c.lhs, c.rhs}, ", " + c.attrs);
    INFO(text);
    auto m = hlo::parse_hlo(text);
    hlo::verify(*m);
    cuda::GpuModule g = cuda::compile_module(*m, cuda::GpuTarget::sm90());
    CHECK(g.kernels.size() == 1);
    CHECK(g.no_kernel.empty());
    bad += check_ptx(*m->entry->find("r"));
  }
  CHECK(bad == 0);
}

#else
TEST_CASE("cuda kernels: the backend is absent without the CUDA toolkit", "[cuda]") {
  WARN("skipped: jitx was configured without the CUDA toolkit");
  SUCCEED();
}
#endif
