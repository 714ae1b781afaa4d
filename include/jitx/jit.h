// jitx::jit, make_jaxpr and the AOT surface (lower -> Lowered -> compile -> Compiled).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/callable.h"
#include "jitx/config.h"
#include "jitx/pytree.h"
#include "jitx/sharding.h"

// Parameters "A0&& a0, A1&& a1, ..." and arguments "std::forward<A0>(a0), ..." for Jitted::operator().
#define JITX_JIT_P1_(i) A##i&& a##i
#define JITX_JIT_F1_(i) std::forward<A##i>(a##i)
#define JITX_JIT_MAP_(M, ...) JITX_JIT_MAP_N_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1)(M, __VA_ARGS__)
#define JITX_JIT_MAP_N_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) JITX_JIT_MAP##N##_
#define JITX_JIT_MAP1_(M, a) M(a)
#define JITX_JIT_MAP2_(M, a, ...) M(a), JITX_JIT_MAP1_(M, __VA_ARGS__)
#define JITX_JIT_MAP3_(M, a, ...) M(a), JITX_JIT_MAP2_(M, __VA_ARGS__)
#define JITX_JIT_MAP4_(M, a, ...) M(a), JITX_JIT_MAP3_(M, __VA_ARGS__)
#define JITX_JIT_MAP5_(M, a, ...) M(a), JITX_JIT_MAP4_(M, __VA_ARGS__)
#define JITX_JIT_MAP6_(M, a, ...) M(a), JITX_JIT_MAP5_(M, __VA_ARGS__)
#define JITX_JIT_MAP7_(M, a, ...) M(a), JITX_JIT_MAP6_(M, __VA_ARGS__)
#define JITX_JIT_MAP8_(M, a, ...) M(a), JITX_JIT_MAP7_(M, __VA_ARGS__)
#define JITX_JIT_PARAMS_(...) JITX_JIT_MAP_(JITX_JIT_P1_, __VA_ARGS__)
#define JITX_JIT_FWD_(...) JITX_JIT_MAP_(JITX_JIT_F1_, __VA_ARGS__)

namespace jitx {

/// jit's options. Designated initializers must follow this declaration order (static_argnums, donate_argnums,
/// name: C++ rule); the setters take any order: JitOptions{}.set_donate_argnums({0}).set_static_argnums({1}).
struct JitOptions {
  std::vector<int> static_argnums;  // these arguments' values are baked in and keyed by value
  std::vector<int> donate_argnums;  // these arguments' buffers may be reused for outputs; unusable after the call
  std::string name;                 // for logs and module names (default: "fn")
  /// Per top-level argument not in static_argnums, in order (as JAX's): the sharding its leaves must have
  /// (std::nullopt: their own). An unsharded argument is placed so; an argument already sharded otherwise is an
  /// error, and so is a list of another length, as in JAX.
  std::vector<std::optional<Sharding>> in_shardings;
  /// Per output leaf (in flattening order): the sharding of the result (std::nullopt: the one chosen).
  std::vector<std::optional<Sharding>> out_shardings;

  JitOptions& set_static_argnums(std::vector<int> v) { return static_argnums = std::move(v), *this; }
  JitOptions& set_in_shardings(std::vector<std::optional<Sharding>> v) { return in_shardings = std::move(v), *this; }
  JitOptions& set_out_shardings(std::vector<std::optional<Sharding>> v) {
    return out_shardings = std::move(v), *this;
  }
  JitOptions& set_donate_argnums(std::vector<int> v) { return donate_argnums = std::move(v), *this; }
  JitOptions& set_name(std::string v) { return name = std::move(v), *this; }
};

/// Sizes of a compiled executable's memory (JAX's CompiledMemoryStats).
struct CompiledMemoryStats {
  int64_t argument_size_in_bytes = 0;
  int64_t output_size_in_bytes = 0;
  int64_t alias_size_in_bytes = 0;  // outputs written over donated arguments
  int64_t temp_size_in_bytes = 0;   // the temp arena after buffer assignment
  int64_t generated_code_size_in_bytes = 0;
  int64_t temp_unshared_size_in_bytes = 0;  // sum of all temporaries if none shared memory
  std::string str() const;
};

/// One phase of a compile and its wall time: "trace", "lower", "hlo.<pass>" per HLO pass in pipeline order,
/// then the backend's phases (cpu: "plan", "emit", "llvm-opt", "codegen"). Compiled::compile_phases() and the
/// JITX_LOG_COMPILES line list them.
struct CompilePhase {
  std::string name;
  double ms = 0;
};

namespace detail {
struct CompiledEntry;
struct ClosedJaxpr;

/// Flattened call arguments: traced leaves plus the static part of the signature.
struct CallSignature {
  Flattener flat;          // traced leaves, their paths, structure, static values
  std::vector<Array> static_leaves;  // concrete arrays of static_argnums arguments (keyed by contents)
  std::vector<std::string> static_leaf_paths;
};

/// The non-template half of a jitted function: cache, tracing, lowering, compiling, executing.
class JitCore {
 public:
  JitCore(std::string name, JitOptions options);
  ~JitCore();
  using TraceFn =
      std::function<std::vector<Array>(const std::vector<Array>& traced_leaves, std::shared_ptr<void>& skeleton)>;

