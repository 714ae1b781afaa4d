// Layout assignment: a transpose feeding a minor-dimension reduce or a GEMM becomes a layout change, consumers that
// disagree share one copy, a loop fusion feeding a GEMM writes the layout the GEMM reads fastest; what must not
// change.
#include <catch2/catch.hpp>

#include "hlo/analysis/buffer_assignment.h"
#include "hlo/passes/layout_assignment.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;

TEST_CASE("layout: a transpose feeding a minor-dimension reduce becomes a layout change, a copy for the rest",
          "[fusion]") {
  auto r = run_pass<LayoutAssignment>(R"(HloModule transpose_reduce
ENTRY %main (x: f32[4,6]) -> (f32[4], f32[6,4]) {
  %x = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %z = f32[] constant(0)
  %r = f32[4] reduce(%t, %z), dimensions={0}, reducer=add
  %n = f32[6,4] negate(%t)
  ROOT %out = (f32[4], f32[6,4]) tuple(%r, %n)
}
)");
  CHECK(r.changed);
  check_lines(r.text, R"(
    %t = f32[6,4]{0,1} transpose(%x), permutation={1,0}
    %copy
    = f32[6,4]{1,0} copy(%t)
    reduce(%t, %z)
    negate(%copy
    ROOT %out = (f32[4]{0}, f32[6,4]{1,0}) tuple()");
  const Instruction* t = r.module->entry->find("t");
  CHECK(is_layout_bitcast(*t));
  // Buffer assignment and cost analysis see the transpose as free now.
  auto ba = assign_buffers(*r.module);
  CHECK(ba.value_of.at(t) == ba.value_of.at(r.module->entry->parameters[0]));
}

TEST_CASE("layout: consumers that disagree share one copy, a returned transpose stays row-major", "[fusion]") {
  auto r = run_pass<LayoutAssignment>(R"(HloModule transpose_dot
ENTRY %main (x: f32[4,6], w: f32[4,3]) -> (f32[6,4], f32[6,3], f32[6,4]) {
  %x = f32[4,6] parameter(0)
  %w = f32[4,3] parameter(1)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %d = f32[6,3] dot(%t, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %e = f32[6,4] exponential(%t)
  ROOT %out = (f32[6,4], f32[6,3], f32[6,4]) tuple(%t, %d, %e)
}
)");
  CHECK(is_layout_bitcast(*r.module->entry->find("t")));
  CHECK(count_of(r.text, " copy(") == 1);
  check_lines(r.text, R"(
    dot(%t, %w)
    exponential(%copy
    ROOT %out = (f32[6,4]{1,0}, f32[6,3]{1,0}, f32[6,4]{1,0}) tuple(%copy)");
  auto root = run_pass<LayoutAssignment>(R"(HloModule transpose_root
ENTRY %main (x: f32[4,6]) -> f32[6,4] {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(0)
  ROOT %t = f32[6,4] transpose(%x), permutation={1,0}
  %r = f32[4] reduce(%t, %z), dimensions={0}, reducer=add
}
)");
  CHECK(root.module->entry->root->opcode == Opcode::kCopy);
  for (auto& c : {r.module.get(), root.module.get()}) {
    for (auto* p : c->entry->parameters) CHECK(p->shape.layout.empty());
    CHECK(c->entry->root->shape.layout.empty());
  }
}

TEST_CASE("layout: a loop fusion feeding a GEMM writes the operand layout the GEMM reads fastest", "[fusion]") {
  // A fusion whose result is a function of a transposed operand: the GEMM's preferred [K, N] order (column-major
  // [N, K]) is also the operand's memory order.
  auto r = run_pass<LayoutAssignment>(R"(HloModule gemm_operand
%fused_computation (param_0: f32[3,5]) -> f32[5,3] {
  %param_0 = f32[3,5] parameter(0)
  %t = f32[5,3] transpose(%param_0), permutation={1,0}
  %e = f32[5,3] exponential(%t)
  ROOT %n = f32[5,3] negate(%e)
}

ENTRY %main (x: f32[4,3], w: f32[3,5]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[3,5] parameter(1)
  %f = f32[5,3] fusion(%w), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%x, %f), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}
}
)");
  check_lines(r.text, R"(
    ROOT %n = f32[5,3]{0,1} negate(%e)
    %f = f32[5,3]{0,1} fusion(%w), kind=kLoop)");
  // The lhs likewise: gelu(x.T)-like [M, K] fusions of a [K, M] array are written column-major (the GEMM reads a
  // transposed lhs without a copy), so the fusion reads and writes in the same order.
  auto l = run_pass<LayoutAssignment>(R"(HloModule gemm_lhs
%fused_computation (param_0: f32[3,4]) -> f32[4,3] {
  %param_0 = f32[3,4] parameter(0)
  %t = f32[4,3] transpose(%param_0), permutation={1,0}
  ROOT %e = f32[4,3] exponential(%t)
}

ENTRY %main (x: f32[3,4], w: f32[3,5]) -> f32[4,5] {
  %x = f32[3,4] parameter(0)
  %w = f32[3,5] parameter(1)
  %f = f32[4,3] fusion(%x), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%f, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
  check_lines(l.text, R"(
    %f = f32[4,3]{0,1} fusion(%x), kind=kLoop)");
}

TEST_CASE("layout: a loop fusion feeding a GEMM keeps the order it reads its operand in", "[fusion]") {
  // exp(w) read row-major and fed as a [N, K] rhs: writing it column-major would stride through w, and the GEMM
  // takes [N, K] as a transposed [K, N] without a copy.
  check_unchanged<LayoutAssignment>(R"(HloModule gemm_operand_row_major
%fused_computation (param_0: f32[5,3]) -> f32[5,3] {
  %param_0 = f32[5,3] parameter(0)
  %e = f32[5,3] exponential(%param_0)
  ROOT %n = f32[5,3] negate(%e)
}

ENTRY %main (x: f32[4,3], w: f32[5,3]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[5,3] parameter(1)
  %f = f32[5,3] fusion(%w), kind=kLoop, calls=%fused_computation
  ROOT %d = f32[4,5] dot(%x, %f), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}
}
)");
}

TEST_CASE("layout: must not change", "[fusion]") {
  // Transposes whose consumers all want row-major (elementwise, reshape, the result) keep moving data.
  check_unchanged<LayoutAssignment>(R"(HloModule keep
ENTRY %main (x: f32[4,6]) -> f32[24] {
  %x = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%x), permutation={1,0}
  %n = f32[6,4] negate(%t)
  ROOT %r = f32[24] reshape(%n)
}
)");
  check_unchanged<LayoutAssignment>(R"(HloModule no_transpose
ENTRY %main (x: f32[4,6]) -> f32[4] {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%x, %z), dimensions={1}, reducer=add
}
)");
}
