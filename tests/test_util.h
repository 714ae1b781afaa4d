// Shared helpers for the primitive, numpy and error tests: random inputs, eager+jit runs, checks against the
// tolerance table (tolerances.h).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "jitx/jitx.h"
#include "tolerances.h"

namespace jitx::testing {

/// One fixed seed for every test: failures reproduce exactly.
inline std::mt19937& rng() {
  static std::mt19937 g(20240611u);
  return g;
}

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> v{DType::float32, DType::float64, DType::bfloat16, DType::float16};
  return v;
}
inline const std::vector<DType>& int_dtypes() {
  static const std::vector<DType> v{DType::int8,  DType::int32,  DType::int64,
                                    DType::uint8, DType::uint32, DType::uint64};
  return v;
}

inline std::vector<double> uniform(size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng());
  return v;
}

/// An array of dtype d holding `v` (rounded to d), with the given shape.
inline Array make(const std::vector<double>& v, Shape shape, DType d) {
  return array_from_data(v.data(), DType::float64, std::move(shape), d);
}
inline Array make(const std::vector<double>& v, DType d) { return make(v, {static_cast<int64_t>(v.size())}, d); }
/// Integer arrays from int64 bit patterns (wrapped to d's width).
inline Array make_int(const std::vector<int64_t>& v, Shape shape, DType d) {
  return array_from_data(v.data(), DType::int64, std::move(shape), d);
}
inline Array make_int(const std::vector<int64_t>& v, DType d) {
  return make_int(v, {static_cast<int64_t>(v.size())}, d);
}

/// The values v as dtype d stores them (so references are computed on exactly the inputs the op sees).
inline std::vector<double> rounded(const std::vector<double>& v, DType d) { return make(v, d).to_vector<double>(); }

/// Wraps a 64-bit pattern to d's width: sign-extended for signed dtypes, zero-extended for unsigned.
inline int64_t wrap(uint64_t v, DType d) {
  int bits = dtype_bits(d);
  if (is_bool(d)) return v != 0;
  if (bits == 64) return static_cast<int64_t>(v);
  uint64_t m = (uint64_t{1} << bits) - 1;
  v &= m;
  if (is_signed_integer(d) && (v >> (bits - 1))) v |= ~m;
  return static_cast<int64_t>(v);
}

/// Random integers of dtype d (as wrapped int64 patterns), with the extremes and small values mixed in.
inline std::vector<int64_t> random_ints(size_t n, DType d) {
  std::uniform_int_distribution<uint64_t> u;
  std::uniform_int_distribution<int> small(-9, 9), pick(0, 3);
  std::mt19937_64 g(rng()());
  int bits = dtype_bits(d);
  uint64_t lo = is_signed_integer(d) ? (uint64_t{1} << (bits - 1)) : 0;  // min's bit pattern
  uint64_t hi = is_signed_integer(d) ? lo - 1 : ~uint64_t{0};            // max's bit pattern
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x;
    switch (i < 4 ? static_cast<int>(i) + 10 : pick(g)) {
      case 10: x = lo; break;
      case 11: x = hi; break;
      case 12: x = static_cast<uint64_t>(-1); break;
      case 13: x = 0; break;
      case 0: case 1: x = static_cast<uint64_t>(static_cast<int64_t>(small(g))); break;
      default: x = u(g); break;
    }
    v[i] = wrap(x, d);
  }
  return v;
}

/// Sets config().allow_excess_precision for a scope (read when a function compiles).
struct ExcessPrecision {
  bool was;
  explicit ExcessPrecision(bool on) : was(config().allow_excess_precision) { config().allow_excess_precision = on; }
  ~ExcessPrecision() { config().allow_excess_precision = was; }
};

/// Runs f eagerly and through jit on the same inputs; returns {eager, jitted}.
inline std::vector<Array> eager_and_jit(const std::function<Array(const std::vector<Array>&)>& f,
                                        const std::vector<Array>& xs) {
  Array e = f(xs);
  auto j = jit([f](std::vector<Array> a) { return f(a); });
  Array r = j(xs);
  return {e, r};
}

/// Checks got against ref elementwise with d's op bound (a reference on the same inputs); scale defaults to |ref|.
/// NaN must match NaN.
inline void check_close(const Array& got, const std::vector<double>& ref, DType d, const std::string& what,
                        const std::vector<double>& scale = {}) {
  INFO(what << " dtype=" << dtype_name(d));
  REQUIRE(got.dtype() == d);
  REQUIRE(got.size() == static_cast<int64_t>(ref.size()));
  auto g = got.to_vector<double>();
  Tol t = tol(d);
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double s = scale.empty() ? std::fabs(ref[i]) : scale[i];
    bool ok = std::isnan(ref[i]) ? std::isnan(g[i])
              : std::isinf(ref[i]) ? g[i] == ref[i]
                                   : std::fabs(g[i] - ref[i]) <= t.atol + t.rtol * s;
    if (!ok && bad++ < 5) FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << ref[i]);
  }
  CHECK(bad == 0);
}

/// Exact check of integer/bool results (read back as int64 patterns).
inline void check_exact(const Array& got, const std::vector<int64_t>& ref, DType d, const std::string& what) {
  INFO(what << " dtype=" << dtype_name(d));
  REQUIRE(got.dtype() == d);
  REQUIRE(got.size() == static_cast<int64_t>(ref.size()));
  auto g = got.to_vector<int64_t>();
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    if (g[i] != ref[i] && bad++ < 5) FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << ref[i]);
  CHECK(bad == 0);
}

/// Row-major multi-index helpers for references.
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int64_t a = static_cast<int64_t>(s.size()) - 1; a >= 0; --a) {
    idx[a] = i % s[a];
    i /= s[a];
  }
  return idx;
}

using Fn = std::function<Array(const std::vector<Array>&)>;

/// Runs f eagerly and under jit and checks both results against the reference.
inline void both_close(const Fn& f, const std::vector<Array>& xs, const std::vector<double>& ref, DType d,
                       const std::string& what, const std::vector<double>& scale = {}) {
  auto r = eager_and_jit(f, xs);
  check_close(r[0], ref, d, what + " (eager)", scale);
  check_close(r[1], ref, d, what + " (jit)", scale);
}
inline void both_exact(const Fn& f, const std::vector<Array>& xs, const std::vector<int64_t>& ref, DType d,
                       const std::string& what) {
  auto r = eager_and_jit(f, xs);
  check_exact(r[0], ref, d, what + " (eager)");
  check_exact(r[1], ref, d, what + " (jit)");
}

/// Central finite difference of sum(f(x) * w) against grad, for a float64 x (random weights w, step 1e-6).
inline void check_grad_fd(const std::function<Array(const Array&)>& f, const std::vector<double>& xv, const Shape& s,
                          const std::string& what) {
  const DType f64 = DType::float64;
  Array x = make(xv, s, f64);
  Array probe = f(x);
  auto w = uniform(static_cast<size_t>(probe.size()), -1, 1);
  Array wa = make(w, probe.shape(), f64);
  auto loss = [&](const Array& v) { return jnp::sum(jnp::multiply(f(v), wa)); };
  auto g = grad(loss)(x).to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) {
    auto xp = xv, xm = xv;
    xp[i] += 1e-6;
    xm[i] -= 1e-6;
    double fd = (loss(make(xp, s, f64)).item<double>() - loss(make(xm, s, f64)).item<double>()) / 2e-6;
    INFO(what << " element " << i);
    CHECK(g[i] == Approx(fd).margin(1e-6));
  }
}

}  // namespace jitx::testing
