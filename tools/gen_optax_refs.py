"""Writes tests/optax_refs.h: optax 0.2.8's parameter trajectories and schedule values (JAX with x64 on CPU), the
references of tests/optax_test.cpp.

Each optimiser case runs 6 steps on params {'b': f32[4], 'w': f32[3,4]} with the gradients written to the header
(seeded normals, scaled so that clip_by_global_norm(1.0) triggers), eagerly and with the update jitted; both
trajectories are written (they may differ by an ULP where XLA fuses differently). Each schedule case gives the value
at counts 0..12 (int32), eagerly and jitted (XLA turns a division by a constant into a multiply by its reciprocal),
its dtype and weak type.

  /work/venv-jax/bin/python tools/gen_optax_refs.py > tests/optax_refs.h
"""
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

from refs_common import vec  # noqa: E402

STEPS = 6
rng = np.random.default_rng(20261207)
P0 = {"b": rng.normal(size=(4,)).astype(np.float32), "w": rng.normal(size=(3, 4)).astype(np.float32)}
GRADS = [{"b": (rng.normal(size=(4,)) * 0.8).astype(np.float32),
          "w": (rng.normal(size=(3, 4)) * 0.8).astype(np.float32)} for _ in range(STEPS)]
GRADS[2]["w"][1, 2] = 0.0  # a zero gradient element (sign, rsqrt guards)

wcd = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 6, end_value=1e-3)
sched_exp = optax.exponential_decay(0.1, 2, 0.5, staircase=True)
sched_pw = optax.piecewise_constant_schedule(0.1, {2: 0.5, 4: 0.2})

# (name, optax transformation); the C++ test builds the same from the name.
OPTS = [
    ("sgd", optax.sgd(0.1)),
    ("sgd_momentum", optax.sgd(0.1, momentum=0.9)),
    ("sgd_nesterov", optax.sgd(0.1, momentum=0.9, nesterov=True)),
    ("sgd_exp_staircase", optax.sgd(sched_exp)),
    ("sgd_piecewise", optax.sgd(sched_pw, momentum=0.5)),
    ("adam", optax.adam(1e-2)),
    ("nadam", optax.nadam(1e-2)),
    ("adam_eps_root", optax.adam(1e-2, b1=0.8, b2=0.95, eps=1e-6, eps_root=1e-8)),
    ("adamw", optax.adamw(1e-2, weight_decay=0.1)),
    ("adamw_sched_mask", optax.adamw(wcd, weight_decay=1e-1, mask={"b": False, "w": True})),
    ("nadamw", optax.nadamw(1e-2, weight_decay=0.05)),
    ("amsgrad", optax.amsgrad(1e-2)),
    ("adamax", optax.adamax(1e-2)),
    ("adamaxw", optax.adamaxw(1e-2, weight_decay=0.05)),
    ("adabelief", optax.adabelief(1e-2)),
    ("adabelief_nesterov", optax.adabelief(1e-2, nesterov=True)),
    ("adagrad", optax.adagrad(0.1)),
    ("rmsprop", optax.rmsprop(1e-2)),
    ("rmsprop_centered_momentum", optax.rmsprop(1e-2, centered=True, momentum=0.9)),
    ("rmsprop_bias_eps_outside", optax.rmsprop(1e-2, eps_in_sqrt=False, bias_correction=True, initial_scale=0.1)),
    ("rmsprop_centered_bias_nesterov",
     # eps 1e-2: at step 1 the bias-corrected variance is g^2 - g^2, zero up to rounding (NaN with eps 1e-8).
     optax.rmsprop(1e-2, eps=1e-2, centered=True, bias_correction=True, momentum=0.5, nesterov=True)),
    ("lion", optax.lion(1e-3)),
    ("lion_sched_decay", optax.lion(1e-3, weight_decay=optax.linear_schedule(1e-2, 0.0, 4))),
    ("lamb", optax.lamb(1e-2, weight_decay=0.01)),
    ("yogi", optax.yogi(1e-2)),
    ("sign_sgd", optax.sign_sgd(0.1)),
    ("clip_global_adam", optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2))),
    ("clip_global_untriggered", optax.chain(optax.clip_by_global_norm(100.0), optax.sgd(0.1))),
    ("clip_sgd", optax.chain(optax.clip(0.5), optax.sgd(0.1))),
    ("ema_scale", optax.chain(optax.ema(0.9), optax.scale(-0.1))),
    ("ema_nodebias", optax.chain(optax.ema(0.8, debias=False), optax.scale(-0.1))),
    ("lion_smooth", optax.chain(optax.scale_by_lion(mode="smooth", smooth_beta=2.0), optax.scale(-0.01))),
    ("lion_refined", optax.chain(optax.scale_by_lion(b1=0.5, mode="refined"), optax.scale(-0.01))),
    ("trust_ratio", optax.chain(optax.scale_by_trust_ratio(min_norm=0.5, trust_coefficient=0.1, eps=1e-3),
                                optax.scale(-0.1))),
    ("scale_by_schedule", optax.chain(optax.scale_by_schedule(optax.cosine_decay_schedule(-0.1, 4)))),
]

