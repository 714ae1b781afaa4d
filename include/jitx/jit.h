// jitx::jit, make_jaxpr and the AOT surface (lower -> Lowered -> compile -> Compiled).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/config.h"
#include "jitx/pytree.h"

namespace jitx {

struct JitOptions {
  std::vector<int> static_argnums;  // these arguments' values are baked in and keyed by value
  std::vector<int> donate_argnums;  // these arguments' buffers may be reused for outputs; unusable after the call
  std::string name;                 // for logs and module names (default: "fn")
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
  template <class... Args>
  auto operator()(Args&&... args) const;

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

  /// Calls the function: compiled once per signature, then dispatched asynchronously.
  template <class... Args>
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
    std::string path = fmt::format("args[{}]", i);
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

  F f_;
  std::shared_ptr<detail::JitCore> core_;
};

template <class F>
template <class... Args>
auto Compiled<F>::operator()(Args&&... args) const {
  Jitted<F> j(f_, core_->options());
  constexpr bool S = Jitted<F>::template kTraceScalars<Args...>;
  using R = decltype(j.template invoke_traced<S>(std::declval<const std::vector<Array>&>(), args...));
  auto sig = j.template signature<S>(args...);
  detail::JitCore::check_signature(*e_, sig, Loc::current());
  std::vector<Array> outs = core_->execute(*e_, sig, Loc::current());
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

/// jit(f): traces f once per input signature, compiles it, and runs it asynchronously.
template <class F>
Jitted<std::decay_t<F>> jit(F&& f, JitOptions options = {}) {
  if (options.name.empty()) options.name = "fn";
  return Jitted<std::decay_t<F>>(std::forward<F>(f), std::move(options));
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
