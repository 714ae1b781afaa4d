// Plumbing tests of the CUDA runtime (backends/cuda/cuda_runtime.h) and of the "cuda" devices of the public API on a
// FAKE driver (tests/fake_cuda_driver.cpp: host memory, a thread per stream, the Driver API's documented semantics
// for contexts, events, waits and sticky errors, and two pretend kernels: fake_copy and fake_fail). They check the
// runtime's ordering, caching, staging and error paths. They are not GPU results: no real kernel runs here;
// tools/gpu_check.sh runs the runtime on a real driver ("[gpu]").
#include <catch2/catch.hpp>

#ifdef JITX_HAS_CUDA
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_platform.h"
#include "backends/cuda/cuda_runtime.h"
#include "backends/cuda/gpu_emulator.h"
#include "cuda_executor_cases.h"
#include "cuda_test_util.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/cuda.h"
#include "jitx/jitx.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"

using namespace jitx;
using Catch::Contains;
using detail::Literal;
using Arrays = std::vector<std::shared_ptr<cuda::GpuArray>>;
using jitx::testing::check_close;
using jitx::testing::check_dots_on;
using jitx::testing::check_executor_on;
using jitx::testing::check_kernel_kinds_on;
using jitx::testing::check_training_step_on;

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
// The fake's counters (jitx_fake_cuda_counter in tests/fake_cuda_driver.cpp).
int64_t counter(const char* name) {
  fake();
  static auto fn = [] {
    void* h = dlopen(JITX_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<int64_t (*)(const char*)>(dlsym(h, "jitx_fake_cuda_counter")) : nullptr;
  }();
  REQUIRE(fn != nullptr);
  return fn(name);
}

Literal random_literal(DType dt, std::vector<int64_t> dims, uint32_t seed) {
  Literal l = Literal::make(dt, dims);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(-100, 100);
  bool is_float = dt == DType::float32 || dt == DType::float64 || dt == DType::bfloat16 || dt == DType::float16;
  for (int64_t i = 0; i < detail::num_elements(l.dims); ++i) l.set_f64(i, is_float ? v(rng) * 0.375 : v(rng));
  return l;
}
void check_equal(const Literal& got, const Literal& want) {
  REQUIRE(got.dtype == want.dtype);
  REQUIRE(got.dims == want.dims);
  int64_t bad = 0;
  for (int64_t i = 0; i < detail::num_elements(want.dims); ++i) bad += got.get_f64(i) != want.get_f64(i);
  CHECK(bad == 0);
}

// Copies (and the fake kernels) take this long on the fake's streams while the scope lives.
struct Delay {
  explicit Delay(int ms) { setenv("JITX_FAKE_CUDA_DELAY_MS", std::to_string(ms).c_str(), 1); }
  ~Delay() { unsetenv("JITX_FAKE_CUDA_DELAY_MS"); }
};

// A kernel the fake pretends to run: "fake_copy" copies its operand into its output, "fake_fail" fails on the stream.
cuda::GpuKernel fake_kernel(const std::string& name) {
  cuda::GpuKernel k;
  k.name = name;
  k.instruction = name + ".1";
  k.ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry " + name +
          "(.param .u64 p0, .param .u64 p1)\n{\n  ret;\n}\n";
  k.plan.num_outputs = 1;
  k.plan.num_operands = 1;
  return k;
}

cuda::GpuKernel add_kernel() {  // real PTX from the code generator (the fake loads it but cannot run it)
  auto m = hlo::parse_hlo(
      "HloModule m\n\nENTRY %main (a: f32[1000], b: f32[1000]) -> f32[1000] {\n  %a = f32[1000] parameter(0)\n"
      "  %b = f32[1000] parameter(1)\n  ROOT %r = f32[1000] add(%a, %b)\n}\n");
  return cuda::compile_kernel(*m->entry->find("r"), cuda::GpuTarget::sm90(), true, "jitx_kernel_add");
}
}  // namespace

