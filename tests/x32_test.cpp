// The 32-bit mode (config().enable_x64 = false, JITX_ENABLE_X64=0): JAX's default dtype rules. Values and dtypes
// against JAX without x64 (jax 0.10.2, `import jax, jax.numpy as jnp` in a fresh process: x64 is off), eager and
// jit, and the flag in every cache key (jit, persistent cache).
#include <stdlib.h>

#include <cmath>
#include <filesystem>

#include "jitx/numpy_extra.h"
#include "jitx/random.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
const DType f32 = DType::float32, i32 = DType::int32, u32 = DType::uint32;
/// Turns x64 off for one test, restoring it after.
struct X32 {
  bool was = config().enable_x64;
  X32() { config().enable_x64 = false; }
  ~X32() { config().enable_x64 = was; }
};
void check_dtype(const Array& a, DType d, bool weak, const std::string& what) {
  INFO(what << ": got " << dtype_name(a.dtype()) << (a.weak_type() ? " weak" : ""));
  CHECK(a.dtype() == d);
  CHECK(a.weak_type() == weak);
}
}  // namespace

TEST_CASE("x32: C++ scalars are weak f32/i32, and a 64-bit int that does not fit is an error", "[x32]") {
  X32 g;
  // jnp.asarray(1.0): float32 weak; jnp.asarray(3): int32 weak
  check_dtype(Array(1.0), f32, true, "double");
  check_dtype(Array(int64_t{3}), i32, true, "int64_t");
  check_dtype(Array(3), i32, true, "int");
  CHECK(Array(0.1).item<double>() == static_cast<double>(0.1f));
  CHECK(Array(int64_t{-7}).item<int64_t>() == -7);
  // xi + 2**40 -> OverflowError in JAX
  CHECK_THROWS_WITH(Array(int64_t{1} << 40), Catch::Contains("int32") && Catch::Contains("enable_x64"));
  CHECK_THROWS_AS(Array::scalar_int(int64_t{1} << 33, DType::int64), TypeError);
  check_dtype(Array::scalar(2.5, DType::float64), f32, false, "Array::scalar(f64)");
}

TEST_CASE("x32: promotion never gives a 64-bit dtype (values and dtypes as JAX)", "[x32]") {
  X32 g;
  Array xi = make_int({1, 2, 3}, i32), xf = make({1, 2, 3}, f32), u = make_int({1, 2, 3}, u32);
  // xi + 2.5 -> float32 weak [3.5, 4.5, 5.5]
  auto r = eager_and_jit([](auto& v) { return jnp::add(v[0], 2.5); }, {xi});
  for (auto& a : r) {
    check_dtype(a, f32, true, "i32 + 2.5");
    check_close(a, {3.5, 4.5, 5.5}, f32, "i32 + 2.5");
  }
  // xf + 0.1 -> float32 [1.100000023841858, 2.0999999046325684, 3.0999999046325684]
  both_close([](auto& v) { return jnp::add(v[0], 0.1); }, {xf}, {1.100000023841858, 2.0999999046325684,
                                                                3.0999999046325684}, f32, "f32 + 0.1");
  check_dtype(jnp::multiply(xi, int64_t{3}), i32, false, "i32 * int64_t");
  // xi / xi -> float32
  both_close([](auto& v) { return jnp::true_divide(v[0], v[0]); }, {xi}, {1, 1, 1}, f32, "i32 / i32");
  // i32 + u32 -> int32; u32 + i8 -> int32; u8 + i8 -> int16; bool + 1 -> int32 weak
  both_exact([](auto& v) { return jnp::add(v[0], v[1]); }, {xi, u}, {2, 4, 6}, i32, "i32 + u32");
  check_dtype(jnp::add(u, make_int({1, 2, 3}, DType::int8)), i32, false, "u32 + i8");
  check_dtype(jnp::add(make_int({1}, DType::uint8), make_int({1}, DType::int8)), DType::int16, false, "u8 + i8");
  check_dtype(jnp::add(array(std::vector<bool>{true}), 1), i32, true, "bool + 1");
  // jnp.where(xi > 1, 1.5, 2) -> float32 weak
  check_dtype(jnp::where(jnp::greater(xi, 1), 1.5, 2), f32, true, "where(c, 1.5, 2)");
  // sqrt(i32) -> float32
  check_dtype(jnp::sqrt(xi), f32, false, "sqrt(i32)");
  CHECK(jnp::result_type({xi, u}) == i32);
  // An f64 array made while x64 was on: arithmetic on it gives float32.
  config().enable_x64 = true;
  Array a64 = make({0.1, 0.2}, DType::float64);
  config().enable_x64 = false;
  REQUIRE(a64.dtype() == DType::float64);
  both_close([](auto& v) { return jnp::add(v[0], v[0]); }, {a64}, {0.2, 0.4}, f32, "f64 + f64 without x64");
}

