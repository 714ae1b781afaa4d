// jitx::random: the continuous and discrete samplers beyond uniform/normal, as jax.random
// (jax/_src/random/core.py): JAX's algorithm, key use and evaluation order for each, with XLA:CPU's rounding
// reproduced through random_fx.h where xla_math models the functions involved. The gamma family and poisson
// are in random_gamma.cpp (binomial is not there yet).
#include <cmath>

#include "api/random_fx.h"
#include "api/random_internal.h"
#include "api/random_samplers_internal.h"
#include "core/default_dtypes.h"
#include "core/errors.h"
#include "core/shape_util.h"
#include "jitx/linalg.h"
#include "jitx/numpy.h"
#include "jitx/random.h"

namespace jitx::random {
using detail::ApiScope;
using detail::shape_str;
using detail::throw_error;
using namespace internal;

namespace internal {

Array unit_uniform(const Array& key, const Shape& shape, DType d, double lo, double hi, std::string_view op) {
  return uniform_impl(key, shape, d, Array::scalar(lo, d), Array::scalar(hi, d), op);
}

Array exponential_impl(const Array& key, const Shape& shape, DType d) {
  Fx F{d};
  Array u = F.in(unit_uniform(key, shape, d, 0.0, 1.0, "exponential"));
  return F.out(lax::neg(F.log1p(lax::neg(u))));
}

// A weak parameter keeps its dtype: a C++ double samples in float64, as a Python float with x64.
DType float_param_dtype(const Array& p) { return p.dtype(); }

std::vector<Array> split_n(const Array& key, int64_t n) {
  Array ks = split_impl(key, {n});
  std::vector<Array> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(lax::reshape(lax::slice(ks, {i, 0}, {i + 1, 2}), {2}));
  return out;
}

Shape param_shape(std::optional<Shape> shape, std::vector<Shape> shapes, std::string_view op) {
  if (shape) return *shape;
  return jnp::broadcast_shapes(shapes, op);
}

}  // namespace internal

namespace {

Array laplace_impl(const Array& key, const Shape& shape, DType d) {
  Fx F{d};
  double epsneg = std::ldexp(1.0, -(nmant(d) + 1));
  Array u = F.in(unit_uniform(key, shape, d, -1.0 + epsneg, 1.0, "laplace"));
  return F.out(lax::mul(lax::sign(u), F.log1p(lax::neg(lax::abs(u)))));
}

Array logistic_impl(const Array& key, const Shape& shape, DType d) {
  Fx F{d};
  // uniform(tiny, 1): XLA folds floats * (1 - tiny) + tiny into max(tiny, floats), as for gumbel.
  Array u = lax::max(Array::scalar(tiny(d), d), unit_uniform(key, shape, d, 0.0, 1.0, "logistic"));
  Array x = F.in(u);
  return F.out(F.sub(F.log(x), F.log1p(lax::neg(x))));
}

Array cauchy_impl(const Array& key, const Shape& shape, DType d) {
  Fx F{d};
  Array u = F.in(unit_uniform(key, shape, d, std::ldexp(1.0, -nmant(d)), 1.0, "cauchy"));
  Array arg = F.mul(F.c(M_PI), F.sub(u, F.c(0.5)));
  return lax::tan(F.out(arg));
}

Array maxwell_impl(const Array& key, const Shape& shape, DType d) {
  Fx F{d};
  Shape s3 = shape;
  s3.push_back(3);
  Array z = F.in(normal_impl(key, s3, d));
  int64_t r = static_cast<int64_t>(shape.size());
  auto part = [&](int64_t i) {
    Shape lo(shape.size() + 1, 0), hi = s3;
    lo[static_cast<size_t>(r)] = i;
    hi[static_cast<size_t>(r)] = i + 1;
    Array p = lax::reshape(lax::slice(z, lo, hi), shape);
    return F.mul(p, p);
  };
  return F.out(F.sqrt(F.add(F.add(part(0), part(1)), part(2))));
}

Array triangular_impl(const Array& key, const Array& l_in, const Array& m_in, const Array& r_in, const Shape& shape,
                      DType d) {
  Fx F{d, true};  // differentiable in left, mode and right
  auto prm = [&](const Array& x, const char* what) {
    return F.in(broadcast_param(lax::convert_element_type(x, d), shape, "triangular", what));
  };
  Array left = prm(l_in, "left"), mode = prm(m_in, "mode"), right = prm(r_in, "right");
  Array fc = F.div(F.sub(mode, left), F.sub(right, left));
  Array u = F.in(unit_uniform(key, shape, d, 0.0, 1.0, "triangular"));
  Array out1 = F.add(left, F.sqrt(F.mul(F.mul(u, F.sub(right, left)), F.sub(mode, left))));
  Array out2 = F.sub(right, F.sqrt(F.mul(F.mul(F.sub(F.c(1), u), F.sub(right, left)), F.sub(right, mode))));
  return F.out(lax::select(lax::lt(u, fc), out1, out2));
}

Array wald_impl(const Array& key, const Array& mean_in, const Shape& shape, DType d) {
  Fx F{d, true};  // differentiable in mean
  auto ks = split_n(key, 2);
  Array mean = F.in(broadcast_param(lax::convert_element_type(mean_in, d), shape, "wald", "mean"));
  Array v = F.in(normal_impl(ks[0], shape, d));
  Array z = F.in(unit_uniform(ks[1], shape, d, 0.0, 1.0, "wald"));
  Array y = F.mul(v, v), y_sq = F.mul(y, y), mean_sq = F.mul(mean, mean);
  Array sqrt_term = F.sqrt(F.fma(mean_sq, y_sq, F.mul(F.mul(F.c(4), mean), y)));
  Array x = F.sub(F.add(mean, F.mul(F.mul(mean_sq, y), F.c(0.5))), F.mul(F.mul(mean, F.c(0.5)), sqrt_term));
  Array w = lax::select(lax::le(z, F.div(mean, F.add(mean, x))), x, F.div(mean_sq, x));
  return F.out(w);
}

}  // namespace

Array exponential(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "exponential");
  detail::ScopedX64 x64;
  return compiled(sig("exponential", shape, dtype), {key},
                  [=](auto& a) { return exponential_impl(a[0], shape, dtype); });
}

