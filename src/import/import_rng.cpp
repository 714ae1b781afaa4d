// The StableHLO importer's rng_bit_generator: expanded into jitx's integer ops as XLA expands it (its
// RngBitGeneratorExpander over the ThreeFry-2x32 and Philox-4x32-10 bit generators), so the bits are the ones JAX
// gets from XLA:CPU. The state is ui64[2] (THREE_FRY: key, counter) or ui64[2|3] (PHILOX: key, then a 128-bit
// counter; with two words the counter's high word is the key's). DEFAULT is PHILOX, XLA:CPU's default.
// Outputs narrower than 32 bits take the low bits of 32-bit draws; signed and float outputs are the bits bitcast.
#include <fmt/format.h>

#include <array>

#include "hlo/ir/attributes.h"
#include "import/stablehlo_import.h"

namespace jitx::import {
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

using Dims = std::vector<int64_t>;

/// Builds elementwise integer expressions on arrays of one shape (scalar constants splatted).
struct Ops {
  Computation& c;

  Instruction* splat(DType d, double v, const Dims& dims) {
    Instruction* k = c.add_scalar_constant(d, v);
    if (dims.empty()) return k;
    return bcast(k, dims);
  }
  Instruction* bcast(Instruction* scalar, const Dims& dims) {
    return c.add(Opcode::kBroadcastInDim, hlo::Shape(scalar->shape.dtype, dims), {scalar},
                 {{"broadcast_dimensions", std::vector<int64_t>{}}});
  }
  Instruction* bin(Opcode o, Instruction* a, Instruction* b) { return c.add(o, a->shape, {a, b}); }
  Instruction* add(Instruction* a, Instruction* b) { return bin(Opcode::kAdd, a, b); }
  Instruction* xor_(Instruction* a, Instruction* b) { return bin(Opcode::kXor, a, b); }
  Instruction* addk(Instruction* a, double v) { return add(a, splat(a->shape.dtype, v, a->shape.dims)); }
  Instruction* shl(Instruction* a, int n) {
    return bin(Opcode::kShiftLeft, a, splat(a->shape.dtype, n, a->shape.dims));
  }
  Instruction* shr(Instruction* a, int n) {
    return bin(Opcode::kShiftRightLogical, a, splat(a->shape.dtype, n, a->shape.dims));
  }
  Instruction* convert(Instruction* a, DType d) { return c.add(Opcode::kConvert, hlo::Shape(d, a->shape.dims), {a}); }
  Instruction* reshape(Instruction* a, const Dims& dims) {
    return c.add(Opcode::kReshape, hlo::Shape(a->shape.dtype, dims), {a});
  }
  Instruction* slice1(Instruction* a, int64_t lo, int64_t hi) {  // a rank-1 slice
    hlo::SliceConfig sc{{lo}, {hi}, {1}};
    return c.add(Opcode::kSlice, hlo::Shape(a->shape.dtype, {hi - lo}), {a}, hlo::to_params(sc));
  }
  Instruction* element(Instruction* v, int64_t k) { return reshape(slice1(v, k, k + 1), {}); }
  Instruction* concat(const std::vector<Instruction*>& xs, int64_t dim) {
    Dims d = xs[0]->shape.dims;
    d[dim] = 0;
    for (auto* x : xs) d[dim] += x->shape.dims[dim];
    return c.add(Opcode::kConcatenate, hlo::Shape(xs[0]->shape.dtype, d), xs, {{"dimension", dim}});
  }
  Instruction* iota(DType d, const Dims& dims, int64_t axis) {
    return c.add(Opcode::kIota, hlo::Shape(d, dims), {}, {{"iota_dimension", axis}});
  }
  Instruction* lt_unsigned(Instruction* a, Instruction* b) {
    hlo::Comparison cmp{hlo::ComparisonDirection::kLt, hlo::ComparisonType::kUnsigned};
    return c.add(Opcode::kCompare, hlo::Shape(DType::bool_, a->shape.dims), {a, b}, hlo::to_params(cmp));
  }
  Instruction* select(Instruction* p, Instruction* a, Instruction* b) {
    return c.add(Opcode::kSelect, a->shape, {p, a, b});
  }
  std::array<Instruction*, 2> halves(Instruction* u64) {  // (low, high) u32 words
    return {convert(u64, DType::uint32), convert(shr(u64, 32), DType::uint32)};
  }
  Instruction* join(Instruction* lo, Instruction* hi) {  // two u32 words -> u64
    return bin(Opcode::kOr, convert(lo, DType::uint64), shl(convert(hi, DType::uint64), 32));
  }
  /// The 128-bit (low, high) plus a u64 (broadcast to add's shape), with the carry.
  std::array<Instruction*, 2> add128(Instruction* low, Instruction* high, Instruction* add_) {
    const Dims& d = add_->shape.dims;
    Instruction* l = d.empty() ? low : bcast(low, d);
    Instruction* sum = add(l, add_);
    Instruction* h = d.empty() ? high : bcast(high, d);
    Instruction* h1 = d.empty() ? addk(high, 1) : bcast(addk(high, 1), d);
    return {sum, select(lt_unsigned(sum, l), h1, h)};
  }

