// The CUDA kernel checks shared by the codegen tests: each kernel's PTX through ptxas for sm_80 and sm_90, and its own
// code run on the host emulator (backends/cuda/gpu_emulator.h) on random operands against the reference evaluator.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/gpu_emulator.h"
#include "core/literal.h"
#include "cuda_test_util.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/hlo.h"

namespace jitx::testing {
using jitx::detail::Literal;

inline const std::vector<cuda::GpuTarget> kTargets{cuda::GpuTarget::sm80(), cuda::GpuTarget::sm90()};

// Random operands for the emulator: floats mostly normal (scale 3) with a sprinkle of zeros, infinities, NaNs,
// subnormal and (`huge`) +-1e30 values; integers half small (division by zero, shifts in range) and half any bits;
// bools. Operands of sums (reductions, dots) are not `huge`: 1e30 - 1e30 plus the rest depends on the order of the
// additions, and 1e30 * 1e30 overflows f32 (where the kernel accumulates) but not the evaluator's double.
inline Literal random_operand(const hlo::Shape& s, std::mt19937_64& rng, bool huge) {
  Literal l = Literal::make(s.dtype, s.dims);
  std::normal_distribution<double> nd(0.0, 3.0);
  std::uniform_real_distribution<double> u01;
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-40, 0.5, 1.0, -1.0, 2.0, 1e30, -1e30};
  const size_t nspecial = std::size(specials) - (huge ? 0 : 2);
  for (int64_t e = 0; e < l.size(); ++e) {
    if (is_floating(s.dtype)) {
      l.set_f64(e, u01(rng) < 0.05 ? specials[rng() % nspecial] : nd(rng));
    } else if (s.dtype == DType::bool_) {
      l.set_i64(e, static_cast<int64_t>(rng() & 1));
    } else {
      bool small = rng() & 1;
      int64_t v = static_cast<int64_t>(rng());
      l.set_i64(e, small ? v % 7 + (is_unsigned_integer(s.dtype) ? 6 : 0) : v);
    }
  }
  return l;
}
// Elements of got that differ from want: floats beyond tol * (1 + |want|) (NaN matches NaN), others exactly.
// With `bound`, an element may also differ by up to bound[e] (a dot's rounding: see check_emulated).
inline int64_t mismatches(const Literal& got, const Literal& want, double tol, std::string* first,
                          const Literal* bound = nullptr) {
  int64_t bad = 0;
  for (int64_t e = 0; e < want.size(); ++e) {
    bool ok;
    if (is_floating(want.dtype)) {
      double g = got.get_f64(e), w = want.get_f64(e);
      double err = std::abs(g - w);
      ok = (std::isnan(g) && std::isnan(w)) || g == w || err <= tol * (1 + std::abs(w)) ||
           (bound && err <= bound->get_f64(e));
      if (!ok && bad == 0) *first = fmt::format("element {}: got {}, want {}", e, g, w);
    } else {
      ok = got.get_u64(e) == want.get_u64(e);
      if (!ok && bad == 0) *first = fmt::format("element {}: got {}, want {}", e, got.get_i64(e), want.get_i64(e));
    }
    bad += !ok;
  }
  return bad;
}
inline double emulation_tolerance(DType d) {
  switch (d) {
    case DType::float64:
      return 1e-12;
    case DType::float32:
      return 4e-6;
    case DType::float16:
      return 2e-3;
    case DType::bfloat16:
      return 1e-2;
    default:
      return 0;
  }
}
// The kernel's own code (the emulator: its LLVM IR compiled for the host, its threads as fibers) on random
// operands, against the reference evaluator. Returns 1 on a mismatch.
inline int check_emulated(const hlo::Instruction& inst, const cuda::LaunchPlan& plan) {
  std::mt19937_64 rng(std::hash<std::string>{}(inst.name) ^ inst.operands.size());
  auto sums = [](const hlo::Instruction& i) {
    return i.opcode == hlo::Opcode::kReduce || i.opcode == hlo::Opcode::kDot;
  };
  bool reduces = sums(inst);
  if (inst.opcode == hlo::Opcode::kFusion)
    for (auto& i : inst.called.at(0)->instructions) reduces = reduces || sums(*i);
  std::vector<Literal> ops;
  std::vector<evaluator::Value> args;
  for (auto* o : inst.operands) {
    ops.push_back(random_operand(o->shape, rng, !reduces));
    // An argmax's indices are positions (jnp's iota): distinct and increasing, so that "the first of equal values"
    // and "the smallest index" agree, as they do for every argmax jnp builds.
    if (inst.opcode == hlo::Opcode::kReduce && inst.operands.size() == 4 && ops.size() == 2)
      for (int64_t e = 0; e < ops.back().size(); ++e) ops.back().set_i64(e, e);
    args.push_back({ops.back(), {}, false});
  }
  hlo::Module m("emulated");
  evaluator::Value want = evaluator::evaluate(*hlo::add_single_instruction_computation(m, inst), args);
  std::vector<hlo::Shape> outs = inst.shape.is_tuple ? inst.shape.tuple_shapes : std::vector{inst.shape};
  std::vector<Literal> got;
  std::vector<void*> params;
  for (auto& s : outs) got.push_back(Literal::make(s.dtype, s.dims));
  for (auto& g : got) params.push_back(g.data());
  for (auto& o : ops) params.push_back(o.data());
  try {
    cuda::emulate_kernel(inst, true, params, plan.grid, plan.block);
  } catch (const std::exception& e) {
    WARN(fmt::format("%{}: the emulator: {}", inst.name, e.what()));
    return 1;
  }
  // A dot accumulates in f32 (the evaluator in double): each element may differ by K * 2^-24 * sum |a_k b_k|
  // (the dot of the operands' magnitudes, from the evaluator), twice for slack.
  std::optional<Literal> bound;
  if (inst.opcode == hlo::Opcode::kDot && is_floating(inst.shape.dtype)) {
    std::vector<evaluator::Value> mags;
    for (auto& o : ops) {
      Literal a = Literal::make(DType::float64, o.dims);
      for (int64_t e = 0; e < o.size(); ++e) a.set_f64(e, std::abs(o.get_f64(e)));
      mags.push_back({a, {}, false});
    }
    hlo::Module mm("magnitudes");
    int64_t k = 1;
    for (int64_t d : hlo::DotDimensionNumbers::of(inst).lhs_contracting_dims) k *= inst.operand(0)->shape.dims[d];
    hlo::Instruction* c = hlo::add_single_instruction_computation(mm, inst)->root;
    for (auto* p : c->operands) p->shape.dtype = DType::float64;
    c->shape.dtype = DType::float64;
    bound = evaluator::evaluate(*c->parent, mags).array;
    double eps = inst.shape.dtype == DType::float64 ? 0x1p-53 : 0x1p-24;
    for (int64_t e = 0; e < bound->size(); ++e) bound->set_f64(e, 2.0 * k * eps * bound->get_f64(e));
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const Literal& w = inst.shape.is_tuple ? want.tuple.at(k).array : want.array;
    std::string first;
    int64_t bad = mismatches(got[k], w, emulation_tolerance(outs[k].dtype), &first, bound ? &*bound : nullptr);
    if (bad) {
      WARN(fmt::format("%{} ({}) output {}: {} of {} elements differ from the evaluator's; {}\n{}", inst.name,
                       hlo::opcode_name(inst.opcode), k, bad, w.size(), first, hlo::print_instruction_canonical(inst)));
      return 1;
    }
  }
  return 0;
}

// Each kernel's PTX for both targets: an entry, no unresolved calls, accepted by ptxas; and what its code computes
// (emulated on the host) against the evaluator. Returns the failures.
inline int check_ptx(const hlo::Instruction& inst, std::vector<cuda::KernelKind>* kinds = nullptr) {
  int bad = 0;
  for (auto& t : kTargets) {
    cuda::GpuKernel k = cuda::compile_kernel(inst, t);
    if (kinds && &t == &kTargets[0]) kinds->push_back(k.plan.kind);
    bool ok = k.ptx.find(".visible .entry jitx_kernel") != std::string::npos &&
              k.ptx.find(".extern .func") == std::string::npos;
    std::string err = ok && have_ptxas() ? ptxas_error(k.ptx, t.arch) : (ok ? "" : "no entry, or an extern call");
    if (!err.empty()) {
      UNSCOPED_INFO(fmt::format("%{} on {}: {}", inst.name, t.arch, err.substr(0, 2000)));
      ++bad;
    }
    if (&t == &kTargets[0]) bad += check_emulated(inst, k.plan);
  }
  return bad;
}
}  // namespace jitx::testing
