// jitx::optax (jitx/optax.h): optax's transformations, aliases and schedules, each written with the jnp/lax ops
// optax uses, in its order, so that values, dtypes and weak types agree with optax under JAX with x64 (the tests
// compare with optax 0.2.8's values bit for bit where its ops are correctly rounded).
#include "jitx/optax.h"

#include <climits>
#include <cmath>
#include <numbers>

#include "core/errors.h"
#include "jitx/jit.h"
#include "jitx/lax.h"
#include "jitx/lax_extra.h"
#include "jitx/numpy.h"

namespace jitx::optax {
using detail::ApiScope;
using detail::throw_error;
using Leaves = std::vector<Array>;

namespace {

/// A Python float: a weak f64 scalar (an f32 leaf stays f32 next to it).
Array w(double v) { return Array(v); }
Array i32(int64_t v) { return Array::scalar_int(v, DType::int32); }

/// optax.safe_increment of an int32 count: +1, saturating at INT32_MAX.
Array safe_increment(const Array& count) {
  Array top = i32(INT32_MAX);
  return jnp::where(count < top, count + i32(1), top);
}

/// (1 - decay) g^order + decay t (optax.tree.update_moment; per_elem_norm is the same for real leaves).
Array moment(const Array& g, const Array& t, double decay, int order) {
  Array gk = order == 1 ? g : lax::integer_pow(g, order);
  return w(1 - decay) * gk + w(decay) * t;
}

/// t / (1 - decay^count), the correction computed in float64 (decay^count as lax.pow of the count converted, as
/// jnp.power of a traced integer exponent is) and converted to t's dtype (optax.tree.bias_correction). optax jits it
/// (inline), so even an eager update compiles it, and XLA turns the division by the broadcast scalar into a multiply
/// by its reciprocal: jitted here too (inlined into an enclosing trace), so eager updates round as optax's do.
Array bias_correction(const Array& t, double decay, const Array& count) {
  static const auto corrected = jit(
      [](const Array& moment, const Array& d, const Array& n) {
        Array bc = w(1) - lax::pow(d, lax::convert_element_type(n, DType::float64));
        return moment / lax::convert_element_type(bc, moment.dtype());
      },
      JitOptions{}.set_name("optax_bias_correction"));
  return corrected(t, w(decay), count);
}

/// The L2 norm of x over all its elements (jnp.linalg.norm(x) of a real x: sqrt(sum(x * x))).
Array l2(const Array& x) { return jnp::sqrt(jnp::sum(x * x)); }

/// A transformation from its parts.
GradientTransformation make(std::string name, std::function<size_t(size_t)> size,
                            std::function<OptState(const Leaves&)> init,
                            std::function<OptState(Leaves&, const OptState&, const Leaves*)> update) {
  GradientTransformation t;
  t.name = std::move(name);
  t.state_size = std::move(size);
  t.init_fn = std::move(init);
  t.update_fn = std::move(update);
  return t;
}
/// A stateless transformation applying f to each update leaf.
GradientTransformation stateless(std::string name, std::function<Array(const Array&)> f) {
  return make(
      std::move(name), [](size_t) { return size_t{0}; }, [](const Leaves&) { return OptState{}; },
      [f](Leaves& u, const OptState&, const Leaves*) {
        for (auto& x : u) x = f(x);
        return OptState{};
      });
}

Leaves zeros_of(const Leaves& params) {
  Leaves out;
  for (auto& p : params) out.push_back(zeros_like(p));
  return out;
}
Leaves full_of(const Leaves& params, double v) {
  Leaves out;
  for (auto& p : params) out.push_back(full_like(p, v));
  return out;
}
/// State layout helpers: [count?] then k groups of n leaves.
OptState concat(std::initializer_list<const Leaves*> parts) {
  OptState out;
  for (auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}
Leaves group(const OptState& s, size_t offset, size_t k, size_t n) {
  return Leaves(s.begin() + static_cast<std::ptrdiff_t>(offset + k * n),
                s.begin() + static_cast<std::ptrdiff_t>(offset + (k + 1) * n));
}

const Leaves& need_params(const Leaves* params, const char* name) {
  if (!params)
    throw_error<TypeError>(name,
                           "needs the parameters: call update(updates, state, params), not update(updates, "
                           "state)");
  return *params;
}

/// The (count, mu, nu) family: Adam, AMSGrad's first two, Adamax, AdaBelief, Yogi.
struct Moments {
  Array count;
  Leaves mu, nu;
};
Moments moments_of(const OptState& s, size_t n) { return {s[0], group(s, 1, 0, n), group(s, 1, 1, n)}; }
OptState state_of(const Array& count, const Leaves& mu, const Leaves& nu) {
  Leaves c{count};
  return concat({&c, &mu, &nu});
}

/// Adam's (and AdaBelief's) first moment estimate: bias-corrected, or with Nesterov's look-ahead.
Array mu_hat(const Array& m, const Array& g, double b1, const Array& count, bool nesterov) {
  if (!nesterov) return bias_correction(m, b1, count);
  return w(b1) * bias_correction(m, b1, safe_increment(count)) + w(1 - b1) * bias_correction(g, b1, count);
}

/// The (count, mu, nu) transformations (Adam, Adamax, AdaBelief, Yogi): state [count, mu..., nu...], both moments
/// starting at `initial`; step updates a leaf's moments and returns its update, given the incremented count.
using MomentStep = std::function<Array(const Array& g, Array& mu, Array& nu, const Array& count)>;
GradientTransformation moments_transform(std::string name, double initial, MomentStep step) {
  return make(
      std::move(name), [](size_t n) { return 1 + 2 * n; },
      [initial](const Leaves& p) { return state_of(i32(0), full_of(p, initial), full_of(p, initial)); },
      [step](Leaves& u, const OptState& s, const Leaves*) {
        auto [count, mu, nu] = moments_of(s, u.size());
        Array c = safe_increment(count);
        for (size_t i = 0; i < u.size(); ++i) u[i] = step(u[i], mu[i], nu[i], c);
        return state_of(c, mu, nu);
      });
}

Array as_dtype_of(const Array& v, const Array& like) { return lax::convert_element_type(v, like.dtype()); }

}  // namespace

// --- ScalarOrSchedule, GradientTransformation ---
double ScalarOrSchedule::value() const {
  if (schedule_) throw_error<TypeError>("optax", "this hyperparameter is a schedule, not a constant");
  return value_;
}
Array ScalarOrSchedule::at(const Array& count) const { return schedule_ ? schedule_(count) : w(value_); }

OptState GradientTransformation::run_init(const Leaves& params, Loc loc) const {
  ApiScope s(loc);
  if (!init_fn) throw_error<TypeError>("optax.init", "this GradientTransformation is empty (default-constructed)");
  return init_fn(params);
}

OptState GradientTransformation::run(Leaves& updates, const OptState& state, const Leaves* params, Loc loc) const {
  ApiScope s(loc);
  if (!update_fn) throw_error<TypeError>("optax.update", "this GradientTransformation is empty (default-constructed)");
  size_t want = state_size(updates.size());
  if (state.size() != want)
    throw_error<TypeError>(name,
                           "the state has {} leaves, expected {} for {} parameter leaves (was it made by this "
                           "transformation's init, for parameters of this structure?)",
                           state.size(), want, updates.size());
  return update_fn(updates, state, params);
}

void GradientTransformation::check_structures(const std::string& updates, const std::string& params, Loc loc) const {
  ApiScope s(loc);
  if (updates != params)
    throw_error<TypeError>(name, "the updates and the parameters have different tree structures: {} vs {}", updates,
                           params);
}

Array apply_update(const Array& param, const Array& update) {
  return lax::convert_element_type(param + update, param.dtype());
}

// --- combining ---
GradientTransformation identity() {
  return stateless("identity", [](const Array& x) { return x; });
}

GradientTransformation chain(std::vector<GradientTransformation> ts) {
  for (auto& t : ts)
    if (!t.update_fn)
      throw_error<TypeError>("optax.chain", "got an empty (default-constructed) GradientTransformation");
  std::string name = "chain(";
  for (size_t i = 0; i < ts.size(); ++i) name += (i ? ", " : "") + ts[i].name;
  name += ")";
  return make(
      name,
      [ts](size_t n) {
        size_t total = 0;
        for (auto& t : ts) total += t.state_size(n);
        return total;
      },
      [ts](const Leaves& params) {
        OptState out;
        for (auto& t : ts) {
          OptState s = t.init_fn(params);
          out.insert(out.end(), s.begin(), s.end());
        }
        return out;
      },
      [ts](Leaves& u, const OptState& state, const Leaves* params) {
        OptState out;
        size_t at = 0;
        for (auto& t : ts) {
          size_t k = t.state_size(u.size());
          OptState mine(state.begin() + static_cast<std::ptrdiff_t>(at),
                        state.begin() + static_cast<std::ptrdiff_t>(at + k));
          at += k;
          OptState s = t.update_fn(u, mine, params);
          out.insert(out.end(), s.begin(), s.end());
        }
        return out;
      });
}

// --- transformations ---
GradientTransformation scale(double step_size) {
  return stateless("scale", [step_size](const Array& g) { return w(step_size) * g; });
}

GradientTransformation scale_by_schedule(Schedule step_size_fn) {
  if (!step_size_fn) throw_error<TypeError>("optax.scale_by_schedule", "got an empty schedule");
  return make(
      "scale_by_schedule", [](size_t) { return size_t{1}; }, [](const Leaves&) { return OptState{i32(0)}; },
      [step_size_fn](Leaves& u, const OptState& s, const Leaves*) {
        Array step = step_size_fn(s[0]);
        for (auto& g : u) g = as_dtype_of(step, g) * g;
        return OptState{safe_increment(s[0])};
      });
}

GradientTransformation scale_by_learning_rate(ScalarOrSchedule lr, bool flip_sign) {
  double m = flip_sign ? -1 : 1;
  if (lr.is_schedule()) return scale_by_schedule([lr, m](const Array& c) { return w(m) * lr.at(c); });
  return scale(m * lr.value());
}

GradientTransformation scale_by_adam(double b1, double b2, double eps, double eps_root, bool nesterov) {
  return moments_transform("scale_by_adam", 0.0, [=](const Array& g, Array& mu, Array& nu, const Array& c) {
    mu = moment(g, mu, b1, 1);
    nu = moment(g, nu, b2, 2);
    return mu_hat(mu, g, b1, c, nesterov) / (jnp::sqrt(bias_correction(nu, b2, c) + w(eps_root)) + w(eps));
  });
}

GradientTransformation scale_by_amsgrad(double b1, double b2, double eps, double eps_root, bool bc_mu, bool bc_nu) {
  return make(
      "scale_by_amsgrad", [](size_t n) { return 1 + 3 * n; },
      [](const Leaves& p) {
        Leaves z = zeros_of(p), c{i32(0)};
        return concat({&c, &z, &z, &z});
      },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        size_t n = u.size();
        Leaves mu = group(s, 1, 0, n), nu = group(s, 1, 1, n), nu_max = group(s, 1, 2, n);
        Array c = safe_increment(s[0]);
        for (size_t i = 0; i < n; ++i) {
          mu[i] = moment(u[i], mu[i], b1, 1);
          nu[i] = moment(u[i], nu[i], b2, 2);
          Array m = bc_mu ? bias_correction(mu[i], b1, c) : mu[i];
          Array v = bc_nu ? bias_correction(nu[i], b2, c) : nu[i];
          nu_max[i] = jnp::maximum(nu_max[i], v);
          u[i] = m / (jnp::sqrt(nu_max[i] + w(eps_root)) + w(eps));
        }
        Leaves cl{c};
        return concat({&cl, &mu, &nu, &nu_max});
      });
}

GradientTransformation scale_by_adamax(double b1, double b2, double eps) {
  return moments_transform("scale_by_adamax", 0.0, [=](const Array& g, Array& mu, Array& nu, const Array& c) {
    mu = moment(g, mu, b1, 1);
    nu = jnp::maximum(jnp::abs(g) + w(eps), w(b2) * nu);  // optax.tree.update_infinity_moment
    return bias_correction(mu, b1, c) / nu;
  });
}

GradientTransformation scale_by_belief(double b1, double b2, double eps, double eps_root, bool nesterov) {
  return moments_transform("scale_by_belief", 0.0, [=](const Array& g, Array& mu, Array& nu, const Array& c) {
    mu = moment(g, mu, b1, 1);
    nu = moment(g - mu, nu, b2, 2) + w(eps_root);
    return mu_hat(mu, g, b1, c, nesterov) / (jnp::sqrt(bias_correction(nu, b2, c)) + w(eps));
  });
}

GradientTransformation scale_by_lion(double b1, double b2, const std::string& mode, double smooth_beta) {
  if (mode != "hard" && mode != "smooth" && mode != "refined")
    throw_error<TypeError>("optax.scale_by_lion", "unknown mode '{}', expected 'hard', 'smooth' or 'refined'", mode);
  return make(
      "scale_by_lion", [](size_t n) { return 1 + n; },
      [](const Leaves& p) {
        Leaves c{i32(0)}, z = zeros_of(p);
        return concat({&c, &z});
      },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        Leaves mu = group(s, 1, 0, u.size());
        for (size_t i = 0; i < u.size(); ++i) {
          Array x = w(1.0 - b1) * u[i] + w(b1) * mu[i];
          Array upd = mode == "hard"     ? jnp::sign(x)
                      : mode == "smooth" ? jnp::tanh(w(smooth_beta) * x)
                                         : jnp::where(jnp::abs(x) < w(1.0), x, jnp::sign(x));
          mu[i] = moment(u[i], mu[i], b2, 1);
          u[i] = upd;
        }
        Leaves c{safe_increment(s[0])};
        return concat({&c, &mu});
      });
}

