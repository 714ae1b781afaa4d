// Library ops for data-dependent movement and windowed/variadic reductions: sort, top-k, gather, scatter,
// reduce-window and the (value, index) argmax/argmin reduce. Typed C++ loops called by the runtime, as XLA:CPU
// calls its runtime library for sort; their semantics follow the interpreter (backends/interpreter/
// evaluator*.cpp), which is the oracle the tests compare against.
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
    case 1: return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int8_t*>(p)[i]) : static_cast<const uint8_t*>(p)[i];
    case 2: return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int16_t*>(p)[i]) : static_cast<const uint16_t*>(p)[i];
    case 4: return is_signed_integer(d) ? static_cast<uint64_t>(static_cast<const int32_t*>(p)[i]) : static_cast<const uint32_t*>(p)[i];
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

// An order-preserving 64-bit key: a < b in sort order iff key(a) < key(b); -0.0 and 0.0 equal, NaNs equal and last.
uint64_t sort_key(const void* p, DType d, int64_t i) {
  switch (domain(d)) {
    case Dom::kFloat: {
      double v = load_f(p, d, i);
      if (std::isnan(v)) return ~uint64_t{0};
      if (v == 0) v = 0;  // -0.0 -> +0.0
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
    }
    case Dom::kSigned: return load_u(p, d, i) ^ (uint64_t{1} << 63);
    default: return load_u(p, d, i);
  }
}
// The key of IEEE's total order for floats (XLA's TopK order): -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN;
// sort_key's for other dtypes.
uint64_t total_order_key(const void* p, DType d, int64_t i) {
  if (domain(d) != Dom::kFloat) return sort_key(p, d, i);
  double v = load_f(p, d, i);
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
}


/// An index element read as int64 (huge uint64 values saturate, so they stay out of range).
int64_t read_index(const void* p, DType d, int64_t i) {
  uint64_t u = load_u(p, d, i);
  if (d == DType::uint64) return static_cast<int64_t>(std::min<uint64_t>(u, INT64_MAX));
  return static_cast<int64_t>(u);
}

// --- sort and top-k ---
class Sort : public LibraryOp {
 public:
  explicit Sort(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    int64_t dim = inst_.attrs.get_int("dimension"), num_keys = inst_.attrs.get_int("num_keys");
    const Ints& dims = inst_.operand(0)->shape.dims;
    int64_t n = dims[dim];
    auto strides = detail::row_major_strides(dims);
    int64_t stride = strides[dim], outer = 1;
    for (int64_t k = 0; k < dim; ++k) outer *= dims[k];
    int64_t lines = n == 0 ? 0 : detail::num_elements(dims) / n;
    parallel_chunks(lines, n * 8, [&](int64_t lo, int64_t hi) {
      std::vector<uint64_t> keys(static_cast<size_t>(n * num_keys));
      std::vector<int64_t> perm(static_cast<size_t>(n));
      std::vector<std::pair<uint64_t, int64_t>> pairs;
      for (int64_t l = lo; l < hi; ++l) {
        int64_t base = (l / stride) * stride * n + l % stride;  // line l: outer index l / stride, inner l % stride
        if (num_keys == 1) {  // (key, position) pairs are totally ordered: std::sort is stable here
          pairs.resize(static_cast<size_t>(n));
          for (int64_t t = 0; t < n; ++t) pairs[t] = {sort_key(ins[0], inst_.operand(0)->shape.dtype, base + t * stride), t};
          std::sort(pairs.begin(), pairs.end());
          for (int64_t t = 0; t < n; ++t) perm[t] = pairs[t].second;
        } else {
          for (int64_t k = 0; k < num_keys; ++k)
            for (int64_t t = 0; t < n; ++t)
              keys[t * num_keys + k] = sort_key(ins[k], inst_.operand(k)->shape.dtype, base + t * stride);
          std::iota(perm.begin(), perm.end(), 0);
          std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
            return std::lexicographical_compare(&keys[a * num_keys], &keys[a * num_keys + num_keys],
                                                &keys[b * num_keys], &keys[b * num_keys + num_keys]);
          });
        }
        for (size_t k = 0; k < ins.size(); ++k) {
          size_t es = dtype_size(inst_.operand(k)->shape.dtype);
          for (int64_t t = 0; t < n; ++t) copy_elem(outs[k], base + t * stride, ins[k], base + perm[t] * stride, es);
        }
      }
    });
    (void)outer;
  }

 private:
  const Instruction& inst_;
};

