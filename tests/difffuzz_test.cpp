// The differential fuzzer (issue 16): random well-typed programs (difffuzz_gen.h) lowered to HLO, run through the
// whole optimisation pipeline and the cpu backend, and compared with the interpreter on the unoptimised module;
// smooth f64 programs also differentiated (grad against central finite differences) and every fourth program
// batched (vmap against a loop over the batch). Comparison rules (README, "The differential fuzzer"):
//   - integers and bool: equal;
//   - floats of depth 0 (only correctly rounded ops in source order on the value's path) with excess precision
//     off: equal bit for bit, except that any NaN matches any NaN (payloads are not specified: XLA and the C
//     library make different ones);
//   - other floats: |got - want| <= (1 + depth) (atol + rtol max(|want|, max|want| of the output / 8)) with the
//     `fused` row of tolerances.h, infinities equal, NaN matching NaN, and an overflow allowed to differ
//     (one side infinite, the other above a quarter of the dtype's largest value).
// Seeded: JITX_DIFFFUZZ_SEED (default 1), JITX_DIFFFUZZ_COUNT programs (default in the test case below);
// JITX_DIFFFUZZ_ONE=<program seed> runs one program (the seed a failure prints), JITX_DIFFFUZZ_VERBOSE=1 prints
// every program.
#include <cstdlib>
#include <cstring>
#include <set>

#include "backend_test_util.h"
#include "core/jaxpr.h"
#include "difffuzz_gen.h"
#include "hlo/passes/pipeline.h"
#include "lowering/lower.h"
#include "transforms/ad.h"

using namespace jitx;
using namespace jitx::difffuzz;
using detail::Literal;

