// Host memory without a copy (jitx/host.h): from_host, a moved-in vector, host_view; lifetimes and donation.
#include <cstdlib>
#include <cstring>

#include "jitx/host.h"
#include "test_util.h"

using namespace jitx;

namespace {

/// A 64-byte aligned block of n elements of T whose deleter counts its calls and checks the pointer it gets.
struct Counted {
  int calls = 0;
  void* expected = nullptr;
  bool wrong_pointer = false;
  std::function<void(void*)> deleter() {
    return [this](void* p) {
      ++calls;
      wrong_pointer = wrong_pointer || p != expected;
      std::free(p);
    };
  }
};

template <class T>
T* aligned_block(size_t n) {
  size_t bytes = (n * sizeof(T) + 63) / 64 * 64 + 64;
  return static_cast<T*>(std::aligned_alloc(64, bytes));
}

/// Counts deallocations; memory is 64-byte aligned, so a vector of it moves into jitx without a copy.
struct AllocStats {
  int allocs = 0, frees = 0;
};
template <class T>
struct CountingAlloc {
  using value_type = T;
  AllocStats* stats;
  explicit CountingAlloc(AllocStats* s) : stats(s) {}
  template <class U>
  CountingAlloc(const CountingAlloc<U>& o) : stats(o.stats) {}  // NOLINT
  T* allocate(size_t n) {
    ++stats->allocs;
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) {
    ++stats->frees;
    ::operator delete (p, std::align_val_t{64});
  }
  template <class U>
  bool operator==(const CountingAlloc<U>& o) const {
    return stats == o.stats;
  }
};

}  // namespace

TEST_CASE("from_host wraps aligned memory without a copy, the deleter runs once, when the last reference goes",
          "[zero_copy]") {
  const size_t n = 6;
  float* p = aligned_block<float>(n);
  auto vals = testing::uniform(n, -3, 3);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(vals[i]);
  Counted c;
  c.expected = p;
  {
    Array x = from_host(p, {2, 3}, float32, c.deleter());
    CHECK(unsafe_buffer_pointer(x) == p);
    CHECK(x.shape() == Shape{2, 3});
    CHECK(x.dtype() == float32);
    Array y = jit([](Array a) { return a * 2.0f + 1.0f; })(x);
    Array z = x.sum(1);
    auto yv = y.to_vector<float>(), zv = z.to_vector<float>();
    for (size_t i = 0; i < n; ++i) CHECK(yv[i] == p[i] * 2.0f + 1.0f);
    CHECK(zv[0] == Approx(p[0] + p[1] + p[2]));
    Array alias = x;  // another reference to the same buffer
    x = Array();
    CHECK(c.calls == 0);
    CHECK(alias.to_vector<float>()[4] == p[4]);
  }
  CHECK(c.calls == 1);
  CHECK_FALSE(c.wrong_pointer);
}

TEST_CASE("from_host copies memory that is not 64-byte aligned and releases it at once", "[zero_copy]") {
  float* block = aligned_block<float>(8);
  float* p = block + 1;  // 4 bytes past a 64-byte boundary
  for (int i = 0; i < 4; ++i) p[i] = 1.5f * float(i) - 2.0f;
  std::vector<float> want(p, p + 4);
  int calls = 0;
  Array x = from_host(p, {4}, float32, [&](void* q) {
    ++calls;
    CHECK(q == p);
    std::free(block);
  });
  CHECK(calls == 1);  // copied: the memory was released before from_host returned
  CHECK(unsafe_buffer_pointer(x) != static_cast<const void*>(p));
  CHECK(x.to_vector<float>() == want);
  CHECK(reinterpret_cast<uintptr_t>(unsafe_buffer_pointer(x)) % kHostAlignment == 0);
}

