// The HLO text printer and parser: every opcode and attribute kind round-trips, constants of every dtype exactly,
// modules with called computations, tuples and layouts; malformed text throws CompileError naming the line.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;
using Catch::Matchers::Contains;
using detail::Literal;

TEST_CASE("parser: round trip print -> parse -> print on every opcode", "[hlo]") {
  Module m("every_op");
  auto* c = m.add_computation("main");
  m.entry = c;
  hlo::Shape s(DType::float32, {2, 3});
  auto* p0 = c->add_parameter(0, s);
  auto* p1 = c->add_parameter(1, s);
  auto* p2 = c->add_parameter(2, s);
  auto* callee = m.add_computation("callee");
  callee->add_parameter(0, s);
  std::vector<Instruction*> all;
  for (int k = 0; k < static_cast<int>(Opcode::kNumOpcodes); ++k) {
    Opcode op = static_cast<Opcode>(k);
    if (op == Opcode::kParameter) continue;
    if (op == Opcode::kConstant) {
      auto lit = Literal::make(DType::float32, {2, 3});
      for (int64_t e = 0; e < 6; ++e) lit.set_f64(e, 0.1 * e - 0.25);
      all.push_back(c->add_constant(lit));
      continue;
    }
    int arity = opcode_arity(op);
    std::vector<Instruction*> ops;
    std::vector<Instruction*> pool = {p0, p1, p2};
    for (int a = 0; a < (arity < 0 ? 3 : arity); ++a) ops.push_back(pool[a]);
    detail::Params attrs{{"dimensions", std::vector<int64_t>{1, 0}}, {"index", int64_t{k}}};
    if (k % 3 == 0) attrs.set("direction", std::string("GE"));
    if (k % 4 == 0) attrs.set("comment", std::string("needs \"quotes\", commas"));
    if (k % 5 == 0) attrs.set("scale", 1.0 * k);
    if (k % 6 == 0) attrs.set("flag", true);
    if (k % 7 == 0) attrs.set("type", DType::bfloat16);
    if (k % 8 == 0) attrs.set("word", std::string("f32"));  // a string spelled like a dtype
    hlo::Shape out = s;
    if (k % 2) out.layout = {0, 1};
    auto* i = c->add(op, out, ops, attrs);
    if (op == Opcode::kCall || op == Opcode::kFusion || op == Opcode::kWhile) i->called = {callee, callee};
    all.push_back(i);
  }
  std::vector<hlo::Shape> shapes;
  for (auto* i : all) shapes.push_back(i->shape);
  c->add(Opcode::kTuple, hlo::Shape::tuple(shapes), all);
  std::string text = print_hlo(m);
  auto back = parse_hlo(text);
  REQUIRE(print_hlo(*back) == text);
  REQUIRE(back->entry->instructions.size() == c->instructions.size());
  for (size_t k = 0; k < c->instructions.size(); ++k) {
    const Instruction &a = *c->instructions[k], &b = *back->entry->instructions[k];
    CHECK(a.opcode == b.opcode);
    CHECK(a.attrs == b.attrs);
    CHECK(a.shape.layout == b.shape.layout);
    CHECK(a.called.size() == b.called.size());
  }
  CHECK_THAT(text, Contains("word=\"f32\""));
  CHECK_THAT(text, Contains("direction=GE"));
  CHECK_THAT(text, Contains("scale=5.0"));
  CHECK_THAT(text, Contains(fmt::format("calls=%{}, %{}", callee->name, callee->name)));
}

