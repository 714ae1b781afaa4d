// The CPU backend's f32 GEMM (bf16/f16 operands widened while packing): the classic Goto/BLIS structure.
//
// The rhs is packed once, up front and in parallel, into panels of kNR columns by kKC depth (zero-padded), so
// every thread reads it contiguously. The output is cut into tiles of mc x nc; threads take tiles dynamically, and
// for each depth block pack the tile's lhs rows into panels of kMR rows (in L2), then run the register-blocked
// micro-kernel (kMR x kNR accumulators) over every (rhs panel, lhs panel) pair, the rhs panel staying in L1.
// When a tile's last depth block is done, the TileFn runs on it while it is in cache: an output fusion's epilogue,
// or the rounding to bf16/f16. Outputs that are not f32 are accumulated in a per-thread strip of full-width rows,
// so no f32 copy of the whole product is ever made.
//
// Operands are read through strides, so a transposed operand costs a different packing loop, not a copy.
#include "backends/cpu/gemm.h"
#include "backends/cpu/gemm_direct.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define JITX_GEMM_AVX2 1
#if defined(__AVX512F__)
#define JITX_GEMM_AVX512 1
#endif
#elif defined(__F16C__)
#include <immintrin.h>
#endif

#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "core/literal.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu::blocked {
namespace {

#if JITX_GEMM_AVX512
constexpr int64_t kMR = 14, kNR = 32;  // micro-tile: 14 rows x 32 columns = 28 zmm accumulators (of 32 registers)
constexpr int64_t kKC = 256;           // depth block: an lhs panel (14 KiB) and an rhs panel (32 KiB) share L1
constexpr int64_t kMC = 112;           // tile rows: the packed lhs block (112 KiB) stays in L2
#else
constexpr int64_t kMR = 6, kNR = 16;  // micro-tile: 6 rows x 16 columns = 12 ymm accumulators
constexpr int64_t kKC = 256;          // depth block: an lhs panel (6 KiB) and an rhs panel (16 KiB) share L1
constexpr int64_t kMC = 96;           // tile rows: the packed lhs block (96 KiB) stays in L2
#endif
// Below this many flops a second thread costs more than it saves: a few microseconds of work (~1 MFLOP with
// AVX-512; a quarter of that with AVX2, whose cores do a quarter to half the flops per cycle: on a 2-core AMD EPYC
// (Zen 1) a 64^3 product took 16 us on one thread).
#if JITX_GEMM_AVX512
constexpr double kSerialFlops = 1 << 20;
#else
constexpr double kSerialFlops = 1 << 18;
#endif
constexpr int64_t kNC = 384;          // tile columns: the tile's product (144 KiB) is still in L2 for the epilogue
constexpr int64_t kAlign = 16;        // floats per 64-byte line

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// --- element conversion while packing -----------------------------------------------------------------------
struct F32 {
  using T = float;
  static float get(float x) { return x; }
};
struct BF16 {
  using T = uint16_t;
  static float get(uint16_t x) { return std::bit_cast<float>(static_cast<uint32_t>(x) << 16); }
};
struct F16 {
  using T = uint16_t;
#if defined(__F16C__)
  static float get(uint16_t x) { return _cvtsh_ss(x); }
#else
  static float get(uint16_t x) { return half_to_float(x); }
#endif
};

#if JITX_GEMM_AVX2
/// 8 consecutive elements widened to f32.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p, BF16) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
inline __m256 load8(const uint16_t* p, F16) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
template <class C>
__m256 load8_as(const typename C::T* p) {
  if constexpr (std::is_same_v<C, F32>) return load8(p);
  else return load8(p, C{});
}

/// v[q] becomes column q of the 8x8 block whose rows v held.
inline void transpose8(__m256* v) {
  __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
  __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  v[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  v[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  v[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  v[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  v[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  v[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  v[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  v[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/// The full-panel case of rows contiguous along depth (a row-major lhs, a transposed rhs) in 8x8 blocks: 8 depths
/// of 8 rows loaded, transposed in registers, stored as 8 groups of R floats.
/// Returns how many depths it packed (a multiple of 8).
template <class C, int64_t R>
int64_t pack_rows_8x8(const typename C::T* src, int64_t row_stride, int64_t kc, float* __restrict dst) {
  static_assert(R % 8 == 0 || R % 8 == 6, "panels are whole groups of 8 rows, or end in a group of 6");
  constexpr int64_t kGroups = (R + 7) / 8;
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8)
    // The last group first: a group of 6 spills 2 lanes into the next depth's first group, which the whole
    // groups, stored after it, then overwrite.
    for (int64_t gi = kGroups - 1; gi >= 0; --gi) {
      int64_t g = gi * 8;
      __m256 v[8];
      for (int64_t q = 0; q < 8; ++q)
        v[q] = g + q < R ? load8_as<C>(src + (g + q) * row_stride + k) : _mm256_setzero_ps();
      transpose8(v);
      for (int64_t q = 0; q < 8; ++q) {
        float* d = dst + (k + q) * R + g;
        if (R - g >= 8 || q < 7) {
          // A group of 6 rows is stored 8 wide too, its 2 extra lanes overwritten by the next depth's store
          // (masked stores are microcoded and slow on AMD); only a block's last depth stores exactly 6.
          _mm256_storeu_ps(d, v[q]);
        } else {
          _mm_storeu_ps(d, _mm256_castps256_ps128(v[q]));
          _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), _mm256_extractf128_ps(v[q], 1));
        }
      }
    }
  return k;
}
#endif

/// Packs `rows` (<= R) rows by kc of an operand, starting at src (element (r0, k0)), as kc groups of R floats
/// (dst[k*R + r]); rows past `rows` are zero.
template <class C, int64_t R>
void pack_panel(const typename C::T* src, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t kc,
                float* __restrict dst) {
  if (rows == R && row_stride == 1) {  // the R values of one depth are contiguous: a copy per depth
    for (int64_t k = 0; k < kc; ++k) {
      const typename C::T* s = src + k * depth_stride;
      float* d = dst + k * R;
      // A fixed-size memcpy is inlined as vector moves; the loop below, for f32, became a call to memmove per
      // depth (14 floats for an lhs panel): a transposed lhs made the product 9% slower.
      if constexpr (std::is_same_v<C, F32>) std::memcpy(d, s, R * sizeof(float));
      else
        for (int64_t r = 0; r < R; ++r) d[r] = C::get(s[r]);
    }
    return;
  }
  if (depth_stride == 1) {  // each row contiguous along depth: read rows in turn, write with stride R
    int64_t k0 = 0;
#if JITX_GEMM_AVX2
    if (rows == R) k0 = pack_rows_8x8<C, R>(src, row_stride, kc, dst);
    if (k0 == kc) return;
#endif
    for (int64_t r = 0; r < rows; ++r) {
      const typename C::T* s = src + r * row_stride;
      for (int64_t k = k0; k < kc; ++k) dst[k * R + r] = C::get(s[k]);
    }
  } else {
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t r = 0; r < rows; ++r) dst[k * R + r] = C::get(src[r * row_stride + k * depth_stride]);
  }
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = rows; r < R; ++r) dst[k * R + r] = 0.0f;
}

template <int64_t R>
void pack(const Operand& op, int64_t b, int64_t r0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  int64_t off = op.batch_offset(b) + r0 * op.row + k0 * op.depth;
  switch (op.dtype) {
    case DType::float32:
      pack_panel<F32, R>(static_cast<const float*>(op.data) + off, op.row, op.depth, rows, kc, dst);
      break;
    case DType::bfloat16:
      pack_panel<BF16, R>(static_cast<const uint16_t*>(op.data) + off, op.row, op.depth, rows, kc, dst);
      break;
    case DType::float16:
      pack_panel<F16, R>(static_cast<const uint16_t*>(op.data) + off, op.row, op.depth, rows, kc, dst);
      break;
    default: JITX_ASSERT(false, "gemm: operand dtype {} is not packed", dtype_name(op.dtype));
  }
}

/// Rows [r0, r0 + rows) as consecutive panels of R rows (panel q at dst + q*R*kc). An f32 operand whose rows are
/// contiguous (a transposed lhs) is copied depth by depth across all panels: one pass along each source row, where
/// panel by panel every depth's few floats came from another page (and, at a power-of-two stride, the same L1 set):
/// a transposed lhs made a 1024^3 product 9% slower than a plain one.
template <int64_t R>
void pack_block(const Operand& op, int64_t b, int64_t r0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  if (op.dtype != DType::float32 || op.row != 1 || rows <= R) {
    for (int64_t i = 0; i < rows; i += R) pack<R>(op, b, r0 + i, std::min(R, rows - i), k0, kc, dst + i * kc);
    return;
  }
  const float* src = static_cast<const float*>(op.data) + op.batch_offset(b) + r0 + k0 * op.depth;
  int64_t whole = rows / R, rest = rows % R;
  for (int64_t k = 0; k < kc; ++k) {
    const float* s = src + k * op.depth;
    float* d = dst + k * R;
    for (int64_t q = 0; q < whole; ++q) std::memcpy(d + q * R * kc, s + q * R, R * sizeof(float));
    if (rest) {
      float* e = d + whole * R * kc;
      std::memcpy(e, s + whole * R, static_cast<size_t>(rest) * sizeof(float));
      std::fill(e + rest, e + R, 0.0f);
    }
  }
}

// --- the micro-kernel: c[kMR x kNR] (+)= a panel x b panel ------------------------------------------------------
#if JITX_GEMM_AVX512
/// Rows < kMR: the first `Rows` rows of a panel only (a ragged last panel of rows).
template <int64_t Rows = kMR>
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t ldc,
                  bool accumulate) {
  __m512 acc[Rows][2];
#pragma GCC unroll 14
  for (int64_t r = 0; r < Rows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int64_t r = 0; r < Rows; ++r) {
      __m512 x = _mm512_set1_ps(a[r]);  // folds into the FMAs as an embedded broadcast
      acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
    }
    a += kMR;
    b += kNR;
  }
#pragma GCC unroll 14
  for (int64_t r = 0; r < Rows; ++r) {
    float* p = c + r * ldc;
    __m512 lo = acc[r][0], hi = acc[r][1];
    if (accumulate) {
      lo = _mm512_add_ps(lo, _mm512_loadu_ps(p));
      hi = _mm512_add_ps(hi, _mm512_loadu_ps(p + 16));
    }
    _mm512_storeu_ps(p, lo);
    _mm512_storeu_ps(p + 16, hi);
  }
}
#elif JITX_GEMM_AVX2
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t ldc,
                  bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(), c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
    __m256 x = _mm256_broadcast_ss(a);
    c00 = _mm256_fmadd_ps(x, b0, c00);
    c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(x, b0, c10);
    c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(x, b0, c20);
    c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(x, b0, c30);
    c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(x, b0, c40);
    c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(x, b0, c50);
    c51 = _mm256_fmadd_ps(x, b1, c51);
    a += kMR;
    b += kNR;
  }
  auto put = [&](float* p, __m256 lo, __m256 hi) {
    if (accumulate) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(p));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(p + 8));
    }
    _mm256_storeu_ps(p, lo);
    _mm256_storeu_ps(p + 8, hi);
  };
  put(c, c00, c01);
  put(c + ldc, c10, c11);
  put(c + 2 * ldc, c20, c21);
  put(c + 3 * ldc, c30, c31);
  put(c + 4 * ldc, c40, c41);
  put(c + 5 * ldc, c50, c51);
}
#else
// Portable: the same blocking in plain loops, which the compiler vectorises for whatever the target has.
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t ldc,
                  bool accumulate) {
  float acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int64_t r = 0; r < kMR; ++r)
      for (int64_t j = 0; j < kNR; ++j) acc[r][j] += a[r] * b[j];
    a += kMR;
    b += kNR;
  }
  for (int64_t r = 0; r < kMR; ++r)
    for (int64_t j = 0; j < kNR; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}
