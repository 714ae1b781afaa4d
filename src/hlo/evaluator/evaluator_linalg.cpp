// Reference evaluation of jitx's linear-algebra custom-calls with plain loops in double, one matrix of the batch
// at a time: partial-pivot LU, Cholesky, triangular substitution, Householder QR, cyclic Jacobi for eigh and
// one-sided (Hestenes) Jacobi for the SVD. Written for clarity, not speed: the CPU backend runs Eigen's.
#include "hlo/evaluator/evaluator_linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "hlo/ir/custom_call.h"

namespace jitx::evaluator {
namespace {
using detail::Literal;
using hlo::Instruction;
using Vec = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A row-major rows x cols matrix of doubles.
struct Mat {
  int64_t rows = 0, cols = 0;
  Vec v;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
  static Mat identity(int64_t n) {
    Mat m(n, n);
    for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
    return m;
  }
  Mat transposed() const {
    Mat t(cols, rows);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) t(j, i) = (*this)(i, j);
    return t;
  }
};

int64_t batch_of(const std::vector<int64_t>& dims) {
  int64_t b = 1;
  for (size_t k = 0; k + 2 < dims.size(); ++k) b *= dims[k];
  return b;
}
Mat load(const Literal& l, int64_t b) {
  int64_t r = l.dims[l.dims.size() - 2], c = l.dims.back();
  Mat m(r, c);
  for (int64_t k = 0; k < r * c; ++k) m.v[static_cast<size_t>(k)] = l.get_f64(b * r * c + k);
  return m;
}
void store(Literal& l, int64_t b, const Mat& m, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) l.set_f64(b * rows * cols + i * cols + j, m(i, j));
}
Literal make(const hlo::Shape& s) { return Literal::make(s.dtype, s.dims); }
Value tuple_of(std::vector<Literal> ls) {
  Value v;
  v.is_tuple = true;
  for (auto& l : ls) v.tuple.push_back(Value{std::move(l), {}, false});
  return v;
}
const hlo::Shape& out_shape(const Instruction& inst, size_t k) {
  return inst.shape.is_tuple ? inst.shape.tuple_shapes.at(k) : inst.shape;
}
bool flag(const Instruction& inst, const char* key) { return inst.attrs.get_bool(key, false); }

// --- LU with partial pivoting ---------------------------------------------------------------------------
Value eval_lu(const Instruction& inst, const Literal& a) {
  Literal lu = make(out_shape(inst, 0)), piv = make(out_shape(inst, 1)), perm = make(out_shape(inst, 2));
  int64_t n = a.dims.back();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat m = load(a, b);
    std::vector<int64_t> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t best = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::fabs(m(i, k)) > std::fabs(m(best, k))) best = i;
      piv.set_i64(b * n + k, best);
      if (best != k) {
        for (int64_t j = 0; j < n; ++j) std::swap(m(k, j), m(best, j));
        std::swap(p[k], p[best]);
      }
      if (m(k, k) == 0) continue;  // a singular matrix: U gets a zero pivot, as LAPACK's getrf leaves it
      for (int64_t i = k + 1; i < n; ++i) {
        m(i, k) /= m(k, k);
        for (int64_t j = k + 1; j < n; ++j) m(i, j) -= m(i, k) * m(k, j);
      }
    }
    store(lu, b, m, n, n);
    for (int64_t i = 0; i < n; ++i) perm.set_i64(b * n + i, p[i]);
  }
  return tuple_of({lu, piv, perm});
}

// --- Cholesky (the lower triangle is read; NaN below when not positive definite) --------------------------------
Literal eval_cholesky(const Instruction& inst, const Literal& a) {
  Literal out = make(inst.shape);
  int64_t n = a.dims.back();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat m = load(a, b), l(n, n);
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      double d = m(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
      if (!(d > 0)) ok = false;
      l(j, j) = std::sqrt(d);
      for (int64_t i = j + 1; i < n && ok; ++i) {
        double s = m(i, j);
        for (int64_t k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
        l(i, j) = s / l(j, j);
      }
    }
    if (!ok)  // as JAX: NaN in the lower triangle, zeros above
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) l(i, j) = j <= i ? kNaN : 0.0;
    store(out, b, l, n, n);
  }
  return out;
}

