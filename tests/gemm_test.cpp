// The CPU backend's blocked GEMM (src/backends/cpu/gemm.cpp) against the interpreter: dot_general shapes that hit
// every edge of its tiling (1x1x1, ragged micro-tiles, several depth blocks, K = 0, M or N = 1), batches, all four
// transpose combinations, dimension groups that need a copy, every float dtype, and output fusions whose epilogue
// runs per tile (bias + gelu, bf16 results, results of another type than the dot).
//
// Tolerances, per element, from the error analysis of a sum of K products accumulated in f32 (unit roundoff
// u32 = 2^-24) and rounded once to the output type (unit roundoff u_out: f32 2^-24, bf16 2^-8, f16 2^-11):
//   |cpu - interpreter| <= 2 K u_acc S + 2 u_out |interpreter|,   S = sum_k |a_ik| |b_kj|
// (the interpreter sums in double and rounds once; u_acc is u32 for f32/bf16/f16 and 2^-53 for f64, which goes
// through Eigen). S comes from the interpreter running the same dot in f64 on |a| and |b|.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "backend_test_util.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/parallel.h"
#include "core/literal.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/config.h"
#include "runtime/runtime.h"

using namespace jitx;
using jitx::testing::interp;
using jitx::testing::native;
using jitx::testing::run;
using jitx::testing::shape_text;
using detail::Literal;

namespace {

double unit_roundoff(DType d) {
  switch (d) {
    case DType::float64: return std::ldexp(1.0, -53);
    case DType::bfloat16: return std::ldexp(1.0, -8);
    case DType::float16: return std::ldexp(1.0, -11);
    default: return std::ldexp(1.0, -24);
  }
}

std::string ty(DType d, const std::vector<int64_t>& dims) { return shape_text(d, dims); }

std::string list(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

/// A dot_general: operand dims, dimension numbers; the result's dims follow ([batch, lhs free, rhs free]).
struct Dot {
  std::vector<int64_t> l, r, lb, lc, rb, rc;

  std::vector<int64_t> out() const {
    std::vector<int64_t> o;
    for (auto d : lb) o.push_back(l[d]);
    auto free = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& b, const std::vector<int64_t>& c,
                   std::vector<int64_t>& o) {
      for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i)
        if (std::find(b.begin(), b.end(), i) == b.end() && std::find(c.begin(), c.end(), i) == c.end())
          o.push_back(dims[i]);
    };
    free(l, lb, lc, o);
    free(r, rb, rc, o);
    return o;
  }
  int64_t k() const {
    int64_t k = 1;
    for (auto d : lc) k *= l[d];
    return k;
  }
  std::string attrs() const {
    return fmt::format("lhs_batch_dimensions={{{}}}, lhs_contracting_dimensions={{{}}}, rhs_batch_dimensions={{{}}}, "
                       "rhs_contracting_dimensions={{{}}}",
                       list(lb), list(lc), list(rb), list(rc));
  }
  std::string text(DType d) const {
    std::string o = ty(d, out());
    return fmt::format(
        "HloModule m\n\nENTRY %main (a: {0}, b: {1}) -> ({2}) {{\n  %a = {0} parameter(0)\n  %b = {1} parameter(1)\n"
        "  %d = {2} dot(%a, %b), {3}\n  ROOT %t = ({2}) tuple(%d)\n}}\n",
        ty(d, l), ty(d, r), o, attrs());
  }
};

std::mt19937& rng() {
  static std::mt19937 g(7031u);
  return g;
}

Literal random_literal(DType d, const std::vector<int64_t>& dims) {
  Literal l = Literal::make(d, dims);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < l.size(); ++i) l.set_f64(i, u(rng()));
  return l;
}

/// The same values, |x|, as f64.
Literal abs_f64(const Literal& x) {
  Literal l = Literal::make(DType::float64, x.dims);
  for (int64_t i = 0; i < l.size(); ++i) l.set_f64(i, std::fabs(x.get_f64(i)));
  return l;
}

/// Checks got against want element by element with the bound in the header; extra: allowance added per element.
void compare(const Literal& got, const Literal& want, const Literal& s, int64_t k, DType acc, DType out,
             const std::string& what, double extra_rel = 0) {
  INFO(what);
  REQUIRE(got.dtype == want.dtype);
  REQUIRE(got.dims == want.dims);
  double ua = unit_roundoff(acc), uo = unit_roundoff(out);
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size() && bad < 5; ++i) {
    double g = got.get_f64(i), w = want.get_f64(i), si = s.get_f64(i);
    double tol = 2.0 * static_cast<double>(k) * ua * si + 2.0 * uo * std::fabs(w) + extra_rel * (1 + std::fabs(w));
    bool ok = std::fabs(g - w) <= tol;
    if (!ok) UNSCOPED_INFO("element " << i << ": got " << g << " want " << w << " tol " << tol);
    bad += !ok;
  }
  CHECK(bad == 0);
}

