// jitx::optax (jitx/optax.h): optax's optimisers as chains of its transformations, and its schedules, written
// with the jnp ops optax uses so that their dtypes and values agree (a linear schedule of the int32 count is
// float32, a cosine one float64 and weak, as under JAX with x64).
#include <cmath>
#include <numbers>

#include "core/errors.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy.h"
#include "jitx/optax.h"

namespace jitx::optax {
using detail::throw_error;

namespace {
/// A Python float (a weak float64) and a Python int (a weak integer). Named apart from optax.cpp's helpers, as a
/// unity build compiles both files as one.
Array pyf(double v) { return Array(v); }
Array pyi(int64_t v) { return Array(v); }

/// Weight decay through a mask, as optax's masked(add_decayed_weights(...), mask).
GradientTransformation masked_decay(const ScalarOrSchedule& wd, const std::vector<bool>& mask) {
  return add_decayed_weights(wd, mask);
}
}  // namespace

// --- optimisers ---
GradientTransformation sgd(ScalarOrSchedule lr, std::optional<double> momentum, bool nesterov) {
  return chain({momentum ? trace(*momentum, nesterov) : identity(), scale_by_learning_rate(lr)});
}
GradientTransformation adam(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root, bool nesterov) {
  return chain({scale_by_adam(b1, b2, eps, eps_root, nesterov), scale_by_learning_rate(lr)});
}
GradientTransformation nadam(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root) {
  return adam(std::move(lr), b1, b2, eps, eps_root, true);
}
GradientTransformation adamw(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root,
                             ScalarOrSchedule weight_decay, std::vector<bool> mask, bool nesterov) {
  return chain(
      {scale_by_adam(b1, b2, eps, eps_root, nesterov), masked_decay(weight_decay, mask), scale_by_learning_rate(lr)});
}
GradientTransformation nadamw(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root,
                              ScalarOrSchedule weight_decay, std::vector<bool> mask) {
  return adamw(std::move(lr), b1, b2, eps, eps_root, std::move(weight_decay), std::move(mask), true);
}
GradientTransformation amsgrad(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root) {
  return chain({scale_by_amsgrad(b1, b2, eps, eps_root), scale_by_learning_rate(lr)});
}
GradientTransformation adamax(ScalarOrSchedule lr, double b1, double b2, double eps) {
  return chain({scale_by_adamax(b1, b2, eps), scale_by_learning_rate(lr)});
}
GradientTransformation adamaxw(ScalarOrSchedule lr, double b1, double b2, double eps, ScalarOrSchedule weight_decay,
                               std::vector<bool> mask) {
  return chain({scale_by_adamax(b1, b2, eps), masked_decay(weight_decay, mask), scale_by_learning_rate(lr)});
}
GradientTransformation adabelief(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root,
                                 bool nesterov) {
  return chain({scale_by_belief(b1, b2, eps, eps_root, nesterov), scale_by_learning_rate(lr)});
}
GradientTransformation adagrad(ScalarOrSchedule lr, double initial_accumulator_value, double eps) {
  return chain({scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(lr)});
}
GradientTransformation rmsprop(ScalarOrSchedule lr, double decay_rate, double eps, double initial_scale,
                               bool eps_in_sqrt, bool centered, std::optional<double> momentum, bool nesterov,
                               bool bias_correction) {
  GradientTransformation base = centered ? scale_by_stddev(decay_rate, eps, initial_scale, eps_in_sqrt, bias_correction)
                                         : scale_by_rms(decay_rate, eps, initial_scale, eps_in_sqrt, bias_correction);
  return chain({base, scale_by_learning_rate(lr), momentum ? trace(*momentum, nesterov) : identity()});
}
GradientTransformation lion(ScalarOrSchedule lr, double b1, double b2, ScalarOrSchedule weight_decay,
                            std::vector<bool> mask) {
  return chain({scale_by_lion(b1, b2), masked_decay(weight_decay, mask), scale_by_learning_rate(lr)});
}
GradientTransformation lamb(ScalarOrSchedule lr, double b1, double b2, double eps, double eps_root,
                            ScalarOrSchedule weight_decay, std::vector<bool> mask) {
  return chain({scale_by_adam(b1, b2, eps, eps_root), masked_decay(weight_decay, mask), scale_by_trust_ratio(),
                scale_by_learning_rate(lr)});
}
GradientTransformation yogi(ScalarOrSchedule lr, double b1, double b2, double eps) {
  return chain({scale_by_yogi(b1, b2, eps), scale_by_learning_rate(lr)});
}
GradientTransformation sign_sgd(ScalarOrSchedule lr) { return chain({scale_by_sign(), scale_by_learning_rate(lr)}); }

// --- schedules ---
Schedule constant_schedule(double value) {
  return [value](const Array&) { return pyf(value); };
}

Schedule polynomial_schedule(double init_value, double end_value, double power, int64_t transition_steps,
                             int64_t transition_begin) {
  if (transition_steps <= 0) return constant_schedule(init_value);  // as optax (which logs it)
  if (transition_begin < 0) transition_begin = 0;
  // An integral power is a Python int there (linear_schedule passes 1): jnp.power takes lax.integer_pow.
  bool integral = power == std::floor(power) && std::fabs(power) < 2147483648.0;
  return [=](const Array& count) {
    Array c = jnp::clip(count - pyi(transition_begin), pyi(0), pyi(transition_steps));
    Array frac = pyi(1) - c / pyi(transition_steps);
    Array fp = integral ? jnp::power(frac, pyi(static_cast<int64_t>(power))) : jnp::power(frac, pyf(power));
    return pyf(init_value - end_value) * fp + pyf(end_value);
  };
}

Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps, int64_t transition_begin) {
  return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin);
}

