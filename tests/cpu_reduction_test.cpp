// The CPU backend's reductions against the interpreter: row, column, middle and whole-array sums for every reducer
// and dtype, row sums that stage exp and logistic per block, NaN-propagating max/min (and signed zeros, against
// a reference written in the test), column reductions in tiles split across threads and off the four-row pass,
// and row fusions that compute a value read by a reduction and the output once (the softmax row cache).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "backend_test_util.h"
#include "backends/cpu/kernels.h"
#include "jitx/jit.h"
#include "jitx/nn.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;
using Catch::Matchers::Contains;

TEST_CASE("cpu: reductions (row, column, middle, all) for every reducer and dtype", "[cpu]") {
  auto module = [](DType d, const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::string& dims,
                   const std::string& reducer) {
    return fmt::format(
        "HloModule m\n\nENTRY %main (p: {0}) -> ({1}) {{\n  %p = {0} parameter(0)\n  %z = {2} constant({4})\n"
        "  %r = {1} reduce(%p, %z), dimensions={{{3}}}, reducer={5}\n  ROOT %t = ({1}) tuple(%r)\n}}\n",
        shape_text(d, in), shape_text(d, out), shape_text(d, {}), dims,
        d == DType::bool_ ? (reducer == "mul" || reducer == "and" ? "true" : "false")
                          : (reducer == "mul" || reducer == "and" ? "1" : "0"),
        reducer);
  };
  for (DType d : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int32, DType::uint8,
                  DType::int64, DType::bool_}) {
    std::vector<std::string> reducers{"add", "max", "min"};
    if (!is_floating(d)) reducers.insert(reducers.end(), {"mul", "and", "or"});
    for (auto& r : reducers) {
      check_module(module(d, {6, 700}, {6}, "1", r));
      check_module(module(d, {700, 6}, {6}, "0", r));
      check_module(module(d, {5, 40, 7}, {5, 7}, "1", r));
      check_module(module(d, {5, 40, 7}, {}, "0,1,2", r));
    }
  }
  // A long f32 sum stays close to the double-precision sum (blocked accumulation).
  std::string text = module(DType::float32, {1 << 20}, {}, "0", "add");
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  Literal x = random_literal(hlo::Shape(DType::float32, {1 << 20}), 0, 1);
  double ref = 0;
  for (int64_t i = 0; i < x.size(); ++i) ref += x.get_f64(i);
  double got = run(native(), m, {x})[0].get_f64(0);
  CHECK(std::fabs(got - ref) <= kF32Accuracy.long_sum * ref);  // naive sequential f32 summation is off by ~1e-4 here
}

