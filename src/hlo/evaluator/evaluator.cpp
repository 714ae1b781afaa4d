// Reference evaluator for HLO: elementwise math, data movement, reductions, dot.
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/evaluator_collectives.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "hlo/evaluator/evaluator_indexing.h"
#include "hlo/evaluator/evaluator_linalg.h"
#include "hlo/ir/attributes.h"
#include "hlo/evaluator/special.h"
#include "core/errors.h"
#include "core/float_minmax.h"
#include "core/host_callback.h"
#include "hlo/ir/custom_call.h"

namespace jitx::evaluator {
namespace {
using detail::Literal;
using hlo::Instruction;
using hlo::Opcode;

enum class Dom { kFloat, kSigned, kUnsigned };
Dom domain(DType d) {
  if (is_floating(d)) return Dom::kFloat;
  if (is_unsigned_integer(d) || is_bool(d)) return Dom::kUnsigned;
  return Dom::kSigned;
}

[[noreturn]] void unsupported(const Instruction& inst, std::string_view what = "") {
  detail::throw_error<CompileError>("interpreter", "{} is not supported by the interpreter{}{} (instruction %{})",
                                    hlo::opcode_name(inst.opcode), what.empty() ? "" : ": ", what, inst.name);
}


// --- elementwise ------------------------------------------------------------------------------------
double unary_float(Opcode op, double x, DType d) {
  switch (op) {
    case Opcode::kAbs: return std::fabs(x);
    case Opcode::kNegate: return -x;
    case Opcode::kSign: return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x;
    case Opcode::kFloor: return std::floor(x);
    case Opcode::kCeil: return std::ceil(x);
    case Opcode::kRoundNearestAfz: return std::round(x);
    case Opcode::kRoundNearestEven: return std::nearbyint(x);
    case Opcode::kExp: return std::exp(x);
    case Opcode::kExpm1: return std::expm1(x);
    case Opcode::kLog: return std::log(x);
    case Opcode::kLog1p: return std::log1p(x);
    case Opcode::kSqrt: return std::sqrt(x);
    case Opcode::kRsqrt: return 1.0 / std::sqrt(x);
    case Opcode::kCbrt: return std::cbrt(x);
    case Opcode::kTanh: return std::tanh(x);
    case Opcode::kLogistic: return 1.0 / (1.0 + std::exp(-x));
    case Opcode::kSin: return std::sin(x);
    case Opcode::kCos: return std::cos(x);
    case Opcode::kTan: return std::tan(x);
    case Opcode::kErf: return std::erf(x);
    case Opcode::kErfc: return std::erfc(x);
    case Opcode::kErfInv: return erf_inv(x);
    case Opcode::kLgamma: return std::lgamma(x);
    case Opcode::kDigamma: return digamma(x);
    case Opcode::kAsin: return std::asin(x);
    case Opcode::kAcos: return std::acos(x);
    case Opcode::kAtan: return std::atan(x);
    case Opcode::kSinh: return std::sinh(x);
    case Opcode::kCosh: return std::cosh(x);
    case Opcode::kAsinh: return std::asinh(x);
    case Opcode::kAcosh: return std::acosh(x);
    case Opcode::kAtanh: return std::atanh(x);
    default: break;
  }
  (void)d;
  JITX_ASSERT(false, "unary float op {}", hlo::opcode_name(op));
  return 0;
}

uint64_t mask_bits(int bits) { return bits == 64 ? ~0ULL : (1ULL << bits) - 1; }

// Integer unary ops on the value's two's-complement bits (returned as uint64, truncated on store).
uint64_t unary_int(Opcode op, uint64_t u, DType d, const Instruction& inst) {
  int bits = dtype_bits(d);
  bool is_signed = is_signed_integer(d);
  int64_t s = static_cast<int64_t>(u);
  switch (op) {
    case Opcode::kNegate: return 0 - u;
    case Opcode::kAbs: return is_signed && s < 0 ? 0 - u : u;
    case Opcode::kSign: return is_signed ? static_cast<uint64_t>(s > 0 ? 1 : s < 0 ? -1 : 0) : (u != 0);
    case Opcode::kNot: return is_bool(d) ? !u : ~u;
    case Opcode::kPopcnt: return std::popcount(u & mask_bits(bits));
    default: unsupported(inst, fmt::format("on dtype {}", dtype_name(d)));
  }
}

double binary_float(Opcode op, double x, double y) {
  switch (op) {
    case Opcode::kAdd: return x + y;
    case Opcode::kSubtract: return x - y;
    case Opcode::kMultiply: return x * y;
    case Opcode::kDivide: return x / y;
    case Opcode::kRemainder: return std::fmod(x, y);
    case Opcode::kPower: return std::pow(x, y);
    case Opcode::kMaximum: return detail::float_max(x, y);
    case Opcode::kMinimum: return detail::float_min(x, y);
    case Opcode::kAtan2: return std::atan2(x, y);
    default: break;
  }
  JITX_ASSERT(false, "binary float op {}", hlo::opcode_name(op));
  return 0;
}

// Integer binary ops with XLA's semantics for division by zero, overflow and wide shifts.
uint64_t binary_int(Opcode op, uint64_t a, uint64_t b, DType d, const Instruction& inst) {
  int bits = dtype_bits(d);
  bool sg = is_signed_integer(d);
  int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  int64_t smin = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
  uint64_t ub = b & mask_bits(bits), ua = a & mask_bits(bits);
  switch (op) {
    case Opcode::kAdd: return is_bool(d) ? (a | b) : a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return is_bool(d) ? (a & b) : a * b;
    case Opcode::kDivide:
      if (sg) {
        if (sb == 0) return static_cast<uint64_t>(-1);
        if (sa == smin && sb == -1) return a;
        return static_cast<uint64_t>(sa / sb);
      }
      return ub == 0 ? mask_bits(bits) : ua / ub;
    case Opcode::kRemainder:
      if (sg) {
        if (sb == 0) return a;
        if (sa == smin && sb == -1) return 0;
        return static_cast<uint64_t>(sa % sb);
      }
      return ub == 0 ? ua : ua % ub;
    case Opcode::kMaximum: return sg ? (sa > sb ? a : b) : (ua > ub ? ua : ub);
    case Opcode::kMinimum: return sg ? (sa < sb ? a : b) : (ua < ub ? ua : ub);
    case Opcode::kAnd: return a & b;
    case Opcode::kOr: return a | b;
    case Opcode::kXor: return a ^ b;
    case Opcode::kShiftLeft: return ub >= static_cast<uint64_t>(bits) ? 0 : ua << ub;
    case Opcode::kShiftRightLogical: return ub >= static_cast<uint64_t>(bits) ? 0 : ua >> ub;
    case Opcode::kShiftRightArithmetic:
      if (!sg) {  // on unsigned types XLA shifts in the sign bit of the value's width
        int64_t sx = static_cast<int64_t>(ua << (64 - bits)) >> (64 - bits);
        return static_cast<uint64_t>(ub >= static_cast<uint64_t>(bits) ? (sx < 0 ? -1 : 0) : sx >> ub);
      }
      return static_cast<uint64_t>(ub >= static_cast<uint64_t>(bits) ? (sa < 0 ? -1 : 0) : sa >> ub);
    case Opcode::kPower: {
      if (sg && sb < 0) return sa == 1 ? 1 : sa == -1 ? static_cast<uint64_t>((sb & 1) ? -1 : 1) : 0;
      uint64_t r = 1, base = a, e = sg ? static_cast<uint64_t>(sb) : ub;
      while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
      }
      return r;
    }
    default: unsupported(inst, fmt::format("on dtype {}", dtype_name(d)));
  }
}

Literal eval_elementwise(const Instruction& inst, const std::vector<const Literal*>& ops) {
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  int64_t n = out.size();
  Opcode op = inst.opcode;
  DType in_d = ops[0]->dtype;
  // Scalars next to arrays are allowed for select's predicate and clamp's bounds.
  auto at = [&](const Literal* l, int64_t i) { return l->dims.empty() ? int64_t{0} : i; };
  if (op == Opcode::kSelect) {
    for (int64_t i = 0; i < n; ++i) {
      const Literal* src = ops[0]->get_i64(at(ops[0], i)) ? ops[1] : ops[2];
      if (domain(out.dtype) == Dom::kFloat) out.set_f64(i, src->get_f64(i));
      else out.set_u64(i, src->get_u64(i));
    }
    return out;
  }
  if (op == Opcode::kClamp) {
    DType d = ops[1]->dtype;
    for (int64_t i = 0; i < n; ++i) {
      if (domain(d) == Dom::kFloat) {
        double lo = ops[0]->get_f64(at(ops[0], i)), x = ops[1]->get_f64(i), hi = ops[2]->get_f64(at(ops[2], i));
        out.set_f64(i, detail::float_min(detail::float_max(x, lo), hi));  // XLA's: NaN from any operand
      } else if (domain(d) == Dom::kSigned) {
        int64_t lo = ops[0]->get_i64(at(ops[0], i)), x = ops[1]->get_i64(i), hi = ops[2]->get_i64(at(ops[2], i));
        out.set_i64(i, std::min(std::max(x, lo), hi));
      } else {
        uint64_t lo = ops[0]->get_u64(at(ops[0], i)), x = ops[1]->get_u64(i), hi = ops[2]->get_u64(at(ops[2], i));
        out.set_u64(i, std::min(std::max(x, lo), hi));
      }
    }
    return out;
  }
  if (op == Opcode::kConvert) {
    // To f16/bf16 from f64 or an integer, XLA (and so JAX) converts through f32, rounding twice: int32
    // 2^30 + 2^22 + 1 becomes the f32 tie 2^30 + 2^22, then the bf16 2^30. The CPU kernels do the same.
    bool half = out.dtype == DType::float16 || out.dtype == DType::bfloat16;
    if (half && in_d != DType::float32 && in_d != DType::float16 && in_d != DType::bfloat16) {
      Literal f = Literal::make(DType::float32, out.dims);
      Literal::convert(ops[0]->data(), in_d, f.data(), DType::float32, static_cast<size_t>(n));
      Literal::convert(f.data(), DType::float32, out.data(), out.dtype, static_cast<size_t>(n));
      return out;
    }
    Literal::convert(ops[0]->data(), in_d, out.data(), out.dtype, static_cast<size_t>(n));
    return out;
  }
  if (op == Opcode::kIsFinite) {
    for (int64_t i = 0; i < n; ++i) out.set_i64(i, std::isfinite(ops[0]->get_f64(i)));
    return out;
  }
  if (op == Opcode::kCompare) {
    auto comparison = hlo::Comparison::of(inst);
    Dom dm = domain(in_d);
    for (int64_t i = 0; i < n; ++i) {
      int cmp = 0;
      bool unordered = false;
      if (dm == Dom::kFloat) {
        double a = ops[0]->get_f64(i), b = ops[1]->get_f64(i);
        unordered = std::isnan(a) || std::isnan(b);
        cmp = a < b ? -1 : a > b ? 1 : 0;
      } else if (dm == Dom::kSigned) {
        int64_t a = ops[0]->get_i64(i), b = ops[1]->get_i64(i);
        cmp = a < b ? -1 : a > b ? 1 : 0;
      } else {
        uint64_t a = ops[0]->get_u64(i), b = ops[1]->get_u64(i);
        cmp = a < b ? -1 : a > b ? 1 : 0;
      }
      out.set_i64(i, comparison.holds(cmp, unordered));
    }
    return out;
  }
  bool binary = hlo::is_binary_elementwise(op);
  if (domain(in_d) == Dom::kFloat) {
    for (int64_t i = 0; i < n; ++i) {
      double x = ops[0]->get_f64(i);
      out.set_f64(i, binary ? binary_float(op, x, ops[1]->get_f64(i)) : unary_float(op, x, in_d));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      uint64_t x = ops[0]->get_u64(i);
      if (domain(in_d) == Dom::kSigned) x = static_cast<uint64_t>(ops[0]->get_i64(i));
      uint64_t r;
      if (binary) {
        uint64_t y = domain(in_d) == Dom::kSigned ? static_cast<uint64_t>(ops[1]->get_i64(i)) : ops[1]->get_u64(i);
        r = binary_int(op, x, y, in_d, inst);
      } else {
        r = unary_int(op, x, in_d, inst);
      }
      out.set_i64(i, static_cast<int64_t>(r));
    }
  }
  return out;
}


// --- reductions ---------------------------------------------------------------------------------------
struct Acc {
  double f = 0;
  uint64_t u = 0;
};

void reduce_step(hlo::Reducer r, Dom dm, DType d, Acc& acc, const Literal& x, int64_t j) {
  using hlo::Reducer;
  if (dm == Dom::kFloat) {
    double v = x.get_f64(j);
    if (r == Reducer::kAdd) acc.f += v;
    else if (r == Reducer::kMul) acc.f *= v;
    else if (r == Reducer::kMax) acc.f = detail::float_max(acc.f, v);
    else if (r == Reducer::kMin) acc.f = detail::float_min(acc.f, v);
    else JITX_ASSERT(false, "float reducer {}", hlo::reducer_name(r));
    return;
  }
  uint64_t v = dm == Dom::kSigned ? static_cast<uint64_t>(x.get_i64(j)) : x.get_u64(j);
  if (r == Reducer::kAdd) acc.u = is_bool(d) ? (acc.u | v) : acc.u + v;
  else if (r == Reducer::kMul) acc.u = is_bool(d) ? (acc.u & v) : acc.u * v;
  else if (r == Reducer::kAnd) acc.u &= v;
  else if (r == Reducer::kOr) acc.u |= v;
  else if (r == Reducer::kMax)
    acc.u = dm == Dom::kSigned ? static_cast<uint64_t>(std::max(int64_t(acc.u), int64_t(v))) : std::max(acc.u, v);
  else if (r == Reducer::kMin)
    acc.u = dm == Dom::kSigned ? static_cast<uint64_t>(std::min(int64_t(acc.u), int64_t(v))) : std::min(acc.u, v);
  else JITX_ASSERT(false, "integer reducer {}", hlo::reducer_name(r));
}

void acc_init(Dom dm, Acc& acc, const Literal& init) {
  if (dm == Dom::kFloat) acc.f = init.get_f64(0);
  else if (dm == Dom::kSigned) acc.u = static_cast<uint64_t>(init.get_i64(0));
  else acc.u = init.get_u64(0);
}
void acc_store(Dom dm, Literal& out, int64_t i, const Acc& acc) {
  if (dm == Dom::kFloat) out.set_f64(i, acc.f);
  else out.set_i64(i, static_cast<int64_t>(acc.u));
}

Value eval_reduce(const Instruction& inst, const std::vector<const Literal*>& ops) {
  hlo::Reducer r = hlo::reducer_of(inst);
  const auto& dims = hlo::dimensions_of(inst);
  const Literal& x = *ops[0];
  std::vector<bool> reduced(x.dims.size(), false);
  for (auto d : dims) reduced[d] = true;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < x.dims.size(); ++i)
    if (!reduced[i]) out_dims.push_back(x.dims[i]);
  auto out_strides = detail::row_major_strides(out_dims);
  int64_t out_n = detail::num_elements(out_dims);
  detail::IndexCounter c(x.dims);
  int64_t n = x.size();
  auto out_index = [&](const std::vector<int64_t>& idx) {
    int64_t l = 0, k = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      if (!reduced[i]) l += idx[i] * out_strides[k++];
    return l;
  };
  if (r == hlo::Reducer::kArgmax || r == hlo::Reducer::kArgmin) {
    // Variadic (value, index) reduce; ties and NaNs pick the first index, as JAX's argmax does.
    const Literal& idx = *ops[1];
    Literal vals = Literal::make(x.dtype, out_dims), inds = Literal::make(idx.dtype, out_dims);
    std::vector<double> best(out_n);
    std::vector<int64_t> best_i(out_n, -1);
    bool is_max = r == hlo::Reducer::kArgmax;
    Dom dm = domain(x.dtype);
    // Integers compare exactly in their own domain (a double cannot tell 2^60 from 2^60 + 1).
    std::vector<uint64_t> best_u(out_n, 0);
    for (int64_t j = 0; j < n; ++j, c.next()) {
      int64_t o = out_index(c.idx);
      bool take = best_i[o] < 0;
      if (dm == Dom::kFloat) {
        double v = x.get_f64(j);
        if (!take) {
          double b = best[o];
          if (std::isnan(b)) take = false;
          else if (std::isnan(v)) take = true;
          else take = is_max ? v > b : v < b;
        }
        if (take) best[o] = v;
      } else {
        uint64_t v = dm == Dom::kSigned ? static_cast<uint64_t>(x.get_i64(j)) : x.get_u64(j);
        if (!take) {
          uint64_t b = best_u[o];
          bool gt = dm == Dom::kSigned ? static_cast<int64_t>(v) > static_cast<int64_t>(b) : v > b;
          bool lt = dm == Dom::kSigned ? static_cast<int64_t>(v) < static_cast<int64_t>(b) : v < b;
          take = is_max ? gt : lt;
        }
        if (take) best_u[o] = v;
      }
      if (take) {
        best_i[o] = idx.get_i64(j);
        copy_elem(vals, o, x, j);
      }
    }
    for (int64_t o = 0; o < out_n; ++o) inds.set_i64(o, best_i[o]);
    Value v;
    v.is_tuple = true;
    v.tuple.push_back(Value{vals, {}, false});
    v.tuple.push_back(Value{inds, {}, false});
    return v;
  }
  Dom dm = domain(x.dtype);
  std::vector<Acc> acc(out_n);
  for (auto& a : acc) acc_init(dm, a, *ops[1]);
  for (int64_t j = 0; j < n; ++j, c.next()) reduce_step(r, dm, x.dtype, acc[out_index(c.idx)], x, j);
  Literal out = Literal::make(x.dtype, out_dims);
  for (int64_t o = 0; o < out_n; ++o) acc_store(dm, out, o, acc[o]);
  return Value{out, {}, false};
}

