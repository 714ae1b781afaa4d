// Library ops for data-dependent movement and windowed/variadic reductions: sort, top-k, gather, scatter,
// reduce-window and the (value, index) argmax/argmin reduce. Typed C++ loops called by the runtime, as XLA:CPU
// calls its runtime library for sort; their semantics follow the interpreter (hlo/evaluator/evaluator*.cpp),
// which is the oracle the tests compare against. Where gather and scatter windows start, and the order sort and
// top-k make, come from hlo/ir/indexing.h, which the evaluator uses too.
//
// Element access goes through three canonical domains: floats as double (rounded on store as
// Literal::set_f64 rounds), signed integers as int64, unsigned integers and bool as uint64. Sorting compares
// keys mapped to an order-preserving uint64 (floats: -0.0 == 0.0, every NaN equal and after +inf).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "backends/cpu/library.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "core/float_minmax.h"
#include "core/literal.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/indexing.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<int64_t>;

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// --- element access ---
enum class Dom { kFloat, kSigned, kUnsigned };
Dom domain(DType d) {
  if (is_floating(d)) return Dom::kFloat;
  return is_signed_integer(d) ? Dom::kSigned : Dom::kUnsigned;
}

double load_f(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::float32: return static_cast<const float*>(p)[i];
    case DType::float64: return static_cast<const double*>(p)[i];
    case DType::float16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    default: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
  }
}

// double -> float rounding to odd, so that a later rounding to f16/bf16 rounds once (as Literal::set_f64 does).
float round_odd_f32(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f) || static_cast<double>(f) == v) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) --bits;  // truncate toward zero
  bits |= 1;
  std::memcpy(&f, &bits, 4);
  return f;
}

void store_f(void* p, DType d, int64_t i, double v) {
  switch (d) {
    case DType::float32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::float64: static_cast<double*>(p)[i] = v; return;
    case DType::float16: static_cast<uint16_t*>(p)[i] = float_to_half(round_odd_f32(v)); return;
    default: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(round_odd_f32(v)); return;
  }
}

// Integers (and bool) as 64 bits: signed ones sign-extended, so int64 comparisons of the result are right.
uint64_t load_u(const void* p, DType d, int64_t i) {
  switch (dtype_size(d)) {
    case 1:
      return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int8_t*>(p)[i])
                                  : static_cast<const uint8_t*>(p)[i];
    case 2:
      return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int16_t*>(p)[i])
                                  : static_cast<const uint16_t*>(p)[i];
    case 4:
      return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int32_t*>(p)[i])
                                  : static_cast<const uint32_t*>(p)[i];
    default: return static_cast<const uint64_t*>(p)[i];
  }
}
void store_u(void* p, DType d, int64_t i, uint64_t v) {
  switch (dtype_size(d)) {
    case 1: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(d == DType::bool_ ? v != 0 : v); return;
    case 2: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case 4: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    default: static_cast<uint64_t*>(p)[i] = v; return;
  }
}

void copy_elem(void* dst, int64_t i, const void* src, int64_t j, size_t es) {
  std::memcpy(static_cast<char*>(dst) + i * es, static_cast<const char*>(src) + j * es, es);
}

// --- sort and top-k ---
class Sort : public LibraryOp {
 public:
  explicit Sort(const Instruction& i) : inst_(i), cfg_(hlo::SortConfig::of(i)) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    hlo::SortLines lines(inst_.operand(0)->shape.dims, cfg_.dimension);
    std::vector<DType> key_dtypes;
    for (int64_t k = 0; k < cfg_.num_keys; ++k) key_dtypes.push_back(inst_.operand(k)->shape.dtype);
    auto keys = ins.first(static_cast<size_t>(cfg_.num_keys));
    int64_t n = lines.n, stride = lines.stride;
    parallel_chunks(lines.count, n * 8, [&](int64_t lo, int64_t hi) {
      hlo::SortScratch scratch;
      std::vector<int64_t> perm(static_cast<size_t>(n));
      for (int64_t l = lo; l < hi; ++l) {
        int64_t base = lines.base(l);
        hlo::sort_line(keys, key_dtypes, base, stride, n, perm.data(), scratch);
        for (size_t k = 0; k < ins.size(); ++k) {
          size_t es = dtype_size(inst_.operand(k)->shape.dtype);
          for (int64_t t = 0; t < n; ++t) copy_elem(outs[k], base + t * stride, ins[k], base + perm[t] * stride, es);
        }
      }
    });
  }

 private:
  const Instruction& inst_;
  hlo::SortConfig cfg_;
};

