// jitx::optax against optax 0.2.8 (tests/optax_refs.h, from tools/gen_optax_refs.py: JAX with x64 on CPU): every
// optimiser's parameter trajectory over 6 steps, eager and with the update jitted, and every schedule's values,
// dtype and weak type; plus the state layout, errors, and a jitted training step that compiles once.
#include "jitx/optax.h"

#include <map>
#include <string>

#include "optax_refs.h"
#include "test_util.h"

namespace {
using namespace jitx;
using Params = std::map<std::string, Array>;
namespace ox = jitx::optax;

// float32 trajectories: |got - want| <= kUlp * 2^-23 * max(|want|, 1), float32's epsilon at the parameters' scale
// (a value that cancels to near 0 keeps the absolute error of the O(1) terms it came from). The ops are optax's in
// its order, and half of the 70 trajectories agree bit for bit; XLA's fusions and jitx's may still round in different
// places (a reduction's order, a multiply-add), and 6 steps compound it (largest seen: 1).
constexpr double kUlp = 2;

Params params_from(const std::vector<double>& v) {
  std::vector<float> b(v.begin(), v.begin() + 4), w(v.begin() + 4, v.begin() + 16);
  return {{"b", array(b, {4})}, {"w", array(w, {3, 4})}};
}
std::vector<double> flat(const Params& p) {
  auto b = p.at("b").astype(DType::float64).to_vector<double>();
  auto w = p.at("w").astype(DType::float64).to_vector<double>();
  b.insert(b.end(), w.begin(), w.end());
  return b;
}
/// |a - b| in units of float32's epsilon at max(|b|, 1) (so near 0 in units of 2^-23).
double scaled_error(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
  return std::fabs(a - b) / (std::max(std::fabs(b), 1.0) * 0x1p-23);
}

ox::GradientTransformation make_opt(const std::string& n) {
  auto wcd = ox::warmup_cosine_decay_schedule(0.0, 1e-2, 2, 6, 1e-3);
  auto sched_exp = ox::exponential_decay(0.1, 2, 0.5, 0, true);
  auto sched_pw = ox::piecewise_constant_schedule(0.1, {{2, 0.5}, {4, 0.2}});
  if (n == "sgd") return ox::sgd(0.1);
  if (n == "sgd_momentum") return ox::sgd(0.1, 0.9);
  if (n == "sgd_nesterov") return ox::sgd(0.1, 0.9, true);
  if (n == "sgd_exp_staircase") return ox::sgd(sched_exp);
  if (n == "sgd_piecewise") return ox::sgd(sched_pw, 0.5);
  if (n == "adam") return ox::adam(1e-2);
  if (n == "nadam") return ox::nadam(1e-2);
  if (n == "adam_eps_root") return ox::adam(1e-2, 0.8, 0.95, 1e-6, 1e-8);
  if (n == "adamw") return ox::adamw(1e-2, 0.9, 0.999, 1e-8, 0.0, 0.1);
  // Leaves in tree order: b, w; the mask decays w only.
  if (n == "adamw_sched_mask") return ox::adamw(wcd, 0.9, 0.999, 1e-8, 0.0, 0.1, {false, true});
  if (n == "nadamw") return ox::nadamw(1e-2, 0.9, 0.999, 1e-8, 0.0, 0.05);
  if (n == "amsgrad") return ox::amsgrad(1e-2);
  if (n == "adamax") return ox::adamax(1e-2);
  if (n == "adamaxw") return ox::adamaxw(1e-2, 0.9, 0.999, 1e-8, 0.05);
  if (n == "adabelief") return ox::adabelief(1e-2);
  if (n == "adabelief_nesterov") return ox::adabelief(1e-2, 0.9, 0.999, 1e-16, 1e-16, true);
  if (n == "adagrad") return ox::adagrad(0.1);
  if (n == "rmsprop") return ox::rmsprop(1e-2);
  if (n == "rmsprop_centered_momentum") return ox::rmsprop(1e-2, 0.9, 1e-8, 0.0, true, true, 0.9);
  if (n == "rmsprop_bias_eps_outside")
    return ox::rmsprop(1e-2, 0.9, 1e-8, 0.1, false, false, std::nullopt, false, true);
  if (n == "rmsprop_centered_bias_nesterov") return ox::rmsprop(1e-2, 0.9, 1e-2, 0.0, true, true, 0.5, true, true);
  if (n == "lion") return ox::lion(1e-3);
  if (n == "lion_sched_decay") return ox::lion(1e-3, 0.9, 0.99, ox::linear_schedule(1e-2, 0.0, 4));
  if (n == "lamb") return ox::lamb(1e-2, 0.9, 0.999, 1e-6, 0.0, 0.01);
  if (n == "yogi") return ox::yogi(1e-2);
  if (n == "sign_sgd") return ox::sign_sgd(0.1);
  if (n == "clip_global_adam") return ox::chain({ox::clip_by_global_norm(1.0), ox::adam(1e-2)});
  if (n == "clip_global_untriggered") return ox::chain({ox::clip_by_global_norm(100.0), ox::sgd(0.1)});
  if (n == "clip_sgd") return ox::chain({ox::clip(0.5), ox::sgd(0.1)});
  if (n == "ema_scale") return ox::chain({ox::ema(0.9), ox::scale(-0.1)});
  if (n == "ema_nodebias") return ox::chain({ox::ema(0.8, false), ox::scale(-0.1)});
  if (n == "lion_smooth") return ox::chain({ox::scale_by_lion(0.9, 0.99, "smooth", 2.0), ox::scale(-0.01)});
  if (n == "lion_refined") return ox::chain({ox::scale_by_lion(0.5, 0.99, "refined"), ox::scale(-0.01)});
  if (n == "trust_ratio") return ox::chain({ox::scale_by_trust_ratio(0.5, 0.1, 1e-3), ox::scale(-0.1)});
  if (n == "scale_by_schedule") return ox::chain({ox::scale_by_schedule(ox::cosine_decay_schedule(-0.1, 4))});
  FAIL("no optimiser for case " << n);
  return ox::identity();
}

ox::Schedule make_schedule(const std::string& n) {
  if (n == "constant") return ox::constant_schedule(0.1);
  if (n == "linear") return ox::linear_schedule(0.1, 0.01, 10, 2);
  if (n == "polynomial2") return ox::polynomial_schedule(1.0, 0.0, 2, 8, 1);
  if (n == "polynomial_half") return ox::polynomial_schedule(1.0, 0.1, 0.5, 8);
  if (n == "piecewise") return ox::piecewise_constant_schedule(0.1, {{3, 0.5}, {6, 0.1}});
  if (n == "exponential") return ox::exponential_decay(0.1, 5, 0.5);
  if (n == "exponential_staircase_end") return ox::exponential_decay(0.1, 3, 0.5, 0, true, 0.03);
  if (n == "exponential_growth_begin") return ox::exponential_decay(0.1, 4, 2.0, 3, false, 0.5);
  if (n == "cosine") return ox::cosine_decay_schedule(0.1, 10, 0.1);
  if (n == "cosine_exponent") return ox::cosine_decay_schedule(0.1, 10, 0.0, 2.0);
  if (n == "warmup_cosine") return ox::warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, 0.01);
  if (n == "warmup_exponential") return ox::warmup_exponential_decay_schedule(0.0, 0.1, 3, 4, 0.5, 0, true, 0.02);
  if (n == "warmup_constant") return ox::warmup_constant_schedule(0.0, 0.1, 4);
  if (n == "join") return ox::join_schedules({ox::constant_schedule(0.1), ox::linear_schedule(0.1, 0.0, 5)}, {4});
  FAIL("no schedule for case " << n);
  return {};
}