class TopK : public LibraryOp {
 public:
  explicit TopK(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    int64_t k = inst_.attrs.get_int("k");
    const hlo::Shape& xs = inst_.operand(0)->shape;
    int64_t n = xs.dims.back(), rows = n == 0 ? 0 : xs.num_elements() / n;
    size_t es = dtype_size(xs.dtype);
    DType id = inst_.shape.tuple_shapes.at(1).dtype;
    parallel_chunks(rows, n * 8, [&](int64_t lo, int64_t hi) {
      std::vector<std::pair<uint64_t, int64_t>> pairs(static_cast<size_t>(n));
      for (int64_t r = lo; r < hi; ++r) {
        // Largest first in total order, ties by position: (~key, position) ascending.
        for (int64_t t = 0; t < n; ++t) pairs[t] = {~total_order_key(ins[0], xs.dtype, r * n + t), t};
        std::partial_sort(pairs.begin(), pairs.begin() + k, pairs.end());
        for (int64_t t = 0; t < k; ++t) {
          copy_elem(outs[0], r * k + t, ins[0], r * n + pairs[t].second, es);
          store_u(outs[1], id, r * k + t, static_cast<uint64_t>(pairs[t].second));
        }
      }
    });
  }

 private:
  const Instruction& inst_;
};

// --- gather and scatter ---
class Gather : public LibraryOp {
 public:
  explicit Gather(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    const auto& a = inst_.attrs;
    const auto &offset = a.get_ints("offset_dims"), &collapsed = a.get_ints("collapsed_slice_dims");
    const auto &obd = a.get_ints("operand_batching_dims"), &sibd = a.get_ints("start_indices_batching_dims");
    const auto &sim = a.get_ints("start_index_map"), &sizes = a.get_ints("slice_sizes");
    int64_t ivd = a.get_int("index_vector_dim");
    const hlo::Shape &xs = inst_.operand(0)->shape, &is = inst_.operand(1)->shape;
    const Ints& od = inst_.shape.dims;
    int64_t rank = static_cast<int64_t>(od.size()), xr = xs.rank(), ir = is.rank();
    size_t es = dtype_size(xs.dtype);
    Ints out_batch, batch_dims, idx_batch;
    for (int64_t d = 0; d < rank; ++d)
      if (!contains(offset, d)) out_batch.push_back(d), batch_dims.push_back(od[d]);
    for (int64_t d = 0; d < ir; ++d)
      if (d != ivd) idx_batch.push_back(d);
    Ints offset_operand;
    for (int64_t d = 0; d < xr; ++d)
      if (!contains(collapsed, d) && !contains(obd, d)) offset_operand.push_back(d);
    auto xst = detail::row_major_strides(xs.dims), ist = detail::row_major_strides(is.dims),
         ost = detail::row_major_strides(od);
    // The window: output offset axes, with their output and operand strides; the last axis is copied as a run.
    Ints wdims, wout, win;
    for (size_t k = 0; k < offset.size(); ++k) {
      wdims.push_back(od[offset[k]]);
      wout.push_back(ost[offset[k]]);
      win.push_back(xst[offset_operand[k]]);
    }
    bool run_copy = !wdims.empty() && wout.back() == 1 && win.back() == 1;
    int64_t run_len = run_copy ? wdims.back() : 1;
    if (run_copy) wdims.back() = 1;
    int64_t nb = detail::num_elements(batch_dims), nw = detail::num_elements(wdims);
    if (detail::num_elements(od) == 0) return;
    parallel_chunks(nb, nw * run_len, [&](int64_t lo, int64_t hi) {
      Ints idx_pos(static_cast<size_t>(ir), 0), start(static_cast<size_t>(xr), 0), bidx;
      for (int64_t bi = lo; bi < hi; ++bi) {
        // The batch position's multi-index (batch_dims row-major).
        bidx.assign(batch_dims.size(), 0);
        for (int64_t r = bi, k = static_cast<int64_t>(batch_dims.size()) - 1; k >= 0; --k) {
          bidx[k] = r % batch_dims[k];
          r /= batch_dims[k];
        }
        int64_t out_base = 0;
        for (size_t k = 0; k < out_batch.size(); ++k) {
          idx_pos[idx_batch[k]] = bidx[k];
          out_base += bidx[k] * ost[out_batch[k]];
        }
        std::fill(start.begin(), start.end(), 0);
        for (size_t j = 0; j < sim.size(); ++j) {
          if (ivd < ir) idx_pos[ivd] = static_cast<int64_t>(j);
          start[sim[j]] = read_index(ins[1], is.dtype, detail::linear_index(idx_pos, ist));
        }
        int64_t in_base = 0;
        for (int64_t d = 0; d < xr; ++d) in_base += std::clamp<int64_t>(start[d], 0, xs.dims[d] - sizes[d]) * xst[d];
        for (size_t k = 0; k < obd.size(); ++k) in_base += idx_pos[sibd[k]] * xst[obd[k]];
        detail::IndexCounter wc(wdims);
        for (int64_t w = 0; w < nw; ++w, wc.next()) {
          int64_t o = out_base + detail::linear_index(wc.idx, wout), x = in_base + detail::linear_index(wc.idx, win);
          std::memcpy(static_cast<char*>(outs[0]) + o * es, static_cast<const char*>(ins[0]) + x * es, es * run_len);
        }
      }
    });
  }

