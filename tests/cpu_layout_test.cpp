// The CPU backend executes the layouts layout assignment chose: a transpose that became a layout change aliases
// its operand's buffer and its consumers (kernels, Eigen dots, output fusions) read through the layout; a loop
// fusion writes the layout it was given, in memory order; row-major-only steps get a copy (layout_copies).
// Every result is checked against the interpreter (which ignores layouts) on random inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "backend_test_util.h"
#include "backends/cpu/kernels.h"
#include "hlo/evaluator/evaluator.h"
#include "core/literal.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/jitx.h"
#include "runtime/runtime.h"
#include "test_util.h"

using namespace jitx;
using Catch::Matchers::Contains;
using detail::Literal;
using testing::check_native;

namespace {

runtime::Device& device() {
  static runtime::Device* d = new runtime::Device(0, "cpu-layout-test");
  return *d;
}

Literal random_literal(const hlo::Shape& s) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int64_t i = 0; i < l.size(); ++i) {
    if (is_floating(s.dtype)) l.set_f64(i, u(testing::rng()));
    else l.set_i64(i, static_cast<int64_t>(std::floor(u(testing::rng()) * 10)));
  }
  return l;
}

/// Runs text (with `T` replaced by the dtype's HLO name) on the CPU backend and the interpreter with the same
/// random inputs, compares every output, and returns the CPU executable's stats. The bound is the table's sum (the
/// short fused chains here, dots and reductions of layout-changed operands); dots sum K terms in another order, so
/// atol grows with K (atol_scale).
std::map<std::string, int64_t> check(std::string text, DType d = DType::float32, double atol_scale = 1) {
  std::string t(hlo::hlo_dtype_name(d));
  for (size_t at; (at = text.find("$T")) != std::string::npos;) text.replace(at, 2, t);
  INFO(text);
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  std::vector<Literal> args;
  for (auto* p : m->entry->parameters) args.push_back(random_literal(p->shape));
  evaluator::Value want = evaluator::evaluate(*m, args);
  auto exe = runtime::make_cpu_backend()->compile(m);
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (auto& a : args) bufs.push_back(runtime::Buffer::from_literal(a, &device()));
  auto outs = exe->execute(bufs, &device());
  REQUIRE(outs.size() == want.tuple.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    Literal g = outs[k]->literal();
    const Literal& w = want.tuple[k].array;
    INFO("output " << k);
    REQUIRE(g.dims == w.dims);
    int64_t bad = 0;
    for (int64_t i = 0; i < w.size() && bad < 5; ++i) {
      double gv = g.get_f64(i), wv = w.get_f64(i);
      testing::Tol t = testing::tol(d, testing::Bound::kSum);
      bool ok = std::fabs(gv - wv) <= t.atol * atol_scale + t.rtol * std::fabs(wv);
      if (!ok) UNSCOPED_INFO("element " << i << ": got " << gv << " want " << wv);
      bad += !ok;
    }
    CHECK(bad == 0);
  }
  // The arguments are the caller's: nothing may have been written over them (an aliased transpose must not be).
  for (size_t k = 0; k < args.size(); ++k)
    CHECK(std::memcmp(bufs[k]->literal().data(), args[k].data(), args[k].nbytes()) == 0);
  auto st = exe->stats();
  CHECK(st.at("interpreter_fallbacks") == 0);
  return st;
}

const std::vector<DType> kDotTypes{DType::float32, DType::float64, DType::bfloat16};
const std::vector<DType> kAllTypes{DType::float32, DType::float64, DType::bfloat16, DType::int32};

}  // namespace