void check_dot(const Dot& dot, DType d) {
  std::string text = dot.text(d);
  INFO(text);
  std::vector<Literal> args{random_literal(d, dot.l), random_literal(d, dot.r)};
  auto want = run(interp(), text, args);
  auto got = run(native(), text, args);
  auto s = run(interp(), dot.text(DType::float64), {abs_f64(args[0]), abs_f64(args[1])});
  DType acc = d == DType::float64 ? DType::float64 : DType::float32;
  compare(got.at(0), want.at(0), s.at(0), dot.k(), acc, d, text);
  if (dot.k() == 0)
    for (int64_t i = 0; i < got[0].size(); ++i) REQUIRE(got[0].get_f64(i) == 0.0);
}

const std::vector<DType> kFloats{DType::float32, DType::bfloat16, DType::float16, DType::float64};

/// [M, K] x [K, N] with the lhs and/or rhs transposed through the dimension numbers.
Dot matmul(int64_t m, int64_t k, int64_t n, bool lhs_t, bool rhs_t) {
  Dot d;
  d.l = lhs_t ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  d.r = rhs_t ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  d.lc = {lhs_t ? 0 : 1};
  d.rc = {rhs_t ? 1 : 0};
  return d;
}

}  // namespace

TEST_CASE("gemm: dot_general edge tiles, K = 0, vectors, every transpose, every float dtype", "[cpu]") {
  struct Mkn {
    int64_t m, k, n;
  };
  // 1x1x1; ragged micro-tiles (6 x 16 packed and unpacked with AVX2, 14 x 32 packed and 8 x 32 unpacked with
  // AVX-512: 200 columns are 12 panels of 16 + 8, the unpacked AVX2 kernel's second vector fully masked); several depth
  // blocks (256) and tiles (96 or 112 x 384), split across threads; K = 0 (the result is zeros); M = 1 and N = 1;
  // the unpacked path for small products (operands within 2^17 floats, K <= 1024) and the packed one past it
  // ({143, 520, 270}: 10 x 14 rows + 3, 8 x 32 columns + 14; {15, 1100, 33}: K over the unpacked limit).
  const std::vector<Mkn> shapes{{1, 1, 1},      {7, 13, 5},     {65, 33, 129},   {130, 300, 200}, {5, 0, 7},
                                {1, 64, 37},    {37, 64, 1},    {97, 520, 50},   {29, 300, 77},   {143, 520, 270},
                                {15, 1100, 33}};
  for (DType d : kFloats)
    for (auto s : shapes)
      for (int t = 0; t < 4; ++t) {
        if (d == DType::float64 && s.m * s.n * s.k > 100000) continue;  // Eigen's path: one size is enough
        check_dot(matmul(s.m, s.k, s.n, t & 1, t & 2), d);
      }
}

TEST_CASE("gemm: batched dots, batch and free dimensions anywhere, several of each", "[cpu]") {
  std::vector<Dot> dots{
      // Leading batch dimension.
      {{3, 17, 40}, {3, 40, 23}, {0}, {2}, {0}, {1}},
      // Batch dimension in the middle (a stride, no copy), rhs transposed.
      {{17, 3, 40}, {23, 3, 40}, {1}, {2}, {1}, {2}},
      // Two batch dimensions, two contracting dimensions (they collapse into one stride each).
      {{2, 3, 9, 4, 5}, {2, 3, 4, 5, 11}, {0, 1}, {3, 4}, {0, 1}, {2, 3}},
      // Contracting dimensions in swapped order: no single stride walks them, so the operand is copied.
      {{6, 4, 5}, {5, 4, 7}, {}, {1, 2}, {}, {1, 0}},
      // Free dimensions split by the contracting one ([M1, K, M2]): copied.
      {{4, 30, 5}, {30, 8}, {}, {1}, {}, {0}},
      // Two rhs free dimensions, and none (a matrix-vector product).
      {{9, 20}, {20, 3, 6}, {}, {1}, {}, {0}},
      {{9, 20}, {20}, {}, {1}, {}, {0}},
      // A dot of two vectors (M = N = 1) and a batch of them.
      {{50}, {50}, {}, {0}, {}, {0}},
      {{4, 50}, {4, 50}, {0}, {1}, {0}, {1}},
      // Attention's heads: q, k as [B, T, H, dh], batch dims B and H (no one stride walks them: two strides,
      // no copy), scores q k^T and then weights [B, H, T, T] times v [B, T, H, dh].
      {{2, 19, 3, 8}, {2, 21, 3, 8}, {0, 2}, {3}, {0, 2}, {3}},
      {{2, 3, 19, 21}, {2, 21, 3, 8}, {0, 1}, {3}, {0, 2}, {1}},
      // Three batch dims that split into no two strides (a copy); the last depth dim strided (a strided gather).
      {{2, 5, 3, 4, 7}, {3, 7, 2, 4, 6}, {0, 2, 3}, {4}, {2, 0, 3}, {1}},
  };
  for (DType d : kFloats)
    for (auto& dot : dots) check_dot(dot, d);
}

