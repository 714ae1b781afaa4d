// f16/bf16 rounding and excess precision on the CPU backend: f16/bf16 ops round to their type after every op,
// as XLA:CPU and the interpreter do; excess precision (on by default, as in XLA) lets a multiply and the add it feeds
// fuse into one FMA (f32/f64, and f16, whose multiply LLVM narrows); an explicit convert to f16/bf16 always rounds.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "backend_test_util.h"
#include "jitx/config.h"

using namespace jitx;
using namespace jitx::testing;
using detail::Literal;

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

TEST_CASE("cpu: f16/bf16 fusions round after every op, bit-exact with the interpreter, excess precision on or off",
          "[cpu]") {
  // Only exactly rounded ops (+, -, *, max, negate, select, converts): each op's f32 result rounded to the type is
  // then the interpreter's correctly rounded result, bit for bit, with excess precision off, and for bf16 also on
  // (the default; f16: see below). The chain computed in f32 and rounded once (what
  // keeping f16/bf16 in f32 inside a kernel would give; XLA:CPU does not) differs. (An explicit convert to the type
  // always rounds: the next test.)
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
    // f16 under excess precision: LLVM narrows an f32 multiply of two f16 values to an f16 multiply and may then
    // fuse it into the add it feeds (one FMA), as it does with XLA's f16 code (JAX's f16 uniform on this kind of
    // host); bf16 values are rounded with integer ops, which nothing fuses across.
    if (d == DType::bfloat16) CHECK(std::memcmp(excess.data(), want.data(), want.nbytes()) == 0);
    int64_t differ = 0;  // and rounding once would differ on these inputs
    for (int64_t i = 0; i < want.size(); ++i) differ += rounded_once.get_f64(i) != want.get_f64(i);
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
