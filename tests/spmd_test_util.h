// Literal helpers shared by the SPMD tests (spmd_ir_test.cpp, spmd_runtime_test.cpp): f32 values in and out.
#pragma once
#include <cstring>
#include <vector>

#include "core/literal.h"

namespace jitx::testing {

inline detail::Literal f32_literal(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  detail::Literal l = detail::Literal::make(DType::float32, dims);
  std::memcpy(l.data(), v.data(), v.size() * 4);
  return l;
}
inline std::vector<float> f32_values(const detail::Literal& l) {
  std::vector<float> v(static_cast<size_t>(l.size()));
  std::memcpy(v.data(), l.data(), v.size() * 4);
  return v;
}

}  // namespace jitx::testing