class TopK : public LibraryOp {
 public:
  explicit TopK(const Instruction& i) : inst_(i), k_(hlo::top_k_of(i)) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    int64_t k = k_;
    const hlo::Shape& xs = inst_.operand(0)->shape;
    int64_t n = xs.dims.back(), rows = n == 0 ? 0 : xs.num_elements() / n;
    size_t es = dtype_size(xs.dtype);
    DType id = inst_.shape.tuple_shapes.at(1).dtype;
    parallel_chunks(rows, n * 8, [&](int64_t lo, int64_t hi) {
      hlo::SortScratch scratch;
      std::vector<int64_t> pos(static_cast<size_t>(k));
      for (int64_t r = lo; r < hi; ++r) {
        hlo::top_k_line(ins[0], xs.dtype, r * n, n, k, pos.data(), scratch);
        for (int64_t t = 0; t < k; ++t) {
          copy_elem(outs[0], r * k + t, ins[0], r * n + pos[t], es);
          store_u(outs[1], id, r * k + t, static_cast<uint64_t>(pos[t]));
        }
      }
    });
  }

 private:
  const Instruction& inst_;
  int64_t k_;
};

// --- gather and scatter ---
class Gather : public LibraryOp {
 public:
  explicit Gather(const Instruction& i)
      : inst_(i),
        ix_(hlo::WindowIndexing::gather(hlo::GatherDimensionNumbers::of(i), i.operand(0)->shape.dims,
                                        i.operand(1)->shape.dims, i.shape.dims)) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    const hlo::Shape& is = inst_.operand(1)->shape;
    size_t es = dtype_size(inst_.operand(0)->shape.dtype);
    const Ints& batch_dims = ix_.batch_dims;
    // The window's last axis is copied as a run when it is contiguous in both the result and the operand.
    Ints wdims = ix_.window_dims;
    bool run_copy = !wdims.empty() && ix_.window_strides.back() == 1 && ix_.window_operand_strides.back() == 1;
    int64_t run_len = run_copy ? wdims.back() : 1;
    if (run_copy) wdims.back() = 1;
    int64_t nb = detail::num_elements(batch_dims), nw = detail::num_elements(wdims);
    if (inst_.shape.num_elements() == 0) return;
    parallel_chunks(nb, nw * run_len, [&](int64_t lo, int64_t hi) {
      auto cursor = ix_.cursor();
      Ints bidx(batch_dims.size(), 0);
      for (int64_t bi = lo; bi < hi; ++bi) {
        // The batch position's multi-index (batch_dims row-major).
        for (int64_t r = bi, k = static_cast<int64_t>(batch_dims.size()) - 1; k >= 0; --k) {
          bidx[k] = r % batch_dims[k];
          r /= batch_dims[k];
        }
        int64_t out_base = 0, in_base = ix_.locate(bidx.data(), ins[1], is.dtype, out_base, cursor);
        hlo::for_each_offset(wdims, ix_.window_strides, ix_.window_operand_strides, [&](int64_t o, int64_t x) {
          std::memcpy(static_cast<char*>(outs[0]) + (out_base + o) * es,
                      static_cast<const char*>(ins[0]) + (in_base + x) * es, es * run_len);
        });
      }
    });
  }

 private:
  const Instruction& inst_;
  hlo::WindowIndexing ix_;
};

// out[o] = reducer(out[o], upd[u]), as the interpreter combines: floats in double (rounded on store), integers
// wrap, bools: add/max are or, mul/min are and.
void combine(hlo::Reducer r, void* out, int64_t o, const void* upd, int64_t u, DType d) {
  using hlo::Reducer;
  if (r == Reducer::kReplace) return copy_elem(out, o, upd, u, dtype_size(d));
  switch (domain(d)) {
    case Dom::kFloat: {
      double a = load_f(out, d, o), b = load_f(upd, d, u), v;
      if (r == Reducer::kAdd) v = a + b;
      else if (r == Reducer::kMul) v = a * b;
      else if (r == Reducer::kMax) v = detail::float_max(a, b);
      else v = detail::float_min(a, b);
      return store_f(out, d, o, v);
    }
    case Dom::kSigned: {
      uint64_t a = load_u(out, d, o), b = load_u(upd, d, u);
      int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
      uint64_t v = r == Reducer::kAdd ? a + b
                   : r == Reducer::kMul
                       ? a * b
                       : static_cast<uint64_t>(r == Reducer::kMax ? std::max(sa, sb) : std::min(sa, sb));
      return store_u(out, d, o, v);
    }
    case Dom::kUnsigned: {
      uint64_t a = load_u(out, d, o), b = load_u(upd, d, u), v;
      if (d == DType::bool_) v = (r == Reducer::kAdd || r == Reducer::kMax) ? (a | b) : (a & b);
      else
        v = r == Reducer::kAdd   ? a + b
            : r == Reducer::kMul ? a * b
            : r == Reducer::kMax ? std::max(a, b)
                                 : std::min(a, b);
      return store_u(out, d, o, v);
    }
  }
}

