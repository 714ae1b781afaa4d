// jnp::linalg's transformations and compilation: gradients of every decomposition and solver against central
// finite differences in f64 (eager and jit; functions of the sign-invariant parts of Q, U, V and eigenvectors),
// vmap against a loop, and the custom-calls in the HLO and StableHLO text and through CSE, DCE and constant folding.
#include <cmath>

#include "hlo/passes/constant_folding.h"
#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"
#include "hlo_test_util.h"
#include "jitx/linalg.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using F1 = std::function<Array(const Array&)>;

/// x as an (r x c) host matrix plus n I (square) for a well-conditioned input.
std::vector<double> conditioned(int64_t r, int64_t c, double shift) {
  auto x = uniform(static_cast<size_t>(r * c), -1, 1);
  for (int64_t i = 0; i < std::min(r, c); ++i) x[i * c + i] += shift;
  return x;
}

/// grad(f) eagerly and under jit against central differences of f at x (shape s, f64).
void check_grad(const std::string& what, const F1& f, const std::vector<double>& x, const Shape& s) {
  INFO(what);
  const double h = 1e-6;
  std::vector<double> fd(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    auto xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    fd[i] = (f(make(xp, s, float64)).item<double>() - f(make(xm, s, float64)).item<double>()) / (2 * h);
  }
  Array a = make(x, s, float64);
  for (bool jitted : {false, true}) {
    INFO("jit=" << jitted);
    auto g = (jitted ? jit(grad(f))(a) : grad(f)(a)).to_vector<double>();
    REQUIRE(g.size() == fd.size());
    for (size_t i = 0; i < fd.size(); ++i)
      if (std::fabs(g[i] - fd[i]) > 1e-6 * (1 + std::fabs(fd[i])))
        FAIL_CHECK("element " << i << ": grad " << g[i] << ", finite differences " << fd[i]);
  }
}

/// sum(w * y) with fixed weights (every output element matters).
Array weighted(const Array& y, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> w(static_cast<size_t>(y.size()));
  for (auto& v : w) v = u(g);
  return jnp::sum(y * make(w, y.shape(), y.dtype()));
}
Array mT(const Array& x) { return jnp::swapaxes(x, -1, -2); }
}  // namespace

TEST_CASE("linalg grad: cholesky, triangular_solve, solve, inv, det, slogdet vs finite differences", "[linalg]") {
  auto spd = [](const Array& x) { return jnp::matmul(x, mT(x)) + 3.0 * eye(3, 3, 0, float64); };
  auto x3 = conditioned(3, 3, 3);
  check_grad("cholesky", [&](const Array& x) { return weighted(jnp::linalg::cholesky(spd(x)), 1); }, x3, {3, 3});
  Array spd3 = spd(make(x3, {3, 3}, float64));
  check_grad("cholesky of an spd input", [](const Array& x) { return weighted(jnp::linalg::cholesky(x), 2); },
             spd3.to_vector<double>(), {3, 3});
  auto b = make(uniform(6, -1, 1), {3, 2}, float64), bt = make(uniform(6, -1, 1), {2, 3}, float64);
  for (bool lower : {true, false})
    for (bool trans : {false, true})
      for (bool unit : {false, true}) {
        std::string tag = std::string(lower ? "lower" : "upper") + (trans ? " T" : "") + (unit ? " unit" : "");
        check_grad("triangular_solve a, left " + tag, [&](const Array& a) {
          return weighted(lax::linalg::triangular_solve(a, b, true, lower, trans, false, unit), 3);
        }, x3, {3, 3});
        check_grad("triangular_solve a, right " + tag, [&](const Array& a) {
          return weighted(lax::linalg::triangular_solve(a, bt, false, lower, trans, false, unit), 4);
        }, x3, {3, 3});
        Array a = make(x3, {3, 3}, float64);
        check_grad("triangular_solve b, left " + tag, [&](const Array& y) {
          return weighted(lax::linalg::triangular_solve(a, y, true, lower, trans, false, unit), 5);
        }, b.to_vector<double>(), {3, 2});
      }
  auto x4 = conditioned(4, 4, 2);
  Array b4 = make(uniform(8, -1, 1), {4, 2}, float64);
  check_grad("solve a", [&](const Array& a) { return weighted(jnp::linalg::solve(a, b4), 6); }, x4, {4, 4});
  Array a4 = make(x4, {4, 4}, float64);
  check_grad("solve b", [&](const Array& y) { return weighted(jnp::linalg::solve(a4, y), 7); },
             b4.to_vector<double>(), {4, 2});
  check_grad("inv", [](const Array& a) { return weighted(jnp::linalg::inv(a), 8); }, x4, {4, 4});
  check_grad("det", [](const Array& a) { return jnp::linalg::det(a); }, x4, {4, 4});
  check_grad("slogdet", [](const Array& a) { return jnp::linalg::slogdet(a).logabsdet; }, x4, {4, 4});
  // a row swap in the factorisation: the gradient of det through the pivoted LU
  check_grad("det pivoted", [](const Array& a) { return jnp::linalg::det(a); }, {0.1, 2, 0.5, 3, 1, 0.2, 1, 0.3, 4},
             {3, 3});
  // batched det: grad of the sum
  check_grad("det batched", [](const Array& a) { return jnp::sum(jnp::linalg::det(a)); },
             [] {
               auto v = conditioned(2, 9, 0);
               for (int k = 0; k < 2; ++k)
                 for (int i = 0; i < 3; ++i) v[k * 9 + i * 4] += 3;
               return v;
             }(),
             {2, 3, 3});
}

