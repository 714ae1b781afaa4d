// The CPU backend's loops against the interpreter: data movement as index math, the loop, multi-output, input and
// row fusion kinds' kernels, and streaming stores for large outputs (results and the
// optimised IR).
#include <sstream>

#include <catch2/catch.hpp>

#include "backend_test_util.h"
#include "backends/cpu/kernels.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;

TEST_CASE("cpu: data movement is index math", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::int64, DType::bool_}) {
    auto t = [&](std::vector<int64_t> dims) { return shape_text(d, dims); };
    check_module(one_op(t({4, 5, 6}), "broadcast", {t({5})}, ", broadcast_dimensions={1}"));
    check_module(one_op(t({4, 5, 6}), "broadcast", {t({4, 1})}, ", broadcast_dimensions={0,1}"));
    check_module(one_op(t({6, 4, 5}), "transpose", {t({4, 5, 6})}, ", permutation={2,0,1}"));
    check_module(one_op(t({2, 3}), "slice", {t({7, 9})},
                        ", start_indices={1,2}, limit_indices={5,9}, strides={2,3}"));
    check_module(one_op(t({7, 9}), "reverse", {t({7, 9})}, ", dimensions={0,1}"));
    check_module(one_op(t({10, 13}), "pad", {t({4, 5}), t({})},
                        ", edge_padding_low={1,-1}, edge_padding_high={2,1}, interior_padding={1,2}"));
    check_module(one_op(t({4, 11}), "concatenate", {t({4, 3}), t({4, 8})}, ", dimension=1"));
    check_module(one_op(t({30}), "reshape", {t({5, 6})}));
    check_module(one_op(t({5, 6}), "copy", {t({5, 6})}));
    check_module(one_op(t({3, 4}), "iota", {}, ", iota_dimension=1"));
    auto i32 = shape_text(DType::int32, {});
    check_module(one_op(t({2, 3}), "dynamic-slice", {t({5, 7}), i32, i32}, ", dynamic_slice_sizes={2,3}"), -3, 9);
    check_module(one_op(t({5, 7}), "dynamic-update-slice", {t({5, 7}), t({2, 3}), i32, i32}), -3, 9);
  }
}

