// Helpers shared by the tests that compare with generated JAX values (special_functions_test.cpp,
// scipy_stats_test.cpp): an elementwise comparison and the "d<k>:name" gradient cases.
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace jitx::testing {

using RefFn = std::function<Array(const std::vector<Array>&)>;

/// got (float64 read-back) against want: NaN for NaN, infinities exactly, else |got - want| <= atol + rtol |want|.
inline void check_values(const Array& got, const std::vector<double>& want, DType d, double rtol, double atol,
                         const std::string& what) {
  INFO(what << " dtype " << dtype_name(d));
  REQUIRE(got.dtype() == d);
  REQUIRE(got.size() == static_cast<int64_t>(want.size()));
  auto g = got.astype(DType::float64).to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = std::isnan(want[i])   ? std::isnan(g[i])
              : std::isinf(want[i]) ? g[i] == want[i]
                                    : std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok && bad++ < 5)
      FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << want[i] << " (relative error "
                            << std::fabs(g[i] - want[i]) / std::fabs(want[i]) << ")");
  }
  CHECK(bad == 0);
}

/// For a case named "d<k>:name", the gradient of sum(lookup(name)(args)) in argument k; else lookup(name).
inline RefFn ref_case_fn(const std::string& name, const std::function<RefFn(const std::string&)>& lookup) {
  if (name.size() > 3 && name[0] == 'd' && name[2] == ':') {
    size_t k = size_t(name[1] - '0');
    RefFn f = lookup(name.substr(3));
    return [f, k](const std::vector<Array>& a) {
      return grad([&](const Array& t) {
        std::vector<Array> b = a;
        b[k] = t;
        return jnp::sum(f(b));
      })(a[k]);
    };
  }
  return lookup(name);
}

}  // namespace jitx::testing
