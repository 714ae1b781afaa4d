// The algebraic simplifier: each rewrite rule on HLO text (identities, negation, division, power, convert, reshape,
// transpose and broadcast chains, slices, reduces of broadcasts, dots of transposes, selects, 1 + tanh), run with
// DCE, the numbers checked on the interpreter; and what it must not change.
#include <catch2/catch.hpp>

#include "hlo/passes/algebraic_simplifier.h"
#include "hlo/passes/dce.h"
#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;
using detail::Literal;

namespace {
/// The simplifier followed by DCE, so the text shows only what is left.
Result simplify(std::string_view text) { return run(text, passes<AlgebraicSimplifier, DeadCodeElimination>()); }
}  // namespace

TEST_CASE("algsimp: additive and multiplicative identities", "[hlo]") {
  SECTION("A + 0 => A and 0 + A => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %z = f32[] constant(0)
  %bz = f32[4] broadcast(%z), broadcast_dimensions={}
  %a = f32[4] add(%p, %bz)
  %b = f32[4] add(%bz, %a)
  ROOT %n = f32[4] negate(%b)
}
)");
    CHECK_THAT(r.text, Contains("ROOT %n = f32[4]{0} negate(%p)"));
    CHECK(count_of(r.text, "add(") == 0);
  }
  SECTION("A - 0 => A, A * 1 => A, 1 * A => A on integers and floats") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[2,3], q: f32[3]) -> (s32[2,3], f32[3]) {
  %p = s32[2,3] parameter(0)
  %q = f32[3] parameter(1)
  %zero = s32[2,3] constant({{0, 0, 0}, {0, 0, 0}})
  %one = s32[] constant(1)
  %bone = s32[2,3] broadcast(%one), broadcast_dimensions={}
  %s = s32[2,3] subtract(%p, %zero)
  %m = s32[2,3] multiply(%bone, %s)
  %fone = f32[3] constant({1, 1, 1})
  %fm = f32[3] multiply(%q, %fone)
  ROOT %t = (s32[2,3], f32[3]) tuple(%m, %fm)
}
)");
    CHECK_THAT(r.text, Contains("tuple(%p, %q)"));
  }
  SECTION("A * 0 => 0 for integers") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[4]) -> s32[4] {
  %p = s32[4] parameter(0)
  %z = s32[] constant(0)
  %bz = s32[4] broadcast(%z), broadcast_dimensions={}
  %m = s32[4] multiply(%p, %bz)
  ROOT %a = s32[4] subtract(%m, %p)
}
)");
    CHECK_THAT(r.text, Contains("ROOT %a = s32[4]{0} subtract(%bz, %p)"));
  }
  SECTION("must not change: A * 0 for floats, A - (-0), A + 1") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %z = f32[] constant(0)
  %bz = f32[4] broadcast(%z), broadcast_dimensions={}
  %nz = f32[] constant(-0)
  %bnz = f32[4] broadcast(%nz), broadcast_dimensions={}
  %one = f32[] constant(1)
  %b1 = f32[4] broadcast(%one), broadcast_dimensions={}
  %m = f32[4] multiply(%p, %bz)
  %s = f32[4] subtract(%p, %bnz)
  %a = f32[4] add(%p, %b1)
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%m, %s, %a)
}
)");
  }
}

