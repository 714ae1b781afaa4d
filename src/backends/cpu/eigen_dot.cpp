// dot_general on the process-wide thread pool: f32, bf16 and f16 through the backend's own GEMM (gemm.cpp), f64
// through Eigen's tensor contraction (as XLA:CPU does for all of them).
//
// For Eigen, operands are brought to [batch, free, contracting] (lhs) and [batch, contracting, free] (rhs) form;
// the transposed 2-D forms [b, K, M] and [b, N, K] are passed to Eigen as they are, anything else is permuted once.
#define EIGEN_USE_THREADS
#include <algorithm>
#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>
#include <unsupported/Eigen/CXX11/ThreadPool>

#include "backends/cpu/gemm.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "core/literal.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
namespace {

struct Pool {
  int threads;
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
  explicit Pool(int n) : threads(n), pool(n), device(&pool, n) {}
};
Pool& pool() {
  static Pool* p = new Pool(std::max(1u, std::thread::hardware_concurrency()));  // lives until exit
  return *p;
}

std::vector<int64_t> concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> v;
  for (auto* p : parts) v.insert(v.end(), p->begin(), p->end());
  return v;
}
bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// Copies src (dims, row-major) into dst in the order perm, converting to T.
template <class T>
void permute_to(const void* src, DType d, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, T* dst) {
  auto strides = detail::row_major_strides(dims);
  std::vector<int64_t> pd, ps;
  for (auto p : perm) {
    pd.push_back(dims[p]);
    ps.push_back(strides[p]);
  }
  int64_t n = detail::num_elements(dims);
  std::vector<int64_t> idx(pd.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); ++k) s += idx[k] * ps[k];
    T v;
    switch (d) {
      case DType::float32: v = static_cast<T>(static_cast<const float*>(src)[s]); break;
      case DType::float64: v = static_cast<T>(static_cast<const double*>(src)[s]); break;
      case DType::float16: v = static_cast<T>(half_to_float(static_cast<const uint16_t*>(src)[s])); break;
      default: v = static_cast<T>(bfloat16_to_float(static_cast<const uint16_t*>(src)[s])); break;
    }
    dst[o] = v;
    for (int64_t k = static_cast<int64_t>(idx.size()) - 1; k >= 0; --k) {
      if (++idx[k] < pd[k]) break;
      idx[k] = 0;
    }
  }
}

// The dims of s in memory order (major to minor), renumbering the dim lists `which` to positions in that order.
std::vector<int64_t> in_memory_order(const hlo::Shape& s, std::initializer_list<std::vector<int64_t>*> which) {
  auto m2m = hlo::minor_to_major(s);
  size_t rank = m2m.size();
  std::vector<int64_t> pos(rank), dims(rank);
  for (size_t j = 0; j < rank; ++j) {
    pos[static_cast<size_t>(m2m[j])] = static_cast<int64_t>(rank - 1 - j);
    dims[rank - 1 - j] = s.dims[static_cast<size_t>(m2m[j])];
  }
  for (auto* w : which)
    for (auto& d : *w) d = pos[static_cast<size_t>(d)];
  return dims;
}

// out is of the dot's dtype, or of T when unrounded (an output fusion's epilogue rounds it).
template <class T>
void dot_typed(const hlo::Instruction& inst, const void* lhs, const void* rhs, void* out, bool unrounded) {
  auto dn = hlo::DotDimensionNumbers::of(inst);
  auto &lc = dn.lhs_contracting_dims, &rc = dn.rhs_contracting_dims;
  auto &lb = dn.lhs_batch_dims, &rb = dn.rhs_batch_dims;
  const auto& ld = inst.operand(0)->shape.dims;
  const auto& rd = inst.operand(1)->shape.dims;
  DType dt = inst.operand(0)->shape.dtype;
  auto free_dims = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& c, const std::vector<int64_t>& b) {
    std::vector<int64_t> f;
    for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i)
      if (std::find(c.begin(), c.end(), i) == c.end() && std::find(b.begin(), b.end(), i) == b.end()) f.push_back(i);
    return f;
  };
  auto lf = free_dims(ld, lc, lb), rf = free_dims(rd, rc, rb);
  auto prod = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
    int64_t p = 1;
    for (auto w : which) p *= dims[w];
    return p;
  };
  int64_t B = prod(ld, lb), M = prod(ld, lf), N = prod(rd, rf), K = prod(ld, lc);
  // From here on an operand is the row-major array of its dims in memory order (its layout), its dims renumbered:
  // a column-major [M, K] lhs is a row-major [K, M] contracting dim 0.
  std::vector<int64_t> lpd = in_memory_order(inst.operand(0)->shape, {&lb, &lf, &lc});
  std::vector<int64_t> rpd = in_memory_order(inst.operand(1)->shape, {&rb, &rf, &rc});
  bool same_type =
      (std::is_same_v<T, float> && dt == DType::float32) || (std::is_same_v<T, double> && dt == DType::float64);
  // lhs as [B, M, K] (contract its dim 1) or [B, K, M] (dim 0); rhs as [B, K, N] (dim 0) or [B, N, K] (dim 1).
  std::vector<T> lbuf, rbuf;
  const T* lp = static_cast<const T*>(lhs);
  const T* rp = static_cast<const T*>(rhs);
  int lcd = 1, rcd = 0;
  auto pl = concat({&lb, &lf, &lc}), pl_t = concat({&lb, &lc, &lf});
  auto pr = concat({&rb, &rc, &rf}), pr_t = concat({&rb, &rf, &rc});
  if (same_type && is_identity(pl)) lcd = 1;
  else if (same_type && is_identity(pl_t)) lcd = 0;
  else {
    lbuf.resize(static_cast<size_t>(B * M * K));
    permute_to(lhs, dt, lpd, pl, lbuf.data());
    lp = lbuf.data();
  }
  if (same_type && is_identity(pr)) rcd = 0;
  else if (same_type && is_identity(pr_t)) rcd = 1;
  else {
    rbuf.resize(static_cast<size_t>(B * K * N));
    permute_to(rhs, dt, rpd, pr, rbuf.data());
    rp = rbuf.data();
  }
  DType od = inst.shape.dtype;
  bool direct_out = unrounded || (std::is_same_v<T, float> && od == DType::float32) ||
                    (std::is_same_v<T, double> && od == DType::float64);
  std::vector<T> obuf;
  T* op = static_cast<T*>(out);
  if (!direct_out) {
    obuf.resize(static_cast<size_t>(B * M * N));
    op = obuf.data();
  }
  using In = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
  using Out = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>>;
  Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> cd = {Eigen::IndexPair<Eigen::Index>(lcd, rcd)};
  for (int64_t b = 0; b < B; ++b) {
    In l(lp + b * M * K, lcd == 1 ? M : K, lcd == 1 ? K : M);
    In r(rp + b * K * N, rcd == 0 ? K : N, rcd == 0 ? N : K);
    Out o(op + b * M * N, M, N);
    if (K == 0) o.setZero();
    else o.device(pool().device) = l.contract(r, cd);
  }
  if (!direct_out) {
    auto* o16 = static_cast<uint16_t*>(out);
    for (size_t i = 0; i < obuf.size(); ++i)
      o16[i] = od == DType::float16 ? float_to_half(static_cast<float>(obuf[i]))
                                    : float_to_bfloat16(static_cast<float>(obuf[i]));
  }
}
}  // namespace

