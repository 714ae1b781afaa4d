// Pytrees: flattening C++ values (Arrays, numbers, containers, user structs) into leaves and back.
#pragma once
#include <array>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "jitx/array.h"

namespace jitx {

/// Wraps a value that jit must treat as static (part of the cache key by value, not traced).
template <class T>
struct Static {
  T value;
  operator const T&() const { return value; }  // NOLINT
  const T& operator*() const { return value; }
  bool operator==(const Static&) const = default;
};
template <class T>
Static(T) -> Static<T>;

/// A value jit can key its cache on when it is not a pytree: comparable with == and hashable by std::hash.
template <class T>
concept StaticValueType = requires(const T& a, const T& b) {
  { a == b } -> std::convertible_to<bool>;
} && (std::is_enum_v<T> || requires(const T& a) {
  { std::hash<T>{}(a) } -> std::convertible_to<size_t>;
});

namespace detail {

template <class T>
inline constexpr bool dependent_false = false;
/// Always false: named so the compiler's note names the offending type ("is_pytree_or_static_value<Params>").
template <class T>
inline constexpr bool is_pytree_or_static_value = false;

/// A type-erased static value: compared and hashed for the cache key, printed for logs.
struct StaticValue {
  virtual ~StaticValue() = default;
  virtual bool equals(const StaticValue& o) const = 0;
  virtual size_t hash() const = 0;
  virtual std::string str() const = 0;
};

template <class T>
std::string static_str(const T& v) {
  if constexpr (fmt::is_formattable<T>::value) return fmt::format("{}", v);
  else if constexpr (std::is_enum_v<T>) return fmt::format("{}", static_cast<std::underlying_type_t<T>>(v));
  else return std::string("<") + typeid(T).name() + ">";
}
template <class T>
size_t static_hash(const T& v) {
  if constexpr (std::is_enum_v<T>)
    return std::hash<std::underlying_type_t<T>>{}(static_cast<std::underlying_type_t<T>>(v));
  else return std::hash<T>{}(v);
}

template <class T>
struct StaticValueImpl : StaticValue {
  T v;
  explicit StaticValueImpl(T x) : v(std::move(x)) {}
  bool equals(const StaticValue& o) const override {
    auto* p = dynamic_cast<const StaticValueImpl*>(&o);
    return p && p->v == v;
  }
  size_t hash() const override { return static_hash(v); }
  std::string str() const override { return static_str(v); }
};

/// Collects the leaves, their paths, the tree structure and the static values of arguments.
struct Flattener {
  std::vector<Array> leaves;
  std::vector<std::string> paths;
  std::string structure;
  std::vector<std::shared_ptr<StaticValue>> statics;
  std::vector<std::string> static_paths;
  std::vector<int> leaf_args;  // which top-level argument each leaf came from (-1 outside a call)
  int current_arg = -1;
  bool trace_scalars = true;

  void leaf(Array a, const std::string& path) {
    leaves.push_back(std::move(a));
    paths.push_back(path);
    leaf_args.push_back(current_arg);
    structure += "*";
  }
  template <class T>
  void static_value(const T& v, const std::string& path) {
    statics.push_back(std::make_shared<StaticValueImpl<T>>(v));
    static_paths.push_back(path);
    structure += "S";
  }
};

/// Hands out replacement leaves in order.
struct Rebuilder {
  const std::vector<Array>* leaves;
  size_t pos = 0;
  const Array& next() { return leaves->at(pos++); }
};

}  // namespace detail

/// The pytree customisation point. Specialise it, or use JITX_PYTREE for structs of pytrees.
template <class T, class Enable = void>
struct PyTree {
  // Anything not known as a pytree is static: it must be equality-comparable and hashable.
  template <bool S>
  using traced = T;
  static void flatten(const T& v, detail::Flattener& f, const std::string& path) {
    if constexpr (StaticValueType<T>)
      f.static_value(v, path);
    else
      static_assert(detail::is_pytree_or_static_value<T>,
                    "jitx: an argument's type (named in the note below) is neither a pytree nor a static value: declare the struct "
                    "a pytree with JITX_PYTREE(Type, field1, field2, ...) at namespace scope, or give it operator== "
                    "and a std::hash specialisation to pass it as a static (cache-keyed) value");
  }
  template <bool S>
  static T rebuild(const T& v, detail::Rebuilder&) {
    return v;
  }
  static void replace(T&, detail::Rebuilder&) {}
};

template <>
struct PyTree<Array> {
  template <bool S>
  using traced = Array;
  static void flatten(const Array& v, detail::Flattener& f, const std::string& path) { f.leaf(v, path); }
  template <bool S>
  static Array rebuild(const Array&, detail::Rebuilder& r) {
    return r.next();
  }
  static void replace(Array& v, detail::Rebuilder& r) { v = r.next(); }
};

/// C++ numbers are traced as weak-typed 0-d arrays (or static when the function takes a number).
template <class T>
struct PyTree<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  template <bool S>
  using traced = std::conditional_t<S, Array, T>;
  static void flatten(const T& v, detail::Flattener& f, const std::string& path) {
    if (f.trace_scalars) f.leaf(Array(v), path);
    else f.static_value(v, path);
  }
  template <bool S>
  static traced<S> rebuild(const T& v, detail::Rebuilder& r) {
    if constexpr (S) return r.next();
    else return v;
  }
  static void replace(T&, detail::Rebuilder&) {}
};