 private:
  const Instruction& inst_;
};

// out[o] = reducer(out[o], upd[u]), as the interpreter combines: floats in double (rounded on store), integers
// wrap, bools: add/max are or, mul/min are and.
void combine(const std::string& r, void* out, int64_t o, const void* upd, int64_t u, DType d) {
  if (r == "replace") return copy_elem(out, o, upd, u, dtype_size(d));
  switch (domain(d)) {
    case Dom::kFloat: {
      double a = load_f(out, d, o), b = load_f(upd, d, u), v;
      if (r == "add") v = a + b;
      else if (r == "mul") v = a * b;
      else if (r == "max") v = detail::float_max(a, b);
      else v = detail::float_min(a, b);
      return store_f(out, d, o, v);
    }
    case Dom::kSigned: {
      uint64_t a = load_u(out, d, o), b = load_u(upd, d, u);
      int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
      uint64_t v = r == "add" ? a + b : r == "mul" ? a * b : static_cast<uint64_t>(r == "max" ? std::max(sa, sb) : std::min(sa, sb));
      return store_u(out, d, o, v);
    }
    case Dom::kUnsigned: {
      uint64_t a = load_u(out, d, o), b = load_u(upd, d, u), v;
      if (d == DType::bool_) v = (r == "add" || r == "max") ? (a | b) : (a & b);
      else v = r == "add" ? a + b : r == "mul" ? a * b : r == "max" ? std::max(a, b) : std::min(a, b);
      return store_u(out, d, o, v);
    }
  }
}

class Scatter : public LibraryOp {
 public:
  explicit Scatter(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    const auto& a = inst_.attrs;
    const auto &uwd = a.get_ints("update_window_dims"), &iwd = a.get_ints("inserted_window_dims");
    const auto &ibd = a.get_ints("input_batching_dims"), &sibd = a.get_ints("scatter_indices_batching_dims");
    const auto& sdod = a.get_ints("scatter_dims_to_operand_dims");
    int64_t ivd = a.get_int("index_vector_dim");
    const std::string& reducer = a.get_str("reducer");
    const hlo::Shape &xs = inst_.operand(0)->shape, &is = inst_.operand(1)->shape, &us = inst_.operand(2)->shape;
    DType d = xs.dtype;
    if (outs[0] != ins[0]) std::memcpy(outs[0], ins[0], static_cast<size_t>(xs.byte_size()));
    int64_t xr = xs.rank(), ur = us.rank(), ir = is.rank();
    Ints upd_scatter, scatter_dims, idx_batch;
    for (int64_t k = 0; k < ur; ++k)
      if (!contains(uwd, k)) upd_scatter.push_back(k), scatter_dims.push_back(us.dims[k]);
    for (int64_t k = 0; k < ir; ++k)
      if (k != ivd) idx_batch.push_back(k);
    Ints window_operand;
    for (int64_t k = 0; k < xr; ++k)
      if (!contains(iwd, k) && !contains(ibd, k)) window_operand.push_back(k);
    Ints extent(static_cast<size_t>(xr), 1);
    for (size_t k = 0; k < uwd.size(); ++k) extent[window_operand[k]] = us.dims[uwd[k]];
    auto xst = detail::row_major_strides(xs.dims), ist = detail::row_major_strides(is.dims),
         ust = detail::row_major_strides(us.dims);
    Ints wdims, wout, wupd;
    for (size_t k = 0; k < uwd.size(); ++k) {
      wdims.push_back(us.dims[uwd[k]]);
      wupd.push_back(ust[uwd[k]]);
      wout.push_back(xst[window_operand[k]]);
    }
    int64_t nb = detail::num_elements(scatter_dims), nw = detail::num_elements(wdims);
    if (us.num_elements() == 0) return;
    Ints idx_pos(static_cast<size_t>(ir), 0), start(static_cast<size_t>(xr), 0);
    detail::IndexCounter bc(scatter_dims);
    // In update order, one window after another: with duplicate indices the later update wins (replace) or
    // combines after the earlier one, as in the interpreter.
    for (int64_t bi = 0; bi < nb; ++bi, bc.next()) {
      int64_t upd_base = 0;
      for (size_t k = 0; k < upd_scatter.size(); ++k) {
        idx_pos[idx_batch[k]] = bc.idx[k];
        upd_base += bc.idx[k] * ust[upd_scatter[k]];
      }
      std::fill(start.begin(), start.end(), 0);
      for (size_t j = 0; j < sdod.size(); ++j) {
        if (ivd < ir) idx_pos[ivd] = static_cast<int64_t>(j);
        start[sdod[j]] = read_index(ins[1], is.dtype, detail::linear_index(idx_pos, ist));
      }
      for (size_t k = 0; k < ibd.size(); ++k) start[ibd[k]] += idx_pos[sibd[k]];
      bool fits = true;  // XLA drops a whole update window that does not fit inside the operand
      for (int64_t k = 0; k < xr && fits; ++k) fits = start[k] >= 0 && start[k] <= xs.dims[k] - extent[k];
      if (!fits) continue;
      int64_t out_base = detail::linear_index(start, xst);
      detail::IndexCounter wc(wdims);
      for (int64_t w = 0; w < nw; ++w, wc.next())
        combine(reducer, outs[0], out_base + detail::linear_index(wc.idx, wout), ins[2], upd_base + detail::linear_index(wc.idx, wupd), d);
    }
  }

