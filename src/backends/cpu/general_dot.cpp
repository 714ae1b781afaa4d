// Dots that the Eigen dot (eigen_dot.cpp) does not take: integer and bool dots, and dots whose operands are not of
// the result's dtype (preferred_element_type: int8 x int8 -> int32, bf16 x bf16 -> f32, ...).
//
// Each operand is packed into a row-major [batch, M, K] / [batch, K, N] buffer of the compute type (batch, free
// and contracting dimensions in the HLO's order), multiplied batch by batch, and the [batch, M, N] product is the
// dot's result in row-major order (batch dimensions, lhs free, rhs free). Compute types follow the interpreter
// (hlo/evaluator/evaluator.cpp eval_dot): integers accumulate on unsigned words, wrapping (truncation to
// the result's width commutes with + and *); bool is OR of ANDs; float operands multiply in f32 (f64 when the
// result is f64) and are rounded once to the result's dtype.
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
void int_gemm_typed(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n) {
  parallel_chunks(m, k * n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T* ci = c + i * n;
      std::fill(ci, ci + n, T(0));
      for (int64_t p = 0; p < k; ++p) {
        T aip = a[i * k + p];
        if (aip == 0) continue;  // padding and dilation holes of a convolution's patches
        const T* bp = b + p * n;
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    }
  });
}

// Element i of p (dtype d) in the compute type T: integers sign- or zero-extended then wrapped, floats converted.
template <class T>
T load_as(const void* p, DType d, int64_t i) {
  if (is_floating(d)) {
    double v;
    switch (d) {
      case DType::float32: v = static_cast<const float*>(p)[i]; break;
      case DType::float64: v = static_cast<const double*>(p)[i]; break;
      case DType::float16: v = half_to_float(static_cast<const uint16_t*>(p)[i]); break;
      default: v = bfloat16_to_float(static_cast<const uint16_t*>(p)[i]); break;
    }
    return static_cast<T>(v);
  }
  return static_cast<T>(load_int_bits(p, d, i));
}

// Stores v (compute type T) as element i of p (dtype d): integers truncated (bool: nonzero), floats rounded once.
template <class T>
void store_as(void* p, DType d, int64_t i, T v) {
  if constexpr (std::is_integral_v<T>) {
    if (is_floating(d))  // an integer dot with a float result: the 64-bit wrapped sum as int64, converted
      return store_as<double>(p, d, i, static_cast<double>(static_cast<int64_t>(v)));
    store_int_bits(p, d, i, d == DType::bool_ ? v != 0 : static_cast<uint64_t>(v));
  } else {
    switch (d) {
      case DType::float32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
      case DType::float64: static_cast<double*>(p)[i] = static_cast<double>(v); return;
      case DType::float16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); return;
      case DType::bfloat16: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v)); return;
      default: JITX_ASSERT(false, "general dot: float product into {}", dtype_name(d));
    }
  }
}