TEST_CASE("parser: constants of every dtype round-trip exactly, all values printed", "[hlo]") {
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = static_cast<DType>(d);
    Module m("consts");
    auto* c = m.add_computation("main");
    m.entry = c;
    Literal big = Literal::make(dt, {5, 7});  // 35 values: more than the old 16-value cut-off
    std::mt19937 rng(7);
    for (int64_t k = 0; k < big.size(); ++k) big.set_f64(k, std::uniform_real_distribution<double>(-100, 100)(rng) / 3);
    if (is_floating(dt)) {
      big.set_f64(0, INFINITY);
      big.set_f64(1, -INFINITY);
      big.set_f64(2, NAN);
      big.set_f64(3, -0.0);
      big.set_f64(4, dt == DType::float64 ? 4.9e-324 : dt == DType::float32 ? 1.4e-45 : 1e-7);  // subnormal
      uint64_t payload = dt == DType::float64 ? 0xfff0000000000123ULL : dt == DType::float32 ? 0xff800123 : 0xff81;
      std::memcpy(static_cast<char*>(big.data()) + 5 * dtype_size(dt), &payload,
                  dtype_size(dt));  // a -NaN with payload
    }
    if (dt == DType::int64) big.set_i64(0, std::numeric_limits<int64_t>::min());
    if (dt == DType::uint64) big.set_u64(0, std::numeric_limits<uint64_t>::max());
    auto* k1 = c->add_constant(big);
    Literal scalar = Literal::make(dt, {});
    scalar.set_f64(0, 1);
    auto* k2 = c->add_constant(scalar);
    auto* k3 = c->add_constant(Literal::make(dt, {2, 0}));  // no values
    c->add(Opcode::kTuple, hlo::Shape::tuple({k1->shape, k2->shape, k3->shape}), {k1, k2, k3});
    std::string text = print_hlo(m);
    INFO(text);
    CHECK(text.find("...") == std::string::npos);
    auto back = parse(text);
    REQUIRE(print_hlo(*back) == text);
    const Literal& again = *back->entry->instructions[0]->literal;
    REQUIRE(again.nbytes() == big.nbytes());
    CHECK(std::memcmp(again.data(), big.data(), big.nbytes()) == 0);
  }
}

TEST_CASE("parser: modules with called computations, tuples and layouts", "[hlo]") {
  const char* text =
      R"(HloModule calls, entry_computation_layout={(f32[2,3]{0,1}, (s32[]{}, pred[4]{0}))->f32[2,3]{1,0}}

%body.1 (Arg_0.2: f32[2,3]) -> f32[2,3] {
  %Arg_0.2 = f32[2,3]{1,0} parameter(0)
  ROOT %negate.3 = f32[2,3]{1,0} negate(%Arg_0.2)
}

ENTRY %main.0 (Arg_0.4: f32[2,3], Arg_1.5: (s32[], pred[4])) -> f32[2,3] {
  %Arg_0.4 = f32[2,3]{0,1} parameter(0)
  %Arg_1.5 = (s32[]{}, pred[4]{0}) parameter(1)
  %get-tuple-element.6 = pred[4]{0} get-tuple-element(%Arg_1.5), index=1
  ROOT %call.7 = f32[2,3]{1,0} call(%Arg_0.4), calls=%body.1
}
)";
  auto m = parse(text);
  CHECK(print_hlo(*m) == text);
  CHECK(m->entry->root->called.at(0) == m->computations[0].get());
  CHECK(m->entry->parameters[0]->shape.layout == std::vector<int64_t>{0, 1});
  CHECK(m->entry->parameters[1]->shape.tuple_shapes.at(1).dims == std::vector<int64_t>{4});
  // Names made by passes never collide with names read from text.
  CHECK(m->unique_name("add") == "add.8");
}

TEST_CASE("parser: malformed text throws CompileError naming the line", "[hlo]") {
  auto fails_with = [](const char* text, const char* what) {
    try {
      parse_hlo(text);
      FAIL("no error for: " << text);
    } catch (const CompileError& e) {
      CHECK_THAT(std::string(e.what()), Contains(what));
    }
  };
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  ROOT %x = f32[] frobnicate()\n}\n", "unknown opcode 'frobnicate'");
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  ROOT %x = f32[] negate(%y)\n}\n",
             "line 3: operand %y is not defined");
  fails_with("HloModule m\nENTRY %e () -> f32[2] {\n  ROOT %x = f32[2] constant({1, 2, 3})\n}\n", "more than 2 values");
  fails_with("HloModule m\n%e () -> f32[] {\n  ROOT %x = f32[] constant(1)\n}\n", "no ENTRY");
  fails_with("HloModule m\nENTRY %e () -> f32[] {\n  %x = f32[] constant(1)\n}\n", "no ROOT");
}