class Scatter : public LibraryOp {
 public:
  explicit Scatter(const Instruction& i)
      : inst_(i),
        reducer_(hlo::reducer_of(i)),
        ix_(hlo::WindowIndexing::scatter(hlo::ScatterDimensionNumbers::of(i), i.operand(0)->shape.dims,
                                         i.operand(1)->shape.dims, i.operand(2)->shape.dims)) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    const hlo::Shape &xs = inst_.operand(0)->shape, &is = inst_.operand(1)->shape, &us = inst_.operand(2)->shape;
    DType d = xs.dtype;
    if (outs[0] != ins[0]) std::memcpy(outs[0], ins[0], static_cast<size_t>(xs.byte_size()));
    if (us.num_elements() == 0) return;
    auto cursor = ix_.cursor();
    detail::IndexCounter bc(ix_.batch_dims);
    // In update order, one window after another: with duplicate indices the later update wins (replace) or
    // combines after the earlier one, as in the interpreter.
    for (int64_t bi = 0, nb = detail::num_elements(ix_.batch_dims); bi < nb; ++bi, bc.next()) {
      int64_t upd_base = 0, out_base = ix_.locate(bc.idx.data(), ins[1], is.dtype, upd_base, cursor);
      if (out_base < 0) continue;  // XLA drops a whole update window that does not fit inside the operand
      hlo::for_each_offset(ix_.window_dims, ix_.window_strides, ix_.window_operand_strides, [&](int64_t u, int64_t o) {
        combine(reducer_, outs[0], out_base + o, ins[2], upd_base + u, d);
      });
    }
  }

 private:
  const Instruction& inst_;
  hlo::Reducer reducer_;
  hlo::WindowIndexing ix_;
};

// --- reduce-window and argmax/argmin ---
struct Acc {
  double f = 0;
  uint64_t u = 0;
};

void acc_step(hlo::Reducer r, Dom dm, DType d, Acc& acc, const void* x, int64_t j) {
  using hlo::Reducer;
  if (dm == Dom::kFloat) {
    double v = load_f(x, d, j);
    if (r == Reducer::kAdd) acc.f += v;
    else if (r == Reducer::kMul) acc.f *= v;
    else if (r == Reducer::kMax) acc.f = detail::float_max(acc.f, v);
    else acc.f = detail::float_min(acc.f, v);
    return;
  }
  uint64_t v = load_u(x, d, j);
  bool sg = dm == Dom::kSigned, b = d == DType::bool_;
  if (r == Reducer::kAdd) acc.u = b ? (acc.u | v) : acc.u + v;
  else if (r == Reducer::kMul) acc.u = b ? (acc.u & v) : acc.u * v;
  else if (r == Reducer::kAnd) acc.u &= v;
  else if (r == Reducer::kOr) acc.u |= v;
  else if (r == Reducer::kMax)
    acc.u = sg ? static_cast<uint64_t>(std::max(int64_t(acc.u), int64_t(v))) : std::max(acc.u, v);
  else acc.u = sg ? static_cast<uint64_t>(std::min(int64_t(acc.u), int64_t(v))) : std::min(acc.u, v);
}

