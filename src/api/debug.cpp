// debug::print, debug::callback and pure_callback: register the host function, bind its primitive.
#include "jitx/debug.h"

#include <cstdio>
#include <mutex>

#include "core/array_print.h"
#include "core/errors.h"
#include "core/host_callback.h"
#include "core/primitive.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

namespace jitx::detail {
/// A value debug::print formats: an array's values in NumPy style, or (with a format spec) a 0-d array's number.
struct PrintValue {
  Literal lit;
};
}  // namespace jitx::detail

template <>
struct fmt::formatter<jitx::detail::PrintValue> {
  std::string spec;
  constexpr auto parse(fmt::format_parse_context& ctx) {
    auto it = ctx.begin();
    while (it != ctx.end() && *it != '}') spec.push_back(*it++);
    return it;
  }
  auto format(const jitx::detail::PrintValue& v, fmt::format_context& ctx) const {
    const auto& l = v.lit;
    if (!l.dims.empty()) {
      // As JAX (numpy.ndarray.__format__): an array takes no format spec.
      if (!spec.empty())
        throw fmt::format_error(fmt::format("the format spec '{}' applies to a 0-d array only, got shape ({})", spec,
                                            fmt::join(l.dims, ", ")));
      return fmt::format_to(ctx.out(), "{}", l.values_str());
    }
    if (spec.empty()) return fmt::format_to(ctx.out(), "{}", jitx::detail::scalar_text(l));  // NumPy's str: 2.0
    std::string f = "{:" + spec + "}";
    char kind = spec.back();
    bool float_spec = kind == 'f' || kind == 'F' || kind == 'e' || kind == 'E' || kind == 'g' || kind == 'G' ||
                      kind == '%';
    // As Python's format(): an integer takes a float spec (3 with {:.2f} is 3.00), a bool prints True/False.
    if (jitx::is_floating(l.dtype) || float_spec) {
      if (kind == '%') return fmt::format_to(ctx.out(), fmt::runtime("{:" + spec.substr(0, spec.size() - 1) + "f}%"),
                                             l.get_f64(0) * 100);
      return fmt::format_to(ctx.out(), fmt::runtime(f), l.get_f64(0));
    }
    if (l.dtype == jitx::DType::bool_)
      return fmt::format_to(ctx.out(), fmt::runtime(f), std::string(l.get_i64(0) ? "True" : "False"));
    if (l.dtype == jitx::DType::uint64) return fmt::format_to(ctx.out(), fmt::runtime(f), l.get_u64(0));
    return fmt::format_to(ctx.out(), fmt::runtime(f), l.get_i64(0));
  }
};

namespace jitx {
namespace detail {
namespace {
std::mutex& sink_mu() {
  static std::mutex m;
  return m;
}
std::function<void(const std::string&)>& sink() {
  static std::function<void(const std::string&)> s;
  return s;
}
void emit(const std::string& line) {
  std::lock_guard<std::mutex> l(sink_mu());
  if (sink()) return sink()(line);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string format_line(const std::string& format, const std::vector<PrintArg>& pa, const std::vector<Literal>& vals) {
  PrintStore store;
  for (auto& a : pa)
    if (a.array_index >= 0)
      store.push_back(PrintValue{vals.at(static_cast<size_t>(a.array_index))});
    else
      a.push(store);
  return fmt::vformat(format, store);
}

Array to_array(const Literal& lit) {
  return make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()));
}
std::vector<Array> to_arrays(const std::vector<Literal>& lits) {
  std::vector<Array> out;
  for (auto& l : lits) out.push_back(to_array(l));
  return out;
}
}  // namespace

void debug_print(std::string format, std::vector<PrintArg> pa, std::vector<Array> arrays, const Loc& loc) {
  ApiScope s(loc);
  // The format string is checked now, on placeholder values of the arguments' types, so a bad one is an error
  // at the user's line rather than on the thread that runs the program.
  std::vector<Literal> dummy;
  for (auto& a : arrays) {
    if (!a.valid()) throw_error<TypeError>("debug.print", "an argument Array is empty (default-constructed)");
    const ShapedArray& av = a.aval();
    Literal l = Literal::make(av.dtype, av.shape.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{0});
    if (av.shape.empty()) l.set_i64(0, 0);
    dummy.push_back(std::move(l));
  }
  try {
    (void)format_line(format, pa, dummy);
  } catch (const fmt::format_error& e) {
    throw_error<TypeError>("debug.print", "cannot format \"{}\" with {} argument{}: {}", format, pa.size(),
                           pa.size() == 1 ? "" : "s", e.what());
  }
  HostCallback cb;
  cb.name = "debug.print";
  cb.fn = [format = std::move(format), pa = std::move(pa)](std::vector<Literal> vals) {
    emit(format_line(format, pa, vals));
    return std::vector<Literal>{};
  };
  Params ps;
  ps.set("callback_id", register_host_callback(std::move(cb)));
  detail::bind(primitive("debug_callback"), std::move(arrays), ps);
}

/// Runs a user's host function: an exception it throws that is not a jitx::Error becomes a RuntimeError naming
/// the callback (eagerly as under jit, where the backend reports it), a non-standard one too.
template <class F>
auto guarded(const char* name, F&& f) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_error<RuntimeError>(name, "the callback threw: {}", e.what());
  } catch (...) {
    throw_error<RuntimeError>(name, "the callback threw an exception that is not a std::exception");
  }
}

void debug_callback(std::function<void(const std::vector<Array>&)> fn, std::vector<Array> args, const Loc& loc) {
  ApiScope s(loc);
  for (auto& a : args)
    if (!a.valid()) throw_error<TypeError>("debug.callback", "an argument Array is empty (default-constructed)");
  HostCallback cb;
  cb.name = "debug.callback";
  cb.fn = [fn = std::move(fn)](std::vector<Literal> vals) {
    guarded("debug.callback", [&] { fn(to_arrays(vals)); });
    return std::vector<Literal>{};
  };
  Params ps;
  ps.set("callback_id", register_host_callback(std::move(cb)));
  detail::bind(primitive("debug_callback"), std::move(args), ps);
}

std::vector<Array> pure_callback(std::function<std::vector<Array>(const std::vector<Array>&)> fn,
                                 std::vector<ShapedArray> result_shape_dtypes, std::vector<Array> args,
                                 const Loc& loc) {
  ApiScope s(loc);
  for (auto& a : args)
    if (!a.valid()) throw_error<TypeError>("pure_callback", "an argument Array is empty (default-constructed)");
  for (auto& r : result_shape_dtypes) {
    r.weak_type = false;
    for (auto d : r.shape)
      if (d < 0) throw_error<ShapeError>("pure_callback", "result_shape_dtypes has a negative size: {}", r.str());
  }
  HostCallback cb;
  cb.name = "pure_callback";
  cb.has_side_effect = false;
  cb.result_avals = result_shape_dtypes;
  cb.fn = [fn = std::move(fn)](std::vector<Literal> vals) {
    std::vector<Array> outs = guarded("pure_callback", [&] { return fn(to_arrays(vals)); });
    std::vector<Literal> lits;
    for (auto& o : outs) {
      if (!o.valid()) throw_error<TypeError>("pure_callback", "the callback returned an empty Array");
      lits.push_back(o.impl()->host_literal("pure_callback"));
    }
    return lits;
  };
  Params ps;
  ps.set("callback_id", register_host_callback(std::move(cb)));
  return detail::bind(primitive("pure_callback"), std::move(args), ps);
}
}  // namespace detail

void debug::set_print_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> l(detail::sink_mu());
  detail::sink() = std::move(sink);
}

}  // namespace jitx