#endif

/// An edge micro-tile (mr < kMR or nr < kNR): the full tile into a local buffer, then its valid part; with
/// AVX-512, a panel of fewer rows but all kNR columns runs a kernel of its own height (a 512-row product's last
/// panel of 8 rows took 2% of the time as a full one).
void edge_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate, int64_t mr,
                 int64_t nr) {
#if JITX_GEMM_AVX512
  using Kernel = void (*)(int64_t, const float*, const float*, float*, int64_t, bool);
  static constexpr Kernel kRows[] = {nullptr,          micro_kernel<1>,  micro_kernel<2>,  micro_kernel<3>,
                                     micro_kernel<4>,  micro_kernel<5>,  micro_kernel<6>,  micro_kernel<7>,
                                     micro_kernel<8>,  micro_kernel<9>,  micro_kernel<10>, micro_kernel<11>,
                                     micro_kernel<12>, micro_kernel<13>};
  static_assert(std::size(kRows) == kMR);
  if (nr == kNR) return kRows[mr](kc, a, b, c, ldc, accumulate);
#endif
  alignas(64) float t[kMR * kNR];
  micro_kernel(kc, a, b, t, kNR, false);
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + t[r * kNR + j] : t[r * kNR + j];
}

// --- scratch --------------------------------------------------------------------------------------------------
/// 64-byte-aligned floats, kept per calling thread between calls (a GEMM in a loop allocates, and faults in its
/// pages, once); very large requests are not kept.
class Workspace {
 public:
  float* get(int64_t floats) {
    size_t bytes = static_cast<size_t>(round_up(std::max<int64_t>(floats, 1), kAlign)) * sizeof(float);
    if (bytes <= kept_bytes_) return kept_.get();
    std::unique_ptr<float, Free> p(static_cast<float*>(std::aligned_alloc(64, bytes)));
    if (!p) throw std::bad_alloc();
    if (bytes <= kMaxKept) {
      kept_ = std::move(p);
      kept_bytes_ = bytes;
      return kept_.get();
    }
    once_ = std::move(p);
    return once_.get();
  }
  void release_once() { once_.reset(); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  static constexpr size_t kMaxKept = size_t{256} << 20;
  std::unique_ptr<float, Free> kept_, once_;
  size_t kept_bytes_ = 0;
};

/// The run of one multiply: geometry, blocking and buffers, shared by the threads.
struct Run {
  const Problem& p;
  float* c;  // the f32 output, or null: tiles go to the threads' strips
  TileFn finish;
  int64_t mc, nc, npad, tiles_m, tiles_n;
  float* packed_b;
  float* thread_scratch;  // per worker: the packed lhs block, then the strip when c is null
  int64_t scratch_per_thread, kc_max;

