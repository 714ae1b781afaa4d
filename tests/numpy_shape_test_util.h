// Helpers of the jnp shape-and-indexing tests (numpy_shape_test.cpp, numpy_shape_index_test.cpp): scattered
// inputs that both sides can rebuild, and checks of a result's shape, dtype, weak type and values, eager and jit.
#pragma once
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "jitx/numpy_shape.h"
#include "test_util.h"

namespace jitx::testing::shape_pack {

using A = const std::vector<Array>&;
inline constexpr DType f16 = DType::float16, f32 = DType::float32, f64 = DType::float64, i8 = DType::int8,
                       i16 = DType::int16, i32 = DType::int32, i64 = DType::int64, u8 = DType::uint8,
                       u32 = DType::uint32, u64 = DType::uint64, b1 = DType::bool_;
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Scattered values: element i is ((i + 1) * 7919 + seed * 104729) % 199 / 8 - 12.375 (multiples of 1/8, exact
/// in every float dtype); integers ((i + 1) * 7919 + seed * 104729) % 101 - 50 (their absolute values for
/// unsigned dtypes); bools true where that number % 7 < 3. The JAX references were computed on the same values.
inline Array R(Shape shape, DType d = DType::float64, int seed = 0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> k;
  for (int64_t i = 0; i < n; ++i) k.push_back(((i + 1) * 7919 + seed * 104729));
  if (is_floating(d)) {
    std::vector<double> v;
    for (int64_t x : k) v.push_back(double(x % 199) / 8 - 12.375);
    return array_from_data(v.data(), DType::float64, shape, d);
  }
  std::vector<int64_t> v;
  for (int64_t x : k) {
    int64_t m = is_bool(d) ? (x % 7 < 3) : x % 101 - 50;
    v.push_back(is_unsigned_integer(d) ? std::abs(m) : m);
  }
  return array_from_data(v.data(), DType::int64, shape, d);
}
/// Integer (or bool) data of the given shape and dtype (0-d: I({7}, Shape{}); a bare {} would be the DType below).
inline Array I(std::vector<int64_t> v, Shape shape, DType d = DType::int32) {
  return array_from_data(v.data(), DType::int64, std::move(shape), d);
}
inline Array I(std::vector<int64_t> v, DType d = DType::int32) {
  Shape s{static_cast<int64_t>(v.size())};
  return I(std::move(v), s, d);
}
/// A weak-typed array: a C++ double (JAX's Python float) broadcast to shape.
inline Array W(double v, Shape shape) { return jnp::broadcast_to(Array(v), std::move(shape)); }

/// The pair of tril_indices/triu_indices as a list.
inline std::vector<Array> pv(const std::pair<Array, Array>& p) { return {p.first, p.second}; }

struct Want {
  Shape shape;
  DType dtype;
  bool weak;
  std::vector<double> values;
};

inline void check_want(const Array& r, const Want& w, const std::string& what) {
  INFO(what);
  REQUIRE(r.shape() == w.shape);
  CHECK(r.dtype() == w.dtype);
  CHECK(r.weak_type() == w.weak);
  REQUIRE(r.size() == static_cast<int64_t>(w.values.size()));
  std::vector<double> got = r.astype(DType::float64).to_vector<double>();
  double rtol = w.dtype == DType::float64 ? 1e-13 : w.dtype == DType::float32 ? 1e-6 : 4e-3;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], e = w.values[i];
    bool ok = std::isnan(e) ? std::isnan(g) : g == e || std::fabs(g - e) <= rtol * std::max(1.0, std::fabs(e));
    if (!ok) FAIL_CHECK("element " << i << ": got " << g << ", want " << e);
  }
}

/// f's result eagerly and under jit (unless !with_jit) against JAX's.
inline void same(const std::function<Array(A)>& f, const std::vector<Array>& in, const Want& w, bool with_jit = true) {
  check_want(f(in), w, "eager");
  if (with_jit) check_want(jit([f](std::vector<Array> xs) { return f(xs); })(in), w, "jit");
}
inline void same(const std::function<std::vector<Array>(A)>& f, const std::vector<Array>& in,
                 const std::vector<Want>& w, bool with_jit = true) {
  for (int mode = 0; mode < (with_jit ? 2 : 1); ++mode) {
    std::vector<Array> r = mode ? jit([f](std::vector<Array> xs) { return f(xs); })(in) : f(in);
    REQUIRE(r.size() == w.size());
    for (size_t k = 0; k < r.size(); ++k)
      check_want(r[k], w[k], (mode ? "jit, part " : "eager, part ") + std::to_string(k));
  }
}

/// The gradient of sum(f(xs) * w) with respect to xs[k], w = R(shape of f(xs), f64, 5), eagerly and under jit.
inline void same_grad(const std::function<Array(A)>& f, const std::vector<Array>& in, size_t k, const Want& w) {
  auto g = [f, k](A xs) {
    auto loss = [f, xs, k](const Array& x) {
      std::vector<Array> v = xs;
      v[k] = x;
      Array out = f(v);
      return jnp::sum(jnp::multiply(out, R(out.shape(), DType::float64, 5)));
    };
    return grad(loss)(xs[k]);
  };
  same(g, in, w);
}

/// f refuses its input with E, eagerly and under jit (unless !with_jit), and the message names `name`.
template <class E>
void refuses(const std::function<Array(A)>& f, const std::vector<Array>& in, const std::string& name,
             bool with_jit = true) {
  for (int mode = 0; mode < (with_jit ? 2 : 1); ++mode) {
    INFO((mode ? "jit" : "eager"));
    try {
      Array r = mode ? jit([f](std::vector<Array> xs) { return f(xs); })(in) : f(in);
      FAIL_CHECK("accepted (JAX refuses it), gave " << r.aval().str());
    } catch (const E& e) {
      CHECK_THAT(e.what(), Catch::Contains("[" + name + "]") || Catch::Contains("in " + name + ")"));
    }
  }
}

}  // namespace jitx::testing::shape_pack