  /// The compiled entry for this signature (compiling at most once per signature, also across threads).
  std::shared_ptr<CompiledEntry> get(const CallSignature& sig, const TraceFn& trace, const Loc& loc);
  /// Traces and lowers without touching the cache (AOT).
  std::shared_ptr<CompiledEntry> lower(const CallSignature& sig, const TraceFn& trace, const Loc& loc);
  static void compile(CompiledEntry& e);
  /// Enqueues the executable on the leaves' device and returns the (pending) outputs.
  std::vector<Array> execute(const CompiledEntry& e, const CallSignature& sig, const Loc& loc);
  static const std::shared_ptr<void>& skeleton(const CompiledEntry& e);
  static void check_signature(const CompiledEntry& e, const CallSignature& sig, const Loc& loc);
  /// TypeError/ShapeError unless the leaves fit options().in_shardings.
  void check_in_shardings(const CallSignature& sig, const std::string& name) const;
  /// The results device_put to options().out_shardings where they are sharded otherwise.
  std::vector<Array> reshard_outputs(std::vector<Array> result, const Loc& loc) const;

  const std::string& name() const { return name_; }
  const JitOptions& options() const { return options_; }
  bool is_static(size_t i) const;
  /// TypeError naming the call site when a static or donated position is not below nargs.
  void check_arity(size_t nargs, const Loc& loc) const;
  bool is_donated(size_t i) const;
  /// Number of compiles so far (for tests and benchmarks).
  size_t num_compiles() const;
  size_t cache_size() const;
  /// Entries dropped from the cache to stay under config().jit_cache_size (least recently used first).
  size_t num_evictions() const;

 private:
  void evict_for_one_more();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_;
  JitOptions options_;
};

std::string jaxpr_text(const ClosedJaxpr& j);
std::string entry_jaxpr_text(const CompiledEntry& e, bool source_info = false);
std::string entry_stablehlo_text(const CompiledEntry& e);
std::string entry_hlo_text(const CompiledEntry& e);
std::map<std::string, double> entry_cost_analysis(const CompiledEntry& e);
std::string entry_cost_analysis_text(const CompiledEntry& e);
CompiledMemoryStats entry_memory_analysis(const CompiledEntry& e, const std::vector<int>& donate_argnums);
std::map<std::string, int64_t> entry_executable_stats(const CompiledEntry& e);
std::vector<CompilePhase> entry_compile_phases(const CompiledEntry& e);
std::string entry_serialize(const CompiledEntry& e, const std::vector<int>& donate_argnums);
/// True while some trace is active on this thread (a jitted call then inlines into it).
bool tracing_active();
}  // namespace detail

/// A traced, typed program (JAX's ClosedJaxpr); prints in JAX's syntax.
class ClosedJaxpr {
 public:
  explicit ClosedJaxpr(std::shared_ptr<detail::CompiledEntry> e) : e_(std::move(e)) {}
  std::string str() const { return detail::entry_jaxpr_text(*e_); }
  /// The jaxpr with each equation's user source line ("  # file.cpp:12").
  std::string str_with_source_info() const { return detail::entry_jaxpr_text(*e_, true); }
  friend std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j) { return os << j.str(); }