  void pack_rhs_panel(int64_t index) const {
    int64_t panels = npad / kNR, kblocks = ceil_div(p.k, kKC);
    int64_t b = index / (kblocks * panels), kb = index / panels % kblocks, jp = index % panels;
    int64_t k0 = kb * kKC, kc = std::min(kKC, p.k - k0), j0 = jp * kNR;
    pack<kNR>(p.b, b, j0, std::min(kNR, p.n - j0), k0, kc, packed_b + b * p.k * npad + k0 * npad + j0 * kc);
  }

  void tile(int64_t t, int worker) const {
    int64_t b = t / (tiles_m * tiles_n), ib = t / tiles_n % tiles_m, jb = t % tiles_n;
    int64_t i0 = ib * mc, i1 = std::min(p.m, i0 + mc), j0 = jb * nc, j1 = std::min(p.n, j0 + nc);
    float* pack_a = thread_scratch + worker * scratch_per_thread;
    int64_t row0 = b * p.m + i0;  // the tile's first row in the [batch*m, n] product
    // cbase: element (i, j) of the tile at cbase[(i - i0)*n + j]. A strip is placed so that the product's base
    // (cbase moved back by row0 rows) is 64-byte aligned, as emitted kernels assume of every pointer.
    float* cbase = c ? c + row0 * p.n : pack_a + round_up(mc * kc_max, kAlign) + (row0 * p.n) % kAlign;
    if (p.k == 0) {
      for (int64_t i = i0; i < i1; ++i) std::fill(cbase + (i - i0) * p.n + j0, cbase + (i - i0) * p.n + j1, 0.0f);
    }
    for (int64_t k0 = 0; k0 < p.k; k0 += kKC) {
      int64_t kc = std::min(kKC, p.k - k0);
      pack_block<kMR>(p.a, b, i0, i1 - i0, k0, kc, pack_a);
      const float* bblock = packed_b + b * p.k * npad + k0 * npad;
      for (int64_t j = j0; j < j1; j += kNR) {
        const float* bp = bblock + j * kc;
        int64_t nr = std::min(kNR, j1 - j);
        for (int64_t i = i0; i < i1; i += kMR) {
          int64_t mr = std::min(kMR, i1 - i);
          float* cp = cbase + (i - i0) * p.n + j;
          if (mr == kMR && nr == kNR) micro_kernel(kc, pack_a + (i - i0) * kc, bp, cp, p.n, k0 > 0);
          else edge_kernel(kc, pack_a + (i - i0) * kc, bp, cp, p.n, k0 > 0, mr, nr);
        }
      }
    }
    if (finish) {
      auto product = reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(cbase) -
                                              static_cast<uintptr_t>(row0 * p.n) * sizeof(float));
      finish(product, b, i0, i1, j0, j1);
    }
  }
};