TEST_CASE("cpu: row sums stage the exp and logistic of their summed expression per block", "[cpu]") {
  // sum_j (exp(a) + logistic(a) * b): rows of 1000 (three full blocks of 256 and a partial one) and of 300, five
  // rows; exp and logistic are each computed in two loops per block inside the sum. Against the interpreter, f32
  // and (computed in f32) bf16/f16; then with infinities and a NaN in some rows.
  for (int64_t cols : {int64_t{1000}, int64_t{300}}) {
    for (DType d : {DType::float32, DType::bfloat16, DType::float16}) {
      std::string text = fmt::format(R"(HloModule m

%fused (a: {0}[5,{1}], b: {0}[5,{1}]) -> {0}[5] {{
  %a = {0}[5,{1}] parameter(0)
  %b = {0}[5,{1}] parameter(1)
  %e = {0}[5,{1}] exponential(%a)
  %l = {0}[5,{1}] logistic(%a)
  %lb = {0}[5,{1}] multiply(%l, %b)
  %s = {0}[5,{1}] add(%e, %lb)
  %z = {0}[] constant(0)
  ROOT %r = {0}[5] reduce(%s, %z), dimensions={{1}}, reducer=add
}}

ENTRY %main (a: {0}[5,{1}], b: {0}[5,{1}]) -> ({0}[5]) {{
  %a = {0}[5,{1}] parameter(0)
  %b = {0}[5,{1}] parameter(1)
  %f = {0}[5] fusion(%a, %b), kind=kInput, calls=%fused
  ROOT %t = ({0}[5]) tuple(%f)
}}
)",
                                     hlo_name(d), cols);
      check_native(text, -4, 4, static_cast<double>(cols) / 64);
    }
    std::string f32 = fmt::format(R"(HloModule m

%fused (a: f32[5,{0}]) -> f32[5] {{
  %a = f32[5,{0}] parameter(0)
  %e = f32[5,{0}] exponential(%a)
  %z = f32[] constant(0)
  ROOT %r = f32[5] reduce(%e, %z), dimensions={{1}}, reducer=add
}}

ENTRY %main (a: f32[5,{0}]) -> (f32[5]) {{
  %a = f32[5,{0}] parameter(0)
  %f = f32[5] fusion(%a), kind=kInput, calls=%fused
  ROOT %t = (f32[5]) tuple(%f)
}}
)",
                                  cols);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(f32);
    // The staging arrays (stage 1's values for a block of 256) are in the kernel.
    CHECK_THAT(cpu::optimized_ir({m->entry->instructions[1].get()}), Contains("alloca [256 x float]"));
    Literal x = random_literal(hlo::Shape(DType::float32, {5, cols}), -4, 4);
    x.set_f64(1 * cols + 257, INFINITY);  // row 1: +inf
    x.set_f64(2 * cols + 3, NAN);         // row 2: NaN
    x.set_f64(3 * cols + 256, -INFINITY);  // row 3: exp(-inf) = 0, the row stays finite
    x.set_f64(4 * cols + cols - 1, 200.0);  // row 4: exp overflows to +inf
    Literal got = run(native(), m, {x})[0], want = run(interp(), m, {x})[0];
    CHECK(std::isinf(got.get_f64(1)));
    CHECK(std::isnan(got.get_f64(2)));
    CHECK(std::isfinite(got.get_f64(3)));
    CHECK(std::isinf(got.get_f64(4)));
    for (int64_t r : {0, 3})
      CHECK(std::fabs(got.get_f64(r) - want.get_f64(r)) <=
            tol(DType::float32, Bound::kSum).rtol * std::fabs(want.get_f64(r)));
  }
}

