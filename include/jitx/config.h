// jitx::config: process-wide settings, from code or from JITX_* environment variables.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "jitx/dtype.h"

namespace jitx {

struct Config {
  bool log_compiles = false;          // JITX_LOG_COMPILES=1
  bool explain_cache_misses = false;  // JITX_EXPLAIN_CACHE_MISSES=1
  std::string dump_to;                // JITX_DUMP_TO=dir
  std::string platform;               // JITX_PLATFORM=cpu (default)|interpreter
  int cpu_device_count = 1;           // JITX_CPU_DEVICE_COUNT=n
  // Bounds of the executable caches (least recently used entries are evicted; JITX_LOG_COMPILES logs each):
  size_t jit_cache_size = 1024;     // JITX_JIT_CACHE_SIZE=n: signatures kept per jitted function
  size_t eager_cache_size = 4096;   // JITX_EAGER_CACHE_SIZE=n: single-op executables kept for eager evaluation
  bool verify_passes = false;         // JITX_VERIFY=1: run the HLO verifier after every pass
  bool dump_passes = false;           // JITX_DUMP_PASSES=1: with dump_to, write the HLO after every pass
  bool trace_passes = false;          // JITX_TRACE_PASSES=1: log one line per rewrite an HLO pass makes
  // JITX_ALLOW_EXCESS_PRECISION=0 turns it off (XLA's xla_allow_excess_precision, on in XLA and JAX by default).
  // On, as XLA:CPU compiles: a multiply may fuse with the add or subtract it feeds into one FMA (one rounding:
  // jit(w - 0.1 * g) at w = 1, g = 10 is -1.49e-8 in jitx and JAX alike), and a bf16 op whose result is converted
  // to float32 keeps its f32 value (jit(exp(x).astype(f32)) of bf16 x is the f32 exp, in jitx and JAX alike).
  // f16/bf16 ops are rounded to their type after every op either way, as XLA:CPU and the interpreter round them.
  // Off: every op's result is rounded, as the interpreter rounds (bit-exact with it). Read when a function is
  // compiled: changing it does not recompile what is compiled already.
  bool allow_excess_precision = true;
  // The persistent compilation cache (README, "The compilation cache"): every executable jit compiles is stored
  // in this directory (its object code and what it needs to run), and a later process compiling the same
  // optimised module with the same jitx, LLVM, CPU and code-changing settings loads it instead. Empty: off.
  std::string compilation_cache_dir;  // JITX_COMPILATION_CACHE_DIR=dir
  // The directory's size cap: after a store, least recently used entries (mtime, refreshed on load) go first.
  size_t compilation_cache_max_bytes = size_t{1} << 30;  // JITX_COMPILATION_CACHE_MAX_BYTES=n
  // JAX's jax_enable_x64 (README, "Numerics and dtype rules"). On (the default): 64-bit dtypes as JAX with x64.
  // Off (JITX_ENABLE_X64=0): JAX's default 32-bit mode: every dtype a new array gets goes through
  // canonicalize_dtype (f64 -> f32, i64 -> i32, u64 -> u32), so C++ double/int64 scalars are weak f32/i32,
  // creation functions, host data and astype give 32-bit arrays and promotion never gives a 64-bit result.
  // Part of every cache key (jit, eager, persistent cache), so flipping it recompiles.
  bool enable_x64 = true;
  // JAX's jax_debug_nans / jax_debug_infs (README, "Debugging inside jit"): when an eager op or a jitted call
  // produces a NaN (an inf), throw FloatingPointError naming the first primitive that made it and its source line
  // (a jitted call is re-run op by op to find it). Off: nothing is checked and nothing waits.
  bool debug_nans = false;  // JITX_DEBUG_NANS=1
  bool debug_infs = false;  // JITX_DEBUG_INFS=1
  // The cpu backend runs a run of kernels over the same rows (a softmax's max, sum and output; a layer norm's)
  // block by block, so each block stays in cache between them (README, "Performance"). Results are the same
  // either way, bit for bit; read when an executable is built, so it is not part of cache keys.
  bool cpu_row_groups = true;  // JITX_CPU_ROW_GROUPS=0 turns it off
  // Partitioned programs run a collective while they compute what does not depend on it (all-reduce-start ...
  // all-reduce-done in the optimised HLO). Read when a program is compiled, so it is not part of cache keys.
  bool async_collectives = true;  // JITX_ASYNC_COLLECTIVES=0 turns it off
};

/// The global configuration (initialised from the environment on first use).
Config& config();

/// JAX's dtypes.canonicalize_dtype: with config().enable_x64 off, f64 -> f32, i64 -> i32 and u64 -> u32;
/// otherwise (and for every other dtype) d itself. Applied wherever a new array gets its dtype.
DType canonicalize_dtype(DType d);

/// Sets where jitx's log lines go (compile logs, cache-miss explanations, pass traces; default: stderr). Pass
/// nullptr to restore the default.
void set_log_sink(std::function<void(const std::string&)> sink);

/// The platform executables run on ("cpu" or "interpreter"), after JITX_PLATFORM and defaults.
std::string default_platform();

}  // namespace jitx
