// Plumbing tests of the CUDA runtime (backends/cuda/cuda_runtime.h) on a FAKE driver (tests/fake_cuda_driver.cpp:
// host memory, a thread per stream, kernels that fail): streams, events, cross-stream waits, the caching allocator
// on cuMemAlloc, pinned staging, the module cache and JIT logs, errors reaching every reader. These are not GPU
// results: the fake runs no kernel; tools/gpu_check.sh runs the real thing on a GPU ("[gpu]").
#include <catch2/catch.hpp>

#ifdef JITX_HAS_CUDA
#include <cstdlib>

#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_runtime.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/cuda.h"
#include "jitx/jitx.h"

using namespace jitx;
using detail::Literal;

namespace {
const cuda::Driver& fake() {
  static std::unique_ptr<cuda::Driver> d = [] {
    std::string why;
    auto p = cuda::open_driver(JITX_FAKE_CUDA_DRIVER, &why);
    if (!p) FAIL("the fake driver did not load: " << why);
    return p;
  }();
  return *d;
}

Literal iota_literal(DType dt, int64_t n, double scale) {
  Literal l = Literal::make(dt, {n});
  for (int64_t i = 0; i < n; ++i) l.set_f64(i, static_cast<double>((i * 37) % 101) * scale - 7);
  return l;
}

// Copies shall take this long on the fake's streams while the scope lives (the fake reads it per copy).
struct CopyDelay {
  explicit CopyDelay(int ms) { setenv("JITX_FAKE_CUDA_DELAY_MS", std::to_string(ms).c_str(), 1); }
  ~CopyDelay() { unsetenv("JITX_FAKE_CUDA_DELAY_MS"); }
};

cuda::GpuKernel add_kernel() {
  auto m = hlo::parse_hlo(
      "HloModule m\n\nENTRY %main (a: f32[1000], b: f32[1000]) -> f32[1000] {\n  %a = f32[1000] parameter(0)\n"
      "  %b = f32[1000] parameter(1)\n  ROOT %r = f32[1000] add(%a, %b)\n}\n");
  return cuda::compile_kernel(*m->entry->find("r"), cuda::GpuTarget::sm90(), true, "jitx_kernel_add");
}
}  // namespace

TEST_CASE("cuda fake driver: the device, its primary context and streams (plumbing, not a GPU)", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  CHECK(dev.name().find("fake") != std::string::npos);
  CHECK(dev.compute_capability() == 90);
  CHECK_THROWS_WITH(cuda::GpuDevice(fake(), 5), Catch::Contains("cuDeviceGet"));
  // The process's own driver is untouched: still none here, so jitx sees no CUDA devices.
  if (!cuda_unavailable_reason().empty()) CHECK(devices("cuda").empty());
}

TEST_CASE("cuda fake driver: device_put is asynchronous and fetch returns the values", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  for (DType dt : {DType::float32, DType::bfloat16, DType::int8, DType::float64}) {
    Literal x = iota_literal(dt, 3000, 0.25);
    std::shared_ptr<cuda::GpuArray> a;
    {
      CopyDelay slow(300);
      a = dev.put(x);
      CHECK_FALSE(a->is_ready());  // the copy is still queued on the transfer stream
    }
    x.set_f64(0, 1234);  // the host value may change at once: put staged it already
    Literal back = dev.fetch(a);
    CHECK(a->is_ready());
    REQUIRE(back.dtype == dt);
    REQUIRE(back.dims == std::vector<int64_t>{3000});
    CHECK(back.get_f64(0) == -7);
    for (int64_t i = 1; i < 3000; ++i) CHECK(back.get_f64(i) == x.get_f64(i));
  }
  Literal empty = Literal::make(DType::float32, {0, 4});
  auto e = dev.put(empty);
  CHECK(dev.fetch(e).dims == std::vector<int64_t>{0, 4});
}

