// The GEMM's unpacked path for small f32 products (see gemm_direct.h), compiled for the build machine's CPU as
// gemm.cpp is: AVX-512 and AVX2 register-blocked kernels that read both operands where they lie.
//
// When both operands fit in L2 together, packing them costs more than it saves (at 64^3 it was a third of the
// call): the kernel reads the rhs where it lies (its kDirectNR columns contiguous, one row per depth) and broadcasts
// the lhs's elements through their strides; masks cover a ragged last column panel, a template the ragged rows.
#include "backends/cpu/gemm_direct.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define JITX_GEMM_AVX2 1
#if defined(__AVX512F__)
#define JITX_GEMM_AVX512 1
#endif
#endif

#include "backends/cpu/parallel.h"
#include "core/errors.h"

namespace jitx::cpu::blocked {
#if JITX_GEMM_AVX2
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

#if JITX_GEMM_AVX512
using ColumnMask = __mmask16;
constexpr int64_t kDirectNR = 32;  // columns per direct kernel (two zmm vectors)
constexpr int64_t kDirectMR = 8;  // rows per direct kernel (16 accumulators of 32 registers)
constexpr bool kFullNeedsUnitDepth = true;
ColumnMask column_mask(int64_t valid) {  // lanes [0, valid) of one 16-float vector
  return static_cast<__mmask16>(valid >= 16 ? 0xFFFF : valid <= 0 ? 0 : (1u << valid) - 1);
}

// kFull: both column vectors whole and the lhs's depth contiguous (a_depth == 1), as in every square product:
// plain loads and addressing, 12% faster than the masked general form (64^3: 2.6 against 2.95 us).
template <int MR, bool kFull>
void direct_kernel(int64_t kc, const float* __restrict a, int64_t a_row, int64_t a_depth, const float* __restrict b,
                   int64_t ldb, float* __restrict c, int64_t ldc, int64_t nr) {
  ColumnMask m0 = column_mask(nr), m1 = column_mask(nr - 16);
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0, b1;
    if constexpr (kFull) {
      b0 = _mm512_loadu_ps(b + k * ldb);
      b1 = _mm512_loadu_ps(b + k * ldb + 16);
    } else {
      b0 = _mm512_maskz_loadu_ps(m0, b + k * ldb);
      b1 = _mm512_maskz_loadu_ps(m1, b + k * ldb + 16);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m512 x = _mm512_set1_ps(kFull ? a[r * a_row + k] : a[r * a_row + k * a_depth]);
      acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    if constexpr (kFull) {
      _mm512_storeu_ps(c + r * ldc, acc[r][0]);
      _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
    } else {
      _mm512_mask_storeu_ps(c + r * ldc, m0, acc[r][0]);
      _mm512_mask_storeu_ps(c + r * ldc + 16, m1, acc[r][1]);
    }
  }
}
#else
using ColumnMask = __m256i;
constexpr int64_t kDirectNR = 16;  // columns per direct kernel (two ymm vectors)
constexpr int64_t kDirectMR = 6;  // rows per direct kernel (12 accumulators of 16 registers)
constexpr bool kFullNeedsUnitDepth = false;
ColumnMask column_mask(int64_t valid) {  // lanes [0, valid) of one 8-float vector
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(valid, 0, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// As the AVX-512 kernel, 16 columns in two ymm vectors, but kFull means whole column vectors only (the lhs is read
// through its depth stride either way): masked loads (which do not fault on masked-off lanes) are slow on AMD's
// Zen, and a transposed lhs that took them for every depth ran 2-3x slower than packing (256^3: 1.11 against
// 0.45 ms on a 2-core EPYC).
template <int MR, bool kFull>
void direct_kernel(int64_t kc, const float* __restrict a, int64_t a_row, int64_t a_depth, const float* __restrict b,
                   int64_t ldb, float* __restrict c, int64_t ldc, int64_t nr) {
  ColumnMask m0 = column_mask(nr), m1 = column_mask(nr - 8);
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0, b1;
    if constexpr (kFull) {
      b0 = _mm256_loadu_ps(b + k * ldb);
      b1 = _mm256_loadu_ps(b + k * ldb + 8);
    } else {
      b0 = _mm256_maskload_ps(b + k * ldb, m0);
      b1 = _mm256_maskload_ps(b + k * ldb + 8, m1);
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      __m256 x = _mm256_broadcast_ss(a + r * a_row + k * a_depth);
      acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    if constexpr (kFull) {
      _mm256_storeu_ps(c + r * ldc, acc[r][0]);
      _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
    } else {
      _mm256_maskstore_ps(c + r * ldc, m0, acc[r][0]);
      _mm256_maskstore_ps(c + r * ldc + 8, m1, acc[r][1]);
    }
  }
}
#endif

using DirectKernel = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t,
                              int64_t);
template <bool kFull, size_t... R>
constexpr std::array<DirectKernel, sizeof...(R) + 1> direct_table(std::index_sequence<R...>) {
  return {nullptr, direct_kernel<static_cast<int>(R) + 1, kFull>...};
}
template <bool kFull>
constexpr auto kDirect = direct_table<kFull>(std::make_index_sequence<kDirectMR>());

/// Rows [i0, i1) of batch b, all columns, into out[(b*m + i)*n + j].
void direct_rows(const Problem& p, float* out, int64_t b, int64_t i0, int64_t i1) {
  const auto* a = static_cast<const float*>(p.a.data) + p.a.batch_offset(b);
  const auto* bm = static_cast<const float*>(p.b.data) + p.b.batch_offset(b);
  float* cb = out + b * p.m * p.n;
  for (int64_t j = 0; j < p.n; j += kDirectNR) {
    int64_t nr = std::min(kDirectNR, p.n - j);
    bool full = nr == kDirectNR && (!kFullNeedsUnitDepth || p.a.depth == 1);
    const DirectKernel* kernels = full ? kDirect<true>.data() : kDirect<false>.data();
    for (int64_t i = i0; i < i1; i += kDirectMR) {
      int64_t mr = std::min(kDirectMR, i1 - i);
      kernels[mr](p.k, a + i * p.a.row, p.a.row, p.a.depth, bm + j, p.b.depth, cb + i * p.n + j, p.n, nr);
    }
  }
}

}  // namespace

bool direct_ok(const Problem& p) {
  return p.a.dtype == DType::float32 && p.b.dtype == DType::float32 && p.b.row == 1 && p.k > 0 && p.k <= 1024 &&
         p.m * p.k + p.k * p.n <= (int64_t{1} << 17);
}

void multiply_direct(const Problem& p, float* out, TileFn finish, int64_t threads) {
  int64_t chunks_per_batch = std::max<int64_t>(1, std::min(ceil_div(p.m, kDirectMR), threads * 2 / p.batch));
  int64_t rows = round_up(ceil_div(p.m, chunks_per_batch), kDirectMR);
  chunks_per_batch = ceil_div(p.m, rows);
  int64_t units = p.batch * chunks_per_batch;
  auto unit = [&](int64_t u) {
    int64_t b = u / chunks_per_batch, i0 = u % chunks_per_batch * rows, i1 = std::min(p.m, i0 + rows);
    direct_rows(p, out, b, i0, i1);
    if (finish) finish(out, b, i0, i1, 0, p.n);
  };
  if (threads <= 1 || units < 2) {
    for (int64_t u = 0; u < units; ++u) unit(u);
  } else {
    std::atomic<int64_t> next{0};
    parallel_for(std::min(threads, units), [&](int64_t) {
      for (int64_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < units;) unit(u);
    });
  }
}
#else
bool direct_ok(const Problem&) { return false; }  // the portable build packs every product
void multiply_direct(const Problem&, float*, TileFn, int64_t) {
  JITX_ASSERT(false, "gemm: multiply_direct called where direct_ok is always false");
}
#endif
}  // namespace jitx::cpu::blocked
