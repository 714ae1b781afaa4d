// jnp front end: broadcasting, JAX type promotion (weak types), reductions, linear algebra, shapes, nn.
#include <numeric>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {

void check_type(const Array& a, DType d, bool weak, const Shape& shape = {}) {
  CHECK(dtype_name(a.dtype()) == dtype_name(d));
  CHECK(a.weak_type() == weak);
  if (!shape.empty()) CHECK(a.shape() == shape);
}
}  // namespace

TEST_CASE("broadcasting follows NumPy's rules", "[numpy]") {
  auto x = uniform(3, -2, 2), y = uniform(4, -2, 2);
  std::vector<double> ref;
  for (double a : x)
    for (double b : y) ref.push_back(a * b);
  Fn f = [](auto& v) { return v[0] * v[1]; };
  both_close(f, {make(x, {3, 1}, float64), make(y, {1, 4}, float64)}, ref, float64, "(3,1)*(1,4)");
  both_close(f, {make(x, {3, 1}, float64), make(y, {4}, float64)}, ref, float64, "(3,1)*(4,)");
  auto z = uniform(24, -2, 2);
  ref.clear();
  for (int i = 0; i < 24; ++i) ref.push_back(z[i] + y[i % 4]);
  both_close([](auto& v) { return jnp::add(v[0], v[1]); }, {make(z, {2, 3, 4}, float64), make(y, {4}, float64)}, ref,
             float64, "(2,3,4)+(4,)");
  CHECK(jnp::broadcast_shapes({{2, 1, 4}, {3, 1}, {}}) == Shape{2, 3, 4});
  CHECK(jnp::broadcast_shapes({{0, 1}, {1, 5}}) == Shape{0, 5});
  CHECK(jnp::broadcast_to(make({1, 2}, {2}, float32), {3, 2}).to_vector<float>() ==
        std::vector<float>{1, 2, 1, 2, 1, 2});
}