Literal eval_reduce_window(const Instruction& inst, const std::vector<const Literal*>& ops) {
  const Literal& x = *ops[0];
  hlo::Reducer r = hlo::reducer_of(inst);
  hlo::Window win = hlo::Window::of(inst);
  const auto &wd = win.dimensions, &ws = win.strides, &bd = win.base_dilations, &wdl = win.window_dilations;
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  Dom dm = domain(x.dtype);
  auto xs = detail::row_major_strides(x.dims);
  size_t rank = x.dims.size();
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    Acc acc;
    acc_init(dm, acc, *ops[1]);
    detail::IndexCounter wc(wd);
    int64_t wn = detail::num_elements(wd);
    for (int64_t w = 0; w < wn; ++w, wc.next()) {
      bool inside = true;
      int64_t l = 0;
      for (size_t a = 0; a < rank && inside; ++a) {
        int64_t pos = oc.idx[a] * ws[a] + wc.idx[a] * wdl[a] - win.padding[a].low;  // in the dilated base
        if (pos < 0 || pos % bd[a] != 0) inside = false;
        else {
          int64_t src = pos / bd[a];
          if (src >= x.dims[a]) inside = false;
          else l += src * xs[a];
        }
      }
      if (inside) reduce_step(r, dm, x.dtype, acc, x, l);
    }
    acc_store(dm, out, o, acc);
  }
  return out;
}