// --- triangular solve -------------------------------------------------------------------------------------
/// Solves t x = rhs in place for each column of x (t n x n, lower or upper triangular).
void substitute(const Mat& t, bool lower, Mat& x) {
  int64_t n = t.rows;
  for (int64_t c = 0; c < x.cols; ++c) {
    for (int64_t s = 0; s < n; ++s) {
      int64_t i = lower ? s : n - 1 - s;
      double v = x(i, c);
      if (lower)
        for (int64_t k = 0; k < i; ++k) v -= t(i, k) * x(k, c);
      else
        for (int64_t k = i + 1; k < n; ++k) v -= t(i, k) * x(k, c);
      x(i, c) = v / t(i, i);
    }
  }
}

Literal eval_triangular_solve(const Instruction& inst, const Literal& a, const Literal& rhs) {
  bool left = flag(inst, "left_side"), lower = flag(inst, "lower"), trans = flag(inst, "transpose_a"),
       unit = flag(inst, "unit_diagonal");
  Literal out = make(inst.shape);
  int64_t n = a.dims.back(), r = rhs.dims[rhs.dims.size() - 2], c = rhs.dims.back();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat am = load(a, b), t(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (i == j) t(i, j) = unit ? 1.0 : am(i, j);
        else if (lower ? j < i : j > i) t(i, j) = am(i, j);
    if (trans) t = t.transposed();
    bool t_lower = lower != trans;
    Mat x = load(rhs, b);
    if (left) {
      substitute(t, t_lower, x);  // op(a) x = b
    } else {                      // x op(a) = b  <=>  op(a)^T x^T = b^T
      Mat xt = x.transposed();
      substitute(t.transposed(), !t_lower, xt);
      x = xt.transposed();
    }
    store(out, b, x, r, c);
  }
  return out;
}

// --- Householder QR ---------------------------------------------------------------------------------------
Value eval_qr(const Instruction& inst, const Literal& a) {
  const hlo::Shape &qs = out_shape(inst, 0), &rs = out_shape(inst, 1);
  Literal q = make(qs), r = make(rs);
  int64_t m = a.dims[a.dims.size() - 2], n = a.dims.back(), kq = qs.dims.back();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat x = load(a, b);
    std::vector<Vec> vs;
    for (int64_t j = 0; j < std::min(m, n); ++j) {
      Vec v(static_cast<size_t>(m - j));
      double norm = 0;
      for (int64_t i = j; i < m; ++i) norm += x(i, j) * x(i, j);
      norm = std::sqrt(norm);
      for (int64_t i = j; i < m; ++i) v[i - j] = x(i, j);
      double alpha = v[0] >= 0 ? -norm : norm;
      v[0] -= alpha;
      double vn = 0;
      for (double e : v) vn += e * e;
      vn = std::sqrt(vn);
      if (vn > 0)
        for (double& e : v) e /= vn;
      // x[j:, :] -= 2 v (v^T x[j:, :])
      for (int64_t c = 0; c < n; ++c) {
        double d = 0;
        for (int64_t i = j; i < m; ++i) d += v[i - j] * x(i, c);
        for (int64_t i = j; i < m; ++i) x(i, c) -= 2 * v[i - j] * d;
      }
      vs.push_back(std::move(v));
    }
    Mat qm = Mat::identity(m);  // Q = H_0 H_1 ... applied to I, last reflection first
    for (int64_t j = static_cast<int64_t>(vs.size()) - 1; j >= 0; --j) {
      const Vec& v = vs[j];
      for (int64_t c = 0; c < m; ++c) {
        double d = 0;
        for (int64_t i = j; i < m; ++i) d += v[i - j] * qm(i, c);
        for (int64_t i = j; i < m; ++i) qm(i, c) -= 2 * v[i - j] * d;
      }
    }
    Mat rm(kq, n);
    for (int64_t i = 0; i < kq; ++i)
      for (int64_t j = i; j < n; ++j) rm(i, j) = x(i, j);
    store(q, b, qm, m, kq);  // the first kq columns (store reads qm(i, j) for j < kq)
    store(r, b, rm, kq, n);
  }
  return tuple_of({q, r});
}

// --- Jacobi eigen and SVD ---------------------------------------------------------------------------------
/// Replaces the columns of q (rows x cols) not marked valid by orthonormal vectors orthogonal to the others.
void complete_basis(Mat& q, std::vector<bool> valid) {
  int64_t rows = q.rows;
  int64_t next = 0;
  for (int64_t c = 0; c < q.cols; ++c) {
    if (valid[c]) continue;
    for (; next < rows; ++next) {
      Vec e(static_cast<size_t>(rows), 0.0);
      e[next] = 1;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t o = 0; o < q.cols; ++o) {
          if (!valid[o]) continue;
          double d = 0;
          for (int64_t i = 0; i < rows; ++i) d += q(i, o) * e[i];
          for (int64_t i = 0; i < rows; ++i) e[i] -= d * q(i, o);
        }
      double nn = 0;
      for (double x : e) nn += x * x;
      nn = std::sqrt(nn);
      if (nn < 0.5) continue;
      for (int64_t i = 0; i < rows; ++i) q(i, c) = e[i] / nn;
      valid[c] = true;
      ++next;
      break;
    }
  }
}

