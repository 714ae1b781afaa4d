// jitx's linear-algebra custom-calls (custom_call_target="jitx.linalg.<name>") as library ops over Eigen's
// decompositions, one matrix of the batch at a time: PartialPivLU, LLT, triangular solves, HouseholderQR,
// SelfAdjointEigenSolver and JacobiSVD. Operands and results are row-major (the layout legalizer sees to it);
// f32 computes in f32 and f64 in f64, as LAPACK would.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <limits>
#include <numeric>

#include "backends/cpu/library.h"
#include "core/errors.h"
#include "hlo/ir/custom_call.h"

namespace jitx::cpu {
namespace {
using hlo::Instruction;

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using CMap = Eigen::Map<const Mat<T>>;
template <class T>
using MMap = Eigen::Map<Mat<T>>;

int64_t batch_of(const std::vector<int64_t>& dims) {
  int64_t b = 1;
  for (size_t k = 0; k + 2 < dims.size(); ++k) b *= dims[k];
  return b;
}
const hlo::Shape& out_shape(const Instruction& inst, size_t k) {
  return inst.shape.is_tuple ? inst.shape.tuple_shapes.at(k) : inst.shape;
}
int64_t rows_of(const hlo::Shape& s) { return s.dims[s.dims.size() - 2]; }
int64_t cols_of(const hlo::Shape& s) { return s.dims.back(); }

class LinalgOp : public LibraryOp {
 public:
  LinalgOp(const Instruction& inst, std::string op) : inst_(inst), op_(std::move(op)) {}
  void run(std::span<const void* const> ins, std::span<void* const> outs) const override {
    if (inst_.operand(0)->shape.dtype == DType::float64) run_typed<double>(ins, outs);
    else run_typed<float>(ins, outs);
  }

 private:
  bool flag(const char* key) const { return inst_.attrs.get_bool(key, false); }

  template <class T>
  void run_typed(std::span<const void* const> ins, std::span<void* const> outs) const {
    const hlo::Shape& a = inst_.operand(0)->shape;
    int64_t m = rows_of(a), n = cols_of(a), nb = batch_of(a.dims);
    const T* x = static_cast<const T*>(ins[0]);
    for (int64_t b = 0; b < nb; ++b) {
      CMap<T> am(x + b * m * n, m, n);
      if (op_ == "lu") lu<T>(am, b, outs);
      else if (op_ == "cholesky") cholesky<T>(am, b, outs);
      else if (op_ == "triangular_solve") triangular_solve<T>(am, b, ins, outs);
      else if (op_ == "qr") qr<T>(am, b, outs);
      else if (op_ == "eigh") {
        if (n > 0) eigh<T>(am, b, outs);  // 0 x 0: nothing to write (Eigen's solver reads a(0, 0))
      }
      else svd<T>(am, b, outs);
    }
  }

  template <class T>
  void lu(const CMap<T>& a, int64_t b, std::span<void* const> outs) const {
    int64_t n = a.rows();
    Eigen::PartialPivLU<Mat<T>> f(a);
    MMap<T>(static_cast<T*>(outs[0]) + b * n * n, n, n) = f.matrixLU();
    // P a = L U: row i of L U is row perm[i] of a. The LAPACK swaps that give it: at step i, the row perm[i] is
    // where the swaps so far have put it.
    const auto& idx = f.permutationP().indices();  // P maps row r of a to row idx[r]
    std::vector<int32_t> perm(static_cast<size_t>(n)), where(static_cast<size_t>(n)), at(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) perm[idx[r]] = static_cast<int32_t>(r);
    std::iota(where.begin(), where.end(), 0);  // where[r]: current position of a's row r
    std::iota(at.begin(), at.end(), 0);        // at[p]: a's row at position p
    int32_t* piv = static_cast<int32_t*>(outs[1]) + b * n;
    int32_t* pm = static_cast<int32_t*>(outs[2]) + b * n;
    for (int64_t i = 0; i < n; ++i) {
      int32_t p = where[perm[i]];
      piv[i] = p;
      std::swap(at[i], at[p]);
      where[at[i]] = static_cast<int32_t>(i);
      where[at[p]] = p;
      pm[i] = perm[i];
    }
  }

  template <class T>
  void cholesky(const CMap<T>& a, int64_t b, std::span<void* const> outs) const {
    int64_t n = a.rows();
    MMap<T> out(static_cast<T*>(outs[0]) + b * n * n, n, n);
    Eigen::LLT<Mat<T>, Eigen::Lower> f(a);
    if (f.info() == Eigen::Success) {
      out = f.matrixL();
      return;
    }
    out.setZero();  // not positive definite: NaN in the lower triangle, as JAX
    out.template triangularView<Eigen::Lower>().setConstant(std::numeric_limits<T>::quiet_NaN());
  }