Literal eval_dot(const Instruction& inst, const Literal& l, const Literal& r) {
  auto dn = hlo::DotDimensionNumbers::of(inst);
  const auto &lc = dn.lhs_contracting_dims, &rc = dn.rhs_contracting_dims;
  const auto &lb = dn.lhs_batch_dims, &rb = dn.rhs_batch_dims;
  auto in = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<int64_t> lfree, rfree;
  for (int64_t i = 0; i < static_cast<int64_t>(l.dims.size()); ++i)
    if (!in(lc, i) && !in(lb, i)) lfree.push_back(i);
  for (int64_t i = 0; i < static_cast<int64_t>(r.dims.size()); ++i)
    if (!in(rc, i) && !in(rb, i)) rfree.push_back(i);
  std::vector<int64_t> cdims;
  for (auto d : lc) cdims.push_back(l.dims[d]);
  auto ls = detail::row_major_strides(l.dims), rs = detail::row_major_strides(r.dims);
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  Dom dm = domain(l.dtype);
  detail::IndexCounter oc(out.dims);
  int64_t cn = detail::num_elements(cdims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t lbase = 0, rbase = 0, k = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++k) {
      lbase += oc.idx[k] * ls[lb[i]];
      rbase += oc.idx[k] * rs[rb[i]];
    }
    for (auto d : lfree) lbase += oc.idx[k++] * ls[d];
    for (auto d : rfree) rbase += oc.idx[k++] * rs[d];
    double facc = 0;
    uint64_t iacc = 0;
    detail::IndexCounter cc(cdims);
    for (int64_t j = 0; j < cn; ++j, cc.next()) {
      int64_t li = lbase, ri = rbase;
      for (size_t i = 0; i < lc.size(); ++i) {
        li += cc.idx[i] * ls[lc[i]];
        ri += cc.idx[i] * rs[rc[i]];
      }
      if (dm == Dom::kFloat) facc += l.get_f64(li) * r.get_f64(ri);
      else if (is_bool(l.dtype)) iacc |= (l.get_u64(li) & r.get_u64(ri));
      else if (dm == Dom::kSigned) iacc += static_cast<uint64_t>(l.get_i64(li)) * static_cast<uint64_t>(r.get_i64(ri));
      else iacc += l.get_u64(li) * r.get_u64(ri);
    }
    if (dm == Dom::kFloat) out.set_f64(o, facc);
    else out.set_i64(o, static_cast<int64_t>(iacc));
  }
  return out;
}

