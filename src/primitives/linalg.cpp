// Linear-algebra primitives (JAX's jax.lax.linalg): lu, cholesky, triangular_solve, qr, eigh, svd. Each works on
// the last two axes, batched over the leading ones, f32 and f64, and lowers to one HLO custom-call with
// custom_call_target="jitx.linalg.<name>" and its flags as attributes: the CPU backend runs it as an Eigen library
// op (backends/cpu/eigen_linalg.cpp), the interpreter with plain loops (hlo/evaluator/evaluator_linalg.cpp). The
// JVP rules are JAX's (linalg_ad.cpp); vmap moves the batch axis in front.
#include "primitives/linalg_rules.h"

#include "core/errors.h"
#include "hlo/ir/custom_call.h"
#include "lowering/lower_ctx.h"
#include "transforms/ad.h"
#include "transforms/batching.h"

namespace jitx::detail {
namespace {
using hlo::Opcode;
using Outs = std::vector<ShapedArray>;
using Insts = std::vector<hlo::Instruction*>;

/// The batch dims and the matrix of an operand: rank >= 2, f32 or f64.
void check_matrix(std::string_view op, const ShapedArray& x, bool square, bool empty_half_ok = false) {
  if (x.ndim() < 2)
    throw_error<ShapeError>(op, "needs an array of rank at least 2 (a batch of matrices), got {}", x.str());
  // An empty f16/bf16 matrix has nothing to decompose: qr and svd (so pinv and lstsq) give their empty results in
  // the dtype, as JAX's do (its other decompositions refuse f16/bf16 even when empty).
  bool empty_half = empty_half_ok && (x.dtype == DType::float16 || x.dtype == DType::bfloat16) && x.size() == 0;
  if (x.dtype != DType::float32 && x.dtype != DType::float64 && !empty_half)
    throw_error<TypeError>(op, "needs a float32 or float64 operand, got {}", x.str());
  if (square && x.shape[x.ndim() - 1] != x.shape[x.ndim() - 2])
    throw_error<ShapeError>(op, "needs square matrices in the last two axes, got {}", x.str());
}

Shape with_tail(const ShapedArray& x, std::vector<int64_t> tail) {
  Shape s(x.shape.begin(), x.shape.end() - 2);
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

/// One custom-call for the primitive's outputs (a tuple when several), unpacked into its elements.
Insts lower_custom(LowerCtx& c, std::span<hlo::Instruction* const> a, const std::string& target, Params attrs) {
  std::vector<hlo::Shape> shapes;
  for (auto& av : c.out_avals) shapes.push_back(hlo_shape(av));
  hlo::Shape s = shapes.size() == 1 ? shapes[0] : hlo::Shape::tuple(shapes);
  attrs.set("custom_call_target", std::string(hlo::kLinalgTargetPrefix) + target);
  auto* inst = c.comp->add(Opcode::kCustomCall, s, {a.begin(), a.end()}, std::move(attrs));
  if (!s.is_tuple) return {inst};
  Insts out;
  for (size_t k = 0; k < shapes.size(); ++k)
    out.push_back(c.comp->add(Opcode::kGetTupleElement, shapes[k], {inst}, Params{{"index", static_cast<int64_t>(k)}}));
  return out;
}

/// The params named in keys, as custom-call attributes (bools).
Params flags(const Params& ps, std::initializer_list<const char*> keys) {
  Params out;
  for (auto* k : keys) out.set(k, ps.get_bool(k, false));
  return out;
}

Primitive matrix_primitive(std::string name, std::initializer_list<const char*> keys) {
  Primitive p;
  p.name = name;
  p.num_operands = 1;
  p.batch = leading_batch(name, [](Params&, int64_t) {});
  std::vector<std::string> ks(keys.begin(), keys.end());
  p.lower = [name, ks](LowerCtx& c, std::span<hlo::Instruction* const> a) {
    Params attrs;
    for (auto& k : ks) attrs.set(k, c.params.get_bool(k, false));
    return lower_custom(c, a, name, attrs);
  };
  return p;
}

/// lu of a non-square matrix: the square LU of it padded with zeros to s = max(m, n), sliced. Zero rows (m < n)
/// never win a pivot search over a nonzero column (and lose ties to the real rows above them), and zero columns
/// (m > n) come after every real one with zero pivots that swap nothing (getrf's rule, and both backends'): so
/// the padded factorisation's first m rows (n columns) are the wide (tall) one's.
Insts lower_lu(LowerCtx& c, std::span<hlo::Instruction* const> a) {
  const ShapedArray& x = c.in_avals[0];
  int64_t r = x.ndim(), m = x.shape[r - 2], n = x.shape.back();
  if (m == n) return lower_custom(c, a, "lu", Params{});
  int64_t s = std::max(m, n);
  std::vector<int64_t> zeros(static_cast<size_t>(r), 0), hi = zeros;
  hi[static_cast<size_t>(r - 2)] = s - m;
  hi[static_cast<size_t>(r - 1)] = s - n;
  Shape sq = x.shape, sv(x.shape.begin(), x.shape.end() - 1);
  sq[r - 2] = sq[r - 1] = s;
  sv.back() = s;
  auto zero_lit = Literal::make(x.dtype, {});  // make leaves the value uninitialised: the padding must be 0
  zero_lit.set_f64(0, 0.0);
  auto* zero = c.comp->add_constant(std::move(zero_lit));
  Params pad{{"edge_padding_low", zeros}, {"edge_padding_high", hi}, {"interior_padding", zeros}};
  auto* padded = c.comp->add(Opcode::kPad, hlo_shape(ShapedArray{sq, x.dtype, false}), {a[0], zero}, pad);
  std::vector<ShapedArray> square{ShapedArray{sq, x.dtype, false}, ShapedArray{sv, DType::int32, false},
                                  ShapedArray{sv, DType::int32, false}};
  LowerCtx sc = c;
  sc.out_avals = square;
  Insts full = lower_custom(sc, std::span<hlo::Instruction* const>(&padded, 1), "lu", Params{});
  auto slice = [&](hlo::Instruction* v, const ShapedArray& out) {
    std::vector<int64_t> limit(out.shape.begin(), out.shape.end());
    return c.comp->add(Opcode::kSlice, hlo_shape(out), {v},
                       Params{{"start_indices", std::vector<int64_t>(limit.size(), 0)}, {"limit_indices", limit},
                              {"strides", std::vector<int64_t>(limit.size(), 1)}});
  };
  return {slice(full[0], c.out_avals[0]), slice(full[1], c.out_avals[1]), slice(full[2], c.out_avals[2])};
}

BatchResult triangular_solve_batch(std::span<const Array> args, std::span<const int64_t> dims, const Params& ps) {
  int64_t n = batch_size(args, dims);
  Array a = batch_at(args[0], dims[0], n, 0), b = batch_at(args[1], dims[1], n, 0);
  return {{bind1(primitive("triangular_solve"), {a, b}, ps)}, {0}};
}

const bool kLinalgRegistered = [] {
  {
    // lu: (lu, pivots, permutation) of m x n matrices, partial pivoting: a[perm] = L U with L unit lower (m x k)
    // and U upper (k x n), k = min(m, n); pivots [.., k], perm [.., m], as LAPACK's getrf and JAX.
    Primitive p = matrix_primitive("lu", {});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      check_matrix("lu", in[0], false);
      int64_t m = in[0].shape[in[0].ndim() - 2], n = in[0].shape.back();
      Shape v(in[0].shape.begin(), in[0].shape.end() - 1), pv = v;
      v.back() = m;
      pv.back() = std::min(m, n);
      return Outs{ShapedArray{in[0].shape, in[0].dtype, false}, ShapedArray{pv, DType::int32, false},
                  ShapedArray{v, DType::int32, false}};
    };
    p.lower = lower_lu;
    p.jvp = lu_jvp;
    register_primitive(std::move(p));
  }
  {
    // cholesky: the lower factor L of a symmetric positive-definite matrix (only its lower triangle is read);
    // NaN where it is not positive definite.
    Primitive p = matrix_primitive("cholesky", {});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      check_matrix("cholesky", in[0], true);
      return Outs{ShapedArray{in[0].shape, in[0].dtype, in[0].weak_type}};  // weak stays weak, as JAX's
    };
    p.jvp = cholesky_jvp;
    register_primitive(std::move(p));
  }
  {
    // triangular_solve[left_side lower transpose_a unit_diagonal](a, b): op(a) x = b (left) or x op(a) = b.
    Primitive p;
    p.name = "triangular_solve";
    p.num_operands = 2;
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto &a = in[0], &b = in[1];
      check_matrix("triangular_solve", a, true);
      check_matrix("triangular_solve", b, false);
      if (a.dtype != b.dtype)
        throw_error<TypeError>("triangular_solve", "a and b must have the same dtype, got {} and {}", a.str(),
                               b.str());
      if (a.ndim() != b.ndim() || !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin()))
        throw_error<ShapeError>("triangular_solve", "a {} and b {} must have the same batch dimensions", a.str(),
                                b.str());
      bool left = ps.get_bool("left_side", false);
      int64_t m = a.shape.back(), k = left ? b.shape[b.ndim() - 2] : b.shape.back();
      if (k != m)
        throw_error<ShapeError>("triangular_solve", "a {} does not fit b {} ({} side: b needs {} {})", a.str(),
                                b.str(), left ? "left" : "right", m, left ? "rows" : "columns");
      return Outs{ShapedArray{b.shape, b.dtype, false}};
    };
    p.lower = [](LowerCtx& c, std::span<hlo::Instruction* const> a) {
      return lower_custom(c, a, "triangular_solve",
                          flags(c.params, {"left_side", "lower", "transpose_a", "unit_diagonal"}));
    };
    p.jvp = triangular_solve_jvp;
    p.transpose = triangular_solve_transpose;
    p.batch = triangular_solve_batch;
    register_primitive(std::move(p));
  }
  {
    // qr[full_matrices]: q [.., m, k] with orthonormal columns and upper-triangular r [.., k, n]; k = min(m, n),
    // or m with full_matrices.
    Primitive p = matrix_primitive("qr", {"full_matrices"});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& x = in[0];
      check_matrix("qr", x, false, true);
      int64_t m = x.shape[x.ndim() - 2], n = x.shape.back();
      int64_t k = ps.get_bool("full_matrices", false) ? m : std::min(m, n);
      return Outs{ShapedArray{with_tail(x, {m, k}), x.dtype, false}, ShapedArray{with_tail(x, {k, n}), x.dtype, false}};
    };
    p.jvp = qr_jvp;
    register_primitive(std::move(p));
  }
  {
    // eigh[lower]: (v, w) of a symmetric matrix given by its lower (upper) triangle: a = v diag(w) v^T, w ascending.
    Primitive p = matrix_primitive("eigh", {"lower"});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
      const auto& x = in[0];
      check_matrix("eigh", x, true);
      Shape w(x.shape.begin(), x.shape.end() - 1);
      // A weak input stays weak, as JAX's (lax.linalg.eigh of a bool matrix: weak float64).
      return Outs{ShapedArray{x.shape, x.dtype, x.weak_type}, ShapedArray{w, x.dtype, x.weak_type}};
    };
    p.jvp = eigh_jvp;
    register_primitive(std::move(p));
  }
  {
    // svd[full_matrices compute_uv]: s descending [.., k], and with compute_uv u [.., m, m|k], vt [.., n|k, n].
    Primitive p = matrix_primitive("svd", {"full_matrices", "compute_uv"});
    p.abstract_eval = [](std::span<const ShapedArray> in, const Params& ps) {
      const auto& x = in[0];
      check_matrix("svd", x, false, true);
      int64_t m = x.shape[x.ndim() - 2], n = x.shape.back(), k = std::min(m, n);
      Shape s(x.shape.begin(), x.shape.end() - 2);
      s.push_back(k);
      Outs out{ShapedArray{s, x.dtype, false}};
      if (ps.get_bool("compute_uv", true)) {
        bool full = ps.get_bool("full_matrices", false);
        out.push_back(ShapedArray{with_tail(x, {m, full ? m : k}), x.dtype, false});
        out.push_back(ShapedArray{with_tail(x, {full ? n : k, n}), x.dtype, false});
      }
      return out;
    };
    p.jvp = svd_jvp;
    register_primitive(std::move(p));
  }
  return true;
}();
}  // namespace
}  // namespace jitx::detail
