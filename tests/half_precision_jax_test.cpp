// f16/bf16 arithmetic bit for bit as JAX 0.10.2 computes it on CPU (x64), eager and jit, on whichever JITX_PLATFORM
// runs: each op rounds to its type (XLA:CPU's float normalization keeps the bf16 round trips between ops; f16 is
// LLVM half arithmetic), a bf16 op converted to f32 keeps its f32 value (simplify-fp-conversions), logistic is
// 1 / (1 + exp(-x)) with each op rounded (XLA's logistic expander), jnp.sum of f16/bf16 accumulates in f32
// (JAX's upcast), and log10/log2 multiply by the reciprocal of log(base) folded in the dtype (XLA's simplifier).
// The expected bits were written by JAX (jax.jit of each function, the inputs below); the rank-deficient det
// gradients are checked against cofactor matrices computed here in exact integer arithmetic.
#include <cmath>
#include <cstdint>

#include "jitx/config.h"
#include "jitx/linalg.h"
#include "jitx/nn.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using Bits = std::vector<int64_t>;

Array from_bits(const Bits& b, DType d, Shape shape) {
  DType raw = dtype_bits(d) == 16 ? DType::uint16 : DType::uint32;
  return lax::bitcast_convert_type(make_int(b, std::move(shape), raw), d);
}
Bits bits_of(const Array& x) {
  DType raw = dtype_bits(x.dtype()) == 16 ? DType::uint16 : DType::uint32;
  return lax::bitcast_convert_type(x, raw).to_vector<int64_t>();
}

struct Case {
  const char* name;
  std::function<Array(const Array&)> f;
  Bits bf16, f16;         // JAX's output bits for each input dtype
  bool bf16_eager_1ulp = false;  // see the test
};

// jax.jit(f)(x) for x = [-3.7, -1.25, -0.3, 0.0, 0.45, 1.1, 2.6, 5.3, -7.9, 0.07, 3.3, -0.9] as bf16 and as f16.
const Bits kInBf16 = {0xc06d, 0xbfa0, 0xbe9a, 0x0000, 0x3ee6, 0x3f8d, 0x4026, 0x40aa, 0xc0fd, 0x3d8f, 0x4053, 0xbf66};
const Bits kInF16 = {0xc366, 0xbd00, 0xb4cd, 0x0000, 0x3733, 0x3c66, 0x4133, 0x454d, 0xc7e6, 0x2c7b, 0x429a, 0xbb33};