TEST_CASE("cpu: float max/min reductions propagate NaN (vectorised with an any-NaN flag)", "[cpu]") {
  // log of inputs in [-0.001, 3): 1 in 3000 elements is NaN, so about 18% of the rows (600 elements) and 2% of
  // the columns (64 elements) hold a NaN: both NaN and ordinary results are checked.
  for (const char* r : {"max", "min"})
    for (const char* dims : {"1", "0"}) {
      std::string out = std::string(dims) == "1" ? "f32[64]" : "f32[600]";
      check_native(fmt::format(R"(HloModule m

%fused (a: f32[64,600]) -> {0} {{
  %a = f32[64,600] parameter(0)
  %l = f32[64,600] log(%a)
  %z = f32[] constant({1})
  ROOT %r = {0} reduce(%l, %z), dimensions={{{2}}}, reducer={3}
}}

ENTRY %main (a: f32[64,600]) -> ({0}) {{
  %a = f32[64,600] parameter(0)
  %f = {0} fusion(%a), kind=kInput, calls=%fused
  ROOT %t = ({0}) tuple(%f)
}}
)", out, std::string(r) == "max" ? "-inf" : "inf", dims, r), -0.001, 3);
    }
}

TEST_CASE("cpu: float max/min row reductions of zeros, infinities and NaNs of either sign", "[cpu]") {
  // Rows drawn from a few values, so that many rows hold only zeros of both signs, only negative values, a NaN
  // with the sign bit set, or infinities: the result's bits against a reference written here (NaN if any element
  // is one; a zero max is +0 iff some element is +0, a zero min -0 iff some element is -0), for row lengths inside
  // one vector and across many (with a remainder).
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> pools{{0.0, -0.0}, {-0.0, -1.5}, {0.0, -2.0}, {-0.0, -inf, -3.0},
                                              {-1.5, -nan, -0.0}, {inf, -inf, 0.0}, {nan, 2.5, -0.0}, {-0.0}};
  std::mt19937 gen(7);
  for (DType d : {DType::float32, DType::float64, DType::bfloat16})
    for (int64_t cols : {5, 37, 300})
      for (const char* r : {"max", "min"}) {
        INFO(hlo_name(d) << " " << cols << " " << r);
        bool mx = std::string(r) == "max";
        int64_t rows = 64;
        Literal x = Literal::make(d, {rows, cols});
        for (int64_t i = 0; i < rows; ++i) {
          const auto& pool = pools[static_cast<size_t>(i) % pools.size()];
          for (int64_t j = 0; j < cols; ++j) x.set_f64(i * cols + j, pool[gen() % pool.size()]);
        }
        Literal init = Literal::make(d, {});
        init.set_f64(0, mx ? -inf : inf);
        auto got = run(native(), hlo::parse_hlo(one_op(shape_text(d, {rows}), "reduce",
                                                       {shape_text(d, {rows, cols}), shape_text(d, {})},
                                                       fmt::format(", dimensions={{1}}, reducer={}", r))),
                       {x, init})[0];
        for (int64_t i = 0; i < rows; ++i) {
          bool any_nan = false, any_pos0 = false, any_neg0 = false;
          double best = mx ? -inf : inf;
          for (int64_t j = 0; j < cols; ++j) {
            double v = x.get_f64(i * cols + j);
            any_nan = any_nan || std::isnan(v);
            any_pos0 = any_pos0 || (v == 0 && !std::signbit(v));
            any_neg0 = any_neg0 || (v == 0 && std::signbit(v));
            if (!std::isnan(v)) best = mx ? std::max(best, v) : std::min(best, v);
          }
          double g = got.get_f64(i);
          INFO("row " << i << ": got " << g);
          if (any_nan) {
            CHECK(std::isnan(g));
          } else if (best == 0) {
            CHECK(g == 0);
            CHECK(std::signbit(g) == (mx ? !any_pos0 : any_neg0));
          } else {
            CHECK(g == best);
          }
        }
      }
}

// Column sums of f32 (and bf16/f16) add eight rows in f32, pairwise, before the double accumulator (see
// column_reduction_emitter.cpp): three roundings of partial sums of up to eight elements in [-3, 3], so a sum that
// cancels to ~0 is off by up to a few 1e-6, four times the fused bound's atol (measured: 1.45e-6 over 50 rows; an
// f32 sum in row order, as XLA's column reduction, is off by a few times that).
constexpr double kColumnSumAtolScale = 4;

TEST_CASE("cpu: column reductions (leading dimensions) in tiles, split across threads, sibling outputs", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::int32, DType::float64}) {
    std::string s = hlo_name(d);
    INFO(s);
    // [50, 5000] over rows: 5000 outputs in 2048-wide tiles, enough work to split the columns across threads.
    check_native(one_op(shape_text(d, {5000}), "reduce", {shape_text(d, {50, 5000}), shape_text(d, {})},
                        ", dimensions={0}, reducer=add"),
                 -3, 3, kColumnSumAtolScale);
    // Sibling reductions (sum and max) over the two leading dims of exp-ish values, one multi-output kernel.
    check_native(fmt::format(R"(HloModule m

%fused (a: {0}[6,7,2100]) -> ({0}[2100], {0}[2100]) {{
  %a = {0}[6,7,2100] parameter(0)
  %two = {0}[] constant(2)
  %tb = {0}[6,7,2100] broadcast(%two), broadcast_dimensions={{}}
  %m = {0}[6,7,2100] multiply(%a, %tb)
  %z = {0}[] constant(0)
  %s = {0}[2100] reduce(%m, %z), dimensions={{0,1}}, reducer=add
  %x = {0}[2100] reduce(%m, %z), dimensions={{0,1}}, reducer=max
  ROOT %t = ({0}[2100], {0}[2100]) tuple(%s, %x)
}}

ENTRY %main (a: {0}[6,7,2100]) -> ({0}[2100], {0}[2100]) {{
  %a = {0}[6,7,2100] parameter(0)
  %f = ({0}[2100], {0}[2100]) fusion(%a), kind=kInput, calls=%fused
  %s = {0}[2100] get-tuple-element(%f), index=0
  %x = {0}[2100] get-tuple-element(%f), index=1
  ROOT %t = ({0}[2100], {0}[2100]) tuple(%s, %x)
}}
)", s),
                 -3, 3, kColumnSumAtolScale);
  }
}

