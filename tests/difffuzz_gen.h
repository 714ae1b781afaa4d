// The differential fuzzer's program generator (tests/difffuzz_test.cpp runs and compares the programs).
//
// A program is drawn while it is traced: a pool of values starts with the inputs, and each step draws an op from
// the primitive table (elementwise ops of every dtype, structural ops, reductions, windows, dots, convolutions,
// gathers and scatters with random dimension numbers, sorts, dynamic slices, cond/while/scan with generated
// bodies), picks operands of the right kinds from the pool (coercing one when none fits: a convert, a reshape or
// a broadcast of one element), and adds the result. Everything comes from one seeded generator, so a seed names
// a program. Each value carries a depth: 0 when every op on its path is correctly rounded and keeps its order
// (the cpu backend must then equal the interpreter bit for bit), otherwise the number of inexact ops on its
// longest path (transcendental functions, float sums in another order, every float op under excess precision),
// which scales its tolerance. Ops whose result jumps on a tiny change of their input (comparisons, argmax, sort
// keys, float->int converts, rem, floor/ceil/round, bitcasts) take only depth-0 operands, so an inexact input
// never turns into a different integer or boolean (README "The differential fuzzer": the comparison rules).
// Smooth mode (for grad against finite differences) draws only f64 inputs and differentiable ops.
#pragma once
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/trace.h"
#include "jitx/jitx.h"

namespace jitx::difffuzz {

inline const std::vector<DType> kAllDTypes = {
    DType::bool_,  DType::int8,   DType::int16,   DType::int32,    DType::int64,   DType::uint8,  DType::uint16,
    DType::uint32, DType::uint64, DType::float16, DType::bfloat16, DType::float32, DType::float64};

struct Val {
  Array a;
  int depth = 0;  // 0: exact (bit-exact comparable); else inexact ops on the longest path
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

/// The generator of one program (or of one control-flow body, with its own seed and pool).
class Gen {
 public:
  Gen(uint64_t seed, bool smooth, bool excess) : g_(seed), smooth_(smooth), excess_(excess) {}

  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g_); }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uni(0, static_cast<int64_t>(v.size()) - 1))];
  }
  uint64_t sub_seed() { return g_(); }
  bool smooth() const { return smooth_; }
  bool excess() const { return excess_; }
  int nest = 0;  // control-flow nesting depth
  std::vector<Val> pool;

  DType random_dtype() { return smooth_ ? DType::float64 : pick(kAllDTypes); }
  Shape random_shape(int max_rank = 3) {
    Shape s(static_cast<size_t>(uni(0, max_rank)));
    for (auto& d : s) d = coin(0.07) ? 0 : pick(std::vector<int64_t>{1, 1, 2, 3, 4, 5});
    return s;
  }

  /// A host constant (a const of the jaxpr, not an op): small values exactly representable in every dtype.
  Array constant(DType d, const Shape& s) {
    std::vector<double> v(static_cast<size_t>(numel(s)));
    for (auto& x : v) x = is_bool(d) ? static_cast<double>(coin()) : is_floating(d) ? uni(-8, 8) / 4.0 : uni(-3, 3);
    return array_from_data(v.data(), DType::float64, s, d);
  }
  Array scalar(double x, DType d) { return array_from_data(&x, DType::float64, {}, d); }

  /// Adds a result with depth = max of its operands' + inc (inc only for floats).
  void add(Array a, std::initializer_list<int> depths, bool inexact) {
    int d = 0;
    for (int x : depths) d = std::max(d, x);
    if (inexact && is_floating(a.dtype())) d += 1;
    if (a.size() > 512) return;  // too large to keep using (it stays in the program, unused)
    pool.push_back({std::move(a), d});
  }
  /// Whether a float elementwise op on d is inexact: transcendental, or any arithmetic under excess precision.
  bool arith_inexact(DType d) const { return excess_ && is_floating(d); }

  /// A pool value (exact ones only when need_exact), or nullptr.
  const Val* any(const std::function<bool(const Val&)>& ok) {
    std::vector<const Val*> c;
    for (auto& v : pool)
      if (ok(v)) c.push_back(&v);
    return c.empty() ? nullptr : pick(c);
  }

  /// A value of dtype d and shape s made from the pool: one that fits, or a convert plus a reshape or a broadcast
  /// of one element, or a constant.
  Val like(DType d, const Shape& s, bool need_exact = false) {
    if (coin(0.75))
      if (const Val* v =
              any([&](const Val& x) { return x.a.dtype() == d && x.a.shape() == s && (!need_exact || x.depth == 0); }))
        return *v;
    const Val* src = any([&](const Val& x) {
      bool exact = x.depth == 0;
      return (!need_exact || exact) && (exact || is_floating(d) || !is_floating(x.a.dtype())) && x.a.size() > 0;
    });
    if (!src || coin(0.05)) return {constant(d, s), 0};
    Array a = src->a;
    if (a.dtype() != d) a = lax::convert_element_type(a, d);
    if (a.size() == numel(s)) return {a.shape() == s ? a : lax::reshape(a, s), src->depth};
    Shape ones(a.shape().size(), 1);
    Array first = lax::reshape(lax::slice(a, Shape(a.shape().size(), 0), ones), {});
    return {lax::broadcast_in_dim(first, s, {}), src->depth};
  }
  /// A random pool value of a float dtype (smooth mode: any), or a coerced one.
  Val some(const std::function<bool(DType)>& dtype_ok, bool need_exact = false) {
    if (const Val* v = any([&](const Val& x) { return dtype_ok(x.a.dtype()) && (!need_exact || x.depth == 0); }))
      return *v;
    DType d = random_dtype();
    for (int i = 0; i < 20 && !dtype_ok(d); ++i) d = pick(kAllDTypes);
    if (!dtype_ok(d)) d = DType::float32;
    return like(d, random_shape(), need_exact);
  }

  void step();  // one random op onto the pool
  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      try {
        step();
      } catch (const Error&) {
        ++rejected;  // an op refused its (generated) input: counted, the program goes on without it
      }
    }
  }
  int rejected = 0;

  // The op families (difffuzz_ops.h).
  void unary_float();
  void unary_other();
  void binary();
  void compare_select();
  void convert();
  void structural();
  void concat_pad();
  void reduction();
  void window();
  void dot();
  void conv();
  void gather();
  void scatter();
  void dynamic();
  void sort();
  void cond();
  void loop(bool scan);

 private:
  std::mt19937_64 g_;
  bool smooth_, excess_;
};

inline bool is_float_dt(DType d) { return is_floating(d); }
inline bool is_int_dt(DType d) { return is_integer(d); }
inline bool is_signed_or_float(DType d) { return is_floating(d) || is_signed_integer(d); }
inline bool is_numeric(DType d) { return !is_bool(d); }
inline bool any_dt(DType) { return true; }

}  // namespace jitx::difffuzz

#include "difffuzz_ops.h"