TEST_CASE("cuda fake driver: the device, its primary context and streams (plumbing, not a GPU)", "[cuda_fake]") {
  int64_t live = counter("live_device");
  {
    cuda::GpuDevice dev(fake(), 0);
    CHECK(dev.name().find("fake CUDA device 0") != std::string::npos);
    CHECK(dev.compute_capability() == 90);
    CHECK_THROWS_WITH(cuda::GpuDevice(fake(), 5), Contains("cuDeviceGet") && Contains("CUDA_ERROR_INVALID_DEVICE"));
    auto a = dev.put(random_literal(DType::float32, {100}, 1));
    CHECK(counter("live_device") == live + 1);
  }
  CHECK(counter("live_device") == live);  // the device's memory went back to the driver with it
  CHECK(counter("live_pinned") == 0);
}

TEST_CASE("cuda fake driver: device_put is asynchronous, staged in pinned memory, and fetch returns the values",
          "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  int64_t pageable = counter("pageable_copies");
  uint32_t seed = 10;
  for (DType dt : {DType::float32, DType::bfloat16, DType::int8, DType::float64, DType::uint32, DType::bool_}) {
    Literal x = random_literal(dt, {3, 1000}, ++seed);
    Literal keep = random_literal(dt, {3, 1000}, seed);
    std::shared_ptr<cuda::GpuArray> a;
    {
      Delay slow(300);
      a = dev.put(x);
      CHECK_FALSE(a->is_ready());  // the copy is still queued on the transfer stream
    }
    x.set_f64(0, 1);  // the host value may change at once: put staged it already
    check_equal(dev.fetch(a), keep);
    CHECK(a->is_ready());
  }
  CHECK(counter("pageable_copies") == pageable);  // every async copy went through pinned staging
  Literal empty = Literal::make(DType::float32, {0, 4});
  CHECK(dev.fetch(dev.put(empty)).dims == std::vector<int64_t>{0, 4});
}

TEST_CASE("cuda fake driver: the caching allocator and pinned staging are reused", "[cuda_fake]") {
  int64_t allocs = counter("mem_alloc"), host_allocs = counter("mem_alloc_host");
  cuda::GpuDevice dev(fake(), 0);
  Literal x = random_literal(DType::float32, {10000}, 3);
  for (int i = 0; i < 20; ++i) check_equal(dev.fetch(dev.put(x)), x);
  CHECK(dev.allocator().raw_allocations() == 1);  // one block, handed out again each time
  CHECK(counter("mem_alloc") - allocs == 1);
  CHECK(dev.allocator().in_use_bytes() == 0);
  CHECK(counter("mem_alloc_host") - host_allocs <= 2);  // staging blocks reused too
  CHECK(dev.staging_blocks() <= 2);
  Arrays live;  // live arrays each hold their own block
  for (int i = 0; i < 5; ++i) live.push_back(dev.put(random_literal(DType::float32, {10000}, 100 + i)));
  CHECK(dev.allocator().raw_allocations() == 5);
  for (int i = 0; i < 5; ++i) check_equal(dev.fetch(live[i]), random_literal(DType::float32, {10000}, 100 + i));
}

TEST_CASE("cuda fake driver: kernels wait for their inputs' copies, and freed memory for its readers", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  cuda::GpuKernel copy = fake_kernel("fake_copy");
  std::vector<hlo::Shape> shape = {hlo::Shape(DType::float32, {4096})};
  Literal x = random_literal(DType::float32, {4096}, 5), y = random_literal(DType::float32, {4096}, 6);
  int64_t waits = counter("stream_waits");
  Delay slow(150);
  // The copy to the device is still running on the transfer stream: the kernel on the compute stream must wait
  // for its event, and the second kernel for the first one's output.
  auto a = dev.put(x);
  Arrays in = {a};
  Arrays o1 = dev.launch(copy, in, shape);
  CHECK_FALSE(o1[0]->is_ready());
  Arrays o2 = dev.launch(copy, o1, shape);
  check_equal(dev.fetch(o2[0]), x);
  check_equal(dev.fetch(o1[0]), x);
  CHECK(counter("stream_waits") > waits);
  // a is read on the compute stream: freeing it and putting y into the same block (the transfer stream's cache)
  // must wait for that read.
  Arrays o3 = dev.launch(copy, in, shape);
  int64_t blocks = dev.allocator().raw_allocations();
  in.clear();
  a.reset();
  auto b = dev.put(y);
  CHECK(dev.allocator().raw_allocations() == blocks);  // b got a's block
  check_equal(dev.fetch(o3[0]), x);
  check_equal(dev.fetch(b), y);
}

