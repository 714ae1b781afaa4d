// Jaxpr: the typed program tracing produces (vars, scalar literals, equations with params).
#pragma once
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "core/params.h"
#include "jitx/array.h"

namespace jitx::detail {

struct Primitive;

struct Var {
  int64_t id = -1;  // unique per process
  ShapedArray aval;
};

/// A scalar literal as an equation input (JAX prints it as `2.0:f32[]`).
struct LiteralValue {
  ShapedArray aval;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
  std::string str() const;
};

struct Atom {
  bool is_literal = false;
  Var var;
  LiteralValue lit;
  const ShapedArray& aval() const { return is_literal ? lit.aval : var.aval; }
  static Atom of(Var v) { return Atom{false, std::move(v), {}}; }
  static Atom of(LiteralValue l) { return Atom{true, {}, std::move(l)}; }
};

struct Eqn {
  const Primitive* prim = nullptr;
  std::vector<Atom> inputs;
  std::vector<Var> outputs;
  Params params;
  std::source_location loc;
};

struct Jaxpr {
  std::vector<Var> constvars;
  std::vector<Var> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;
};

/// A jaxpr with the values of its constvars (which may be tracers of an enclosing trace).
struct ClosedJaxpr {
  Jaxpr jaxpr;
  std::vector<Array> consts;
  std::vector<ShapedArray> in_avals() const;
  std::vector<ShapedArray> out_avals() const;
};

int64_t new_var_id();
Var new_var(ShapedArray aval);

/// JAX's syntax: `{ lambda a:f32[3]; b:f32[8,4]. let c:f32[8,4] = exp b in (c,) }`.
/// With source_info, each equation ends with "  # file.cpp:12", the user's line that created it.
std::string print_jaxpr(const Jaxpr& j, int indent = 0, bool source_info = false);
std::string aval_str(const ShapedArray& a);

}  // namespace jitx::detail
