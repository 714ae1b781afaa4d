// Excess precision on the CPU backend (config().allow_excess_precision, on by default as in XLA): f16/bf16 fusions
// kept in f32 are more accurate than per-op rounding and fuse a multiply into the add it feeds; with it off they
// round after every op, bit-exact with the interpreter.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "backend_test_util.h"
#include "jitx/config.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;

namespace {
/// Sets config().allow_excess_precision for a scope (the CPU backend reads it when it compiles a module).
struct ExcessPrecision {
  bool was;
  explicit ExcessPrecision(bool on) : was(config().allow_excess_precision) { config().allow_excess_precision = on; }
  ~ExcessPrecision() { config().allow_excess_precision = was; }
};

Literal to_f64(const Literal& x) {
  Literal y = Literal::make(DType::float64, x.dims);
  for (int64_t i = 0; i < x.size(); ++i) y.set_f64(i, x.get_f64(i));  // exact: every f16/bf16 value is a double
  return y;
}

/// |got - ref| in units of the spacing of d's values at |ref| (its ULP there), |ref| floored at 2^-8 so that
/// results that are tiny through cancellation are measured against the spacing of values of ordinary size.
double ulps(double got, double ref, DType d) {
  int mant = d == DType::bfloat16 ? 8 : 11;  // significand bits, the implicit one included
  double a = std::max(std::fabs(ref), std::ldexp(1.0, -8));
  return std::fabs(got - ref) / std::ldexp(1.0, std::ilogb(a) - (mant - 1));
}

// A gelu(a * b + c) chain (a loop fusion) and the article's layer norm over rows (a row fusion, as the MLP block's
// tail is fused), in dtype s. Their constants are exact in f16 and bf16, so the f64 module computes the same
// function (gelu's 0.044715 and sqrt(2/pi) as bf16 rounds them, epsilon 2^-16).
std::string gelu_chain_module(const std::string& s) {
  return fmt::format(R"(HloModule m

%fused (a: {0}[64,256], b: {0}[64,256], c: {0}[256]) -> {0}[64,256] {{
  %a = {0}[64,256] parameter(0)
  %b = {0}[64,256] parameter(1)
  %c = {0}[256] parameter(2)
  %cb = {0}[64,256] broadcast(%c), broadcast_dimensions={{1}}
  %ab = {0}[64,256] multiply(%a, %b)
  %x = {0}[64,256] add(%ab, %cb)
  %x2 = {0}[64,256] multiply(%x, %x)
  %x3 = {0}[64,256] multiply(%x2, %x)
  %k1 = {0}[] constant(0.044677734375)
  %k1b = {0}[64,256] broadcast(%k1), broadcast_dimensions={{}}
  %t0 = {0}[64,256] multiply(%k1b, %x3)
  %t1 = {0}[64,256] add(%x, %t0)
  %k2 = {0}[] constant(0.796875)
  %k2b = {0}[64,256] broadcast(%k2), broadcast_dimensions={{}}
  %t2 = {0}[64,256] multiply(%t1, %k2b)
  %th = {0}[64,256] tanh(%t2)
  %one = {0}[] constant(1)
  %oneb = {0}[64,256] broadcast(%one), broadcast_dimensions={{}}
  %t3 = {0}[64,256] add(%oneb, %th)
  %half = {0}[] constant(0.5)
  %halfb = {0}[64,256] broadcast(%half), broadcast_dimensions={{}}
  %t4 = {0}[64,256] multiply(%halfb, %x)
  ROOT %g = {0}[64,256] multiply(%t4, %t3)
}}

ENTRY %main (a: {0}[64,256], b: {0}[64,256], c: {0}[256]) -> ({0}[64,256]) {{
  %a = {0}[64,256] parameter(0)
  %b = {0}[64,256] parameter(1)
  %c = {0}[256] parameter(2)
  %f = {0}[64,256] fusion(%a, %b, %c), kind=kLoop, calls=%fused
  ROOT %t = ({0}[64,256]) tuple(%f)
}}
)",
                     s);
}