TEST_CASE("x32: creation functions, host data and astype give 32-bit arrays", "[x32]") {
  X32 g;
  const DType f64 = DType::float64, i64 = DType::int64;
  // jnp.arange(0., 5., 1., dtype=jnp.float64), jnp.zeros(3, jnp.float64), jnp.linspace(0, 1, 5, dtype=f64),
  // jnp.eye(2, dtype=f64): float32; jnp.full(2, 3, jnp.int64): int32
  check_close(arange(0, 5, 1, f64), {0, 1, 2, 3, 4}, f32, "arange f64");
  check_close(zeros({3}, f64), {0, 0, 0}, f32, "zeros f64");
  check_close(ones({2}, f64), {1, 1}, f32, "ones f64");
  check_close(linspace(0, 1, 5, true, f64), {0, 0.25, 0.5, 0.75, 1}, f32, "linspace f64");
  check_close(eye(2, -1, 0, f64), {1, 0, 0, 1}, f32, "eye f64");
  check_exact(full({2}, 3, i64), {3, 3}, i32, "full i64");
  check_exact(arange(4, i64), {0, 1, 2, 3}, i32, "arange i64");
  check_exact(iota(i64, {3}), {0, 1, 2}, i32, "iota i64");
  check_exact(lax::iota(DType::uint64, 2), {0, 1}, u32, "lax.iota u64");
  // jnp.array(np.array([0.1, 1/3, 1e-50, 1e300])) -> float32 [0.10000000149011612, 0.3333333432674408, 0., inf]
  check_close(array(std::vector<double>{0.1, 1.0 / 3, 1e-50, 1e300}), {0.10000000149011612, 0.3333333432674408, 0,
                                                                        INFINITY}, f32, "host f64");
  // jnp.array(np.array([2**40 + 3, -1, 2**31], np.int64)) -> int32 [3, -1, -2147483648] (wraps)
  check_exact(array(std::vector<int64_t>{(int64_t{1} << 40) + 3, -1, int64_t{1} << 31}), {3, -1, -2147483648LL}, i32,
              "host i64");
  // jnp.array(np.array([2**40 + 5, 7], np.uint64)) -> uint32 [5, 7]
  check_exact(array(std::vector<uint64_t>{(uint64_t{1} << 40) + 5, 7}), {5, 7}, u32, "host u64");
  // xf.astype(float64 / int64 / uint64) -> float32 / int32 / uint32; xi.astype(float64) -> float32
  Array xf = make({1.5, -2.25}, f32);
  both_close([](auto& v) { return jnp::astype(v[0], DType::float64); }, {xf}, {1.5, -2.25}, f32, "astype f64");
  both_exact([](auto& v) { return v[0].astype(DType::int64); }, {xf}, {1, -2}, i32, "astype i64");
  both_exact([](auto& v) { return lax::convert_element_type(jnp::abs(v[0]), DType::uint64); }, {xf}, {1, 2}, u32,
             "convert u64");
  both_close([](auto& v) { return jnp::astype(v[0], DType::float64); }, {make_int({3, -4}, i32)}, {3, -4}, f32,
             "i32 astype f64");
  // jnp.nonzero / argwhere / argmax: int32; jnp.mean(i32): float32; jnp.sum(u8): uint32
  Array xi = make_int({0, 2, 3}, i32);
  check_exact(jnp::nonzero(xi)[0], {1, 2}, i32, "nonzero");
  both_exact([](auto& v) { return jnp::argwhere(v[0], 3, -1); }, {xi}, {1, 2, -1}, i32, "argwhere");
  both_exact([](auto& v) { return jnp::flatnonzero(v[0], 2); }, {xi}, {1, 2}, i32, "flatnonzero");
  check_exact(jnp::argmax(xi), {2}, i32, "argmax");
  check_close(jnp::mean(xi), {5.0 / 3}, f32, "mean i32");
  check_exact(jnp::sum(make_int({200, 100}, DType::uint8)), {300}, u32, "sum u8");
  // jax.random.uniform(key, (2,), jnp.float64): float32; jax.random.randint(key, (2,), 0, 5, jnp.int64): int32
  Array key = random::PRNGKey(0);
  CHECK(random::uniform(key, {2}, DType::float64).dtype() == f32);
  CHECK(random::normal(key, {2}, DType::float64).dtype() == f32);
  Array ri = random::randint(key, {4}, 0, 5, DType::int64);
  CHECK(ri.dtype() == i32);
  for (auto v : ri.to_vector<int64_t>()) CHECK((v >= 0 && v < 5));
  // The same sampler in 32-bit mode equals the float32 one.
  CHECK(random::uniform(key, {3}, DType::float64).to_vector<float>() ==
        random::uniform(key, {3}, f32).to_vector<float>());
}