bool dot_supported(const hlo::Instruction& dot) {
  DType d = dot.shape.dtype;
  return is_floating(d) && dot.operand(0)->shape.dtype == d && dot.operand(1)->shape.dtype == d;
}

namespace {
/// Rounds the finished tile of an f32 product into the bf16/f16 output (the tile is still in cache).
template <class Round>
void round_tile(const float* product, uint16_t* out, int64_t row0, int64_t row1, int64_t n, int64_t j0, int64_t j1,
                Round round) {
  for (int64_t r = row0; r < row1; ++r)
    for (int64_t j = j0; j < j1; ++j) out[r * n + j] = round(product[r * n + j]);
}
uint16_t to_bfloat16(float f) {  // float_to_bfloat16, inlined so the loop above vectorises
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
}  // namespace

std::shared_ptr<const blocked::DotPlan> plan_run_dot(const hlo::Instruction& dot) { return blocked::plan_dot(dot); }

void run_dot(const hlo::Instruction& dot, const void* lhs, const void* rhs, void* out, const blocked::DotPlan* plan) {
  if (auto dp = blocked::dot_problem(dot, plan, lhs, rhs)) {
    const blocked::Problem& p = dp->problem;
    if (dot.shape.dtype == DType::float32) return blocked::multiply(p, static_cast<float*>(out));
    auto* o16 = static_cast<uint16_t*>(out);
    bool bf16 = dot.shape.dtype == DType::bfloat16;
    auto round = [&](float* product, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
      if (bf16) round_tile(product, o16, b * p.m + i0, b * p.m + i1, p.n, j0, j1, to_bfloat16);
      else round_tile(product, o16, b * p.m + i0, b * p.m + i1, p.n, j0, j1, float_to_half);
    };
    return blocked::multiply(p, nullptr, blocked::tile_fn(round));
  }
  if (dot.shape.dtype == DType::float64) dot_typed<double>(dot, lhs, rhs, out, false);
  else dot_typed<float>(dot, lhs, rhs, out, false);
}

template <class T>
void gemm_typed(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n) {
  using In = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
  Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>> o(c, m, n);
  if (k == 0) {
    o.setZero();
    return;
  }
  Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> cd = {Eigen::IndexPair<Eigen::Index>(1, 0)};
  o.device(pool().device) = In(a, m, k).contract(In(b, k, n), cd);
}

void gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  blocked::Problem p{1, m, n, k, {a, DType::float32, 0, k, 1}, {b, DType::float32, 0, 1, n}};
  blocked::multiply(p, c);
}
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) {
  gemm_typed(a, b, c, m, k, n);
}

void run_dot_unrounded(const hlo::Instruction& dot, const void* lhs, const void* rhs, void* out,
                       const blocked::DotPlan* plan) {
  if (auto dp = blocked::dot_problem(dot, plan, lhs, rhs))
    return blocked::multiply(dp->problem, static_cast<float*>(out));
  if (dot.shape.dtype == DType::float64) dot_typed<double>(dot, lhs, rhs, out, true);
  else dot_typed<float>(dot, lhs, rhs, out, true);
}

}  // namespace jitx::cpu