TEST_CASE("cpu: loop, multi-output, input (reduction) and row fusions", "[cpu]") {
  for (DType d : kFloats) {
    std::string s = hlo_name(d);
    // kLoop: gelu-ish chain with a broadcast bias and a transposed operand.
    check_module(fmt::format(R"(HloModule m

%fused (a: {0}[64,48], b: {0}[48], c: {0}[48,64]) -> {0}[64,48] {{
  %a = {0}[64,48] parameter(0)
  %b = {0}[48] parameter(1)
  %c = {0}[48,64] parameter(2)
  %bb = {0}[64,48] broadcast(%b), broadcast_dimensions={{1}}
  %ct = {0}[64,48] transpose(%c), permutation={{1,0}}
  %x = {0}[64,48] add(%a, %bb)
  %hs = {0}[] constant(0.5)
  %h = {0}[64,48] broadcast(%hs), broadcast_dimensions={{}}
  %t = {0}[64,48] tanh(%x)
  %m = {0}[64,48] multiply(%t, %ct)
  ROOT %e = {0}[64,48] add(%m, %h)
}}

ENTRY %main (a: {0}[64,48], b: {0}[48], c: {0}[48,64]) -> ({0}[64,48], {0}[64,48]) {{
  %a = {0}[64,48] parameter(0)
  %b = {0}[48] parameter(1)
  %c = {0}[48,64] parameter(2)
  %f = {0}[64,48] fusion(%a, %b, %c), kind=kLoop, calls=%fused
  %g = {0}[64,48] exponential(%f)
  ROOT %t = ({0}[64,48], {0}[64,48]) tuple(%f, %g)
}}
)", s));
    // Multi-output kLoop fusion.
    check_module(fmt::format(R"(HloModule m

%fused (a: {0}[33,65]) -> ({0}[33,65], {0}[33,65]) {{
  %a = {0}[33,65] parameter(0)
  %e = {0}[33,65] exponential(%a)
  %l = {0}[33,65] logistic(%a)
  ROOT %t = ({0}[33,65], {0}[33,65]) tuple(%e, %l)
}}

ENTRY %main (a: {0}[33,65]) -> ({0}[33,65], {0}[33,65]) {{
  %a = {0}[33,65] parameter(0)
  %f = ({0}[33,65], {0}[33,65]) fusion(%a), kind=kLoop, calls=%fused
  %x = {0}[33,65] get-tuple-element(%f), index=0
  %y = {0}[33,65] get-tuple-element(%f), index=1
  ROOT %t = ({0}[33,65], {0}[33,65]) tuple(%x, %y)
}}
)", s));
    // kInput: reduce(exp(x) * 2) over rows and columns; kRow: a layer norm per row.
    for (const char* dims : {"1", "0"}) {
      std::string out = std::string(dims) == "1" ? "[40]" : "[300]";
      check_module(fmt::format(R"(HloModule m

%fused (a: {0}[40,300]) -> {0}{1} {{
  %a = {0}[40,300] parameter(0)
  %e = {0}[40,300] exponential(%a)
  %two = {0}[] constant(2)
  %tb = {0}[40,300] broadcast(%two), broadcast_dimensions={{}}
  %m = {0}[40,300] multiply(%e, %tb)
  %z = {0}[] constant(0)
  ROOT %r = {0}{1} reduce(%m, %z), dimensions={{{2}}}, reducer=add
}}

ENTRY %main (a: {0}[40,300]) -> ({0}{1}) {{
  %a = {0}[40,300] parameter(0)
  %f = {0}{1} fusion(%a), kind=kInput, calls=%fused
  ROOT %t = ({0}{1}) tuple(%f)
}}
)", s, out, dims));
    }
    check_module(fmt::format(R"(HloModule m

%fused (a: {0}[24,512]) -> {0}[24,512] {{
  %a = {0}[24,512] parameter(0)
  %z = {0}[] constant(0)
  %n = {0}[] constant(512)
  %eps = {0}[] constant(1e-05)
  %s = {0}[24] reduce(%a, %z), dimensions={{1}}, reducer=add
  %nb = {0}[24] broadcast(%n), broadcast_dimensions={{}}
  %mean = {0}[24] divide(%s, %nb)
  %mb = {0}[24,512] broadcast(%mean), broadcast_dimensions={{0}}
  %c = {0}[24,512] subtract(%a, %mb)
  %sq = {0}[24,512] multiply(%c, %c)
  %v = {0}[24] reduce(%sq, %z), dimensions={{1}}, reducer=add
  %var = {0}[24] divide(%v, %nb)
  %eb = {0}[24] broadcast(%eps), broadcast_dimensions={{}}
  %ve = {0}[24] add(%var, %eb)
  %rs = {0}[24] rsqrt(%ve)
  %rb = {0}[24,512] broadcast(%rs), broadcast_dimensions={{0}}
  ROOT %y = {0}[24,512] multiply(%c, %rb)
}}

ENTRY %main (a: {0}[24,512]) -> ({0}[24,512]) {{
  %a = {0}[24,512] parameter(0)
  %f = {0}[24,512] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = ({0}[24,512]) tuple(%f)
}}
)", s));
  }
}

TEST_CASE("cpu: large outputs are written with streaming stores (odd lengths, multi-output, rows)", "[cpu]") {
  // Over the 16 MiB threshold: a 1-D multi-output fusion whose length is not a multiple of a vector, and rows whose
  // length is not either (every row starts at a different alignment, so each needs its own unaligned head). Cheap
  // elementwise work only: a kernel with a transcendental per element does not stream (see the IR test below).
  check_native(R"(HloModule m

%fused (a: f32[2100003], b: f32[2100003]) -> (f32[2100003], f32[2100003]) {
  %a = f32[2100003] parameter(0)
  %b = f32[2100003] parameter(1)
  %e = f32[2100003] multiply(%a, %a)
  %m = f32[2100003] multiply(%e, %b)
  ROOT %t = (f32[2100003], f32[2100003]) tuple(%e, %m)
}

ENTRY %main (a: f32[2100003], b: f32[2100003]) -> (f32[2100003], f32[2100003]) {
  %a = f32[2100003] parameter(0)
  %b = f32[2100003] parameter(1)
  %f = (f32[2100003], f32[2100003]) fusion(%a, %b), kind=kLoop, calls=%fused
  %x = f32[2100003] get-tuple-element(%f), index=0
  %y = f32[2100003] get-tuple-element(%f), index=1
  ROOT %t = (f32[2100003], f32[2100003]) tuple(%x, %y)
}
)");
  check_native(one_op("bf16[1031,8201]", "add", {"bf16[1031,8201]", "bf16[1031,8201]"}));
  check_native(one_op("f16[8390001]", "negate", {"f16[8390001]"}));
  check_native(R"(HloModule m

%fused (a: f32[3500007], b: f32[3500007]) -> (f32[3500007], pred[3500007]) {
  %a = f32[3500007] parameter(0)
  %b = f32[3500007] parameter(1)
  %e = f32[3500007] subtract(%a, %b)
  %lt = pred[3500007] compare(%a, %b), direction=LT
  ROOT %t = (f32[3500007], pred[3500007]) tuple(%e, %lt)
}

ENTRY %main (a: f32[3500007], b: f32[3500007]) -> (f32[3500007], pred[3500007]) {
  %a = f32[3500007] parameter(0)
  %b = f32[3500007] parameter(1)
  %f = (f32[3500007], pred[3500007]) fusion(%a, %b), kind=kLoop, calls=%fused
  %x = f32[3500007] get-tuple-element(%f), index=0
  %y = pred[3500007] get-tuple-element(%f), index=1
  ROOT %t = (f32[3500007], pred[3500007]) tuple(%x, %y)
}
)");
  // A row fusion with 16 MiB of output, the row cache and streaming stores together: y = a b / sum(a b) per row.
  check_native(R"(HloModule m

%fused (a: f32[1025,4099], b: f32[1025,4099]) -> f32[1025,4099] {
  %a = f32[1025,4099] parameter(0)
  %b = f32[1025,4099] parameter(1)
  %z = f32[] constant(0)
  %e = f32[1025,4099] multiply(%a, %b)
  %s = f32[1025] reduce(%e, %z), dimensions={1}, reducer=add
  %sb = f32[1025,4099] broadcast(%s), broadcast_dimensions={0}
  ROOT %y = f32[1025,4099] divide(%e, %sb)
}

ENTRY %main (a: f32[1025,4099], b: f32[1025,4099]) -> (f32[1025,4099]) {
  %a = f32[1025,4099] parameter(0)
  %b = f32[1025,4099] parameter(1)
  %f = f32[1025,4099] fusion(%a, %b), kind=kRow, calls=%fused
  ROOT %t = (f32[1025,4099]) tuple(%f)
}
)",
               0.5, 2);
  // Softmax at 16 MiB: its exp is computed in the sum's pass and loaded from the row cache, so the output loop
  // streams. Log-softmax: its exp is inside the sum only, and the output loop (x - m - log s) streams.
  check_native(softmax_module(DType::float32, 1025, 4099), -8, 8);
  check_native(log_softmax_module(1025, 4099), -8, 8);
  // Both at once, a multi-output row fusion (the row cache, the exp's sum and two streamed outputs), rows of an odd
  // length so that each starts at another alignment.
  check_native(R"(HloModule m

%fused (a: f32[700,6007]) -> (f32[700,6007], f32[700,6007]) {
  %a = f32[700,6007] parameter(0)
  %ninf = f32[] constant(-inf)
  %z = f32[] constant(0)
  %m = f32[700] reduce(%a, %ninf), dimensions={1}, reducer=max
  %mb = f32[700,6007] broadcast(%m), broadcast_dimensions={0}
  %c = f32[700,6007] subtract(%a, %mb)
  %e = f32[700,6007] exponential(%c)
  %s = f32[700] reduce(%e, %z), dimensions={1}, reducer=add
  %sb = f32[700,6007] broadcast(%s), broadcast_dimensions={0}
  %y = f32[700,6007] divide(%e, %sb)
  %l = f32[700] log(%s)
  %lb = f32[700,6007] broadcast(%l), broadcast_dimensions={0}
  %ls = f32[700,6007] subtract(%c, %lb)
  ROOT %t = (f32[700,6007], f32[700,6007]) tuple(%y, %ls)
}

ENTRY %main (a: f32[700,6007]) -> (f32[700,6007], f32[700,6007]) {
  %a = f32[700,6007] parameter(0)
  %f = (f32[700,6007], f32[700,6007]) fusion(%a), kind=kRow, calls=%fused
  %y = f32[700,6007] get-tuple-element(%f), index=0
  %l = f32[700,6007] get-tuple-element(%f), index=1
  ROOT %t = (f32[700,6007], f32[700,6007]) tuple(%y, %l)
}
)",
               -8, 8);
}

TEST_CASE("cpu: streaming stores in the optimised IR only for large outputs, whole 64-byte lines each", "[cpu]") {
  auto ir_of = [](const std::string& shape, const char* op) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(shape, op, {shape}));
    return cpu::optimized_ir({m->entry->instructions[1].get()});
  };
  std::string big = ir_of("f32[4096,4096]", "negate");
  CHECK_THAT(big, Contains("!nontemporal"));
  // Each non-temporal store writes a whole, aligned 64-byte line (32-byte ones stalled compute-bound kernels).
  auto nt_stores = [](const std::string& ir) {  // the IR's non-temporal store lines
    std::vector<std::string> lines;
    std::istringstream in(ir);
    for (std::string l; std::getline(in, l);)
      if (l.find("!nontemporal") != std::string::npos && l.find(" store ") != std::string::npos) lines.push_back(l);
    return lines;
  };
  auto lines = nt_stores(big);
  REQUIRE(!lines.empty());
  for (auto& l : lines) {
    INFO(l);
    CHECK_THAT(l, Contains("store <16 x i32>") && Contains("align 64"));
  }
  CHECK_THAT(big, Contains("sfence"));
  CHECK_THAT(big, !Contains("llvm.prefetch"));  // the hardware prefetcher follows the sequential reads
  std::string small = ir_of("f32[1024,1024]", "negate");
  CHECK_THAT(small, !Contains("!nontemporal"));
  CHECK_THAT(small, !Contains("sfence"));
  // A transcendental per element in the output loop streams when it runs in two stages (exp, logistic: exp(x - max)
  // on 4096^2 6.8-8.1 -> 4.1-4.9 ms); tanh, one long chain with a division, keeps plain stores (it was slower).
  std::string heavy = ir_of("f32[4096,4096]", "exponential");
  CHECK_THAT(heavy, Contains("!nontemporal"));
  CHECK_THAT(ir_of("f32[4096,4096]", "logistic"), Contains("!nontemporal"));
  CHECK_THAT(ir_of("f32[4096,4096]", "tanh"), !Contains("!nontemporal"));
  // Vectorised at the preferred width: 512 bits on AVX-512 hosts (16 floats), else 256 (8).
  CHECK_THAT(heavy, Contains(fmt::format("<{} x float>", cpu::preferred_vector_width() / 32)));
  CHECK_THAT(heavy, Contains(fmt::format("\"prefer-vector-width\"=\"{}\"", cpu::preferred_vector_width())));
  // A memory-bound row kernel reads each row again from cache after its reduction: it prefetches the next row
  // block by block meanwhile.
  auto row_ir = [](const std::string& text) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    return cpu::optimized_ir({m->entry->instructions[1].get()});
  };
  std::string centred = row_ir(R"(HloModule m

%fused (a: f32[4096,4096]) -> f32[4096,4096] {
  %a = f32[4096,4096] parameter(0)
  %z = f32[] constant(-3e+38)
  %m = f32[4096] reduce(%a, %z), dimensions={1}, reducer=max
  %mb = f32[4096,4096] broadcast(%m), broadcast_dimensions={0}
  ROOT %d = f32[4096,4096] subtract(%a, %mb)
}

ENTRY %main (a: f32[4096,4096]) -> (f32[4096,4096]) {
  %a = f32[4096,4096] parameter(0)
  %f = f32[4096,4096] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[4096,4096]) tuple(%f)
}
)");
  CHECK_THAT(centred, Contains("!nontemporal"));
  CHECK_THAT(centred, Contains("llvm.prefetch"));
  // Softmax prefetches the next row in its summing pass (the staged exp: compute-bound on a cached row), and only
  // when its input comes from memory.
  std::string softmax = row_ir(softmax_module(DType::float32, 4096, 4096));
  CHECK_THAT(softmax, Contains("llvm.prefetch"));
  CHECK_THAT(row_ir(softmax_module(DType::float32, 1024, 1024)), !Contains("llvm.prefetch"));
  // Softmax (exp in the row cache), log-softmax (exp inside its sum) and exp(x - max) (exp in the output loop)
  // all stream their output.
  CHECK_THAT(softmax, Contains("!nontemporal"));
  CHECK_THAT(row_ir(log_softmax_module(4096, 4096)), Contains("!nontemporal"));
  CHECK_THAT(row_ir(R"(HloModule m

%fused (a: f32[4096,4096]) -> f32[4096,4096] {
  %a = f32[4096,4096] parameter(0)
  %ninf = f32[] constant(-inf)
  %m = f32[4096] reduce(%a, %ninf), dimensions={1}, reducer=max
  %mb = f32[4096,4096] broadcast(%m), broadcast_dimensions={0}
  %c = f32[4096,4096] subtract(%a, %mb)
  ROOT %e = f32[4096,4096] exponential(%c)
}

ENTRY %main (a: f32[4096,4096]) -> (f32[4096,4096]) {
  %a = f32[4096,4096] parameter(0)
  %f = f32[4096,4096] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[4096,4096]) tuple(%f)
}
)"),
             Contains("!nontemporal"));
}

