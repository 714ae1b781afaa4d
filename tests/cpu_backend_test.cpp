// The LLVM CPU backend against the interpreter (the oracle): every primitive it compiles, every fusion kind,
// Eigen dots, the math library's ULP error, vector code in the optimised IR, and asynchronous execution.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <future>
#include <optional>
#include <random>
#include <thread>

#include "backend_test_util.h"
#include "compile_log.h"
#include "backends/cpu/kernels.h"
#include "core/literal.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/config.h"
#include "jitx/jit.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/random.h"
#include "runtime/runtime.h"
#include "tolerances.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;
using Catch::Matchers::Contains;

namespace {

std::mt19937& rng() {
  static std::mt19937 g(20240611u);
  return g;
}

std::string hlo_name(DType d) { return std::string(hlo::hlo_dtype_name(d)); }

Literal random_literal(const hlo::Shape& s, double lo, double hi) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < l.size(); ++i) {
    if (is_floating(s.dtype)) l.set_f64(i, u(rng()));
    else if (s.dtype == DType::bool_) l.set_i64(i, rng()() & 1);
    else if (is_unsigned_integer(s.dtype)) l.set_i64(i, static_cast<int64_t>(std::fabs(std::floor(u(rng())))));
    else l.set_i64(i, static_cast<int64_t>(std::floor(u(rng()))));
  }
  return l;
}

/// Compares with the fused bound of the table (a fused kernel against the interpreter). tol_of: the dtype whose
/// bound applies, when the computation ran in a less precise one than its result (an f16 epilogue converted to f32
/// at the end carries f16's rounding).
void compare(const Literal& got, const Literal& want, const std::string& what, double atol_scale = 1,
             std::optional<DType> tol_of = {}) {
  INFO(what);
  REQUIRE(got.dtype == want.dtype);
  REQUIRE(got.dims == want.dims);
  Tol t = tol(tol_of.value_or(want.dtype), Bound::kFused);
  t.atol *= atol_scale;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size() && bad < 5; ++i) {
    bool ok;
    if (is_floating(want.dtype)) {
      double g = got.get_f64(i), w = want.get_f64(i);
      ok = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= t.atol + t.rtol * std::fabs(w);
      if (!ok) UNSCOPED_INFO("element " << i << ": got " << g << " want " << w);
    } else {
      ok = got.get_i64(i) == want.get_i64(i);
      if (!ok) UNSCOPED_INFO("element " << i << ": got " << got.get_i64(i) << " want " << want.get_i64(i));
    }
    bad += !ok;
  }
  CHECK(bad == 0);
}

/// Parses text, runs it on both backends with random inputs in [lo, hi), compares every output.
void check_module(const std::string& text, double lo = -3, double hi = 3, double atol_scale = 1,
                  std::optional<DType> tol_of = {}) {
  INFO(text);
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  std::vector<Literal> args;
  for (auto* p : m->entry->parameters) args.push_back(random_literal(p->shape, lo, hi));
  auto want = run(interp(), m, args);
  auto got = run(native(), m, args);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) compare(got[i], want[i], text, atol_scale, tol_of);
}

/// A module of one instruction `<out> op(params...)<attrs>` over parameters of the given shapes.
std::string one_op(const std::string& out, const std::string& op, const std::vector<std::string>& params,
                   const std::string& attrs = "") {
  std::string sig, body, ops;
  for (size_t i = 0; i < params.size(); ++i) {
    sig += fmt::format("{}p{}: {}", i ? ", " : "", i, params[i]);
    body += fmt::format("  %p{} = {} parameter({})\n", i, params[i], i);
    ops += fmt::format("{}%p{}", i ? ", " : "", i);
  }
  return fmt::format("HloModule m\n\nENTRY %main ({}) -> ({}) {{\n{}  %r = {} {}({}){}\n  ROOT %t = ({}) tuple(%r)\n}}\n",
                     sig, out, body, out, op, ops, attrs, out);
}

/// The CPU backend's compile log for text (what runs natively, what falls back to the interpreter).
std::string cpu_compile_log(const std::string& text) {
  CompileLogCapture log;
  native().compile(hlo::parse_hlo(text));
  return log.text;
}

/// Checks text against the interpreter and that the CPU backend runs all of it natively.
void check_native(const std::string& text, double lo = -3, double hi = 3, double atol_scale = 1,
                  std::optional<DType> tol_of = {}) {
  check_module(text, lo, hi, atol_scale, tol_of);
  std::string log = cpu_compile_log(text);
  INFO(log);
  CHECK_THAT(log, Contains(" 0 interpreter fallbacks"));
}

const std::vector<DType> kFloats{DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kInts{DType::int8, DType::int16, DType::int32, DType::int64,
                               DType::uint8, DType::uint16, DType::uint32, DType::uint64};

}  // namespace

TEST_CASE("cpu: unary float ops match the interpreter for every float dtype", "[cpu]") {
  struct U {
    const char* op;
    double lo, hi;
  };
  const std::vector<U> ops{
      {"abs", -3, 3}, {"negate", -3, 3}, {"sign", -3, 3}, {"floor", -3, 3}, {"ceil", -3, 3},
      {"round-nearest-afz", -3, 3}, {"round-nearest-even", -3, 3}, {"exponential", -10, 10},
      {"exponential-minus-one", -3, 3}, {"log", 0.01, 100}, {"log-plus-one", -0.9, 10}, {"sqrt", 0, 9},
      {"rsqrt", 0.1, 9}, {"cbrt", -8, 8}, {"tanh", -5, 5}, {"logistic", -10, 10}, {"sine", -20, 20},
      {"cosine", -20, 20}, {"tan", -1.5, 1.5}, {"erf", -4, 4}, {"erfc", -3, 3}, {"lgamma", 0.1, 8},
      {"asin", -0.99, 0.99}, {"acos", -0.99, 0.99}, {"atan", -5, 5}, {"sinh", -4, 4}, {"cosh", -4, 4},
      {"asinh", -5, 5}, {"acosh", 1.01, 5}, {"atanh", -0.99, 0.99}};
  for (DType d : kFloats)
    for (auto& u : ops) {
      auto s = shape_text(d, {17, 33});
      check_module(one_op(s, u.op, {s}), u.lo, u.hi);
    }
  for (DType d : kFloats) check_module(one_op(shape_text(DType::bool_, {40}), "is-finite", {shape_text(d, {40})}));
}

TEST_CASE("cpu: binary float ops match the interpreter for every float dtype", "[cpu]") {
  for (DType d : kFloats) {
    auto s = shape_text(d, {9, 70});
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "atan2"})
      check_module(one_op(s, op, {s, s}));
    check_module(one_op(s, "power", {s, s}), 0.1, 3);
  }
}

TEST_CASE("cpu: integer and bool ops match the interpreter (division by zero, wide shifts)", "[cpu]") {
  for (DType d : kInts) {
    auto s = shape_text(d, {5, 41});
    double lo = is_unsigned_integer(d) ? 0 : -70, hi = 70;
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
                           "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"})
      check_module(one_op(s, op, {s, s}), lo, hi);
    for (const char* op : {"abs", "negate", "sign", "not", "popcnt"}) check_module(one_op(s, op, {s}), lo, hi);
    check_module(one_op(s, "power", {s, s}), 0, 5);  // integer power falls back to the interpreter
  }
  auto b = shape_text(DType::bool_, {64});
  for (const char* op : {"and", "or", "xor", "add", "multiply", "maximum", "minimum"}) check_module(one_op(b, op, {b, b}));
  check_module(one_op(b, "not", {b}));
}