// --- data movement ------------------------------------------------------------------------------------
Literal eval_broadcast(const Instruction& inst, const Literal& x) {
  const auto& bd = hlo::broadcast_dimensions_of(inst);
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t j = 0;
    for (size_t i = 0; i < bd.size(); ++i) j += (x.dims[i] == 1 ? 0 : oc.idx[bd[i]]) * xs[i];
    copy_elem(out, o, x, j);
  }
  return out;
}

Literal eval_transpose(const Instruction& inst, const Literal& x) {
  const auto& perm = hlo::permutation_of(inst);
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t j = 0;
    for (size_t i = 0; i < perm.size(); ++i) j += oc.idx[i] * xs[perm[i]];
    copy_elem(out, o, x, j);
  }
  return out;
}

Literal eval_reverse(const Instruction& inst, const Literal& x) {
  const auto& dims = hlo::dimensions_of(inst);
  Literal out = Literal::make(x.dtype, x.dims);
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    auto idx = oc.idx;
    for (auto d : dims) idx[d] = x.dims[d] - 1 - idx[d];
    copy_elem(out, o, x, detail::linear_index(idx, xs));
  }
  return out;
}

Literal eval_slice(const Instruction& inst, const Literal& x) {
  auto slice = hlo::SliceConfig::of(inst);
  const auto &start = slice.start_indices, &strides = slice.strides;
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t j = 0;
    for (size_t i = 0; i < start.size(); ++i) j += (start[i] + oc.idx[i] * strides[i]) * xs[i];
    copy_elem(out, o, x, j);
  }
  return out;
}