Array laplace(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "laplace");
  detail::ScopedX64 x64;
  return compiled(sig("laplace", shape, dtype), {key}, [=](auto& a) { return laplace_impl(a[0], shape, dtype); });
}

Array logistic(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "logistic");
  detail::ScopedX64 x64;
  return compiled(sig("logistic", shape, dtype), {key}, [=](auto& a) { return logistic_impl(a[0], shape, dtype); });
}

Array cauchy(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "cauchy");
  detail::ScopedX64 x64;
  return compiled(sig("cauchy", shape, dtype), {key}, [=](auto& a) { return cauchy_impl(a[0], shape, dtype); });
}

namespace {
Array rademacher_impl(const Array& key, const Shape& shape, DType dtype) {
  // bernoulli(key, 0.5): JAX (x64) draws it in float64, 0.5 being a Python float.
  Array u = unit_uniform(key, shape, DType::float64, 0.0, 1.0, "rademacher");
  // JAX: (2 * b - 1).astype(dtype); for bool, 2 * b - 1 is an integer (1 or -1), so every value is true.
  DType cd = is_bool(dtype) ? DType::int32 : dtype;
  Array b = lax::convert_element_type(lax::lt(u, Array::scalar(0.5, DType::float64)), cd);
  Array r = lax::sub(lax::mul(Array::scalar(2.0, cd), b), Array::scalar(1.0, cd));
  return is_bool(dtype) ? lax::convert_element_type(r, dtype) : r;
}
}  // namespace