TEST_CASE("cpu: compare, select, clamp and convert between every pair of dtypes", "[cpu]") {
  std::vector<DType> all = kFloats;
  all.insert(all.end(), kInts.begin(), kInts.end());
  all.push_back(DType::bool_);
  for (DType d : all) {
    auto s = shape_text(d, {3, 50});
    auto p = shape_text(DType::bool_, {3, 50});
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"})
      check_module(one_op(p, "compare", {s, s}, fmt::format(", direction={}", dir)), -4, 4);
    check_module(one_op(s, "select", {p, s, s}));
    if (d != DType::bool_) check_module(one_op(s, "clamp", {shape_text(d, {}), s, shape_text(d, {})}), -2, 2);
    for (DType to : all) check_module(one_op(shape_text(to, {3, 50}), "convert", {s}), -300, 300);
  }
}

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

TEST_CASE("cpu: bitcast-convert between types of one width fuses and keeps every bit", "[cpu]") {
  // Inside a fusion (after an add in the source type), against the interpreter bit for bit. Integer sources stay
  // below the float types' NaN patterns (whose payloads a float round trip need not keep).
  const std::vector<std::pair<DType, DType>> pairs{
      {DType::float32, DType::int32},   {DType::float32, DType::uint32}, {DType::int32, DType::float32},
      {DType::uint32, DType::float32},  {DType::float16, DType::int16},  {DType::int16, DType::float16},
      {DType::bfloat16, DType::uint16}, {DType::uint16, DType::bfloat16}, {DType::float16, DType::bfloat16},
      {DType::float64, DType::int64},   {DType::int64, DType::float64}};
  for (auto [from, to] : pairs) {
    std::string text = fmt::format(R"(HloModule m

%fused (a: {0}[37,300]) -> {1}[37,300] {{
  %a = {0}[37,300] parameter(0)
  %s = {0}[37,300] add(%a, %a)
  ROOT %b = {1}[37,300] bitcast-convert(%s)
}}

ENTRY %main (a: {0}[37,300]) -> ({1}[37,300]) {{
  %a = {0}[37,300] parameter(0)
  %f = {1}[37,300] fusion(%a), kind=kLoop, calls=%fused
  ROOT %t = ({1}[37,300]) tuple(%f)
}}
)",
                                   hlo_name(from), hlo_name(to));
    INFO(text);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    bool float_source = is_floating(from) && from != DType::float16;  // f16 -> bf16: keep below f16's NaNs too
    Literal x = random_literal(m->entry->parameters[0]->shape, float_source ? -1e4 : 0, float_source ? 1e4 : 15000);
    Literal want = run(interp(), m, {x})[0], got = run(native(), m, {x})[0];
    REQUIRE(got.nbytes() == want.nbytes());
    CHECK(std::memcmp(got.data(), want.data(), got.nbytes()) == 0);
    CHECK_THAT(cpu_compile_log(text), Contains(" 0 interpreter fallbacks"));
  }
  // Random normals: the bits, their bitcast to floats in [1, 2) and the transform to normals are one kernel.
  auto f = jit([](Array key) { return random::normal(key, {64, 300}, DType::float32); });
  std::string optimised = f.lower(random::PRNGKey(3)).compile().as_text();
  std::string entry = optimised.substr(optimised.find("ENTRY"));
  CHECK_THAT(entry, !Contains("bitcast-convert"));
  size_t fusions = 0;
  for (size_t at = entry.find("fusion("); at != std::string::npos; at = entry.find("fusion(", at + 1)) ++fusions;
  CHECK(fusions == 1);
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

TEST_CASE("cpu: dot_general through Eigen (plain, transposed, batched) and integer dots", "[cpu]") {
  auto check_dot = [](const std::string& text) { check_module(text, -3, 3, kDotAtolScale); };
  auto dot = [](DType d, std::vector<int64_t> l, std::vector<int64_t> r, std::vector<int64_t> o, const char* attrs) {
    return one_op(shape_text(d, o), "dot", {shape_text(d, l), shape_text(d, r)}, attrs);
  };
  for (DType d : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int32}) {
    check_dot(dot(d, {37, 64}, {64, 29}, {37, 29}, ", lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}"));
    check_dot(dot(d, {64, 37}, {29, 64}, {37, 29}, ", lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}"));
    check_dot(dot(d, {3, 8, 5}, {5, 3, 7}, {3, 8, 7}, ", lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={1}, rhs_contracting_dimensions={0}"));
    check_dot(dot(d, {16}, {16}, {}, ", lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}"));
  }
}

TEST_CASE("cpu: integer convolution, erf_inv, digamma and integer power run natively and match the interpreter",
          "[cpu]") {
  // The later tests of this file draw their inputs from the shared generator as they did when this test was three
  // interpreter checks of 716 values: its state is restored and advanced by as much at the end.
  const std::mt19937 saved = rng();
  const std::string conv = ", window_strides={1,2}, padding={1,0,0,1}, lhs_dilation={1,1}, rhs_dilation={2,1}, "
                           "lhs_spec={0,1,2,3}, rhs_spec={0,1,2,3}, out_spec={0,1,2,3}, feature_group_count=1, "
                           "batch_group_count=1";
  // Integer products and sums wrap; values up to +-100 overflow int8 and int16 on purpose.
  for (const char* t : {"s8", "s16", "s32", "s64", "u8", "u32", "u64"})
    check_native(one_op(fmt::format("{}[2,4,5,5]", t), "convolution",
                        {fmt::format("{}[2,3,8,11]", t), fmt::format("{}[4,3,3,3]", t)}, conv),
                 -100, 100);
  check_native(one_op("s32[2,6,5,5]", "convolution", {"s32[2,4,5,5]", "s32[6,2,3,3]"},
                      ", window_strides={1,1}, padding={1,1,1,1}, lhs_dilation={1,1}, rhs_dilation={1,1}, "
                      "lhs_spec={0,1,2,3}, rhs_spec={0,1,2,3}, out_spec={0,1,2,3}, feature_group_count=2, "
                      "batch_group_count=1"),
               -50, 50);
  for (DType d : kFloats) {
    std::string t = hlo_name(d);
    check_native(one_op(t + "[64]", "erf-inv", {t + "[64]"}), -0.999, 0.999);
    check_native(one_op(t + "[64]", "digamma", {t + "[64]"}), -5, 8);
  }
  for (DType d : kInts) {
    std::string t = hlo_name(d);
    check_native(one_op(t + "[64]", "power", {t + "[64]", t + "[64]"}), -6, 12);
  }
  rng() = saved;
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 716; ++i) u(rng());
}

namespace {
/// The largest error of the CPU backend's `op` on inputs xs of dtype d (f32 or f64), in ULP of the dtype at the
/// reference value (long double); also the input where it occurs.
std::pair<double, double> max_ulp_error(const std::string& op, DType d, const std::vector<double>& xs,
                                        long double (*ref)(long double)) {
  int64_t n = static_cast<int64_t>(xs.size());
  std::string t = shape_text(d, {n});
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(t, op, {t}));
  Literal x = Literal::make(d, {n});
  for (int64_t i = 0; i < n; ++i) x.set_f64(i, xs[i]);
  Literal y = run(native(), m, {x})[0];
  bool f32 = d == DType::float32;
  double worst = 0, at = 0;
  for (int64_t i = 0; i < n; ++i) {
    long double r = ref(static_cast<long double>(x.get_f64(i)));
    double got = y.get_f64(i);
    double err;
    if (std::isnan(static_cast<double>(r)) || std::isinf(static_cast<double>(r))) {
      err = (std::isnan(got) && std::isnan(static_cast<double>(r))) || got == static_cast<double>(r) ? 0 : INFINITY;
    } else {
      int e = f32 ? std::max(std::ilogb(static_cast<float>(r)), -126) - 23 : std::max(std::ilogb(static_cast<double>(r)), -1022) - 52;
      err = static_cast<double>(std::fabs(static_cast<long double>(got) - r) / std::ldexp(1.0L, e));
    }
    if (!(err <= worst)) worst = err, at = x.get_f64(i);
  }
  return {worst, at};
}