std::vector<Case> cases() {
  auto mat = [](const Array& x) { return jnp::reshape(x, {3, 4}); };
  auto absp1 = [](const Array& x) { return jnp::abs(x) + 1.0; };
  return {
      {"silu", [](const Array& x) { return nn::silu(x); },
       {0xbdb6, 0xbe8e, 0xbe03, 0x0000, 0x3e8c, 0x3f55, 0x401a, 0x40a9, 0xbb3f, 0x3d13, 0x404b, 0xbe85},
       {0xadb8, 0xb474, 0xb016, 0x0000, 0x3466, 0x3a99, 0x40d7, 0x4546, 0x9a00, 0x28a3, 0x425e, 0xb429}},
      {"sigmoid", [](const Array& x) { return nn::sigmoid(x); },
       {0x3cc5, 0x3e64, 0x3eda, 0x3f00, 0x3f1c, 0x3f41, 0x3f6d, 0x3f7e, 0x39c1, 0x3f04, 0x3f76, 0x3e94},
       {0x262f, 0x3320, 0x36cf, 0x3800, 0x38e3, 0x3a00, 0x3b73, 0x3bf6, 0x0e14, 0x3824, 0x3bb7, 0x34a0}},
      {"softmax", [mat](const Array& x) { return nn::softmax(mat(x), -1); },
       {0x3c45, 0x3e10, 0x3eba, 0x3efa, 0x3be6, 0x3c5e, 0x3d79, 0x3f6c, 0x375c, 0x3d19, 0x3f73, 0x3c6c},
       {0x222c, 0x3078, 0x35c6, 0x37cb, 0x1f57, 0x2305, 0x2be2, 0x3b57, 0x00d9, 0x28cd, 0x3b96, 0x2349}},
      {"log_softmax", [mat](const Array& x) { return nn::log_softmax(mat(x), -1); },
       {0xc08d, 0xbffc, 0xbf82, 0xbf37, 0xc09f, 0xc08a, 0xc033, 0xbda9, 0xc134, 0xc052, 0xbd5a, 0xc088},
       {0xc46b, 0xbfe0, 0xbc14, 0xb9c1, 0xc4f0, 0xc44a, 0xc193, 0xad82, 0xc9a1, 0xc291, 0xaad1, 0xc441}},
      {"log10", [absp1](const Array& x) { return jnp::log10(absp1(x)); },
       {0x3f2c, 0x3eb4, 0x3de7, 0x0000, 0x3e26, 0x3ea4, 0x3f0e, 0x3f4d, 0x3f73, 0x3cf1, 0x3f22, 0x3e8e},
       {0x3961, 0x35a3, 0x2f4a, 0x0000, 0x312a, 0x3527, 0x3874, 0x3a65, 0x3b98, 0x278e, 0x3912, 0x3476}},
      {"log2", [absp1](const Array& x) { return jnp::log2(absp1(x)); },
       {0x400f, 0x3f96, 0x3ec0, 0x0000, 0x3f0a, 0x3f89, 0x3fed, 0x402b, 0x404a, 0x3dc9, 0x4007, 0x3f6d},
       {0x4077, 0x3cae, 0x360d, 0x0000, 0x384a, 0x3c47, 0x3f64, 0x414f, 0x424e, 0x2e45, 0x4035, 0x3b69}},
      {"exp2", [](const Array& x) { return jnp::exp2(x); },
       {0x3d9e, 0x3ed8, 0x3f50, 0x3f80, 0x3faf, 0x4009, 0x40c1, 0x421d, 0x3b8a, 0x3f86, 0x411d, 0x3f0a},
       {0x2ced, 0x36ba, 0x3a7f, 0x3c00, 0x3d77, 0x4049, 0x4611, 0x50ef, 0x1c49, 0x3c33, 0x48ef, 0x3849}},
      {"squareplus", [](const Array& x) { return nn::squareplus(x); },
       {0x3e84, 0x3f0e, 0x3f5c, 0x3f80, 0x3fa0, 0x3fd8, 0x403c, 0x40b0, 0x3de0, 0x3f84, 0x4065, 0x3f25},
       {0x3410, 0x3870, 0x3ae3, 0x3c00, 0x3d00, 0x3ec4, 0x41e1, 0x457c, 0x3000, 0x3c24, 0x4329, 0x392c}},
      {"standardize", [mat](const Array& x) { return nn::standardize(mat(x), -1); },
       {0xbfd2, 0x3d30, 0x3f33, 0x3f67, 0xbf83, 0xbf2c, 0x3e00, 0x3fca, 0xbfce, 0x3eb3, 0x3f92, 0x3de7},
       {0xbe91, 0x2981, 0x3993, 0x3b39, 0xbc1a, 0xb96c, 0x300e, 0x3e4d, 0xbe69, 0x3597, 0x3c90, 0x2f28}, true},
  };
}

/// Cofactor matrix of an integer matrix (exact in double for small entries): C[i][j] = (-1)^(i+j) det(minor).
std::vector<double> cofactors(const std::vector<double>& a, int n) {
  std::function<double(const std::vector<double>&, int)> det = [&](const std::vector<double>& m, int k) -> double {
    if (k == 1) return m[0];
    double s = 0;
    for (int c = 0; c < k; ++c) {
      std::vector<double> sub;
      for (int r = 1; r < k; ++r)
        for (int cc = 0; cc < k; ++cc)
          if (cc != c) sub.push_back(m[r * k + cc]);
      s += (c % 2 ? -1 : 1) * m[c] * det(sub, k - 1);
    }
    return s;
  };
  std::vector<double> out(static_cast<size_t>(n * n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      std::vector<double> sub;
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
          if (r != i && c != j) sub.push_back(a[r * n + c]);
      out[i * n + j] = ((i + j) % 2 ? -1 : 1) * det(sub, n - 1);
    }
  return out;
}
}  // namespace