 private:
  std::shared_ptr<detail::CompiledEntry> e_;
};

template <class F>
class Jitted;

/// An executable compiled ahead of time for one signature; calling it with another signature throws.
template <class F>
class Compiled {
 public:
  Compiled(std::shared_ptr<detail::JitCore> core, std::shared_ptr<detail::CompiledEntry> e, F f)
      : core_(std::move(core)), e_(std::move(e)), f_(std::move(f)) {}
  /// The optimised HLO module as text.
  std::string as_text() const { return detail::entry_hlo_text(*e_); }
  /// XLA's estimate of flops, transcendentals and bytes accessed ("bytes accessed0{}" per operand...).
  std::map<std::string, double> cost_analysis() const { return detail::entry_cost_analysis(*e_); }
  /// The same, with one line per kernel, as text.
  std::string cost_analysis_text() const { return detail::entry_cost_analysis_text(*e_); }
  CompiledMemoryStats memory_analysis() const {
    return detail::entry_memory_analysis(*e_, core_->options().donate_argnums);
  }
  /// What the backend made of the program, e.g. on cpu {"native_kernels": 4, "while_loops": 1,
  /// "interpreter_fallbacks": 0, ...}; empty for backends that report nothing (the interpreter).
  std::map<std::string, int64_t> executable_stats() const { return detail::entry_executable_stats(*e_); }
  /// Where this compile's time went, phase by phase (see CompilePhase).
  std::vector<CompilePhase> compile_phases() const { return detail::entry_compile_phases(*e_); }
  /// The executable as bytes (its object code, optimised module and signature; README, "Serialised
  /// executables"): deserialize_executable() reads them back in another process on a machine with the same
  /// jitx, LLVM and CPU. Throws RuntimeError on a backend that cannot serialise (the interpreter).
  std::string serialize() const { return detail::entry_serialize(*e_, core_->options().donate_argnums); }
  /// Runs the executable; TypeError (naming the caller's line) when the arguments' number, dtypes or shapes differ
  /// from the compiled signature. Up to 8 arguments the caller's location is captured, as for Jitted.
  auto operator()(Loc loc = Loc::current()) const { return call(loc); }
#define JITX_COMPILED_CALL_(...)                                                              \
  auto operator()(JITX_JIT_PARAMS_(__VA_ARGS__), Loc loc = Loc::current()) const {            \
    return call(loc, JITX_JIT_FWD_(__VA_ARGS__));                                            \
  }
  template <class A0>
  JITX_COMPILED_CALL_(0)
  template <class A0, class A1>
  JITX_COMPILED_CALL_(0, 1)
  template <class A0, class A1, class A2>
  JITX_COMPILED_CALL_(0, 1, 2)
  template <class A0, class A1, class A2, class A3>
  JITX_COMPILED_CALL_(0, 1, 2, 3)
  template <class A0, class A1, class A2, class A3, class A4>
  JITX_COMPILED_CALL_(0, 1, 2, 3, 4)
  template <class A0, class A1, class A2, class A3, class A4, class A5>
  JITX_COMPILED_CALL_(0, 1, 2, 3, 4, 5)
  template <class A0, class A1, class A2, class A3, class A4, class A5, class A6>
  JITX_COMPILED_CALL_(0, 1, 2, 3, 4, 5, 6)
  template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7>
  JITX_COMPILED_CALL_(0, 1, 2, 3, 4, 5, 6, 7)
#undef JITX_COMPILED_CALL_
  template <class... Args>
    requires(sizeof...(Args) > 8)
  auto operator()(Args&&... args) const {
    return call(Loc::current(), std::forward<Args>(args)...);
  }
  /// As operator(), with the caller's source location for errors.
  template <class... Args>
  auto call(Loc loc, Args&&... args) const;

 private:
  std::shared_ptr<detail::JitCore> core_;
  std::shared_ptr<detail::CompiledEntry> e_;
  F f_;
};