std::string layer_norm_module(const std::string& s) {
  return fmt::format(R"(HloModule m

%fused (h: {0}[64,256]) -> {0}[64,256] {{
  %h = {0}[64,256] parameter(0)
  %z = {0}[] constant(0)
  %s = {0}[64] reduce(%h, %z), dimensions={{1}}, reducer=add
  %n = {0}[] constant(0.00390625)
  %nb = {0}[64] broadcast(%n), broadcast_dimensions={{}}
  %mu = {0}[64] multiply(%s, %nb)
  %mub = {0}[64,256] broadcast(%mu), broadcast_dimensions={{0}}
  %d = {0}[64,256] subtract(%h, %mub)
  %d2 = {0}[64,256] multiply(%d, %d)
  %s2 = {0}[64] reduce(%d2, %z), dimensions={{1}}, reducer=add
  %var = {0}[64] multiply(%s2, %nb)
  %eps = {0}[] constant(1.52587890625e-05)
  %epsb = {0}[64] broadcast(%eps), broadcast_dimensions={{}}
  %ve = {0}[64] add(%var, %epsb)
  %r = {0}[64] rsqrt(%ve)
  %rb = {0}[64,256] broadcast(%r), broadcast_dimensions={{0}}
  ROOT %y = {0}[64,256] multiply(%d, %rb)
}}

ENTRY %main (h: {0}[64,256]) -> ({0}[64,256]) {{
  %h = {0}[64,256] parameter(0)
  %f = {0}[64,256] fusion(%h), kind=kRow, calls=%fused
  ROOT %t = ({0}[64,256]) tuple(%f)
}}
)",
                     s);
}
}  // namespace

TEST_CASE("cpu: excess precision (the default) is more accurate than per-op rounding for f16/bf16 fusions", "[cpu]") {
  // Against a double-precision reference (the same module in f64 on the interpreter, on the same inputs): the
  // default keeps the chain in f32 and rounds once when it stores the result, so each element is the reference
  // correctly rounded but for f32's own error: within 0.5 ULP plus tanh's polynomial error (a few f32 ULP, up to
  // 0.2 ULP of the floored f16 spacing where 1 + tanh cancels; sums are f32 too): 0.75 ULP. Per-op rounding (the
  // flag off, and the interpreter) rounds after every op, and those roundings add up along the chain (and are
  // amplified where it cancels: x - mean, 1 + tanh).
  for (DType d : {DType::bfloat16, DType::float16}) {
    std::string s = hlo_name(d);
    for (bool row : {false, true}) {
      INFO(s << (row ? " layer norm" : " gelu chain"));
      std::string text = row ? layer_norm_module(s) : gelu_chain_module(s);
      std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
      std::vector<Literal> args, args64;
      for (auto* p : m->entry->parameters) {
        args.push_back(random_literal(p->shape, row ? -1 : -2, row ? 3 : 2));
        args64.push_back(to_f64(args.back()));
      }
      Literal ref = run(interp(), row ? layer_norm_module("f64") : gelu_chain_module("f64"), args64).at(0);
      Literal excess = [&] {
        ExcessPrecision on(true);
        return run(native(), m, args).at(0);
      }();
      Literal per_op = [&] {
        ExcessPrecision off(false);
        return run(native(), m, args).at(0);
      }();
      Literal oracle = run(interp(), m, args).at(0);
      double max_excess = 0, max_per_op = 0, sum_excess = 0, sum_per_op = 0, sum_oracle = 0;
      for (int64_t i = 0; i < ref.size(); ++i) {
        double e = ulps(excess.get_f64(i), ref.get_f64(i), d), p = ulps(per_op.get_f64(i), ref.get_f64(i), d);
        max_excess = std::max(max_excess, e);
        max_per_op = std::max(max_per_op, p);
        sum_excess += e;
        sum_per_op += p;
        sum_oracle += ulps(oracle.get_f64(i), ref.get_f64(i), d);
      }
      double n = static_cast<double>(ref.size());
      INFO("error in ULP: excess precision max " << max_excess << " mean " << sum_excess / n << "; per-op max "
                                                 << max_per_op << " mean " << sum_per_op / n << "; interpreter mean "
                                                 << sum_oracle / n);
      CHECK(max_excess <= kExcessPrecisionUlp);
      CHECK(max_per_op > 1.0);
      CHECK(sum_excess < 0.75 * sum_per_op);
      CHECK(sum_excess < 0.75 * sum_oracle);
    }
  }
}

