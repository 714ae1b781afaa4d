// Debugging inside jit (JAX's jax.debug.print, jax.debug.callback, jax.pure_callback): host code that runs when
// the program runs, with the values the program computes.
#pragma once
#include <fmt/args.h>
#include <fmt/format.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/floating_point_error.h"

namespace jitx {

namespace detail {
using PrintStore = fmt::dynamic_format_arg_store<fmt::format_context>;
/// One argument of debug::print in order: an Array (by its index among the Arrays) or a value known when tracing.
struct PrintArg {
  int array_index = -1;
  std::function<void(PrintStore&)> push;  // pushes the static value (array_index < 0)
};
template <class T>
void add_print_arg(std::vector<PrintArg>& pa, std::vector<Array>& arrays, T&& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Array>) {
    pa.push_back({static_cast<int>(arrays.size()), {}});
    arrays.push_back(v);
  } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    pa.push_back({-1, [s = std::string(v)](PrintStore& st) { st.push_back(s); }});
  } else {
    pa.push_back({-1, [c = D(std::forward<T>(v))](PrintStore& st) { st.push_back(c); }});
  }
}
/// A pure callback's results as a list (fn returns one Array or a std::vector<Array>).
inline std::vector<Array> callback_results(Array r) { return {std::move(r)}; }
inline std::vector<Array> callback_results(std::vector<Array> r) { return r; }
void debug_print(std::string format, std::vector<PrintArg> pa, std::vector<Array> arrays, const Loc& loc);
void debug_callback(std::function<void(const std::vector<Array>&)> fn, std::vector<Array> args, const Loc& loc);
std::vector<Array> pure_callback(std::function<std::vector<Array>(const std::vector<Array>&)> fn,
                                 std::vector<ShapedArray> result_shape_dtypes, std::vector<Array> args,
                                 const Loc& loc);
}  // namespace detail

namespace debug {

/// A format string with its caller's line (so that debug::print can name it in errors).
struct FormatString {
  std::string_view text;
  Loc loc;
  template <class S>
    requires std::is_convertible_v<const S&, std::string_view>
  FormatString(const S& s, Loc l = Loc::current()) : text(s), loc(l) {}  // NOLINT(google-explicit-constructor)
};

/// jax.debug.print: formats `format` with fmt (`{}`, `{:.3f}`, `{0}`) on the values of args when the program runs
/// (inside jit, vmap, grad, scan, while_loop and cond bodies; at once in eager code) and writes one line to the
/// print sink. An Array formats as its values in NumPy style (`[0., 1., 2.]`, `2.`); a 0-d Array with a format spec
/// formats as the number. Other arguments (ints, strings) are formatted as given. Under vmap it prints once per
/// batch element, as JAX does; under grad it prints the primal values. It never changes results or gradients,
/// and a jitted call still returns at once: the line appears when the program reaches it.
template <class... Args>
void print(FormatString format, Args&&... args) {
  std::vector<detail::PrintArg> pa;
  std::vector<Array> arrays;
  (detail::add_print_arg(pa, arrays, std::forward<Args>(args)), ...);
  detail::debug_print(std::string(format.text), std::move(pa), std::move(arrays), format.loc);
}

/// Where debug::print writes its lines (one call per line, without the newline). Default (also after nullptr):
/// stdout, each line flushed. Called from the thread that runs the program.
void set_print_sink(std::function<void(const std::string&)> sink);

/// jax.debug.callback: calls fn(args...) on the host with the values of the Arrays args when the program runs
/// (concrete Arrays holding copies), in program order with the other debug effects. It returns nothing and is
/// never removed, merged or reordered by the compiler; under vmap it is called once per batch element.
template <class F, class... Args>
void callback(F fn, const Args&... args) {
  static_assert((std::is_same_v<Args, Array> && ...), "debug::callback: pass the values as jitx::Array arguments");
  detail::debug_callback(
      [fn = std::move(fn)](const std::vector<Array>& a) {
        [&]<size_t... I>(std::index_sequence<I...>) { fn(a[I]...); }(std::index_sequence_for<Args...>{});
      },
      {args...}, Loc::current());
}

}  // namespace debug

/// jax.pure_callback: calls fn(args...) on the host when the program runs; fn returns the Arrays declared by
/// result_shape_dtypes (shape and dtype checked: a TypeError or ShapeError otherwise). It must be a pure function:
/// the compiler may merge two identical calls or remove one whose results are unused. vmap calls it once per batch
/// element (JAX's vmap_method="sequential"); grad of it is a TypeError (wrap it in custom_jvp).
/// pure_callback's declared results, with the caller's line (for its errors).
struct ShapeDtypes {
  std::vector<ShapedArray> avals;
  Loc loc;
  ShapeDtypes(std::vector<ShapedArray> a, Loc l = Loc::current()) : avals(std::move(a)), loc(l) {}  // NOLINT
  ShapeDtypes(std::initializer_list<ShapedArray> a, Loc l = Loc::current()) : avals(a), loc(l) {}  // NOLINT
};
/// One declared result, with the caller's line.
struct ShapeDtype {
  ShapedArray aval;
  Loc loc;
  ShapeDtype(ShapedArray a, Loc l = Loc::current()) : aval(std::move(a)), loc(l) {}  // NOLINT
};

template <class F, class... Args>
std::vector<Array> pure_callback(F fn, ShapeDtypes result_shape_dtypes, const Args&... args) {
  static_assert((std::is_same_v<Args, Array> && ...), "pure_callback: pass the values as jitx::Array arguments");
  return detail::pure_callback(
      [fn = std::move(fn)](const std::vector<Array>& a) -> std::vector<Array> {
        return detail::callback_results(
            [&]<size_t... I>(std::index_sequence<I...>) { return fn(a[I]...); }(std::index_sequence_for<Args...>{}));
      },
      std::move(result_shape_dtypes.avals), {args...}, result_shape_dtypes.loc);
}
/// pure_callback with one result.
template <class F, class... Args>
Array pure_callback(F fn, ShapeDtype result_shape_dtype, const Args&... args) {
  return pure_callback(std::move(fn), ShapeDtypes({std::move(result_shape_dtype.aval)}, result_shape_dtype.loc),
                       args...)[0];
}

}  // namespace jitx