GradientTransformation scale_by_rss(double initial_accumulator_value, double eps) {
  return make(
      "scale_by_rss", [](size_t n) { return n; },
      [=](const Leaves& p) { return full_of(p, initial_accumulator_value); },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        OptState out;
        for (size_t i = 0; i < u.size(); ++i) {
          Array t = u[i] * u[i] + s[i];
          Array inv = jnp::where(t > w(0.0), lax::rsqrt(t + w(eps)), w(0.0));
          u[i] = inv * u[i];
          out.push_back(t);
        }
        return out;
      });
}

namespace {
/// RMSProp, plain (centered false: state [count?] nu) or centred ([count?] mu nu).
GradientTransformation rms_family(const char* name, bool centered, double decay, double eps, double initial_scale,
                                  bool eps_in_sqrt, bool bias_correction_on) {
  size_t groups = centered ? 2 : 1;
  size_t extra = bias_correction_on ? 1 : 0;
  return make(
      name, [=](size_t n) { return extra + groups * n; },
      [=](const Leaves& p) {
        Leaves c, mu = centered ? zeros_of(p) : Leaves{}, nu = full_of(p, initial_scale);
        if (bias_correction_on) c.push_back(i32(0));
        return concat({&c, &mu, &nu});
      },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        size_t n = u.size();
        Leaves mu = centered ? group(s, extra, 0, n) : Leaves{}, nu = group(s, extra, groups - 1, n), c;
        Array count = bias_correction_on ? safe_increment(s[0]) : Array();
        for (size_t i = 0; i < n; ++i) {
          if (centered) mu[i] = moment(u[i], mu[i], decay, 1);
          nu[i] = moment(u[i], nu[i], decay, 2);
          Array m = centered ? (bias_correction_on ? bias_correction(mu[i], decay, count) : mu[i]) : Array();
          Array v = bias_correction_on ? bias_correction(nu[i], decay, count) : nu[i];
          Array var = centered ? v - m * m : v;
          Array scaling = eps_in_sqrt ? lax::rsqrt(var + w(eps)) : w(1.0) / (jnp::sqrt(var) + w(eps));
          u[i] = scaling * u[i];
        }
        if (bias_correction_on) c.push_back(count);
        return concat({&c, &mu, &nu});
      });
}
}  // namespace