/// Splits n into parts of at most `block` (a multiple of `unit`), evenly: 100 rows by 96 -> 2 x 54, not 96 + 4.
int64_t even_block(int64_t n, int64_t block, int64_t unit) {
  int64_t parts = ceil_div(std::max<int64_t>(n, 1), block);
  return std::min(block, round_up(ceil_div(std::max<int64_t>(n, 1), parts), unit));
}

thread_local Workspace t_workspace;

}  // namespace

void multiply(const Problem& p, float* c, TileFn finish) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;  // an empty product (its output may have no buffer at all)
  JITX_ASSERT(c || finish, "gemm: a product without an output buffer needs a tile function");
  double flops = 2.0 * static_cast<double>(p.batch) * static_cast<double>(p.m) * static_cast<double>(p.n) *
                 static_cast<double>(std::max<int64_t>(p.k, 1));
  int64_t threads = flops < kSerialFlops ? 1 : pool_threads();
  if (direct_ok(p)) return multiply_direct(p, c ? c : t_workspace.get(p.batch * p.m * p.n), finish, threads);
  int64_t mc = even_block(p.m, kMC, kMR), nc = even_block(p.n, kNC, kNR);
  auto tiles = [&] { return p.batch * ceil_div(p.m, mc) * ceil_div(p.n, nc); };
  // Enough tiles that threads taking them dynamically end together (a quarter of a tile each, at worst).
  while (threads > 1 && tiles() < 4 * threads && (nc > 4 * kNR || mc > 4 * kMR)) {
    if (nc > 4 * kNR) nc = round_up(nc / 2, kNR);
    else mc = round_up(mc / 2, kMR);
  }
  int64_t kc_max = std::min(kKC, std::max<int64_t>(p.k, 1));
  int64_t npad = round_up(p.n, kNR);
  int64_t packed_b_size = round_up(p.batch * p.k * npad, kAlign);
  int64_t per_thread = round_up(mc * kc_max, kAlign) + (c ? 0 : round_up(mc * p.n, kAlign) + kAlign);
  int64_t workers = std::min(threads, tiles());
  float* ws = t_workspace.get(packed_b_size + workers * per_thread);
  Run run{p, c, finish, mc, nc, npad, ceil_div(p.m, mc), ceil_div(p.n, nc), ws, ws + packed_b_size, per_thread, kc_max};

  int64_t panels = p.batch * ceil_div(p.k, kKC) * (npad / kNR);
  if (threads <= 1 || panels < 2) {
    for (int64_t i = 0; i < panels; ++i) run.pack_rhs_panel(i);
  } else {
    parallel_for(threads, [&](int64_t w) {
      for (int64_t i = panels * w / threads, e = panels * (w + 1) / threads; i < e; ++i) run.pack_rhs_panel(i);
    });
  }
  int64_t n_tiles = tiles();
  if (workers <= 1) {
    for (int64_t t = 0; t < n_tiles; ++t) run.tile(t, 0);
  } else {
    std::atomic<int64_t> next{0};
    parallel_for(workers, [&](int64_t w) {
      for (int64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < n_tiles;) run.tile(t, static_cast<int>(w));
    });
  }
  t_workspace.release_once();
}