TEST_CASE("gemm: a dot's plan, worked out from its shapes once, gives the same product as working it out per call",
          "[cpu]") {
  // {dot, whether both operands are strided views (else the plan leaves the call to gather them)}.
  std::vector<std::pair<Dot, bool>> dots{
      {matmul(64, 64, 64, false, false), true},
      {matmul(37, 70, 29, true, true), true},
      {{{17, 3, 40}, {23, 3, 40}, {1}, {2}, {1}, {2}}, true},
      {{{2, 19, 3, 8}, {2, 21, 3, 8}, {0, 2}, {3}, {0, 2}, {3}}, true},
      {{{6, 4, 5}, {5, 4, 7}, {}, {1, 2}, {}, {1, 0}}, false},
      {{{4, 30, 5}, {30, 8}, {}, {1}, {}, {0}}, false},
  };
  for (DType d : {DType::float32, DType::bfloat16}) {
    for (auto& [dot, views] : dots) {
      std::string text = dot.text(d);
      INFO(text);
      std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
      const hlo::Instruction& inst = *m->entry->root->operand(0);
      REQUIRE(inst.opcode == hlo::Opcode::kDot);
      auto plan = cpu::blocked::plan_dot(inst);
      REQUIRE(plan);
      CHECK(plan->views == views);
      Literal a = random_literal(d, dot.l), b = random_literal(d, dot.r);
      Literal with = Literal::make(d, dot.out()), without = Literal::make(d, dot.out());
      cpu::run_dot(inst, a.data(), b.data(), with.data(), plan.get());
      cpu::run_dot(inst, a.data(), b.data(), without.data());
      REQUIRE(with.nbytes() == without.nbytes());
      CHECK(std::memcmp(with.data(), without.data(), with.nbytes()) == 0);
      // And both are the product (the interpreter, with the header's bound).
      auto want = run(interp(), text, {a, b});
      auto s = run(interp(), dot.text(DType::float64), {abs_f64(a), abs_f64(b)});
      compare(with, want.at(0), s.at(0), dot.k(), DType::float32, d, text);
    }
  }
  CHECK_FALSE(cpu::blocked::plan_dot(*hlo::parse_hlo(matmul(4, 5, 6, false, false).text(DType::float64))
                                          ->entry->root->operand(0)));  // f64: Eigen's, no plan
}

namespace {
/// gelu(x @ w + b) as an output fusion over the given dot, the result converted to `out` when it differs.
std::string gelu_bias_fusion(const Dot& dot, DType d, DType out) {
  auto od = dot.out();
  int64_t n = od.back();
  std::string s = std::string(hlo::hlo_dtype_name(d)), o = ty(d, od), ot = ty(out, od);
  std::string bdims = list({static_cast<int64_t>(od.size()) - 1});
  std::string tail = d == out ? fmt::format("ROOT %g = {} multiply(%hx, %p1)", o)
                              : fmt::format("%g0 = {} multiply(%hx, %p1)\n  ROOT %g = {} convert(%g0)", o, ot);
  return fmt::format(R"(HloModule m

%fused (x: {1}, w: {2}, b: {0}[{3}]) -> {5} {{
  %x = {1} parameter(0)
  %w = {2} parameter(1)
  %b = {0}[{3}] parameter(2)
  %d = {4} dot(%x, %w), {6}
  %bb = {4} broadcast(%b), broadcast_dimensions={{{7}}}
  %h = {4} add(%d, %bb)
  %c = {0}[] constant(0.7978845608)
  %cb = {4} broadcast(%c), broadcast_dimensions={{}}
  %k = {0}[] constant(0.044715)
  %kb = {4} broadcast(%k), broadcast_dimensions={{}}
  %h2 = {4} multiply(%h, %h)
  %h3 = {4} multiply(%h2, %h)
  %kh3 = {4} multiply(%kb, %h3)
  %in = {4} add(%h, %kh3)
  %ic = {4} multiply(%in, %cb)
  %t = {4} tanh(%ic)
  %one = {0}[] constant(1)
  %ob = {4} broadcast(%one), broadcast_dimensions={{}}
  %p1 = {4} add(%t, %ob)
  %half = {0}[] constant(0.5)
  %hb = {4} broadcast(%half), broadcast_dimensions={{}}
  %hx = {4} multiply(%h, %hb)
  {8}
}}

ENTRY %main (x: {1}, w: {2}, b: {0}[{3}]) -> ({5}) {{
  %x = {1} parameter(0)
  %w = {2} parameter(1)
  %b = {0}[{3}] parameter(2)
  %f = {5} fusion(%x, %w, %b), kind=kOutput, calls=%fused
  ROOT %t = ({5}) tuple(%f)
}}
)",
                     s, ty(d, dot.l), ty(d, dot.r), n, o, ot, dot.attrs(), bdims, tail);
}
}  // namespace