/// A function traced and lowered for one signature.
template <class F>
class Lowered {
 public:
  Lowered(std::shared_ptr<detail::JitCore> core, std::shared_ptr<detail::CompiledEntry> e, F f)
      : core_(std::move(core)), e_(std::move(e)), f_(std::move(f)) {}
  /// StableHLO MLIR text, as jax.jit(f).lower(...).as_text() prints it.
  std::string as_text() const { return detail::entry_stablehlo_text(*e_); }
  ClosedJaxpr jaxpr() const { return ClosedJaxpr(e_); }
  Compiled<F> compile() const {
    detail::JitCore::compile(*e_);
    return Compiled<F>(core_, e_, f_);
  }

 private:
  std::shared_ptr<detail::JitCore> core_;
  std::shared_ptr<detail::CompiledEntry> e_;
  F f_;
};

template <class F>
class Jitted {
 public:
  Jitted(F f, JitOptions opts) : f_(std::move(f)), core_(std::make_shared<detail::JitCore>(opts.name, opts)) {}

  /// Calls the function: compiled once per signature, then dispatched asynchronously. Up to 8 arguments the
  /// caller's source location is captured (a defaulted trailing parameter) for logs, errors and cache-miss
  /// explanations; with more, the location is this header's.
  auto operator()(Loc loc = Loc::current()) const { return call_impl(loc); }
#define JITX_JIT_CALL_(...)                                                                    \
  auto operator()(JITX_JIT_PARAMS_(__VA_ARGS__), Loc loc = Loc::current()) const {             \
    return call_impl(loc, JITX_JIT_FWD_(__VA_ARGS__));                                        \
  }
  template <class A0>
  JITX_JIT_CALL_(0)
  template <class A0, class A1>
  JITX_JIT_CALL_(0, 1)
  template <class A0, class A1, class A2>
  JITX_JIT_CALL_(0, 1, 2)
  template <class A0, class A1, class A2, class A3>
  JITX_JIT_CALL_(0, 1, 2, 3)
  template <class A0, class A1, class A2, class A3, class A4>
  JITX_JIT_CALL_(0, 1, 2, 3, 4)
  template <class A0, class A1, class A2, class A3, class A4, class A5>
  JITX_JIT_CALL_(0, 1, 2, 3, 4, 5)
  template <class A0, class A1, class A2, class A3, class A4, class A5, class A6>
  JITX_JIT_CALL_(0, 1, 2, 3, 4, 5, 6)
  template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7>
  JITX_JIT_CALL_(0, 1, 2, 3, 4, 5, 6, 7)
#undef JITX_JIT_CALL_
  template <class... Args>
    requires(sizeof...(Args) > 8)
  auto operator()(Args&&... args) const {
    return call_impl(Loc::current(), std::forward<Args>(args)...);
  }
  /// As operator(), with the caller's source location for logs and errors.
  template <class... Args>
  auto call(Loc loc, Args&&... args) const {
    return call_impl(loc, std::forward<Args>(args)...);
  }

  template <class... Args>
  Lowered<F> lower(Args&&... args) const {
    constexpr bool S = kTraceScalars<Args...>;
    core_->check_arity(sizeof...(Args), Loc::current());
    auto sig = signature<S>(args...);
    auto e = core_->lower(sig, trace_fn<S>(args...), Loc::current());
    return Lowered<F>(core_, e, f_);
  }

  size_t num_compiles() const { return core_->num_compiles(); }
  size_t cache_size() const { return core_->cache_size(); }
  size_t num_evictions() const { return core_->num_evictions(); }
  const F& fun() const { return f_; }

  // --- machinery shared with Compiled and make_jaxpr ---
  template <class... Args>
  static constexpr bool kTraceScalars =
      std::is_invocable_v<const F&, typename PyTree<std::decay_t<Args>>::template traced<true>...>;

  template <bool S, class... Args>
  detail::CallSignature signature(const Args&... args) const {
    detail::CallSignature sig;
    sig.flat.trace_scalars = S;
    size_t i = 0;
    (flatten_arg(args, i++, sig), ...);
    return sig;
  }

  template <bool S, class... Args>
  detail::JitCore::TraceFn trace_fn(const Args&... args) const {
    return [this, &args...](const std::vector<Array>& leaves, std::shared_ptr<void>& skeleton) {
      auto result = invoke_traced<S>(leaves, args...);
      using R = decltype(result);
      detail::Flattener out;
      out.trace_scalars = false;
      PyTree<R>::flatten(result, out, "out");
      skeleton = std::make_shared<R>(std::move(result));
      return out.leaves;
    };
  }