Schedule piecewise_constant_schedule(double init_value, std::map<int64_t, double> boundaries_and_scales) {
  for (auto& [b, s] : boundaries_and_scales)
    if (!(s >= 0.0))
      throw_error<TypeError>("optax.piecewise_constant_schedule", "expects non-negative scale factors, got {} at {}", s,
                             b);
  return [=](const Array& count) {
    Array v = pyf(init_value);
    for (auto& [threshold, s] : boundaries_and_scales) {
      Array indicator = jnp::maximum(pyf(0.0), jnp::sign(pyi(threshold) - count));
      v = v * indicator + (pyi(1) - indicator) * pyf(s) * v;
    }
    return v;
  };
}

Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate, int64_t transition_begin,
                           bool staircase, std::optional<double> end_value) {
  if (transition_steps <= 0 || decay_rate == 0) return constant_schedule(init_value);  // as optax
  if (transition_begin < 0) transition_begin = 0;
  return [=](const Array& count) {
    Array dc = count - pyi(transition_begin);
    Array p = dc / pyi(transition_steps);
    if (staircase) p = jnp::floor(p);
    Array v = jnp::where(dc <= pyi(0), pyf(init_value), pyf(init_value) * jnp::power(pyf(decay_rate), p));
    if (end_value) v = decay_rate < 1.0 ? jnp::maximum(v, pyf(*end_value)) : jnp::minimum(v, pyf(*end_value));
    return v;
  };
}

Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha, double exponent) {
  if (decay_steps <= 0)
    throw_error<TypeError>("optax.cosine_decay_schedule", "requires positive decay_steps, got decay_steps={}",
                           decay_steps);
  // optax turns the int decay_steps into a Python float.
  double steps = static_cast<double>(decay_steps);
  return [=](const Array& count) {
    Array c = jnp::minimum(count, pyf(steps));
    Array cosine = pyf(0.5) * (pyi(1) + jnp::cos(pyf(std::numbers::pi) * c / pyf(steps)));
    Array decayed = pyf(1 - alpha) * jnp::power(cosine, pyf(exponent)) + pyf(alpha);
    return pyf(init_value) * decayed;
  };
}

Schedule warmup_constant_schedule(double init_value, double peak_value, int64_t warmup_steps) {
  return linear_schedule(init_value, peak_value, warmup_steps);
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps, int64_t decay_steps,
                                      double end_value, double exponent) {
  double alpha = peak_value == 0.0 ? 0.0 : end_value / peak_value;
  return join_schedules({linear_schedule(init_value, peak_value, warmup_steps),
                         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)},
                        {warmup_steps});
}

Schedule warmup_exponential_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                           int64_t transition_steps, double decay_rate, int64_t transition_begin,
                                           bool staircase, std::optional<double> end_value) {
  return join_schedules(
      {linear_schedule(init_value, peak_value, warmup_steps),
       exponential_decay(peak_value, transition_steps, decay_rate, transition_begin, staircase, end_value)},
      {warmup_steps});
}

Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries) {
  if (schedules.empty() || boundaries.size() + 1 != schedules.size())
    throw_error<TypeError>("optax.join_schedules",
                           "needs one boundary fewer than schedules, got {} schedules and {} "
                           "boundaries",
                           schedules.size(), boundaries.size());
  for (auto& s : schedules)
    if (!s) throw_error<TypeError>("optax.join_schedules", "got an empty schedule");
  return [=](const Array& step) {
    Array out = schedules[0](step);
    for (size_t i = 0; i < boundaries.size(); ++i)
      out = jnp::where(step < pyi(boundaries[i]), out, schedules[i + 1](step - pyi(boundaries[i])));
    return out;
  };
}

}  // namespace jitx::optax