/// erf_inv in long double: bisection (70 halvings of [0, 10]) on f(y) = erf(y) - |x|, or (1 - |x|) - erfc(y) above
/// 1/2 (1 - |x| is exact and erfc keeps its relative accuracy), then Newton steps (which also resolve tiny |x|,
/// below the bisection's resolution).
long double ref_erf_inv(long double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  long double a = std::fabs(x);
  if (a == 1) return std::copysign(static_cast<long double>(INFINITY), x);
  auto f = [a](long double y) { return a <= 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y); };
  long double lo = 0, hi = 10;
  for (int i = 0; i < 70; ++i) {
    long double mid = (lo + hi) / 2;
    (f(mid) < 0 ? lo : hi) = mid;
  }
  long double y = (lo + hi) / 2;
  for (int i = 0; i < 3; ++i) y -= f(y) / (1.12837916709551257390L * std::exp(-y * y));
  return std::copysign(y, x);
}

/// digamma in long double. Near the positive root x0 (|x - x0| < 0.3): psi(x) = (x - x0) sum_n 1 / ((n + x0)(n + x))
/// (psi(x) - psi(x0) term by term from psi's series), 10^4 terms plus the tail as the integral from N - 1/2 with
/// its midpoint-rule correction f'(N - 1/2) / 24 (error ~1e-20): no cancellation; x - x0 with x0 in two parts, so
/// it is exact to ~1e-36 however close x is to the root. Elsewhere for x > 0: the recurrence up to x >= 30, then
/// the asymptotic series (terms to x^-18: error < 1e-25). x < 0: reflection with pi cot(pi r), r = x - round(x)
/// exact. Poles give NaN.
long double ref_digamma(long double x) {
  const long double x0 = 0xb.b16c31ab5f1fb71p-3L, x0_lo = -0x1.58dde687d6c3ep-66L;  // x0 + x0_lo: the root
  const long double pi = 3.14159265358979323846264338327950288L;
  if (std::isnan(x) || x == -INFINITY || (x <= 0 && std::nearbyint(x) == x)) return NAN;
  if (x == INFINITY) return x;
  if (x < 0) {
    long double r = x - std::nearbyint(x);
    return ref_digamma(1 - x) - pi / std::tan(pi * r);
  }
  if (std::fabs(x - x0) < 0.3L) {
    long double t = (x - x0) - x0_lo, s = 0;
    const int N = 10000;
    for (int k = N - 1; k >= 0; --k) s += 1 / ((k + x0) * (k + x));
    long double m = N - 0.5L, u = t / (m + x0);
    s += u == 0 ? 1 / (m + x0) : std::log1p(u) / u / (m + x0);
    s -= ((m + x0) + (m + x)) / ((m + x0) * (m + x) * (m + x0) * (m + x)) / 24;
    return t * s;
  }
  long double r = 0;
  while (x < 30) r -= 1 / x, x += 1;
  long double f = 1 / (x * x);
  long double series = f * (1.0L / 12 - f * (1.0L / 120 - f * (1.0L / 252 - f * (1.0L / 240 - f * (1.0L / 132 -
                       f * (691.0L / 32760 - f * (1.0L / 12 - f * (3617.0L / 8160 - f * (43867.0L / 14364)))))))));
  return r + std::log(x) - 0.5L / x - series;
}

/// Test inputs of dtype d (as doubles): dense uniform samples of [lo, hi), then `extra`.
std::vector<double> samples(DType d, double lo, double hi, int64_t n, std::vector<double> extra = {}) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    double x = lo + (i + 0.5) / n * (hi - lo);
    v.push_back(d == DType::float32 ? static_cast<double>(static_cast<float>(x)) : x);
  }
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}
}  // namespace

TEST_CASE("cpu: erf_inv and digamma are within a few ULP of long-double references", "[cpu]") {
  // Bounds checked (measured maxima in brackets; JITX_PRINT_ULP=1 prints them):
  //   erf_inv f32 on (-1, 1), including 1 - k 2^-24 and tiny arguments:         <= 4 ULP   [3.2]
  //   erf_inv f64 on (-1, 1), including 1 - k 2^-53 and tiny arguments:         <= 2 ULP   [1.4]
  //   digamma on (0, 1e6), near the pole at 0 and around the positive root:   f32 <= 1 ULP [0.5], f64 <= 5 [3.9]
  //   digamma on (-20, 0), next to the poles too: psi crosses zero between each pair of poles, where the reflection
  //     psi(1 - x) - pi cot(pi x) cancels, so the error is taken in ULP of max(|psi(x)|, 1): f32 <= 1 [0.5],
  //     f64 <= 10 [8.0].
  for (DType d : {DType::float32, DType::float64}) {
    bool f32 = d == DType::float32;
    double eps = f32 ? 0x1p-24 : 0x1p-53;
    std::vector<double> edges, tiny;
    for (int k = 1; k <= 2000; ++k) edges.push_back(1 - k * eps), edges.push_back(-(1 - k * eps));
    for (int k = 0; k < 200; ++k) tiny.push_back(std::pow(10.0, -30 + 27.0 * k / 200) * (k % 2 ? -1 : 1));
    edges.insert(edges.end(), tiny.begin(), tiny.end());
    auto [e1, at1] = max_ulp_error("erf-inv", d, samples(d, -1, 1, 1 << 15, edges), ref_erf_inv);
    INFO(dtype_name(d) << " erf_inv: max error " << e1 << " ULP at " << at1);
    CHECK(e1 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).erf_inv);
    if (std::getenv("JITX_PRINT_ULP")) WARN(dtype_name(d) << " erf_inv: max error " << e1 << " ULP at " << at1);

    std::vector<double> pos;
    for (int k = 0; k < 400; ++k) pos.push_back(std::pow(10.0, -30 + 36.0 * k / 400));  // 1e-30 .. 1e6
    for (int k = -500; k <= 500; ++k) pos.push_back(1.4616321449683623 + k * (f32 ? 1e-7 : 1e-9));  // the root
    auto [e2, at2] = max_ulp_error("digamma", d, samples(d, 0, 12, 1 << 14, pos), [](long double x) { return ref_digamma(x); });
    INFO(dtype_name(d) << " digamma (x > 0): max error " << e2 << " ULP at " << at2);
    CHECK(e2 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).digamma);
    if (std::getenv("JITX_PRINT_ULP")) WARN(dtype_name(d) << " digamma (x > 0): max error " << e2 << " ULP at " << at2);

    // x < 0: the absolute error in ULP of max(|psi(x)|, 1).
    std::vector<double> neg;
    for (int k = 1; k <= 20; ++k)
      for (double dx : {1e-6, 1e-4, 1e-2, 0.25}) neg.push_back(-k + dx), neg.push_back(-k - dx);
    auto negs = samples(d, -20, 0, 1 << 14, neg);
    std::erase_if(negs, [](double x) { return x == std::nearbyint(x); });
    int64_t n = static_cast<int64_t>(negs.size());
    std::string t = shape_text(d, {n});
    Literal x = Literal::make(d, {n});
    for (int64_t i = 0; i < n; ++i) x.set_f64(i, negs[i]);
    Literal y = run(native(), hlo::parse_hlo(one_op(t, "digamma", {t})), {x})[0];
    double e3 = 0, at3 = 0;
    for (int64_t i = 0; i < n; ++i) {
      long double r = ref_digamma(x.get_f64(i));
      double scale = std::max(static_cast<double>(std::fabs(r)), 1.0);
      int e = f32 ? std::ilogb(static_cast<float>(scale)) - 23 : std::ilogb(scale) - 52;
      double err = static_cast<double>(std::fabs(static_cast<long double>(y.get_f64(i)) - r) / std::ldexp(1.0L, e));
      if (!(err <= e3)) e3 = err, at3 = x.get_f64(i);
    }
    INFO(dtype_name(d) << " digamma (x < 0): max error " << e3 << " ULP of max(|psi|, 1) at " << at3);
    CHECK(e3 <= (f32 ? kF32SpecialUlp : kF64SpecialUlp).digamma_negative);
    if (std::getenv("JITX_PRINT_ULP"))
      WARN(dtype_name(d) << " digamma (x < 0): max error " << e3 << " ULP of max(|psi|, 1) at " << at3);
  }
}

