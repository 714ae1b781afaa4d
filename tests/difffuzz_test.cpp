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
#include <fstream>
#include <set>

#include "backend_test_util.h"
#include "core/jaxpr.h"
#include "difffuzz_gen.h"
#include "hlo/ir/hlo_parser.h"
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
  std::vector<int> depths;        // per output
  DType coarse = DType::float64;  // the least precise float dtype in the program (see compare)
  int rejected = 0;
};

int mantissa_bits(DType d) {
  return d == DType::bfloat16 ? 7 : d == DType::float16 ? 10 : d == DType::float32 ? 23 : 52;
}

/// The least precise float dtype of any value in j (bodies included): under excess precision a convert to it and
/// back may be removed (XLA's simplifier does the same), so any float result may carry only its precision.
DType coarsest(const detail::Jaxpr& j, DType c) {
  auto see = [&](DType d) {
    if (is_floating(d) && mantissa_bits(d) < mantissa_bits(c)) c = d;
  };
  for (auto& v : j.invars) see(v.aval.dtype);
  for (const detail::Eqn& e : j.eqns) {
    for (auto& v : e.outputs) see(v.aval.dtype);
    for (const auto& [k, v] : e.params.items()) {
      if (auto* cj = std::get_if<std::shared_ptr<const detail::ClosedJaxpr>>(&v)) c = coarsest((*cj)->jaxpr, c);
      if (auto* list = std::get_if<detail::JaxprList>(&v))
        for (const auto& b : *list) c = coarsest(b->jaxpr, c);
    }
  }
  return c;
}

