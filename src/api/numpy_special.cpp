// jnp::i0 and jnp::kaiser (jitx/numpy_special.h), composed as JAX's: exp(|x|) * bessel_i0e(|x|) with a derivative
// forced to 0 at x = 0.
#include "jitx/numpy_special.h"

#include <tuple>

#include "core/default_dtypes.h"
#include "core/errors.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/lax_special.h"
#include "jitx/numpy.h"
#include "ops/numpy_stats_util.h"

namespace jitx::numpy {
using detail::ApiScope;

namespace {
Array i0_value(const Array& x) {
  Array ax = lax::abs(x);
  return lax::mul(lax::exp(ax), lax::bessel_i0e(ax));
}
Array i0_with_rule(const Array& x) {
  return custom_jvp(i0_value, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& v = std::get<0>(p);
    auto [out, tout] = jvp([](const Array& u) { return i0_value(u); }, std::tuple<Array>{v}, t);
    return std::make_pair(out, where(lax::eq(v, Array::scalar(0, v.dtype())), jnp::zeros_like(tout), tout));
  })(x);
}
}  // namespace

Array i0(const Array& x, Loc loc) {
  ApiScope s(loc);
  stats_util::stats_check_valid("i0", x);
  Array v = stats_util::stats_inexact(x);
  return i0_with_rule(v);
}

Array kaiser(int64_t M, const Array& beta, Loc loc) {
  ApiScope s(loc);
  stats_util::stats_check_valid("kaiser", beta, "a beta that is an");
  const DType d = detail::default_float_dtype();
  if (M <= 1) return lax::full({std::max<int64_t>(M, 0)}, Array::scalar(1, d));
  Array n = lax::iota(d, M);
  double alpha = 0.5 * double(M - 1);
  Array r = divide(subtract(n, Array(alpha)), Array(alpha));
  Array arg = multiply(beta, sqrt(subtract(Array(1.0), multiply(r, r))));
  return divide(i0(arg), i0(beta));
}

}  // namespace jitx::numpy
