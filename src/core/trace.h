// The trace stack and Array internals: concrete arrays, tracers and the traces that own them.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/jaxpr.h"
#include "core/literal.h"
#include "core/params.h"
#include "jitx/array.h"

namespace jitx::detail {

struct Primitive;

struct ArrayImpl {
  ShapedArray aval;
  virtual ~ArrayImpl() = default;
  virtual bool is_tracer() const { return false; }
  /// A ShardedArray (runtime/sharded.h): asked on every call, where a dynamic_cast (a string compare of type
  /// names across the shared library's boundary) cost a tenth of a small call's dispatch.
  virtual bool is_sharded() const { return false; }
  /// The value, read to the host (waiting for it to be computed). Only concrete arrays (runtime/concrete.h) have
  /// one; `op` names the reader in errors.
  virtual Literal host_literal(std::string_view op) const;
};

class Trace;

struct Tracer : ArrayImpl {
  std::shared_ptr<Trace> trace;
  bool is_tracer() const override { return true; }
  /// The value this tracer stands for when a transformation knows it (a JVP tracer's primal), else null.
  virtual const Array* primal_value() const { return nullptr; }
};

class Trace : public std::enable_shared_from_this<Trace> {
 public:
  virtual ~Trace() = default;
  int level = 0;
  std::string fn_name;  // the function being traced, for error messages
  bool alive = true;
  /// An ambient trace receives operations whose inputs hold no tracer of a deeper trace (constants,
  /// iota): jit's trace does. JVP traces and linearize's tangent trace only see their own tracers.
  bool ambient = false;
  virtual std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> inputs,
                                               const Params& params) = 0;
};

/// Records equations into a Jaxpr (JAX's DynamicJaxprTrace).
class JaxprTrace : public Trace {
 public:
  JaxprTrace() { ambient = true; }
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> inputs,
                                       const Params& params) override;
  /// A fresh input variable of this trace.
  Array new_arg(const ShapedArray& aval);
  /// The atom standing for a value inside this trace (lifting constants and outer tracers).
  Atom to_atom(const Array& a);
  /// Builds the closed jaxpr whose invars are `args` and outvars `outs`.
  ClosedJaxpr finish(const std::vector<Array>& args, const std::vector<Array>& outs);

 private:
  std::vector<Eqn> eqns_;
  std::vector<Var> constvars_;
  std::vector<Array> consts_;
  std::vector<const ArrayImpl*> const_keys_;
};

struct JaxprTracer : Tracer {
  Var var;
};

/// The innermost trace that should process a primitive with these inputs (nullptr: evaluate eagerly).
Trace* find_top_trace(std::span<const Array> inputs, std::string_view op = "bind");
/// Throws TracerError (an escaped tracer, named with its trace) when t's trace has ended.
void check_alive(const Tracer& t, std::string_view op);
/// The innermost trace of any kind on this thread's stack, if any.
std::shared_ptr<Trace> current_trace();

/// Pushes a trace for the lifetime of the guard; marks it dead when popped.
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<Trace> t);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  std::shared_ptr<Trace> trace_;
};

/// Traces fn over fresh tracers of in_avals into a closed jaxpr.
ClosedJaxpr trace_to_jaxpr(const std::string& fn_name, const std::vector<ShapedArray>& in_avals,
                           const std::function<std::vector<Array>(const std::vector<Array>&)>& fn);

/// The concrete array a value stands for: itself, or the concrete primal under JVP tracers (so C++ control
/// flow on values works under grad, as Python control flow does under jax.grad); null if none.
const Array* concrete_primal(const Array& a);

}  // namespace jitx::detail