TEST_CASE("algsimp: negation, division, power, convert", "[hlo]") {
  SECTION("--A => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s8[5]) -> s8[5] {
  %p = s8[5] parameter(0)
  %n1 = s8[5] negate(%p)
  %n2 = s8[5] negate(%n1)
  ROOT %a = s8[5] abs(%n2)
}
)");
    CHECK_THAT(r.text, Contains("abs(%p)"));
  }
  SECTION("A / c => A * (1/c) for a power of two") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,2], q: bf16[3]) -> (f32[2,2], bf16[3]) {
  %p = f32[2,2] parameter(0)
  %q = bf16[3] parameter(1)
  %c = f32[] constant(0.25)
  %bc = f32[2,2] broadcast(%c), broadcast_dimensions={}
  %d = f32[2,2] divide(%p, %bc)
  %c2 = bf16[3] constant({-8, -8, -8})
  %d2 = bf16[3] divide(%q, %c2)
  ROOT %t = (f32[2,2], bf16[3]) tuple(%d, %d2)
}
)");
    CHECK(count_of(r.text, "divide(") == 0);
    CHECK(count_of(r.text, "multiply(") == 2);
    CHECK_THAT(r.text, Contains("f32[]{} constant(4)"));
    CHECK_THAT(r.text, Contains("f32[]{} constant(-0.125)"));  // bf16: the reciprocal and product in f32
    CHECK_THAT(r.text, Contains("bf16[3]{0} convert("));
  }
  SECTION("must not change: A / 0, integer division, a division by an array of the result's size") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2], q: s32[2], r: f32[2]) -> (f32[2], s32[2], f32[2]) {
  %p = f32[2] parameter(0)
  %q = s32[2] parameter(1)
  %r = f32[2] parameter(2)
  %zero = f32[2] constant({0, 0})
  %two = s32[2] constant({2, 2})
  %d2 = f32[2] divide(%p, %zero)
  %d3 = s32[2] divide(%q, %two)
  %d4 = f32[2] divide(%p, %r)
  ROOT %t = (f32[2], s32[2], f32[2]) tuple(%d2, %d3, %d4)
}
)");
  }
  SECTION("A / c => A * (1/c) folded in the dtype, A / broadcast(B) => A * broadcast(1 / B), as XLA") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,3], s: f32[2], h: bf16[2,3], t: bf16[2]) -> (f32[2,3], f32[2,3], bf16[2,3]) {
  %p = f32[2,3] parameter(0)
  %s = f32[2] parameter(1)
  %h = bf16[2,3] parameter(2)
  %t = bf16[2] parameter(3)
  %three = f32[] constant(3)
  %b3 = f32[2,3] broadcast(%three), broadcast_dimensions={}
  %d1 = f32[2,3] divide(%p, %b3)
  %bs = f32[2,3] broadcast(%s), broadcast_dimensions={0}
  %d2 = f32[2,3] divide(%p, %bs)
  %bt = bf16[2,3] broadcast(%t), broadcast_dimensions={0}
  %d3 = bf16[2,3] divide(%h, %bt)
  ROOT %r = (f32[2,3], f32[2,3], bf16[2,3]) tuple(%d1, %d2, %d3)
}
)");
    INFO(r.text);
    CHECK_THAT(r.text, Contains("constant(0.33333334)"));  // 1/3 rounded to f32
    CHECK(count_of(r.text, "divide(") == 2);               // 1 / s, and 1 / t in f32
    CHECK_THAT(r.text, Contains("f32[2]{0} divide("));
    CHECK(count_of(r.text, "multiply(") == 3);
    CHECK_THAT(r.text, Contains("f32[2,3]{1,0} convert(%h)"));  // bf16: the product in f32, rounded once
  }
  SECTION("pow(A, 2) => A * A and pow(A, 1) => A; convert to the same type") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %two = f32[3] constant({2, 2, 2})
  %pw = f32[3] power(%p, %two)
  %one = s32[] constant(1)
  %b1 = s32[3] broadcast(%one), broadcast_dimensions={}
  %pw1 = s32[3] power(%q, %b1)
  %cv = f32[3] convert(%p)
  ROOT %t = (f32[3], s32[3], f32[3]) tuple(%pw, %pw1, %cv)
}
)");
    CHECK_THAT(r.text, Contains("multiply(%p, %p)"));
    CHECK(count_of(r.text, "power(") == 0);
    CHECK(count_of(r.text, "convert(") == 0);
    CHECK_THAT(r.text, Contains(", %q, %p)"));
  }
  SECTION("must not change: exp(log(A)), pow(A, 3), convert to another type") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[3], f32[3], s32[3]) {
  %p = f32[3] parameter(0)
  %l = f32[3] log(%p)
  %e = f32[3] exponential(%l)
  %three = f32[3] constant({3, 3, 3})
  %pw = f32[3] power(%p, %three)
  %cv = s32[3] convert(%p)
  ROOT %t = (f32[3], f32[3], s32[3]) tuple(%e, %pw, %cv)
}
)");
  }
}