class GeneralDot : public LibraryOp {
 public:
  explicit GeneralDot(const Instruction& i) : inst_(i) {
    auto dn = hlo::DotDimensionNumbers::of(i);
    lhs_ = plan(i.operand(0)->shape.dims, dn.lhs_batch_dims, dn.lhs_contracting_dims, true);
    rhs_ = plan(i.operand(1)->shape.dims, dn.rhs_batch_dims, dn.rhs_contracting_dims, false);
  }

  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    DType in = inst_.operand(0)->shape.dtype, out = inst_.shape.dtype;
    if (is_floating(in)) {
      if (out == DType::float64) run_typed<double>(ins, outs);
      else run_typed<float>(ins, outs);
    } else if (dtype_size(in) == 8 || dtype_size(out) == 8 || is_floating(out)) {
      run_typed<uint64_t>(ins, outs);
    } else {
      run_typed<uint32_t>(ins, outs);
    }
  }

 private:
  // An operand read as [batch, rows, cols]: the source dimensions and strides of each group, in the packed order.
  struct Pack {
    Ints dims, strides;  // batch group, then the rows group, then the cols group
    int64_t batch = 1, rows = 1, cols = 1;
  };

  // lhs: rows = free dimensions, cols = contracting; rhs: rows = contracting, cols = free.
  static Pack plan(const Ints& dims, const Ints& batch, const Ints& contracting, bool is_lhs) {
    auto st = detail::row_major_strides(dims);
    Ints free;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end())
        free.push_back(d);
    Pack p;
    auto add = [&](const Ints& group, int64_t& extent) {
      for (auto d : group) {
        p.dims.push_back(dims[d]);
        p.strides.push_back(st[d]);
        extent *= dims[d];
      }
    };
    add(batch, p.batch);
    add(is_lhs ? free : contracting, p.rows);
    add(is_lhs ? contracting : free, p.cols);
    return p;
  }

  template <class T>
  static std::vector<T> pack(const void* src, DType d, const Pack& p) {
    std::vector<T> out(static_cast<size_t>(p.batch * p.rows * p.cols));
    detail::IndexCounter c(p.dims);
    for (size_t i = 0; i < out.size(); ++i, c.next())
      out[i] = load_as<T>(src, d, detail::linear_index(c.idx, p.strides));
    return out;
  }

  template <class T>
  void run_typed(std::span<const void* const> ins, std::span<void* const> outs) const {
    DType d = inst_.shape.dtype;
    std::vector<T> a = pack<T>(ins[0], inst_.operand(0)->shape.dtype, lhs_);
    std::vector<T> b = pack<T>(ins[1], inst_.operand(1)->shape.dtype, rhs_);
    int64_t m = lhs_.rows, k = lhs_.cols, n = rhs_.cols;
    std::vector<T> c(static_cast<size_t>(m * n));
    for (int64_t q = 0; q < lhs_.batch; ++q) {
      const T* aq = a.data() + q * m * k;
      const T* bq = b.data() + q * k * n;
      if constexpr (std::is_integral_v<T>) {
        int_gemm_typed(aq, bq, c.data(), m, k, n);
        if (inst_.operand(0)->shape.dtype == DType::bool_)  // OR of ANDs: any nonzero count is true
          for (auto& v : c) v = v != 0;
      } else {
        gemm(aq, bq, c.data(), m, k, n);
      }
      for (int64_t i = 0; i < m * n; ++i) store_as<T>(outs[0], d, q * m * n + i, c[i]);
    }
  }

  const Instruction& inst_;
  Pack lhs_, rhs_;
};
}  // namespace

uint64_t load_int_bits(const void* p, DType d, int64_t i) {
  bool sg = is_signed_integer(d);
  switch (dtype_size(d)) {
    case 1: return sg ? static_cast<uint64_t>(static_cast<const int8_t*>(p)[i]) : static_cast<const uint8_t*>(p)[i];
    case 2: return sg ? static_cast<uint64_t>(static_cast<const int16_t*>(p)[i]) : static_cast<const uint16_t*>(p)[i];
    case 4: return sg ? static_cast<uint64_t>(static_cast<const int32_t*>(p)[i]) : static_cast<const uint32_t*>(p)[i];
    default: return static_cast<const uint64_t*>(p)[i];
  }
}

void store_int_bits(void* p, DType d, int64_t i, uint64_t v) {
  switch (dtype_size(d)) {
    case 1: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case 2: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case 4: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    default: static_cast<uint64_t*>(p)[i] = v; return;
  }
}

void int_gemm(const uint32_t* a, const uint32_t* b, uint32_t* c, int64_t m, int64_t k, int64_t n) {
  int_gemm_typed(a, b, c, m, k, n);
}
void int_gemm(const uint64_t* a, const uint64_t* b, uint64_t* c, int64_t m, int64_t k, int64_t n) {
  int_gemm_typed(a, b, c, m, k, n);
}

std::unique_ptr<LibraryOp> make_general_dot(const Instruction& dot) {
  DType in = dot.operand(0)->shape.dtype, out = dot.shape.dtype;
  if (dot.operand(1)->shape.dtype != in) return nullptr;
  // Float operands into an integer result would need the interpreter's float-to-integer conversion: not done.
  if (is_floating(in) && !is_floating(out)) return nullptr;
  return std::make_unique<GeneralDot>(dot);
}

}  // namespace jitx::cpu