  Instruction* rotl32(Instruction* v, int d) { return bin(Opcode::kOr, shl(v, d), shr(v, 32 - d)); }

  /// Threefry-2x32 with 20 rounds (Salmon et al. 2011), key words k0, k1 broadcast to x's shape.
  std::array<Instruction*, 2> threefry(std::array<Instruction*, 2> x, Instruction* k0, Instruction* k1) {
    static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    Instruction* k2 = xor_(xor_(splat(DType::uint32, 0x1BD11BDA, k0->shape.dims), k0), k1);
    std::array<Instruction*, 3> ks = {k0, k1, k2};
    x[0] = add(x[0], ks[0]);
    x[1] = add(x[1], ks[1]);
    for (int group = 0; group < 5; ++group) {
      for (int r = 0; r < 4; ++r) {
        x[0] = add(x[0], x[1]);
        x[1] = xor_(x[0], rotl32(x[1], kRot[(group % 2) * 4 + r]));
      }
      x[0] = add(x[0], ks[(group + 1) % 3]);
      x[1] = addk(add(x[1], ks[(group + 2) % 3]), group + 1);
    }
    return x;
  }

  /// Philox-4x32 with 10 rounds; key words k0, k1 broadcast to x's shape.
  std::array<Instruction*, 4> philox(std::array<Instruction*, 4> x, Instruction* k0, Instruction* k1) {
    auto mul_hi_lo = [&](Instruction* a, double m) {
      Instruction* p = bin(Opcode::kMultiply, convert(a, DType::uint64), splat(DType::uint64, m, a->shape.dims));
      return halves(p);  // (low, high)
    };
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 = addk(k0, 0x9E3779B9);
        k1 = addk(k1, 0xBB67AE85);
      }
      auto p0 = mul_hi_lo(x[0], 0xD2511F53), p1 = mul_hi_lo(x[2], 0xCD9E8D57);
      x = {xor_(xor_(p1[1], x[1]), k0), p1[0], xor_(xor_(p0[1], x[3]), k1), p0[0]};
    }
    return x;
  }
};

int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (auto v : d) n *= v;
  return n;
}

/// XLA's split of a shape into halves for 32-bit threefry draws: the first even axis, else the largest one.
int64_t split_axis(const Dims& d) {
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] % 2 == 0) return static_cast<int64_t>(i);
  int64_t best = 0;
  for (size_t i = 1; i < d.size(); ++i)
    if (d[i] > d[best]) best = static_cast<int64_t>(i);
  return best;
}

/// Threefry of counter + (the row-major index) over `dims`: the two u32 output words.
std::array<Instruction*, 2> threefry_block(Ops& o, Instruction* key, Instruction* counter, const Dims& dims) {
  Instruction* in = dims.empty() ? counter : o.bcast(counter, dims);
  int64_t trailing = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (dims[i] < 2) continue;
    Instruction* idx = o.iota(DType::uint64, dims, i);
    if (trailing != 1) idx = o.bin(Opcode::kMultiply, idx, o.splat(DType::uint64, static_cast<double>(trailing), dims));
    in = o.add(in, idx);
    trailing *= dims[i];
  }
  auto k = o.halves(key);
  Instruction* k0 = dims.empty() ? k[0] : o.bcast(k[0], dims);
  Instruction* k1 = dims.empty() ? k[1] : o.bcast(k[1], dims);
  return o.threefry(o.halves(in), k0, k1);
}

/// The bits (as an unsigned type of the output's width) and the new state words after the key.
std::pair<Instruction*, Instruction*> three_fry(Ops& o, Instruction* state, const Dims& dims, int bits) {
  Instruction* key = o.element(state, 0);
  Instruction* counter = o.element(state, 1);
  if (bits == 64) {
    auto x = threefry_block(o, key, counter, dims);
    return {o.join(x[0], x[1]), o.reshape(o.addk(counter, static_cast<double>(numel(dims))), {1})};
  }
  Dims half = dims.empty() ? Dims{1} : dims;
  int64_t ax = split_axis(dims);
  if (!dims.empty()) half[ax] = (dims[ax] + 1) / 2;
  auto x = threefry_block(o, key, counter, half);
  Instruction* out;
  if (dims.empty()) {
    out = o.reshape(x[0], {});
  } else {
    Dims with1 = half;
    with1.insert(with1.begin() + ax + 1, 1);
    out = o.concat({o.reshape(x[0], with1), o.reshape(x[1], with1)}, ax + 1);
    Dims even = dims;
    even[ax] = half[ax] * 2;
    out = o.reshape(out, even);
    if (even[ax] != dims[ax]) {
      hlo::SliceConfig sc;
      for (size_t d = 0; d < dims.size(); ++d) {
        sc.start_indices.push_back(0);
        sc.limit_indices.push_back(dims[d]);
        sc.strides.push_back(1);
      }
      out = o.c.add(Opcode::kSlice, hlo::Shape(DType::uint32, dims), {out}, hlo::to_params(sc));
    }
  }
  Instruction* next = o.reshape(o.addk(counter, static_cast<double>(numel(half))), {1});
  return {out, next};
}