TEST_CASE("linalg grad: qr, eigh, svd, norm 2/nuc, lstsq, pinv vs finite differences", "[linalg]") {
  // Q and R up to the signs of R's diagonal: Q diag(sign) and diag(sign) R are unique
  auto qr_fn = [](std::string mode, uint32_t seed) {
    return [mode, seed](const Array& a) {
      auto r = jnp::linalg::qr(a, mode);
      int64_t k = r.R.shape()[0];
      Array sg = jnp::sign(jnp::sum(r.R * eye(k, r.R.shape()[1], 0, float64), {1}));
      return weighted(r.Q * sg, seed) + weighted(jnp::expand_dims(sg, {1}) * r.R, seed + 1);
    };
  };
  check_grad("qr reduced 4x3", qr_fn("reduced", 10), conditioned(4, 3, 2), {4, 3});
  check_grad("qr complete 3x3", qr_fn("complete", 12), conditioned(3, 3, 2), {3, 3});
  Array sym = [] {
    Array a = make(conditioned(4, 4, 0), {4, 4}, float64);
    return a + mT(a) + jnp::astype(make({0, 1, 2, 3}, float64), float64) * 2.0 * eye(4, 4, 0, float64);
  }();
  // eigh: the eigenvalues, and V diag(g) V^T (sign invariant)
  auto eigh_fn = [](const Array& a) {
    auto r = jnp::linalg::eigh(a);
    Array g = jnp::sin(r.eigenvalues);
    return weighted(r.eigenvalues, 20) + weighted(jnp::matmul(r.eigenvectors * g, mT(r.eigenvectors)), 21);
  };
  check_grad("eigh", eigh_fn, sym.to_vector<double>(), {4, 4});
  check_grad("eigvalsh", [](const Array& a) { return weighted(jnp::linalg::eigvalsh(a), 22); },
             sym.to_vector<double>(), {4, 4});
  // svd: the singular values, and U diag(g) Vh (sign invariant), tall and wide
  auto svd_fn = [](const Array& a) {
    auto r = jnp::linalg::svd(a, false);
    return weighted(r.S, 30) + weighted(jnp::matmul(r.U * jnp::cos(r.S), r.Vh), 31);
  };
  check_grad("svd 4x3", svd_fn, conditioned(4, 3, 2), {4, 3});
  check_grad("svd 3x5", svd_fn, conditioned(3, 5, 2), {3, 5});
  check_grad("svdvals", [](const Array& a) { return weighted(jnp::linalg::svdvals(a), 32); }, conditioned(3, 4, 2),
             {3, 4});
  check_grad("norm 2", [](const Array& a) { return jnp::linalg::norm(a, 2.0); }, conditioned(3, 4, 2), {3, 4});
  check_grad("norm nuc", [](const Array& a) { return jnp::linalg::norm(a, "nuc"); }, conditioned(4, 3, 2), {4, 3});
  Array y = make(uniform(5, -1, 1), float64);
  check_grad("lstsq x", [&](const Array& a) { return weighted(jnp::linalg::lstsq(a, y).x, 33); },
             conditioned(5, 3, 2), {5, 3});
  check_grad("pinv", [](const Array& a) { return weighted(jnp::linalg::pinv(a), 34); }, conditioned(4, 3, 2),
             {4, 3});
  // qr of a wide matrix, and complete qr of a tall one (Q's last columns follow the Householder factorisation,
  // whose derivative JAX 0.10.2 defines and finite differences of LAPACK's Q confirm)
  check_grad("qr reduced 3x5", qr_fn("reduced", 40), conditioned(3, 5, 2), {3, 5});
  check_grad("qr complete 5x3 raw", [](const Array& a) {
    auto r = jnp::linalg::qr(a, "complete");
    return weighted(r.Q, 41) + weighted(r.R, 42);
  }, conditioned(5, 3, 2), {5, 3});
  // JAX's unimplemented derivative cases say so
  Array wide = make(conditioned(3, 4, 1), {3, 4}, float64);
  CHECK_THROWS_AS(grad([](const Array& a) { return jnp::sum(jnp::linalg::svd(a, true).U); })(wide), CompileError);
}

