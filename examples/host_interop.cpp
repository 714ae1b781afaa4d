// Data in and out without a copy: a vector moved in, user memory with a deleter, a view of a result, DLPack both
// ways. Exits non-zero when any step made a copy it should not have (CTest `example_host_interop`).
#include <jitx/jitx.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

using namespace jitx;

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    std::printf("  %-52s %s\n", what, ok ? "yes" : "NO");
    failures += !ok;
  };

  // A vector moved in becomes the array's memory (HostVector's allocations are 64-byte aligned).
  HostVector<float> v = {1, 2, 3, 4, 5, 6};
  const float* vp = v.data();
  Array x = array(std::move(v), {2, 3});
  std::cout << "x = " << x << "\n";
  check(unsafe_buffer_pointer(x) == vp, "x uses the vector's memory");

  // Memory from elsewhere, released by its deleter when the last array over it goes.
  auto* raw = static_cast<float*>(std::aligned_alloc(kHostAlignment, kHostAlignment));
  for (int i = 0; i < 6; ++i) raw[i] = 0.5f * float(i);
  Array y = from_host(raw, {2, 3}, float32, [](void* p) {
    std::printf("  (y's deleter ran)\n");
    std::free(p);
  });
  check(unsafe_buffer_pointer(y) == raw, "y uses the caller's memory");

  // A result read in place.
  Array z = jit([](const Array& a, const Array& b) { return a * b + 1.0f; })(x, y);
  HostView<float> view = host_view<float>(z);
  float total = 0;
  for (float e : view) total += e;
  std::cout << "z = " << z << "\nsum of z's values read in place: " << total << "\n";
  check(view.data() == unsafe_buffer_pointer(z), "the view reads z's buffer");

  // DLPack out and back in: the same memory throughout.
  DLManagedTensor* t = to_dlpack(z);
  const DLTensor& d = t->dl_tensor;
  std::printf("to_dlpack(z): device %d, ndim %d, shape (%lld, %lld), strides (%lld, %lld), dtype code %d bits %d\n",
              int(d.device.device_type), d.ndim, (long long)d.shape[0], (long long)d.shape[1], (long long)d.strides[0],
              (long long)d.strides[1], int(d.dtype.code), int(d.dtype.bits));
  const void* tp = d.data;
  Array back = from_dlpack(t);  // takes the tensor over: its deleter runs when `back` goes
  check(tp == unsafe_buffer_pointer(z) && unsafe_buffer_pointer(back) == tp,
        "to_dlpack and from_dlpack share z's memory");

  std::printf("dropping y, the last reference to the caller's memory:\n");
  y = Array();
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