TEST_CASE("algsimp: reshape, transpose and broadcast chains", "[hlo]") {
  SECTION("reshape(reshape(A)) => reshape(A), reshape(A) => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,6]) -> (f32[3,4], f32[2,6]) {
  %p = f32[2,6] parameter(0)
  %r1 = f32[12] reshape(%p)
  %r2 = f32[3,4] reshape(%r1)
  %r3 = f32[12] reshape(%p)
  %r4 = f32[2,6] reshape(%r3)
  ROOT %t = (f32[3,4], f32[2,6]) tuple(%r2, %r4)
}
)");
    CHECK(count_of(r.text, "reshape(") == 1);
    CHECK_THAT(r.text, Contains("f32[3,4]{1,0} reshape(%p)"));
    CHECK_THAT(r.text, Contains(", %p)"));
  }
  SECTION("transpose(transpose(A)) composed or removed") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[2,3,4]) -> (f32[4,2,3], f32[2,3,4]) {
  %p = f32[2,3,4] parameter(0)
  %t1 = f32[3,4,2] transpose(%p), permutation={1,2,0}
  %t2 = f32[4,2,3] transpose(%t1), permutation={1,2,0}
  %t3 = f32[3,2,4] transpose(%p), permutation={1,0,2}
  %t4 = f32[2,3,4] transpose(%t3), permutation={1,0,2}
  ROOT %t = (f32[4,2,3], f32[2,3,4]) tuple(%t2, %t4)
}
)");
    CHECK(count_of(r.text, "transpose(") == 1);
    CHECK_THAT(r.text, Contains("f32[4,2,3]{2,1,0} transpose(%p), permutation={2,0,1}"));
    CHECK_THAT(r.text, Contains(", %p)"));
  }
  SECTION("broadcast(broadcast(A)) => broadcast(A), including a size-1 dimension") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3,1]) -> f32[2,3,5,4] {
  %p = f32[3,1] parameter(0)
  %b1 = f32[3,4] broadcast(%p), broadcast_dimensions={0,1}
  ROOT %b2 = f32[2,3,5,4] broadcast(%b1), broadcast_dimensions={1,3}
}
)");
    CHECK(count_of(r.text, "broadcast(") == 1);
    CHECK_THAT(r.text, Contains("broadcast(%p), broadcast_dimensions={1,3}"));
  }
  SECTION("must not change: a reshape that changes the shape, a real transpose") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2,6]) -> (f32[12], f32[6,2]) {
  %p = f32[2,6] parameter(0)
  %r = f32[12] reshape(%p)
  %t = f32[6,2] transpose(%p), permutation={1,0}
  ROOT %tu = (f32[12], f32[6,2]) tuple(%r, %t)
}
)");
  }
}

TEST_CASE("algsimp: slices", "[hlo]") {
  SECTION("slice(slice(A)) => slice(A) with strides") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: s32[20,6]) -> s32[3,2] {
  %p = s32[20,6] parameter(0)
  %s1 = s32[9,6] slice(%p), start_indices={2,0}, limit_indices={19,6}, strides={2,1}
  ROOT %s2 = s32[3,2] slice(%s1), start_indices={1,1}, limit_indices={8,5}, strides={3,2}
}
)");
    CHECK(count_of(r.text, "slice(") == 1);
    CHECK_THAT(r.text, Contains("slice(%p), limit_indices={17,4}, start_indices={4,1}, strides={6,2}"));
  }
  SECTION("full-range slice => A") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[4,1]) -> f32[4,1] {
  %p = f32[4,1] parameter(0)
  %s = f32[4,1] slice(%p), start_indices={0,0}, limit_indices={4,1}, strides={1,3}
  ROOT %n = f32[4,1] negate(%s)
}
)");
    CHECK_THAT(r.text, Contains("negate(%p)"));
  }
  SECTION("must not change: a slice that drops elements") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[3] {
  %p = f32[4] parameter(0)
  ROOT %s = f32[3] slice(%p), start_indices={1}, limit_indices={4}, strides={1}
}
)");
  }
}

