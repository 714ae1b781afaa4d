// SPMD launches on several CPU devices: a partitioned module's program on each device's stream, collectives between
// the streams; results against the evaluator's SPMD run; concurrent launches; an error in one partition.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "dispatch/spmd.h"
#include "hlo/evaluator/evaluator_collectives.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/jitx.h"
#include "runtime/runtime.h"
#include "spmd_test_util.h"

using namespace jitx;
using detail::Literal;

namespace {

bool have(size_t n) {
  if (runtime::Client::get().num_devices() >= n) return true;
  WARN("needs " << n << " devices (the test main sets eight unless JITX_CPU_DEVICE_COUNT says otherwise)");
  return false;
}

Literal f32(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  return jitx::testing::f32_literal(v, dims);
}
std::vector<float> values(const Literal& l) { return jitx::testing::f32_values(l); }

/// x -> (all-reduce(sum, exp(x) * 2), all-gather(x) along 0, negate(reduce-scatter(x) along 1)).
std::string program(int64_t n) {
  std::string g;
  for (int64_t p = 0; p < n; ++p) g += (p ? "," : "") + std::to_string(p);
  return fmt::format(R"(HloModule spmd

ENTRY %e (x: f32[2,{0}]) -> (f32[2,{0}], f32[{1},{0}], f32[2,1]) {{
  %x = f32[2,{0}] parameter(0)
  %c = f32[] constant(2)
  %b = f32[2,{0}] broadcast(%c), broadcast_dimensions={{}}
  %ex = f32[2,{0}] exponential(%x)
  %m = f32[2,{0}] multiply(%ex, %b)
  %ar = f32[2,{0}] all-reduce(%m), channel_id=1, reducer=add, replica_groups={{{{{2}}}}}
  %ag = f32[{1},{0}] all-gather(%x), channel_id=2, dimensions={{0}}, replica_groups={{{{{2}}}}}
  %rs = f32[2,1] reduce-scatter(%x), channel_id=3, dimensions={{1}}, reducer=add, replica_groups={{{{{2}}}}}
  %ng = f32[2,1] negate(%rs)
  ROOT %t = (f32[2,{0}], f32[{1},{0}], f32[2,1]) tuple(%ar, %ag, %ng)
}}
)",
                     n, 2 * n, g);
}

std::vector<Literal> inputs(int64_t n) {
  std::vector<Literal> in;
  for (int64_t p = 0; p < n; ++p) {
    std::vector<float> v;
    for (int64_t k = 0; k < 2 * n; ++k) v.push_back(0.01f * float(p * 7 + k) - 0.3f);
    in.push_back(f32(v, {2, n}));
  }
  return in;
}

std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> put(const std::vector<Literal>& in,
                                                                 const std::vector<runtime::Device*>& devs) {
  std::vector<std::vector<std::shared_ptr<runtime::Buffer>>> args;
  for (size_t p = 0; p < in.size(); ++p) args.push_back({runtime::Buffer::from_literal(in[p], devs[p])});
  return args;
}

}  // namespace

TEST_CASE("SPMD launch: a partitioned program on N devices equals the evaluator's SPMD run", "[spmd]") {
  auto& client = runtime::Client::get();
  for (int64_t n : {2, 4, 8}) {
    if (!have(size_t(n))) return;
    INFO("devices: " << n);
    std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(program(n));
    hlo::verify(*m);
    auto in = inputs(n);
    std::vector<std::vector<Literal>> eval_args;
    for (auto& l : in) eval_args.push_back({l});
    auto want = evaluator::evaluate_spmd(*m, eval_args);
    auto exe = client.backend().compile(m);
    auto all = client.devices();
    std::vector<runtime::Device*> devs(all.begin(), all.begin() + n);
    auto outs = detail::execute_spmd(*exe, devs, put(in, devs));
    for (int64_t p = 0; p < n; ++p) {
      REQUIRE(outs[size_t(p)].size() == 3);
      for (size_t k = 0; k < 3; ++k) {
        auto got = values(outs[size_t(p)][k]->literal());
        auto ref = values(want[size_t(p)].tuple[k].array);
        REQUIRE(got.size() == ref.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(ref[i]).epsilon(1e-6));
        CHECK(outs[size_t(p)][k]->device == devs[size_t(p)]);
      }
    }
  }
}

TEST_CASE("SPMD launch: launches from several threads, on devices in different orders, do not deadlock", "[spmd]") {
  if (!have(4)) return;
  auto& client = runtime::Client::get();
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(program(2));
  auto exe = client.backend().compile(m);
  auto in = inputs(2);
  std::vector<std::vector<Literal>> eval_args{{in[0]}, {in[1]}};
  auto want = evaluator::evaluate_spmd(*m, eval_args);
  auto ds = client.devices();
  std::vector<std::vector<runtime::Device*>> orders = {{ds[0], ds[1]}, {ds[1], ds[0]}, {ds[1], ds[2]}, {ds[3], ds[1]}};
  std::vector<int> bad(orders.size(), 0);
  std::vector<std::thread> ts;
  for (size_t t = 0; t < orders.size(); ++t)
    ts.emplace_back([&, t] {
      for (int k = 0; k < 25; ++k) {
        auto outs = detail::execute_spmd(*exe, orders[t], put(in, orders[t]));
        for (size_t p = 0; p < 2; ++p)
          if (values(outs[p][1]->literal()) != values(want[p].tuple[1].array)) ++bad[t];
      }
    });
  for (auto& t : ts) t.join();
  CHECK(bad == std::vector<int>(orders.size(), 0));
}

TEST_CASE("SPMD launch: an error in one partition reaches every partition's outputs", "[spmd]") {
  if (!have(4)) return;
  auto& client = runtime::Client::get();
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(program(4));
  auto exe = client.backend().compile(m);
  auto all = client.devices();
  std::vector<runtime::Device*> devs(all.begin(), all.begin() + 4);
  auto args = put(inputs(4), devs);
  // Partition 2's argument is a buffer whose producer failed: its program fails before the all-reduce, where the
  // other three wait for it.
  auto failed = runtime::Buffer::pending(DType::float32, {2, 4}, devs[2]);
  failed->ready->set_error(std::make_exception_ptr(RuntimeError("[test] the producer of this buffer failed")));
  args[2] = {failed};
  auto outs = detail::execute_spmd(*exe, devs, args);
  for (size_t p = 0; p < 4; ++p) CHECK_THROWS_AS(outs[p][0]->literal(), Error);
  // The streams still work afterwards.
  auto ok = detail::execute_spmd(*exe, devs, put(inputs(4), devs));
  for (size_t p = 0; p < 4; ++p) CHECK_NOTHROW(ok[p][0]->literal());
}