TEST_CASE("x32: random inputs, eager and jit, against float32 loops", "[x32]") {
  X32 g;
  auto xv = uniform(64, -3, 3);
  Array x = array(xv, {8, 8});  // std::vector<double> host data: float32
  REQUIRE(x.dtype() == f32);
  std::vector<double> ref;
  for (double v : xv) {
    float f = static_cast<float>(v);
    ref.push_back(static_cast<float>(f * 0.5f + 1.25f));
  }
  both_close([](auto& v) { return jnp::add(jnp::multiply(v[0], 0.5), 1.25); }, {x}, ref, f32, "x * 0.5 + 1.25");
  // sum of squares: float32 result against a double loop with float32 tolerance
  double ss = 0;
  for (double v : xv) ss += static_cast<float>(v) * static_cast<float>(v);
  both_close([](auto& v) { return jnp::sum(jnp::multiply(v[0], v[0])); }, {x}, {ss}, f32, "sum of squares");
  // grad in 32-bit mode stays float32
  Array gx = grad([](const Array& v) { return jnp::sum(jnp::multiply(v, 3.0)); })(x);
  check_close(gx, std::vector<double>(64, 3.0), f32, "grad");
}

TEST_CASE("x32: flipping enable_x64 recompiles a jitted function", "[x32]") {
  bool was = config().enable_x64;
  config().enable_x64 = true;
  auto f = jit([](Array v) { return jnp::multiply(jnp::astype(v, DType::float64), 2.0); }, {.name = "x64_flip"});
  Array x = make({1.5, 2.5}, f32);
  Array a = f(x);
  CHECK(a.dtype() == DType::float64);
  config().enable_x64 = false;
  Array b = f(x);
  CHECK(b.dtype() == f32);
  check_close(b, {3, 5}, f32, "x32 result");
  CHECK(f.num_compiles() == 2);
  config().enable_x64 = true;
  CHECK(f(x).dtype() == DType::float64);
  CHECK(f.num_compiles() == 2);  // both are cached
  // Eager ops follow the flag too.
  CHECK(jnp::add(x, 1.0).dtype() == f32);
  CHECK(jnp::astype(x, DType::float64).dtype() == DType::float64);
  config().enable_x64 = false;
  CHECK(jnp::astype(x, DType::float64).dtype() == f32);
  config().enable_x64 = was;
}

TEST_CASE("x32: the persistent compilation cache keys on enable_x64", "[x32]") {
  if (default_platform() != "cpu") return;
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/jitx_x32_cache_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string was_dir = config().compilation_cache_dir;
  bool was = config().enable_x64;
  config().compilation_cache_dir = tmpl;
  auto count = [&] {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(tmpl)) n += e.path().extension() == ".jxc";
    return n;
  };
  // The same f32 program (x * 3 + 1 on float32) in both modes: the same optimised module, so only the settings
  // tell the two entries apart.
  auto run = [] {
    auto f = jit([](Array v) { return jnp::add(jnp::multiply(v, 3.0f), 1.0f); }, {.name = "x32_disk"});
    return f(make({1, 2}, f32)).to_vector<float>();
  };
  config().enable_x64 = true;
  auto r1 = run();
  size_t n1 = count();
  config().enable_x64 = false;
  auto r2 = run();
  size_t n2 = count();
  config().enable_x64 = was;
  config().compilation_cache_dir = was_dir;
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  CHECK(r1 == std::vector<float>{4, 7});
  CHECK(r2 == r1);
  CHECK(n1 == 1);
  CHECK(n2 == 2);
}