template <class T>
struct PyTree<Static<T>> {
  template <bool S>
  using traced = Static<T>;
  static void flatten(const Static<T>& v, detail::Flattener& f, const std::string& path) {
    f.static_value(v.value, path);
  }
  template <bool S>
  static Static<T> rebuild(const Static<T>& v, detail::Rebuilder&) {
    return v;
  }
  static void replace(Static<T>&, detail::Rebuilder&) {}
};

template <class T, class A>
struct PyTree<std::vector<T, A>> {
  template <bool S>
  using traced = std::vector<typename PyTree<T>::template traced<S>>;
  static void flatten(const std::vector<T, A>& v, detail::Flattener& f, const std::string& path) {
    f.structure += fmt::format("[{}:", v.size());
    for (size_t i = 0; i < v.size(); ++i) PyTree<T>::flatten(v[i], f, fmt::format("{}[{}]", path, i));
    f.structure += "]";
  }
  template <bool S>
  static traced<S> rebuild(const std::vector<T, A>& v, detail::Rebuilder& r) {
    traced<S> out;
    out.reserve(v.size());
    for (auto& x : v) out.push_back(PyTree<T>::template rebuild<S>(x, r));
    return out;
  }
  static void replace(std::vector<T, A>& v, detail::Rebuilder& r) {
    for (auto& x : v) PyTree<T>::replace(x, r);
  }
};

template <class T, size_t N>
struct PyTree<std::array<T, N>> {
  template <bool S>
  using traced = std::array<typename PyTree<T>::template traced<S>, N>;
  static void flatten(const std::array<T, N>& v, detail::Flattener& f, const std::string& path) {
    f.structure += fmt::format("<{}:", N);
    for (size_t i = 0; i < N; ++i) PyTree<T>::flatten(v[i], f, fmt::format("{}[{}]", path, i));
    f.structure += ">";
  }
  template <bool S>
  static traced<S> rebuild(const std::array<T, N>& v, detail::Rebuilder& r) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return traced<S>{PyTree<T>::template rebuild<S>(v[I], r)...};
    }(std::make_index_sequence<N>{});
  }
  static void replace(std::array<T, N>& v, detail::Rebuilder& r) {
    for (auto& x : v) PyTree<T>::replace(x, r);
  }
};

template <class... Ts>
struct PyTree<std::tuple<Ts...>> {
  template <bool S>
  using traced = std::tuple<typename PyTree<Ts>::template traced<S>...>;
  static void flatten(const std::tuple<Ts...>& v, detail::Flattener& f, const std::string& path) {
    f.structure += "(";
    [&]<size_t... I>(std::index_sequence<I...>) {
      (PyTree<Ts>::flatten(std::get<I>(v), f, fmt::format("{}[{}]", path, I)), ...);
    }(std::index_sequence_for<Ts...>{});
    f.structure += ")";
  }
  template <bool S>
  static traced<S> rebuild(const std::tuple<Ts...>& v, detail::Rebuilder& r) {
    // Braced initialisation evaluates left to right, so leaves are consumed in order.
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return traced<S>{PyTree<Ts>::template rebuild<S>(std::get<I>(v), r)...};
    }(std::index_sequence_for<Ts...>{});
  }
  static void replace(std::tuple<Ts...>& v, detail::Rebuilder& r) {
    [&]<size_t... I>(std::index_sequence<I...>) { (PyTree<Ts>::replace(std::get<I>(v), r), ...); }(
        std::index_sequence_for<Ts...>{});
  }
};