TEST_CASE("from_host takes every dtype in place", "[zero_copy]") {
  for (int k = 0; k < kNumDTypes; ++k) {
    DType d = static_cast<DType>(k);
    INFO(dtype_name(d));
    const int64_t n = 5;
    size_t es = dtype_size(d);
    auto* p = aligned_block<unsigned char>(n * es);
    // Values: the bytes of a reference array of this dtype (0/1 for bool, any bits for integers, rounded floats).
    Array ref = is_bool(d)       ? testing::make({1, 0, 0, 1, 1}, d)
                : is_floating(d) ? testing::make(testing::uniform(n, -4, 4), d)
                                 : testing::make_int(testing::random_ints(n, d), d);
    std::memcpy(p, unsafe_buffer_pointer(ref), n * es);
    int calls = 0;
    {
      Array x = from_host(p, {n}, d, [&](void* q) {
        ++calls;
        std::free(q);
      });
      CHECK(unsafe_buffer_pointer(x) == p);
      CHECK(x.dtype() == d);
      CHECK(jnp::all(x == ref).item<bool>());
      CHECK(jnp::all(jit([](Array a) { return a * a; })(x) == ref * ref).item<bool>());
    }
    CHECK(calls == 1);
  }
}

TEST_CASE("from_host: a borrowed pointer, bad input, empty arrays", "[zero_copy]") {
  alignas(64) static double buf[4] = {1.0, -2.0, 3.5, 0.25};
  Array x = from_host(buf, {2, 2}, float64, nullptr);  // no deleter: the caller keeps buf alive
  CHECK(unsafe_buffer_pointer(x) == buf);
  CHECK(x.to_vector<double>() == std::vector<double>{1.0, -2.0, 3.5, 0.25});
  CHECK_THROWS_AS(from_host(nullptr, {2}, float32, nullptr), TypeError);
  CHECK_THROWS_WITH(from_host(nullptr, {2}, float32, nullptr), Catch::Contains("[from_host] got a null data pointer"));
  CHECK_THROWS_AS(from_host(buf, {-1, 2}, float32, nullptr), ShapeError);
  CHECK_THROWS_WITH(from_host(buf, {-1, 2}, float32, nullptr), Catch::Contains("from_host"));
  int calls = 0;
  Array e = from_host(nullptr, {0, 3}, float32, [&](void*) { ++calls; });
  CHECK(e.shape() == Shape{0, 3});
  CHECK(calls == 1);
}

TEST_CASE("donating a from_host array never writes or frees the user's memory early", "[zero_copy]") {
  const size_t n = 64;
  float* p = aligned_block<float>(n);
  for (size_t i = 0; i < n; ++i) p[i] = float(i);
  Counted c;
  c.expected = p;
  auto f = jit([](Array a) { return a + 1.0f; }, JitOptions{}.set_donate_argnums({0}));
  {
    Array x = from_host(p, {int64_t(n)}, float32, c.deleter());
    Array y = f(x);
    auto yv = y.to_vector<float>();
    for (size_t i = 0; i < n; ++i) CHECK(yv[i] == float(i) + 1.0f);
    for (size_t i = 0; i < n; ++i) CHECK(p[i] == float(i));  // computed into fresh memory
    CHECK(unsafe_buffer_pointer(y) != static_cast<const void*>(p));
    CHECK_THROWS_AS(x.to_vector<float>(), RuntimeError);  // donated: unusable
    CHECK(c.calls == 0);                                  // x still refers to the buffer
  }
  CHECK(c.calls == 1);
  CHECK_FALSE(c.wrong_pointer);
}