/// x scaled in place by a power of two 2^-e (exact) so that its largest magnitude is in [0.5, 1), and e: the Jacobi
/// sweeps square entries (sums of squares overflow from about 1e154, underflow below 1e-154), LAPACK scales too.
/// Zero or non-finite matrices stay as they are (e = 0).
int rescale(Mat& x) {
  double big = 0;
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) big = std::max(big, std::fabs(x(i, j)));
  if (big == 0 || !std::isfinite(big)) return 0;
  int e = std::ilogb(big) + 1;
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) x(i, j) = std::ldexp(x(i, j), -e);
  return e;
}

Value eval_eigh(const Instruction& inst, const Literal& a) {
  Literal vl = make(out_shape(inst, 0)), wl = make(out_shape(inst, 1));
  bool lower = flag(inst, "lower");
  int64_t n = a.dims.back();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat x = load(a, b), s(n, n), v = Mat::identity(n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) s(i, j) = s(j, i) = lower ? x(i, j) : x(j, i);
    int e = rescale(s);
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off = 0, all = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) (i == j ? all : off) += s(i, j) * s(i, j);
      if (off <= 1e-30 * (all + off) || off == 0) break;
      for (int64_t p = 0; p < n; ++p)
        for (int64_t r = p + 1; r < n; ++r) {
          if (s(p, r) == 0) continue;
          double theta = (s(r, r) - s(p, p)) / (2 * s(p, r));
          double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
          double c = 1 / std::sqrt(t * t + 1), sn = t * c;
          for (int64_t k = 0; k < n; ++k) {  // columns p, r of s
            double sp = s(k, p), sr = s(k, r);
            s(k, p) = c * sp - sn * sr;
            s(k, r) = sn * sp + c * sr;
          }
          for (int64_t k = 0; k < n; ++k) {  // rows p, r of s
            double sp = s(p, k), sr = s(r, k);
            s(p, k) = c * sp - sn * sr;
            s(r, k) = sn * sp + c * sr;
          }
          for (int64_t k = 0; k < n; ++k) {
            double vp = v(k, p), vr = v(k, r);
            v(k, p) = c * vp - sn * vr;
            v(k, r) = sn * vp + c * vr;
          }
        }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s(i, i) < s(j, j); });
    Mat vs(n, n);
    for (int64_t k = 0; k < n; ++k) {
      wl.set_f64(b * n + k, std::ldexp(s(order[k], order[k]), e));
      for (int64_t i = 0; i < n; ++i) vs(i, k) = v(i, order[k]);
    }
    store(vl, b, vs, n, n);
  }
  return tuple_of({vl, wl});
}

/// One-sided Jacobi on a tall matrix t (rows >= cols): t = u diag(s) v^T with u rows x cols, v cols x cols,
/// s descending.
void jacobi_svd(Mat t, Mat& u, Vec& s, Mat& v) {
  int64_t rows = t.rows, cols = t.cols;
  v = Mat::identity(cols);
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < cols; ++p)
      for (int64_t q = p + 1; q < cols; ++q) {
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < rows; ++i) {
          al += t(i, p) * t(i, p);
          be += t(i, q) * t(i, q);
          ga += t(i, p) * t(i, q);
        }
        if (ga == 0 || std::fabs(ga) <= 1e-15 * std::sqrt(al * be)) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga);
        double tt = (zeta >= 0 ? 1.0 : -1.0) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        double c = 1 / std::sqrt(1 + tt * tt), sn = c * tt;
        for (int64_t i = 0; i < rows; ++i) {
          double xp = t(i, p), xq = t(i, q);
          t(i, p) = c * xp - sn * xq;
          t(i, q) = sn * xp + c * xq;
        }
        for (int64_t i = 0; i < cols; ++i) {
          double xp = v(i, p), xq = v(i, q);
          v(i, p) = c * xp - sn * xq;
          v(i, q) = sn * xp + c * xq;
        }
      }
    if (!rotated) break;
  }
  Vec norms(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) {
    double nn = 0;
    for (int64_t i = 0; i < rows; ++i) nn += t(i, j) * t(i, j);
    norms[j] = std::sqrt(nn);
  }
  std::vector<int64_t> order(static_cast<size_t>(cols));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return norms[i] > norms[j]; });
  u = Mat(rows, cols);
  Mat vs(cols, cols);
  s.assign(static_cast<size_t>(cols), 0.0);
  std::vector<bool> valid(static_cast<size_t>(cols), false);
  double tiny = (norms.empty() ? 0 : norms[order[0]]) * 1e-300;
  for (int64_t k = 0; k < cols; ++k) {
    int64_t j = order[k];
    s[k] = norms[j];
    for (int64_t i = 0; i < cols; ++i) vs(i, k) = v(i, j);
    if (norms[j] > tiny && norms[j] > 0) {
      valid[k] = true;
      for (int64_t i = 0; i < rows; ++i) u(i, k) = t(i, j) / norms[j];
      // A column of rounding noise (a singular value ~1e-150 of the largest: its squares are subnormal, so the
      // rotations did not orthogonalise it) is not a direction: the basis is completed there instead.
      for (int64_t o = 0; o < k && valid[k]; ++o) {
        double d = 0;
        for (int64_t i = 0; i < rows; ++i) d += u(i, o) * u(i, k);
        valid[k] = !valid[o] || std::fabs(d) < 1e-8;
      }
    }
  }
  complete_basis(u, valid);
  v = vs;
}