TEST_CASE("cuda fake driver: the caching allocator and pinned staging are reused", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  Literal x = iota_literal(DType::float32, 10000, 1);
  for (int i = 0; i < 20; ++i) {
    auto a = dev.put(x);
    CHECK(dev.fetch(a).get_f64(5) == x.get_f64(5));
  }
  CHECK(dev.allocator().raw_allocations() == 1);  // one block, handed out again each time
  CHECK(dev.allocator().in_use_bytes() == 0);
  CHECK(dev.staging_blocks() <= 2);
  // Live arrays each hold their own block.
  std::vector<std::shared_ptr<cuda::GpuArray>> live;
  for (int i = 0; i < 5; ++i) live.push_back(dev.put(x));
  CHECK(dev.allocator().raw_allocations() == 5);
  for (auto& a : live) CHECK(dev.fetch(a).get_f64(9999) == x.get_f64(9999));
}

TEST_CASE("cuda fake driver: modules load once per PTX; a rejected module's JIT log is in the error", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  cuda::GpuKernel k = add_kernel();
  auto a = dev.put(iota_literal(DType::float32, 1000, 1)), b = dev.put(iota_literal(DType::float32, 1000, 2));
  std::vector<std::shared_ptr<cuda::GpuArray>> in = {a, b};
  auto o1 = dev.launch(k, in, {hlo::Shape(DType::float32, {1000})});
  auto o2 = dev.launch(k, in, {hlo::Shape(DType::float32, {1000})});
  CHECK(dev.modules_loaded() == 1);
  CHECK(dev.module_cache_hits() == 1);
  cuda::GpuKernel bad = k;
  bad.ptx = "// not PTX\n";
  auto o3 = dev.launch(bad, in, {hlo::Shape(DType::float32, {1000})});
  REQUIRE(o3.size() == 1);
  CHECK_THROWS_WITH(dev.fetch(o3[0]), Catch::Contains("cuModuleLoadDataEx of jitx_kernel_add") &&
                                          Catch::Contains("JIT log: fake driver JIT: no .visible .entry"));
  CHECK_THROWS_WITH(dev.launch(k, in, {}), Catch::Contains("expected 2 and 1"));
}

TEST_CASE("cuda fake driver: a kernel failing on the stream reaches every reader, and their readers",
          "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  cuda::GpuKernel k = add_kernel();
  std::shared_ptr<cuda::GpuArray> a, b;
  std::vector<std::shared_ptr<cuda::GpuArray>> out;
  {
    CopyDelay slow(200);
    a = dev.put(iota_literal(DType::float32, 1000, 1));
    b = dev.put(iota_literal(DType::float32, 1000, 1));
    std::vector<std::shared_ptr<cuda::GpuArray>> in = {a, b};
    out = dev.launch(k, in, {hlo::Shape(DType::float32, {1000})});  // returns before the inputs are there
    CHECK_FALSE(out[0]->is_ready());
  }
  auto msg = Catch::Contains("kernel jitx_kernel_add (%r)") && Catch::Contains("CUDA_ERROR_LAUNCH_FAILED");
  CHECK_THROWS_WITH(out[0]->block_until_ready(), msg);
  CHECK_THROWS_WITH(dev.fetch(out[0]), msg);
  CHECK_THROWS_WITH(dev.fetch(out[0]), msg);  // every reader, every time
  // A kernel reading the failed array fails too (its stream waited on the failed event).
  std::vector<std::shared_ptr<cuda::GpuArray>> in2 = {out[0], a};
  auto out2 = dev.launch(k, in2, {hlo::Shape(DType::float32, {1000})});
  CHECK_THROWS_WITH(dev.fetch(out2[0]), Catch::Contains("CUDA_ERROR_LAUNCH_FAILED"));
  // The inputs themselves are fine, and the compute stream's failure does not leak into later transfers.
  CHECK(dev.fetch(a).get_f64(3) == iota_literal(DType::float32, 1000, 1).get_f64(3));
  dev.synchronize();
}

#else
TEST_CASE("cuda fake driver: the backend is absent without the CUDA toolkit", "[cuda_fake]") {
  WARN("skipped: jitx was configured without the CUDA toolkit, so the CUDA runtime is not built");
  SUCCEED();
}
#endif
