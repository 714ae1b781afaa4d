// Cost analysis, the memory-driven scheduler and buffer assignment on lowered modules.
#include <catch2/catch.hpp>

#include "core/trace.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/analysis/cost_analysis.h"
#include "jitx/jitx.h"
#include "lowering/lower.h"

using namespace jitx;

namespace {
std::shared_ptr<hlo::Module> lower_fn(const std::function<Array(const std::vector<Array>&)>& f,
                                      const std::vector<ShapedArray>& avals) {
  auto cj = detail::trace_to_jaxpr("f", avals, [&](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; });
  return detail::lower_jaxpr(cj, "test");
}
}  // namespace

TEST_CASE("cost analysis counts dot flops, transcendentals and bytes", "[analysis]") {
  const int64_t M = 16, K = 32, N = 8;
  auto m = lower_fn([](const std::vector<Array>& a) { return jnp::tanh(jnp::matmul(a[0], a[1])); },
                    {{{M, K}, float32}, {{K, N}, float32}});
  auto c = hlo::analyze_cost(*m);
  CHECK(c.flops == 2.0 * M * N * K);
  CHECK(c.transcendentals == M * N);
  // dot reads both operands and writes M*N; tanh reads and writes M*N (no fusion yet).
  double expect = 4.0 * (M * K + K * N + M * N) + 4.0 * (2 * M * N);
  CHECK(c.bytes_accessed == expect);
  CHECK(c.bytes_accessed_operand.size() == 2);
  CHECK(c.bytes_accessed_operand[0] == 4.0 * M * K);
  CHECK(c.bytes_accessed_output == 4.0 * M * N);
  auto map = c.as_map();
  CHECK(map.at("flops") == c.flops);
  CHECK(map.at("bytes accessed1{}") == 4.0 * K * N);
}

TEST_CASE("buffer assignment shares temporaries whose lifetimes do not overlap", "[analysis]") {
  // A chain of elementwise ops: each intermediate dies at the next op, so in-place reuse keeps the
  // temp arena at one buffer however long the chain.
  const int64_t n = 1024;
  auto m = lower_fn(
      [](const std::vector<Array>& a) {
        Array x = a[0];
        for (int i = 0; i < 6; ++i) x = jnp::exp(x) * a[0];
        return x;
      },
      {{{n}, float32}});
  auto ba = hlo::assign_buffers(*m);
  CHECK(ba.argument_size == 4 * n);
  CHECK(ba.output_size == 4 * n);
  CHECK(ba.temp_values_total >= 11 * 4 * n);
  CHECK(ba.temp_size == 4 * n);
  CHECK(ba.reused_in_place > 0);
  CHECK(ba.str().find("temp") != std::string::npos);
}

TEST_CASE("buffer assignment: values live at once get disjoint slices", "[analysis]") {
  auto m = lower_fn(
      [](const std::vector<Array>& a) {
        Array p = jnp::exp(a[0]), q = jnp::log(a[1]), r = jnp::sin(a[0]);
        return p * q + r;  // p, q and r are all live at the multiply/add
      },
      {{{256}, float32}, {{256}, float32}});
  auto ba = hlo::assign_buffers(*m);
  // Check no two temporaries that are live at the same time overlap in the arena.
  for (size_t a = 0; a < ba.values.size(); ++a)
    for (size_t b = a + 1; b < ba.values.size(); ++b) {
      auto [aa, ao] = ba.slice_of[a];
      auto [ab, bo] = ba.slice_of[b];
      if (aa != ab || ba.allocations[aa].kind != hlo::Allocation::Kind::kTemp) continue;
      const auto &va = ba.values[a], &vb = ba.values[b];
      bool live_together = va.start <= vb.end && vb.start <= va.end;
      bool in_place = va.end == vb.start || vb.end == va.start;  // a dying operand reused by its user
      bool overlap = ao < bo + vb.size && bo < ao + va.size;
      if (live_together && !in_place) CHECK_FALSE(overlap);
    }
  CHECK(ba.temp_size < ba.temp_values_total);
}

TEST_CASE("donated parameters alias outputs of the same type", "[analysis]") {
  auto m = lower_fn([](const std::vector<Array>& a) { return a[0] - 0.5 * a[1]; },
                    {{{64}, float32}, {{64}, float32}});
  auto plain = hlo::assign_buffers(*m);
  CHECK(plain.alias_size == 0);
  auto donated = hlo::assign_buffers(*m, {0});
  CHECK(donated.alias_size == 4 * 64);
}

TEST_CASE("the list scheduler lowers peak live memory on a wide graph", "[analysis]") {
  // Four independent big branches each reduced to a scalar: computing each branch to its reduction
  // before starting the next keeps one big temporary live instead of four.
  auto m = lower_fn(
      [](const std::vector<Array>& a) {
        std::vector<Array> big;
        for (int i = 0; i < 4; ++i) big.push_back(jnp::exp(a[0] * static_cast<double>(i + 1)));
        Array s = jnp::sum(big[0]);
        for (int i = 1; i < 4; ++i) s = s + jnp::sum(big[i]);
        return s;
      },
      {{{4096}, float32}});
  auto [before, after] = hlo::schedule_for_memory(*m);
  CHECK(after <= before);
  CHECK(after < before);
  hlo::verify(*m);
}