template <class A, class B>
struct PyTree<std::pair<A, B>> {
  template <bool S>
  using traced = std::pair<typename PyTree<A>::template traced<S>, typename PyTree<B>::template traced<S>>;
  static void flatten(const std::pair<A, B>& v, detail::Flattener& f, const std::string& path) {
    f.structure += "(";
    PyTree<A>::flatten(v.first, f, path + "[0]");
    PyTree<B>::flatten(v.second, f, path + "[1]");
    f.structure += ")";
  }
  template <bool S>
  static traced<S> rebuild(const std::pair<A, B>& v, detail::Rebuilder& r) {
    return traced<S>{PyTree<A>::template rebuild<S>(v.first, r), PyTree<B>::template rebuild<S>(v.second, r)};
  }
  static void replace(std::pair<A, B>& v, detail::Rebuilder& r) {
    PyTree<A>::replace(v.first, r);
    PyTree<B>::replace(v.second, r);
  }
};

template <class T, class C, class Al>
struct PyTree<std::map<std::string, T, C, Al>> {
  template <bool S>
  using traced = std::map<std::string, typename PyTree<T>::template traced<S>>;
  static void flatten(const std::map<std::string, T, C, Al>& v, detail::Flattener& f, const std::string& path) {
    f.structure += "{";
    for (auto& [k, x] : v) {
      f.structure += k + ":";
      PyTree<T>::flatten(x, f, fmt::format("{}['{}']", path, k));
      f.structure += ",";
    }
    f.structure += "}";
  }
  template <bool S>
  static traced<S> rebuild(const std::map<std::string, T, C, Al>& v, detail::Rebuilder& r) {
    traced<S> out;
    for (auto& [k, x] : v) out.emplace(k, PyTree<T>::template rebuild<S>(x, r));
    return out;
  }
  static void replace(std::map<std::string, T, C, Al>& v, detail::Rebuilder& r) {
    for (auto& [k, x] : v) PyTree<T>::replace(x, r);
  }
};

template <class T>
struct PyTree<std::optional<T>> {
  template <bool S>
  using traced = std::optional<typename PyTree<T>::template traced<S>>;
  static void flatten(const std::optional<T>& v, detail::Flattener& f, const std::string& path) {
    f.structure += v ? "?(" : "?none";
    if (v) {
      PyTree<T>::flatten(*v, f, path);
      f.structure += ")";
    }
  }
  template <bool S>
  static traced<S> rebuild(const std::optional<T>& v, detail::Rebuilder& r) {
    if (!v) return std::nullopt;
    return PyTree<T>::template rebuild<S>(*v, r);
  }
  static void replace(std::optional<T>& v, detail::Rebuilder& r) {
    if (v) PyTree<T>::replace(*v, r);
  }
};

/// Flattens any pytree into its Array leaves (scalars become weak-typed arrays).
template <class T>
std::vector<Array> tree_leaves(const T& v) {
  detail::Flattener f;
  PyTree<T>::flatten(v, f, "");
  return f.leaves;
}

/// Waits for every Array in a pytree; returns it.
template <class T>
const T& block_until_ready(const T& v) {
  for (auto& a : tree_leaves(v)) a.block_until_ready();
  return v;
}

}  // namespace jitx