TEST_CASE("cpu layouts: a transpose made a layout change feeds a dot with no copy (lhs, rhs, batched)", "[cpu]") {
  for (DType d : kDotTypes) {
    INFO(hlo::hlo_dtype_name(d));
    // lhs: a [K, M] array transposed is column-major [M, K]; rhs: [N, K] transposed is column-major [K, N].
    auto st = check(R"(HloModule m
ENTRY %main (a: $T[40,24], b: $T[33,40]) -> ($T[24,33]) {
  %a = $T[40,24] parameter(0)
  %b = $T[33,40] parameter(1)
  %t = $T[24,40]{0,1} transpose(%a), permutation={1,0}
  %u = $T[40,33]{0,1} transpose(%b), permutation={1,0}
  %d = $T[24,33] dot(%t, %u), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  ROOT %r = ($T[24,33]) tuple(%d)
}
)",
                    d, 40);
    CHECK(st.at("native_kernels") == 0);
    CHECK(st.at("eigen_dots") == 1);
    CHECK(st.at("layout_copies") == 0);
    // Nor any memory: both transposes are their operands' buffers.
    CHECK(hlo::assign_buffers(*hlo::parse_hlo(R"(HloModule m
ENTRY %main (a: f32[40,24], b: f32[33,40]) -> (f32[24,33]) {
  %a = f32[40,24] parameter(0)
  %b = f32[33,40] parameter(1)
  %t = f32[24,40]{0,1} transpose(%a), permutation={1,0}
  %u = f32[40,33]{0,1} transpose(%b), permutation={1,0}
  ROOT %d = f32[24,33] dot(%t, %u), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
}
)"))
              .temp_size == 0);
    // Batched: [B, K, M] with its minor two dims swapped is a column-major [B, M, K] per batch.
    st = check(R"(HloModule m
ENTRY %main (a: $T[3,20,12], b: $T[3,20,7]) -> ($T[3,12,7]) {
  %a = $T[3,20,12] parameter(0)
  %b = $T[3,20,7] parameter(1)
  %t = $T[3,12,20]{1,2,0} transpose(%a), permutation={0,2,1}
  %d = $T[3,12,7] dot(%t, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
  ROOT %r = ($T[3,12,7]) tuple(%d)
}
)",
               d, 20);
    CHECK(st.at("native_kernels") == 0);
    CHECK(st.at("layout_copies") == 0);
    // A layout that is no transposed matrix ([B, K, M] read with its batch dim minor): the dot permutes it.
    st = check(R"(HloModule m
ENTRY %main (a: $T[12,3,20], b: $T[3,20,7]) -> ($T[3,12,7]) {
  %a = $T[12,3,20] parameter(0)
  %b = $T[3,20,7] parameter(1)
  %t = $T[3,12,20]{2,0,1} transpose(%a), permutation={1,0,2}
  %d = $T[3,12,7] dot(%t, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
  ROOT %r = ($T[3,12,7]) tuple(%d)
}
)",
               d, 20);
    CHECK(st.at("native_kernels") == 0);
  }
}