TEST_CASE("linalg vmap: every function under vmap matches a loop", "[linalg]") {
  for (DType d : {float32, float64}) {
    std::vector<double> av;
    for (int k = 0; k < 3; ++k) {
      auto m = conditioned(4, 4, 3);
      av.insert(av.end(), m.begin(), m.end());
    }
    Array as = make(av, {3, 4, 4}, d), bs = make(uniform(24, -1, 1), {3, 4, 2}, d);
    Array spd = jnp::matmul(as, mT(as));
    Array fixed_a = as[0], fixed_b = bs[0];
    struct Case {
      std::string name;
      std::function<Array(const Array&, const Array&)> f;
      Array x;
    };
    std::vector<Case> cases{
        {"solve", [](const Array& a, const Array& b) { return jnp::linalg::solve(a, b); }, as},
        {"solve fixed a", [&](const Array&, const Array& b) { return jnp::linalg::solve(fixed_a, b); }, as},
        {"triangular_solve fixed a",
         [&](const Array&, const Array& b) { return lax::linalg::triangular_solve(fixed_a, b, true, true); }, as},
        {"triangular_solve fixed b",
         [&](const Array& a, const Array&) { return lax::linalg::triangular_solve(a, fixed_b, true, false); }, as},
        {"inv", [](const Array& a, const Array&) { return jnp::linalg::inv(a); }, as},
        {"det", [](const Array& a, const Array&) { return jnp::linalg::det(a); }, as},
        {"slogdet", [](const Array& a, const Array&) { return jnp::linalg::slogdet(a).logabsdet; }, as},
        {"cholesky", [](const Array& a, const Array&) { return jnp::linalg::cholesky(a); }, spd},
        {"eigvalsh", [](const Array& a, const Array&) { return jnp::linalg::eigvalsh(a); }, spd},
        {"svdvals", [](const Array& a, const Array&) { return jnp::linalg::svdvals(a); }, as},
        {"qr |R|", [](const Array& a, const Array&) { return jnp::abs(jnp::linalg::qr(a).R); }, as},
        {"norm 2", [](const Array& a, const Array&) { return jnp::linalg::norm(a, 2.0); }, as},
    };
    for (auto& c : cases) {
      INFO(c.name << " " << dtype_name(d));
      auto f = c.f;
      Array got = vmap([f](const Array& a, const Array& b) { return f(a, b); })(c.x, bs);
      Array got_jit = jit(vmap([f](const Array& a, const Array& b) { return f(a, b); }))(c.x, bs);
      std::vector<double> ref;
      for (int64_t k = 0; k < 3; ++k) {
        auto v = f(c.x[k], bs[k]).to_vector<double>();
        ref.insert(ref.end(), v.begin(), v.end());
      }
      Tol t = d == float64 ? Tol{1e-12, 1e-12} : Tol{1e-5, 1e-5};
      for (const Array& g : {got, got_jit}) {
        auto gv = g.to_vector<double>();
        REQUIRE(gv.size() == ref.size());
        for (size_t i = 0; i < gv.size(); ++i) CHECK(std::fabs(gv[i] - ref[i]) <= t.atol + t.rtol * std::fabs(ref[i]));
      }
    }
  }
}