TEST_CASE("cpu: f32 math is within a few ULP of double-precision references", "[cpu]") {
  // Bound checked below for every function over dense samples of each range: max error <= 4 ULP, except tanh
  // (a rational approximation with one division, for speed): <= 5 ULP.
  struct F {
    const char* op;
    double lo, hi;
    double (*ref)(double);
    double max_ulp = kF32MathUlp.polynomial;
  };
  const std::vector<F> fs{{"exponential", -87, 88, [](double x) { return std::exp(x); }},
                          {"exponential-minus-one", -10, 10, [](double x) { return std::expm1(x); }},
                          {"log", 1e-30, 1e30, [](double x) { return std::log(x); }},
                          {"log-plus-one", -0.99, 100, [](double x) { return std::log1p(x); }},
                          {"tanh", -10, 10, [](double x) { return std::tanh(x); }, kF32MathUlp.tanh},
                          {"tanh", -1e-3, 1e-3, [](double x) { return std::tanh(x); }, kF32MathUlp.tanh},
                          {"logistic", -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }},
                          {"erf", -5, 5, [](double x) { return std::erf(x); }},
                          {"sine", -1e4, 1e4, [](double x) { return std::sin(x); }},
                          {"cosine", -1e4, 1e4, [](double x) { return std::cos(x); }}};
  const int64_t n = 1 << 16;
  for (auto& f : fs) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(fmt::format("f32[{}]", n), f.op, {fmt::format("f32[{}]", n)}));
    Literal x = Literal::make(DType::float32, {n});
    bool log_scale = std::string(f.op) == "log";
    for (int64_t i = 0; i < n; ++i) {
      double t = (i + 0.5) / n;
      x.set_f64(i, log_scale ? std::exp(std::log(f.lo) + t * (std::log(f.hi) - std::log(f.lo))) : f.lo + t * (f.hi - f.lo));
    }
    Literal y = run(native(), m, {x})[0];
    double max_ulp = 0;
    for (int64_t i = 0; i < n; ++i) {
      double ref = f.ref(static_cast<float>(x.get_f64(i)));
      double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
      max_ulp = std::max(max_ulp, std::fabs(y.get_f64(i) - ref) / ulp);
    }
    INFO(f.op << ": max error " << max_ulp << " ULP");
    CHECK(max_ulp <= f.max_ulp);
    if (std::getenv("JITX_PRINT_ULP")) WARN(f.op << ": max error " << max_ulp << " ULP");
  }
}

TEST_CASE("cpu: f32 exp at the ends of its range: overflow, subnormal results, specials (staged and not)", "[cpu]") {
  // exp clamps its argument and lets the clamped ends give the limits (no selects on the result): the correctly
  // rounded result within 1 ULP (2^-149 for subnormal results), +inf above ln(FLT_MAX), 0 far below, NaN kept.
  const std::vector<double> xs{-INFINITY, INFINITY, NAN, 88.72283935546875, 88.7228317, 88.0, 80.5, -87.3, -87.5,
                               -95.0, -100.0, -103.0, -103.9, -103.97, -103.972084045410, -103.98, -104.0, -105.0,
                               -150.0, -1e30, 1e30, 0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5};
  for (int64_t cols : {int64_t{7}, int64_t{4096}}) {  // 7: one loop; 4096: staged (two loops per block)
    INFO("columns: " << cols);
    std::string shape = fmt::format("f32[4,{}]", cols);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(shape, "exponential", {shape}));
    Literal x = Literal::make(DType::float32, {4, cols});
    for (int64_t i = 0; i < x.size(); ++i) x.set_f64(i, xs[static_cast<size_t>(i) % xs.size()]);
    Literal y = run(native(), m, {x})[0];
    for (int64_t i = 0; i < x.size(); ++i) {
      double a = x.get_f64(i), g = y.get_f64(i);
      double ref = static_cast<float>(std::exp(a));  // correctly rounded, subnormals included
      INFO("exp(" << a << "): got " << g << ", want " << ref);
      if (std::isnan(a)) {
        CHECK(std::isnan(g));
      } else if (std::isinf(ref) || ref == 0) {
        CHECK(g == ref);
      } else {
        double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
        CHECK(std::fabs(g - ref) <= kF32MathUlp.exp_range_ends * ulp);
      }
    }
  }
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
      CHECK(std::fabs(got.get_f64(r) - want.get_f64(r)) <= tol(DType::float32, Bound::kSum).rtol * std::fabs(want.get_f64(r)));
  }
}