TEST_CASE("cpu layouts: kernels read operands through their layouts and write theirs in memory order", "[cpu]") {
  for (DType d : kAllTypes) {
    INFO(hlo::hlo_dtype_name(d));
    // %t aliases %a. The reduce over %t's dim 0 (minor in {0,1}) is a row reduction over %a; %f reads %t
    // column-major and writes row-major; %g writes column-major (its layout is %t's: linear indexing), and the
    // result, which must be row-major, gets a copy; %h is a multi-output fusion writing one output in each layout.
    auto st = check(R"(HloModule m
%fused (p: $T[8,6]) -> $T[8,6] {
  %p = $T[8,6]{0,1} parameter(0)
  %two = $T[] constant(2)
  %b = $T[8,6] broadcast(%two), broadcast_dimensions={}
  ROOT %m = $T[8,6] multiply(%p, %b)
}
%fused2 (q: $T[8,6]) -> $T[8,6] {
  %q = $T[8,6]{0,1} parameter(0)
  %n = $T[8,6] negate(%q)
  ROOT %a2 = $T[8,6]{0,1} add(%n, %q)
}
%fused3 (q: $T[8,6], w: $T[8,6]) -> ($T[8,6], $T[8,6]) {
  %q = $T[8,6]{0,1} parameter(0)
  %w = $T[8,6] parameter(1)
  %s = $T[8,6] subtract(%q, %w)
  %m = $T[8,6] multiply(%q, %w)
  ROOT %o = ($T[8,6]{0,1}, $T[8,6]) tuple(%s, %m)
}
%fused4 (q: $T[8,6]) -> $T[6] {
  %q = $T[8,6]{0,1} parameter(0)
  %a = $T[8,6] abs(%q)
  %z = $T[] constant(0)
  ROOT %r = $T[6] reduce(%a, %z), dimensions={0}, reducer=max
}
ENTRY %main (a: $T[6,8], w: $T[8,6]) -> ($T[6], $T[8,6], $T[8,6], $T[6,8], $T[8,6], $T[8,6], $T[6]) {
  %a = $T[6,8] parameter(0)
  %w = $T[8,6] parameter(1)
  %t = $T[8,6]{0,1} transpose(%a), permutation={1,0}
  %z = $T[] constant(0)
  %r = $T[6] reduce(%t, %z), dimensions={0}, reducer=add
  %f = $T[8,6] fusion(%t), kind=kLoop, calls=%fused
  %g = $T[8,6]{0,1} fusion(%t), kind=kLoop, calls=%fused2
  %n = $T[6,8] negate(%a)
  %h = ($T[8,6]{0,1}, $T[8,6]) fusion(%t, %w), kind=kLoop, calls=%fused3
  %h0 = $T[8,6]{0,1} get-tuple-element(%h), index=0
  %h1 = $T[8,6] get-tuple-element(%h), index=1
  %x = $T[6] fusion(%t), kind=kInput, calls=%fused4
  ROOT %out = ($T[6], $T[8,6], $T[8,6], $T[6,8], $T[8,6], $T[8,6], $T[6]) tuple(%r, %f, %g, %n, %h0, %h1, %x)
}
)", d);
    CHECK(st.at("native_kernels") == 8);  // r, f, g, n, h, x and copies of g and h0 for the result; no transpose
    CHECK(st.at("layout_copies") == 2);
  }
}

TEST_CASE("cpu layouts: larger shapes split across threads in memory order, reductions of layout-changed operands",
          "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16}) {
    INFO(hlo::hlo_dtype_name(d));
    // [300, 700] read through a [700, 300]{0,1} alias: the loop fusion's output is column-major ({0,1}), so its
    // loop nest runs over 300 rows of 700 columns of memory; the sum over dim 1 is a column reduction in memory.
    auto st = check(R"(HloModule m
%fused (p: $T[700,300]) -> $T[700,300] {
  %p = $T[700,300]{0,1} parameter(0)
  %e = $T[700,300] exponential(%p)
  ROOT %s = $T[700,300]{0,1} tanh(%e)
}
ENTRY %main (a: $T[300,700]) -> ($T[300], $T[700], $T[300,700]) {
  %a = $T[300,700] parameter(0)
  %t = $T[700,300]{0,1} transpose(%a), permutation={1,0}
  %z = $T[] constant(0)
  %r = $T[300] reduce(%t, %z), dimensions={0}, reducer=add
  %c = $T[700] reduce(%t, %z), dimensions={1}, reducer=add
  %f = $T[700,300]{0,1} fusion(%t), kind=kLoop, calls=%fused
  %back = $T[300,700] transpose(%f), permutation={1,0}
  ROOT %out = ($T[300], $T[700], $T[300,700]) tuple(%r, %c, %back)
}
)", d, 30);
    CHECK(st.at("native_kernels") ==
          3);  // the second transpose is a layout change too: %f's memory is row-major [300, 700]
    CHECK(st.at("layout_copies") == 0);
  }
}