TEST_CASE("cpu: a kernel with a transcendental per element counts as more work when it is split across threads",
          "[cpu]") {
  // A softmax of 256x256 (65536 elements) ran on one core at 0.03 ms: as many elements as a negation that is not
  // worth a second thread, at four times the compute. Weighted, it splits (0.018 ms).
  auto space_of = [](const std::string& text, size_t k) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    return cpu::loop_space(*m->entry->instructions[k]);
  };
  auto neg = space_of(one_op("f32[256,256]", "negate", {"f32[256,256]"}), 1);
  auto exp = space_of(one_op("f32[256,256]", "exponential", {"f32[256,256]"}), 1);
  CHECK(neg.cost_per_point == 1);
  CHECK(exp.cost_per_point == cpu::kTranscendentalCost);
  CHECK(exp.work() == neg.work() * cpu::kTranscendentalCost);
  // In a fusion: a per-element exp counts, a per-row one (a reduction's result, broadcast back) does not.
  auto soft = space_of(softmax_module(DType::float32, 256, 256), 1);
  CHECK(soft.cost_per_point == cpu::kTranscendentalCost);
  auto row_log = space_of(R"(HloModule m

%fused (a: f32[256,256]) -> f32[256,256] {
  %a = f32[256,256] parameter(0)
  %z = f32[] constant(0)
  %s = f32[256] reduce(%a, %z), dimensions={1}, reducer=add
  %l = f32[256] log(%s)
  %lb = f32[256,256] broadcast(%l), broadcast_dimensions={0}
  ROOT %d = f32[256,256] subtract(%a, %lb)
}

ENTRY %main (a: f32[256,256]) -> (f32[256,256]) {
  %a = f32[256,256] parameter(0)
  %f = f32[256,256] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[256,256]) tuple(%f)
}
)",
                          1);
  CHECK(row_log.cost_per_point == 1);
  // Numbers unchanged: the split softmax against the interpreter.
  check_module(softmax_module(DType::float32, 256, 256));
}