TEST_CASE("cpu: column reductions with row counts off the four-row pass, odd widths and half types", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::float16, DType::float64, DType::int32}) {
    std::string s = hlo_name(d);
    INFO(s);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 300}, {3, 301}, {7, 5003}, {1003, 37}, {258, 4097}}) {
      check_native(one_op(shape_text(d, {cols}), "reduce", {shape_text(d, {rows, cols}), shape_text(d, {})},
                          ", dimensions={0}, reducer=add"),
                   -3, 3, kColumnSumAtolScale);
      check_native(one_op(shape_text(d, {cols}), "reduce", {shape_text(d, {rows, cols}), shape_text(d, {})},
                          ", dimensions={0}, reducer=max"));
    }
    check_native(one_op(shape_text(d, {2, 2051}), "reduce", {shape_text(d, {5, 3, 2, 2051}), shape_text(d, {})},
                        ", dimensions={0,1}, reducer=add"),
                 -3, 3, kColumnSumAtolScale);
  }
  // A long f32 column sum stays close to the double-precision sum.
  int64_t rows = 20001, cols = 40;
  Literal x = random_literal(hlo::Shape(DType::float32, {rows, cols}), 0, 1);
  Literal zero = Literal::make(DType::float32, {});
  zero.set_f64(0, 0.0);
  auto got = run(native(), hlo::parse_hlo(one_op("f32[40]", "reduce", {"f32[20001,40]", "f32[]"},
                                                 ", dimensions={0}, reducer=add")),
                 {x, zero})[0];
  for (int64_t c = 0; c < cols; ++c) {
    double ref = 0;
    for (int64_t r = 0; r < rows; ++r) ref += x.get_f64(r * cols + c);
    CHECK(std::fabs(got.get_f64(c) - ref) <=
          kF32Accuracy.column_sum * ref);  // one f32 rounding of a double-precision sum
  }
}

TEST_CASE("cpu: row fusions compute a value read by a reduction and the output once (softmax row cache)", "[cpu]") {
  // Rows of awkward lengths (one element, shorter than a vector, not a multiple of one, longer than a sum block),
  // few rows (split by columns) and many (split by rows); values spread enough that exp varies over decades.
  for (DType d : kFloats) {
    INFO(hlo_name(d));
    for (int64_t n : {1, 7, 33, 1000})
      for (int64_t rows : {3, 67}) check_native(softmax_module(d, rows, n), -8, 8);
  }
  // Rows too long for the stack array: exp is computed in both passes, as before.
  check_native(softmax_module(DType::float32, 2, 17000), -8, 8);
  // A rank-3 softmax (rows indexed by two dimensions) and a row fusion whose cached value is also a second
  // reduction's operand (its row sum and row max both read exp(x)) plus the output.
  check_native(R"(HloModule m

%fused (a: f32[3,5,130]) -> f32[3,5,130] {
  %a = f32[3,5,130] parameter(0)
  %z = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %e = f32[3,5,130] exponential(%a)
  %s = f32[3,5] reduce(%e, %z), dimensions={2}, reducer=add
  %x = f32[3,5] reduce(%e, %ninf), dimensions={2}, reducer=max
  %q = f32[3,5] divide(%x, %s)
  %sb = f32[3,5,130] broadcast(%s), broadcast_dimensions={0,1}
  %qb = f32[3,5,130] broadcast(%q), broadcast_dimensions={0,1}
  %y = f32[3,5,130] divide(%e, %sb)
  ROOT %r = f32[3,5,130] multiply(%y, %qb)
}

ENTRY %main (a: f32[3,5,130]) -> (f32[3,5,130]) {
  %a = f32[3,5,130] parameter(0)
  %f = f32[3,5,130] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[3,5,130]) tuple(%f)
}
)", -4, 4);
  // Through the API: softmax and log_softmax of a [40, 300] batch against a double-precision reference.
  std::vector<float> xs(40 * 300);
  std::uniform_real_distribution<float> u(-10, 10);
  for (auto& v : xs) v = u(rng());
  Array x = array(xs, {40, 300});
  auto sm = jit([](Array a) { return nn::softmax(a, -1); })(x).to_vector<float>();
  for (int64_t r = 0; r < 40; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < 300; ++c) m = std::max(m, double(xs[r * 300 + c]));
    for (int64_t c = 0; c < 300; ++c) s += std::exp(double(xs[r * 300 + c]) - m);
    for (int64_t c = 0; c < 300; ++c) {
      double want = std::exp(double(xs[r * 300 + c]) - m) / s;
      REQUIRE(std::fabs(sm[r * 300 + c] - want) <= kF32Accuracy.softmax.rtol * want + kF32Accuracy.softmax.atol);
    }
  }
}