TEST_CASE("JAX type promotion, weak types included", "[numpy]") {
  Array bf = make({1.5, -2}, bfloat16), h = make({1, 2}, float16), f = make({1, 2}, float32);
  Array i8 = make_int({1, -2}, int8), u8 = make_int({200, 3}, uint8), i32 = make_int({1, 2}, int32);
  Array u32 = make_int({1, 2}, uint32), i64 = make_int({1, 2}, int64), b = make_int({1, 0}, bool_);
  // Python scalars are weak: they take the array's type.
  check_type(2.0 * bf, bfloat16, false, {2});
  check_type(bf * 2, bfloat16, false);
  // C++ literals follow JAX's x64 mode: a double is a weak f64, so an int array + 1.5 is a weak f64
  // (and 1.5f, a weak f32, gives a weak f32).
  check_type(i32 + 1.5, float64, true);
  check_type(i32 + 1.5f, float32, true);
  check_type(i8 + 1, int8, false);
  check_type(u8 * 2, uint8, false);
  check_type(h - 1.0, float16, false);
  // Strong dtypes meet on the lattice.
  check_type(u8 + i8, int16, false);
  check_type(u32 + i32, int64, false);
  check_type(i32 + h, float16, false);
  check_type(i64 + bf, bfloat16, false);
  check_type(h + bf, float32, false);
  check_type(f + make({1, 2}, float64), float64, false);
  check_type(u8 + b, uint8, false);
  // bool stays bool for logical ops and jnp.add (which is or on bools).
  Array b2 = make_int({1, 1}, bool_);
  check_type(b & b2, bool_, false);
  check_type(b | b2, bool_, false);
  check_type(jnp::logical_and(b, b2), bool_, false);
  check_type(b + b2, bool_, false);
  CHECK((b + b2).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
  // Two weak scalars stay weak; a weak int and a weak float give a weak float.
  check_type(Array(2) * Array(3), int32, true);
  check_type(Array(2) * Array(0.5f), float32, true);
  check_type(Array(2) * Array(0.5), float64, true);
  check_type(Array(2) * bf, bfloat16, false);
  CHECK(jnp::result_type({u8, i8, Array(1.0f)}) == float32);
  CHECK(jnp::result_type({bf, Array(1)}) == bfloat16);
  // Values are computed in the promoted type: 200 (u8) + -2 (i8) as i16, not wrapped in 8 bits.
  CHECK((u8 + i8).to_vector<int64_t>() == std::vector<int64_t>{201, 1});
  // true_divide of ints gives a float; comparisons give bool.
  check_type(i32 / i32, float32, false);
  check_type(i32 < 1, bool_, false);
  // Under jit the same types come out.
  auto j = jit([](Array x, Array y) { return std::make_pair(2.0 * x, x + y); });
  auto [p, q] = j(bf, i8);
  check_type(p, bfloat16, false);
  check_type(q, bfloat16, false);
}

TEST_CASE("jnp reductions with axes and keepdims", "[numpy]") {
  auto x = uniform(24, -3, 3);
  Array a = make(x, {2, 3, 4}, float64);
  // sum over (0, 2) with keepdims -> (1, 3, 1); negative axes are allowed.
  std::vector<double> s(3, 0), mx(3, -INFINITY), pr(3, 1);
  for (int i = 0; i < 24; ++i)
    s[(i / 4) % 3] += x[i], mx[(i / 4) % 3] = std::max(mx[(i / 4) % 3], x[i]), pr[(i / 4) % 3] *= x[i];
  auto r = jnp::sum(a, {0, -1}, true);
  CHECK(r.shape() == Shape{1, 3, 1});
  check_close(r, s, float64, "sum keepdims");
  check_close(jnp::max(a, {2, 0}), mx, float64, "max");
  check_close(jnp::prod(a, {0, 2}), pr, float64, "prod");
  check_close(a.sum(), {std::accumulate(x.begin(), x.end(), 0.0)}, float64, "sum all");
  CHECK(a.sum().shape() == Shape{});
  CHECK(a.min({}, true).shape() == Shape{1, 1, 1});
  // Small ints and bools accumulate in the default int, int64 (uint64 for unsigned), as in JAX x64.
  check_type(jnp::sum(make_int({100, 100, 100}, int8)), int64, false);
  CHECK(jnp::sum(make_int({100, 100, 100}, int8)).item<int>() == 300);
  CHECK(jnp::sum(make_int({200, 200}, uint8)).item<int>() == 400);
  check_type(jnp::sum(make_int({200, 200}, uint8)), uint64, false);
  check_type(jnp::sum(make_int({1, 1, 0}, bool_)), int64, false);
  CHECK(jnp::sum(make_int({1, 1, 0}, bool_)).item<int>() == 2);
  Array bb = make_int({1, 0, 1, 1, 1, 1}, {2, 3}, bool_);
  CHECK(jnp::all(bb, {1}).to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK(jnp::any(make({0, 0, 0.5, 0}, {2, 2}, float32), {0}).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  // argmax/argmin: flattened by default, keepdims.
  Array m = make({1, 7, 3, 7, -2, 0}, {2, 3}, float32);
  CHECK(jnp::argmax(m).item<int>() == 1);
  CHECK(jnp::argmin(m).item<int>() == 4);
  CHECK(jnp::argmax(m, 0).to_vector<int>() == std::vector<int>{1, 0, 0});
  CHECK(jnp::argmin(m, -1, true).shape() == Shape{2, 1});
  CHECK(jnp::argmax(m, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(jnp::cumsum(m).to_vector<float>() == std::vector<float>{1, 8, 11, 18, 16, 16});
  CHECK(jnp::cumprod(m, 1).to_vector<float>() == std::vector<float>{1, 7, 21, 7, -14, 0});
}

TEST_CASE("mean, var and std against double loops", "[numpy]") {
  for (DType d : float_dtypes()) {
    auto x = rounded(uniform(20, -4, 6), d);
    Array a = make(x, {4, 5}, d);
    std::vector<double> mean(4, 0), var(4, 0), var1(4, 0), sd(4, 0), scale(4, 0);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 5; ++j) mean[i] += x[i * 5 + j] / 5, scale[i] += std::fabs(x[i * 5 + j]) / 5;
      for (int j = 0; j < 5; ++j) var[i] += std::pow(x[i * 5 + j] - mean[i], 2) / 5;
      var1[i] = var[i] * 5 / 4;
      sd[i] = std::sqrt(var[i]);
    }
    std::vector<double> vscale;
    for (double s : scale) vscale.push_back(s * s * 4);
    both_close([](auto& v) { return jnp::mean(v[0], {1}); }, {a}, mean, d, "mean", scale);
    both_close([](auto& v) { return jnp::var(v[0], {-1}); }, {a}, var, d, "var", vscale);
    both_close([](auto& v) { return jnp::var(v[0], {1}, false, 1); }, {a}, var1, d, "var ddof=1", vscale);
    both_close([](auto& v) { return jnp::std(v[0], {1}); }, {a}, sd, d, "std", scale);
    both_close([](auto& v) { return v[0].mean({1}, true); }, {a}, mean, d, "Array::mean keepdims", scale);
  }
  // Integers average as float32.
  Array i = make_int({1, 2, 3, 4}, int32);
  check_type(jnp::mean(i), float32, false);
  CHECK(jnp::mean(i).item<double>() == 2.5);
  CHECK(jnp::var(i).item<double>() == Approx(1.25));
}

TEST_CASE("mean and var of 16-bit floats accumulate in float32 and round once", "[numpy]") {
  // 4096 values near 1: a bfloat16 running sum would stall at 256 (its 8-bit mantissa) and give a mean near 1/16;
  // JAX sums in float32, so the mean is the true mean rounded once to the input dtype.
  for (DType d : {bfloat16, float16}) {
    INFO(dtype_name(d));
    auto x = rounded(uniform(4096, 0.75, 1.25), d);
    double mean = 0, var = 0;
    for (double v : x) mean += v / 4096;
    for (double v : x) var += (v - mean) * (v - mean) / 4096;
    Array a = make(x, {4096}, d);
    for (bool jitted : {false, true}) {
      Array m = jitted ? jit([](Array v) { return jnp::mean(v); })(a) : jnp::mean(a);
      Array s2 = jitted ? jit([](Array v) { return jnp::var(v); })(a) : jnp::var(a);
      check_type(m, d, false);
      check_type(s2, d, false);
      double ulp = d == bfloat16 ? 1.0 / 128 : 1.0 / 1024;  // one unit in the last place near 1
      CHECK(std::fabs(m.item<double>() - mean) <= ulp * std::fabs(mean));
      CHECK(std::fabs(s2.item<double>() - var) <= 2 * ulp * var);
    }
  }
}

TEST_CASE("logsumexp of rows that are all -inf or hold +inf", "[numpy]") {
  const double inf = INFINITY;
  Array a = make({-inf, -inf, -inf, 1.5, -inf, 0.25, inf, 2.0, -inf}, {3, 3}, float32);
  for (bool jitted : {false, true}) {
    auto r = (jitted ? jit([](Array v) { return nn::logsumexp(v, {1}); })(a) : nn::logsumexp(a, {1}))
                 .to_vector<double>();
    CHECK(r[0] == -inf);
    CHECK(r[1] == Approx(std::log(std::exp(1.5) + std::exp(0.25))).epsilon(1e-6));
    CHECK(r[2] == inf);
  }
  // The shift is held constant for differentiation: the gradient is softmax, finite on finite rows.
  Array b = make({0.5, -1.0, 2.0}, {3}, float32);
  auto g = grad([](Array v) { return nn::logsumexp(v, {0}); })(b).to_vector<double>();
  double z = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
  CHECK(g[0] == Approx(std::exp(0.5) / z).epsilon(1e-5));
  CHECK(g[2] == Approx(std::exp(2.0) / z).epsilon(1e-5));
}

TEST_CASE("matmul, dot and einsum", "[numpy]") {
  auto ref_mm = [](const std::vector<double>& a, const std::vector<double>& b, int n, int k, int m) {
    std::vector<double> c(n * m, 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        for (int t = 0; t < k; ++t) c[i * m + j] += a[i * k + t] * b[t * m + j];
    return c;
  };
  auto A = uniform(12, -2, 2), B = uniform(20, -2, 2), v3 = uniform(3, -2, 2), v4 = uniform(4, -2, 2);
  Array a = make(A, {3, 4}, float64), b = make(B, {4, 5}, float64);
  Fn mm = [](auto& v) { return jnp::matmul(v[0], v[1]); };
  both_close(mm, {a, b}, ref_mm(A, B, 3, 4, 5), float64, "2-D @ 2-D");
  both_close(mm, {a, make(v4, float64)}, ref_mm(A, v4, 3, 4, 1), float64, "2-D @ 1-D");
  both_close(mm, {make(v3, float64), a}, ref_mm(v3, A, 1, 3, 4), float64, "1-D @ 2-D");
  auto r11 = jnp::matmul(make(v4, float64), make(v4, float64));
  CHECK(r11.shape() == Shape{});
  check_close(r11, ref_mm(v4, v4, 1, 4, 1), float64, "1-D @ 1-D");
  // Batched with broadcasting: (2,1,3,4) @ (5,4,2) -> (2,5,3,2).
  auto X = uniform(24, -1, 1), Y = uniform(40, -1, 1);
  std::vector<double> ref;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 5; ++q) {
      auto c = ref_mm(std::vector<double>(X.begin() + p * 12, X.begin() + p * 12 + 12),
                      std::vector<double>(Y.begin() + q * 8, Y.begin() + q * 8 + 8), 3, 4, 2);
      ref.insert(ref.end(), c.begin(), c.end());
    }
  auto rb = jnp::matmul(make(X, {2, 1, 3, 4}, float64), make(Y, {5, 4, 2}, float64));
  CHECK(rb.shape() == Shape{2, 5, 3, 2});
  both_close(mm, {make(X, {2, 1, 3, 4}, float64), make(Y, {5, 4, 2}, float64)}, ref, float64, "batched broadcast");
  // Mixed dtypes promote; a @ b with ints stays int.
  check_type(jnp::matmul(make_int({1, 2}, int8), make({1, 2}, float32)), float32, false);
  CHECK(jnp::matmul(make_int({1, 2, 3, 4}, {2, 2}, int32), make_int({5, 6}, int32)).to_vector<int>() ==
        std::vector<int>{17, 39});
  // dot: 2-D is matmul; N-D contracts a's last axis with b's second-to-last.
  both_close([](auto& v) { return jnp::dot(v[0], v[1]); }, {a, b}, ref_mm(A, B, 3, 4, 5), float64, "dot 2-D");
  auto D = uniform(2 * 5 * 4 * 3, -1, 1);
  auto nd = jnp::dot(make(A, {1, 3, 4}, float64), make(D, {2, 5, 4, 3}, float64));
  REQUIRE(nd.shape() == Shape{1, 3, 2, 5, 3});
  auto ndv = nd.to_vector<double>();
  double want = 0;
  for (int t = 0; t < 4; ++t) want += A[2 * 4 + t] * D[((1 * 5 + 3) * 4 + t) * 3 + 1];  // out[0,2,1,3,1]
  CHECK(ndv[((2 * 2 + 1) * 5 + 3) * 3 + 1] == Approx(want).epsilon(1e-12));
  CHECK(jnp::dot(make({2}, {}, float32), make({1, 2}, float32)).to_vector<float>() == std::vector<float>{2, 4});
  // einsum
  both_close([](auto& v) { return jnp::einsum("ij,jk->ik", {v[0], v[1]}); }, {a, b}, ref_mm(A, B, 3, 4, 5), float64,
             "einsum ij,jk->ik");
  both_close([](auto& v) { return jnp::einsum("i,i->", {v[0], v[0]}); }, {make(v4, float64)}, ref_mm(v4, v4, 1, 4, 1),
             float64, "einsum i,i->");
  std::vector<double> at;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) at.push_back(A[i * 4 + j]);
  both_close([](auto& v) { return jnp::einsum("ij->ji", {v[0]}); }, {a}, at, float64, "einsum ij->ji");
  auto Z = uniform(2 * 4 * 5, -1, 1);
  ref.clear();
  for (int p = 0; p < 2; ++p) {
    auto c = ref_mm(std::vector<double>(X.begin() + p * 12, X.begin() + p * 12 + 12),
                    std::vector<double>(Z.begin() + p * 20, Z.begin() + p * 20 + 20), 3, 4, 5);
    ref.insert(ref.end(), c.begin(), c.end());
  }
  both_close([](auto& v) { return jnp::einsum("bij,bjk->bik", {v[0], v[1]}); },
             {make(X, {2, 3, 4}, float64), make(Z, {2, 4, 5}, float64)}, ref, float64, "einsum bij,bjk->bik");
  // three operands: ij,jk,kl->li
  auto C = uniform(10, -1, 1);
  auto abc = ref_mm(ref_mm(A, B, 3, 4, 5), C, 3, 5, 2);
  std::vector<double> li;
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < 3; ++i) li.push_back(abc[i * 2 + l]);
  both_close([](auto& v) { return jnp::einsum("ij,jk,kl->li", {v[0], v[1], v[2]}); }, {a, b, make(C, {5, 2}, float64)},
             li, float64, "einsum three operands");
  std::vector<double> rows(3, 0);
  for (int i = 0; i < 12; ++i) rows[i / 4] += A[i];
  both_close([](auto& v) { return jnp::einsum("ij->i", {v[0]}); }, {a}, rows, float64, "einsum ij->i");
}

TEST_CASE("shape functions: reshape, expand_dims, squeeze, concatenate, stack, flip, slice_axis", "[numpy]") {
  Array a = make_int(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}, int32);
  CHECK(jnp::reshape(a, {-1, 6}).shape() == Shape{2, 6});
  CHECK(jnp::reshape(a, {2, -1, 2}).shape() == Shape{2, 3, 2});
  CHECK(a.reshape({-1}).to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(jnp::ravel(a).shape() == Shape{12});
  CHECK(jnp::expand_dims(a, {0, -1}).shape() == Shape{1, 3, 4, 1});
  CHECK(jnp::expand_dims(a, {1}).shape() == Shape{3, 1, 4});
  Array s = zeros({1, 3, 1, 2});
  CHECK(jnp::squeeze(s).shape() == Shape{3, 2});
  CHECK(jnp::squeeze(s, {-2}).shape() == Shape{1, 3, 2});
  CHECK(jnp::transpose(a).to_vector<int>() == std::vector<int>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(a.T().shape() == Shape{4, 3});
  CHECK(jnp::swapaxes(zeros({2, 3, 4}), 0, -1).shape() == Shape{4, 3, 2});
  Array b = make_int({100, 101, 102, 103}, {1, 4}, int8);
  auto c = jnp::concatenate({a, b}, 0);
  check_type(c, int32, false, {4, 4});
  CHECK(c.to_vector<int>()[12] == 100);
  CHECK(jnp::concatenate({a, a}, -1).shape() == Shape{3, 8});
  auto st = jnp::stack({make({1, 2}, float32), make({3, 4}, float32), make({5, 6}, float32)}, 1);
  CHECK(st.shape() == Shape{2, 3});
  CHECK(st.to_vector<float>() == std::vector<float>{1, 3, 5, 2, 4, 6});
  CHECK(jnp::stack({a, a}).shape() == Shape{2, 3, 4});
  CHECK(jnp::flip(a, {0}).to_vector<int>()[0] == 8);
  CHECK(jnp::flip(a).to_vector<int>()[0] == 11);
  CHECK(jnp::slice_axis(a, 1, 1, std::nullopt, 2).to_vector<int>() == std::vector<int>{1, 3, 5, 7, 9, 11});
  CHECK(jnp::slice_axis(a, 0, -2, 100).to_vector<int>() == std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(jnp::slice_axis(a, 0, 2, 1).size() == 0);
  CHECK(a[1].to_vector<int>() == std::vector<int>{4, 5, 6, 7});
  CHECK(a[-1][-1].item<int>() == 11);
}

TEST_CASE("where, clip, remainder and floor_divide with Python sign rules", "[numpy]") {
  Array c = make_int({1, 0, 1, 0}, bool_);
  auto w = jnp::where(c, make({1, 2, 3, 4}, float32), Array(-1.0));
  check_type(w, float32, false);
  CHECK(w.to_vector<float>() == std::vector<float>{1, -1, 3, -1});
  // The condition broadcasts too, and a non-bool condition means != 0.
  CHECK(jnp::where(make({0, 2}, {2, 1}, float32), Array(1), Array(0)).to_vector<int>() == std::vector<int>{0, 1});
  auto cl = jnp::clip(make({-3, 0.5, 7}, float32), Array(-1.0), Array(2.0));
  CHECK(cl.to_vector<float>() == std::vector<float>{-1, 0.5, 2});
  CHECK(jnp::clip(make_int({-3, 5}, int32), std::nullopt, Array(2)).to_vector<int>() == std::vector<int>{-3, 2});
  // remainder / floor_divide: Python semantics on every sign combination, ints and floats.
  std::vector<int64_t> x{7, -7, 7, -7, 6, -6, 0, 1}, y{3, 3, -3, -3, 3, -3, 5, -5};
  std::vector<int64_t> rem_ref, fdiv_ref;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t q = x[i] / y[i], r = x[i] % y[i];
    if (r != 0 && ((r < 0) != (y[i] < 0))) r += y[i], q -= 1;
    rem_ref.push_back(r), fdiv_ref.push_back(q);
  }
  for (DType d : {int8, int32, int64}) {
    both_exact([](auto& v) { return jnp::remainder(v[0], v[1]); }, {make_int(x, d), make_int(y, d)}, rem_ref, d,
               "int remainder");
    both_exact([](auto& v) { return v[0] % v[1]; }, {make_int(x, d), make_int(y, d)}, rem_ref, d, "operator%");
    both_exact([](auto& v) { return jnp::floor_divide(v[0], v[1]); }, {make_int(x, d), make_int(y, d)}, fdiv_ref, d,
               "int floor_divide");
  }
  for (DType d : {float32, float64}) {
    std::vector<double> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    xf.push_back(5.5), yf.push_back(-2);  // 5.5 mod -2 = -0.5, 5.5 // -2 = -3
    std::vector<double> rr(rem_ref.begin(), rem_ref.end()), fr(fdiv_ref.begin(), fdiv_ref.end());
    rr.push_back(-0.5), fr.push_back(-3);
    both_close([](auto& v) { return jnp::remainder(v[0], v[1]); }, {make(xf, d), make(yf, d)}, rr, d,
               "float remainder");
    both_close([](auto& v) { return jnp::floor_divide(v[0], v[1]); }, {make(xf, d), make(yf, d)}, fr, d,
               "float floor_divide");
  }
  CHECK(jnp::floor_divide(make_int({7, 200}, uint8), make_int({2, 7}, uint8)).to_vector<int>() ==
        std::vector<int>{3, 28});
}

TEST_CASE("creation functions", "[numpy]") {
  check_type(zeros({2, 3}), float32, false, {2, 3});
  CHECK(zeros({2, 3}, int8).to_vector<int>() == std::vector<int>(6, 0));
  CHECK(ones({3}, bfloat16).to_vector<float>() == std::vector<float>(3, 1));
  check_type(full({2}, 2.5, float16), float16, false);
  CHECK(full({2}, 2.5, float16).to_vector<double>() == std::vector<double>{2.5, 2.5});
  CHECK(zeros({0, 4}).size() == 0);
  Array x = make({1, 2, 3}, float64);
  check_type(zeros_like(x), float64, false, {3});
  CHECK(full_like(x, -7).to_vector<double>() == std::vector<double>(3, -7));
  CHECK(ones_like(make_int({1}, uint8)).dtype() == uint8);
  CHECK(arange(5).to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(arange(5).dtype() == int32);
  CHECK(arange(2, 11, 3).to_vector<int>() == std::vector<int>{2, 5, 8});
  CHECK(arange(5, 1, -2).to_vector<int>() == std::vector<int>{5, 3});
  CHECK(arange(0, 1, 0.25, float32).to_vector<float>() == std::vector<float>{0, 0.25, 0.5, 0.75});
  CHECK(arange(3, 3).size() == 0);
  auto ls = linspace(0, 1, 5).to_vector<float>();
  CHECK(ls == std::vector<float>{0, 0.25, 0.5, 0.75, 1});
  CHECK(linspace(0, 1, 4, false, float64).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(linspace(2, 3, 1).to_vector<float>() == std::vector<float>{2});
  CHECK(eye(3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(eye(2, 3, 1, int32).to_vector<int>() == std::vector<int>{0, 1, 0, 0, 0, 1});
  CHECK(eye(3, 2, -1).to_vector<float>() == std::vector<float>{0, 0, 1, 0, 0, 1});
  CHECK(iota(int32, {2, 3}, 1).to_vector<int>() == std::vector<int>{0, 1, 2, 0, 1, 2});
  CHECK(array<int>({1, 2, 3}).dtype() == int32);
  CHECK(array<double>({1, 2}).dtype() == float64);
  CHECK(array<bool>({true, false}).to_vector<int>() == std::vector<int>{1, 0});
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  CHECK(array(data, {2, 3}).shape() == Shape{2, 3});
  CHECK(array(data, {3, 2}, float16).dtype() == float16);
}

TEST_CASE("item and to_vector conversions", "[numpy]") {
  Array f = make({-1.75, 2.5, 300}, float32);
  CHECK(f.to_vector<double>() == std::vector<double>{-1.75, 2.5, 300});
  CHECK(f.to_vector<int>() == std::vector<int>{-1, 2, 300});  // truncation toward zero
  CHECK(f.to_vector<int8_t>() == std::vector<int8_t>{-1, 2, 127});  // saturating
  CHECK(f.to_vector<uint8_t>() == std::vector<uint8_t>{0, 2, 255});
  CHECK(f.to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(make_int({-1}, {}, int64).item<uint64_t>() == ~uint64_t{0});
  CHECK(make_int({-1}, {1, 1}, int8).item<int>() == -1);
  CHECK(make({0.1}, {}, bfloat16).item<float>() == bfloat16_to_float(float_to_bfloat16(0.1f)));
  CHECK(Array(3).item<int>() == 3);
  CHECK(Array(2.5).item<double>() == 2.5);
  CHECK(Array(true).item<bool>());
  CHECK(static_cast<bool>(make({0.0}, {}, float32)) == false);
  Array big = make_int({(int64_t{1} << 62) + 1}, {}, int64);
  CHECK(big.item<int64_t>() == (int64_t{1} << 62) + 1);
}

TEST_CASE("operator overloads", "[numpy]") {
  auto xv = uniform(6, -3, 3), yv = uniform(6, 0.5, 3);
  Array x = make(xv, float64), y = make(yv, float64);
  std::vector<double> r;
  auto each = [&](auto f) {
    r.clear();
    for (int i = 0; i < 6; ++i) r.push_back(f(xv[i], yv[i]));
    return r;
  };
  check_close(x + y, each([](double a, double b) { return a + b; }), float64, "+");
  check_close(x - y, each([](double a, double b) { return a - b; }), float64, "-");
  check_close(x * y, each([](double a, double b) { return a * b; }), float64, "*");
  check_close(x / y, each([](double a, double b) { return a / b; }), float64, "/");
  check_close(-x, each([](double a, double) { return -a; }), float64, "unary -");
  check_close(1.0 - x, each([](double a, double) { return 1 - a; }), float64, "scalar - array");
  check_close(2 / y, each([](double, double b) { return 2 / b; }), float64, "scalar / array");
  Array z = x;
  z += y;
  z *= 2;
  z -= 1;
  z /= 4;
  check_close(z, each([](double a, double b) { return ((a + b) * 2 - 1) / 4; }), float64, "compound assignment");
  CHECK((x < y).dtype() == bool_);
  std::vector<int64_t> lt, ge, eq;
  for (int i = 0; i < 6; ++i) lt.push_back(xv[i] < yv[i]), ge.push_back(xv[i] >= yv[i]), eq.push_back(false);
  check_exact(x < y, lt, bool_, "<");
  check_exact(x >= y, ge, bool_, ">=");
  check_exact(x == y, eq, bool_, "==");
  check_exact(x != x, std::vector<int64_t>(6, 0), bool_, "!=");
  Array i = make_int({12, -5}, int32), j = make_int({10, 3}, int32);
  check_exact(i & j, {8, 3}, int32, "&");
  check_exact(i | j, {14, -5}, int32, "|");
  check_exact(i ^ j, {6, -8}, int32, "^");
  check_exact(~i, {-13, 4}, int32, "~");
  check_exact(!make_int({0, 2}, int32), {1, 0}, bool_, "! on ints");
  check_exact(jnp::left_shift(i, Array(2)), {48, -20}, int32, "left_shift");
  check_exact(jnp::right_shift(i, Array(1)), {6, -3}, int32, "right_shift (arithmetic on signed)");
  check_exact(jnp::right_shift(make_int({255}, uint8), Array(4)), {15}, uint8, "right_shift (logical on unsigned)");
}

TEST_CASE("nn functions against double references", "[numpy]") {
  for (DType d : float_dtypes()) {
    auto x = rounded(uniform(12, -4, 4), d);
    Array a = make(x, {3, 4}, d);
    auto map = [&](double (*f)(double)) {
      std::vector<double> r;
      for (double v : x) r.push_back(f(v));
      return r;
    };
    // Results built from several rounded ops: compare against |x|-sized scales rather than |result|.
    std::vector<double> sc;
    for (double v : x) sc.push_back(std::max(1.0, std::fabs(v)) * 4);
    both_close([](auto& v) { return nn::relu(v[0]); }, {a}, map([](double v) { return std::max(v, 0.0); }), d, "relu");
    both_close([](auto& v) { return nn::sigmoid(v[0]); }, {a}, map([](double v) { return 1 / (1 + std::exp(-v)); }), d,
               "sigmoid");
    both_close([](auto& v) { return nn::silu(v[0]); }, {a}, map([](double v) { return v / (1 + std::exp(-v)); }), d,
               "silu", sc);
    both_close([](auto& v) { return nn::softplus(v[0]); }, {a}, map([](double v) { return std::log1p(std::exp(v)); }),
               d, "softplus", sc);
    both_close([](auto& v) { return nn::gelu(v[0], true); }, {a}, map([](double v) {
                 return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
               }),
               d, "gelu tanh", sc);
    both_close([](auto& v) { return nn::gelu(v[0], false); }, {a},
               map([](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }), d, "gelu erf", sc);
    std::vector<double> sm, lsm, lse(3), ones(12, 4);
    for (int i = 0; i < 3; ++i) {
      double m = -INFINITY, s = 0;
      for (int j = 0; j < 4; ++j) m = std::max(m, x[i * 4 + j]);
      for (int j = 0; j < 4; ++j) s += std::exp(x[i * 4 + j] - m);
      for (int j = 0; j < 4; ++j)
        sm.push_back(std::exp(x[i * 4 + j] - m) / s), lsm.push_back(x[i * 4 + j] - m - std::log(s));
      lse[i] = m + std::log(s);
    }
    both_close([](auto& v) { return nn::softmax(v[0]); }, {a}, sm, d, "softmax", std::vector<double>(12, 2));
    both_close([](auto& v) { return nn::log_softmax(v[0], -1); }, {a}, lsm, d, "log_softmax", ones);
    both_close([](auto& v) { return nn::logsumexp(v[0], -1); }, {a}, lse, d, "logsumexp", std::vector<double>(3, 4));
    {  // no axes: every axis, as jax.nn.logsumexp(x) (axis=None) -> a 0-d result
      double m = -INFINITY, s = 0;
      for (double v : x) m = std::max(m, v);
      for (double v : x) s += std::exp(v - m);
      both_close([](auto& v) { return nn::logsumexp(v[0]); }, {a}, {m + std::log(s)}, d, "logsumexp, every axis",
                 std::vector<double>(1, 12));
      CHECK(nn::logsumexp(a).ndim() == 0);
    }
    auto kd = nn::logsumexp(a, {-1}, true);
    CHECK(kd.shape() == Shape{3, 1});
    // layer_norm over the last axis, with scale and offset.
    std::vector<double> ln;
    auto g = rounded(uniform(4, 0.5, 1.5), d), o = rounded(uniform(4, -1, 1), d);
    for (int i = 0; i < 3; ++i) {
      double m = 0, v = 0;
      for (int j = 0; j < 4; ++j) m += x[i * 4 + j] / 4;
      for (int j = 0; j < 4; ++j) v += std::pow(x[i * 4 + j] - m, 2) / 4;
      for (int j = 0; j < 4; ++j) ln.push_back((x[i * 4 + j] - m) / std::sqrt(v + 1e-5) * g[j] + o[j]);
    }
    both_close([](auto& v) { return nn::layer_norm(v[0], v[1], v[2]); }, {a, make(g, d), make(o, d)}, ln, d,
               "layer_norm", std::vector<double>(12, 8));
  }
  // Softmax of large values does not overflow.
  auto big = nn::softmax(make({1000, 1000}, float32)).to_vector<float>();
  CHECK(big == std::vector<float>{0.5f, 0.5f});
  auto oh = nn::one_hot(make_int({2, 0, 5, -1}, int32), 3);
  check_type(oh, float32, false, {4, 3});
  CHECK(oh.to_vector<float>() == std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(nn::one_hot(make_int({1}, uint8), 2, int8).to_vector<int>() == std::vector<int>{0, 1});
}

// A C++ double is a weak f64 and a 64-bit integer a weak i64, so their values survive next to f64/i64
// arrays, while next to narrower arrays the weak type still yields to the array's dtype.
TEST_CASE("weak Python-style scalars keep full precision next to f64 and i64 arrays", "[numpy]") {
  Array x = make({3.0}, float64);
  CHECK((x * 0.1).item<double>() == 3.0 * 0.1);
  Array i = make_int({1}, int64);
  CHECK((i + (int64_t{1} << 40)).item<int64_t>() == (int64_t{1} << 40) + 1);
  Array f = make({3.0}, float32);
  CHECK((f * 0.1).dtype() == float32);
  CHECK((make_int({1}, int32) + int64_t{5}).dtype() == int32);
}