  template <class T>
  void triangular_solve(const CMap<T>& a, int64_t b, std::span<const void* const> ins,
                        std::span<void* const> outs) const {
    bool left = flag("left_side"), lower = flag("lower"), trans = flag("transpose_a"), unit = flag("unit_diagonal");
    const hlo::Shape& bs = inst_.operand(1)->shape;
    int64_t r = rows_of(bs), c = cols_of(bs);
    Mat<T> t = lower ? Mat<T>(a.template triangularView<Eigen::Lower>())
                     : Mat<T>(a.template triangularView<Eigen::Upper>());
    if (unit) t.diagonal().setOnes();
    if (trans) t.transposeInPlace();
    bool t_lower = lower != trans;
    MMap<T> x(static_cast<T*>(outs[0]) + b * r * c, r, c);
    x = CMap<T>(static_cast<const T*>(ins[1]) + b * r * c, r, c);
    if (left && t_lower) t.template triangularView<Eigen::Lower>().solveInPlace(x);
    else if (left) t.template triangularView<Eigen::Upper>().solveInPlace(x);
    else if (t_lower) t.template triangularView<Eigen::Lower>().template solveInPlace<Eigen::OnTheRight>(x);
    else t.template triangularView<Eigen::Upper>().template solveInPlace<Eigen::OnTheRight>(x);
  }

  template <class T>
  void qr(const CMap<T>& a, int64_t b, std::span<void* const> outs) const {
    int64_t m = a.rows(), n = a.cols();
    int64_t k = cols_of(out_shape(inst_, 0));
    Eigen::HouseholderQR<Mat<T>> f(a);
    Mat<T> q = f.householderQ() * Mat<T>::Identity(m, k);
    MMap<T>(static_cast<T*>(outs[0]) + b * m * k, m, k) = q;
    Mat<T> r = Mat<T>::Zero(k, n);
    int64_t rr = std::min(k, m);
    r.topRows(rr) = f.matrixQR().topRows(rr).template triangularView<Eigen::Upper>();
    MMap<T>(static_cast<T*>(outs[1]) + b * k * n, k, n) = r;
  }

  template <class T>
  void eigh(const CMap<T>& a, int64_t b, std::span<void* const> outs) const {
    int64_t n = a.rows();
    // Eigen reads the lower triangle: for lower=false, the upper one transposed into it.
    Mat<T> s = flag("lower") ? Mat<T>(a) : Mat<T>(a.transpose());
    Eigen::SelfAdjointEigenSolver<Mat<T>> f(s);  // eigenvalues ascending
    MMap<T>(static_cast<T*>(outs[0]) + b * n * n, n, n) = f.eigenvectors();
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(static_cast<T*>(outs[1]) + b * n, n) = f.eigenvalues();
  }

  template <class T>
  void svd(const CMap<T>& a, int64_t b, std::span<void* const> outs) const {
    int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
    bool uv = flag("compute_uv"), full = flag("full_matrices");
    unsigned opts = !uv ? 0u : full ? (Eigen::ComputeFullU | Eigen::ComputeFullV)
                                    : (Eigen::ComputeThinU | Eigen::ComputeThinV);
    Mat<T> am = a;
    const hlo::Shape* us = uv ? &out_shape(inst_, 1) : nullptr;
    const hlo::Shape* vs = uv ? &out_shape(inst_, 2) : nullptr;
    if (k == 0) {  // Eigen's JacobiSVD cannot take an empty matrix: full U and Vh are identities, as JAX's
      if (!uv) return;
      int64_t uc = cols_of(*us), vr = rows_of(*vs);
      MMap<T>(static_cast<T*>(outs[1]) + b * m * uc, m, uc) = Mat<T>::Identity(m, uc);
      MMap<T>(static_cast<T*>(outs[2]) + b * vr * n, vr, n) = Mat<T>::Identity(vr, n);
      return;
    }
    if (!am.allFinite()) {  // Eigen gives up on such input (results left empty): NaN everywhere, as JAX's LAPACK path
      const T nan = std::numeric_limits<T>::quiet_NaN();
      std::fill_n(static_cast<T*>(outs[0]) + b * k, k, nan);
      if (!uv) return;
      std::fill_n(static_cast<T*>(outs[1]) + b * m * cols_of(*us), m * cols_of(*us), nan);
      std::fill_n(static_cast<T*>(outs[2]) + b * rows_of(*vs) * n, rows_of(*vs) * n, nan);
      return;
    }
    Eigen::JacobiSVD<Mat<T>> f(am, opts);  // singular values descending
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(static_cast<T*>(outs[0]) + b * k, k) = f.singularValues();
    if (!uv) return;
    int64_t uc = cols_of(*us), vr = rows_of(*vs);
    MMap<T>(static_cast<T*>(outs[1]) + b * m * uc, m, uc) = f.matrixU();
    MMap<T>(static_cast<T*>(outs[2]) + b * vr * n, vr, n) = f.matrixV().transpose();
  }

  const Instruction& inst_;
  std::string op_;
};
}  // namespace

std::unique_ptr<LibraryOp> make_linalg_op(const Instruction& inst) {
  std::string op = hlo::linalg_op_name(inst);
  if (op != "lu" && op != "cholesky" && op != "triangular_solve" && op != "qr" && op != "eigh" && op != "svd")
    return nullptr;
  DType d = inst.operand(0)->shape.dtype;
  if (d != DType::float32 && d != DType::float64) return nullptr;
  return std::make_unique<LinalgOp>(inst, op);
}

}  // namespace jitx::cpu