Program make_program(uint64_t seed, bool smooth, bool excess) {
  Program p;
  p.seed = seed, p.smooth = smooth, p.excess = excess;
  Gen g(seed, smooth, excess);
  std::vector<ShapedArray> in;
  for (int64_t i = g.uni(1, 3); i > 0; --i) in.push_back(ShapedArray{g.random_shape(), g.random_dtype()});
  p.cj = detail::trace_to_jaxpr("fuzz", in, [&](const std::vector<Array>& xs) {
    for (auto& x : xs) g.pool.push_back({x, 0});
    g.run(static_cast<int>(g.uni(2, 9)));
    std::vector<Val> outs{g.pool.back()};
    for (int64_t k = g.uni(0, 2); k > 0; --k) outs.push_back(g.pick(g.pool));
    for (auto& o : outs) p.depths.push_back(o.depth);
    return arrays(outs);
  });
  p.rejected = g.rejected;
  p.coarse = coarsest(p.cj.jaxpr, DType::float64);
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
      if (is_floating(a.dtype))
        l.set_f64(i, std::uniform_real_distribution<double>(-2, 2)(g));
      else if (is_bool(a.dtype))
        l.set_i64(i, static_cast<int64_t>(g() & 1));
      else {
        int k = static_cast<int>(g() % 8);
        int bits = dtype_bits(a.dtype);
        uint64_t hi = is_signed_integer(a.dtype) ? (uint64_t{1} << (bits - 1)) - 1 : ~uint64_t{0} >> (64 - bits);
        uint64_t v = k == 0   ? hi
                     : k == 1 ? hi + 1
                     : k < 5  ? static_cast<uint64_t>(static_cast<int64_t>(g() % 11) - 5)
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
    case DType::float16:
      return 65504.0;
    case DType::bfloat16:
      return 3.3895e38;
    case DType::float32:
      return 3.4028e38;
    default:
      return 1.7976e308;
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
std::string compare(const Literal& got, const Literal& want, int depth, bool excess, testing::Bound bound,
                    DType coarse = DType::float64) {
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
  if (excess && is_floating(coarse) && mantissa_bits(coarse) < mantissa_bits(want.dtype))
    t = testing::tol(coarse, bound);
  double scale = 0;
  for (int64_t i = 0; i < want.size(); ++i)
    if (std::isfinite(want.get_f64(i))) scale = std::max(scale, std::fabs(want.get_f64(i)));
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.get_f64(i), w = want.get_f64(i);
    bool ok;
    if (std::isnan(g) || std::isnan(w))
      ok = (std::isnan(g) && std::isnan(w)) || (excess && !bit_exact);
    else if (bit_exact)
      ok = bits(got, i) == bits(want, i);
    else if (std::isinf(g) || std::isinf(w))
      // Excess precision: an intermediate beyond the range of its type (f16's 65504) may stay finite in f32.
      ok = g == w || excess || std::fabs(std::isinf(g) ? w : g) > max_finite(want.dtype) / 4;
    else
      ok = std::fabs(g - w) <= (1 + depth) * (t.atol + t.rtol * std::max(std::fabs(w), scale / 8));
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

/// The minimised failure: the first instruction of the entry computation (in order) whose value differs between
/// the interpreter and cpu, found by making each one in turn the module's only result (the passes then remove the
/// rest). Its operands agree, so the bug is in that instruction's implementation (or a rewrite of it).
std::string first_divergence(const hlo::Module& m, const std::vector<Literal>& args, bool excess) {
  std::string text = hlo::print_hlo(m);
  size_t e = text.find("\nENTRY ");
  if (e == std::string::npos) return "";
  size_t he = text.find('\n', e + 1), end = text.find("\n}", he);
  std::string header = text.substr(e + 1, he - e - 1), before = text.substr(0, e + 1);
  std::vector<std::string> lines;
  for (size_t pos = he + 1; pos < end;) {
    size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  bool saved = config().allow_excess_precision;
  std::string found;
  for (size_t i = 0; i + 1 < lines.size() && i < 400 && found.empty(); ++i) {
    const std::string& l = lines[i];
    size_t pct = l.find('%'), eq = l.find(" = ");
    if (pct == std::string::npos || eq == std::string::npos || l.find(" parameter(") != std::string::npos) continue;
    std::string name = l.substr(pct, eq - pct), shape = l.substr(eq + 3, l.find(' ', eq + 3) - eq - 3);
    if (shape.empty() || shape[0] == '(') continue;
    shape = shape.substr(0, shape.find('{'));
    std::string h = header.substr(0, header.rfind(" -> ")) + " -> (" + shape + ") {";
    std::string t = before + h + "\n";
    for (size_t k = 0; k + 1 < lines.size(); ++k) t += lines[k] + "\n";
    t += "  ROOT %fuzz_root = (" + shape + ") tuple(" + name + ")\n}\n";
    try {
      std::shared_ptr<const hlo::Module> pm = hlo::parse_hlo(t);
      auto want = testing::run(testing::interp(), pm, args);
      config().allow_excess_precision = excess;
      auto got = testing::run(testing::native(), optimized(*pm), args);
      config().allow_excess_precision = saved;
      if (std::string d = compare(got[0], want[0], 16, excess, testing::Bound::kFused); !d.empty())
        found = fmt::format("first instruction whose value differs (its operands agree):\n{}\n{}", l, d);
      if (!found.empty())
        if (const char* dump = std::getenv("JITX_DIFFFUZZ_DUMP")) {  // the module with only that result, to a file
          std::FILE* f = std::fopen(dump, "w");
          if (f) std::fputs(t.c_str(), f), std::fclose(f);
        }
    } catch (const std::exception& ex) {
      config().allow_excess_precision = saved;
      found = fmt::format("first instruction that fails alone:\n{}\n  {}", l, ex.what());
    }
  }
  return found;
}

/// Runs the program on the interpreter (unoptimised) and on cpu (after every pass); "" or the failure.
std::string check_differential(const Program& p, const std::vector<Literal>& args, bool minimise = true) {
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
    std::string first = minimise ? first_divergence(*m, args, p.excess) : "";
    return describe(p, fmt::format("cpu compile/run threw: {}\n{}", e.what(), first), *m);
  }
  config().allow_excess_precision = saved;
  std::string diffs;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::string d = compare(got[i], want[i], p.depths[i], p.excess, testing::Bound::kFused, p.coarse); !d.empty())
      diffs += fmt::format("output {} (depth {}):\n{}", i, p.depths[i], d);
  if (diffs.empty()) return "";
  // Which half is wrong: the optimised module on the interpreter separates the passes from the backend.
  auto mid = testing::run(testing::interp(), opt, args);
  std::string where = "the cpu backend (the optimised module agrees on the interpreter)";
  for (size_t i = 0; i < want.size(); ++i)
    if (!compare(mid[i], want[i], p.depths[i], false, testing::Bound::kFused).empty())
      where = "the optimisation passes (the optimised module differs on the interpreter too)";
  std::string first = minimise ? first_divergence(*m, args, p.excess) : "";
  return describe(p, "cpu differs from the interpreter; suspect " + where + "\n" + diffs + first, *m) +
         "\noptimised HLO:\n" + hlo::print_hlo(*opt);
}

std::vector<Array> eval(const detail::ClosedJaxpr& cj, const std::vector<Array>& xs) {
  return detail::eval_jaxpr(cj.jaxpr, std::span<const Array>(cj.consts), std::span<const Array>(xs));
}

/// The cpu half of the checks, in batches: LLVM's compile is ~80% of the fuzzer's time and much of it is per
/// module, so up to 8 programs (of one excess-precision setting) are traced side by side into one module,
/// optimised and compiled together. When a batch differs, each program is rechecked alone to report it.
class Batcher {
 public:
  explicit Batcher(std::vector<std::string>& failures) : failures_(failures) {}
  ~Batcher() { flush(); }
  void add(Program p, std::vector<Literal> args, std::string label) {
    auto& q = queue_[p.excess ? 1 : 0];
    q.push_back({std::move(p), std::move(args), std::move(label)});
    if (q.size() >= 8) flush(q);
  }
  void flush() {
    for (auto& q : queue_) flush(q);
  }

 private:
  struct Item {
    Program p;
    std::vector<Literal> args;
    std::string label;
  };
  void flush(std::vector<Item>& q) {
    if (q.empty()) return;
    Program c;
    c.seed = q[0].p.seed, c.excess = q[0].p.excess;
    for (auto& it : q)
      if (mantissa_bits(it.p.coarse) < mantissa_bits(c.coarse)) c.coarse = it.p.coarse;
    std::vector<ShapedArray> in;
    std::vector<Literal> args;
    for (auto& it : q) {
      for (auto& a : it.p.cj.in_avals()) in.push_back(a);
      args.insert(args.end(), it.args.begin(), it.args.end());
      c.depths.insert(c.depths.end(), it.p.depths.begin(), it.p.depths.end());
    }
    c.cj = detail::trace_to_jaxpr("batch", in, [&](const std::vector<Array>& xs) {
      std::vector<Array> outs;
      size_t pos = 0;
      for (auto& it : q) {
        size_t n = it.p.cj.jaxpr.invars.size();
        auto o = eval(it.p.cj, std::vector<Array>(xs.begin() + static_cast<std::ptrdiff_t>(pos),
                                                  xs.begin() + static_cast<std::ptrdiff_t>(pos + n)));
        pos += n;
        outs.insert(outs.end(), o.begin(), o.end());
      }
      return outs;
    });
    if (std::string f = check_differential(c, args, false); !f.empty()) {
      size_t before = failures_.size();
      for (auto& it : q)
        if (std::string g = check_differential(it.p, it.args); !g.empty()) failures_.push_back(it.label + g);
      if (failures_.size() == before) failures_.push_back("a batch of programs (each passes alone): " + f);
    }
    q.clear();
  }
  std::vector<std::string>& failures_;
  std::vector<Item> queue_[2];
};

}  // namespace

#include "difffuzz_ad.h"

namespace {

struct Totals {
  int64_t programs = 0, grads = 0, vmaps = 0, rejected = 0, eqns = 0, unsupported = 0;
  std::set<std::string> unsupported_what;
};

void run_one(uint64_t seed, Totals& t, std::vector<std::string>& failures, Batcher& cpu) {
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
    cpu.add(p, args, "");
    if (smooth) {
      ++t.grads;
      stage = "the grad check";
      if (std::string f = check_grad(p, args, cpu); !f.empty()) failures.push_back(f);
    } else if (seed % 4 == 2) {
      ++t.vmaps;
      stage = "the vmap check";
      if (std::string f = check_vmap(p, seed, cpu); !f.empty()) failures.push_back(f);
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
  {
    Batcher cpu(failures);
    if (int64_t one = env_int("JITX_DIFFFUZZ_ONE", -1); one >= 0) {
      run_one(static_cast<uint64_t>(one), t, failures, cpu);
    } else {
      int64_t count = env_int("JITX_DIFFFUZZ_COUNT", 600), base = env_int("JITX_DIFFFUZZ_SEED", 1);
      for (int64_t i = 0; i < count && failures.size() < 5; ++i)
        run_one(static_cast<uint64_t>(base) * 1000003u + static_cast<uint64_t>(i), t, failures, cpu);
    }
  }
  INFO(t.programs << " programs (" << t.eqns << " equations, " << t.rejected << " generated ops refused), " << t.grads
                  << " grad checks, " << t.vmaps << " vmap checks, " << t.unsupported
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
  p.coarse = coarsest(p.cj.jaxpr, DType::float64);
  return check_differential(p, random_inputs(p.cj.in_avals(), seed));
}
}  // namespace

// JITX_DIFFFUZZ_HLO=file: the first differing instruction of a module read from a file, on random inputs (for
// minimising by hand: a loop body made the entry computation, for instance).
TEST_CASE("difffuzz: first differing instruction of an HLO file", "[difffuzz_file][.]") {
  const char* path = std::getenv("JITX_DIFFFUZZ_HLO");
  if (!path) return;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto m = hlo::parse_hlo(text);
  std::vector<ShapedArray> avals;
  for (auto* p : m->entry->parameters) avals.push_back(ShapedArray{p->shape.dims, p->shape.dtype});
  auto args = random_inputs(avals, static_cast<uint64_t>(env_int("JITX_DIFFFUZZ_SEED", 1)));
  std::string f = first_divergence(*m, args, env_int("JITX_ALLOW_EXCESS_PRECISION", 1) != 0);
  INFO(f);
  CHECK(f.empty());
}

TEST_CASE("difffuzz regression: a loop carry updated from a reversed or shifted read of itself", "[difffuzz]") {
  for (int variant = 0; variant < 4; ++variant) {
    INFO("variant " << variant);
    CHECK(check_fn(
              {ShapedArray{{5}, DType::float64}},
              [&](const std::vector<Array>& a) {
                auto body = [&](const Array&, const Array& x) {
                  switch (variant) {
                    case 0:
                      return lax::add(x, lax::rev(x, {0}));
                    case 1:
                      return lax::add(x, lax::pad(lax::slice(x, {1}, {5}), Array(0.0), {{0, 1, 0}}));
                    case 2:
                      return lax::add(lax::mul(x, x), lax::rev(lax::mul(x, x), {0}));
                    default:
                      return lax::select(lax::lt(x, lax::rev(x, {0})), lax::rev(x, {0}), x);
                  }
                };
                return std::vector<Array>{lax::fori_loop(Array(0), Array(3), body, a[0])};
              },
              2, false) == "");
  }
}

TEST_CASE("difffuzz regression: grad and vmap of sort on an empty array", "[difffuzz]") {
  // sort's JVP took the tangent along the permutation with a gather of slice size 1, which an empty operand
  // refused ("slice_sizes (1, 1, 1) axis 0: 1 is outside [0, 0]").
  for (Shape s : {Shape{0, 0, 0}, Shape{2, 0}, Shape{0, 3}}) {
    Array x = zeros(s, DType::float64);
    auto f = [](const Array& a) { return jnp::sum(lax::sort(a, 0) * 2.0); };
    Array g = grad(f)(x);
    CHECK(g.shape() == s);
    CHECK(jit(grad(f))(x).shape() == s);
  }
}

TEST_CASE("difffuzz regression: a rank-2 dot contracting nothing fed by a loop fusion", "[difffuzz]") {
  // Layout assignment took every rank-2 dot for a GEMM and read its first contracting dim (std::out_of_range).
  CHECK(check_fn(
            {ShapedArray{{2, 3}, DType::float64}, ShapedArray{{0, 3}, DType::float64}},
            [&](const std::vector<Array>& a) {
              Array x = lax::exp(a[0]), y = lax::exp(a[1]);
              return std::vector<Array>{lax::dot_general(x, y, {{}, {}, {}, {}}),
                                        lax::dot_general(lax::transpose(x, {1, 0}), y, {{}, {}, {}, {}})};
            },
            2, false) == "");
}