TEST_CASE("cpu: logistic in long rows runs as two loops per block (staged) and stays within a few ULP", "[cpu]") {
  // Rows of 1500 columns (five blocks of 256 and a partial one), three rows: x * logistic(3x). The kernel computes
  // logistic's range reduction for a block in one loop and finishes it in the element loop (two_stage_math_parts).
  auto text = [](DType d) {
    return fmt::format(R"(HloModule m

%fused (a: {0}[3,1500]) -> {0}[3,1500] {{
  %a = {0}[3,1500] parameter(0)
  %c = {0}[] constant(3)
  %cb = {0}[3,1500] broadcast(%c), broadcast_dimensions={{}}
  %z = {0}[3,1500] multiply(%a, %cb)
  %l = {0}[3,1500] logistic(%z)
  ROOT %r = {0}[3,1500] multiply(%a, %l)
}}

ENTRY %main (a: {0}[3,1500]) -> ({0}[3,1500]) {{
  %a = {0}[3,1500] parameter(0)
  %f = {0}[3,1500] fusion(%a), kind=kLoop, calls=%fused
  ROOT %t = ({0}[3,1500]) tuple(%f)
}}
)",
                       hlo_name(d));
  };
  // f32 against double precision on [-32, 32] (3x reaches past both ends of exp's range) and special values at
  // a row start, around the block boundary and at the end. The kernel folds both multiplies into the logistic
  // (3x is not rounded to f32 first: the reference takes it exact; x * l is x / (1 + e)). Allowance: logistic's 4
  // ULP plus the product's rounding; a logistic below the normal range (3x < -87.3) may be flushed to 0, an error
  // of at most |x| 2^-126.
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text(DType::float32));
  Literal x = random_literal(hlo::Shape(DType::float32, {3, 1500}), -32, 32);
  const std::vector<std::pair<int64_t, double>> specials{
      {0, NAN}, {1, INFINITY}, {2, -INFINITY}, {1023, 29.47}, {1024, -29.47}, {1025, -29.1}, {1500, 0.0},
      {1501, -0.0}, {2000, 1e30}, {2001, -1e30}, {4499, -29.0}, {3000, 1e-30}, {3001, -1e-30}};
  for (auto [i, v] : specials) x.set_f64(i, v);
  Literal y = run(native(), m, {x})[0];
  double max_ulp = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    double a = x.get_f64(i), g = y.get_f64(i);
    double z = 3.0 * a;
    double ref = a / (1 + std::exp(-z));
    INFO("x = " << a << ": got " << g << ", want " << ref);
    if (std::isnan(ref)) {
      CHECK(std::isnan(g));
      continue;
    }
    if (std::isinf(ref)) {
      CHECK(g == ref);
      continue;
    }
    double ulp = std::ldexp(1.0, std::max(std::ilogb(static_cast<float>(ref)), -126) - 23);
    double err = std::fabs(g - ref);
    CHECK(err <= kF32MathUlp.logistic_product * ulp + std::fabs(a) * std::ldexp(1.0, -126));
    if (std::fabs(z) < 87) max_ulp = std::max(max_ulp, err / ulp);
  }
  CHECK(max_ulp <= kF32MathUlp.logistic_product);
  // bf16/f16 (computed in f32, rounded like the interpreter) against the interpreter.
  for (DType d : {DType::bfloat16, DType::float16}) check_module(text(d), -12, 12);
}

TEST_CASE("cpu: GELU's tanh form runs as x * logistic(2u), accurate in the negative tail too", "[cpu]") {
  // nn::gelu(x) = 0.5 x (1 + tanh(u)); the simplifier rewrites 1 + tanh(u) = 2 logistic(2u). In f32 the tanh form
  // loses relative accuracy where u < 0 (1 + tanh(u) cancels); the logistic form does not. Reference: the tanh
  // formula in double precision on the f32 inputs.
  auto f = jit([](Array v) { return nn::gelu(v); });
  Array x = random::uniform(random::PRNGKey(7), {4, 2048}, DType::float32, -9.0, 6.0);
  std::vector<double> xs = x.to_vector<double>();
  std::vector<double> got = f(x).to_vector<double>();
  std::string optimised = f.lower(x).compile().as_text();
  CHECK_THAT(optimised, Contains("logistic("));
  CHECK_THAT(optimised, !Contains("tanh("));
  double worst_rel = 0, worst_abs = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = xs[i];
    // 0.5 (1 + tanh(u)) as 1 / (1 + exp(-2u)), which does not cancel in double either.
    double ref = v / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    double err = std::fabs(got[i] - ref);
    INFO("x = " << v << ": got " << got[i] << ", want " << ref);
    // u is computed in f32 (its constants rounded too): a relative error of a few 1e-8 in u is an absolute one of
    // ~1e-6 at u = -33 (x = -9), which exp(2u) turns into a relative one of ~2|u| 1e-8. Measured: below 1e-5
    // relative everywhere |gelu| > 1e-30, while the f32 tanh form is off by 100% past x = -5 (1 + tanh(u) is 0).
    if (std::fabs(ref) > 1e-30) {
      CHECK(err <= kF32Accuracy.gelu * std::fabs(ref));
      worst_rel = std::max(worst_rel, err / std::fabs(ref));
    } else {
      CHECK(err <= kF32Accuracy.gelu_tiny);
    }
    worst_abs = std::max(worst_abs, err);
  }
  if (std::getenv("JITX_PRINT_ULP")) WARN("gelu: worst relative error " << worst_rel << ", absolute " << worst_abs);
}

TEST_CASE("cpu: the optimised IR of an elementwise fusion uses vector instructions", "[cpu]") {
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(R"(HloModule m

%fused (a: f32[1024,1024], b: f32[1024,1024]) -> f32[1024,1024] {
  %a = f32[1024,1024] parameter(0)
  %b = f32[1024,1024] parameter(1)
  %x = f32[1024,1024] multiply(%a, %b)
  ROOT %e = f32[1024,1024] tanh(%x)
}

ENTRY %main (a: f32[1024,1024], b: f32[1024,1024]) -> (f32[1024,1024]) {
  %a = f32[1024,1024] parameter(0)
  %b = f32[1024,1024] parameter(1)
  %f = f32[1024,1024] fusion(%a, %b), kind=kLoop, calls=%fused
  ROOT %t = (f32[1024,1024]) tuple(%f)
}
)");
  std::string ir = cpu::optimized_ir({m->entry->instructions[2].get()});
  CHECK_THAT(ir, Contains("x float>"));
  CHECK_THAT(ir, !Contains("@tanh"));
  // erf_inv (f32 arithmetic) and digamma (computed in double for f32 and f64) are straight-line code too.
  for (auto [op, t, vec] : {std::tuple{"erf-inv", "f32", "x float>"}, std::tuple{"digamma", "f32", "x double>"},
                            std::tuple{"digamma", "f64", "x double>"}}) {
    std::string shape = fmt::format("{}[4096]", t);
    std::shared_ptr<const hlo::Module> u = hlo::parse_hlo(one_op(shape, op, {shape}));
    std::string uir = cpu::optimized_ir({u->entry->instructions[1].get()});
    INFO(op << " " << t);
    CHECK_THAT(uir, Contains(vec));
    CHECK_THAT(uir, !Contains("@digamma") && !Contains("@log("));
  }
}