  template <bool S, class... Args>
  auto invoke_traced(const std::vector<Array>& leaves, const Args&... args) const {
    if constexpr (!detail::check_call<detail::Api::jit, F, Args...>()) {
      return Array();  // not reached: check_call's static_assert failed (and names the mistake)
    } else {
      return invoke_checked<S>(leaves, args...);
    }
  }

  template <bool S, class... Args>
  auto invoke_checked(const std::vector<Array>& leaves, const Args&... args) const {
    detail::Rebuilder r{&leaves};
    size_t i = 0;
    std::vector<std::vector<Array>> statics = static_arrays(args...);
    // Each argument is rebuilt in order: static ones from their concrete arrays, others from tracers.
    auto rebuild = [&](const auto& a) {
      size_t k = i++;
      using T = std::decay_t<decltype(a)>;
      if (core_->is_static(k)) {
        detail::Rebuilder sr{&statics[k]};
        return PyTree<T>::template rebuild<S>(a, sr);
      }
      return PyTree<T>::template rebuild<S>(a, r);
    };
    return std::apply(f_, std::tuple<typename PyTree<std::decay_t<Args>>::template traced<S>...>{rebuild(args)...});
  }

  const std::shared_ptr<detail::JitCore>& core() const { return core_; }

 private:
  template <class T>
  void flatten_arg(const T& a, size_t i, detail::CallSignature& sig) const {
    std::string path = "args[" + std::to_string(i) + "]";  // short: no allocation, unlike fmt::format
    sig.flat.current_arg = static_cast<int>(i);
    if (core_->is_static(i)) {
      detail::Flattener sub;
      sub.trace_scalars = true;  // static numbers become concrete arrays, keyed by value
      PyTree<T>::flatten(a, sub, path);
      for (size_t k = 0; k < sub.leaves.size(); ++k) {
        sig.static_leaves.push_back(sub.leaves[k]);
        sig.static_leaf_paths.push_back(sub.paths[k]);
      }
      for (size_t k = 0; k < sub.statics.size(); ++k) {
        sig.flat.statics.push_back(sub.statics[k]);
        sig.flat.static_paths.push_back(sub.static_paths[k]);
      }
      sig.flat.structure += "#" + sub.structure;
    } else {
      PyTree<T>::flatten(a, sig.flat, path);
    }
    sig.flat.structure += ",";
  }

  template <class... Args>
  std::vector<std::vector<Array>> static_arrays(const Args&... args) const {
    std::vector<std::vector<Array>> out;
    size_t i = 0;
    auto one = [&](const auto& a) {
      using T = std::decay_t<decltype(a)>;
      std::vector<Array> leaves;
      if (core_->is_static(i)) {
        detail::Flattener sub;
        PyTree<T>::flatten(a, sub, "");
        leaves = sub.leaves;
      }
      out.push_back(std::move(leaves));
      ++i;
    };
    (one(args), ...);
    return out;
  }

  template <class... Args>
  auto call_impl(Loc loc, Args&&... args) const {
    constexpr bool S = kTraceScalars<Args...>;
    using R = decltype(invoke_traced<S>(std::declval<const std::vector<Array>&>(), args...));
    if (detail::tracing_active()) {
      // Inside another trace (jit of jit, control-flow bodies): inline, as a nested pjit would.
      auto sig = signature<S>(args...);
      return invoke_traced<S>(sig.flat.leaves, args...);
    }
    if (!core_->options().static_argnums.empty() || !core_->options().donate_argnums.empty())
      core_->check_arity(sizeof...(Args), loc);
    auto sig = signature<S>(args...);
    auto entry = core_->get(sig, trace_fn<S>(args...), loc);
    return finish<R>(*entry, sig, loc);
  }

  template <class R>
  R finish(const detail::CompiledEntry& e, const detail::CallSignature& sig, const Loc& loc) const {
    std::vector<Array> outs = core_->execute(e, sig, loc);
    R result = *std::static_pointer_cast<R>(detail::JitCore::skeleton(e));
    detail::Rebuilder r{&outs};
    PyTree<R>::replace(result, r);
    return result;
  }