// Start indices clamped so the slice stays inside the operand (StableHLO's dynamic_slice rule).
std::vector<int64_t> clamped_starts(const std::vector<const Literal*>& ops, size_t first,
                                    const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t v = ops[first + i]->dtype == DType::uint64
                    ? static_cast<int64_t>(std::min<uint64_t>(ops[first + i]->get_u64(0), INT64_MAX))
                    : ops[first + i]->get_i64(0);
    s.push_back(std::clamp<int64_t>(v, 0, dims[i] - sizes[i]));
  }
  return s;
}

Literal eval_dynamic_slice(const Instruction& inst, const std::vector<const Literal*>& ops) {
  const Literal& x = *ops[0];
  auto starts = clamped_starts(ops, 1, x.dims, inst.shape.dims);
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter oc(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, oc.next()) {
    int64_t j = 0;
    for (size_t i = 0; i < starts.size(); ++i) j += (starts[i] + oc.idx[i]) * xs[i];
    copy_elem(out, o, x, j);
  }
  return out;
}

Literal eval_dynamic_update_slice(const std::vector<const Literal*>& ops) {
  const Literal &x = *ops[0], &u = *ops[1];
  auto starts = clamped_starts(ops, 2, x.dims, u.dims);
  Literal out = Literal::make(x.dtype, x.dims);
  std::memcpy(out.data(), x.data(), x.nbytes());
  auto xs = detail::row_major_strides(x.dims);
  detail::IndexCounter uc(u.dims);
  for (int64_t k = 0; k < u.size(); ++k, uc.next()) {
    int64_t j = 0;
    for (size_t i = 0; i < starts.size(); ++i) j += (starts[i] + uc.idx[i]) * xs[i];
    copy_elem(out, j, u, k);
  }
  return out;
}

