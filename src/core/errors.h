// Internal error helpers: throw with the op name and the user's call site; JITX_ASSERT for invariants.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <source_location>
#include <string>
#include <vector>

#include "jitx/error.h"

namespace jitx::detail {

/// The user call site of the outermost jitx API call on this thread (empty if none).
const std::source_location* current_call_site();

/// Sets the call site for the duration of an API call; nested API calls keep the outer one. `here` (left to its
/// default) names the public function the user called: an error raised inside it by another op says so
/// ("[sub] ... (at main.cpp:6, in subtract)").
class ApiScope {
 public:
  explicit ApiScope(const std::source_location& loc,
                    const std::source_location& here = std::source_location::current());
  /// A scope whose errors name only the call site (no "in <function>"): a transformation's own checks.
  ApiScope(const std::source_location& loc, std::nullptr_t);
  ~ApiScope();
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

 private:
  bool owner_;
};

/// The call site of the most recent outermost API call on this thread (for errors raised outside any
/// API call, such as a tracer converted to bool right after `x > 0`); null if none yet.
const std::source_location* last_call_site();

/// Clears the call site for its lifetime, so API calls made inside (a traced user function run from
/// jit) report their own call sites instead of the enclosing one.
class CallSiteReset {
 public:
  CallSiteReset();
  ~CallSiteReset();
  CallSiteReset(const CallSiteReset&) = delete;
  CallSiteReset& operator=(const CallSiteReset&) = delete;

 private:
  const std::source_location* saved_;
  std::source_location saved_storage_;
  const char* saved_fn_;
};

/// The unqualified name of the function a std::source_location::function_name() names ("subtract" for
/// "jitx::Array jitx::numpy::subtract(const jitx::Array&, ...)"); empty for operators.
std::string function_short_name(std::string_view function_name);

/// "[op] message (at file.cpp:12)", with ", in fn" when the public function called differs from op.
std::string error_message(std::string_view op, std::string_view msg);

template <class E, class... Args>
[[noreturn]] void throw_error(std::string_view op, fmt::format_string<Args...> f, Args&&... args) {
  throw E(error_message(op, fmt::format(f, std::forward<Args>(args)...)));
}

[[noreturn]] void assert_fail(const char* cond, const char* file, int line, const std::string& msg);

/// Formats a shape as JAX does: (8, 4) / (3,) / ().
std::string shape_str(const std::vector<int64_t>& dims);

}  // namespace jitx::detail

#define JITX_ASSERT(cond, ...)                                                          \
  do {                                                                                  \
    if (!(cond)) ::jitx::detail::assert_fail(#cond, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
