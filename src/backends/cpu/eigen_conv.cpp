// Convolution (HLO convolution: any dimension numbers, strides, padding, lhs/rhs dilation, feature_group_count
// or batch_group_count) as im2col + a GEMM: the blocked GEMM (gemm.h) for f32, Eigen's for f64, a plain vectorisable
// loop for integers. Patches are channel-minor when the lhs's channels are contiguous (NHWC: a window position is
// one copy of a run of channels) and window-minor otherwise (a kernel gradient, whose "channels" are the batch:
// its lhs is first copied in (batch, feature, spatial) order, so that window positions are runs too); an NHWC
// output of one group takes the product straight from the GEMM. On the 2-core Zen 1, the CNN training step's
// convolutions went from 98 to 56 ms (benchmarks' cnn_step: 136 -> 105 ms).
//
// For each group q (feature groups or batch groups; XLA never sets both), the output is
//   out[(b, spatial), f] = sum over (c, window) of patch[(b, spatial), (c, window)] * w[(c, window), f]
// where patch holds the lhs values under each window position (zero where the window reads padding or a hole of
// the lhs dilation). Output rows are processed in blocks whose patch matrix stays a few MiB (built in parallel,
// then one multi-threaded GEMM per block), and each block's product is scattered into the output's layout.
// bf16/f16 compute in f32 (rounded once on store); f64 in f64. Integers compute on unsigned words of at least 32
// bits (uint64 for 64-bit dtypes) and are truncated on store: products and sums wrap modulo 2^bits, which is the
// interpreter's two's-complement wrap-around whatever the word, since truncation commutes with + and *.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu/library.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "core/literal.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;
using Ints = std::vector<int64_t>;

template <class T>
std::vector<T> to_compute(const void* p, DType d, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      v[i] = static_cast<T>(load_int_bits(p, d, i));
      continue;
    }
    switch (d) {
      case DType::float32: v[i] = static_cast<T>(static_cast<const float*>(p)[i]); break;
      case DType::float64: v[i] = static_cast<T>(static_cast<const double*>(p)[i]); break;
      case DType::float16: v[i] = static_cast<T>(half_to_float(static_cast<const uint16_t*>(p)[i])); break;
      default: v[i] = static_cast<T>(bfloat16_to_float(static_cast<const uint16_t*>(p)[i])); break;
    }
  }
  return v;
}

template <class T>
void store(void* p, DType d, int64_t i, T v) {
  if constexpr (std::is_integral_v<T>) return store_int_bits(p, d, i, v);
  switch (d) {
    case DType::float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::float64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case DType::float16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
    default: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v)); break;
  }
}