Array rademacher(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "rademacher");
  check_dtype_value(dtype, "rademacher");
  dtype = canonicalize_dtype(dtype);
  check_shape(shape, "rademacher");
  detail::ScopedX64 x64;
  return compiled(sig("rademacher", shape, dtype), {key},
                  [=](auto& a) { return rademacher_impl(a[0], shape, dtype); });
}

Array lognormal(const Array& key, const Array& sigma, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (!sigma.valid()) throw_error<TypeError>("lognormal", "sigma must be an array, got an empty Array");
  Shape sh = param_shape(shape, {sigma.shape()}, "lognormal");
  dtype = begin_float(key, dtype, sh, "lognormal");
  detail::ScopedX64 x64;
  broadcast_param(sigma, sh, "lognormal", "sigma");
  return compiled(sig("lognormal", sh, dtype), {key, sigma}, [=](auto& a) {
    Fx F{dtype, true};  // differentiable in sigma
    Array z = F.in(normal_impl(a[0], sh, dtype));
    Array sg = F.in(jnp::broadcast_to(lax::convert_element_type(a[1], dtype), sh));
    return F.out(F.exp(F.mul(z, sg)));
  });
}

Array rayleigh(const Array& key, const Array& scale, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  if (!scale.valid()) throw_error<TypeError>("rayleigh", "scale must be an array, got an empty Array");
  Shape sh = param_shape(shape, {scale.shape()}, "rayleigh");
  dtype = begin_float(key, dtype, sh, "rayleigh");
  detail::ScopedX64 x64;
  broadcast_param(scale, sh, "rayleigh", "scale");
  return compiled(sig("rayleigh", sh, dtype), {key, scale}, [=](auto& a) {
    Fx F{dtype, true};  // differentiable in scale
    Array u = F.in(unit_uniform(a[0], sh, dtype, 0.0, 1.0, "rayleigh"));
    Array sc = F.in(jnp::broadcast_to(lax::convert_element_type(a[1], dtype), sh));
    return F.out(F.mul(sc, F.sqrt(F.mul(F.log(u), F.c(-2.0)))));
  });
}

Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale, const Shape& shape, DType dtype,
                           Loc loc_) {
  ApiScope s(loc_);
  if (!loc.valid() || !scale.valid())
    throw_error<TypeError>("double_sided_maxwell", "loc and scale must be arrays, got an empty Array");
  Shape params = jnp::broadcast_shapes({loc.shape(), scale.shape()}, "double_sided_maxwell");
  Shape sh = shape.empty() ? params : shape;
  sh.insert(sh.end(), params.begin(), params.end());  // as JAX: shape + the parameters' shape
  dtype = begin_float(key, dtype, sh, "double_sided_maxwell");
  detail::ScopedX64 x64;
  Array draws = compiled(sig("double_sided_maxwell", sh, dtype), {key}, [=](auto& a) {
    std::vector<Array> keys = split_n(a[0], 2);
    return lax::mul(rademacher_impl(keys[1], sh, dtype), maxwell_impl(keys[0], sh, dtype));
  });
  return jnp::add(jnp::multiply(draws, scale), loc);
}

Array maxwell(const Array& key, const Shape& shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "maxwell");
  detail::ScopedX64 x64;
  return compiled(sig("maxwell", shape, dtype), {key}, [=](auto& a) { return maxwell_impl(a[0], shape, dtype); });
}