std::vector<std::vector<double>> trajectory(const ox::GradientTransformation& opt, bool jitted) {
  Params p = params_from(optax_refs::kParams0);
  ox::OptState s = opt.init(p);
  auto step = [&](const Params& g, const ox::OptState& st, const Params& params) {
    auto [u, s2] = opt.update(g, st, params);
    return std::make_pair(ox::apply_updates(params, u), s2);
  };
  auto jstep = jit(step);
  std::vector<std::vector<double>> out;
  for (auto& gv : optax_refs::kGrads) {
    Params g = params_from(gv);
    std::tie(p, s) = jitted ? jstep(g, s, p) : step(g, s, p);
    out.push_back(flat(p));
  }
  if (jitted) CHECK(jstep.num_compiles() == 1);
  return out;
}

void check_trajectory(const std::vector<std::vector<double>>& got, const std::vector<double>& want) {
  REQUIRE(want.size() == got.size() * 16);
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k)
    for (size_t i = 0; i < 16; ++i) {
      double d = scaled_error(got[k][i], want[k * 16 + i]);
      worst = std::max(worst, d);
      if (d > kUlp)
        FAIL_CHECK("step " << k + 1 << " element " << i << ": got " << got[k][i] << ", want " << want[k * 16 + i]
                           << " (" << d << " ULP of max(|want|, 1))");
    }
  INFO("largest difference " << worst << " ULP of max(|want|, 1)");
  CHECK(worst <= kUlp);
}

