// Loop-invariant code motion: instructions that do not depend on the loop carry leave the while body (a jitted
// while_loop and an HLO module built by hand); the optimised program computes what a C++ loop does.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "hlo/passes/licm.h"
#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }
Array f32(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float32); }
}  // namespace

TEST_CASE("licm: loop-invariant instructions leave the while body", "[control]") {
  // while (i < 4) { x = x * exp(w) + 1 }: exp(w) is invariant (w passes through unchanged).
  auto f = [](Array w, Array x) {
    return lax::while_loop([](const std::tuple<Array, Array>& c) { return std::get<0>(c) < 4; },
                           [&](const std::tuple<Array, Array>& c) {
                             return std::make_tuple(std::get<0>(c) + 1, std::get<1>(c) * jnp::exp(w) + 1.0f);
                           },
                           std::make_tuple(0, x));
  };
  Array w = f32({0.1, 0.2, 0.3}, {3}), x = f32({1, 2, 3}, {3});
  auto module = hlo::parse_hlo(jit(f).lower(w, x).compile().as_text());  // optimised: LICM already ran
  std::string opt = hlo::print_hlo(*module);
  INFO(opt);
  size_t entry_at = opt.find("ENTRY");
  CHECK(opt.find("exponential(") > entry_at);  // exp is computed once, in the entry
  CHECK(opt.find("exponential(", entry_at) != std::string::npos);

  hlo::Module m0("licm");
  {
    auto* cond = m0.add_computation("cond");
    auto* body = m0.add_computation("body");
    auto* e = m0.add_computation("main");
    m0.entry = e;
    hlo::Shape v(DType::float32, {3});
    std::vector<hlo::Shape> shapes{v, v};
    for (auto* c : {cond, body}) {
      c->add_parameter(0, v);
      c->add_parameter(1, v);
    }
    cond->add(hlo::Opcode::kCompare, hlo::Shape(DType::bool_, {}),
              {cond->add_scalar_constant(DType::float32, 1), cond->add_scalar_constant(DType::float32, 2)},
              detail::Params{{"direction", std::string("LT")}, {"compare_type", std::string("FLOAT")}});
    // body(w, x) = (w, x * exp(w)); the module is only inspected, never run (its condition is constant).
    auto* ex = body->add(hlo::Opcode::kExp, v, {body->parameters[0]});
    auto* mul = body->add(hlo::Opcode::kMultiply, v, {body->parameters[1], ex});
    body->add(hlo::Opcode::kTuple, hlo::Shape::tuple(shapes), {body->parameters[0], mul});
    auto* pw = e->add_parameter(0, v);
    auto* px = e->add_parameter(1, v);
    auto* wl = e->add(hlo::Opcode::kWhile, hlo::Shape::tuple(shapes), {pw, px});
    wl->called = {cond, body};
    auto* g = e->add(hlo::Opcode::kGetTupleElement, v, {wl}, detail::Params{{"index", int64_t{1}}});
    e->add(hlo::Opcode::kTuple, hlo::Shape::tuple({v}), {g});
  }
  hlo::verify(m0);
  CHECK(hlo::LoopInvariantCodeMotion().run(m0));
  hlo::verify(m0);
  std::string after = hlo::print_hlo(m0);
  INFO(after);
  const hlo::Computation* body = m0.entry->root->operand(0)->operand(0)->called[1];
  bool exp_in_body = false;
  for (auto& i : body->instructions) exp_in_body = exp_in_body || i->opcode == hlo::Opcode::kExp;
  CHECK_FALSE(exp_in_body);
  CHECK(body->parameters.size() == 3);
  CHECK_FALSE(hlo::LoopInvariantCodeMotion().run(m0));  // nothing left to hoist
  // The optimised program computes what a C++ loop does.
  auto [i1, x1] = jit(f)(w, x);
  auto xv = vals(x1);
  for (int k = 0; k < 3; ++k) {
    float v = float(k + 1), e = std::exp(float(0.1 * (k + 1)));
    for (int it = 0; it < 4; ++it) v = v * e + 1.0f;
    CHECK(std::fabs(xv[k] - v) < 1e-4 * std::fabs(v));
  }
}