// --- dot_general as a Problem -----------------------------------------------------------------------------------
namespace {
using Ints = std::vector<int64_t>;

Ints strides_of(const hlo::Shape& s) {
  Ints st(s.dims.size());
  int64_t acc = 1;
  for (auto d : hlo::minor_to_major(s)) {
    st[static_cast<size_t>(d)] = acc;
    acc *= s.dims[static_cast<size_t>(d)];
  }
  return st;
}

/// The one stride that walks `which` (row-major in the listed order) through memory, or nullopt when there is none.
std::optional<int64_t> collapse(const Ints& dims, const Ints& strides, const Ints& which) {
  std::optional<int64_t> stride;
  int64_t need = 0;
  for (auto it = which.rbegin(); it != which.rend(); ++it) {
    auto d = static_cast<size_t>(*it);
    if (dims[d] == 1) continue;
    if (stride && strides[d] != need) return std::nullopt;
    if (!stride) stride = strides[d];
    need = strides[d] * dims[d];
  }
  return stride.value_or(0);
}

Ints free_dims(size_t rank, const Ints& contracting, const Ints& batch) {
  Ints f;
  for (int64_t i = 0; i < static_cast<int64_t>(rank); ++i)
    if (std::find(contracting.begin(), contracting.end(), i) == contracting.end() &&
        std::find(batch.begin(), batch.end(), i) == batch.end())
      f.push_back(i);
  return f;
}

int64_t product(const Ints& dims, const Ints& which) {
  int64_t p = 1;
  for (auto w : which) p *= dims[static_cast<size_t>(w)];
  return p;
}

float load_f32(const void* data, DType d, int64_t i) {
  switch (d) {
    case DType::float32: return static_cast<const float*>(data)[i];
    case DType::bfloat16: return BF16::get(static_cast<const uint16_t*>(data)[i]);
    default: return F16::get(static_cast<const uint16_t*>(data)[i]);
  }
}

/// The operand as [batch, rows, depth] f32, compact: for dimension groups no single stride can walk.
void gather(const void* data, const hlo::Shape& s, const Ints& order, std::vector<float>& out) {
  Ints st = strides_of(s), dims, strides;  // dims and strides in the copy's order
  for (auto o : order) {
    dims.push_back(s.dims[static_cast<size_t>(o)]);
    strides.push_back(st[static_cast<size_t>(o)]);
  }
  size_t n = static_cast<size_t>(s.num_elements());
  if (out.size() < n) out.resize(n);
  if (n == 0) return;
  // The last dim in a tight loop (a unit stride copies straight), the others counted.
  int64_t inner = dims.back(), inner_stride = strides.back();
  dims.back() = 1;
  detail::IndexCounter idx(dims);
  for (size_t e = 0; e < n; e += static_cast<size_t>(inner), idx.next()) {
    int64_t base = detail::linear_index(idx.idx, strides);
    float* o = out.data() + e;
    if (s.dtype == DType::float32) {
      const float* src = static_cast<const float*>(data) + base;
      if (inner_stride == 1) std::memcpy(o, src, static_cast<size_t>(inner) * sizeof(float));
      else for (int64_t j = 0; j < inner; ++j) o[j] = src[j * inner_stride];
    } else {
      for (int64_t j = 0; j < inner; ++j) o[j] = load_f32(data, s.dtype, base + j * inner_stride);
    }
  }
}

/// Copies' buffers, kept per thread between calls: a fresh vector per dot faulted in new pages every call (a
/// fifth of a transformer training step's time went to the kernel clearing them).
thread_local std::vector<std::vector<float>> t_copy_pool;
std::vector<float> take_copy_buffer() {
  if (t_copy_pool.empty()) return {};
  std::vector<float> v = std::move(t_copy_pool.back());
  t_copy_pool.pop_back();
  return v;
}
void give_copy_buffer(std::vector<float>&& v) {
  constexpr size_t kMaxPooled = 4, kMaxFloats = size_t{1} << 26;  // 256 MiB each at most
  if (v.capacity() > 0 && v.capacity() <= kMaxFloats && t_copy_pool.size() < kMaxPooled)
    t_copy_pool.push_back(std::move(v));
}

/// batch's dims as two strides (outer group, inner group, each walked by one stride): {outer, inner, inner count}.
std::optional<std::array<int64_t, 3>> split_batch(const Ints& dims, const Ints& strides, const Ints& batch) {
  for (size_t cut = 1; cut < batch.size(); ++cut) {
    Ints outer(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(cut));
    Ints inner(batch.begin() + static_cast<std::ptrdiff_t>(cut), batch.end());
    auto so = collapse(dims, strides, outer), si = collapse(dims, strides, inner);
    if (so && si) return std::array<int64_t, 3>{*so, *si, product(dims, inner)};
  }
  return std::nullopt;
}

bool row_major(const hlo::Shape& s) {
  auto m2m = hlo::minor_to_major(s);
  for (size_t k = 0; k < m2m.size(); ++k)
    if (m2m[k] != static_cast<int64_t>(m2m.size() - 1 - k)) return false;
  return true;
}
}  // namespace