Array weibull_min(const Array& key, const Array& scale, const Array& concentration, const Shape& shape, DType dtype,
                  Loc loc) {
  ApiScope s(loc);
  dtype = begin_float(key, dtype, shape, "weibull_min");
  detail::ScopedX64 x64;
  // JAX draws `shape` uniforms and broadcasts them with the parameters (numpy rules): with the default shape ()
  // and array parameters, one draw for every element of the parameters' shape.
  if (!scale.valid() || !concentration.valid())
    throw_error<TypeError>("weibull_min", "scale and concentration must be arrays, got an empty Array");
  Shape out = jnp::broadcast_shapes({shape, scale.shape(), concentration.shape()}, "weibull_min");
  return compiled(sig("weibull_min", shape, dtype, detail::shape_str(out)), {key, scale, concentration}, [=](auto& a) {
    // JAX: jnp.power(-log1p(-u), 1.0 / concentration) * scale, 1 / concentration in concentration's dtype.
    Array inv = lax::div(Array::scalar(1.0, a[2].dtype()), a[2]);
    Array e = jnp::broadcast_to(exponential_impl(a[0], shape, dtype), out);
    Array p = lax::pow(e, jnp::broadcast_to(lax::convert_element_type(inv, dtype), out));
    return lax::mul(p, jnp::broadcast_to(lax::convert_element_type(a[1], dtype), out));
  });
}

Array pareto(const Array& key, const Array& b, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  Shape sh = param_shape(shape, {b.shape()}, "pareto");
  dtype = begin_float(key, dtype, sh, "pareto");
  detail::ScopedX64 x64;
  broadcast_param(b, sh, "pareto", "b");
  return compiled(sig("pareto", sh, dtype), {key, b}, [=](auto& a) {
    Fx F{dtype, true};  // differentiable in b
    Array e = F.in(exponential_impl(a[0], sh, dtype));
    Array bb = F.in(jnp::broadcast_to(lax::convert_element_type(a[1], dtype), sh));
    return F.out(F.exp(F.div(e, bb)));
  });
}

Array geometric(const Array& key, const Array& p, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  key_words(key, "geometric");
  check_dtype_value(dtype, "geometric");
  dtype = canonicalize_dtype(dtype);
  if (!is_integer(dtype))
    throw_error<TypeError>("geometric", "dtype must be an integer dtype, got {}", dtype_name(dtype));
  if (!p.valid() || !(is_floating(p.dtype()) || is_integer(p.dtype())))
    throw_error<TypeError>("geometric", "p must be a real array, got {}",
                           p.valid() ? p.aval().str() : "an empty Array");
  Shape sh = shape ? *shape : p.shape();
  check_shape(sh, "geometric");
  broadcast_param(p, sh, "geometric", "p");
  detail::ScopedX64 x64;
  return compiled(sig("geometric", sh, dtype), {key, p}, [=](auto& a) {
    DType pd = is_floating(a[1].dtype()) ? float_param_dtype(a[1]) : DType::float32;
    Fx F{pd};
    Array u = F.in(unit_uniform(a[0], sh, pd, 0.0, 1.0, "geometric"));
    u = lax::select(lax::eq(u, F.c(0)), lax::full(sh, F.c(1)), u);
    Array pp = F.in(jnp::broadcast_to(lax::convert_element_type(a[1], pd), sh));
    Array g = F.add(lax::floor(F.div(F.log(u), F.log1p(lax::neg(pp)))), F.c(1));
    return lax::convert_element_type(F.out(g), dtype);
  });
}

Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right, std::optional<Shape> shape,
                 DType dtype, Loc loc) {
  ApiScope s(loc);
  Shape sh = param_shape(shape, {left.shape(), mode.shape(), right.shape()}, "triangular");
  dtype = begin_float(key, dtype, sh, "triangular");
  detail::ScopedX64 x64;
  return compiled(sig("triangular", sh, dtype), {key, left, mode, right},
                  [=](auto& a) { return triangular_impl(a[0], a[1], a[2], a[3], sh, dtype); });
}

Array wald(const Array& key, const Array& mean, std::optional<Shape> shape, DType dtype, Loc loc) {
  ApiScope s(loc);
  Shape sh = shape ? *shape : mean.shape();
  dtype = begin_float(key, dtype, sh, "wald");
  detail::ScopedX64 x64;
  broadcast_param(mean, sh, "wald", "mean");
  return compiled(sig("wald", sh, dtype), {key, mean}, [=](auto& a) { return wald_impl(a[0], a[1], sh, dtype); });
}