 private:
  const Instruction& inst_;
};

// --- reduce-window and argmax/argmin ---
struct Acc {
  double f = 0;
  uint64_t u = 0;
};

void acc_step(const std::string& r, Dom dm, DType d, Acc& acc, const void* x, int64_t j) {
  if (dm == Dom::kFloat) {
    double v = load_f(x, d, j);
    if (r == "add") acc.f += v;
    else if (r == "mul") acc.f *= v;
    else if (r == "max") acc.f = detail::float_max(acc.f, v);
    else acc.f = detail::float_min(acc.f, v);
    return;
  }
  uint64_t v = load_u(x, d, j);
  bool sg = dm == Dom::kSigned, b = d == DType::bool_;
  if (r == "add") acc.u = b ? (acc.u | v) : acc.u + v;
  else if (r == "mul") acc.u = b ? (acc.u & v) : acc.u * v;
  else if (r == "and") acc.u &= v;
  else if (r == "or") acc.u |= v;
  else if (r == "max") acc.u = sg ? static_cast<uint64_t>(std::max(int64_t(acc.u), int64_t(v))) : std::max(acc.u, v);
  else acc.u = sg ? static_cast<uint64_t>(std::min(int64_t(acc.u), int64_t(v))) : std::min(acc.u, v);
}

class ReduceWindow : public LibraryOp {
 public:
  explicit ReduceWindow(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    const auto& at = inst_.attrs;
    const std::string& r = at.get_str("reducer");
    auto wd = at.get_ints("window_dimensions"), ws = at.get_ints("window_strides"), pad = at.get_ints("padding");
    auto bd = at.get_ints("base_dilations"), wdl = at.get_ints("window_dilations");
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
            int64_t pos = oi[a] * ws[a] + wc.idx[a] * wdl[a] - pad[2 * a];  // in the dilated base
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
  const Instruction& inst_;
};

// reduce(x, iota, init_x, init_i), reducer=argmax|argmin: (best value, its index) per output; ties and NaNs pick
// the first, as JAX's argmax does (and as the interpreter, the init values are not compared).
class ArgReduce : public LibraryOp {
 public:
  explicit ArgReduce(const Instruction& i) : inst_(i) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    bool is_max = inst_.attrs.get_str("reducer") == "argmax";
    const auto& dims = inst_.attrs.get_ints("dimensions");
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
};
}  // namespace

std::unique_ptr<LibraryOp> make_data_op(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kSort: return std::make_unique<Sort>(inst);
    case Opcode::kTopK: return std::make_unique<TopK>(inst);
    case Opcode::kGather: return std::make_unique<Gather>(inst);
    case Opcode::kScatter: {
      const std::string& r = inst.attrs.get_str("reducer");
      if (r != "add" && r != "mul" && r != "max" && r != "min" && r != "replace") return nullptr;
      return std::make_unique<Scatter>(inst);
    }
    case Opcode::kReduceWindow: {
      const std::string& r = inst.attrs.get_str("reducer");
      if (inst.operands.size() != 2 || (r != "add" && r != "mul" && r != "max" && r != "min" && r != "and" && r != "or"))
        return nullptr;
      return std::make_unique<ReduceWindow>(inst);
    }
    case Opcode::kReduce: {
      const std::string& r = inst.attrs.get_str("reducer");
      if (inst.operands.size() != 4 || (r != "argmax" && r != "argmin")) return nullptr;
      return std::make_unique<ArgReduce>(inst);
    }
    default: return nullptr;
  }
}

}  // namespace jitx::cpu