TEST_CASE("cuda fake driver: modules load once per PTX, a rejected module's JIT log is in the error", "[cuda_fake]") {
  cuda::GpuDevice dev(fake(), 0);
  cuda::GpuKernel k = add_kernel();
  auto a = dev.put(random_literal(DType::float32, {1000}, 7)), b = dev.put(random_literal(DType::float32, {1000}, 8));
  Arrays in = {a, b};
  std::vector<hlo::Shape> shape = {hlo::Shape(DType::float32, {1000})};
  // The fake loads the generated PTX but cannot run it: the launch is refused, and the outputs say so.
  Arrays o1 = dev.launch(k, in, shape);
  Arrays o2 = dev.launch(k, in, shape);
  CHECK(dev.modules_loaded() == 1);
  CHECK(dev.module_cache_hits() == 1);
  CHECK_THROWS_WITH(dev.fetch(o1[0]),
                    Contains("kernel jitx_kernel_add (%r): cuLaunchKernel") && Contains("CUDA_ERROR_NOT_SUPPORTED"));
  CHECK_THROWS_WITH(o2[0]->block_until_ready(), Contains("CUDA_ERROR_NOT_SUPPORTED"));
  cuda::GpuKernel bad = k;
  bad.ptx = "// not PTX\n.visible .entry jitx_kernel_add()\n";
  Arrays o3 = dev.launch(bad, in, shape);
  CHECK(dev.modules_loaded() == 1);
  CHECK_THROWS_WITH(dev.fetch(o3[0]), Contains("cuModuleLoadDataEx of jitx_kernel_add") &&
                                          Contains("CUDA_ERROR_INVALID_PTX") &&
                                          Contains("JIT log: ptxas fatal   : fake driver JIT: the image has no .ver"));
  cuda::GpuKernel renamed = fake_kernel("fake_copy");
  renamed.name = "fake_cop";  // a prefix of the module's entry: not found
  CHECK_THROWS_WITH(dev.fetch(dev.launch(renamed, Arrays{a}, shape)[0]),
                    Contains("cuModuleGetFunction(fake_cop)") && Contains("CUDA_ERROR_NOT_FOUND"));
  CHECK_THROWS_WITH(dev.launch(k, in, {}), Contains("expected 2 and 1"));
  check_equal(dev.fetch(a), random_literal(DType::float32, {1000}, 7));  // refused launches break nothing
}

