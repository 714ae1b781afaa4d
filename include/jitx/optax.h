// jitx::optax: optax's gradient transformations, optimisers and schedules, computed as optax computes them (the
// same formulas in the same order, so the same values, dtypes and edge cases), over any pytree of parameters.
//
//   auto opt = optax::chain({optax::clip_by_global_norm(1.0),
//                            optax::adamw(optax::warmup_cosine_decay_schedule(0, 1e-3, 100, 1000))});
//   optax::OptState state = opt.init(params);
//   auto step = jit([&](const Params& p, const optax::OptState& s, const Batch& b) {
//     auto [loss, g] = value_and_grad(loss_fn)(p, b);
//     auto [updates, s2] = opt.update(g, s, p);
//     return std::make_tuple(optax::apply_updates(p, updates), s2, loss);
//   });
//
// A transformation works on the parameters' leaves (tree_util order); its state is a flat std::vector<Array> (a
// pytree, so it passes through jit and can be donated): the leaves of optax's state in optax's order, e.g. adam's
// (count, mu..., nu...), and a chain's the concatenation of its members'. Step counts are int32 scalars that
// saturate at INT32_MAX (optax's safe_increment); a schedule sees the count as an int32 Array, so under jit changing
// the step never recompiles. Hyperparameters that are doubles are weak-typed scalars, as Python floats are in
// optax: an f32 parameter stays f32 and its state is f32; bias corrections and schedules compute in float64 (JAX
// with x64) and convert to each leaf's dtype.
#pragma once
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/tree_util.h"

namespace jitx::optax {

/// A transformation's state: the leaves of optax's state, in optax's order.
using OptState = std::vector<Array>;
/// A schedule: the value at a step count (an int32 scalar Array), as an Array (float64 for optax's schedules).
using Schedule = std::function<Array(const Array& count)>;

/// A hyperparameter that is a constant or a schedule of the step count (optax's ScalarOrSchedule).
class ScalarOrSchedule {
 public:
  ScalarOrSchedule(double v) : value_(v) {}                  // NOLINT(google-explicit-constructor)
  ScalarOrSchedule(int v) : value_(v) {}                     // NOLINT(google-explicit-constructor)
  ScalarOrSchedule(Schedule s) : schedule_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(std::is_invocable_r_v<Array, F, const Array&> && !std::is_convertible_v<F, double> &&
           !std::is_same_v<std::decay_t<F>, Schedule>) ScalarOrSchedule(F f)
      : schedule_(Schedule(std::move(f))) {}  // NOLINT(google-explicit-constructor)
  bool is_schedule() const { return static_cast<bool>(schedule_); }
  /// The constant (TypeError for a schedule).
  double value() const;
  /// The value at `count`: the schedule's, or the constant as a weak scalar.
  Array at(const Array& count) const;

 private:
  double value_ = 0;
  Schedule schedule_;
};

/// Gradient transformation over a pytree's leaves (optax.GradientTransformation): `init` and `update`, which take
/// any pytree and flatten it.
struct GradientTransformation {
  using Leaves = std::vector<Array>;
  /// The state for these parameter leaves.
  std::function<OptState(const Leaves& params)> init_fn;
  /// Transforms `updates` in place and returns the new state; params is null where the caller passed none.
  std::function<OptState(Leaves& updates, const OptState& state, const Leaves* params)> update_fn;
  /// How many state leaves init_fn gives for n parameter leaves (so that chain can split a state).
  std::function<size_t(size_t n)> state_size;
  /// The transformation's name in error messages ("scale_by_adam").
  std::string name;

  template <class P>
  OptState init(const P& params, Loc loc = Loc::current()) const {
    return run_init(tree_util::tree_leaves(params), loc);
  }
  /// (transformed updates, new state); params for the transformations that read them (weight decay, trust ratio).
  template <class P>
  std::pair<P, OptState> update(const P& updates, const OptState& state, const P& params,
                                Loc loc = Loc::current()) const {
    auto [leaves, def] = tree_util::tree_flatten(updates);
    auto [pleaves, pdef] = tree_util::tree_flatten(params);
    check_structures(def.str(), pdef.str(), loc);
    OptState s = run(leaves, state, &pleaves, loc);
    return {tree_util::tree_unflatten(def, leaves), std::move(s)};
  }
  template <class P>
  std::pair<P, OptState> update(const P& updates, const OptState& state, Loc loc = Loc::current()) const {
    auto [leaves, def] = tree_util::tree_flatten(updates);
    OptState s = run(leaves, state, nullptr, loc);
    return {tree_util::tree_unflatten(def, leaves), std::move(s)};
  }

