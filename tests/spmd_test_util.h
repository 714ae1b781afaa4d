// Helpers shared by the SPMD and shard_map tests: the device-count guard, an error-message check, and f32
// literals in and out.
#pragma once
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/literal.h"
#include "jitx/device.h"

namespace jitx::testing {

/// Whether the process has n devices; warns (and the test returns) otherwise.
inline bool have(size_t n) {
  if (devices().size() >= n) return true;
  WARN("needs " << n << " devices (the test main sets eight unless JITX_CPU_DEVICE_COUNT says otherwise)");
  return false;
}

/// f throws an E whose message contains `has`.
template <class E>
void require_error(const std::function<void()>& f, const std::string& has) {
  try {
    f();
    FAIL("no error; wanted one containing: " << has);
  } catch (const E& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(has) != std::string::npos);
  }
}

/// How many `op` collectives ("all-reduce", "all-gather", ...) HLO text holds: synchronous ones and those the
/// optimiser made asynchronous (counted once, at their "-start").
inline size_t collective_count(const std::string& text, const std::string& op) {
  size_t n = 0;
  for (const std::string& form : {" " + op + "(", " " + op + "-start("})
    for (size_t at = 0; (at = text.find(form, at)) != std::string::npos; ++at) ++n;
  return n;
}

/// An f32 literal of `dims` with values uniform in [-1, 1) from `seed`.
inline detail::Literal random_f32(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  detail::Literal l = detail::Literal::make(DType::float32, dims);
  for (int64_t i = 0; i < l.size(); ++i) l.set_f64(i, u(g));
  return l;
}

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