TEST_CASE("cpu: execution is asynchronous; errors reach the waiter; concurrent callers", "[cpu]") {
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op("f32[1000]", "exponential", {"f32[1000]"}));
  auto exe = native().compile(m);
  Literal x = random_literal(hlo::Shape(DType::float32, {1000}), -1, 1);
  auto arg = runtime::Buffer::from_literal(x, &test_device());
  SECTION("a call returns before its work has run") {
    std::promise<void> gate;
    auto opened = gate.get_future().share();
    test_device().stream.enqueue([opened] { opened.wait(); });  // holds the stream
    auto outs = exe->execute(std::vector{arg}, &test_device());
    CHECK(!outs[0]->ready->is_ready());
    gate.set_value();
    Literal y = outs[0]->literal();
    CHECK(outs[0]->ready->is_ready());
    CHECK(y.get_f64(7) == Approx(std::exp(static_cast<float>(x.get_f64(7)))).epsilon(kF32Accuracy.exp_scalar));
  }
  SECTION("an input that failed passes its error on, and a failing op is named") {
    auto bad = runtime::Buffer::pending(DType::float32, {1000}, &test_device());
    bad->ready->set_error(std::make_exception_ptr(RuntimeError("upstream failure")));
    auto outs = exe->execute(std::vector{bad}, &test_device());
    CHECK_THROWS_WITH(outs[0]->literal(), Contains("upstream failure"));
    std::shared_ptr<const hlo::Module> cc = hlo::parse_hlo(one_op("f32[4]", "custom-call", {"f32[4]"}, ", custom_call_target=\"nope\""));
    auto outs2 = native().compile(cc)->execute(std::vector{runtime::Buffer::from_literal(random_literal(hlo::Shape(DType::float32, {4}), 0, 1), &test_device())}, &test_device());
    CHECK_THROWS_WITH(outs2[0]->literal(), Contains("%r"));
  }
  SECTION("many threads share one executable") {
    std::atomic<int> wrong{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
      ts.emplace_back([&, t] {
        for (int k = 0; k < 50; ++k) {
          Literal in = Literal::make(DType::float32, {1000});
          for (int64_t i = 0; i < 1000; ++i) in.set_f64(i, 0.001 * ((t * 50 + k + i) % 100));
          auto outs = exe->execute(std::vector{runtime::Buffer::from_literal(in, &test_device())}, &test_device());
          Literal y = outs[0]->literal();
          for (int64_t i = 0; i < 1000; i += 97)
            if (std::fabs(y.get_f64(i) - std::exp(static_cast<float>(in.get_f64(i)))) > kF32Accuracy.exp_threads) wrong++;
        }
      });
    for (auto& t : ts) t.join();
    CHECK(wrong == 0);
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
  const std::string plain = "lhs_batch_dimensions={}, lhs_contracting_dimensions={1}, rhs_batch_dimensions={}, rhs_contracting_dimensions={0}";
  const std::string trans = "lhs_batch_dimensions={}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={}, rhs_contracting_dimensions={1}";
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
)", hlo_name(d)), -1, 1, kDotAtolScale);
  }
}

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
    check_native(module_with({s, u}, "  %r = (" + s + ", " + u + ") sort(%p0, %p1), dimension=1, num_keys=1, is_stable=true\n"
                             "  %a = " + s + " get-tuple-element(%r), index=0\n  %b = " + u + " get-tuple-element(%r), index=1\n",
                             {{"a", s}, {"b", u}}), -4, 4);
    check_native(module_with({s, s, u}, "  %r = (" + s + ", " + s + ", " + u + ") sort(%p0, %p1, %p2), dimension=1, num_keys=2, is_stable=true\n"
                             "  %a = " + s + " get-tuple-element(%r), index=0\n  %c = " + u + " get-tuple-element(%r), index=2\n",
                             {{"a", s}, {"c", u}}), -2, 2);
    std::string k = shape_text(d, {6, 5}), ki = shape_text(DType::int32, {6, 5});
    check_native(module_with({s}, "  %r = (" + k + ", " + ki + ") topk(%p0), k=5\n  %a = " + k +
                                       " get-tuple-element(%r), index=0\n  %b = " + ki + " get-tuple-element(%r), index=1\n",
                             {{"a", k}, {"b", ki}}), -4, 4);
  }
  // NaNs sort last (the interpreter's order); check through a float key computed as log of negative numbers.
  check_native(module_with({"f32[4,20]"}, "  %l = f32[4,20] log(%p0)\n  %r = f32[4,20] sort(%l), dimension=1, num_keys=1, is_stable=true\n",
                           {{"r", "f32[4,20]"}}), -1, 3);
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
      check_native(one_op(shape_text(d, {10, 7}), "scatter", {shape_text(d, {10, 7}), "s32[12,1]", shape_text(d, {12, 7})},
                          fmt::format(", update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, "
                                      "index_vector_dim=1, input_batching_dims={{}}, scatter_indices_batching_dims={{}}, reducer={}", r)),
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
    for (const char* r : {"argmax", "argmin"})
      for (int dim : {0, 1}) {
        INFO(r << " over " << dim);
        std::string od = shape_text(d, {dim == 0 ? 9 : 8}), oi = shape_text(DType::int32, {dim == 0 ? 9 : 8});
        // Values in [-3, 3) rounded to integers for int32: ties pick the first index.
        check_native(module_with({in}, fmt::format("  %i = s32[8,9] iota(), iota_dimension={0}\n"
                                                   "  %c0 = {1} constant(0)\n  %c1 = s32[] constant(0)\n"
                                                   "  %r = ({2}, {3}) reduce(%p0, %i, %c0, %c1), dimensions={{{0}}}, reducer={4}\n"
                                                   "  %v = {2} get-tuple-element(%r), index=0\n  %x = {3} get-tuple-element(%r), index=1\n",
                                                   dim, init, od, oi, r),
                                 {{"v", od}, {"x", oi}}));
      }
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

TEST_CASE("cpu: column reductions (leading dimensions) in tiles, split across threads, sibling outputs", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::int32, DType::float64}) {
    std::string s = hlo_name(d);
    INFO(s);
    // [50, 5000] over rows: 5000 outputs in 2048-wide tiles, enough work to split the columns across threads.
    check_native(one_op(shape_text(d, {5000}), "reduce", {shape_text(d, {50, 5000}), shape_text(d, {})},
                        ", dimensions={0}, reducer=add"));
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
)", s));
  }
}

namespace {
/// A softmax over the last dimension as the fusion pass makes it (one kRow fusion), rows x n of dtype d.
std::string softmax_module(DType d, int64_t rows, int64_t n) {
  return fmt::format(R"(HloModule m

%fused (a: {0}[{1},{2}]) -> {0}[{1},{2}] {{
  %a = {0}[{1},{2}] parameter(0)
  %ninf = {0}[] constant(-inf)
  %z = {0}[] constant(0)
  %m = {0}[{1}] reduce(%a, %ninf), dimensions={{1}}, reducer=max
  %mb = {0}[{1},{2}] broadcast(%m), broadcast_dimensions={{0}}
  %c = {0}[{1},{2}] subtract(%a, %mb)
  %e = {0}[{1},{2}] exponential(%c)
  %s = {0}[{1}] reduce(%e, %z), dimensions={{1}}, reducer=add
  %sb = {0}[{1},{2}] broadcast(%s), broadcast_dimensions={{0}}
  ROOT %y = {0}[{1},{2}] divide(%e, %sb)
}}

ENTRY %main (a: {0}[{1},{2}]) -> ({0}[{1},{2}]) {{
  %a = {0}[{1},{2}] parameter(0)
  %f = {0}[{1},{2}] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = ({0}[{1},{2}]) tuple(%f)
}}
)",
                     hlo_name(d), rows, n);
}
}  // namespace

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
  // Softmax at 16 MiB: exp per element, so plain stores (and the row cache).
  check_native(softmax_module(DType::float32, 1025, 4099), -8, 8);
}

TEST_CASE("cpu: streaming stores in the optimised IR only for large outputs of memory-bound kernels", "[cpu]") {
  auto ir_of = [](const std::string& shape, const char* op) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op(shape, op, {shape}));
    return cpu::optimized_ir({m->entry->instructions[1].get()});
  };
  std::string big = ir_of("f32[4096,4096]", "negate");
  CHECK_THAT(big, Contains("!nontemporal"));
  CHECK_THAT(big, Contains("<8 x float>"));
  CHECK_THAT(big, Contains("sfence"));
  CHECK_THAT(big, !Contains("llvm.prefetch"));  // the hardware prefetcher follows the sequential reads
  std::string small = ir_of("f32[1024,1024]", "negate");
  CHECK_THAT(small, !Contains("!nontemporal"));
  CHECK_THAT(small, !Contains("sfence"));
  // A transcendental per element makes the kernel compute-bound: its stores stay plain.
  std::string heavy = ir_of("f32[4096,4096]", "exponential");
  CHECK_THAT(heavy, !Contains("!nontemporal"));
  CHECK_THAT(heavy, Contains("<8 x float>"));
  // A memory-bound row kernel reads each row again from cache after its reduction: it prefetches the next row
  // block by block meanwhile. Softmax (exp per element) does not.
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
  CHECK_THAT(row_ir(softmax_module(DType::float32, 4096, 4096)), !Contains("llvm.prefetch"));
}