Literal eval_concatenate(const Instruction& inst, const std::vector<const Literal*>& ops) {
  int64_t dim = hlo::concatenate_dimension_of(inst);
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  auto os = detail::row_major_strides(out.dims);
  int64_t offset = 0;
  for (auto* x : ops) {
    detail::IndexCounter c(x->dims);
    for (int64_t k = 0; k < x->size(); ++k, c.next()) {
      auto idx = c.idx;
      idx[dim] += offset;
      copy_elem(out, detail::linear_index(idx, os), *x, k);
    }
    offset += x->dims[dim];
  }
  return out;
}

Literal eval_pad(const Instruction& inst, const Literal& x, const Literal& v) {
  auto padding = hlo::PaddingConfig::of(inst);
  const auto &lo = padding.low, &in = padding.interior;
  Literal out = Literal::make(x.dtype, inst.shape.dims);
  for (int64_t o = 0; o < out.size(); ++o) copy_elem(out, o, v, 0);
  auto os = detail::row_major_strides(out.dims);
  detail::IndexCounter c(x.dims);
  for (int64_t k = 0; k < x.size(); ++k, c.next()) {
    bool inside = true;
    int64_t l = 0;
    for (size_t a = 0; a < x.dims.size(); ++a) {
      int64_t p = lo[a] + c.idx[a] * (in[a] + 1);
      if (p < 0 || p >= out.dims[a]) inside = false;
      l += p * os[a];
    }
    if (inside) copy_elem(out, l, x, k);
  }
  return out;
}