  template <class G>
  friend class Compiled;

  /// Over an existing core (a Compiled's call: no new core per call). Private: `Jitted(f, {})` stays unambiguous.
  Jitted(F f, std::shared_ptr<detail::JitCore> core) : f_(std::move(f)), core_(std::move(core)) {}

  F f_;
  std::shared_ptr<detail::JitCore> core_;
};

template <class F>
template <class... Args>
auto Compiled<F>::call(Loc loc, Args&&... args) const {
  Jitted<F> j(f_, core_);
  constexpr bool S = Jitted<F>::template kTraceScalars<Args...>;
  using R = decltype(j.template invoke_traced<S>(std::declval<const std::vector<Array>&>(), args...));
  auto sig = j.template signature<S>(args...);
  detail::JitCore::check_signature(*e_, sig, loc);
  std::vector<Array> outs = core_->execute(*e_, sig, loc);
  R result = *std::static_pointer_cast<R>(detail::JitCore::skeleton(*e_));
  detail::Rebuilder r{&outs};
  PyTree<R>::replace(result, r);
  return result;
}

/// An executable read back from serialised bytes (Compiled::serialize(), or a compilation cache entry): called
/// with the flattened arguments (Arrays, in the order the jitted function's leaves were), it returns the
/// flattened results. The pytree structure of the original function is not part of the bytes.
class LoadedExecutable {
 public:
  explicit LoadedExecutable(std::shared_ptr<detail::CompiledEntry> e) : e_(std::move(e)) {}
  std::string as_text() const { return detail::entry_hlo_text(*e_); }
  std::map<std::string, double> cost_analysis() const { return detail::entry_cost_analysis(*e_); }
  std::string cost_analysis_text() const { return detail::entry_cost_analysis_text(*e_); }
  CompiledMemoryStats memory_analysis() const;
  std::map<std::string, int64_t> executable_stats() const { return detail::entry_executable_stats(*e_); }
  /// The load's phases ("parse", then the backend's: cpu "plan", "load").
  std::vector<CompilePhase> compile_phases() const { return detail::entry_compile_phases(*e_); }
  std::string serialize() const;
  const std::vector<ShapedArray>& in_avals() const;
  const std::vector<ShapedArray>& out_avals() const;
  /// Runs it; TypeError when the arguments' number, dtypes or shapes differ from in_avals().
  std::vector<Array> call(const std::vector<Array>& args, const Loc& loc = Loc::current()) const;
  template <class... A>
    requires(std::is_convertible_v<const A&, Array> && ...)
  std::vector<Array> operator()(const A&... args) const {
    return call(std::vector<Array>{Array(args)...});
  }

 private:
  std::shared_ptr<detail::CompiledEntry> e_;
};

/// Reads Compiled::serialize()'s bytes back into a callable executable, without compiling. Throws RuntimeError
/// saying why when the bytes are not a serialised executable, are truncated or corrupted (checksum), or were made
/// by another jitx or LLVM version, for another target or CPU (naming the differing features), or for another
/// platform than config().platform.
LoadedExecutable deserialize_executable(std::string_view bytes);

/// jit(f): traces f once per input signature, compiles it, and runs it asynchronously. f may be one of jitx's
/// own functions (jit(jnp::tanh)): their Loc parameter is then this call's location.
template <class F>
auto jit(F&& f, JitOptions options = {}, Loc loc = Loc::current()) {
  if (options.name.empty()) options.name = "fn";
  using G = decltype(detail::adapt_callable(std::forward<F>(f), loc));
  return Jitted<G>(detail::adapt_callable(std::forward<F>(f), loc), std::move(options));
}

/// make_jaxpr(f)(args...) returns the ClosedJaxpr of f at those arguments' types.
template <class F>
auto make_jaxpr(F&& f, JitOptions options = {}) {
  if (options.name.empty()) options.name = "fn";
  return [j = jit(std::forward<F>(f), options)](auto&&... args) {
    return j.lower(std::forward<decltype(args)>(args)...).jaxpr();
  };
}

}  // namespace jitx