TEST_CASE("a vector moved into jitx::array becomes its memory when aligned", "[zero_copy]") {
  HostVector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * float(i);
  const float* p = v.data();
  Array x = array(std::move(v), {3, 4});
  CHECK(unsafe_buffer_pointer(x) == p);
  CHECK(x.shape() == Shape{3, 4});
  CHECK(x.to_vector<float>()[11] == 5.5f);

  // A plain std::vector: in place when its allocation happens to be aligned, copied otherwise; right either way.
  std::vector<int32_t> w = {1, 2, 3, 4, 5, 6};
  const int32_t* q = w.data();
  bool aligned = reinterpret_cast<uintptr_t>(q) % kHostAlignment == 0;
  Array y = array(std::move(w), {2, 3});
  CHECK((unsafe_buffer_pointer(y) == q) == aligned);
  CHECK(y.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  CHECK(y.dtype() == int32);

  // The count must fill the shape; vector<bool> is copied (it is packed).
  HostVector<float> bad(5);
  CHECK_THROWS_AS(array(std::move(bad), {2, 3}), ShapeError);
  std::vector<bool> b = {true, false, true};
  CHECK(array(std::move(b), {3}).to_vector<bool>() == std::vector<bool>{true, false, true});
}

TEST_CASE("a moved-in vector lives until the last array over it goes, donation may reuse it", "[zero_copy]") {
  AllocStats st;
  {
    std::vector<float, CountingAlloc<float>> v(256, 1.0f, CountingAlloc<float>(&st));
    const float* p = v.data();
    Array x = array(std::move(v), {16, 16});
    CHECK(unsafe_buffer_pointer(x) == p);
    auto f = jit([](Array a) { return a * 3.0f; }, JitOptions{}.set_donate_argnums({0}));
    Array y = f(x);
    CHECK(y.to_vector<float>() == std::vector<float>(256, 3.0f));
    CHECK(st.frees == 0);  // x (donated, but not yet dropped) still refers to the vector
    x = Array();
    // The cpu backend writes y into the vector's memory when nothing else holds it (then y keeps it alive); the
    // interpreter computes into fresh memory (then the vector went with x).
    bool in_place = unsafe_buffer_pointer(y) == p;
    if (default_platform() == "cpu") CHECK(in_place);
    CHECK(st.frees == (in_place ? 0 : 1));
  }
  CHECK(st.allocs == 1);
  CHECK(st.frees == 1);
}

TEST_CASE("host_view reads a ready array in place and keeps its memory alive", "[zero_copy]") {
  Array x = jit([](Array a) { return jnp::exp(a); })(testing::make(testing::uniform(10, -1, 1), {2, 5}, float32));
  auto want = x.to_vector<float>();
  HostView<float> v = host_view<float>(x);
  CHECK(v.data() == unsafe_buffer_pointer(x));
  CHECK(v.size() == 10);
  CHECK(v.shape() == Shape{2, 5});
  CHECK(std::vector<float>(v.begin(), v.end()) == want);
  x = Array();  // the view holds the buffer
  CHECK(std::vector<float>(v.span().begin(), v.span().end()) == want);
  CHECK(v[3] == want[3]);

  Array h = testing::make({1.0, -2.5, 3.0}, bfloat16);
  auto bits = host_view<uint16_t>(h);
  CHECK(bits[1] == float_to_bfloat16(-2.5f));
  auto bv = host_view<bool>(testing::make({1, 0, 1}, bool_));
  CHECK(std::vector<bool>(bv.begin(), bv.end()) == std::vector<bool>{true, false, true});
  CHECK_THROWS_AS(host_view<double>(h), TypeError);
  CHECK_THROWS_WITH(host_view<double>(h), Catch::Contains("[host_view] the array holds bf16"));
  CHECK_THROWS_AS(jit([](Array a) {
                    host_view<float>(a);
                    return a;
                  })(zeros({2})),
                  TracerError);
}

TEST_CASE("a live host_view keeps a donating call from overwriting what it shows", "[zero_copy]") {
  HostVector<float> v(64, 2.0f);
  Array x = array(std::move(v), {64});
  auto view = host_view<float>(x);
  auto f = jit([](Array a) { return a - 5.0f; }, JitOptions{}.set_donate_argnums({0}));
  Array y = f(x);
  CHECK(y.to_vector<float>() == std::vector<float>(64, -3.0f));
  CHECK(std::vector<float>(view.begin(), view.end()) == std::vector<float>(64, 2.0f));
  CHECK(unsafe_buffer_pointer(y) != static_cast<const void*>(view.data()));
}