SCHEDS = [
    ("constant", optax.constant_schedule(0.1)),
    ("linear", optax.linear_schedule(0.1, 0.01, 10, transition_begin=2)),
    ("polynomial2", optax.polynomial_schedule(1.0, 0.0, 2, 8, transition_begin=1)),
    ("polynomial_half", optax.polynomial_schedule(1.0, 0.1, 0.5, 8)),
    ("piecewise", optax.piecewise_constant_schedule(0.1, {3: 0.5, 6: 0.1})),
    ("exponential", optax.exponential_decay(0.1, 5, 0.5)),
    ("exponential_staircase_end", optax.exponential_decay(0.1, 3, 0.5, staircase=True, end_value=0.03)),
    ("exponential_growth_begin", optax.exponential_decay(0.1, 4, 2.0, transition_begin=3, end_value=0.5)),
    ("cosine", optax.cosine_decay_schedule(0.1, 10, alpha=0.1)),
    ("cosine_exponent", optax.cosine_decay_schedule(0.1, 10, exponent=2.0)),
    ("warmup_cosine", optax.warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, end_value=0.01)),
    ("warmup_exponential",
     optax.warmup_exponential_decay_schedule(0.0, 0.1, 3, 4, 0.5, staircase=True, end_value=0.02)),
    ("warmup_constant", optax.warmup_constant_schedule(0.0, 0.1, 4)),
    ("join", optax.join_schedules([optax.constant_schedule(0.1), optax.linear_schedule(0.1, 0.0, 5)], [4])),
]


def run(opt, jitted):
    params = {k: jnp.asarray(v) for k, v in P0.items()}
    state = opt.init(params)
    upd = jax.jit(opt.update) if jitted else opt.update
    out = []
    for g in GRADS:
        updates, state = upd({k: jnp.asarray(v) for k, v in g.items()}, state, params)
        params = optax.apply_updates(params, updates)
        out.append(np.concatenate([np.asarray(params["b"]).ravel(), np.asarray(params["w"]).ravel()]))
    return np.stack(out)


def main():
    print("// Generated by tools/gen_optax_refs.py (optax %s, JAX %s, x64): do not edit." %
          (optax.__version__, jax.__version__))
    print("#pragma once\n#include <cmath>\n#include <limits>\n#include <string>\n#include <vector>\n")
    print("namespace optax_refs {")
    print("inline const double kNaN = std::numeric_limits<double>::quiet_NaN();")
    print("inline const double kInf = std::numeric_limits<double>::infinity();")
    print("inline const std::vector<double> kParams0 = %s;  // b (4) then w (3x4), float32 values" %
          vec(np.concatenate([P0["b"], P0["w"].ravel()])))
    print("inline const std::vector<std::vector<double>> kGrads = {")
    for g in GRADS:
        print("    %s," % vec(np.concatenate([g["b"], g["w"].ravel()])))
    print("};")
    print("struct OptCase {\n  std::string name;\n  std::vector<double> eager, jit;  // params after each step\n};")
    print("inline const std::vector<OptCase> kOptCases = {")
    for name, opt in OPTS:
        e, j = run(opt, False), run(opt, True)
        print('    {"%s", %s, %s},' % (name, vec(e), vec(j) if not np.array_equal(e, j) else "{}"))
    print("};")
    print("struct SchedCase {\n  std::string name;\n  std::vector<double> values, jit;  // counts 0..12, eager and jitted (empty: as eager)\n"
          "  std::string dtype;\n  bool weak;\n};")
    print("inline const std::vector<SchedCase> kSchedCases = {")
    for name, s in SCHEDS:
        vals = [jnp.asarray(s(jnp.asarray(c, jnp.int32))) for c in range(13)]
        jvals = [jax.jit(s)(jnp.asarray(c, jnp.int32)) for c in range(13)]
        d = vals[0].dtype
        assert all(v.dtype == d for v in vals + jvals), name
        short = {"float64": "f64", "float32": "f32"}[str(d)]  # jitx's dtype_name
        ev, jv = [float(v) for v in vals], [float(v) for v in jvals]
        print('    {"%s", %s, %s, "%s", %s},' % (name, vec(ev), vec(jv) if ev != jv else "{}", short,
                                            "true" if vals[0].aval.weak_type else "false"))
    print("};")
    print("}  // namespace optax_refs")


main()