Value eval_svd(const Instruction& inst, const Literal& a) {
  bool full = flag(inst, "full_matrices"), uv = flag(inst, "compute_uv");
  int64_t m = a.dims[a.dims.size() - 2], n = a.dims.back(), k = std::min(m, n);
  Literal sl = make(out_shape(inst, 0));
  Literal ul = uv ? make(out_shape(inst, 1)) : Literal(), vtl = uv ? make(out_shape(inst, 2)) : Literal();
  for (int64_t b = 0; b < batch_of(a.dims); ++b) {
    Mat x = load(a, b);
    bool finite = true;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) finite = finite && std::isfinite(x(i, j));
    if (!finite) {  // NaN everywhere, as JAX (LAPACK's failure is replaced by NaN) and the cpu backend
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (int64_t j = 0; j < k; ++j) sl.set_f64(b * k + j, nan);
      if (!uv) continue;
      for (Literal* l : {&ul, &vtl}) {
        int64_t per = l->size() / batch_of(a.dims);
        for (int64_t e = 0; e < per; ++e) l->set_f64(b * per + e, nan);
      }
      continue;
    }
    bool wide = m < n;
    Mat t = wide ? x.transposed() : x, tu(0, 0), tv(0, 0);
    int e = rescale(t);
    Vec s;
    jacobi_svd(t, tu, s, tv);  // t = tu diag(s) tv^T; tu rows x k
    for (int64_t j = 0; j < k; ++j) sl.set_f64(b * k + j, std::ldexp(s[j], e));
    if (!uv) continue;
    if (full) {  // extend tu to a square orthogonal matrix
      Mat ext(tu.rows, tu.rows);
      std::vector<bool> valid(static_cast<size_t>(tu.rows), false);
      for (int64_t i = 0; i < tu.rows; ++i)
        for (int64_t j = 0; j < k; ++j) ext(i, j) = tu(i, j);
      for (int64_t j = 0; j < k; ++j) valid[j] = true;
      complete_basis(ext, valid);
      tu = ext;
    }
    // tall: a = tu s tv^T; wide: a = tv s tu^T
    Mat u = wide ? tv : tu, vt = wide ? tu.transposed() : tv.transposed();
    store(ul, b, u, u.rows, u.cols);
    store(vtl, b, vt, vt.rows, vt.cols);
  }
  if (!uv) return Value{sl, {}, false};
  return tuple_of({sl, ul, vtl});
}
}  // namespace

Value eval_linalg(const Instruction& inst, const std::vector<const Literal*>& ops) {
  std::string op = hlo::linalg_op_name(inst);
  if (op == "lu") return eval_lu(inst, *ops[0]);
  if (op == "cholesky") return Value{eval_cholesky(inst, *ops[0]), {}, false};
  if (op == "triangular_solve") return Value{eval_triangular_solve(inst, *ops[0], *ops[1]), {}, false};
  if (op == "qr") return eval_qr(inst, *ops[0]);
  if (op == "eigh") return eval_eigh(inst, *ops[0]);
  if (op == "svd") return eval_svd(inst, *ops[0]);
  detail::throw_error<CompileError>("interpreter", "custom-call %{} with target \"{}\" is not supported", inst.name,
                            hlo::custom_call_target(inst));
}

}  // namespace jitx::evaluator