 private:
  OptState run_init(const Leaves& params, Loc loc) const;
  OptState run(Leaves& updates, const OptState& state, const Leaves* params, Loc loc) const;
  void check_structures(const std::string& updates, const std::string& params, Loc loc) const;
};

/// params + updates, leaf by leaf, in each parameter's dtype (optax.apply_updates).
Array apply_update(const Array& param, const Array& update);
template <class P>
P apply_updates(const P& params, const P& updates) {
  return tree_util::tree_map([](const Array& p, const Array& u) { return apply_update(p, u); }, params, updates);
}

// --- combining ---
/// The transformations applied in order, their states concatenated (optax.chain).
GradientTransformation chain(std::vector<GradientTransformation> transforms);
/// Passes updates through unchanged, with no state (optax.identity).
GradientTransformation identity();

// --- transformations (optax's, same defaults) ---
/// updates * step_size.
GradientTransformation scale(double step_size);
/// updates * -learning_rate (or * learning_rate with flip_sign false); a schedule keeps an int32 count.
GradientTransformation scale_by_learning_rate(ScalarOrSchedule learning_rate, bool flip_sign = true);
/// updates * step_size_fn(count), the count in the state.
GradientTransformation scale_by_schedule(Schedule step_size_fn);
/// Adam's rescaling (bias-corrected moments; nesterov gives NAdam's).
GradientTransformation scale_by_adam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0,
                                     bool nesterov = false);
/// AMSGrad's rescaling (the running maximum of the second moment).
GradientTransformation scale_by_amsgrad(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0,
                                        bool bias_correction_mu = true, bool bias_correction_nu = true);
/// Adamax's rescaling (infinity norm).
GradientTransformation scale_by_adamax(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8);
/// AdaBelief's rescaling.
GradientTransformation scale_by_belief(double b1 = 0.9, double b2 = 0.999, double eps = 1e-16, double eps_root = 1e-16,
                                       bool nesterov = false);
/// Lion's sign update ("hard"; "smooth" is tanh(smooth_beta x), "refined" linear inside [-1, 1]).
GradientTransformation scale_by_lion(double b1 = 0.9, double b2 = 0.99, const std::string& mode = "hard",
                                     double smooth_beta = 1.0);
/// Adagrad's rescaling (root of the sum of squares).
GradientTransformation scale_by_rss(double initial_accumulator_value = 0.1, double eps = 1e-7);
/// RMSProp's rescaling.
GradientTransformation scale_by_rms(double decay = 0.9, double eps = 1e-8, double initial_scale = 0.0,
                                    bool eps_in_sqrt = true, bool bias_correction = false);
/// Centred RMSProp's rescaling (by the standard deviation).
GradientTransformation scale_by_stddev(double decay = 0.9, double eps = 1e-8, double initial_scale = 0.0,
                                       bool eps_in_sqrt = true, bool bias_correction = false);
/// Yogi's rescaling.
GradientTransformation scale_by_yogi(double b1 = 0.9, double b2 = 0.999, double eps = 1e-3, double eps_root = 0.0,
                                     double initial_accumulator_value = 1e-6);