class ReduceWindow : public LibraryOp {
 public:
  ReduceWindow(const Instruction& i, hlo::Reducer r) : inst_(i), r_(r), win_(hlo::Window::of(i)) {
    // Rows: a float window reduction whose last dim is not windowed (NHWC pooling) runs a row of that dim at a
    // time, each window position one contiguous row: no per-element index arithmetic.
    const hlo::Shape& xs = i.operand(0)->shape;
    size_t rank = xs.dims.size();
    rows_ = (xs.dtype == DType::float32 || xs.dtype == DType::float64) && rank >= 2 &&
            (r == hlo::Reducer::kMax || r == hlo::Reducer::kMin || r == hlo::Reducer::kAdd) &&
            win_.dimensions.back() == 1 && win_.strides.back() == 1 && win_.padding.back().low == 0 &&
            win_.padding.back().high == 0 && i.shape.dims.back() == xs.dims.back();
    for (size_t a = 0; a < rank && rows_; ++a) rows_ = win_.base_dilations[a] == 1 && win_.window_dilations[a] == 1;
    scan_axis_ = prefix_scan_axis(xs);
  }
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    if (scan_axis_ >= 0) return run_scan(ins, outs);
    if (rows_) return run_rows(ins, outs);
    hlo::Reducer r = r_;
    const auto &wd = win_.dimensions, &ws = win_.strides, &bd = win_.base_dilations, &wdl = win_.window_dilations;
    const hlo::Shape& xs = inst_.operand(0)->shape;
    DType d = xs.dtype;
    Dom dm = domain(d);
    auto xst = detail::row_major_strides(xs.dims);
    const Ints& od = inst_.shape.dims;
    size_t rank = od.size();
    Acc init;
    if (dm == Dom::kFloat) init.f = load_f(ins[1], d, 0);
    else init.u = load_u(ins[1], d, 0);
    int64_t n = detail::num_elements(od), wn = detail::num_elements(wd);
    parallel_chunks(n, wn, [&](int64_t lo, int64_t hi) {
      Ints oi(rank);
      for (int64_t o = lo; o < hi; ++o) {
        for (int64_t rem = o, a = static_cast<int64_t>(rank) - 1; a >= 0; --a) {
          oi[a] = rem % od[a];
          rem /= od[a];
        }
        Acc acc = init;
        detail::IndexCounter wc(wd);
        for (int64_t w = 0; w < wn; ++w, wc.next()) {
          int64_t l = 0;
          bool inside = true;
          for (size_t a = 0; a < rank && inside; ++a) {
            int64_t pos = oi[a] * ws[a] + wc.idx[a] * wdl[a] - win_.padding[a].low;  // in the dilated base
            if (pos < 0 || pos % bd[a] != 0 || pos / bd[a] >= xs.dims[a]) inside = false;
            else l += pos / bd[a] * xst[a];
          }
          if (inside) acc_step(r, dm, d, acc, ins[0], l);
        }
        if (dm == Dom::kFloat) store_f(outs[0], d, o, acc.f);
        else store_u(outs[0], d, o, acc.u);
      }
    });
  }

 private:
  /// The row path (see the constructor): the same window positions in the same order as run's, accumulated in
  /// double with the same max/min, so the results are identical.
  void run_rows(std::span<const void* const> ins, std::span<void* const> outs) const {
    const hlo::Shape& xs = inst_.operand(0)->shape;
    DType d = xs.dtype;
    const Ints& od = inst_.shape.dims;
    const size_t outer_rank = od.size() - 1;
    const int64_t C = od.back();
    auto xst = detail::row_major_strides(xs.dims);
    double init = load_f(ins[1], d, 0);
    int64_t n_outer = 1, wn = detail::num_elements(win_.dimensions);
    for (size_t a = 0; a < outer_rank; ++a) n_outer *= od[a];
    hlo::Reducer r = r_;
    parallel_chunks(n_outer, wn * C, [&](int64_t lo, int64_t hi) {
      std::vector<double> acc(static_cast<size_t>(C));
      Ints first(outer_rank), ext(outer_rank);
      for (int64_t o = lo; o < hi; ++o) {
        bool empty = false;
        for (int64_t rem = o, a = static_cast<int64_t>(outer_rank) - 1; a >= 0; --a) {
          int64_t oi = rem % od[a];
          rem /= od[a];
          int64_t s = oi * win_.strides[a] - win_.padding[a].low;
          int64_t b0 = std::max<int64_t>(s, 0), b1 = std::min<int64_t>(s + win_.dimensions[a], xs.dims[a]);
          empty = empty || b1 <= b0;
          first[a] = b0;
          ext[a] = std::max<int64_t>(b1 - b0, 1);
        }
        std::fill(acc.begin(), acc.end(), init);
        if (!empty) {
          detail::IndexCounter wc(ext);
          int64_t positions = detail::num_elements(ext);
          for (int64_t w = 0; w < positions; ++w, wc.next()) {
            int64_t base = 0;
            for (size_t a = 0; a < outer_rank; ++a) base += (first[a] + wc.idx[a]) * xst[a];
            if (d == DType::float32) accumulate(r, static_cast<const float*>(ins[0]) + base, acc.data(), C);
            else accumulate(r, static_cast<const double*>(ins[0]) + base, acc.data(), C);
          }
        }
        for (int64_t c = 0; c < C; ++c) store_f(outs[0], d, o * C + c, acc[static_cast<size_t>(c)]);
      }
    });
  }
  template <class T>
  static void accumulate(hlo::Reducer r, const T* x, double* acc, int64_t n) {
    if (r == hlo::Reducer::kAdd) {
      for (int64_t c = 0; c < n; ++c) acc[c] += static_cast<double>(x[c]);
    } else if (r == hlo::Reducer::kMax) {
      for (int64_t c = 0; c < n; ++c) acc[c] = detail::float_max(acc[c], static_cast<double>(x[c]));
    } else {
      for (int64_t c = 0; c < n; ++c) acc[c] = detail::float_min(acc[c], static_cast<double>(x[c]));
    }
  }

  /// The axis of a cumulative op's window (cumsum, cummax, ...: the whole axis, padded by n - 1 before it, every
  /// other axis untouched), or -1. Output i of such a window reduces x[0..i] in order, so a running accumulator
  /// gives the same values in O(n) instead of O(n^2) (a 32k-element cumsum took 6 s). Windows padded after the
  /// axis (reverse) reduce x[i..n-1] in that order: a backward running value would add them in the other order,
  /// so only order-free reductions (max, min, and, or, integers) take that path.
  int64_t prefix_scan_axis(const hlo::Shape& xs) {
    int64_t axis = -1;
    bool reverse = false;
    for (size_t a = 0; a < xs.dims.size(); ++a) {
      if (win_.strides[a] != 1 || win_.base_dilations[a] != 1 || win_.window_dilations[a] != 1) return -1;
      const auto& pad = win_.padding[a];
      if (win_.dimensions[a] == 1 && pad.low == 0 && pad.high == 0) continue;
      int64_t n = xs.dims[a];
      if (axis >= 0 || n < 2 || win_.dimensions[a] != n) return -1;
      if (pad.low == n - 1 && pad.high == 0) reverse = false;
      else if (pad.low == 0 && pad.high == n - 1) reverse = true;
      else return -1;
      axis = static_cast<int64_t>(a);
    }
    bool order_free = domain(xs.dtype) != Dom::kFloat || r_ == hlo::Reducer::kMax || r_ == hlo::Reducer::kMin;
    scan_reverse_ = reverse;
    return axis < 0 || (reverse && !order_free) ? -1 : axis;
  }
  void run_scan(std::span<const void* const> ins, std::span<void* const> outs) const {
    const hlo::Shape& xs = inst_.operand(0)->shape;
    DType d = xs.dtype;
    Dom dm = domain(d);
    hlo::Reducer r = r_;
    auto a = static_cast<size_t>(scan_axis_);
    int64_t n = xs.dims[a], inner = 1, outer = 1;
    for (size_t k = a + 1; k < xs.dims.size(); ++k) inner *= xs.dims[k];
    for (size_t k = 0; k < a; ++k) outer *= xs.dims[k];
    Acc init;
    if (dm == Dom::kFloat) init.f = load_f(ins[1], d, 0);
    else init.u = load_u(ins[1], d, 0);
    bool rev = scan_reverse_;
    parallel_chunks(outer * inner, n, [&](int64_t lo, int64_t hi) {
      for (int64_t line = lo; line < hi; ++line) {
        int64_t base = line / inner * n * inner + line % inner;
        Acc acc = init;
        for (int64_t k = 0; k < n; ++k) {
          int64_t j = base + (rev ? n - 1 - k : k) * inner;
          acc_step(r, dm, d, acc, ins[0], j);
          if (dm == Dom::kFloat) store_f(outs[0], d, j, acc.f);
          else store_u(outs[0], d, j, acc.u);
        }
      }
    });
  }

  const Instruction& inst_;
  hlo::Reducer r_;
  hlo::Window win_;
  bool rows_ = false;
  int64_t scan_axis_ = -1;
  bool scan_reverse_ = false;
};