TEST_CASE("gemm: output fusions run their epilogue per tile (bias + gelu, bf16 and converted results)", "[cpu]") {
  // gelu's slope is at most 1.13, so the dot's error carries through at most 1.2 times; the epilogue's own ops
  // (f32 math within a few ULP; bf16/f16: both round after every op, but the product's f32 value (another
  // summation order than the interpreter's) and tanh's polynomial can round to a neighbouring value, carried
  // through gelu's ops with slopes near 1) get 6 units of roundoff of the output type relative to 1 + |value|.
  std::vector<Dot> dots{
      matmul(24, 96, 40, false, false),
      matmul(200, 300, 520, false, false),  // several tiles and depth blocks, both threads
      matmul(130, 70, 390, true, true),
      {{3, 50, 64}, {3, 64, 45}, {0}, {2}, {0}, {1}},  // batched: the kernel's rows are batch * M
      {{1, 33}, {33, 1}, {}, {1}, {}, {0}},
  };
  for (DType d : {DType::float32, DType::bfloat16, DType::float16})
    for (DType out : {d, d == DType::float32 ? DType::bfloat16 : DType::float32})
      for (auto& dot : dots) {
        std::string text = gelu_bias_fusion(dot, d, out);
        INFO(text);
        int64_t n = dot.out().back();
        std::vector<Literal> args{random_literal(d, dot.l), random_literal(d, dot.r), random_literal(d, {n})};
        auto want = run(interp(), text, args);
        auto got = run(native(), text, args);
        auto s = run(interp(), dot.text(DType::float64), {abs_f64(args[0]), abs_f64(args[1])});
        double u = std::max(unit_roundoff(d), unit_roundoff(out));
        // The dot's bound scaled by 1.2 (2.4 K u32 S) and the epilogue's 6 u (1 + |value|).
        Literal s12 = s.at(0);
        for (int64_t i = 0; i < s12.size(); ++i) s12.set_f64(i, 1.2 * s12.get_f64(i));
        compare(got.at(0), want.at(0), s12, dot.k(), DType::float32, out, text, 6 * u);
      }
}

TEST_CASE("gemm: an output fusion whose dot has no rhs free dimension computes the product first", "[cpu]") {
  // [B, M, K] x [B, K] -> [B, M]: the kernel's columns are M, not the GEMM's N = 1, so no per-tile epilogue.
  for (DType d : {DType::float32, DType::bfloat16}) {
    std::string s = std::string(hlo::hlo_dtype_name(d));
    std::string text = fmt::format(R"(HloModule m

%fused (x: {0}[4,70,30], v: {0}[4,30]) -> {0}[4,70] {{
  %x = {0}[4,70,30] parameter(0)
  %v = {0}[4,30] parameter(1)
  %d = {0}[4,70] dot(%x, %v), lhs_batch_dimensions={{0}}, lhs_contracting_dimensions={{2}}, rhs_batch_dimensions={{0}}, rhs_contracting_dimensions={{1}}
  ROOT %e = {0}[4,70] logistic(%d)
}}

ENTRY %main (x: {0}[4,70,30], v: {0}[4,30]) -> ({0}[4,70]) {{
  %x = {0}[4,70,30] parameter(0)
  %v = {0}[4,30] parameter(1)
  %f = {0}[4,70] fusion(%x, %v), kind=kOutput, calls=%fused
  ROOT %t = ({0}[4,70]) tuple(%f)
}}
)",
                                   s);
    INFO(text);
    std::vector<Literal> args{random_literal(d, {4, 70, 30}), random_literal(d, {4, 30})};
    auto want = run(interp(), text, args);
    auto got = run(native(), text, args);
    // logistic's slope is at most 1/4: the dot's bound carries through shrunk; the epilogue gets 6 u.
    Dot dot{{4, 70, 30}, {4, 30}, {0}, {2}, {0}, {1}};
    auto sum = run(interp(), dot.text(DType::float64), {abs_f64(args[0]), abs_f64(args[1])});
    compare(got.at(0), want.at(0), sum.at(0), 30, DType::float32, d, text, 6 * unit_roundoff(d));
  }
}