TEST_CASE("cpu: excess precision lets a multiply and the add it feeds fuse into one FMA (as XLA:CPU and JAX do)",
          "[cpu]") {
  // w - 0.1 g at w = 1, g = 10: rounded twice it is 0 (0.1f * 10 rounds to 1); as one fused multiply-add it is
  // 1 - 1.0000000149 = -1.49e-8, which is what jax.jit gives on CPU. Per-op rounding keeps the two roundings.
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(R"(HloModule m

%fused (w: f32[2], g: f32[2]) -> f32[2] {
  %w = f32[2] parameter(0)
  %g = f32[2] parameter(1)
  %c = f32[] constant(0.1)
  %cb = f32[2] broadcast(%c), broadcast_dimensions={}
  %p = f32[2] multiply(%cb, %g)
  ROOT %d = f32[2] subtract(%w, %p)
}

ENTRY %main (w: f32[2], g: f32[2]) -> (f32[2]) {
  %w = f32[2] parameter(0)
  %g = f32[2] parameter(1)
  %f = f32[2] fusion(%w, %g), kind=kLoop, calls=%fused
  ROOT %t = (f32[2]) tuple(%f)
}
)");
  Literal w = Literal::make(DType::float32, {2}), g = Literal::make(DType::float32, {2});
  w.set_f64(0, 1.0), w.set_f64(1, 2.0), g.set_f64(0, 10.0), g.set_f64(1, 20.0);
  {
    ExcessPrecision on(true);
    Literal r = run(native(), m, {w, g}).at(0);
    CHECK(r.get_f64(0) == std::fma(-0.1f, 10.0f, 1.0f));
    CHECK(r.get_f64(0) != 0.0);
    CHECK(r.get_f64(1) == std::fma(-0.1f, 20.0f, 2.0f));
  }
  {
    ExcessPrecision off(false);
    Literal r = run(native(), m, {w, g}).at(0);
    CHECK(r.get_f64(0) == 0.0);
    CHECK(r.get_f64(1) == 0.0);
  }
}