// reduce(x, iota, init_x, init_i), reducer=argmax|argmin: (best value, its index) per output; ties and NaNs pick
// the first, as JAX's argmax does (and as the interpreter, the init values are not compared).
class ArgReduce : public LibraryOp {
 public:
  ArgReduce(const Instruction& i, hlo::Reducer r) : inst_(i), is_max_(r == hlo::Reducer::kArgmax) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    bool is_max = is_max_;
    const auto& dims = hlo::dimensions_of(inst_);
    const hlo::Shape &xs = inst_.operand(0)->shape, &is = inst_.operand(1)->shape;
    DType d = xs.dtype;
    Dom dm = domain(d);
    size_t es = dtype_size(d);
    // Output axes first (row-major, as the result), reduced axes inner: each output walks its reduced elements.
    Ints out_axes, red_axes, out_dims, red_dims;
    for (int64_t a = 0; a < xs.rank(); ++a) {
      if (contains(dims, a)) red_axes.push_back(a), red_dims.push_back(xs.dims[a]);
      else out_axes.push_back(a), out_dims.push_back(xs.dims[a]);
    }
    auto xst = detail::row_major_strides(xs.dims);
    Ints rst;
    for (auto a : red_axes) rst.push_back(xst[a]);
    int64_t n_out = detail::num_elements(out_dims), n_red = detail::num_elements(red_dims);
    parallel_chunks(n_out, n_red, [&](int64_t lo, int64_t hi) {
      Ints oi(out_dims.size());
      for (int64_t o = lo; o < hi; ++o) {
        int64_t base = 0;
        for (int64_t rem = o, k = static_cast<int64_t>(out_dims.size()) - 1; k >= 0; --k) {
          base += rem % out_dims[k] * xst[out_axes[k]];
          rem /= out_dims[k];
        }
        int64_t best = -1;
        double bf = 0;
        uint64_t bu = 0;
        detail::IndexCounter rc(red_dims);
        for (int64_t j = 0; j < n_red; ++j, rc.next()) {
          int64_t x = base + detail::linear_index(rc.idx, rst);
          bool take = best < 0;
          if (dm == Dom::kFloat) {
            double v = load_f(ins[0], d, x);
            if (!take) take = std::isnan(bf) ? false : std::isnan(v) ? true : is_max ? v > bf : v < bf;
            if (take) bf = v;
          } else {
            uint64_t v = load_u(ins[0], d, x);
            if (!take) {
              bool sg = dm == Dom::kSigned;
              bool gt = sg ? int64_t(v) > int64_t(bu) : v > bu, lt = sg ? int64_t(v) < int64_t(bu) : v < bu;
              take = is_max ? gt : lt;
            }
            if (take) bu = v;
          }
          if (take) best = x;
        }
        if (best < 0) continue;  // empty reduction: the interpreter leaves the value zero and the index -1
        copy_elem(outs[0], o, ins[0], best, es);
        store_u(outs[1], is.dtype, o, load_u(ins[1], is.dtype, best));
      }
    });
    if (n_red == 0) {  // as the interpreter: zero values, index -1
      std::memset(outs[0], 0, static_cast<size_t>(n_out) * es);
      for (int64_t o = 0; o < n_out; ++o) store_u(outs[1], is.dtype, o, ~uint64_t{0});
    }
  }

 private:
  const Instruction& inst_;
  bool is_max_;
};
}  // namespace

std::unique_ptr<LibraryOp> make_data_op(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kSort: return std::make_unique<Sort>(inst);
    case Opcode::kTopK: return std::make_unique<TopK>(inst);
    case Opcode::kGather: return std::make_unique<Gather>(inst);
    case Opcode::kScatter: return std::make_unique<Scatter>(inst);  // reducer_of() admits what combine() does
    case Opcode::kReduceWindow:  // reducer_of() admits add, mul, max, min, and, or: what acc_step() does
      if (inst.operands.size() != 2) return nullptr;
      return std::make_unique<ReduceWindow>(inst, hlo::reducer_of(inst));
    case Opcode::kReduce: {
      hlo::Reducer r = hlo::reducer_of(inst);
      if (inst.operands.size() != 4 || (r != hlo::Reducer::kArgmax && r != hlo::Reducer::kArgmin)) return nullptr;
      return std::make_unique<ArgReduce>(inst, r);
    }
    default: return nullptr;
  }
}

}  // namespace jitx::cpu