TEST_CASE("f16/bf16: nn and jnp functions match JAX bit for bit, eager and jit", "[numerics][half]") {
  for (DType d : {DType::bfloat16, DType::float16}) {
    Array x = from_bits(d == DType::bfloat16 ? kInBf16 : kInF16, d, {12});
    for (const Case& c : cases()) {
      INFO(c.name << " " << dtype_name(d));
      auto r = eager_and_jit([&](const std::vector<Array>& a) { return jnp::reshape(c.f(a[0]), {12}); }, {x});
      const Bits& want = d == DType::bfloat16 ? c.bf16 : c.f16;
      CHECK(bits_of(r[1]) == want);
      if (d == DType::bfloat16 && c.bf16_eager_1ulp) {
        // JAX jits nn.standardize even when called eagerly, so XLA keeps the f32 value of x * x under jnp.mean's
        // convert to f32; jitx's eager call runs op by op and rounds x * x to bf16 first: one ULP at most.
        auto got = bits_of(r[0]);
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) CHECK(std::llabs(got[i] - want[i]) <= 1);
      } else {
        CHECK(bits_of(r[0]) == want);
      }
    }
  }
}

TEST_CASE("bf16: an op converted to f32 keeps its f32 value under excess precision, f16 and off round it",
          "[numerics][half]") {
  auto f = [](const std::vector<Array>& a) { return jnp::astype(jnp::exp(a[0]), DType::float32); };
  // JAX: jax.jit(lambda x: jnp.exp(x).astype(jnp.float32)) of the inputs above.
  const Bits jax_bf16 = {0x3cc9e738, 0x3e92b0c2, 0x3f3d8059, 0x3f800000, 0x3fc89652, 0x40409139,
                         0x415613e0, 0x434adb53, 0x39c12a53, 0x3f8941c5, 0x41d8396f, 0x3ed07d3b};
  const Bits jax_f16 = {0x3ccac000, 0x3e92c000, 0x3f3da000, 0x3f800000, 0x3fc8c000, 0x40404000,
                        0x41576000, 0x43488000, 0x39c2a000, 0x3f894000, 0x41d92000, 0x3ed02000};
  Array xb = from_bits(kInBf16, DType::bfloat16, {12});
  Array xh = from_bits(kInF16, DType::float16, {12});
  Array jb = jit([f](std::vector<Array> a) { return f(a); })(std::vector<Array>{xb});
  Array jh = jit([f](std::vector<Array> a) { return f(a); })(std::vector<Array>{xh});
  // The f32 exp of the bf16 values: JAX's differs from the C library's by at most one f32 ULP, so check the
  // unrounded value against the exact f32 exp (not rounded to bf16) and JAX's bits within 1 ULP.
  auto got = bits_of(jb);
  int unrounded = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::llabs(got[i] - jax_bf16[i]) <= 1);  // JAX's f32 exp and jitx's: at most one f32 ULP apart
    unrounded += (got[i] & 0xffff) != 0;            // not a bf16 value: kept in f32
  }
  CHECK(unrounded == 11);  // all but exp(0) = 1
  CHECK(bits_of(jh) == jax_f16);  // f16: rounded, as XLA's half arithmetic
  {
    ExcessPrecision off(false);
    Array r = jit([f](std::vector<Array> a) { return f(a); })(std::vector<Array>{xb});
    for (int64_t b : bits_of(r)) CHECK((b & 0xffff) == 0);  // rounded to bf16 first
  }
  // An explicit round trip through bf16 always rounds (how users emulate bf16).
  Array y = make({1.0 / 3.0, 2.0 / 7.0}, DType::float32);
  Array rt = jit([](const Array& v) { return jnp::astype(jnp::astype(v, DType::bfloat16), DType::float32); })(y);
  for (int64_t b : bits_of(rt)) CHECK((b & 0xffff) == 0);
}