namespace {
/// A softmax over the last axis of [B, T, C] as the optimiser fuses it: rank-2 row reductions reached through a
/// reshape to [B, T, 1] and a broadcast.
std::string softmax3_module(int64_t B, int64_t T, int64_t C) {
  return fmt::format(R"(HloModule m

%fused (a: f32[{0},{1},{2}]) -> f32[{0},{1},{2}] {{
  %a = f32[{0},{1},{2}] parameter(0)
  %ninf = f32[] constant(-inf)
  %z = f32[] constant(0)
  %m = f32[{0},{1}] reduce(%a, %ninf), dimensions={{2}}, reducer=max
  %mr = f32[{0},{1},1] reshape(%m)
  %mb = f32[{0},{1},{2}] broadcast(%mr), broadcast_dimensions={{0,1,2}}
  %c = f32[{0},{1},{2}] subtract(%a, %mb)
  %e = f32[{0},{1},{2}] exponential(%c)
  %s = f32[{0},{1}] reduce(%e, %z), dimensions={{2}}, reducer=add
  %sr = f32[{0},{1},1] reshape(%s)
  %sb = f32[{0},{1},{2}] broadcast(%sr), broadcast_dimensions={{0,1,2}}
  ROOT %y = f32[{0},{1},{2}] divide(%e, %sb)
}}

ENTRY %main (a: f32[{0},{1},{2}]) -> (f32[{0},{1},{2}]) {{
  %a = f32[{0},{1},{2}] parameter(0)
  %f = f32[{0},{1},{2}] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[{0},{1},{2}]) tuple(%f)
}}
)",
                     B, T, C);
}
}  // namespace

TEST_CASE("cpu: a row fusion of rank 3 computes its row reductions once per row, as rank 2 does", "[cpu]") {
  // The reductions are reached through reshape [B, T] -> [B, T, 1] and a broadcast: the element loop must see them
  // as the current row's (hoisted before it), not recompute them per element (a softmax over the last axis of a
  // [4, 128, 128] array ran 4,000x slower than the same rows as [512, 128]).
  check_module(softmax3_module(3, 5, 70));
  check_module(softmax3_module(2, 64, 300));
  auto ir_of = [](const std::string& text) {
    auto m = hlo::parse_hlo(text);
    return cpu::optimized_ir({m->entry->find("f")});
  };
  auto count = [](const std::string& s, const std::string& what) {
    int64_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
  };
  // The max reduction's vector maximum: once per row in both kernels (the 2-D kernel is the same rows as a matrix).
  std::string ir3 = ir_of(softmax3_module(4, 128, 128)), ir2 = ir_of(softmax_module(DType::float32, 512, 128));
  INFO(ir3);
  CHECK(count(ir3, "maxnum") + count(ir3, "maximum") <= count(ir2, "maxnum") + count(ir2, "maximum"));
  CHECK(count(ir3, "\n  br ") <= count(ir2, "\n  br ") + 8);
}