Literal eval_iota(const Instruction& inst) {
  int64_t d = hlo::iota_dimension_of(inst);
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  detail::IndexCounter c(out.dims);
  for (int64_t o = 0; o < out.size(); ++o, c.next()) out.set_i64(o, c.idx[d]);
  return out;
}

Literal eval_bitcast(const Instruction& inst, const Literal& x) {
  Literal out = Literal::make(inst.shape.dtype, inst.shape.dims);
  JITX_ASSERT(out.nbytes() == x.nbytes(), "bitcast_convert size mismatch");
  std::memcpy(out.data(), x.data(), x.nbytes());
  return out;
}

Literal reshape_literal(const Literal& x, const std::vector<int64_t>& dims) {
  Literal out = x;  // row-major data is unchanged by a reshape: share the storage
  out.dims = dims;
  return out;
}

}  // namespace

namespace {
/// A host callback: the registered function on the operands' values (core/host_callback.h); a pure one's results.
Value eval_host_callback(const hlo::Instruction& inst, const std::vector<const detail::Literal*>& ops) {
  std::vector<detail::Literal> args;
  for (auto* o : ops) args.push_back(*o);
  std::vector<detail::Literal> outs = detail::call_host_callback(inst.attrs.get_int("callback_id"), std::move(args));
  Value v;
  if (!inst.shape.is_tuple) {
    JITX_ASSERT(outs.size() == 1, "host callback %{}: {} results for one", inst.name, outs.size());
    v.array = std::move(outs[0]);
    return v;
  }
  v.is_tuple = true;
  for (auto& o : outs) v.tuple.push_back(Value{std::move(o), {}, false});
  return v;
}
}  // namespace

