// The api walk's table, host part: host.h's zero-copy and DLPack functions (see api_walk_table.h). Their ok cases
// run eagerly; under jit the argument is a tracer, which each refuses by name.
#pragma once

namespace {

alignas(64) float g_host_buf[6] = {1, 2, 3, 4, 5, 6};

/// A DLPack tensor over g_host_buf (no deleter: the walk's buffer is static), on `dev`, of dtype `dt`.
DLManagedTensor* walk_tensor(DLDeviceType dev, DLDataType dt, std::vector<int64_t>* shape) {
  auto* t = new DLManagedTensor{};
  t->dl_tensor.data = g_host_buf;
  t->dl_tensor.device = DLDevice{dev, 0};
  t->dl_tensor.ndim = static_cast<int32_t>(shape->size());
  t->dl_tensor.dtype = dt;
  t->dl_tensor.shape = shape->data();
  t->manager_ctx = nullptr;
  t->deleter = [](DLManagedTensor* self) { delete self; };
  return t;
}
/// from_dlpack of a tensor that it must refuse (the tensor stays ours: deleted here after the call).
Array refused_dlpack(DLDeviceType dev, DLDataType dt, std::vector<int64_t> shape) {
  DLManagedTensor* t = walk_tensor(dev, dt, &shape);
  try {
    Array a = from_dlpack(t);
    return a;
  } catch (...) {
    t->deleter(t);
    throw;
  }
}

const std::vector<Case> kHost = {
    {"jitx::from_host",
     [](Walk& w) {
       w.ok("aligned f32[2,3]", {}, [](A) { return from_host(g_host_buf, {2, 3}, DType::float32, nullptr); }, {2, 3});
       w.ok("misaligned f32[5] (copied)", {}, [](A) { return from_host(g_host_buf + 1, {5}, DType::float32, nullptr); },
            {5});
       w.ok("f32[0]", {}, [](A) { return from_host(nullptr, {0}, DType::float32, nullptr); }, {0});
       w.err("null data", {}, [](A) { return from_host(nullptr, {2}, DType::float32, nullptr); });
       w.err("shape (-1, 2)", {}, [](A) { return from_host(g_host_buf, {-1, 2}, DType::float32, nullptr); });
       w.err("shape 2^62 x 2^62", {}, [](A) { return from_host(g_host_buf, {kHuge, kHuge}, DType::float32, nullptr); });
       w.err("dtype 99", {}, [](A) { return from_host(g_host_buf, {2}, static_cast<DType>(99), nullptr); });
     }},
    {"jitx::unsafe_buffer_pointer",
     [](Walk& w) {
       Fn g = [](A a) {
         if (!unsafe_buffer_pointer(a[0])) throw std::runtime_error("null buffer pointer");
         return a[0];
       };
       w.run("f32[2,3]", {f23()}, g, Expect::kOk, Shape{2, 3}, true);
       w.run("f32[2,3] (a tracer under jit)", {f23()}, g, Expect::kEither);
       w.invalid(g);
     }},
    {"jitx::host_view",
     [](Walk& w) {
       w.run(
           "f32[2,3]", {f23()}, [](A a) { return Array(host_view<float>(a[0])[0]); }, Expect::kOk, Shape{}, true);
       w.err("f64 view of f32", {f23()}, [](A a) { return Array(host_view<double>(a[0])[0]); });
       w.err("i32 view of bool", {b23()}, [](A a) { return Array(host_view<int32_t>(a[0])[0]); });
       w.invalid([](A a) { return Array(host_view<float>(a[0])[0]); });
     }},
    {"jitx::to_dlpack",
     [](Walk& w) {
       Fn g = [](A a) { return from_dlpack(to_dlpack(a[0])); };
       w.run("f32[2,3]", {f23()}, g, Expect::kOk, Shape{2, 3}, true);
       w.run("f32[0,3]", {z03()}, g, Expect::kOk, Shape{0, 3}, true);
       w.run("bool[2,3] (a tracer under jit)", {b23()}, g, Expect::kEither);
       w.invalid(g);
     }},
    {"jitx::to_dlpack_versioned",
     [](Walk& w) {
       Fn g = [](A a) { return from_dlpack(to_dlpack_versioned(a[0])); };
       w.run("i32[2,3]", {i23()}, g, Expect::kOk, Shape{2, 3}, true);
       w.run("f32[] (a tracer under jit)", {s0()}, g, Expect::kEither);
       w.invalid(g);
     }},
    {"jitx::from_dlpack",
     [](Walk& w) {
       w.run(
           "f32[2,3] on the cpu", {},
           [](A) {
             std::vector<int64_t> shape{2, 3};
             return from_dlpack(walk_tensor(kDLCPU, DLDataType{kDLFloat, 32, 1}, &shape));
           },
           Expect::kOk, Shape{2, 3}, true);
       w.err("a cuda tensor", {}, [](A) { return refused_dlpack(kDLCUDA, DLDataType{kDLFloat, 32, 1}, {2}); });
       w.err("complex64", {}, [](A) { return refused_dlpack(kDLCPU, DLDataType{kDLComplex, 64, 1}, {2}); });
       w.err("4 lanes", {}, [](A) { return refused_dlpack(kDLCPU, DLDataType{kDLFloat, 32, 4}, {2}); });
       w.err("shape (-1,)", {}, [](A) { return refused_dlpack(kDLCPU, DLDataType{kDLFloat, 32, 1}, {-1}); });
       w.err("a null tensor", {}, [](A) { return from_dlpack(static_cast<DLManagedTensor*>(nullptr)); });
       w.err("a null versioned tensor", {},
             [](A) { return from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr)); });
     }},
    {"jitx::to_dlpack_dtype",
     [](Walk& w) { w.ok("bf16", {}, [](A) { return Array(int32_t(to_dlpack_dtype(DType::bfloat16).code)); }, {}); }},
    {"jitx::from_dlpack_dtype",
     [](Walk& w) {
       w.ok("f16", {}, [](A) { return Array(int32_t(from_dlpack_dtype(DLDataType{kDLFloat, 16, 1}))); }, {});
       w.err("bool of 1 bit", {}, [](A) { return Array(int32_t(from_dlpack_dtype(DLDataType{kDLBool, 1, 1}))); });
       w.err("opaque handle", {}, [](A) {
         return Array(int32_t(from_dlpack_dtype(DLDataType{kDLOpaqueHandle, 64, 1})));
       });
     }},
};

}  // namespace