class Convolution : public LibraryOp {
 public:
  Convolution(const Instruction& i, hlo::ConvConfig conv) : inst_(i), conv_(std::move(conv)) {}

  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    DType d = inst_.shape.dtype;
    if (d == DType::float64) run_typed<double>(ins, outs);
    else if (is_floating(d)) run_typed<float>(ins, outs);
    else if (dtype_size(d) == 8) run_typed<uint64_t>(ins, outs);
    else run_typed<uint32_t>(ins, outs);
  }

 private:
  template <class T>
  void run_typed(std::span<const void* const> ins, std::span<void* const> outs) const {
    const Ints ls = conv_.dnums.lhs_spec(), rs = conv_.dnums.rhs_spec(), os = conv_.dnums.out_spec();
    const auto &strides = conv_.window.strides, &ld = conv_.window.base_dilations, &rd = conv_.window.window_dilations;
    int64_t g = conv_.feature_group_count, bg = conv_.batch_group_count;
    const hlo::Shape &lsh = inst_.operand(0)->shape, &rsh = inst_.operand(1)->shape;
    const Ints& od = inst_.shape.dims;
    size_t nsp = ls.size() - 2;
    auto lst = detail::row_major_strides(lsh.dims), rst = detail::row_major_strides(rsh.dims),
         ost = detail::row_major_strides(od);
    int64_t o_feat = rsh.dims[rs[0]], i_feat = rsh.dims[rs[1]], out_batch = od[os[0]];
    int64_t groups = std::max(g, bg), fo = o_feat / groups;
    Ints window(nsp), out_sp(nsp), lhs_sp(nsp);
    for (size_t k = 0; k < nsp; ++k) {
      window[k] = rsh.dims[rs[2 + k]];
      out_sp[k] = od[os[2 + k]];
      lhs_sp[k] = lsh.dims[ls[2 + k]];
    }
    int64_t wn = detail::num_elements(window), spn = detail::num_elements(out_sp);
    int64_t rows = out_batch * spn, kk = i_feat * wn;
    if (detail::num_elements(od) == 0) return;

    // Operands in the compute type (a copy only for f16/bf16, or f32 data of an f64 convolution).
    std::vector<T> lbuf, rbuf;
    const T* lhs = static_cast<const T*>(ins[0]);
    const T* rhs = static_cast<const T*>(ins[1]);
    bool native = (std::is_same_v<T, float> && lsh.dtype == DType::float32) ||
                  (std::is_same_v<T, double> && lsh.dtype == DType::float64) ||
                  (std::is_integral_v<T> && !is_floating(lsh.dtype) && dtype_size(lsh.dtype) == sizeof(T));
    if (!native) {
      lbuf = to_compute<T>(ins[0], lsh.dtype, lsh.num_elements());
      rbuf = to_compute<T>(ins[1], rsh.dtype, rsh.num_elements());
      lhs = lbuf.data();
      rhs = rbuf.data();
    }
    // A kernel gradient's patches are window-minor (its "channels" are the batch, far apart), and a patch row walks
    // the lhs along its spatial dimensions: with the channels innermost (NHWC activations) every element is a line
    // of its own. So such an lhs is first copied in (batch, feature, spatial...) order, where a row's window
    // positions along the innermost spatial dimension are adjacent.
    std::vector<T> lt;
    if (nsp > 0 && lst[ls[1]] != 1 && lst[ls[1 + nsp]] != 1) {
      Ints nst(ls.size());
      int64_t acc = 1;
      for (size_t j = ls.size(); j-- > 0;) {
        nst[ls[j]] = acc;
        acc *= lsh.dims[ls[j]];
      }
      lt.resize(static_cast<size_t>(lsh.num_elements()));
      const size_t outer = ls.size() - 1;
      const int64_t inner_n = lsh.dims[ls[outer]], inner_s = lst[ls[outer]];
      Ints idx(outer, 0);
      for (int64_t pos = 0; pos < acc; pos += inner_n) {
        int64_t from = 0;
        for (size_t j = 0; j < outer; ++j) from += idx[j] * lst[ls[j]];
        for (int64_t e = 0; e < inner_n; ++e) lt[static_cast<size_t>(pos + e)] = lhs[from + e * inner_s];
        for (size_t j = outer; j-- > 0;) {  // the next position of the outer dimensions (last fastest)
          if (++idx[j] < lsh.dims[ls[j]]) break;
          idx[j] = 0;
        }
      }
      lhs = lt.data();
      lst = nst;
    }
    // Window position -> its offset in each spatial dimension, and its offset in the kernel (relative to f, c).
    std::vector<Ints> wpos(static_cast<size_t>(wn), Ints(nsp));
    Ints woff(static_cast<size_t>(wn));
    for (int64_t w = 0; w < wn; ++w) {
      int64_t rem = w, off = 0;
      for (int64_t k = static_cast<int64_t>(nsp) - 1; k >= 0; --k) {
        wpos[w][k] = rem % window[k];
        rem /= window[k];
        off += wpos[w][k] * rst[rs[2 + k]];
      }
      woff[w] = off;
    }
    // The order of a patch row's (channel, window position) pairs, the same in the weight matrix: channel-minor
    // when the lhs's channels are contiguous (NHWC: each window position copies a run of channels), window-minor
    // otherwise (a kernel gradient's "channels" are the batch, far apart; its window positions are near).
    const bool channels_minor = lst[ls[1]] == 1;
    auto kindex = [&](int64_t c, int64_t w) { return channels_minor ? w * i_feat + c : c * wn + w; };
    bool undilated = true;
    for (size_t k = 0; k < nsp; ++k) undilated = undilated && ld[k] == 1;
    // Output row `row` (batch, then spatial positions) starts at out_offset(row) and steps its features by
    // ost[os[1]]. When that is row * fo for every row with unit feature steps (one group, the output laid out
    // batch, spatial..., feature: NHWC), the product is written straight into the output.
    auto out_offset = [&](int64_t row) {
      int64_t b = row / spn, rem = row % spn, o = b * ost[os[0]];
      for (int64_t k = static_cast<int64_t>(nsp) - 1; k >= 0; --k) {
        o += rem % out_sp[k] * ost[os[2 + k]];
        rem /= out_sp[k];
      }
      return o;
    };
    constexpr bool is_float_t = std::is_same_v<T, float>, is_double_t = std::is_same_v<T, double>;
    const bool native_out = (is_float_t && inst_.shape.dtype == DType::float32) ||
                            (is_double_t && inst_.shape.dtype == DType::float64);
    bool linear_out = native_out && groups == 1 && ost[os[1]] == 1;
    {
      int64_t expect = fo;
      for (int64_t k = static_cast<int64_t>(nsp) - 1; k >= 0 && linear_out; --k) {
        linear_out = ost[os[2 + k]] == expect;
        expect *= out_sp[k];
      }
      linear_out = linear_out && ost[os[0]] == expect;
    }
    // Window-minor patches whose innermost window dimension walks the lhs contiguously (undilated, unit stride
    // after the copy above) are built a run of window positions at a time.
    const int64_t wl = nsp > 0 ? window[nsp - 1] : 1;
    const bool runs = !channels_minor && nsp > 0 && undilated && rd[nsp - 1] == 1 && lst[ls[nsp + 1]] == 1 && wl > 1;
    // Rows per block: the patch matrix at most ~4 MiB (and at least 16 rows), unless the weight matrix is so large
    // that packing it for each block's GEMM would cost more than the block's work (a kernel gradient: few rows,
    // long patches): then at least 8 rows per output feature, or all of them, up to a patch matrix of 64 MiB.
    int64_t per_row = static_cast<int64_t>(sizeof(T)) * std::max<int64_t>(1, kk);
    int64_t block = std::max<int64_t>(16, (int64_t{4} << 20) / per_row);
    int64_t cap = std::max<int64_t>(block, (int64_t{64} << 20) / per_row);
    block = std::min({std::max(block, 8 * fo), cap, rows});
    std::vector<T> patch(static_cast<size_t>(block * kk)), wmat(static_cast<size_t>(kk * fo)),
        prod(linear_out ? 0 : static_cast<size_t>(block * fo));
    for (int64_t q = 0; q < groups; ++q) {
      // w[(c, window), f] for this group's output features.
      for (int64_t c = 0; c < i_feat; ++c)
        for (int64_t w = 0; w < wn; ++w)
          for (int64_t f = 0; f < fo; ++f)
            wmat[kindex(c, w) * fo + f] = rhs[(q * fo + f) * rst[rs[0]] + c * rst[rs[1]] + woff[w]];
      int64_t lfeat0 = g > 1 ? q * i_feat : 0, lbatch0 = bg > 1 ? q * out_batch : 0;
      for (int64_t r0 = 0; r0 < rows; r0 += block) {
        int64_t nr = std::min(block, rows - r0);
        parallel_chunks(nr, kk, [&](int64_t lo, int64_t hi) {
          Ints opos(nsp);
          std::vector<int64_t> src(static_cast<size_t>(wn));
          Ints run_lo(static_cast<size_t>(runs ? wn / wl : 0)), run_len(run_lo.size()), run_src(run_lo.size());
          for (int64_t r = lo; r < hi; ++r) {
            int64_t row = r0 + r, b = row / spn, rem = row % spn;
            for (int64_t k = static_cast<int64_t>(nsp) - 1; k >= 0; --k) {
              opos[k] = rem % out_sp[k];
              rem /= out_sp[k];
            }
            // Where each window position reads in the lhs (-1: padding or a dilation hole).
            for (int64_t w = 0; w < wn; ++w) {
              int64_t off = 0;
              for (size_t k = 0; k < nsp && off >= 0; ++k) {
                int64_t p = opos[k] * strides[k] + wpos[w][k] * rd[k] - conv_.window.padding[k].low;
                if (undilated) {  // no division on the common path
                  if (p < 0 || p >= lhs_sp[k]) off = -1;
                  else off += p * lst[ls[2 + k]];
                } else if (p < 0 || p % ld[k] != 0 || p / ld[k] >= lhs_sp[k]) {
                  off = -1;
                } else {
                  off += p / ld[k] * lst[ls[2 + k]];
                }
              }
              src[w] = off;
            }
            const T* base = lhs + (lbatch0 + b) * lst[ls[0]] + lfeat0 * lst[ls[1]];
            T* out = patch.data() + r * kk;
            if (channels_minor) {
              for (int64_t w = 0; w < wn; ++w, out += i_feat) {
                if (src[w] < 0) std::fill(out, out + i_feat, T(0));
                else std::memcpy(out, base + src[w], static_cast<size_t>(i_feat) * sizeof(T));
              }
            } else if (runs) {
              // Window positions along the innermost spatial dimension read adjacent elements: per run of them, the
              // valid ones (a contiguous part, the same for every channel) are copied, the others zeroed.
              for (int64_t j = 0; j < wn; j += wl) {
                int64_t a = j, e = j + wl;
                while (a < e && src[a] < 0) ++a;
                int64_t z = a;
                while (z < e && src[z] >= 0) ++z;
                run_lo[j / wl] = a - j, run_len[j / wl] = z - a, run_src[j / wl] = a < e ? src[a] : 0;
              }
              for (int64_t c = 0; c < i_feat; ++c, base += lst[ls[1]])
                for (int64_t j = 0; j < wn / wl; ++j, out += wl) {
                  int64_t a = run_lo[j], n = run_len[j];
                  std::fill(out, out + a, T(0));
                  std::memcpy(out + a, base + run_src[j], static_cast<size_t>(n) * sizeof(T));
                  std::fill(out + a + n, out + wl, T(0));
                }
            } else {
              for (int64_t c = 0; c < i_feat; ++c, base += lst[ls[1]], out += wn)
                for (int64_t w = 0; w < wn; ++w) out[w] = src[w] < 0 ? T(0) : base[src[w]];
            }
          }
        });
        T* dst = linear_out ? static_cast<T*>(outs[0]) + r0 * fo : prod.data();
        if constexpr (std::is_integral_v<T>) int_gemm(patch.data(), wmat.data(), dst, nr, kk, fo);
        else gemm(patch.data(), wmat.data(), dst, nr, kk, fo);
        if (linear_out) continue;
        parallel_chunks(nr, fo, [&](int64_t lo, int64_t hi) {
          for (int64_t r = lo; r < hi; ++r) {
            int64_t o = out_offset(r0 + r) + q * fo * ost[os[1]];
            const T* from = prod.data() + r * fo;
            if (native_out && ost[os[1]] == 1) {
              std::memcpy(static_cast<T*>(outs[0]) + o, from, static_cast<size_t>(fo) * sizeof(T));
              continue;
            }
            for (int64_t f = 0; f < fo; ++f) store<T>(outs[0], inst_.shape.dtype, o + f * ost[os[1]], from[f]);
          }
        });
      }
    }
  }

  const Instruction& inst_;
  hlo::ConvConfig conv_;
};
}  // namespace

std::unique_ptr<LibraryOp> make_convolution(const Instruction& conv) {
  DType d = conv.shape.dtype;
  if (d == DType::bool_ || conv.operand(0)->shape.dtype != d || conv.operand(1)->shape.dtype != d) return nullptr;
  auto c = hlo::ConvConfig::of(conv);
  if (c.feature_group_count > 1 && c.batch_group_count > 1) return nullptr;
  return std::make_unique<Convolution>(conv, std::move(c));
}

}  // namespace jitx::cpu
