// DLPack import and export (jitx/host.h, jitx/dlpack.h): zero copy both ways, dtypes, strides, deleters.
#include <cstdlib>
#include <cstring>

#include "jitx/host.h"
#include "test_util.h"

using namespace jitx;

namespace {

/// A producer's tensor over its own memory, as another library would hand one over: its deleter counts calls.
template <class M>
struct Producer {
  static inline int deleted = 0;
  std::vector<int64_t> shape, strides;
  void* block = nullptr;
  M* make(void* data, DLDataType dt, std::vector<int64_t> sh, std::vector<int64_t> st, uint64_t offset = 0) {
    shape = std::move(sh);
    strides = std::move(st);
    auto* t = new M{};
    t->dl_tensor.data = data;
    t->dl_tensor.device = DLDevice{kDLCPU, 0};
    t->dl_tensor.ndim = static_cast<int32_t>(shape.size());
    t->dl_tensor.dtype = dt;
    t->dl_tensor.shape = shape.data();
    t->dl_tensor.strides = strides.empty() ? nullptr : strides.data();
    t->dl_tensor.byte_offset = offset;
    t->manager_ctx = block;
    t->deleter = [](M* self) {
      ++deleted;
      std::free(self->manager_ctx);
      delete self;
    };
    return t;
  }
};

void* aligned_bytes(size_t n) { return std::aligned_alloc(64, (n + 63) / 64 * 64 + 64); }

template <class M>
void check_round_trip_all_dtypes() {
  for (int k = 0; k < kNumDTypes; ++k) {
    DType d = static_cast<DType>(k);
    INFO(dtype_name(d));
    Array x = is_bool(d)       ? testing::make({1, 0, 1, 1, 0, 0}, {2, 3}, d)
              : is_floating(d) ? testing::make(testing::uniform(6, -5, 5), {2, 3}, d)
                               : testing::make_int(testing::random_ints(6, d), {2, 3}, d);
    M* t;
    if constexpr (std::is_same_v<M, DLManagedTensor>)
      t = to_dlpack(x);
    else
      t = to_dlpack_versioned(x);
    const DLTensor& dl = t->dl_tensor;
    CHECK(dl.data == unsafe_buffer_pointer(x));
    CHECK(dl.device.device_type == kDLCPU);
    CHECK(dl.ndim == 2);
    CHECK(dl.shape[0] == 2);
    CHECK(dl.shape[1] == 3);
    REQUIRE(dl.strides != nullptr);
    CHECK(dl.strides[0] == 3);
    CHECK(dl.strides[1] == 1);
    CHECK(dl.byte_offset == 0);
    CHECK(dl.dtype.lanes == 1);
    CHECK(dl.dtype.bits == (is_bool(d) ? 8 : dtype_bits(d)));
    uint8_t code = is_bool(d)             ? kDLBool
                   : d == bfloat16        ? kDLBfloat
                   : is_floating(d)       ? kDLFloat
                   : is_signed_integer(d) ? kDLInt
                                          : kDLUInt;
    CHECK(dl.dtype.code == code);
    CHECK(from_dlpack_dtype(dl.dtype) == d);
    const void* p = dl.data;
    Array y = from_dlpack(t);  // jitx's own export comes back without a copy
    CHECK(unsafe_buffer_pointer(y) == p);
    CHECK(y.dtype() == d);
    CHECK(y.shape() == Shape{2, 3});
    CHECK(jnp::all(y == x).item<bool>());
  }
}

}  // namespace