GradientTransformation scale_by_rms(double decay, double eps, double initial_scale, bool eps_in_sqrt,
                                    bool bias_correction_on) {
  return rms_family("scale_by_rms", false, decay, eps, initial_scale, eps_in_sqrt, bias_correction_on);
}
GradientTransformation scale_by_stddev(double decay, double eps, double initial_scale, bool eps_in_sqrt,
                                       bool bias_correction_on) {
  return rms_family("scale_by_stddev", true, decay, eps, initial_scale, eps_in_sqrt, bias_correction_on);
}

GradientTransformation scale_by_yogi(double b1, double b2, double eps, double eps_root, double initial) {
  return moments_transform("scale_by_yogi", initial, [=](const Array& g, Array& mu, Array& nu, const Array& c) {
    mu = moment(g, mu, b1, 1);
    Array g2 = g * g;
    nu = nu - w(1 - b2) * jnp::sign(nu - g2) * g2;
    return bias_correction(mu, b1, c) / (jnp::sqrt(bias_correction(nu, b2, c) + w(eps_root)) + w(eps));
  });
}

GradientTransformation scale_by_trust_ratio(double min_norm, double trust_coefficient, double eps) {
  return make(
      "scale_by_trust_ratio", [](size_t) { return size_t{0}; }, [](const Leaves&) { return OptState{}; },
      [=](Leaves& u, const OptState&, const Leaves* params) {
        const Leaves& p = need_params(params, "optax.scale_by_trust_ratio");
        // numerics.safe_norm: the norm, or min_norm where it is at most min_norm (of ones there, for the gradient).
        auto safe_norm = [&](const Array& x) {
          Array norm = l2(x);
          Array xs = jnp::where(norm <= w(min_norm), ones_like(x), x);
          return jnp::where(norm <= w(min_norm), w(min_norm), l2(xs));
        };
        for (size_t i = 0; i < u.size(); ++i) {
          Array pn = safe_norm(p[i]), un = safe_norm(u[i]);
          Array ratio = w(trust_coefficient) * pn / (un + w(eps));
          Array zero = jnp::logical_or(pn == w(0.0), un == w(0.0));
          Array safe = jnp::where(zero, Array::scalar(1.0, p[i].dtype()), ratio);
          u[i] = u[i] * safe;
        }
        return OptState{};
      });
}