std::pair<Instruction*, Instruction*> philox(Ops& o, Instruction* state, int64_t words, const Dims& dims, int bits) {
  Instruction* key = o.element(state, 0);
  Instruction* low = o.element(state, 1);
  Instruction* high = words >= 3 ? o.element(state, 2) : key;
  int64_t n = numel(dims);
  int64_t n4 = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
  auto ctr = o.add128(low, high, o.iota(DType::uint64, {n4}, 0));
  auto lo = o.halves(ctr[0]), hi = o.halves(ctr[1]);
  auto k = o.halves(key);
  auto x = o.philox({lo[0], lo[1], hi[0], hi[1]}, o.bcast(k[0], {n4}), o.bcast(k[1], {n4}));
  std::vector<Instruction*> parts;
  if (bits == 64)
    parts = {o.join(x[0], x[1]), o.join(x[2], x[3])};
  else
    parts.assign(x.begin(), x.end());
  int64_t len = bits == 64 ? (n + 1) / 2 : n4;
  for (auto*& p : parts) p = o.reshape(p, {len, 1});
  Instruction* flat = o.reshape(o.concat(parts, 1), {len * static_cast<int64_t>(parts.size())});
  Instruction* out = o.reshape(o.slice1(flat, 0, n), dims);
  auto next = o.add128(low, high, o.splat(DType::uint64, static_cast<double>(n4), {}));
  Instruction* st = words >= 3 ? o.concat({o.reshape(next[0], {1}), o.reshape(next[1], {1})}, 0)
                               : o.reshape(next[0], {1});
  return {out, st};
}

}  // namespace

std::vector<Instruction*> build_rng_bit_generator(Computation& comp, OpSyntax& op) {
  if (op.operands.size() != 1 || op.result_types.size() != 2)
    op_bad(op, "expected one state operand and two results (the new state and the bits)");
  const std::string* a = op_attr(op, {"rng_algorithm", "algorithm"});
  std::string alg = !a ? "DEFAULT"
                    : a->find("THREE_FRY") != std::string::npos ? "THREE_FRY"
                    : a->find("PHILOX") != std::string::npos  ? "PHILOX"
                    : a->find("DEFAULT") != std::string::npos ? "DEFAULT"
                                                              : *a;
  if (alg != "THREE_FRY" && alg != "PHILOX" && alg != "DEFAULT")
    op_bad(op, fmt::format("unknown algorithm '{}' (expected DEFAULT, THREE_FRY or PHILOX)", alg));
  if (alg == "DEFAULT") alg = "PHILOX";
  Instruction* state = op.operands[0];
  hlo::Shape ss = state->shape, out = shape_of(op.result_types[1]);
  if (ss.is_tuple || ss.dims.size() != 1 || dtype_bits(ss.dtype) != 64 || !is_integer(ss.dtype))
    op_unsupported(op, fmt::format("with a {} state is not supported (expected a ui64[2] or ui64[3] state)", ss.str()));
  int64_t words = ss.dims[0];
  if (alg == "THREE_FRY" ? words != 2 : (words != 2 && words != 3))
    op_bad(op, fmt::format("{} takes a state of {} 64-bit words, got {}", alg, alg == "THREE_FRY" ? "2" : "2 or 3",
                           words));
  if (!shape_of(op.result_types[0]).same_type(ss)) op_bad(op, "the new state must have the state's type");
  if (out.is_tuple || out.dtype == DType::bool_)
    op_unsupported(op, fmt::format("producing {} is not supported (expected an integer or float type)", out.str()));
  int bits = dtype_bits(out.dtype);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) op_unsupported(op, "with this output width");
  Ops o{comp};
  if (ss.dtype != DType::uint64) state = o.c.add(Opcode::kBitcastConvert, hlo::Shape(DType::uint64, ss.dims), {state});
  auto [raw, next] = alg == "THREE_FRY" ? three_fry(o, state, out.dims, bits) : philox(o, state, words, out.dims, bits);
  DType u = bits == 8 ? DType::uint8 : bits == 16 ? DType::uint16 : bits == 32 ? DType::uint32 : DType::uint64;
  if (raw->shape.dtype != u) raw = o.convert(raw, u);  // the low bits of 32-bit draws
  if (u != out.dtype) raw = comp.add(Opcode::kBitcastConvert, out, {raw});
  Instruction* st = o.concat({o.reshape(o.element(state, 0), {1}), next}, 0);
  if (ss.dtype != DType::uint64) st = comp.add(Opcode::kBitcastConvert, ss, {st});
  return {st, raw};
}

}  // namespace jitx::import