bool handles(const hlo::Instruction& dot) {
  DType d = dot.shape.dtype;
  return (d == DType::float32 || d == DType::bfloat16 || d == DType::float16) && dot.operand(0)->shape.dtype == d &&
         dot.operand(1)->shape.dtype == d && row_major(dot.shape);
}

DotProblem::~DotProblem() {
  give_copy_buffer(std::move(lhs_copy));
  give_copy_buffer(std::move(rhs_copy));
}

namespace {
/// The dot's problem over lhs and rhs; an operand that no strides walk is gathered into a compact f32 copy, or,
/// without `may_gather` (planning, no data yet), marked in `viewed` as not viewable.
DotProblem make_problem(const hlo::Instruction& dot, const void* lhs, const void* rhs, bool may_gather,
                        bool viewed[2]) {
  auto dn = hlo::DotDimensionNumbers::of(dot);
  const Ints &lc = dn.lhs_contracting_dims, &rc = dn.rhs_contracting_dims;
  const Ints &lb = dn.lhs_batch_dims, &rb = dn.rhs_batch_dims;
  const hlo::Shape& ls = dot.operand(0)->shape;
  const hlo::Shape& rs = dot.operand(1)->shape;
  Ints lf = free_dims(ls.dims.size(), lc, lb), rf = free_dims(rs.dims.size(), rc, rb);
  DotProblem dp;
  Problem& p = dp.problem;
  p.batch = product(ls.dims, lb);
  p.m = product(ls.dims, lf);
  p.n = product(rs.dims, rf);
  p.k = product(ls.dims, lc);
  // Each operand as (batch, rows, depth) strides; a group that no stride walks makes a compact f32 copy.
  auto view = [&](const void* data, const hlo::Shape& s, const Ints& batch, const Ints& rows, const Ints& depth,
                  int64_t nrows, std::vector<float>& copy, bool& ok) {
    Ints st = strides_of(s);
    auto sb = collapse(s.dims, st, batch), sr = collapse(s.dims, st, rows), sd = collapse(s.dims, st, depth);
    ok = true;
    if (sb && sr && sd) return Operand{data, s.dtype, *sb, *sr, *sd};
    if (sr && sd)
      if (auto two = split_batch(s.dims, st, batch))
        return Operand{data, s.dtype, (*two)[0], *sr, *sd, (*two)[1], (*two)[2]};
    ok = false;
    if (!may_gather) return Operand{};
    copy = take_copy_buffer();
    Ints order = batch;
    order.insert(order.end(), rows.begin(), rows.end());
    order.insert(order.end(), depth.begin(), depth.end());
    gather(data, s, order, copy);
    return Operand{copy.data(), DType::float32, nrows * p.k, p.k, 1};
  };
  p.a = view(lhs, ls, lb, lf, lc, p.m, dp.lhs_copy, viewed[0]);
  p.b = view(rhs, rs, rb, rf, rc, p.n, dp.rhs_copy, viewed[1]);
  return dp;
}
}  // namespace

std::optional<DotProblem> dot_problem(const hlo::Instruction& dot, const void* lhs, const void* rhs) {
  if (!handles(dot)) return std::nullopt;
  bool viewed[2];
  return make_problem(dot, lhs, rhs, true, viewed);
}

std::shared_ptr<const DotPlan> plan_dot(const hlo::Instruction& dot) {
  if (!handles(dot)) return nullptr;
  auto plan = std::make_shared<DotPlan>();
  bool viewed[2];
  plan->problem = make_problem(dot, nullptr, nullptr, false, viewed).problem;
  plan->views = viewed[0] && viewed[1];
  return plan;
}

std::optional<DotProblem> dot_problem(const hlo::Instruction& dot, const DotPlan* plan, const void* lhs,
                                      const void* rhs) {
  if (!plan || !plan->views) return dot_problem(dot, lhs, rhs);
  DotProblem dp;
  dp.problem = plan->problem;
  dp.problem.a.data = lhs;
  dp.problem.b.data = rhs;
  return dp;
}

}  // namespace jitx::cpu::blocked