TEST_CASE("to_dlpack and from_dlpack share memory for every dtype", "[dlpack]") {
  check_round_trip_all_dtypes<DLManagedTensor>();
  check_round_trip_all_dtypes<DLManagedTensorVersioned>();
  auto* v = to_dlpack_versioned(zeros({2}));
  CHECK(v->version.major == 1);
  CHECK((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  v->deleter(v);
}

TEST_CASE("an exported tensor keeps the memory alive until its deleter runs", "[dlpack]") {
  auto want = testing::uniform(8, -1, 1);
  DLManagedTensor* t;
  {
    Array x = jit([](Array a) { return a * 3.0; })(testing::make(want, float64));
    t = to_dlpack(x);
  }  // x is gone; the tensor still holds its buffer
  auto* p = static_cast<const double*>(t->dl_tensor.data);
  for (size_t i = 0; i < want.size(); ++i) CHECK(p[i] == want[i] * 3.0);
  t->deleter(t);
  CHECK_THROWS_AS(jit([](Array a) {
                    auto* u = to_dlpack(a);
                    u->deleter(u);
                    return a;
                  })(zeros({2})),
                  TracerError);
}

TEST_CASE("from_dlpack takes a compact aligned tensor in place, its deleter runs once, at the last reference",
          "[dlpack]") {
  using P = Producer<DLManagedTensor>;
  P::deleted = 0;
  P prod;
  auto* data = static_cast<float*>(aligned_bytes(6 * sizeof(float)));
  for (int i = 0; i < 6; ++i) data[i] = float(i) - 2.5f;
  prod.block = data;
  DLManagedTensor* t = prod.make(data, DLDataType{kDLFloat, 32, 1}, {2, 3}, {3, 1});
  {
    Array x = from_dlpack(t);
    CHECK(unsafe_buffer_pointer(x) == data);
    CHECK(P::deleted == 0);
    Array y = jit([](Array a) { return a.sum(0); })(x);
    CHECK(y.to_vector<float>() == std::vector<float>{-2.5f + 0.5f, -1.5f + 1.5f, -0.5f + 2.5f});
    Array keep = x.reshape({6});  // may share x's buffer: still counts as a reference
    x = Array();
    CHECK(keep.to_vector<float>()[5] == 2.5f);
  }
  CHECK(P::deleted == 1);

  // NULL strides mean compact row-major, and so do any strides on size-1 axes.
  auto* d2 = static_cast<int32_t*>(aligned_bytes(4 * sizeof(int32_t)));
  for (int i = 0; i < 4; ++i) d2[i] = 10 * i;
  prod.block = d2;
  {
    Array x = from_dlpack(prod.make(d2, DLDataType{kDLInt, 32, 1}, {4, 1}, {}));
    CHECK(unsafe_buffer_pointer(x) == d2);
    CHECK(x.to_vector<int32_t>() == std::vector<int32_t>{0, 10, 20, 30});
  }
  CHECK(P::deleted == 2);
  auto* d3 = static_cast<int32_t*>(aligned_bytes(4 * sizeof(int32_t)));
  for (int i = 0; i < 4; ++i) d3[i] = i;
  prod.block = d3;
  {
    Array x = from_dlpack(prod.make(d3, DLDataType{kDLInt, 32, 1}, {1, 4}, {99, 1}));
    CHECK(unsafe_buffer_pointer(x) == d3);
  }
  CHECK(P::deleted == 3);
}

TEST_CASE("from_dlpack copies strided and misaligned tensors and releases them at once", "[dlpack]") {
  using P = Producer<DLManagedTensorVersioned>;
  P::deleted = 0;
  P prod;
  // A transposed 3x2 view of a row-major 2x3 buffer: strides (1, 3).
  auto* data = static_cast<double*>(aligned_bytes(6 * sizeof(double)));
  for (int i = 0; i < 6; ++i) data[i] = i;  // [[0,1,2],[3,4,5]]
  prod.block = data;
  auto* t = prod.make(data, DLDataType{kDLFloat, 64, 1}, {3, 2}, {1, 3});
  t->version = DLPackVersion{1, 0};
  Array x = from_dlpack(t);
  CHECK(P::deleted == 1);
  CHECK(x.shape() == Shape{3, 2});
  CHECK(x.to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});

  // Reversed (negative stride) and sliced (every other element) views.
  auto* d2 = static_cast<int16_t*>(aligned_bytes(8 * sizeof(int16_t)));
  for (int i = 0; i < 8; ++i) d2[i] = static_cast<int16_t>(i * 7);
  prod.block = d2;
  auto* r = prod.make(d2 + 7, DLDataType{kDLInt, 16, 1}, {4}, {-2});
  r->version = DLPackVersion{1, 0};
  CHECK(from_dlpack(r).to_vector<int16_t>() == std::vector<int16_t>{49, 35, 21, 7});
  CHECK(P::deleted == 2);

  // A byte_offset that leaves the data 8 bytes past a 64-byte boundary: copied.
  auto* d3 = static_cast<float*>(aligned_bytes(8 * sizeof(float)));
  for (int i = 0; i < 8; ++i) d3[i] = 0.25f * float(i);
  prod.block = d3;
  auto* m = prod.make(d3, DLDataType{kDLFloat, 32, 1}, {6}, {1}, 2 * sizeof(float));
  m->version = DLPackVersion{1, 0};
  Array y = from_dlpack(m);
  CHECK(P::deleted == 3);
  CHECK(unsafe_buffer_pointer(y) != static_cast<const void*>(d3 + 2));
  CHECK(y.to_vector<float>() == std::vector<float>{0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f});

  // An empty tensor (its data may be null).
  prod.block = nullptr;
  auto* e = prod.make(nullptr, DLDataType{kDLFloat, 32, 1}, {0, 4}, {4, 1});
  e->version = DLPackVersion{1, 0};
  CHECK(from_dlpack(e).shape() == Shape{0, 4});
  CHECK(P::deleted == 4);
}

TEST_CASE("from_dlpack refuses devices, dtypes and versions it cannot read, leaving the tensor to the caller",
          "[dlpack]") {
  using P = Producer<DLManagedTensorVersioned>;
  P::deleted = 0;
  P prod;
  auto* data = aligned_bytes(64);
  prod.block = data;
  auto* t = prod.make(data, DLDataType{kDLFloat, 32, 1}, {4}, {1});
  t->version = DLPackVersion{1, 0};
  t->dl_tensor.device = DLDevice{kDLCUDA, 1};
  CHECK_THROWS_AS(from_dlpack(t), TypeError);
  CHECK_THROWS_WITH(from_dlpack(t), Catch::Contains("[from_dlpack] the tensor is on cuda (DLDeviceType 2, device 1)"));
  t->dl_tensor.device = DLDevice{kDLCPU, 0};
  t->dl_tensor.dtype = DLDataType{kDLComplex, 64, 1};
  CHECK_THROWS_AS(from_dlpack(t), TypeError);
  CHECK_THROWS_WITH(from_dlpack(t), Catch::Contains("code 5, 64 bits"));
  t->dl_tensor.dtype = DLDataType{kDLFloat, 32, 4};
  CHECK_THROWS_AS(from_dlpack(t), TypeError);
  CHECK_THROWS_WITH(from_dlpack(t), Catch::Contains("4 lanes"));
  t->dl_tensor.dtype = DLDataType{kDLFloat, 8, 1};
  CHECK_THROWS_AS(from_dlpack(t), TypeError);
  t->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  t->version = DLPackVersion{2, 0};
  CHECK_THROWS_AS(from_dlpack(t), TypeError);
  CHECK_THROWS_WITH(from_dlpack(t), Catch::Contains("version 2.0"));
  t->version = DLPackVersion{1, 3};  // a newer minor version reads
  prod.shape[0] = -1;
  CHECK_THROWS_AS(from_dlpack(t), ShapeError);
  prod.shape[0] = 4;
  CHECK(P::deleted == 0);  // every refusal left the tensor alone
  CHECK(from_dlpack(t).size() == 4);
  CHECK(P::deleted == 1);
  CHECK_THROWS_AS(from_dlpack(static_cast<DLManagedTensor*>(nullptr)), TypeError);
  CHECK_THROWS_WITH(from_dlpack(static_cast<DLManagedTensor*>(nullptr)), Catch::Contains("null DLPack tensor"));
}

TEST_CASE("a from_dlpack array given to a donating call leaves the producer's memory as it was", "[dlpack]") {
  using P = Producer<DLManagedTensor>;
  P::deleted = 0;
  P prod;
  auto* data = static_cast<float*>(aligned_bytes(32 * sizeof(float)));
  for (int i = 0; i < 32; ++i) data[i] = float(i);
  prod.block = data;
  auto f = jit([](Array a) { return a * 2.0f; }, JitOptions{}.set_donate_argnums({0}));
  {
    Array x = from_dlpack(prod.make(data, DLDataType{kDLFloat, 32, 1}, {32}, {1}));
    Array y = f(x);
    auto yv = y.to_vector<float>();
    for (int i = 0; i < 32; ++i) {
      CHECK(yv[i] == 2.0f * float(i));
      CHECK(data[i] == float(i));
    }
    CHECK(P::deleted == 0);
  }
  CHECK(P::deleted == 1);
}