GradientTransformation scale_by_sign() {
  return stateless("scale_by_sign", [](const Array& g) { return jnp::sign(g); });
}

GradientTransformation trace(double decay, bool nesterov) {
  return make(
      "trace", [](size_t n) { return n; }, [](const Leaves& p) { return zeros_of(p); },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        OptState out;
        for (size_t i = 0; i < u.size(); ++i) {
          Array t = u[i] + w(decay) * s[i];
          u[i] = nesterov ? u[i] + w(decay) * t : t;
          out.push_back(t);
        }
        return out;
      });
}

GradientTransformation ema(double decay, bool debias) {
  return make(
      "ema", [](size_t n) { return 1 + n; },
      [](const Leaves& p) {
        Leaves c{i32(0)}, z = zeros_of(p);
        return concat({&c, &z});
      },
      [=](Leaves& u, const OptState& s, const Leaves*) {
        Leaves e = group(s, 1, 0, u.size());
        Array c = safe_increment(s[0]);
        for (size_t i = 0; i < u.size(); ++i) {
          e[i] = moment(u[i], e[i], decay, 1);
          u[i] = debias ? bias_correction(e[i], decay, c) : e[i];
        }
        Leaves cl{c};
        return concat({&cl, &e});
      });
}

GradientTransformation add_decayed_weights(ScalarOrSchedule weight_decay, std::vector<bool> mask) {
  bool sched = weight_decay.is_schedule();
  return make(
      "add_decayed_weights", [sched](size_t) { return size_t{sched ? 1u : 0u}; },
      [sched](const Leaves&) { return sched ? OptState{i32(0)} : OptState{}; },
      [=](Leaves& u, const OptState& s, const Leaves* params) {
        const Leaves& p = need_params(params, "optax.add_decayed_weights");
        if (!mask.empty() && mask.size() != u.size())
          throw_error<TypeError>("optax.add_decayed_weights",
                                 "the mask has {} entries, expected one per parameter leaf "
                                 "({})",
                                 mask.size(), u.size());
        OptState out = sched ? OptState{safe_increment(s[0])} : OptState{};
        if (!sched && weight_decay.value() == 0.0) return out;  // optax skips a zero constant
        Array wd = sched ? weight_decay.at(s[0]) : w(weight_decay.value());
        for (size_t i = 0; i < u.size(); ++i)
          if (mask.empty() || mask[i]) u[i] = u[i] + wd * p[i];
        return out;
      });
}