TEST_CASE("linalg: grad(det) of singular n >= 4 matrices is the cofactor matrix (JAX's cofactor solve)",
          "[linalg]") {
  struct Case {
    const char* name;
    int n;
    std::vector<double> a;
  };
  const Case cs[] = {
      {"rank 3 of 4 (row 2 = row 0 + row 1)", 4, {1, 2, 3, 4, 2, 0, 1, 1, 3, 2, 4, 5, 0, 1, 1, 2}},
      {"rank 2 of 4", 4, {1, 2, 3, 4, 2, 4, 6, 8, 0, 1, 0, 1, 1, 3, 3, 5}},
      {"rank 4 of 5", 5, {2, 1, 0, 3, 1, 1, 3, 1, 0, 2, 0, 1, 4, 1, 1, 3, 0, 1, 5, 0, 3, 4, 1, 3, 3}},
      {"regular 4x4 with a zero first pivot", 4, {0, 1, 2, 3, 1, 0, 1, 2, 2, 1, 0, 1, 3, 2, 1, 0}},
  };
  auto g = grad([](const Array& m) { return jnp::linalg::det(m); });
  for (const Case& c : cs) {
    INFO(c.name);
    Array a = make(c.a, {c.n, c.n}, DType::float64);
    auto want = cofactors(c.a, c.n);  // d det / d a = cof(a), exact integers here
    auto r = eager_and_jit([&](const std::vector<Array>& x) { return g(x[0]); }, {a});
    for (int k = 0; k < 2; ++k) {
      auto got = r[k].to_vector<double>();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO((k ? "jit" : "eager") << " element " << i << ": got " << got[i] << " want " << want[i]);
        CHECK(std::fabs(got[i] - want[i]) <= 1e-12 * 64);
      }
    }
  }
  // Batched, and the value is JAX's sign * exp(log|det|): det of the zero-pivot matrix is -12.
  Array b = make({0, 1, 2, 3, 1, 0, 1, 2, 2, 1, 0, 1, 3, 2, 1, 0, 1, 2, 3, 4, 2, 4, 6, 8, 0, 1, 0, 1, 1, 3, 3, 5},
                 {2, 4, 4}, DType::float64);
  auto d = jnp::linalg::det(b).to_vector<double>();
  CHECK(std::fabs(d[0] + 12) <= 1e-12);
  CHECK(std::fabs(d[1]) <= 1e-12);
  auto gsum = grad([](const Array& m) { return jnp::sum(jnp::linalg::det(m)); });
  auto gb = gsum(b).to_vector<double>();
  auto w0 = cofactors({0, 1, 2, 3, 1, 0, 1, 2, 2, 1, 0, 1, 3, 2, 1, 0}, 4);
  for (size_t i = 0; i < 16; ++i) CHECK(std::fabs(gb[i] - w0[i]) <= 1e-12 * 64);
  for (size_t i = 16; i < 32; ++i) CHECK(std::fabs(gb[i]) <= 1e-12 * 64);
  // Regular matrices: the gradient against central differences (float64).
  check_grad_fd([](const Array& m) { return jnp::linalg::det(m); },
                {0.3, -1.2, 0.8, 2.1, 1.5, 0.4, -0.7, 0.2, -0.6, 1.1, 0.9, -1.4, 0.5, 0.3, -2.2, 1.0}, {4, 4},
                "det 4x4");
}

TEST_CASE("linalg: empty f16/bf16 matrices give empty results, as JAX's", "[linalg]") {
  for (DType d : {DType::float16, DType::bfloat16}) {
    INFO(dtype_name(d));
    Array e = jnp::zeros({0, 0}, d);
    CHECK(jnp::linalg::qr(e, "r").R.shape() == Shape{0, 0});
    CHECK(jnp::linalg::pinv(e).shape() == Shape{0, 0});
    CHECK(jnp::linalg::qr(e, "r").R.dtype() == d);
    Array rect = jnp::zeros({3, 0}, d);
    CHECK(jnp::linalg::pinv(rect).shape() == Shape{0, 3});
    CHECK_THROWS_AS(jnp::linalg::qr(jnp::ones({2, 2}, d)), TypeError);  // non-empty: no f16 LAPACK, as JAX
  }
}

TEST_CASE("gelu (tanh form) of f16/bf16 is the f32 gelu rounded once, eager and jit", "[numerics][half]") {
  for (DType d : {DType::bfloat16, DType::float16}) {
    INFO(dtype_name(d));
    Array x = from_bits(d == DType::bfloat16 ? kInBf16 : kInF16, d, {12});
    Array want = jnp::astype(nn::gelu(jnp::astype(x, DType::float32), true), d);
    auto r = eager_and_jit([](const std::vector<Array>& a) { return nn::gelu(a[0], true); }, {x});
    CHECK(r[0].dtype() == d);
    CHECK(bits_of(r[0]) == bits_of(want));
    CHECK(bits_of(r[1]) == bits_of(want));
  }
}
