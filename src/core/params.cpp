// Params: sorted attribute map with printing, hashing and equality.
#include "core/params.h"

#include <algorithm>
#include <functional>

#include "core/jaxpr.h"

namespace jitx::detail {

size_t hash_combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

Params::Params(std::initializer_list<std::pair<std::string, ParamValue>> items) {
  for (auto& [k, v] : items) set(k, v);
}

Params& Params::set(std::string name, ParamValue v) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, const std::string& n) { return p.first < n; });
  if (it != items_.end() && it->first == name) it->second = std::move(v);
  else items_.insert(it, {std::move(name), std::move(v)});
  return *this;
}

bool Params::has(std::string_view name) const {
  for (auto& p : items_)
    if (p.first == name) return true;
  return false;
}

const ParamValue& Params::at(std::string_view name) const {
  for (auto& p : items_)
    if (p.first == name) return p.second;
  JITX_ASSERT(false, "missing param '{}' in {}", name, str());
  std::abort();
}

static size_t hash_value(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          size_t h = 0x51ed27;
          for (auto i : x) h = hash_combine(h, std::hash<int64_t>{}(i));
          return h;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ClosedJaxpr>>) {
          return std::hash<const void*>{}(x.get());
        } else if constexpr (std::is_same_v<T, JaxprList>) {
          size_t h = 0x7a3b;
          for (auto& j : x) h = hash_combine(h, std::hash<const void*>{}(j.get()));
          return h;
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::hash<int>{}(static_cast<int>(x));
        } else {
          return std::hash<T>{}(x);
        }
      },
      v);
}

size_t Params::hash() const {
  size_t h = 0;
  for (auto& [k, v] : items_) h = hash_combine(hash_combine(h, std::hash<std::string>{}(k)), hash_value(v) ^ v.index());
  return h;
}

bool Params::operator==(const Params& o) const { return items_ == o.items_; }

std::string param_value_str(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, DType>)
          return std::string(dtype_name(x)) == "bool" ? "bool" : fmt::format("{}", [&] {
            switch (x) {
              case DType::float32:
                return "float32";
              case DType::float64:
                return "float64";
              case DType::float16:
                return "float16";
              case DType::bfloat16:
                return "bfloat16";
              case DType::int8:
                return "int8";
              case DType::int16:
                return "int16";
              case DType::int32:
                return "int32";
              case DType::int64:
                return "int64";
              case DType::uint8:
                return "uint8";
              case DType::uint16:
                return "uint16";
              case DType::uint32:
                return "uint32";
              case DType::uint64:
                return "uint64";
              default:
                return "bool";
            }
          }());
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return shape_str(x);
        else if constexpr (std::is_same_v<T, std::shared_ptr<const OpaqueParam>>) return x ? x->str() : "None";
        else if constexpr (std::is_same_v<T, JaxprList>) {
          std::vector<std::string> parts;
          for (auto& j : x) parts.push_back(j ? print_jaxpr(j->jaxpr, 2) : "None");
          return fmt::format("({})", fmt::join(parts, " "));
        } else return x ? print_jaxpr(x->jaxpr, 2) : "None";
      },
      v);
}

std::string Params::str() const {
  if (items_.empty()) return "";
  std::string s = "[";
  bool first = true;
  for (auto& [k, v] : items_) {
    if (!first) s += " ";
    first = false;
    s += k + "=" + param_value_str(v);
  }
  return s + "]";
}

}  // namespace jitx::detail