GradientTransformation clip(double max_delta) {
  return stateless("clip", [max_delta](const Array& g) { return jnp::clip(g, w(-max_delta), w(max_delta)); });
}

GradientTransformation clip_by_global_norm(double max_norm) {
  return make(
      "clip_by_global_norm", [](size_t) { return size_t{0}; }, [](const Leaves&) { return OptState{}; },
      [=](Leaves& u, const OptState&, const Leaves*) {
        Array g_norm = global_norm(u);
        Array trigger = g_norm < w(max_norm);
        for (auto& t : u) t = lax::select(trigger, t, (t / lax::convert_element_type(g_norm, t.dtype())) * w(max_norm));
        return OptState{};
      });
}

GradientTransformation zero_nans() {
  return make(
      "zero_nans", [](size_t n) { return n; },
      [](const Leaves& p) {
        OptState out;
        for (size_t i = 0; i < p.size(); ++i) out.push_back(Array::scalar_int(0, DType::bool_));
        return out;
      },
      [](Leaves& u, const OptState&, const Leaves*) {
        OptState out;
        for (auto& g : u) {
          out.push_back(jnp::any(jnp::isnan(g)));
          g = jnp::where(jnp::isnan(g), zeros_like(g), g);
        }
        return out;
      });
}

Array global_norm(const std::vector<Array>& leaves) {
  // optax.tree.norm: square(x) + square(imag(x)) per leaf (x * x + 0 for real leaves), jnp.sum of each, added to
  // the integer 0 in leaf order.
  Array total = Array(0);
  for (auto& x : leaves) total = total + jnp::sum(x * x);
  return jnp::sqrt(total);
}

}  // namespace jitx::optax