TEST_CASE("algsimp: reduce of a broadcast", "[hlo]") {
  SECTION("add over broadcast dims => multiply by the count") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3,2]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %b = f32[4,3,5] broadcast(%p), broadcast_dimensions={1}
  %z = f32[] constant(0)
  %r = f32[3] reduce(%b, %z), dimensions={0,2}, reducer=add
  %bq = s32[3,7,2] broadcast(%q), broadcast_dimensions={0}
  %zi = s32[] constant(0)
  %ri = s32[3,2] reduce(%bq, %zi), dimensions={1}, reducer=add
  ROOT %t = (f32[3], s32[3,2]) tuple(%r, %ri)
}
)");
    CHECK(count_of(r.text, "reduce(") == 0);
    CHECK_THAT(r.text, Contains("f32[]{} constant(20)"));
    CHECK_THAT(r.text, Contains("s32[]{} constant(7)"));
    CHECK_THAT(r.text, Contains("s32[3,2]{1,0} broadcast(%q), broadcast_dimensions={0}"));
  }
  SECTION("max and min over broadcast dims => the operand") {
    auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: s32[3]) -> (f32[3], s32[3]) {
  %p = f32[3] parameter(0)
  %q = s32[3] parameter(1)
  %b = f32[3,5] broadcast(%p), broadcast_dimensions={0}
  %ninf = f32[] constant(-inf)
  %r = f32[3] reduce(%b, %ninf), dimensions={1}, reducer=max
  %bq = s32[6,3] broadcast(%q), broadcast_dimensions={1}
  %big = s32[] constant(2147483647)
  %ri = s32[3] reduce(%bq, %big), dimensions={0}, reducer=min
  ROOT %t = (f32[3], s32[3]) tuple(%r, %ri)
}
)");
    CHECK_THAT(r.text, Contains("tuple(%p, %q)"));
  }
  SECTION("must not change: reducing a dim that carries data, a non-identity init, mul") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[3]) -> (f32[4], f32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %b = f32[4,3] broadcast(%p), broadcast_dimensions={1}
  %z = f32[] constant(0)
  %one = f32[] constant(1)
  %r1 = f32[4] reduce(%b, %z), dimensions={1}, reducer=add
  %r2 = f32[3] reduce(%b, %one), dimensions={0}, reducer=add
  %r3 = f32[3] reduce(%b, %one), dimensions={0}, reducer=mul
  ROOT %t = (f32[4], f32[3], f32[3]) tuple(%r1, %r2, %r3)
}
)");
  }
}

TEST_CASE("algsimp: dot with a transposed operand", "[hlo]") {
  SECTION("x @ w.T folds the transpose into the dimension numbers") {
    auto r = simplify(R"(HloModule m
ENTRY %main (x: f32[4,3], w: f32[5,3]) -> f32[4,5] {
  %x = f32[4,3] parameter(0)
  %w = f32[5,3] parameter(1)
  %wt = f32[3,5] transpose(%w), permutation={1,0}
  ROOT %d = f32[4,5] dot(%x, %wt), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text, Contains("dot(%x, %w), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, "
                                "rhs_batch_dimensions={}, rhs_contracting_dimensions={1}"));
  }
  SECTION("batched lhs transpose") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[3,2,4], b: f32[2,3,5]) -> f32[2,4,5] {
  %a = f32[3,2,4] parameter(0)
  %b = f32[2,3,5] parameter(1)
  %at = f32[2,4,3] transpose(%a), permutation={1,2,0}
  ROOT %d = f32[2,4,5] dot(%at, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
}
)");
    CHECK_THAT(r.text, Contains("dot(%a, %b), lhs_batch_dimensions={1}, lhs_contracting_dimensions={0}"));
  }
  SECTION("must not change: a transpose that reorders the free dims") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[4,2,3], b: f32[3,5]) -> f32[2,4,5] {
  %a = f32[4,2,3] parameter(0)
  %b = f32[3,5] parameter(1)
  %at = f32[2,4,3] transpose(%a), permutation={1,0,2}
  ROOT %d = f32[2,4,5] dot(%at, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)");
  }
}

