// Helpers for the tests that run HLO modules on the CPU backend and on the interpreter (the oracle) directly, below
// jit: one test device, the two backends, running a module on Literals, one-op modules, and the check of a module
// on both backends with random inputs against the tolerance table (tolerances.h).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compile_log.h"
#include "core/literal.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "runtime/runtime.h"
#include "test_util.h"

namespace jitx::testing {

inline runtime::Device& test_device() {
  static runtime::Device* d = new runtime::Device(0, "backend-test");  // lives until exit
  return *d;
}
inline runtime::Backend& native() {
  static auto b = runtime::make_cpu_backend();
  return *b;
}
inline runtime::Backend& interp() {
  static auto b = runtime::make_interpreter_backend();
  return *b;
}

/// Compiles m on b and runs it on args (one Literal per entry parameter), returning the result leaves.
inline std::vector<detail::Literal> run(runtime::Backend& b, std::shared_ptr<const hlo::Module> m,
                                        const std::vector<detail::Literal>& args) {
  auto exe = b.compile(m);
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (auto& a : args) bufs.push_back(runtime::Buffer::from_literal(a, &test_device()));
  auto outs = exe->execute(bufs, &test_device());
  std::vector<detail::Literal> r;
  for (auto& o : outs) r.push_back(o->literal());
  return r;
}
/// The same for HLO text (parsed and verified first).
inline std::vector<detail::Literal> run(runtime::Backend& b, const std::string& text,
                                        const std::vector<detail::Literal>& args) {
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  return run(b, m, args);
}

/// "f32[2,3]"-style shape text.
inline std::string shape_text(DType d, const std::vector<int64_t>& dims) {
  std::string s = std::string(hlo::hlo_dtype_name(d)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

/// d's name in HLO text ("f32", "bf16", ...).
inline std::string hlo_name(DType d) { return std::string(hlo::hlo_dtype_name(d)); }

/// Random values in [lo, hi) from the shared generator: integers floored (unsigned ones of the magnitude), bools
/// a fair coin.
inline detail::Literal random_literal(const hlo::Shape& s, double lo, double hi) {
  detail::Literal l = detail::Literal::make(s.dtype, s.dims);
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
inline void compare(const detail::Literal& got, const detail::Literal& want, const std::string& what,
                    double atol_scale = 1, std::optional<DType> tol_of = {}) {
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
inline void check_module(const std::string& text, double lo = -3, double hi = 3, double atol_scale = 1,
                         std::optional<DType> tol_of = {}) {
  INFO(text);
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  std::vector<detail::Literal> args;
  for (auto* p : m->entry->parameters) args.push_back(random_literal(p->shape, lo, hi));
  auto want = run(interp(), m, args);
  auto got = run(native(), m, args);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) compare(got[i], want[i], text, atol_scale, tol_of);
}

/// A module of one instruction `<out> op(params...)<attrs>` over parameters of the given shapes.
inline std::string one_op(const std::string& out, const std::string& op, const std::vector<std::string>& params,
                          const std::string& attrs = "") {
  std::string sig, body, ops;
  for (size_t i = 0; i < params.size(); ++i) {
    sig += fmt::format("{}p{}: {}", i ? ", " : "", i, params[i]);
    body += fmt::format("  %p{} = {} parameter({})\n", i, params[i], i);
    ops += fmt::format("{}%p{}", i ? ", " : "", i);
  }
  return fmt::format(
      "HloModule m\n\nENTRY %main ({}) -> ({}) {{\n{}  %r = {} {}({}){}\n  ROOT %t = ({}) tuple(%r)\n}}\n", sig, out,
      body, out, op, ops, attrs, out);
}

/// The CPU backend's compile log for text (what runs natively, what falls back to the interpreter).
inline std::string cpu_compile_log(const std::string& text) {
  CompileLogCapture log;
  native().compile(hlo::parse_hlo(text));
  return log.text;
}

/// Checks text against the interpreter and that the CPU backend runs all of it natively.
inline void check_native(const std::string& text, double lo = -3, double hi = 3, double atol_scale = 1,
                         std::optional<DType> tol_of = {}) {
  check_module(text, lo, hi, atol_scale, tol_of);
  std::string log = cpu_compile_log(text);
  INFO(log);
  CHECK_THAT(log, Catch::Matchers::Contains(" 0 interpreter fallbacks"));
}

inline const std::vector<DType> kFloats{DType::float32, DType::float64, DType::bfloat16, DType::float16};
inline const std::vector<DType> kInts{DType::int8,  DType::int16,  DType::int32,  DType::int64,
                                      DType::uint8, DType::uint16, DType::uint32, DType::uint64};

/// A softmax over the last dimension as the fusion pass makes it (one kRow fusion), rows x n of dtype d.
inline std::string softmax_module(DType d, int64_t rows, int64_t n) {
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

// log_softmax over the rows of an f32[rows, n] row fusion: x - m - log(sum(exp(x - m))).
inline std::string log_softmax_module(int64_t rows, int64_t n) {
  return fmt::format(R"(HloModule m

%fused (a: f32[{0},{1}]) -> f32[{0},{1}] {{
  %a = f32[{0},{1}] parameter(0)
  %ninf = f32[] constant(-inf)
  %z = f32[] constant(0)
  %m = f32[{0}] reduce(%a, %ninf), dimensions={{1}}, reducer=max
  %mb = f32[{0},{1}] broadcast(%m), broadcast_dimensions={{0}}
  %c = f32[{0},{1}] subtract(%a, %mb)
  %e = f32[{0},{1}] exponential(%c)
  %s = f32[{0}] reduce(%e, %z), dimensions={{1}}, reducer=add
  %l = f32[{0}] log(%s)
  %lb = f32[{0},{1}] broadcast(%l), broadcast_dimensions={{0}}
  ROOT %y = f32[{0},{1}] subtract(%c, %lb)
}}

ENTRY %main (a: f32[{0},{1}]) -> (f32[{0},{1}]) {{
  %a = f32[{0},{1}] parameter(0)
  %f = f32[{0},{1}] fusion(%a), kind=kRow, calls=%fused
  ROOT %t = (f32[{0},{1}]) tuple(%f)
}}
)",
                     rows, n);
}

}  // namespace jitx::testing