TEST_CASE("optax optimisers follow optax's trajectories, eager and jitted", "[optax]") {
  for (auto& c : optax_refs::kOptCases) {
    SECTION(c.name) {
      auto opt = make_opt(c.name);
      check_trajectory(trajectory(opt, false), c.eager);
      check_trajectory(trajectory(opt, true), c.jit.empty() ? c.eager : c.jit);
    }
  }
}

TEST_CASE("optax schedules give optax's values, dtypes and weak types", "[optax]") {
  for (auto& c : optax_refs::kSchedCases) {
    SECTION(c.name) {
      auto s = make_schedule(c.name);
      auto jitted = jit([&](const Array& n) { return s(n); });
      for (int k = 0; k <= 12; ++k) {
        Array count = Array::scalar_int(k, DType::int32);
        for (bool jitted_run : {false, true}) {
          Array v = jitted_run ? jitted(count) : s(count);
          INFO("count " << k << (jitted_run ? " jitted" : " eager"));
          CHECK(dtype_name(v.dtype()) == c.dtype);
          CHECK(v.weak_type() == c.weak);
          const auto& ref = jitted_run && !c.jit.empty() ? c.jit : c.values;
          double got = v.astype(DType::float64).item<double>(), want = ref[static_cast<size_t>(k)];
          // float64: 4 ULP (cos and pow are not correctly rounded in either library); float32: 1 ULP.
          double ulps = c.dtype == "f32" ? 0x1p-23 : 4 * 0x1p-52;
          CHECK(std::fabs(got - want) <= ulps * std::fabs(want));
        }
      }
    }
  }
}

TEST_CASE("optax state layout, counts and dtypes", "[optax]") {
  Params p = params_from(optax_refs::kParams0);
  auto adam = ox::adam(1e-3);
  ox::OptState s = adam.init(p);
  REQUIRE(s.size() == 5);  // count, mu (b, w), nu (b, w)
  CHECK(s[0].dtype() == DType::int32);
  CHECK(s[1].shape() == Shape{4});
  CHECK(s[2].shape() == Shape{3, 4});
  CHECK(s[2].dtype() == DType::float32);
  auto chained = ox::chain({ox::clip_by_global_norm(1.0), ox::adamw(ox::cosine_decay_schedule(1e-3, 100))});
  CHECK(chained.init(p).size() == 6);  // adam's 5 + the schedule's count
  // The count saturates at INT32_MAX (optax's safe_increment).
  s[0] = Array::scalar_int(2147483647, DType::int32);
  auto [u, s2] = adam.update(p, s);
  CHECK(s2[0].item<int64_t>() == 2147483647);
  // f64 parameters keep f64 state and updates.
  std::map<std::string, Array> p64{{"x", array(std::vector<double>{1.5, -2.0}, {2})}};
  auto s64 = ox::adamw(1e-2).init(p64);
  auto [u64, s64b] = ox::adamw(1e-2).update(p64, s64, p64);
  CHECK(u64.at("x").dtype() == DType::float64);
  CHECK(s64b[1].dtype() == DType::float64);
}