Value evaluate(const hlo::Computation& comp, const std::vector<Value>& args) {
  std::unordered_map<const Instruction*, Value> env;
  for (auto& up : comp.instructions) {
    const Instruction& inst = *up;
    std::vector<const Value*> vals;
    std::vector<const Literal*> ops;
    for (auto* o : inst.operands) {
      auto it = env.find(o);
      JITX_ASSERT(it != env.end(), "operand %{} of %{} not evaluated", o->name, inst.name);
      vals.push_back(&it->second);
      ops.push_back(&it->second.array);
    }
    Value v;
    switch (inst.opcode) {
      case Opcode::kParameter:
        JITX_ASSERT(inst.parameter_number < static_cast<int64_t>(args.size()), "missing argument {}",
                    inst.parameter_number);
        v = args[inst.parameter_number];
        break;
      case Opcode::kConstant: v.array = *inst.literal; break;
      case Opcode::kIota: v.array = eval_iota(inst); break;
      case Opcode::kBroadcastInDim: v.array = eval_broadcast(inst, *ops[0]); break;
      case Opcode::kReshape: v.array = reshape_literal(*ops[0], inst.shape.dims); break;
      case Opcode::kTranspose: v.array = eval_transpose(inst, *ops[0]); break;
      case Opcode::kReverse: v.array = eval_reverse(inst, *ops[0]); break;
      case Opcode::kSlice: v.array = eval_slice(inst, *ops[0]); break;
      case Opcode::kDynamicSlice: v.array = eval_dynamic_slice(inst, ops); break;
      case Opcode::kDynamicUpdateSlice: v.array = eval_dynamic_update_slice(ops); break;
      case Opcode::kConcatenate: v.array = eval_concatenate(inst, ops); break;
      case Opcode::kPad: v.array = eval_pad(inst, *ops[0], *ops[1]); break;
      case Opcode::kBitcastConvert: v.array = eval_bitcast(inst, *ops[0]); break;
      case Opcode::kReduce: v = eval_reduce(inst, ops); break;
      case Opcode::kReduceWindow: v.array = eval_reduce_window(inst, ops); break;
      case Opcode::kDot: v.array = eval_dot(inst, *ops[0], *ops[1]); break;
      case Opcode::kGather: v.array = eval_gather(inst, *ops[0], *ops[1]); break;
      case Opcode::kScatter: v.array = eval_scatter(inst, *ops[0], *ops[1], *ops[2]); break;
      case Opcode::kSort: v = eval_sort(inst, ops); break;
      case Opcode::kTopK: v = eval_top_k(inst, *ops[0]); break;
      case Opcode::kConvolution: v.array = eval_convolution(inst, *ops[0], *ops[1]); break;
      case Opcode::kCustomCall:
        v = hlo::is_host_callback(inst) ? eval_host_callback(inst, ops) : eval_linalg(inst, ops);
        break;
      case Opcode::kCopy: v = *vals[0]; break;
      case Opcode::kAllReduce:
      case Opcode::kAllGather:
      case Opcode::kReduceScatter:
      case Opcode::kAllToAll:
      case Opcode::kCollectivePermute:
      case Opcode::kAllReduceStart:  // the evaluator runs an asynchronous collective at its start
      case Opcode::kAllGatherStart:
      case Opcode::kReduceScatterStart:
      case Opcode::kAllToAllStart:
      case Opcode::kCollectivePermuteStart: v.array = eval_collective(inst, *ops[0]); break;
      case Opcode::kAllReduceDone:
      case Opcode::kAllGatherDone:
      case Opcode::kReduceScatterDone:
      case Opcode::kAllToAllDone:
      case Opcode::kCollectivePermuteDone: v = *vals[0]; break;
      case Opcode::kPartitionId: v.array = eval_partition_id(); break;
      case Opcode::kTuple:
      case Opcode::kOptimizationBarrier:
        v.is_tuple = true;
        for (auto* x : vals) v.tuple.push_back(*x);
        break;
      case Opcode::kGetTupleElement: v = vals[0]->tuple.at(hlo::tuple_index_of(inst)); break;
      case Opcode::kWhile: {
        // The loop runs natively: cond and body are evaluated once per iteration on the carried values.
        std::vector<Value> state;
        for (auto* x : vals) state.push_back(*x);
        const hlo::Computation& cond = *inst.called.at(0);
        const hlo::Computation& body = *inst.called.at(1);
        while (evaluate(cond, state).array.get_i64(0) != 0) state = evaluate(body, state).tuple;
        v.is_tuple = true;
        v.tuple = std::move(state);
        break;
      }
      case Opcode::kConditional: {
        // A pred index picks branch 0 when true (XLA's true_computation); an s32 index out of range picks the last.
        int64_t n = static_cast<int64_t>(inst.called.size());
        int64_t b = ops[0]->get_i64(0);
        if (ops[0]->dtype == DType::bool_) b = b ? 0 : 1;
        else if (b < 0 || b >= n) b = n - 1;
        std::vector<Value> sub;
        for (size_t k = 1; k < vals.size(); ++k) sub.push_back(*vals[k]);
        v = evaluate(*inst.called.at(b), sub);
        break;
      }
      case Opcode::kCall:
      case Opcode::kFusion: {
        std::vector<Value> sub;
        for (auto* x : vals) sub.push_back(*x);
        v = evaluate(*inst.called.at(0), sub);
        break;
      }
      default:
        if (hlo::is_elementwise(inst.opcode)) {
          v.array = eval_elementwise(inst, ops);
          break;
        }
        unsupported(inst);
    }
    env.emplace(&inst, std::move(v));
  }
  JITX_ASSERT(comp.root, "computation {} has no root", comp.name);
  return env.at(comp.root);
}

Value evaluate(const hlo::Module& m, const std::vector<Literal>& args) {
  std::vector<Value> vs;
  for (auto& a : args) vs.push_back(Value{a, {}, false});
  return evaluate(*m.entry, vs);
}

}  // namespace jitx::evaluator
