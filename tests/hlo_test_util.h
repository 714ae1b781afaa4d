// Helpers for the HLO pass tests: parse-and-verify, CHECK-style line matching, the interpreter as the oracle.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
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

inline Literal random_literal(const hlo::Shape& s, std::mt19937& rng) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::uniform_real_distribution<double> f(-2.0, 2.0);
  std::uniform_int_distribution<int64_t> i(-50, 50);
  for (int64_t k = 0; k < l.size(); ++k) {
    if (is_floating(s.dtype)) l.set_f64(k, f(rng));
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

/// The interpreter gives the same numbers before and after, on fixed-seed random inputs.
inline void check_same_values(const Module& before, const Module& after) {
  std::mt19937 rng(20240611u);
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<Literal> args;
    for (auto* p : before.entry->parameters) args.push_back(random_literal(p->shape, rng));
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