TEST_CASE("optax zero_nans replaces NaN updates and records them", "[optax]") {
  Params p = params_from(optax_refs::kParams0);
  Params g = params_from(optax_refs::kGrads[0]);
  auto gv = g.at("w").to_vector<float>();
  gv[6] = NAN;  // w[1, 2]
  g["w"] = array(gv, {3, 4});
  auto opt = ox::chain({ox::zero_nans(), ox::sgd(0.5)});
  auto s = opt.init(p);
  REQUIRE(s.size() == 2);
  auto [u, s2] = opt.update(g, s, p);
  CHECK(s2[0].item<bool>() == false);  // b
  CHECK(s2[1].item<bool>() == true);   // w
  auto uw = u.at("w").to_vector<float>();
  auto gw = g.at("w").to_vector<float>();
  for (size_t i = 0; i < uw.size(); ++i) CHECK(uw[i] == (i == 6 ? 0.0f : -0.5f * gw[i]));
}

TEST_CASE("optax errors name the transformation and what was wrong", "[optax][errors]") {
  Params p = params_from(optax_refs::kParams0);
  auto adam = ox::adam(1e-3);
  auto sgd_state = ox::sgd(0.1, 0.9).init(p);
  CHECK_THROWS_WITH(adam.update(p, sgd_state),
                    Catch::Contains("the state has 2 leaves, expected 5") && Catch::Contains("optax_test.cpp"));
  CHECK_THROWS_WITH(ox::adamw(1e-3).update(p, ox::adamw(1e-3).init(p)),
                    Catch::Contains("add_decayed_weights") && Catch::Contains("needs the parameters"));
  std::map<std::string, Array> other{{"b", p.at("b")}};
  CHECK_THROWS_WITH(adam.update(p, adam.init(p), other), Catch::Contains("different tree structures"));
  CHECK_THROWS_WITH(ox::cosine_decay_schedule(0.1, 0), Catch::Contains("positive decay_steps"));
  CHECK_THROWS_WITH(ox::scale_by_lion(0.9, 0.99, "soft"), Catch::Contains("unknown mode 'soft'"));
  CHECK_THROWS_WITH(ox::piecewise_constant_schedule(0.1, {{2, -1.0}}), Catch::Contains("non-negative"));
  CHECK_THROWS_WITH(ox::join_schedules({ox::constant_schedule(1.0)}, {3}), Catch::Contains("one boundary fewer"));
  CHECK_THROWS_WITH(ox::adamw(1e-3, 0.9, 0.999, 1e-8, 0.0, 0.1, {true}).update(p, ox::adamw(1e-3).init(p), p),
                    Catch::Contains("mask has 1 entries"));
  CHECK_THROWS_AS(ox::ScalarOrSchedule(ox::constant_schedule(1.0)).value(), TypeError);
}

TEST_CASE("a jitted optax training step converges and compiles once across schedule steps", "[optax]") {
  Params target = params_from(optax_refs::kGrads[1]);
  auto loss = [&](const Params& q) {
    return jnp::sum(jnp::square(q.at("w") - target.at("w"))) + jnp::sum(jnp::square(q.at("b") - target.at("b")));
  };
  auto opt = ox::chain({ox::clip_by_global_norm(10.0),
                        ox::adamw(ox::warmup_cosine_decay_schedule(0.0, 0.1, 10, 300), 0.9, 0.999, 1e-8, 0.0, 1e-5)});
  Params p = params_from(optax_refs::kParams0);
  auto s = opt.init(p);
  auto step = jit([&](const Params& q, const ox::OptState& st) {
    auto [l, g] = value_and_grad(loss)(q);
    auto [u, st2] = opt.update(g, st, q);
    return std::make_tuple(ox::apply_updates(q, u), st2, l);
  });
  Array l0 = loss(p), l;
  for (int i = 0; i < 300; ++i) std::tie(p, s, l) = step(p, s);
  CHECK(step.num_compiles() == 1);
  CHECK(l.item<float>() < 1e-3f * l0.item<float>());
  CHECK(s[0].item<int64_t>() == 300);  // adam's count
}

}  // namespace