TEST_CASE("algsimp: a transposed dot becomes the dot with its operands swapped", "[hlo]") {
  SECTION("transpose(dot(g, x)) => dot(x, g) (a weight gradient)") {
    auto r = simplify(R"(HloModule m
ENTRY %main (g: f32[6,4], x: f32[6,5]) -> f32[5,4] {
  %g = f32[6,4] parameter(0)
  %x = f32[6,5] parameter(1)
  %d = f32[4,5] dot(%g, %x), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[5,4] transpose(%d), permutation={1,0}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text, Contains("f32[5,4]{1,0} dot(%x, %g), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, "
                                "rhs_batch_dimensions={}, rhs_contracting_dimensions={0}"));
  }
  SECTION("free dimension blocks of several dimensions swap as blocks") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[4,5]) -> f32[5,2,3] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[5,2,3] transpose(%d), permutation={2,0,1}
}
)");
    CHECK(count_of(r.text, "transpose(") == 0);
    CHECK_THAT(r.text,
               Contains("f32[5,2,3]{2,1,0} dot(%b, %a), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, "
                        "rhs_batch_dimensions={}, rhs_contracting_dimensions={2}"));
  }
  SECTION("must not change: the dot has another user, a batch dimension, or the permutation mixes the blocks") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (g: f32[6,4], x: f32[6,5]) -> (f32[5,4], f32[4,5]) {
  %g = f32[6,4] parameter(0)
  %x = f32[6,5] parameter(1)
  %d = f32[4,5] dot(%g, %x), lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %t = f32[5,4] transpose(%d), permutation={1,0}
  ROOT %r = (f32[5,4], f32[4,5]) tuple(%t, %d)
}
)");
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[2,4,5]) -> f32[2,5,3] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[2,4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
  ROOT %t = f32[2,5,3] transpose(%d), permutation={0,2,1}
}
)");
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[4,5]) -> f32[3,5,2] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[4,5] parameter(1)
  %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %t = f32[3,5,2] transpose(%d), permutation={1,2,0}
}
)");
  }
}

TEST_CASE("algsimp: select with a constant predicate", "[hlo]") {
  auto r = simplify(R"(HloModule m
ENTRY %main (p: f32[3], q: f32[3], c: pred[3]) -> (f32[3], f32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %q = f32[3] parameter(1)
  %c = pred[3] parameter(2)
  %t = pred[] constant(true)
  %f = pred[3] constant({false, false, false})
  %s1 = f32[3] select(%t, %p, %q)
  %s2 = f32[3] select(%f, %p, %q)
  %s3 = f32[3] select(%c, %p, %q)
  ROOT %tu = (f32[3], f32[3], f32[3]) tuple(%s1, %s2, %s3)
}
)");
  CHECK_THAT(r.text, Contains("tuple(%p, %q, %s3)"));
  check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (p: f32[2], q: f32[2]) -> f32[2] {
  %p = f32[2] parameter(0)
  %q = f32[2] parameter(1)
  %mixed = pred[2] constant({true, false})
  ROOT %s = f32[2] select(%mixed, %p, %q)
}
)");
}