/// Updates scaled by ||param|| / ||update|| per leaf (LAMB's, LARS's).
GradientTransformation scale_by_trust_ratio(double min_norm = 0.0, double trust_coefficient = 1.0, double eps = 0.0);
/// sign(updates).
GradientTransformation scale_by_sign();
/// Momentum: trace = updates + decay * trace (optax.trace).
GradientTransformation trace(double decay, bool nesterov = false);
/// Exponential moving average of the updates, optionally debiased (optax.ema).
GradientTransformation ema(double decay, bool debias = true);
/// updates + weight_decay * params (a constant or a schedule; `mask` picks the leaves it applies to, by leaf order).
GradientTransformation add_decayed_weights(ScalarOrSchedule weight_decay = 0.0, std::vector<bool> mask = {});
/// Each element clipped to [-max_delta, max_delta].
GradientTransformation clip(double max_delta);
/// All updates scaled by max_norm / global_norm when the global norm is at least max_norm.
GradientTransformation clip_by_global_norm(double max_norm);
/// NaN updates replaced by zeros; the state holds, per leaf, whether the last update had a NaN (optax.zero_nans).
GradientTransformation zero_nans();

// --- optimisers (optax's aliases, same defaults) ---
GradientTransformation sgd(ScalarOrSchedule learning_rate, std::optional<double> momentum = std::nullopt,
                           bool nesterov = false);
GradientTransformation adam(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                            double eps_root = 0.0, bool nesterov = false);
GradientTransformation nadam(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                             double eps_root = 0.0);
GradientTransformation adamw(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                             double eps_root = 0.0, ScalarOrSchedule weight_decay = 1e-4, std::vector<bool> mask = {},
                             bool nesterov = false);
GradientTransformation nadamw(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                              double eps_root = 0.0, ScalarOrSchedule weight_decay = 1e-4, std::vector<bool> mask = {});
GradientTransformation amsgrad(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                               double eps_root = 0.0);
GradientTransformation adamax(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8);
GradientTransformation adamaxw(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                               ScalarOrSchedule weight_decay = 1e-4, std::vector<bool> mask = {});
GradientTransformation adabelief(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-16,
                                 double eps_root = 1e-16, bool nesterov = false);
GradientTransformation adagrad(ScalarOrSchedule learning_rate, double initial_accumulator_value = 0.1,
                               double eps = 1e-7);
GradientTransformation rmsprop(ScalarOrSchedule learning_rate, double decay = 0.9, double eps = 1e-8,
                               double initial_scale = 0.0, bool eps_in_sqrt = true, bool centered = false,
                               std::optional<double> momentum = std::nullopt, bool nesterov = false,
                               bool bias_correction = false);
GradientTransformation lion(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.99,
                            ScalarOrSchedule weight_decay = 1e-3, std::vector<bool> mask = {});
GradientTransformation lamb(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
                            double eps_root = 0.0, ScalarOrSchedule weight_decay = 0.0, std::vector<bool> mask = {});
GradientTransformation yogi(ScalarOrSchedule learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-3);
GradientTransformation sign_sgd(ScalarOrSchedule learning_rate);

// --- schedules (optax's, same arguments; values are float64 Arrays of the int32 count) ---
Schedule constant_schedule(double value);
Schedule polynomial_schedule(double init_value, double end_value, double power, int64_t transition_steps,
                             int64_t transition_begin = 0);
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps, int64_t transition_begin = 0);
/// init_value times the product of the scales of the boundaries already passed (count >= boundary).
Schedule piecewise_constant_schedule(double init_value, std::map<int64_t, double> boundaries_and_scales = {});
Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate, int64_t transition_begin = 0,
                           bool staircase = false, std::optional<double> end_value = std::nullopt);
Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha = 0.0, double exponent = 1.0);
Schedule warmup_constant_schedule(double init_value, double peak_value, int64_t warmup_steps);
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps, int64_t decay_steps,
                                      double end_value = 0.0, double exponent = 1.0);
Schedule warmup_exponential_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                           int64_t transition_steps, double decay_rate, int64_t transition_begin = 0,
                                           bool staircase = false, std::optional<double> end_value = std::nullopt);
/// schedules[i] from boundaries[i-1] on, each seeing the count since its boundary.
Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries);

// --- tree helpers ---
/// The L2 norm of all leaves together (optax.tree.norm / optax.global_norm): sqrt of the sum of the per-leaf sums of
/// squares, added in leaf order.
Array global_norm(const std::vector<Array>& leaves);
template <class P>
Array global_norm(const P& tree) {
  return global_norm(tree_util::tree_leaves(tree));
}

}  // namespace jitx::optax
