// Shared by the numpy_stats tests: the check that runs a case eagerly and under jit against JAX's dtype, weak type,
// shape and values (tolerances.h's row of the result dtype), and refusals.
#pragma once
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using A = const std::vector<Array>&;
using F = std::function<Array(A)>;

/// JAX's result.
struct Want {
  DType dtype;
  Shape shape;
  std::vector<double> values;
  bool weak = false;
};

/// got against want within the bound b of the tolerance row of tol_of (default: the result's dtype; a float64
/// result computed from float32 sums needs float32's row).
void check_want(const Array& got, const Want& want, Bound b, const std::string& what,
                std::optional<DType> tol_of = std::nullopt) {
  INFO(what);
  REQUIRE(dtype_name(got.dtype()) == dtype_name(want.dtype));
  CHECK(got.weak_type() == want.weak);
  REQUIRE(got.shape() == want.shape);
  std::vector<double> g = got.astype(DType::float64).to_vector<double>();
  Tol t = tol(tol_of.value_or(want.dtype), b);
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.values[i];
    bool ok = std::isnan(w)   ? std::isnan(g[i])
              : std::isinf(w) ? g[i] == w
                              : std::fabs(g[i] - w) <= t.atol + t.rtol * std::fabs(w);
    if (!ok && bad++ < 5) FAIL_CHECK("element " << i << ": got " << g[i] << ", JAX " << w);
  }
  CHECK(bad == 0);
}

/// f(in) eagerly and under jit against JAX's result.
void both(const std::string& what, const F& f, const std::vector<Array>& in, const Want& want, Bound b,
          std::optional<DType> tol_of = std::nullopt) {
  check_want(f(in), want, b, what + " (eager)", tol_of);
  check_want(jit([f](std::vector<Array> a) { return f(a); })(in), want, b, what + " (jit)", tol_of);
}

/// f(in) eagerly against JAX's result (for what needs concrete values: JAX refuses it under jit too).
[[maybe_unused]] void eager(const std::string& what, const F& f, const std::vector<Array>& in, const Want& want,
                            Bound b) {
  check_want(f(in), want, b, what + " (eager)");
}

/// The gradient of sum(f(in) * w) in in[arg], eagerly and under jit, against jax.grad's.
void grad_both(const std::string& what, const F& f, const std::vector<Array>& in, size_t arg, const Array& w,
               const Want& want, Bound b) {
  auto loss = [f, in, arg, w](const Array& v) {
    std::vector<Array> args = in;
    args[arg] = v;
    return jnp::sum(jnp::multiply(f(args), w));
  };
  check_want(grad(loss)(in[arg]), want, b, what + " (eager)");
  check_want(jit(grad(loss))(in[arg]), want, b, what + " (jit)");
}

/// What JAX refuses: a jitx error of type E, eagerly and under jit.
template <class E>
void refuses(const std::string& what, const F& f, const std::vector<Array>& in) {
  INFO(what);
  CHECK_THROWS_AS(f(in), E);
  CHECK_THROWS_AS(jit([f](std::vector<Array> a) { return f(a); })(in), E);
}
}  // namespace