TEST_CASE("cpu layouts: a loop fusion writes a column-major GEMM operand, vectorised", "[cpu]") {
  std::string text = R"(HloModule m
%fused (p: f32[256,96]) -> f32[256,96] {
  %p = f32[256,96] parameter(0)
  %e = f32[256,96] exponential(%p)
  ROOT %n = f32[256,96]{0,1} negate(%e)
}
ENTRY %main (x: f32[64,96], w: f32[256,96]) -> (f32[64,256]) {
  %x = f32[64,96] parameter(0)
  %w = f32[256,96] parameter(1)
  %f = f32[256,96]{0,1} fusion(%w), kind=kLoop, calls=%fused
  %d = f32[64,256] dot(%x, %f), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}
  ROOT %r = (f32[64,256]) tuple(%d)
}
)";
  auto st = check(text, DType::float32, 96);
  CHECK(st.at("native_kernels") == 1);
  CHECK(st.at("eigen_dots") == 1);
  CHECK(st.at("layout_copies") == 0);
  // The fusion's loop nest runs along its memory's minor dim (256, logical dim 0): stores are contiguous and the
  // loop is still vectorised (strided loads of %w).
  auto m = hlo::parse_hlo(text);
  std::string ir = cpu::optimized_ir({m->entry->find("f")});
  CHECK_THAT(ir, Contains("x float>"));
}

TEST_CASE("cpu layouts: output fusions and row-major-only ops", "[cpu]") {
  // An output fusion (a dot with an epilogue) reads its operands through their layouts.
  auto st = check(R"(HloModule m
%fused (p: f32[24,40], q: f32[40,33], b: f32[33]) -> f32[24,33] {
  %p = f32[24,40]{0,1} parameter(0)
  %q = f32[40,33]{0,1} parameter(1)
  %b = f32[33] parameter(2)
  %d = f32[24,33] dot(%p, %q), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %bb = f32[24,33] broadcast(%b), broadcast_dimensions={1}
  %s = f32[24,33] add(%d, %bb)
  ROOT %th = f32[24,33] tanh(%s)
}
ENTRY %main (a: f32[40,24], c: f32[33,40], b: f32[33]) -> (f32[24,33]) {
  %a = f32[40,24] parameter(0)
  %c = f32[33,40] parameter(1)
  %b = f32[33] parameter(2)
  %t = f32[24,40]{0,1} transpose(%a), permutation={1,0}
  %u = f32[40,33]{0,1} transpose(%c), permutation={1,0}
  %f = f32[24,33] fusion(%t, %u, %b), kind=kOutput, calls=%fused
  ROOT %r = (f32[24,33]) tuple(%f)
}
)",
                  DType::float32, 40);
  CHECK(st.at("library_ops") == 1);
  CHECK(st.at("native_kernels") == 0);
  CHECK(st.at("layout_copies") == 0);
  // A sort reads row-major only: the backend copies its layout-changed operand first. A parameter declared
  // column-major is the caller's row-major buffer all the same; a column-major result is returned row-major.
  st = check(R"(HloModule m
ENTRY %main (a: f32[6,20], p: f32[5,7]) -> (f32[20,6], f32[5,7], f32[7,5]) {
  %a = f32[6,20] parameter(0)
  %p = f32[5,7]{0,1} parameter(1)
  %t = f32[20,6]{0,1} transpose(%a), permutation={1,0}
  %s = f32[20,6] sort(%t), dimension=1, num_keys=1, is_stable=true
  %e = f32[5,7]{0,1} exponential(%p)
  %pt = f32[7,5]{0,1} transpose(%p), permutation={1,0}
  ROOT %out = (f32[20,6], f32[5,7], f32[7,5]) tuple(%s, %e, %pt)
}
)");
  CHECK(st.at("layout_copies") == 3);  // %t for the sort, %e and %pt for the result
  CHECK(st.at("library_ops") == 1);
}