Array multivariate_normal(const Array& key, const Array& mean, const Array& cov, std::optional<Shape> shape,
                          DType dtype, std::string_view method, Loc loc) {
  ApiScope s(loc);
  constexpr std::string_view op = "multivariate_normal";
  if (method != "cholesky" && method != "eigh" && method != "svd")
    throw_error<TypeError>(op, "method must be one of {{'svd', 'eigh', 'cholesky'}}, got '{}'", method);
  if (mean.ndim() < 1) throw_error<ShapeError>(op, "requires mean.ndim >= 1, got mean.ndim == {}", mean.ndim());
  if (cov.ndim() < 2) throw_error<ShapeError>(op, "requires cov.ndim >= 2, got cov.ndim == {}", cov.ndim());
  int64_t n = mean.shape().back();
  if (cov.dim(-1) != n || cov.dim(-2) != n)
    throw_error<ShapeError>(op, "requires cov.shape == (..., n, n) for n={}, but got cov.shape == {}", n,
                            shape_str(cov.shape()));
  Shape mb(mean.shape().begin(), mean.shape().end() - 1), cb(cov.shape().begin(), cov.shape().end() - 2);
  Shape sh = shape ? *shape : jnp::broadcast_shapes({mb, cb}, op);
  if (shape && jnp::broadcast_shapes({sh, mb, cb}, op) != sh)
    throw_error<ShapeError>(op, "the batch shapes of mean {} and cov {} do not broadcast to shape {}", shape_str(mb),
                            shape_str(cb), shape_str(sh));
  dtype = begin_float(key, dtype, sh, op);
  std::string m(method);
  return compiled(sig("multivariate_normal", sh, dtype, m), {key, mean, cov}, [=](auto& a) {
    Array c = lax::convert_element_type(a[2], dtype), mu = lax::convert_element_type(a[1], dtype);
    Array factor;
    if (m == "svd") {
      auto r = jnp::linalg::svd(c);
      factor = jnp::multiply(r.U, jnp::expand_dims(jnp::sqrt(r.S), -2));
    } else if (m == "eigh") {
      auto r = jnp::linalg::eigh(c);
      factor = jnp::multiply(r.eigenvectors, jnp::expand_dims(jnp::sqrt(r.eigenvalues), -2));
    } else {
      factor = jnp::linalg::cholesky(c);
    }
    Shape ns = sh;
    ns.push_back(n);
    Array z;
    {
      detail::ScopedX64 x64;
      z = normal_impl(a[0], ns, dtype);
    }
    Array fz = jnp::squeeze(jnp::matmul(factor, jnp::expand_dims(z, -1)), {-1});
    return jnp::add(mu, fz);
  });
}

Array orthogonal(const Array& key, int64_t n, const Shape& shape, DType dtype, std::optional<int64_t> m, Loc loc) {
  ApiScope s(loc);
  int64_t mm = m ? *m : n;
  if (n < 0 || mm < 0) throw_error<ShapeError>("orthogonal", "n and m must be non-negative, got n={}, m={}", n, mm);
  dtype = begin_float(key, dtype, shape, "orthogonal");
  return compiled(sig("orthogonal", shape, dtype, fmt::format("{} {}", n, mm)), {key}, [=](auto& a) {
    Shape zs = shape;
    zs.push_back(std::max(n, mm));
    zs.push_back(std::min(n, mm));
    Array z;
    {
      detail::ScopedX64 x64;
      z = normal_impl(a[0], zs, dtype);
    }
    auto qr = jnp::linalg::qr(z);
    Array d = jnp::sum(jnp::multiply(qr.R, jnp::identity(std::min(n, mm), dtype)), {-2});  // R's diagonal
    Array x = jnp::multiply(qr.Q, jnp::expand_dims(jnp::sign(d), -2));
    return n < mm ? jnp::swapaxes(x, -1, -2) : x;
  });
}

}  // namespace jitx::random