TEST_CASE("cpu: column reductions with row counts off the four-row pass, odd widths and half types", "[cpu]") {
  for (DType d : {DType::float32, DType::bfloat16, DType::float16, DType::float64, DType::int32}) {
    std::string s = hlo_name(d);
    INFO(s);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 300}, {3, 301}, {7, 5003}, {1003, 37}, {258, 4097}}) {
      check_native(one_op(shape_text(d, {cols}), "reduce", {shape_text(d, {rows, cols}), shape_text(d, {})},
                          ", dimensions={0}, reducer=add"));
      check_native(one_op(shape_text(d, {cols}), "reduce", {shape_text(d, {rows, cols}), shape_text(d, {})},
                          ", dimensions={0}, reducer=max"));
    }
    check_native(one_op(shape_text(d, {2, 2051}), "reduce", {shape_text(d, {5, 3, 2, 2051}), shape_text(d, {})},
                        ", dimensions={0,1}, reducer=add"));
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
    CHECK(std::fabs(got.get_f64(c) - ref) <= kF32Accuracy.column_sum * ref);  // one f32 rounding of a double-precision sum
  }
}

// --- excess precision ------------------------------------------------------------------------------------------
namespace {
/// Sets config().allow_excess_precision for a scope (the CPU backend reads it when it compiles a module).
struct ExcessPrecision {
  bool was;
  explicit ExcessPrecision(bool on) : was(config().allow_excess_precision) { config().allow_excess_precision = on; }
  ~ExcessPrecision() { config().allow_excess_precision = was; }
};

Literal to_f64(const Literal& x) {
  Literal y = Literal::make(DType::float64, x.dims);
  for (int64_t i = 0; i < x.size(); ++i) y.set_f64(i, x.get_f64(i));  // exact: every f16/bf16 value is a double
  return y;
}

/// |got - ref| in units of the spacing of d's values at |ref| (its ULP there), |ref| floored at 2^-8 so that
/// results that are tiny through cancellation are measured against the spacing of values of ordinary size.
double ulps(double got, double ref, DType d) {
  int mant = d == DType::bfloat16 ? 8 : 11;  // significand bits, the implicit one included
  double a = std::max(std::fabs(ref), std::ldexp(1.0, -8));
  return std::fabs(got - ref) / std::ldexp(1.0, std::ilogb(a) - (mant - 1));
}

// A gelu(a * b + c) chain (a loop fusion) and the article's layer norm over rows (a row fusion, as the MLP block's
// tail is fused), in dtype s. Their constants are exact in f16 and bf16, so the f64 module computes the same
// function (gelu's 0.044715 and sqrt(2/pi) as bf16 rounds them, epsilon 2^-16).
std::string gelu_chain_module(const std::string& s) {
  return fmt::format(R"(HloModule m

%fused (a: {0}[64,256], b: {0}[64,256], c: {0}[256]) -> {0}[64,256] {{
  %a = {0}[64,256] parameter(0)
  %b = {0}[64,256] parameter(1)
  %c = {0}[256] parameter(2)
  %cb = {0}[64,256] broadcast(%c), broadcast_dimensions={{1}}
  %ab = {0}[64,256] multiply(%a, %b)
  %x = {0}[64,256] add(%ab, %cb)
  %x2 = {0}[64,256] multiply(%x, %x)
  %x3 = {0}[64,256] multiply(%x2, %x)
  %k1 = {0}[] constant(0.044677734375)
  %k1b = {0}[64,256] broadcast(%k1), broadcast_dimensions={{}}
  %t0 = {0}[64,256] multiply(%k1b, %x3)
  %t1 = {0}[64,256] add(%x, %t0)
  %k2 = {0}[] constant(0.796875)
  %k2b = {0}[64,256] broadcast(%k2), broadcast_dimensions={{}}
  %t2 = {0}[64,256] multiply(%t1, %k2b)
  %th = {0}[64,256] tanh(%t2)
  %one = {0}[] constant(1)
  %oneb = {0}[64,256] broadcast(%one), broadcast_dimensions={{}}
  %t3 = {0}[64,256] add(%oneb, %th)
  %half = {0}[] constant(0.5)
  %halfb = {0}[64,256] broadcast(%half), broadcast_dimensions={{}}
  %t4 = {0}[64,256] multiply(%halfb, %x)
  ROOT %g = {0}[64,256] multiply(%t4, %t3)
}}

ENTRY %main (a: {0}[64,256], b: {0}[64,256], c: {0}[256]) -> ({0}[64,256]) {{
  %a = {0}[64,256] parameter(0)
  %b = {0}[64,256] parameter(1)
  %c = {0}[256] parameter(2)
  %f = {0}[64,256] fusion(%a, %b, %c), kind=kLoop, calls=%fused
  ROOT %t = ({0}[64,256]) tuple(%f)
}}
)",
                     s);
}

std::string layer_norm_module(const std::string& s) {
  return fmt::format(R"(HloModule m

%fused (h: {0}[64,256]) -> {0}[64,256] {{
  %h = {0}[64,256] parameter(0)
  %z = {0}[] constant(0)
  %s = {0}[64] reduce(%h, %z), dimensions={{1}}, reducer=add
  %n = {0}[] constant(0.00390625)
  %nb = {0}[64] broadcast(%n), broadcast_dimensions={{}}
  %mu = {0}[64] multiply(%s, %nb)
  %mub = {0}[64,256] broadcast(%mu), broadcast_dimensions={{0}}
  %d = {0}[64,256] subtract(%h, %mub)
  %d2 = {0}[64,256] multiply(%d, %d)
  %s2 = {0}[64] reduce(%d2, %z), dimensions={{1}}, reducer=add
  %var = {0}[64] multiply(%s2, %nb)
  %eps = {0}[] constant(1.52587890625e-05)
  %epsb = {0}[64] broadcast(%eps), broadcast_dimensions={{}}
  %ve = {0}[64] add(%var, %epsb)
  %r = {0}[64] rsqrt(%ve)
  %rb = {0}[64,256] broadcast(%r), broadcast_dimensions={{0}}
  ROOT %y = {0}[64,256] multiply(%d, %rb)
}}

ENTRY %main (h: {0}[64,256]) -> ({0}[64,256]) {{
  %h = {0}[64,256] parameter(0)
  %f = {0}[64,256] fusion(%h), kind=kRow, calls=%fused
  ROOT %t = ({0}[64,256]) tuple(%f)
}}
)",
                     s);
}
}  // namespace