TEST_CASE("cpu layouts: a transpose made a layout change inside a while body", "[cpu][control]") {
  for (DType d : kDotTypes) {
    INFO(hlo::hlo_dtype_name(d));
    auto st = check(R"(HloModule m
%cond (i: s32[], h: $T[16,16], w: $T[16,16]) -> pred[] {
  %i = s32[] parameter(0)
  %h = $T[16,16] parameter(1)
  %w = $T[16,16] parameter(2)
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), compare_type=SIGNED, direction=LT
}
%fused (p: $T[16,16]) -> $T[16,16] {
  %p = $T[16,16]{0,1} parameter(0)
  ROOT %th = $T[16,16] tanh(%p)
}
%body (i: s32[], h: $T[16,16], w: $T[16,16]) -> (s32[], $T[16,16], $T[16,16]) {
  %i = s32[] parameter(0)
  %h = $T[16,16] parameter(1)
  %w = $T[16,16] parameter(2)
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %wt = $T[16,16]{0,1} transpose(%w), permutation={1,0}
  %d = $T[16,16] dot(%h, %wt), lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}
  %ht = $T[16,16]{0,1} transpose(%d), permutation={1,0}
  %h1 = $T[16,16] fusion(%ht), kind=kLoop, calls=%fused
  ROOT %t = (s32[], $T[16,16], $T[16,16]) tuple(%i1, %h1, %wt)
}
ENTRY %main (h: $T[16,16], w: $T[16,16]) -> ($T[16,16], $T[16,16]) {
  %h = $T[16,16] parameter(0)
  %w = $T[16,16] parameter(1)
  %zero = s32[] constant(0)
  %l = (s32[], $T[16,16], $T[16,16]) while(%zero, %h, %w), calls=%cond, %body
  %g1 = $T[16,16] get-tuple-element(%l), index=1
  %g2 = $T[16,16] get-tuple-element(%l), index=2
  ROOT %out = ($T[16,16], $T[16,16]) tuple(%g1, %g2)
}
)",
                    // Four rounds of a 16-term dot through tanh: where tanh is not saturated, a rounding difference
                    // grows about sqrt(16) * 1.7 times a round (|w| <= 3), so f32's sum bound is scaled further
                    // (an input drawn after the whole [cpu] group's was 2.3e-5 off at 0.3; bf16's bound covers it).
                    d, d == DType::float32 ? 64 : 16);
    CHECK(st.at("while_loops") == 1);
    CHECK(st.at("layout_copies") == 1);  // %wt returned as a carry is copied to row-major
  }
}

TEST_CASE("cpu layouts: a jitted transpose read by a reduction and an elementwise op is a layout change",
          "[cpu][jit]") {
  // Layout assignment makes x.T a layout change (the reduction over its dim 0 then reads x's rows) and copies it
  // to row-major for exp; no temporary holds the transpose itself, only the copy.
  const int64_t m = 48, n = 40;
  std::vector<double> xv = testing::uniform(m * n, -2, 2);
  Array x = testing::make(xv, {m, n}, DType::float32);
  auto f = jit([](Array x) {
    Array t = x.T();
    return std::vector<Array>{jnp::sum(t, {0}), jnp::exp(t)};
  });
  auto c = f.lower(x).compile();
  auto out = c(x);
  std::vector<double> sum(m, 0.0), scale(m, 0.0), ex(n * m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = static_cast<float>(xv[i * n + j]);
      sum[i] += v;
      scale[i] += std::fabs(v);
      ex[j * m + i] = std::exp(v);
    }
  testing::check_close(out[0], sum, DType::float32, "sum(x.T, 0)", scale);
  testing::check_close(out[1], ex, DType::float32, "exp(x.T)");
  CHECK(c.memory_analysis().temp_size_in_bytes <= m * n * 4);
  if (default_platform() == "cpu") {
    auto st = c.executable_stats();
    INFO(c.as_text());
    CHECK(st.at("native_kernels") == 3);  // the reduction, the copy, exp: no transpose kernel
    CHECK(st.at("layout_copies") == 0);
    CHECK(st.at("interpreter_fallbacks") == 0);
  }
}