/// Declares a struct a pytree node whose children are the listed fields (themselves pytrees):
///   struct Params { jitx::Array w, b; };  JITX_PYTREE(Params, w, b)
/// (at namespace scope, outside any namespace).
#define JITX_PYTREE(Type, ...)                                                                     \
  template <>                                                                                      \
  struct jitx::PyTree<Type> {                                                                      \
    template <bool S>                                                                              \
    using traced = Type;                                                                           \
    static void flatten(const Type& v, ::jitx::detail::Flattener& f, const std::string& path) {    \
      f.structure += #Type "{";                                                                    \
      auto fields = [](const Type& x) { return std::tie(JITX_PYTREE_FIELDS_(x, __VA_ARGS__)); }; \
      auto t = fields(v);                                                                          \
      auto names = ::jitx::detail::split_field_names(#__VA_ARGS__);                                \
      size_t k = 0;                                                                                \
      std::apply([&](const auto&... m) { (::jitx::detail::flatten_field(m, f, path + "." + names[k++]), ...); }, t); \
      f.structure += "}";                                                                          \
    }                                                                                              \
    template <bool S>                                                                              \
    static Type rebuild(const Type& v, ::jitx::detail::Rebuilder& r) {                             \
      Type out = v;                                                                                \
      replace(out, r);                                                                             \
      return out;                                                                                  \
    }                                                                                              \
    static void replace(Type& v, ::jitx::detail::Rebuilder& r) {                                   \
      auto fields = [](Type& x) { return std::tie(JITX_PYTREE_FIELDS_(x, __VA_ARGS__)); };        \
      auto t = fields(v);                                                                          \
      std::apply([&](auto&... m) { (::jitx::detail::replace_field(m, r), ...); }, t);              \
    }                                                                                              \
  };

namespace jitx::detail {
template <class T>
void flatten_field(const T& m, Flattener& f, const std::string& path) {
  // A struct keeps its own field types, so a number field cannot hold a tracer: it is static (keyed by
  // value), never a leaf.
  if constexpr (std::is_arithmetic_v<T>) f.static_value(m, path);
  else PyTree<T>::flatten(m, f, path);
}
inline std::vector<std::string> split_field_names(const char* s) {
  std::vector<std::string> out(1);
  for (; *s; ++s) {
    if (*s == ',') out.emplace_back();
    else if (*s != ' ') out.back() += *s;
  }
  return out;
}
template <class T>
void replace_field(T& m, Rebuilder& r) {
  PyTree<T>::replace(m, r);
}
}  // namespace jitx::detail

// x.a, x.b, ... for up to 16 fields.
#define JITX_PYTREE_FIELDS_(x, ...)                                                                                  \
  JITX_PT_DISPATCH_(__VA_ARGS__, JITX_PT16_, JITX_PT15_, JITX_PT14_, JITX_PT13_, JITX_PT12_, JITX_PT11_, JITX_PT10_, \
                    JITX_PT9_, JITX_PT8_, JITX_PT7_, JITX_PT6_, JITX_PT5_, JITX_PT4_, JITX_PT3_, JITX_PT2_,          \
                    JITX_PT1_)(x, __VA_ARGS__)
#define JITX_PT_DISPATCH_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define JITX_PT1_(x, a) x.a
#define JITX_PT2_(x, a, ...) x.a, JITX_PT1_(x, __VA_ARGS__)
#define JITX_PT3_(x, a, ...) x.a, JITX_PT2_(x, __VA_ARGS__)
#define JITX_PT4_(x, a, ...) x.a, JITX_PT3_(x, __VA_ARGS__)
#define JITX_PT5_(x, a, ...) x.a, JITX_PT4_(x, __VA_ARGS__)
#define JITX_PT6_(x, a, ...) x.a, JITX_PT5_(x, __VA_ARGS__)
#define JITX_PT7_(x, a, ...) x.a, JITX_PT6_(x, __VA_ARGS__)
#define JITX_PT8_(x, a, ...) x.a, JITX_PT7_(x, __VA_ARGS__)
#define JITX_PT9_(x, a, ...) x.a, JITX_PT8_(x, __VA_ARGS__)
#define JITX_PT10_(x, a, ...) x.a, JITX_PT9_(x, __VA_ARGS__)
#define JITX_PT11_(x, a, ...) x.a, JITX_PT10_(x, __VA_ARGS__)
#define JITX_PT12_(x, a, ...) x.a, JITX_PT11_(x, __VA_ARGS__)
#define JITX_PT13_(x, a, ...) x.a, JITX_PT12_(x, __VA_ARGS__)
#define JITX_PT14_(x, a, ...) x.a, JITX_PT13_(x, __VA_ARGS__)
#define JITX_PT15_(x, a, ...) x.a, JITX_PT14_(x, __VA_ARGS__)
#define JITX_PT16_(x, a, ...) x.a, JITX_PT15_(x, __VA_ARGS__)
