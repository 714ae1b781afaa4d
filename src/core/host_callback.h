// Host callbacks: C++ functions a program calls while it runs (debug::print, debug::callback, pure_callback).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/literal.h"
#include "jitx/array.h"

namespace jitx::detail {

/// The host function behind one traced callback: its operands' values in, its results' values out.
using HostCallbackFn = std::function<std::vector<Literal>(std::vector<Literal> args)>;

struct HostCallback {
  HostCallbackFn fn;
  std::string name;                       // "debug_callback" or "pure_callback": the op in error messages
  bool has_side_effect = true;            // debug callbacks: never removed, merged or reordered
  std::vector<ShapedArray> result_avals;  // what a pure callback declared (debug callbacks return nothing)
};

/// Registers a callback for the lifetime of the process; returns the id the primitive's params and the HLO
/// custom-call carry (a program names its callbacks by id, so a module with callbacks is never stored on disk).
int64_t register_host_callback(HostCallback cb);
/// The callback of that id (an internal invariant: it was registered).
const HostCallback& host_callback(int64_t id);
/// Runs callback id on args and checks its results against the declared avals (shape and dtype: a TypeError or
/// ShapeError naming the op and the result otherwise). Exceptions the user's function throws pass through.
std::vector<Literal> call_host_callback(int64_t id, std::vector<Literal> args);
/// Whether this thread is inside call_host_callback: a callback runs on the stream that runs its program, so a
/// jitx computation it started would wait for that same stream for ever (Event::wait throws instead).
bool in_host_callback();

}  // namespace jitx::detail
