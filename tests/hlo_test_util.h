// Helpers for the HLO IR and pass tests: parse-and-verify, CHECK-style line matching, one pass or a list of passes
// run with the interpreter as the oracle, must-not-change checks, a small module.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/pipeline.h"
#include "tolerances.h"

namespace jitx::hlo::testing {
using detail::Literal;

inline std::unique_ptr<Module> parse(std::string_view text) {
  auto m = parse_hlo(text);
  verify(*m);
  return m;
}


inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// CHECK-style matching: each line of `pattern` must occur in `text`, in order (not necessarily adjacent).
inline void check_lines(const std::string& text, const std::string& pattern) {
  INFO(text);
  std::istringstream in(pattern);
  std::string line;
  size_t at = 0;
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(' '));
    if (line.empty()) continue;
    size_t p = text.find(line, at);
    INFO("CHECK: " << line);
    REQUIRE(p != std::string::npos);
    at = p + line.size();
  }
}

/// Random inputs: floats uniform in [-range, range), signed integers in [-50, 50], unsigned in [0, 100], bools.
inline Literal random_literal(const hlo::Shape& s, std::mt19937& rng, double range = 2.0) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::uniform_real_distribution<double> f(-range, range);
  std::uniform_int_distribution<int64_t> i(-50, 50), u(0, 100), b(0, 1);
  for (int64_t k = 0; k < l.size(); ++k) {
    if (is_floating(s.dtype)) l.set_f64(k, f(rng));
    else if (is_bool(s.dtype)) l.set_i64(k, b(rng));
    else if (is_unsigned_integer(s.dtype)) l.set_u64(k, static_cast<uint64_t>(u(rng)));
    else l.set_i64(k, i(rng));
  }
  return l;
}

inline void check_same(const evaluator::Value& a, const evaluator::Value& b) {
  REQUIRE(a.is_tuple == b.is_tuple);
  if (a.is_tuple) {
    REQUIRE(a.tuple.size() == b.tuple.size());
    for (size_t k = 0; k < a.tuple.size(); ++k) check_same(a.tuple[k], b.tuple[k]);
    return;
  }
  REQUIRE(a.array.dtype == b.array.dtype);
  REQUIRE(a.array.dims == b.array.dims);
  for (int64_t k = 0; k < a.array.size(); ++k) {
    if (!is_floating(a.array.dtype)) {
      // Integers and bools exactly (a double cannot hold every 64-bit value).
      INFO("element " << k);
      REQUIRE(a.array.get_u64(k) == b.array.get_u64(k));
      continue;
    }
    double p = a.array.get_f64(k), q = b.array.get_f64(k);
    if (std::isnan(p) && std::isnan(q)) continue;
    INFO("element " << k << ": " << p << " vs " << q);
    REQUIRE(std::fabs(p - q) <= jitx::testing::kRewriteRtol * std::max({1.0, std::fabs(p), std::fabs(q)}));
  }
}

/// The oracle's inputs: `trials` sets of random values drawn from `seed`, floats in [-range, range).
struct OracleInputs {
  uint32_t seed = 20240611u;
  int trials = 2;
  double range = 2.0;
};

/// The interpreter gives the same numbers before and after, on fixed-seed random inputs.
inline void check_same_values(const Module& before, const Module& after, OracleInputs in = {}) {
  std::mt19937 rng(in.seed);
  for (int trial = 0; trial < in.trials; ++trial) {
    std::vector<Literal> args;
    for (auto* p : before.entry->parameters) args.push_back(random_literal(p->shape, rng, in.range));
    check_same(evaluator::evaluate(before, args), evaluator::evaluate(after, args));
  }
}

struct Result {
  std::unique_ptr<Module> module;
  bool changed = false;
  std::string text;
};

/// Parses, runs one pass, verifies, checks the numbers and that the result reads back as itself.
template <class P>
Result run_pass(std::string_view text, P pass = P{}) {
  auto before = parse(text);
  Result r;
  r.module = before->clone();
  r.changed = pass.run(*r.module);
  r.text = print_hlo(*r.module);
  INFO(r.text);
  verify(*r.module);
  check_same_values(*before, *r.module);
  REQUIRE(print_hlo(*parse_hlo(r.text)) == r.text);
  return r;
}

/// The inputs run() checks a list of passes on (the simplifier, CSE, DCE and constant folding tests).
inline constexpr OracleInputs kPassListInputs{.seed = 1234u, .trials = 3, .range = 4.0};

/// Parses text, runs the passes in order (verifying after each), checks the numbers against the input module.
inline Result run(std::string_view text, std::vector<std::unique_ptr<HloPass>> passes) {
  auto before = parse(text);
  Result r;
  r.module = before->clone();
  PipelineOptions opts;
  opts.verify = true;
  r.changed = run_passes(*r.module, passes, opts);
  r.text = print_hlo(*r.module);
  INFO(r.text);
  check_same_values(*before, *r.module, kPassListInputs);
  // Whatever a pass writes must read back as itself.
  REQUIRE(print_hlo(*parse_hlo(r.text)) == r.text);
  return r;
}

/// The passes P..., for run().
template <class... P>
std::vector<std::unique_ptr<HloPass>> passes() {
  std::vector<std::unique_ptr<HloPass>> v;
  (v.push_back(std::make_unique<P>()), ...);
  return v;
}

/// A pass that must leave the module exactly as it was.
template <class P>
inline void check_unchanged(std::string_view text) {
  auto m = parse(text);
  std::string before = print_hlo(*m);
  P pass;
  INFO(before);
  CHECK_FALSE(pass.run(*m));
  verify(*m);
  CHECK(print_hlo(*m) == before);
}

/// A small module with one dead instruction, for the IR and pipeline tests.
inline constexpr const char* kSmall = R"(HloModule small

ENTRY %main (p: f32[4], q: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  %a = f32[4] add(%p, %q)
  %dead = f32[4] multiply(%a, %a)
  %b = f32[4] negate(%a)
  ROOT %c = f32[4] subtract(%b, %q)
}
)";

/// The fusion instructions of the entry computation.
inline std::vector<const Instruction*> fusions(const Module& m) {
  std::vector<const Instruction*> out;
  for (auto& i : m.entry->instructions)
    if (i->opcode == Opcode::kFusion) out.push_back(i.get());
  return out;
}
inline size_t fused_count(const Instruction& f, Opcode op) {
  size_t n = 0;
  for (auto& i : f.called.at(0)->instructions) n += i->opcode == op;
  return n;
}

}  // namespace jitx::hlo::testing