TEST_CASE("linalg HLO: custom-calls in HLO and StableHLO text, CSE, DCE and constant folding", "[linalg]") {
  auto f = jit([](Array a, Array b) {
    return std::vector<Array>{jnp::linalg::cholesky(a), lax::linalg::triangular_solve(a, b, true, true, true),
                              jnp::linalg::eigvalsh(a), jnp::linalg::svdvals(a), jnp::linalg::qr(a).R,
                              jnp::linalg::slogdet(a).logabsdet};  // (a 3x3 det is a closed form, no lu)
  });
  Array a = make({4, 1, 2, 1, 5, 3, 2, 3, 6}, {3, 3}, float32), b = make({1, 2, 3}, {3, 1}, float32);
  auto lowered = f.lower(a, b);
  std::string shlo = lowered.as_text();
  for (std::string t : {"cholesky", "triangular_solve", "eigh", "svd", "qr", "lu"}) {
    INFO(t);
    CHECK(shlo.find("call_target_name = \"jitx.linalg." + t + "\"") != std::string::npos);
  }
  CHECK(shlo.find("stablehlo.custom_call") != std::string::npos);
  CHECK(shlo.find("backend_config = \"left_side=true,lower=true,transpose_a=true,unit_diagonal=false\"") !=
        std::string::npos);
  std::string hlo = lowered.compile().as_text();
  CHECK(hlo.find("custom_call_target=jitx.linalg.cholesky") != std::string::npos);

  using namespace jitx::hlo;
  using namespace jitx::hlo::testing;
  // CSE merges two equal linalg custom-calls; DCE drops an unused one; an unknown target never merges
  auto r = run(R"(HloModule m
ENTRY %main (p: f32[3,3]) -> (f32[3,3], f32[3,3]) {
  %p = f32[3,3] parameter(0)
  %c1 = f32[3,3] custom-call(%p), custom_call_target="jitx.linalg.cholesky"
  %c2 = f32[3,3] custom-call(%p), custom_call_target="jitx.linalg.cholesky"
  %dead = f32[3,3] custom-call(%p), custom_call_target="jitx.linalg.cholesky", lower=true
  ROOT %t = (f32[3,3], f32[3,3]) tuple(%c1, %c2)
}
)", passes<CommonSubexpressionElimination, DeadCodeElimination>());
  CHECK(r.changed);
  CHECK(r.text.find("tuple(%c1, %c1)") != std::string::npos);
  CHECK(r.text.find("%dead") == std::string::npos);
  check_unchanged<CommonSubexpressionElimination>(R"(HloModule m
ENTRY %main (p: f32[3,3]) -> (f32[3,3], f32[3,3]) {
  %p = f32[3,3] parameter(0)
  %u1 = f32[3,3] custom-call(%p), custom_call_target="user.effect"
  %u2 = f32[3,3] custom-call(%p), custom_call_target="user.effect"
  ROOT %t = (f32[3,3], f32[3,3]) tuple(%u1, %u2)
}
)");
  // constant folding evaluates a linalg custom-call of constants (cholesky of [[4, 2], [2, 5]] = [[2, 0], [1, 2]])
  auto cf = run(R"(HloModule m
ENTRY %main () -> f32[2,2] {
  %k = f32[2,2] constant({{4, 2}, {2, 5}})
  ROOT %c = f32[2,2] custom-call(%k), custom_call_target="jitx.linalg.cholesky"
}
)", passes<ConstantFolding, DeadCodeElimination>());
  INFO(cf.text);
  CHECK(cf.text.find("custom-call") == std::string::npos);
  CHECK(cf.text.find("constant({{2, 0}, {1, 2}})") != std::string::npos);
}