TEST_CASE("cpu layouts: a layout-changed transpose inside a jitted scan body", "[cpu][jit][control]") {
  // Per step: t = c.T (of the carry) is read by a reduction and by tanh(t + x), so layout assignment makes it a
  // layout change inside the loop body (plus a copy for the elementwise consumer).
  const int64_t steps = 5, n = 6;
  std::vector<double> cv = testing::uniform(n * n, -1, 1), xv = testing::uniform(steps * n * n, -1, 1);
  Array c0 = testing::make(cv, {n, n}, DType::float32), xs = testing::make(xv, {steps, n, n}, DType::float32);
  auto f = jit([](Array c0, Array xs) {
    auto [c, ys] = lax::scan(
        [](Array c, Array x) {
          Array t = c.T();
          return std::make_pair(jnp::tanh(t + x), jnp::sum(t, {0}));
        },
        c0, xs);
    return std::vector<Array>{c, ys};
  });
  auto comp = f.lower(c0, xs).compile();
  auto out = comp(c0, xs);
  std::vector<double> c(cv.size()), ys(steps * n, 0.0), scale(steps * n, 0.0);
  for (size_t i = 0; i < cv.size(); ++i) c[i] = static_cast<float>(cv[i]);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<double> next(c.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double t = c[j * n + i];  // t[i][j] = c[j][i]
        next[i * n + j] = std::tanh(t + static_cast<float>(xv[(s * n + i) * n + j]));
        ys[s * n + j] += t;
        scale[s * n + j] += std::fabs(t);
      }
    c = next;
  }
  std::vector<double> ones(c.size(), 4.0);  // a few f32 ULPs of tanh per step, compounded
  testing::check_close(out[0], c, DType::float32, "carry", ones);
  testing::check_close(out[1], ys, DType::float32, "ys", scale);
  std::string text = comp.as_text();
  INFO(text);
  CHECK_THAT(text, Contains("{0,1} transpose("));
  if (default_platform() == "cpu") {
    auto st = comp.executable_stats();
    CHECK(st.at("while_loops") == 1);
    CHECK(st.at("interpreter_fallbacks") == 0);
  }
}

TEST_CASE("cpu: a transpose that layout assignment made a bitcast aliases its operand, read through its layout",
          "[cpu]") {
  // Layout assignment gives %t the layout {0,1} (memory ordered as %a), which buffer assignment treats as an
  // alias of %a's buffer. Its consumers read it through that layout, and nothing writes over %a (the caller's
  // argument: a backend that read and wrote row-major once transposed it in place, giving wrong results).
  std::string text = R"(HloModule m

%fused (p: f32[8,6]) -> f32[8,6] {
  %p = f32[8,6]{0,1} parameter(0)
  %two = f32[] constant(2)
  %b = f32[8,6] broadcast(%two), broadcast_dimensions={}
  ROOT %m = f32[8,6] multiply(%p, %b)
}

ENTRY %main (a: f32[6,8]) -> (f32[6], f32[8,6], f32[6,8]) {
  %a = f32[6,8] parameter(0)
  %t = f32[8,6]{0,1} transpose(%a), permutation={1,0}
  %z = f32[] constant(0)
  %r = f32[6] reduce(%t, %z), dimensions={0}, reducer=add
  %f = f32[8,6] fusion(%t), kind=kLoop, calls=%fused
  %n = f32[6,8] negate(%a)
  ROOT %out = (f32[6], f32[8,6], f32[6,8]) tuple(%r, %f, %n)
}
)";
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  REQUIRE(hlo::is_layout_bitcast(*m->entry->find("t")));
  check_native(text);
}