TEST_CASE("verifier: a convolution whose result shape its operands and window do not give is refused", "[hlo]") {
  // A backend writes the result it computes into a buffer of the declared shape: a mismatch is a CompileError that
  // names it, not a write past the buffer (the CPU backend's NHWC path writes products straight into the output).
  auto conv = [](const char* lhs, const char* rhs, const char* out, const char* pad) {
    return fmt::format(R"(HloModule m
ENTRY %e (x: {0}, k: {1}) -> {2} {{
  %x = {0} parameter(0)
  %k = {1} parameter(1)
  ROOT %c = {2} convolution(%x, %k), window_strides={{1,1}}, padding={{{3}}}, lhs_dilation={{1,1}}, rhs_dilation={{1,1}}, lhs_spec={{0,3,1,2}}, rhs_spec={{3,2,0,1}}, out_spec={{0,3,1,2}}, feature_group_count=1, batch_group_count=1
}}
)",
                       lhs, rhs, out, pad);
  };
  auto fails_with = [](const std::string& text, const char* what) {
    try {
      parse(text);
      FAIL("no error for: " << text);
    } catch (const CompileError& e) {
      CHECK_THAT(std::string(e.what()), Contains(what));
    }
  };
  CHECK_NOTHROW(parse(conv("f32[2,5,4,6]", "f32[3,3,6,3]", "f32[2,5,4,3]", "1,1,1,1")));
  fails_with(conv("f32[2,5,4,6]", "f32[3,3,3,6]", "f32[2,5,4,6]", "1,1,1,1"), "lhs features 6 must be kernel input");
  fails_with(conv("f32[2,5,4,6]", "f32[3,3,6,3]", "f32[2,5,4,6]", "1,1,1,1"), "needs 3 features");
  fails_with(conv("f32[2,5,4,6]", "f32[3,3,6,3]", "f32[2,5,6,3]", "1,1,1,1"), "has 6 along spatial axis 1");
  fails_with(conv("f32[2,5,4,6]", "f32[3,3,6,3]", "f32[2,5,4,3]", "1,1,2,2"), "the window gives 6");
}

TEST_CASE("parser: hostile sizes, numbers and nesting are CompileErrors, not crashes", "[hlo][hlo_fuzz]") {
  // Each was a std::out_of_range / std::invalid_argument, a signed overflow, a huge allocation or unbounded
  // recursion before (the class fuzz/hlo_parser_fuzz.cpp looks for).
  auto entry = [](const std::string& shape, const std::string& op) {
    return "HloModule m\nENTRY %e () -> " + shape + " {\n  ROOT %x = " + shape + " " + op + "\n}\n";
  };
  auto fails_with = [](const std::string& text, const char* what) {
    INFO(text);
    try {
      parse_hlo(text);
      FAIL("no error");
    } catch (const CompileError& e) {
      CHECK_THAT(std::string(e.what()), Contains(what));
    }
  };
  fails_with(entry("f32[99999999999999999999]", "parameter(0)"), "out of range");
  fails_with(entry("f32[-]", "parameter(0)"), "expected an integer");
  fails_with(entry("f32[-3]", "parameter(0)"), "negative dimension -3");
  fails_with(entry("f32[4294967296,4294967296]", "parameter(0)"), "more elements than int64");
  fails_with(entry("f64[1152921504606846976]", "parameter(0)"), "more elements than int64");  // 2^60 * 8 bytes
  fails_with(entry("f32[1000000000000]", "constant({1, 2})"), "more values than the text left");
  fails_with(entry("f32[2]", "constant({{{{1}}}})"), "braces nested");
  std::string deep = std::string(100, '(') + "f32[]" + std::string(100, ')');
  fails_with("HloModule m\nENTRY %e (p: " + deep + ") -> f32[] {\n  %p = " + deep +
                 " parameter(0)\n  ROOT %x = f32[] constant(1)\n}\n",
             "nested more than 64 deep");
  // A parameter list or attribute integer out of range is refused the same way.
  fails_with(entry("f32[2]", "iota(), iota_dimension=99999999999999999999"), "bad number");
}
