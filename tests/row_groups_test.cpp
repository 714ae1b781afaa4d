// Row groups (src/backends/cpu/row_groups.h): runs of kernels over the same rows run block by block. Checked
// against the interpreter on modules whose kernels read each other's rows in every way the grouping must accept
// (row reductions, broadcasts along rows, elementwise, reshapes) or refuse (a broadcast across rows, a transpose,
// a reduction over the leading dim), at leading extents that are and are not multiples of the block alignment;
// and bit for bit against the same executable built without groups.
#include <catch2/catch.hpp>

#include <cstring>

#include "backend_test_util.h"
#include "jitx/config.h"
#include "jitx/jit.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
/// The cpu executable's stats for HLO text (row_groups and row_group_kernels among them).
std::map<std::string, int64_t> cpu_stats(const std::string& text) {
  auto exe = native().compile(hlo::parse_hlo(text));
  return exe->stats();
}

/// A softmax as separate kernels (nothing fused), with extra outputs that read the intermediate values.
std::string unfused_softmax(int64_t R, int64_t C) {
  return fmt::format(R"(HloModule m

ENTRY %main (a: f32[{0},{1}], w: f32[{1}]) -> (f32[{0},{1}], f32[{0}], f32[{0},{1}]) {{
  %a = f32[{0},{1}] parameter(0)
  %w = f32[{1}] parameter(1)
  %ninf = f32[] constant(-inf)
  %m = f32[{0}] reduce(%a, %ninf), dimensions={{1}}, reducer=max
  %mb = f32[{0},{1}] broadcast(%m), broadcast_dimensions={{0}}
  %s = f32[{0},{1}] subtract(%a, %mb)
  %e = f32[{0},{1}] exponential(%s)
  %zero = f32[] constant(0)
  %t = f32[{0}] reduce(%e, %zero), dimensions={{1}}, reducer=add
  %tb = f32[{0},{1}] broadcast(%t), broadcast_dimensions={{0}}
  %o = f32[{0},{1}] divide(%e, %tb)
  %wb = f32[{0},{1}] broadcast(%w), broadcast_dimensions={{1}}
  %ow = f32[{0},{1}] multiply(%o, %wb)
  ROOT %r = (f32[{0},{1}], f32[{0}], f32[{0},{1}]) tuple(%ow, %t, %e)
}}
)",
                     R, C);
}
}  // namespace

TEST_CASE("row groups: an unfused softmax runs as one group and matches the interpreter", "[cpu][row_groups]") {
  for (auto [R, C] : std::vector<std::pair<int64_t, int64_t>>{{256, 300}, {100, 37}, {1000, 8}, {33, 1024}}) {
    std::string text = unfused_softmax(R, C);
    check_module(text);
    auto st = cpu_stats(text);
    INFO("R=" << R << " C=" << C);
    CHECK(st.at("row_groups") == 1);
    CHECK(st.at("row_group_kernels") == st.at("native_kernels"));
    CHECK(st.at("native_kernels") >= 6);
  }
}

TEST_CASE("row groups: reads across rows end a group", "[cpu][row_groups]") {
  // %m is broadcast across the rows (broadcast_dimensions={1}): row i of %x needs every row's max, so %x cannot
  // run with the kernel that computes %m; %c reduces over the leading dim; %tr transposes.
  std::string text = R"(HloModule m

ENTRY %main (a: f32[64,64]) -> (f32[64,64], f32[64], f32[64,64]) {
  %a = f32[64,64] parameter(0)
  %ninf = f32[] constant(-inf)
  %zero = f32[] constant(0)
  %n = f32[64,64] negate(%a)
  %m = f32[64] reduce(%n, %ninf), dimensions={1}, reducer=max
  %mb = f32[64,64] broadcast(%m), broadcast_dimensions={1}
  %x = f32[64,64] add(%n, %mb)
  %e = f32[64,64] exponential(%x)
  %c = f32[64] reduce(%e, %zero), dimensions={0}, reducer=add
  %tr = f32[64,64] transpose(%e), permutation={1,0}
  %y = f32[64,64] add(%tr, %e)
  ROOT %r = (f32[64,64], f32[64], f32[64,64]) tuple(%x, %c, %y)
}
)";
  check_module(text);
  auto st = cpu_stats(text);
  // Three runs: {%n, %m}, {%mb, %x, %e} ({%mb} reads %m across rows), {%c, %tr, %y} (%c reduces %e over the leading
  // dim; %tr transposes %e, which is then outside the run); grouped otherwise, the values above would differ.
  CHECK(st.at("native_kernels") == 8);
  CHECK(st.at("row_groups") == 3);
  CHECK(st.at("row_group_kernels") == 8);
}