TEST_CASE("algsimp: 1 + tanh(y) becomes 2 logistic(2y), power-of-two scalings fold", "[hlo]") {
  SECTION("GELU's tail 0.5 x (1 + tanh(u)) becomes x * logistic(2u), the 2 folded into u's constant") {
    auto r = simplify(R"(HloModule m
ENTRY %main (x: f32[64]) -> f32[64] {
  %x = f32[64] parameter(0)
  %k = f32[] constant(0.797884583)
  %kb = f32[64] broadcast(%k), broadcast_dimensions={}
  %u = f32[64] multiply(%x, %kb)
  %t = f32[64] tanh(%u)
  %one = f32[] constant(1)
  %ob = f32[64] broadcast(%one), broadcast_dimensions={}
  %s = f32[64] add(%ob, %t)
  %half = f32[] constant(0.5)
  %hb = f32[64] broadcast(%half), broadcast_dimensions={}
  %hx = f32[64] multiply(%hb, %x)
  ROOT %g = f32[64] multiply(%hx, %s)
}
)");
    CHECK(count_of(r.text, "tanh(") == 0);
    CHECK(count_of(r.text, " logistic(") == 1);
    CHECK(count_of(r.text, " multiply(") == 2);  // x * 2k and x * logistic: the 0.5 and the 2s are gone
    CHECK_THAT(r.text, Contains("constant(1.595769"));
  }
  SECTION("tanh(y) + 1 with other scalings keeps the factor 2") {
    auto r = simplify(R"(HloModule m
ENTRY %main (y: f32[8], z: f32[8]) -> f32[8] {
  %y = f32[8] parameter(0)
  %z = f32[8] parameter(1)
  %t = f32[8] tanh(%y)
  %one = f32[8] constant({1, 1, 1, 1, 1, 1, 1, 1})
  %s = f32[8] add(%t, %one)
  ROOT %m = f32[8] multiply(%s, %z)
}
)");
    CHECK(count_of(r.text, "tanh(") == 0);
    CHECK(count_of(r.text, " logistic(") == 1);
  }
  SECTION("a tanh read elsewhere stays (the rewrite would compute both)") {
    check_unchanged<AlgebraicSimplifier>(R"(HloModule m
ENTRY %main (y: f32[8]) -> (f32[8], f32[8]) {
  %y = f32[8] parameter(0)
  %t = f32[8] tanh(%y)
  %one = f32[] constant(1)
  %ob = f32[8] broadcast(%one), broadcast_dimensions={}
  %s = f32[8] add(%ob, %t)
  ROOT %r = (f32[8], f32[8]) tuple(%s, %t)
}
)");
  }
  SECTION("(A c1) c2 folds only when c2 is a power of two; (c1 A)(c2 B) only when c1 c2 = 1") {
    auto r = simplify(R"(HloModule m
ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4], f32[4], f32[4]) {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %c3 = f32[] constant(3)
  %c3b = f32[4] broadcast(%c3), broadcast_dimensions={}
  %c4 = f32[] constant(4)
  %c4b = f32[4] broadcast(%c4), broadcast_dimensions={}
  %c7 = f32[] constant(7)
  %c7b = f32[4] broadcast(%c7), broadcast_dimensions={}
  %c025 = f32[] constant(0.25)
  %c025b = f32[4] broadcast(%c025), broadcast_dimensions={}
  %a3 = f32[4] multiply(%a, %c3b)
  %folds = f32[4] multiply(%a3, %c4b)
  %keeps = f32[4] multiply(%a3, %c7b)
  %a4 = f32[4] multiply(%c4b, %a)
  %b025 = f32[4] multiply(%b, %c025b)
  %cancels = f32[4] multiply(%a4, %b025)
  %a7 = f32[4] multiply(%c7b, %a)
  %stays = f32[4] multiply(%a7, %b025)
  ROOT %r = (f32[4], f32[4], f32[4], f32[4]) tuple(%folds, %keeps, %cancels, %stays)
}
)");
    CHECK_THAT(r.text, Contains("constant(12)"));
    CHECK_THAT(r.text, Contains("multiply(%a, %b)"));
    CHECK_THAT(r.text, Contains("multiply(%a3, %c7b)"));
    CHECK_THAT(r.text, Contains("multiply(%a7, %b025)"));
  }
}
