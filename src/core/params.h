// Params: the small typed, printable, hashable map of a primitive's (or HLO instruction's) attributes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/errors.h"
#include "jitx/dtype.h"

namespace jitx::detail {

struct ClosedJaxpr;

/// A list of closed jaxprs (cond's `branches`).
using JaxprList = std::vector<std::shared_ptr<const ClosedJaxpr>>;

/// A value only the primitive that holds it understands (custom_jvp's rule, as C++ functions): compared and hashed
/// by identity, printed by its own str() (which must not depend on the address: jaxpr text keys the disk cache).
struct OpaqueParam {
  virtual ~OpaqueParam() = default;
  virtual std::string str() const = 0;
};

using ParamValue = std::variant<bool, int64_t, double, std::string, DType, std::vector<int64_t>,
                                std::shared_ptr<const ClosedJaxpr>, JaxprList, std::shared_ptr<const OpaqueParam>>;

class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, ParamValue>> items);

  Params& set(std::string name, ParamValue v);
  bool has(std::string_view name) const;
  const ParamValue& at(std::string_view name) const;

  int64_t get_int(std::string_view name) const { return std::get<int64_t>(at(name)); }
  int64_t get_int(std::string_view name, int64_t dflt) const { return has(name) ? get_int(name) : dflt; }
  bool get_bool(std::string_view name) const { return std::get<bool>(at(name)); }
  bool get_bool(std::string_view name, bool dflt) const { return has(name) ? get_bool(name) : dflt; }
  double get_double(std::string_view name) const { return std::get<double>(at(name)); }
  const std::string& get_str(std::string_view name) const { return std::get<std::string>(at(name)); }
  DType get_dtype(std::string_view name) const { return std::get<DType>(at(name)); }
  const std::shared_ptr<const ClosedJaxpr>& get_jaxpr(std::string_view name) const {
    return std::get<std::shared_ptr<const ClosedJaxpr>>(at(name));
  }
  const JaxprList& get_jaxprs(std::string_view name) const { return std::get<JaxprList>(at(name)); }
  const std::vector<int64_t>& get_ints(std::string_view name) const {
    return std::get<std::vector<int64_t>>(at(name));
  }
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> dflt) const {
    return has(name) ? get_ints(name) : dflt;
  }

  const std::vector<std::pair<std::string, ParamValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  size_t hash() const;
  bool operator==(const Params& o) const;
  /// "[axes=(1,) keepdims=False]" style, keys sorted; empty string when there are none.
  std::string str() const;

 private:
  std::vector<std::pair<std::string, ParamValue>> items_;  // sorted by name
};

std::string param_value_str(const ParamValue& v);
size_t hash_combine(size_t seed, size_t v);

}  // namespace jitx::detail