namespace {

int64_t env_int(const char* name, int64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : def;
}

struct Program {
  uint64_t seed = 0;
  bool smooth = false, excess = false;
  detail::ClosedJaxpr cj;
  std::vector<int> depths;  // per output
  int rejected = 0;
};

Program make_program(uint64_t seed, bool smooth, bool excess) {
  Program p;
  p.seed = seed, p.smooth = smooth, p.excess = excess;
  Gen g(seed, smooth, excess);
  std::vector<ShapedArray> in;
  for (int64_t i = g.uni(1, 3); i > 0; --i) in.push_back(ShapedArray{g.random_shape(), g.random_dtype()});
  p.cj = detail::trace_to_jaxpr("fuzz", in, [&](const std::vector<Array>& xs) {
    for (auto& x : xs) g.pool.push_back({x, 0});
    g.run(static_cast<int>(g.uni(3, 12)));
    std::vector<Val> outs{g.pool.back()};
    for (int64_t k = g.uni(0, 2); k > 0; --k) outs.push_back(g.pick(g.pool));
    for (auto& o : outs) p.depths.push_back(o.depth);
    return arrays(outs);
  });
  p.rejected = g.rejected;
  return p;
}

/// Random inputs: floats in [-2, 2] ([-1, 1] smooth), integers over their whole range with small values and the
/// extremes mixed in, fair bools.
std::vector<Literal> random_inputs(const std::vector<ShapedArray>& in, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<Literal> out;
  for (auto& a : in) {
    Literal l = Literal::make(a.dtype, a.shape);
    for (int64_t i = 0; i < l.size(); ++i) {
      if (is_floating(a.dtype)) l.set_f64(i, std::uniform_real_distribution<double>(-2, 2)(g));
      else if (is_bool(a.dtype)) l.set_i64(i, static_cast<int64_t>(g() & 1));
      else {
        int k = static_cast<int>(g() % 8);
        int bits = dtype_bits(a.dtype);
        uint64_t hi = is_signed_integer(a.dtype) ? (uint64_t{1} << (bits - 1)) - 1 : ~uint64_t{0} >> (64 - bits);
        uint64_t v = k == 0 ? hi : k == 1 ? hi + 1 : k < 5 ? static_cast<uint64_t>(static_cast<int64_t>(g() % 11) - 5)
                                                          : g();
        l.set_u64(i, v);
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

double max_finite(DType d) {
  switch (d) {
    case DType::float16: return 65504.0;
    case DType::bfloat16: return 3.3895e38;
    case DType::float32: return 3.4028e38;
    default: return 1.7976e308;
  }
}

/// The raw bits of element i (floats included).
uint64_t bits(const Literal& l, int64_t i) {
  uint64_t b = 0;
  size_t n = dtype_size(l.dtype);
  std::memcpy(&b, static_cast<const char*>(l.data()) + static_cast<size_t>(i) * n, n);
  return b;
}

/// "" when got matches want under the rules of the file comment, else the first mismatches.
std::string compare(const Literal& got, const Literal& want, int depth, bool excess, testing::Bound bound) {
  if (got.dtype != want.dtype || got.dims != want.dims) return "different dtype or shape";
  std::string out;
  int bad = 0;
  if (!is_floating(want.dtype)) {
    for (int64_t i = 0; i < want.size(); ++i)
      if (got.get_u64(i) != want.get_u64(i) && bad++ < 4)
        out += fmt::format("  [{}]: got {}, want {}\n", i, got.get_i64(i), want.get_i64(i));
    return out;
  }
  bool bit_exact = depth == 0 && !excess;
  testing::Tol t = testing::tol(want.dtype, bound);
  double scale = 0;
  for (int64_t i = 0; i < want.size(); ++i)
    if (std::isfinite(want.get_f64(i))) scale = std::max(scale, std::fabs(want.get_f64(i)));
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.get_f64(i), w = want.get_f64(i);
    bool ok;
    if (std::isnan(g) || std::isnan(w)) ok = std::isnan(g) && std::isnan(w);
    else if (bit_exact) ok = bits(got, i) == bits(want, i);
    else if (std::isinf(g) || std::isinf(w))
      ok = g == w || std::fabs(std::isinf(g) ? w : g) > max_finite(want.dtype) / 4;
    else ok = std::fabs(g - w) <= (1 + depth) * (t.atol + t.rtol * std::max(std::fabs(w), scale / 8));
    if (!ok && bad++ < 4)
      out += fmt::format("  [{}]: got {:.17g} (bits {:#x}), want {:.17g} (bits {:#x}){}\n", i, g, bits(got, i), w,
                         bits(want, i), bit_exact ? " (bit-exact comparison)" : "");
  }
  return out;
}

std::shared_ptr<hlo::Module> lower(const detail::ClosedJaxpr& cj) { return detail::lower_jaxpr(cj, "fuzz"); }

std::shared_ptr<hlo::Module> optimized(const hlo::Module& m) {
  std::shared_ptr<hlo::Module> opt = m.clone();
  hlo::PipelineOptions po;
  po.verify = true;
  hlo::optimize(*opt, po);
  hlo::verify(*opt);
  return opt;
}

/// What a failure prints: the program's seed, how to rerun it, its jaxpr and HLO.
std::string describe(const Program& p, const std::string& what, const hlo::Module& m) {
  return fmt::format(
      "difffuzz failure ({}): program seed {} (rerun: JITX_DIFFFUZZ_ONE={} ./build/tests/jitx_tests \"[difffuzz]\"), "
      "excess precision {}, smooth {}\njaxpr:\n{}\nunoptimised HLO:\n{}",
      what, p.seed, p.seed, p.excess ? "on" : "off", p.smooth, detail::print_jaxpr(p.cj.jaxpr), hlo::print_hlo(m));
}

/// Runs the program on the interpreter (unoptimised) and on cpu (after every pass); "" or the failure.
std::string check_differential(const Program& p, const std::vector<Literal>& args) {
  auto m = lower(p.cj);
  auto want = testing::run(testing::interp(), m, args);
  bool saved = config().allow_excess_precision;
  config().allow_excess_precision = p.excess;
  std::vector<Literal> got;
  std::shared_ptr<hlo::Module> opt;
  try {
    opt = optimized(*m);
    got = testing::run(testing::native(), opt, args);
  } catch (const std::exception& e) {
    config().allow_excess_precision = saved;
    return describe(p, fmt::format("cpu compile/run threw: {}", e.what()), *m);
  }
  config().allow_excess_precision = saved;
  std::string diffs;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::string d = compare(got[i], want[i], p.depths[i], p.excess, testing::Bound::kFused); !d.empty())
      diffs += fmt::format("output {} (depth {}):\n{}", i, p.depths[i], d);
  if (diffs.empty()) return "";
  // Which half is wrong: the optimised module on the interpreter separates the passes from the backend.
  auto mid = testing::run(testing::interp(), opt, args);
  std::string where = "the cpu backend (the optimised module agrees on the interpreter)";
  for (size_t i = 0; i < want.size(); ++i)
    if (!compare(mid[i], want[i], p.depths[i], false, testing::Bound::kFused).empty())
      where = "the optimisation passes (the optimised module differs on the interpreter too)";
  return describe(p, "cpu differs from the interpreter; suspect " + where + "\n" + diffs, *m) +
         "\noptimised HLO:\n" + hlo::print_hlo(*opt);
}

}  // namespace

#include "difffuzz_ad.h"

namespace {

struct Totals {
  int64_t programs = 0, grads = 0, vmaps = 0, rejected = 0, eqns = 0, unsupported = 0;
  std::set<std::string> unsupported_what;
};

void run_one(uint64_t seed, Totals& t, std::vector<std::string>& failures) {
  static const bool verbose = env_int("JITX_DIFFFUZZ_VERBOSE", 0) != 0;
  bool smooth = seed % 4 == 1, excess = seed % 2 == 0;
  Program p = make_program(seed, smooth, excess);
  ++t.programs;
  t.rejected += p.rejected;
  t.eqns += static_cast<int64_t>(p.cj.jaxpr.eqns.size());
  if (verbose) fmt::print(stderr, "program {}:\n{}\n", seed, detail::print_jaxpr(p.cj.jaxpr));
  auto args = random_inputs(p.cj.in_avals(), seed * 7919 + 1);
  const char* stage = "the differential check";
  try {
    if (std::string f = check_differential(p, args); !f.empty()) failures.push_back(f);
    if (smooth) {
      ++t.grads;
      stage = "the grad check";
      if (std::string f = check_grad(p, args); !f.empty()) failures.push_back(f);
    } else if (seed % 4 == 2) {
      ++t.vmaps;
      stage = "the vmap check";
      if (std::string f = check_vmap(p, seed); !f.empty()) failures.push_back(f);
    }
  } catch (const Error& e) {
    // A transformation jitx says it does not support yet (a clear error, listed in the notes) is counted, not a
    // failure; anything else a check throws is one.
    std::string m = e.what();
    if (m.find("not supported yet") != std::string::npos || m.find("not implemented") != std::string::npos) {
      ++t.unsupported;
      t.unsupported_what.insert(m.substr(0, 120));
    } else {
      failures.push_back(describe(p, fmt::format("{} threw: {}", stage, e.what()), *lower(p.cj)));
    }
  } catch (const std::exception& e) {
    failures.push_back(describe(p, fmt::format("{} threw: {}", stage, e.what()), *lower(p.cj)));
  }
}

}  // namespace

TEST_CASE("difffuzz: random programs agree on cpu and the interpreter, under grad and vmap", "[difffuzz]") {
  std::vector<std::string> failures;
  Totals t;
  if (int64_t one = env_int("JITX_DIFFFUZZ_ONE", -1); one >= 0) {
    run_one(static_cast<uint64_t>(one), t, failures);
  } else {
    int64_t count = env_int("JITX_DIFFFUZZ_COUNT", 2000), base = env_int("JITX_DIFFFUZZ_SEED", 1);
    for (int64_t i = 0; i < count && failures.size() < 5; ++i)
      run_one(static_cast<uint64_t>(base) * 1000003u + static_cast<uint64_t>(i), t, failures);
  }
  INFO(t.programs << " programs (" << t.eqns << " equations, " << t.rejected << " generated ops refused), "
                  << t.grads << " grad checks, " << t.vmaps << " vmap checks, " << t.unsupported
                  << " transformations jitx does not support yet: "
                  << fmt::format("{}", fmt::join(t.unsupported_what, "; ")));
  for (auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(t.programs > 0);
}

namespace {
/// One hand-written (minimised) program through the differential check, with every output of the given depth.
std::string check_fn(std::vector<ShapedArray> in, const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
                     int depth, bool excess, uint64_t seed = 1) {
  Program p;
  p.seed = seed, p.excess = excess;
  p.cj = detail::trace_to_jaxpr("regression", in, f);
  p.depths.assign(p.cj.jaxpr.outvars.size(), depth);
  return check_differential(p, random_inputs(p.cj.in_avals(), seed));
}
}  // namespace