TEST_CASE("cuda fake driver: a kernel failing on the stream reaches every reader (errors are sticky)", "[cuda_fake]") {
  Literal x = random_literal(DType::float32, {1000}, 9);
  {
    cuda::GpuDevice dev(fake(), 0);
    auto a = dev.put(x);
    check_equal(dev.fetch(a), x);
    Arrays out;
    {
      Delay slow(200);
      auto b = dev.put(x);
      out = dev.launch(fake_kernel("fake_fail"), Arrays{b}, {hlo::Shape(DType::float32, {1000})});
      CHECK_FALSE(out[0]->is_ready());  // launched behind the copy: returns before anything ran
    }
    // (Catch2 v2's combined matchers hold their parts by reference: spelled out at each use.)
#define JITX_FAILED_MSG \
  Contains("kernel fake_fail (%fake_fail.1)") && Contains("CUDA_ERROR_ILLEGAL_ADDRESS") && Contains("sticky")
    CHECK_THROWS_WITH(out[0]->block_until_ready(), JITX_FAILED_MSG);
    CHECK_THROWS_WITH(dev.fetch(out[0]), JITX_FAILED_MSG);
    CHECK_THROWS_WITH(dev.fetch(out[0]), JITX_FAILED_MSG);  // every reader, every time
#undef JITX_FAILED_MSG
    // A kernel reading the failed array: its outputs carry the error.
    auto out2 = dev.launch(fake_kernel("fake_copy"), out, {hlo::Shape(DType::float32, {1000})});
    CHECK_THROWS_WITH(dev.fetch(out2[0]), Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
    // As on a real GPU, the context is unusable afterwards: even arrays computed before fail to read, and new
    // copies fail.
    CHECK_THROWS_WITH(dev.fetch(a), Contains("device_put") && Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
    CHECK_THROWS_WITH(dev.fetch(dev.put(x)), Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
  }
  // The last release destroyed the primary context: a new device starts clean.
  cuda::GpuDevice dev(fake(), 0);
  check_equal(dev.fetch(dev.put(x)), x);
}

TEST_CASE("cuda devices of the public API: none without a driver, device_put and back on the fake", "[cuda_fake]") {
  std::string why = cuda_unavailable_reason();
  if (why.empty()) {
    WARN("skipped: this machine has a CUDA driver (the test needs its absence)");
    return;
  }
  CHECK(why.find("libcuda.so.1") != std::string::npos);
  CHECK(devices("cuda").empty());
  setenv("JITX_FAKE_CUDA_DEVICES", "2", 1);
  struct Restore {  // back to libcuda.so.1 however the test ends (the [gpu] cases ask the same registry)
    ~Restore() { cuda::use_driver_library_for_testing(""); }
  } restore;
  cuda::use_driver_library_for_testing(JITX_FAKE_CUDA_DRIVER);
  std::vector<Device> ds = devices("cuda");
  unsetenv("JITX_FAKE_CUDA_DEVICES");
  REQUIRE(ds.size() == 2);
  CHECK(ds[1].str() == "cuda:1");
  CHECK(ds[0].platform() == "cuda");
  CHECK(cuda_unavailable_reason().empty());
  std::vector<float> xv(5000);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  for (auto& v : xv) v = nd(rng);
  Array x = array(xv, {50, 100});
  std::vector<int32_t> iv = {1, -2, 3, 2147483647};
  Array i = array(iv);
  Array xc, ic;
  {
    Delay slow(200);
    xc = device_put(x, ds[0]);
    ic = device_put(i, ds[1]);
  }
  CHECK(device_of(xc) == ds[0]);
  CHECK(device_of(ic) == ds[1]);
  CHECK(xc.shape() == x.shape());
  xc.block_until_ready();
  CHECK(xc.to_vector<float>() == xv);  // read back: copied to the host
  CHECK(ic.to_vector<int32_t>() == iv);
  Array back = device_put(xc, default_device());
  CHECK(device_of(back) == default_device());
  CHECK(back.to_vector<float>() == xv);
  CHECK((back + 1.0f).to_vector<float>()[7] == xv[7] + 1.0f);
  Array moved = device_put(xc, ds[1]);
  CHECK(device_of(moved) == ds[1]);
  CHECK(moved.to_vector<float>() == xv);
  // Computations run there (the executor's test below); this fake refuses to launch the kernels (no kernel runner
  // is set), and the error reaches the reader: a clear error, not a wrong value.
  Array sum = xc + 1.0f;
  CHECK(device_of(sum) == ds[0]);
  CHECK_THROWS_WITH(sum.to_vector<float>(), Contains("cuLaunchKernel") && Contains("add"));
  CHECK_THROWS_WITH(Mesh(ds, {"x"}), Contains("cuda:0") && Contains("not supported"));
  // Without the driver, the old handle is no CUDA device of the process any more; its arrays stay readable.
  cuda::use_driver_library_for_testing("");
  CHECK(devices("cuda").empty());
  CHECK_THROWS_WITH(device_put(x, ds[0]), Contains("[device_put] cuda:0 is not a CUDA device") &&
                                              Contains("no CUDA driver") && Contains("cuda_fake_test.cpp") &&
                                              Contains("libcuda.so.1"));
  CHECK(xc.to_vector<float>() == xv);
}

namespace {
// The fake's kernel runner for the executor's tests: the kernel's own code, run on the host by the emulator
// (cuda::emulate_kernel: the kernel's LLVM IR compiled for the host, its threads as fibers) over the fake's device
// memory (host memory), on the grid it was launched with. The kernel's instruction is found from its entry and
// PTX in the cached executables. An output fusion's epilogue also reads its dots' results (scratch, after the
// operands), which cuBLASLt (the fake one) computed: each is checked against the evaluator's dot first.
std::mutex g_emulator_error_mu;
std::string g_emulator_error;  // the first kernel the emulator failed to run
int host_kernel(const char* entry, const char* ptx, const uint64_t* params, int n, unsigned grid, unsigned block,
                void*) {
  const hlo::Instruction* inst = cuda::kernel_instruction_for_testing(entry, ptx);
  if (!inst) {
    std::fprintf(stderr, "host_kernel: no cached executable has kernel %s\n", entry);
    return 1;
  }
  std::vector<hlo::Shape> outs = inst->shape.is_tuple ? inst->shape.tuple_shapes : std::vector{inst->shape};
  std::vector<const hlo::Instruction*> dots;
  if (inst->opcode == hlo::Opcode::kFusion)
    for (auto& i : inst->called.at(0)->instructions)
      if (i->opcode == hlo::Opcode::kDot) dots.push_back(i.get());
  if (static_cast<size_t>(n) != outs.size() + inst->operands.size() + dots.size()) return 2;
  hlo::Module m("host_kernel");
  auto operand = [&](size_t k) {
    const hlo::Shape& s = inst->operand(k)->shape;
    Literal l = Literal::make(s.dtype, s.dims);
    if (l.nbytes()) std::memcpy(l.data(), reinterpret_cast<const void*>(params[outs.size() + k]), l.nbytes());
    return evaluator::Value{cuda::relayout(l, hlo::minor_to_major(s), false), {}, false};
  };
  for (size_t d = 0; d < dots.size(); ++d) {
    const hlo::Instruction* dot = dots[d];
    std::vector<evaluator::Value> dargs;
    for (size_t k = 0; k < 2; ++k) dargs.push_back(operand(static_cast<size_t>(dot->operand(k)->parameter_number)));
    Literal want = evaluator::evaluate(*hlo::add_single_instruction_computation(m, *dot), dargs).array;
    Literal got = Literal::make(dot->shape.dtype, dot->shape.dims);
    std::memcpy(got.data(), reinterpret_cast<const void*>(params[outs.size() + inst->operands.size() + d]),
                got.nbytes());
    double tol = dot->shape.dtype == DType::float64 ? 1e-12 : dot->shape.dtype == DType::float32 ? 1e-5 : 1e-2;
    for (int64_t e = 0; e < detail::num_elements(want.dims); ++e)
      if (!(std::abs(got.get_f64(e) - want.get_f64(e)) <= tol * (1 + std::abs(want.get_f64(e))))) {
        std::fprintf(stderr, "host_kernel: %%%s's scratch (%%%s) element %ld: %g, the evaluator's %g\n",
                     inst->name.c_str(), dot->name.c_str(), static_cast<long>(e), got.get_f64(e), want.get_f64(e));
        return 3;
      }
  }
  std::vector<void*> ptrs;
  for (int k = 0; k < n; ++k) ptrs.push_back(reinterpret_cast<void*>(params[k]));
  try {
    cuda::emulate_kernel(*inst, config().allow_excess_precision, ptrs, grid, block);
  } catch (const std::exception& e) {  // on the fake's stream thread: kept for the test to print
    std::lock_guard<std::mutex> l(g_emulator_error_mu);
    if (g_emulator_error.empty()) g_emulator_error = fmt::format("emulating {} (%{}): {}", entry, inst->name, e.what());
    std::fprintf(stderr, "host_kernel: emulating %s (%%%s): %s\n", entry, inst->name.c_str(), e.what());
    return 4;
  }
  return 0;
}
using Runner = int (*)(const char*, const char*, const uint64_t*, int, unsigned, unsigned, void*);
void set_runner(Runner r) {
  fake();
  void* h = dlopen(JITX_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto set = reinterpret_cast<void (*)(Runner, void*)>(dlsym(h, "jitx_fake_cuda_set_kernel_runner"));
  REQUIRE(set != nullptr);
  set(r, nullptr);
}
// The executor's tests run where there is no CUDA driver (a machine with one runs them as [gpu] cases).
bool executor_fake_usable() {
  if (!cuda_unavailable_reason().empty() && cuda_unavailable_reason().find("libcuda.so.1") == std::string::npos) {
    WARN("skipped: " << cuda_unavailable_reason());
    return false;
  }
  if (cuda_unavailable_reason().empty()) {
    WARN("skipped: this machine has a CUDA driver (the [gpu] cases run the executable there)");
    return false;
  }
  return true;
}
// The fake driver with the emulating kernel runner and the cuBLASLt at `blas` for the test's scope.
struct ExecutorFake {
  explicit ExecutorFake(const char* blas) {
    cuda::use_driver_library_for_testing(JITX_FAKE_CUDA_DRIVER);
    cuda::Blas::use_library_for_testing(blas);
    set_runner(&host_kernel);
  }
  ~ExecutorFake() {
    cuda::use_driver_library_for_testing("");
    cuda::Blas::use_library_for_testing("");
    set_runner(nullptr);
  }
  ExecutorFake(const ExecutorFake&) = delete;
  ExecutorFake& operator=(const ExecutorFake&) = delete;
};
}  // namespace

TEST_CASE("cuda executable on the fake driver: jit and eager ops on CUDA arrays run there and match the cpu",
          "[cuda_fake]") {
  if (!executor_fake_usable()) return;
  ExecutorFake fake(JITX_FAKE_CUDA_DRIVER);  // its fake cuBLASLt
  std::vector<Device> ds = devices("cuda");
  REQUIRE(!ds.empty());
  int64_t launches0 = counter("launches"), matmuls0 = counter("cublaslt_matmuls"),
          epilogues0 = counter("cublaslt_epilogues");
  cuda::EmulatorStats emu0 = cuda::emulator_stats();
  check_executor_on(ds[0]);
  check_kernel_kinds_on(ds[0]);
  {
    std::map<std::string, int64_t> before = cuda::executables_stats_for_testing();
    check_training_step_on(ds[0]);
    std::map<std::string, int64_t> after = cuda::executables_stats_for_testing();
    CHECK(after["host_fallbacks"] == before["host_fallbacks"]);  // every op of the training step on the device
    CHECK(after["kernels"] - before["kernels"] >= 20);
  }
  {
    std::lock_guard<std::mutex> l(g_emulator_error_mu);
    INFO(g_emulator_error);
    CHECK(g_emulator_error.empty());
  }
  // The kernels' own code ran: loop kernels, and row kernels whose threads met at shuffles and barriers.
  cuda::EmulatorStats emu = cuda::emulator_stats();
  CHECK(emu.launches - emu0.launches == counter("launches") - launches0);
  CHECK(emu.fiber_launches > emu0.fiber_launches);
  CHECK(emu.shuffles > emu0.shuffles);
  CHECK(emu.barriers > emu0.barriers);
  CHECK(counter("launches") > launches0);                  // kernels ran on the (fake) device
  CHECK(counter("cublaslt_matmuls") - matmuls0 >= 8);      // and the dots through (the fake) cuBLASLt
  CHECK(counter("cublaslt_epilogues") - epilogues0 >= 4);  // the MLP blocks' bias, ReLU and GELU epilogues
  CHECK(cuda::executables_stats_for_testing()["cublaslt_epilogues"] >= 4);
  // Every kernel those programs compiled to (grad, loops, branches, dots' epilogues, ...) assembles with ptxas for
  // the target it was compiled for: what the fake cannot run is at least valid PTX.
  if (jitx::testing::have_ptxas()) {
    std::vector<cuda::GpuKernel> ks = cuda::kernels_for_testing();
    CHECK(ks.size() >= 20);
    for (auto& k : ks) {
      size_t t = k.ptx.find(".target ");
      REQUIRE(t != std::string::npos);
      std::string arch = k.ptx.substr(t + 8, k.ptx.find_first_of(" ,\n", t + 8) - (t + 8));
      INFO(k.name << " (%" << k.instruction << " in " << k.computation << ") for " << arch);
      CHECK(jitx::testing::ptxas_error(k.ptx, arch) == "");
    }
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  std::vector<float> xv(16 * 32);
  for (auto& e : xv) e = nd(rng);
  Array x = array(xv, {16, 32}), xc = device_put(x, ds[0]);
  const double f32 = 2e-5;
  SECTION("one launch per fused kernel, per loop iteration; asynchronous calls") {
    auto f = jit([](Array a) { return jnp::tanh(a) * 2.0f + 1.0f; });
    f(xc).block_until_ready();
    int64_t before = counter("launches");
    Array r, r2;
    {
      Delay slow(150);  // the fake's stream sleeps before each launch: the call returns before the value is there
      r = f(xc);
      r2 = f(r);  // enqueued behind it without waiting for the device
      for (const Array* a : {&r, &r2}) {
        const auto& buf = detail::concrete_buffer(*a, "test");
        buf->ready->wait();  // enqueued on the device (the event's meaning for a CUDA array) ...
        std::shared_ptr<cuda::GpuArray> g = cuda::array_of(*buf);
        REQUIRE(g != nullptr);
        CHECK_FALSE(g->is_ready());  // ... but not computed: the fake's stream sleeps before each launch
      }
    }
    r2.block_until_ready();  // waits for the device, not only for the enqueue
    {
      std::shared_ptr<cuda::GpuArray> g = cuda::array_of(*detail::concrete_buffer(r2, "test"));
      REQUIRE(g != nullptr);
      CHECK(g->is_ready());
    }
    check_close(r2, jnp::tanh(jnp::tanh(x) * 2.0f + 1.0f) * 2.0f + 1.0f, f32);
    check_close(r, jnp::tanh(x) * 2.0f + 1.0f, f32);
    CHECK(counter("launches") - before == 2);  // one loop fusion per call
    auto loop = jit([](Array a) {
      return lax::fori_loop(
          0, 6, [](Array, Array c) { return jnp::sin(c) * 0.9f; }, a);
    });
    loop(xc).block_until_ready();
    before = counter("launches");
    check_close(loop(xc), loop(x), 1e-5);
    int64_t per_call = counter("launches") - before;
    CHECK(per_call >= 6);  // the body's kernel on every iteration (and the condition's, read back each time)
    CHECK(per_call <= 30);
  }
}

TEST_CASE("cuda executable on the fake driver without cuBLASLt: every dot is a generated tiled kernel", "[cuda_fake]") {
  if (!executor_fake_usable()) return;
  ExecutorFake fake("/nonexistent/libcublasLt.so.13");
  std::vector<Device> ds = devices("cuda");
  REQUIRE(!ds.empty());
  int64_t matmuls0 = counter("cublaslt_matmuls"), launches0 = counter("launches");
  cuda::EmulatorStats emu0 = cuda::emulator_stats();
  std::map<std::string, int64_t> st0 = cuda::executables_stats_for_testing();
  check_dots_on(ds[0]);
  std::map<std::string, int64_t> st = cuda::executables_stats_for_testing();
  CHECK(st["dot_kernels"] - st0["dot_kernels"] >= 14);   // every dot of those programs (the MLP's in its fusion)
  CHECK(st["host_fallbacks"] == st0["host_fallbacks"]);  // none of them on the host
  CHECK(st["library_dots"] == st0["library_dots"]);
  {
    std::lock_guard<std::mutex> l(g_emulator_error_mu);
    INFO(g_emulator_error);
    CHECK(g_emulator_error.empty());
  }
  CHECK(counter("cublaslt_matmuls") == matmuls0);  // no library: every dot was a kernel the emulator ran
  CHECK(cuda::emulator_stats().launches - emu0.launches == counter("launches") - launches0);
  CHECK(cuda::emulator_stats().barriers > emu0.barriers);  // the tiles' barriers
}

#else
TEST_CASE("cuda fake driver: the backend is absent without the CUDA toolkit", "[cuda_fake]") {
  WARN("skipped: jitx was configured without the CUDA toolkit, so the CUDA runtime is not built");
  SUCCEED();
}
#endif