TEST_CASE("cpu: with excess precision off, f16/bf16 fusions round after every op, bit-exact with the interpreter",
          "[cpu]") {
  // Only exactly rounded ops (+, -, *, max, negate, select, converts): each op's f32 result rounded to the type is
  // then the interpreter's correctly rounded result, bit for bit. With excess precision on, the same fusion is
  // instead, bit for bit, the whole chain computed in f32 (the module with f32 for the type, compiled the same way:
  // the same multiplies fuse into adds) rounded once to the type. (An explicit convert to the type always rounds:
  // the next test.)
  for (DType d : {DType::bfloat16, DType::float16}) {
    auto module_text = [](const std::string& s) {
      return fmt::format(R"(HloModule m

%fused (a: {0}[96,200], b: {0}[96,200], c: {0}[200]) -> {0}[96,200] {{
  %a = {0}[96,200] parameter(0)
  %b = {0}[96,200] parameter(1)
  %c = {0}[200] parameter(2)
  %cb = {0}[96,200] broadcast(%c), broadcast_dimensions={{1}}
  %ab = {0}[96,200] multiply(%a, %b)
  %x = {0}[96,200] add(%ab, %cb)
  %y = {0}[96,200] multiply(%x, %x)
  %z = {0}[96,200] subtract(%y, %a)
  %w = {0}[96,200] multiply(%z, %cb)
  %n = {0}[96,200] negate(%w)
  %mx = {0}[96,200] maximum(%n, %ab)
  %p = pred[96,200] compare(%x, %cb), direction=GT
  %s = {0}[96,200] select(%p, %mx, %z)
  %h = {0}[96,200] multiply(%s, %s)
  ROOT %r = {0}[96,200] add(%h, %x)
}}

ENTRY %main (a: {0}[96,200], b: {0}[96,200], c: {0}[200]) -> ({0}[96,200]) {{
  %a = {0}[96,200] parameter(0)
  %b = {0}[96,200] parameter(1)
  %c = {0}[200] parameter(2)
  %f = {0}[96,200] fusion(%a, %b, %c), kind=kLoop, calls=%fused
  ROOT %t = ({0}[96,200]) tuple(%f)
}}
)",
                         s);
    };
    std::string text = module_text(hlo_name(d));
    INFO(text);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
    std::vector<Literal> args, args32;
    for (auto* p : m->entry->parameters) {
      args.push_back(random_literal(p->shape, -2, 2));
      args32.push_back(Literal::make(DType::float32, p->shape.dims));
      for (int64_t i = 0; i < args.back().size(); ++i) args32.back().set_f64(i, args.back().get_f64(i));
    }
    Literal want = run(interp(), m, args).at(0);
    Literal f32 = [&] {
      ExcessPrecision on(true);
      return run(native(), module_text("f32"), args32).at(0);
    }();
    Literal rounded_once = Literal::make(d, f32.dims);
    for (int64_t i = 0; i < f32.size(); ++i) rounded_once.set_f64(i, f32.get_f64(i));
    Literal per_op = [&] {
      ExcessPrecision off(false);
      return run(native(), m, args).at(0);
    }();
    Literal excess = [&] {
      ExcessPrecision on(true);
      return run(native(), m, args).at(0);
    }();
    REQUIRE(per_op.nbytes() == want.nbytes());
    CHECK(std::memcmp(per_op.data(), want.data(), want.nbytes()) == 0);
    CHECK(std::memcmp(excess.data(), rounded_once.data(), want.nbytes()) == 0);
    int64_t differ = 0;  // and the two roundings do differ on these inputs
    for (int64_t i = 0; i < want.size(); ++i) differ += excess.get_f64(i) != want.get_f64(i);
    CHECK(differ > 0);
  }
}

// An explicit convert to a half type rounds even with excess precision on: x.astype(bf16).astype(f32) is how users
// emulate bf16, and XLA:CPU (so JAX) rounds it (jax: f32 1.0301594 -> bf16 -> f32 gives 1.03125).
TEST_CASE("excess precision: an explicit convert to f16/bf16 inside a fusion still rounds", "[cpu][excess]") {
  for (std::string wide : {"f32", "f64"}) {
    for (std::string half : {"bf16", "f16"}) {
      std::string text = fmt::format(R"(HloModule m

ENTRY %main (x: {0}[300]) -> ({0}[300]) {{
  %x = {0}[300] parameter(0)
  %h = {1}[300] convert(%x)
  %w = {0}[300] convert(%h)
  %r = {0}[300] add(%w, %x)
  ROOT %t = ({0}[300]) tuple(%r)
}}
)",
                                     wide, half);
      INFO(wide << " -> " << half);
      std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
      std::vector<Literal> args{random_literal(m->entry->parameters[0]->shape, -3, 3)};
      Literal want = run(interp(), m, args).at(0);
      Literal got = [&] {
        ExcessPrecision on(true);
        return run(native(), m, args).at(0);
      }();
      REQUIRE(got.nbytes() == want.nbytes());
      CHECK(std::memcmp(got.data(), want.data(), want.nbytes()) == 0);
      // and the rounding is visible: w != x for most random inputs
      int64_t same = 0;
      for (int64_t i = 0; i < 300; ++i) same += got.get_f64(i) == 2 * args[0].get_f64(i);
      CHECK(same < 30);
    }
  }
}