TEST_CASE("cpu: excess precision (the default) is more accurate than per-op rounding for f16/bf16 fusions", "[cpu]") {
  // Against a double-precision reference (the same module in f64 on the interpreter, on the same inputs): the
  // default keeps the chain in f32 and rounds once when it stores the result, so each element is the reference
  // correctly rounded but for f32's own error: within 0.5 ULP plus tanh's polynomial error (a few f32 ULP, up to
  // 0.2 ULP of the floored f16 spacing where 1 + tanh cancels; sums are f32 too): 0.75 ULP. Per-op rounding (the
  // flag off, and the interpreter) rounds after every op, and those roundings add up along the chain (and are
  // amplified where it cancels: x - mean, 1 + tanh).
  for (DType d : {DType::bfloat16, DType::float16}) {
    std::string s = hlo_name(d);
    for (bool row : {false, true}) {
      INFO(s << (row ? " layer norm" : " gelu chain"));
      std::string text = row ? layer_norm_module(s) : gelu_chain_module(s);
      std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
      std::vector<Literal> args, args64;
      for (auto* p : m->entry->parameters) {
        args.push_back(random_literal(p->shape, row ? -1 : -2, row ? 3 : 2));
        args64.push_back(to_f64(args.back()));
      }
      Literal ref = run(interp(), row ? layer_norm_module("f64") : gelu_chain_module("f64"), args64).at(0);
      Literal excess = [&] {
        ExcessPrecision on(true);
        return run(native(), m, args).at(0);
      }();
      Literal per_op = [&] {
        ExcessPrecision off(false);
        return run(native(), m, args).at(0);
      }();
      Literal oracle = run(interp(), m, args).at(0);
      double max_excess = 0, max_per_op = 0, sum_excess = 0, sum_per_op = 0, sum_oracle = 0;
      for (int64_t i = 0; i < ref.size(); ++i) {
        double e = ulps(excess.get_f64(i), ref.get_f64(i), d), p = ulps(per_op.get_f64(i), ref.get_f64(i), d);
        max_excess = std::max(max_excess, e);
        max_per_op = std::max(max_per_op, p);
        sum_excess += e;
        sum_per_op += p;
        sum_oracle += ulps(oracle.get_f64(i), ref.get_f64(i), d);
      }
      double n = static_cast<double>(ref.size());
      INFO("error in ULP: excess precision max " << max_excess << " mean " << sum_excess / n << "; per-op max "
                                                 << max_per_op << " mean " << sum_per_op / n << "; interpreter mean "
                                                 << sum_oracle / n);
      CHECK(max_excess <= kExcessPrecisionUlp);
      CHECK(max_per_op > 1.0);
      CHECK(sum_excess < 0.75 * sum_per_op);
      CHECK(sum_excess < 0.75 * sum_oracle);
    }
  }
}

TEST_CASE("cpu: excess precision lets a multiply and the add it feeds fuse into one FMA (as XLA:CPU and JAX do)",
          "[cpu]") {
  // w - 0.1 g at w = 1, g = 10: rounded twice it is 0 (0.1f * 10 rounds to 1); as one fused multiply-add it is
  // 1 - 1.0000000149 = -1.49e-8, which is what jax.jit gives on CPU. Per-op rounding keeps the two roundings.
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(R"(HloModule m

%fused (w: f32[2], g: f32[2]) -> f32[2] {
  %w = f32[2] parameter(0)
  %g = f32[2] parameter(1)
  %c = f32[] constant(0.1)
  %cb = f32[2] broadcast(%c), broadcast_dimensions={}
  %p = f32[2] multiply(%cb, %g)
  ROOT %d = f32[2] subtract(%w, %p)
}

ENTRY %main (w: f32[2], g: f32[2]) -> (f32[2]) {
  %w = f32[2] parameter(0)
  %g = f32[2] parameter(1)
  %f = f32[2] fusion(%w, %g), kind=kLoop, calls=%fused
  ROOT %t = (f32[2]) tuple(%f)
}
)");
  Literal w = Literal::make(DType::float32, {2}), g = Literal::make(DType::float32, {2});
  w.set_f64(0, 1.0), w.set_f64(1, 2.0), g.set_f64(0, 10.0), g.set_f64(1, 20.0);
  {
    ExcessPrecision on(true);
    Literal r = run(native(), m, {w, g}).at(0);
    CHECK(r.get_f64(0) == std::fma(-0.1f, 10.0f, 1.0f));
    CHECK(r.get_f64(0) != 0.0);
    CHECK(r.get_f64(1) == std::fma(-0.1f, 20.0f, 2.0f));
  }
  {
    ExcessPrecision off(false);
    Literal r = run(native(), m, {w, g}).at(0);
    CHECK(r.get_f64(0) == 0.0);
    CHECK(r.get_f64(1) == 0.0);
  }
}

TEST_CASE("cpu: with excess precision off, f16/bf16 fusions round after every op, bit-exact with the interpreter",
          "[cpu]") {
  // Only exactly rounded ops (+, -, *, max, negate, select, converts): each op's f32 result rounded to the type is
  // then the interpreter's correctly rounded result, bit for bit. With excess precision on, the same fusion is
  // instead, bit for bit, the whole chain computed in f32 (the module with f32 for the type, compiled the same way:
  // the same multiplies fuse into adds) rounded once to the type, converts to it included.
  for (DType d : {DType::bfloat16, DType::float16}) {
    auto module_text = [](const std::string& s) {
      return fmt::format(R"(HloModule m

%fused (a: {0}[96,200], b: {0}[96,200], c: {0}[200]) -> {0}[96,200] {{
  %a = {0}[96,200] parameter(0)
  %b = {0}[96,200] parameter(1)
  %c = {0}[200] parameter(2)
  %cb = {0}[96,200] broadcast(%c), broadcast_dimensions={{1}}
  %ab = {0}[96,200] multiply(%a, %b)
  %x = {0}[96,200] add(%ab, %cb)
  %y = {0}[96,200] multiply(%x, %x)
  %z = {0}[96,200] subtract(%y, %a)
  %w = {0}[96,200] multiply(%z, %cb)
  %n = {0}[96,200] negate(%w)
  %mx = {0}[96,200] maximum(%n, %ab)
  %p = pred[96,200] compare(%x, %cb), direction=GT
  %s = {0}[96,200] select(%p, %mx, %z)
  %f = f32[96,200] convert(%s)
  %f2 = f32[96,200] multiply(%f, %f)
  %h = {0}[96,200] convert(%f2)
  ROOT %r = {0}[96,200] add(%h, %x)
}}

ENTRY %main (a: {0}[96,200], b: {0}[96,200], c: {0}[200]) -> ({0}[96,200]) {{
  %a = {0}[96,200] parameter(0)
  %b = {0}[96,200] parameter(1)
  %c = {0}[200] parameter(2)
  %f = {0}[96,200] fusion(%a, %b, %c), kind=kLoop, calls=%fused
  ROOT %t = ({0}[96,200]) tuple(%f)
}}
)",
                         s);
    };
    std::string text = module_text(hlo_name(d));
    INFO(text);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    std::vector<Literal> args, args32;
    for (auto* p : m->entry->parameters) {
      args.push_back(random_literal(p->shape, -2, 2));
      args32.push_back(Literal::make(DType::float32, p->shape.dims));
      for (int64_t i = 0; i < args.back().size(); ++i) args32.back().set_f64(i, args.back().get_f64(i));
    }
    Literal want = run(interp(), m, args).at(0);
    Literal f32 = [&] {
      ExcessPrecision on(true);
      return run(native(), module_text("f32"), args32).at(0);
    }();
    Literal rounded_once = Literal::make(d, f32.dims);
    for (int64_t i = 0; i < f32.size(); ++i) rounded_once.set_f64(i, f32.get_f64(i));
    Literal per_op = [&] {
      ExcessPrecision off(false);
      return run(native(), m, args).at(0);
    }();
    Literal excess = [&] {
      ExcessPrecision on(true);
      return run(native(), m, args).at(0);
    }();
    REQUIRE(per_op.nbytes() == want.nbytes());
    CHECK(std::memcmp(per_op.data(), want.data(), want.nbytes()) == 0);
    CHECK(std::memcmp(excess.data(), rounded_once.data(), want.nbytes()) == 0);
    int64_t differ = 0;  // and the two roundings do differ on these inputs
    for (int64_t i = 0; i < want.size(); ++i) differ += excess.get_f64(i) != want.get_f64(i);
    CHECK(differ > 0);
  }
}