TEST_CASE("row groups: rank-3 rows, a reshape and a rank-1 output in one group", "[cpu][row_groups]") {
  std::string text = R"(HloModule m

ENTRY %main (a: f32[48,5,40], b: f32[48]) -> (f32[48,200], f32[48]) {
  %a = f32[48,5,40] parameter(0)
  %b = f32[48] parameter(1)
  %zero = f32[] constant(0)
  %s = f32[48,5] reduce(%a, %zero), dimensions={2}, reducer=add
  %sb = f32[48,5,40] broadcast(%s), broadcast_dimensions={0,1}
  %d = f32[48,5,40] subtract(%a, %sb)
  %q = f32[48,5,40] multiply(%d, %d)
  %r2 = f32[48,200] reshape(%q)
  %v = f32[48] reduce(%r2, %zero), dimensions={1}, reducer=add
  %vb = f32[48] add(%v, %b)
  ROOT %r = (f32[48,200], f32[48]) tuple(%r2, %vb)
}
)";
  check_module(text);
  auto st = cpu_stats(text);
  CHECK(st.at("row_groups") == 1);
  CHECK(st.at("row_group_kernels") >= 4);
}

TEST_CASE("row groups: jitted results are bit for bit those of the ungrouped executable", "[cpu][row_groups]") {
  auto f = [](Array x, Array g) {
    // A layer norm whose statistics are also outputs, and a softmax over its result: several row kernels.
    Array mu = jnp::mean(x, {-1}, true);
    Array var = jnp::var(x, {-1}, true);
    Array y = (x - mu) / jnp::sqrt(var + 1e-5f) * g;
    Array p = nn::softmax(y);
    return std::make_tuple(p, mu, var, jnp::sum(p * y, {-1}));
  };
  bool saved = config().cpu_row_groups;
  for (auto shape : std::vector<Shape>{{200, 96}, {3, 70, 33}, {1024, 16}}) {
    Array x = make(uniform(static_cast<size_t>(numel(shape)), -2, 2), shape, DType::float32);
    Array g = make(uniform(static_cast<size_t>(shape.back()), 0.5, 1.5), {shape.back()}, DType::float32);
    config().cpu_row_groups = true;
    auto on = jit(f, {.name = "rg_on"}).lower(x, g).compile();
    auto a = on(x, g);
    config().cpu_row_groups = false;
    auto off = jit(f, {.name = "rg_off"}).lower(x, g).compile();
    auto b = off(x, g);
    config().cpu_row_groups = saved;
    auto same = [](const Array& u, const Array& v) {
      auto p = u.to_vector<float>(), q = v.to_vector<float>();
      return p.size() == q.size() && std::memcmp(p.data(), q.data(), p.size() * sizeof(float)) == 0;
    };
    CHECK(same(std::get<0>(a), std::get<0>(b)));
    CHECK(same(std::get<1>(a), std::get<1>(b)));
    CHECK(same(std::get<2>(a), std::get<2>(b)));
    CHECK(same(std::get<3>(a), std::get<3>(b)));
    // And the values are a softmax's: rows sum to 1.
    auto rows = jnp::sum(std::get<0>(a), {-1}).to_vector<float>();
    for (float r : rows) CHECK(std::fabs(r - 1.0f) < 1e-5f);
  }
  config().cpu_row_groups = saved;
}
