// Dots through cuBLASLt (see cublaslt.h).
#include "backends/cuda/cublaslt.h"

#include <cublasLt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "hlo/ir/attributes.h"
#include "jitx/error.h"

namespace jitx::cuda {
using hlo::Instruction;

namespace {
bool row_major(const hlo::Shape& s) {
  std::vector<int64_t> m2m = hlo::minor_to_major(s);
  for (size_t k = 0; k < m2m.size(); ++k)
    if (m2m[k] != static_cast<int64_t>(m2m.size() - 1 - k)) return false;
  return true;
}
// dims [from, to) are exactly `want`, in order.
bool is_range(const std::vector<int64_t>& want, int64_t from, int64_t to) {
  if (static_cast<int64_t>(want.size()) != to - from) return false;
  for (int64_t k = from; k < to; ++k)
    if (want[static_cast<size_t>(k - from)] != k) return false;
  return true;
}
int64_t product(const std::vector<int64_t>& dims, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t k = from; k < to; ++k) p *= dims[static_cast<size_t>(k)];
  return p;
}
}  // namespace

const char* epilogue_name(Epilogue::Kind k) {
  switch (k) {
    case Epilogue::Kind::kNone:
      return "none";
    case Epilogue::Kind::kBias:
      return "bias";
    case Epilogue::Kind::kReluBias:
      return "relu_bias";
    case Epilogue::Kind::kGeluBias:
      return "gelu_bias";
  }
  return "?";
}

namespace {
using hlo::Instruction;
using hlo::Opcode;
// A binary op with operands matching (a, b) in either order.
template <class A, class B>
bool commutes(const Instruction* i, Opcode op, A a, B b) {
  if (i->opcode != op || i->operands.size() != 2) return false;
  return (a(i->operand(0)) && b(i->operand(1))) || (a(i->operand(1)) && b(i->operand(0)));
}
bool is_scalar_const(const Instruction* i, double v) {  // broadcast(constant v), or the constant
  if (i->opcode == Opcode::kBroadcastInDim) i = i->operand(0);
  return i->opcode == Opcode::kConstant && i->literal && i->literal->size() == 1 &&
         std::abs(i->literal->get_f64(0) - v) <= 1e-6 * std::abs(v);
}
const Instruction* unconvert(const Instruction* i) { return i->opcode == Opcode::kConvert ? i->operand(0) : i; }
}  // namespace

std::optional<EpiloguePlan> plan_epilogue(const hlo::Computation& fc, const GemmPlan& g) {
  const Instruction* dot = nullptr;
  for (auto& i : fc.instructions)
    if (i->opcode == Opcode::kDot) {
      if (dot) return std::nullopt;
      dot = i.get();
    }
  // f64 keeps the epilogue kernel: cuBLASLt's bias/GELU epilogues are not documented for 64-bit compute, and a
  // heuristic that finds no algorithm at run time would fail the call.
  if (!dot || g.batch != 1 || dot->shape.dims.size() != 2 || g.out == DType::float64) return std::nullopt;
  const Instruction* root = fc.root;
  if (root->shape.is_tuple || root->shape.dims != dot->shape.dims || root->shape.dtype != g.out ||
      dot->shape.dtype != g.out)
    return std::nullopt;
  const Instruction* act = unconvert(root);
  int64_t n = dot->shape.dims[1], bias = -1;
  // add([convert](dot), [convert](broadcast(bias [n], dims {1}))), the bias of the result's dtype
  auto is_dot = [&](const Instruction* i) { return unconvert(i) == dot; };
  auto is_bias = [&](const Instruction* i) {
    i = unconvert(i);
    if (i->opcode != Opcode::kBroadcastInDim || hlo::broadcast_dimensions_of(*i) != std::vector<int64_t>{1})
      return false;
    const Instruction* p = unconvert(i->operand(0));
    if (p->opcode != Opcode::kParameter || p->shape.dims != std::vector<int64_t>{n} || p->shape.dtype != g.out)
      return false;
    bias = p->parameter_number;
    return true;
  };
  const Instruction* biased = nullptr;
  auto is_biased = [&](const Instruction* i) {  // the add, or a convert of it (f16's is widened for the GELU)
    i = unconvert(i);
    if (biased) return i == biased;
    if (!commutes(i, Opcode::kAdd, is_dot, is_bias)) return false;
    biased = i;
    return true;
  };
  if (is_biased(act)) return EpiloguePlan{Epilogue::Kind::kBias, bias};
  if (commutes(act, Opcode::kMaximum, is_biased, [](const Instruction* i) { return is_scalar_const(i, 0.0); }))
    return EpiloguePlan{Epilogue::Kind::kReluBias, bias};
  // jitx's tanh-form GELU: a * logistic((a + 0.044715 * (a * a * a)) * 1.5957692)
  auto cube = [&](const Instruction* i) {
    auto square = [&](const Instruction* j) { return commutes(j, Opcode::kMultiply, is_biased, is_biased); };
    return commutes(i, Opcode::kMultiply, square, is_biased);
  };
  auto inner = [&](const Instruction* i) {
    auto term = [&](const Instruction* j) {
      return commutes(
          j, Opcode::kMultiply, [](const Instruction* c) { return is_scalar_const(c, 0.044715); }, cube);
    };
    return commutes(i, Opcode::kAdd, is_biased, term);
  };
  auto scaled = [&](const Instruction* i) {
    return commutes(i, Opcode::kMultiply, inner, [](const Instruction* c) { return is_scalar_const(c, 1.5957692); });
  };
  auto sigmoid = [&](const Instruction* i) { return i->opcode == Opcode::kLogistic && scaled(i->operand(0)); };
  if (commutes(act, Opcode::kMultiply, is_biased, sigmoid)) return EpiloguePlan{Epilogue::Kind::kGeluBias, bias};
  return std::nullopt;
}

std::optional<GemmPlan> plan_gemm(const Instruction& dot) {
  const hlo::Shape &ls = dot.operand(0)->shape, &rs = dot.operand(1)->shape, &os = dot.shape;
  if (ls.is_tuple || rs.is_tuple || os.is_tuple || !row_major(ls) || !row_major(rs) || !row_major(os)) return {};
  GemmPlan p;
  p.in = ls.dtype;
  p.out = os.dtype;
  bool half = p.in == DType::bfloat16 || p.in == DType::float16;
  if (rs.dtype != p.in || !(p.in == DType::float32 || p.in == DType::float64 || half)) return {};
  if (!(p.out == p.in || (half && p.out == DType::float32))) return {};
  auto dn = hlo::DotDimensionNumbers::of(dot);
  auto lr = static_cast<int64_t>(ls.dims.size()), rr = static_cast<int64_t>(rs.dims.size());
  auto nb = static_cast<int64_t>(dn.lhs_batch_dims.size()), nc = static_cast<int64_t>(dn.lhs_contracting_dims.size());
  if (!is_range(dn.lhs_batch_dims, 0, nb) || !is_range(dn.rhs_batch_dims, 0, nb)) return {};
  // lhs: [batch, free, contracting] or [batch, contracting, free]; rhs: [batch, contracting, free] or
  // [batch, free, contracting].
  if (is_range(dn.lhs_contracting_dims, lr - nc, lr))
    p.lhs_t = false;
  else if (is_range(dn.lhs_contracting_dims, nb, nb + nc))
    p.lhs_t = true;
  else
    return {};
  if (is_range(dn.rhs_contracting_dims, nb, nb + nc))
    p.rhs_t = false;
  else if (is_range(dn.rhs_contracting_dims, rr - nc, rr))
    p.rhs_t = true;
  else
    return {};
  p.batch = product(ls.dims, 0, nb);
  p.k = product(ls.dims, dn.lhs_contracting_dims.empty() ? nb : dn.lhs_contracting_dims.front(),
                dn.lhs_contracting_dims.empty() ? nb : dn.lhs_contracting_dims.back() + 1);
  p.m = product(ls.dims, nb, lr) / (p.k ? p.k : 1);
  p.n = product(rs.dims, nb, rr) / (p.k ? p.k : 1);
  if (p.batch == 0 || p.m == 0 || p.n == 0 || p.k == 0) return {};  // nothing to multiply: the host's
  return p;
}

// --- the library ---
struct Blas::Impl {
#define JITX_CUBLASLT_FNS(X)                                                                               \
  X(cublasLtCreate)                                                                                        \
  X(cublasLtDestroy)                                                                                       \
  X(cublasLtGetStatusName)                                                                                 \
  X(cublasLtMatmulDescCreate)                                                                              \
  X(cublasLtMatmulDescDestroy)                                                                             \
  X(cublasLtMatmulDescSetAttribute)                                                                        \
  X(cublasLtMatrixLayoutCreate)                                                                            \
  X(cublasLtMatrixLayoutDestroy)                                                                           \
  X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) \
      X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
#define JITX_CUBLASLT_DECLARE(name) decltype(&::name) name = nullptr;
  JITX_CUBLASLT_FNS(JITX_CUBLASLT_DECLARE)
#undef JITX_CUBLASLT_DECLARE
  std::mutex mu;
  std::map<const GpuDevice*, cublasLtHandle_t> handles;  // one per device, created on its first matmul
  // A workspace per device (matmuls run in order on its compute stream, so they share it), and the heuristic's
  // choice per device and problem.
  static constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;
  std::map<const GpuDevice*, std::shared_ptr<GpuArray>> workspaces;
  std::map<std::tuple<const GpuDevice*, int64_t, int64_t, int64_t, int64_t, bool, bool, DType, DType, int>,
           cublasLtMatmulAlgo_t>
      algos;

  std::string status(cublasStatus_t s) const {
    const char* n = cublasLtGetStatusName ? cublasLtGetStatusName(s) : nullptr;
    return n ? n : fmt::format("cublasStatus {}", static_cast<int>(s));
  }
};

Blas::Blas(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Blas::~Blas() = default;

namespace {
std::mutex g_blas_mu;
std::string g_blas_path;                                          // "" : the default search
std::map<std::string, std::pair<Blas*, std::string>>& loaded() {  // path -> the library (never unloaded) or why not
  static auto* m = new std::map<std::string, std::pair<Blas*, std::string>>;
  return *m;
}

std::pair<Blas*, std::string> load(const std::vector<std::string>& candidates) {
  std::string why;
  for (auto& path : candidates) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      why += fmt::format("{}dlopen(\"{}\"): {}", why.empty() ? "" : "; ", path, e ? e : "failed");
      continue;
    }
    auto impl = std::make_unique<Blas::Impl>();
    std::string missing;
#define JITX_CUBLASLT_RESOLVE(name)                                     \
  impl->name = reinterpret_cast<decltype(impl->name)>(dlsym(h, #name)); \
  if (!impl->name) missing += std::string(missing.empty() ? "" : ", ") + #name;
    JITX_CUBLASLT_FNS(JITX_CUBLASLT_RESOLVE)
#undef JITX_CUBLASLT_RESOLVE
    if (!missing.empty()) {
      why += fmt::format("{}{} lacks {}", why.empty() ? "" : "; ", path, missing);
      continue;
    }
    return {new Blas(std::move(impl)), ""};
  }
  return {nullptr, why};
}
}  // namespace

Blas* Blas::get(std::string* why) {
  std::lock_guard<std::mutex> l(g_blas_mu);
  auto& slot = loaded()[g_blas_path];
  if (!slot.first && slot.second.empty()) {
    std::vector<std::string> candidates;
    if (!g_blas_path.empty()) {
      candidates.push_back(g_blas_path);
    } else {
      if (const char* e = std::getenv("JITX_CUBLASLT_LIBRARY")) candidates.push_back(e);
      for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12"}) candidates.push_back(name);
      if (const char* h = std::getenv("CUDA_HOME")) candidates.push_back(std::string(h) + "/lib64/libcublasLt.so.13");
      candidates.push_back("/usr/local/cuda/lib64/libcublasLt.so.13");
    }
    slot = load(candidates);
  }
  if (!slot.first && why) *why = slot.second;
  return slot.first;
}

void Blas::use_library_for_testing(const std::string& path) {
  std::lock_guard<std::mutex> l(g_blas_mu);
  g_blas_path = path;
}

std::shared_ptr<GpuArray> Blas::matmul(GpuDevice& gpu, const GemmPlan& p, const std::shared_ptr<GpuArray>& lhs,
                                       const std::shared_ptr<GpuArray>& rhs, const hlo::Shape& result,
                                       const std::string& producer, const Epilogue& epi) {
  Impl& L = *impl_;
  std::vector<std::shared_ptr<GpuArray>> ins{lhs, rhs};
  if (epi.kind != Epilogue::Kind::kNone) ins.push_back(epi.bias);
  std::shared_ptr<GpuArray> ws;
  {
    std::lock_guard<std::mutex> l(L.mu);
    ws = L.workspaces[&gpu];
  }
  if (!ws) {  // allocated on the compute stream by an empty piece of work; without one, algorithms that need none
    auto none = [](CUstream, const std::vector<CUdeviceptr>&, const std::vector<CUdeviceptr>&) {
      return std::string();
    };
    ws = gpu.enqueue("cuBLASLt workspace", {}, {hlo::Shape(DType::uint8, {Impl::kWorkspaceBytes})}, none).at(0);
    std::lock_guard<std::mutex> l(L.mu);
    L.workspaces[&gpu] = ws;
  }
  uint64_t workspace = ws->error ? 0 : static_cast<uint64_t>(Impl::kWorkspaceBytes);
  void* workspace_ptr = ws->error ? nullptr : reinterpret_cast<void*>(static_cast<uintptr_t>(ws->ptr));
  auto key = std::make_tuple(static_cast<const GpuDevice*>(&gpu), p.batch, p.m, p.n, p.k, p.lhs_t, p.rhs_t, p.in, p.out,
                             static_cast<int>(epi.kind));
  auto work = [&](CUstream stream, const std::vector<CUdeviceptr>& outs,
                  const std::vector<CUdeviceptr>& in) -> std::string {
    cublasLtHandle_t handle = nullptr;
    {
      std::lock_guard<std::mutex> l(L.mu);
      auto it = L.handles.find(&gpu);
      if (it == L.handles.end()) {
        cublasStatus_t s = L.cublasLtCreate(&handle);  // the device's context is current (enqueue made it so)
        if (s != CUBLAS_STATUS_SUCCESS) return "cublasLtCreate: " + L.status(s);
        it = L.handles.emplace(&gpu, handle).first;
      }
      handle = it->second;
    }
    auto dtype = [](DType d) {
      switch (d) {
        case DType::float64:
          return CUDA_R_64F;
        case DType::bfloat16:
          return CUDA_R_16BF;
        case DType::float16:
          return CUDA_R_16F;
        default:
          return CUDA_R_32F;
      }
    };
    bool f64 = p.in == DType::float64;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    std::string err;
    auto ok = [&](cublasStatus_t s, const char* what) {
      if (s != CUBLAS_STATUS_SUCCESS && err.empty()) err = fmt::format("{}: {}", what, L.status(s));
      return err.empty();
    };
    // Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T (n x m) = B^T (n x k) A^T (k x m): cuBLASLt's A is the
    // dot's rhs (column-major n x k, or k x n transposed when the rhs is stored [n, k]), its B the lhs.
    cublasOperation_t ta = p.rhs_t ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p.lhs_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    int32_t batch = static_cast<int32_t>(p.batch);
    int64_t sa = p.n * p.k, sb = p.m * p.k, sd = p.m * p.n;
    if (ok(L.cublasLtMatmulDescCreate(&op, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                      f64 ? CUDA_R_64F : CUDA_R_32F),
           "cublasLtMatmulDescCreate") &&
        ok(L.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "TRANSA") &&
        ok(L.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "TRANSB") &&
        ok(p.rhs_t ? L.cublasLtMatrixLayoutCreate(&a, dtype(p.in), u(p.k), u(p.n), p.k)
                   : L.cublasLtMatrixLayoutCreate(&a, dtype(p.in), u(p.n), u(p.k), p.n),
           "cublasLtMatrixLayoutCreate(A)") &&
        ok(p.lhs_t ? L.cublasLtMatrixLayoutCreate(&b, dtype(p.in), u(p.m), u(p.k), p.m)
                   : L.cublasLtMatrixLayoutCreate(&b, dtype(p.in), u(p.k), u(p.m), p.k),
           "cublasLtMatrixLayoutCreate(B)") &&
        ok(L.cublasLtMatrixLayoutCreate(&d, dtype(p.out), u(p.n), u(p.m), p.n), "cublasLtMatrixLayoutCreate(D)")) {
      if (epi.kind != Epilogue::Kind::kNone) {  // the bias: one value per row of column-major D (the dot's n)
        cublasLtEpilogue_t e = epi.kind == Epilogue::Kind::kBias       ? CUBLASLT_EPILOGUE_BIAS
                               : epi.kind == Epilogue::Kind::kReluBias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                                       : CUBLASLT_EPILOGUE_GELU_BIAS;
        void* bias = reinterpret_cast<void*>(static_cast<uintptr_t>(in.at(2)));
        int32_t bias_type = dtype(p.out);
        ok(L.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)), "EPILOGUE") &&
            ok(L.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
               "BIAS_POINTER") &&
            ok(L.cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)),
               "BIAS_DATA_TYPE");
      }
      for (auto [lay, stride] : {std::pair{a, sa}, std::pair{b, sb}, std::pair{d, sd}}) {
        ok(L.cublasLtMatrixLayoutSetAttribute(lay, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
           "BATCH_COUNT");
        ok(L.cublasLtMatrixLayoutSetAttribute(lay, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                              sizeof(stride)),
           "STRIDED_BATCH_OFFSET");
      }
    }
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    {
      std::lock_guard<std::mutex> l(L.mu);
      if (auto it = L.algos.find(key); it != L.algos.end()) {
        heur.algo = it->second;
        found = 1;
      }
    }
    if (found == 0 && err.empty() && ok(L.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate") &&
        ok(L.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                  sizeof(workspace)),
           "MAX_WORKSPACE_BYTES") &&
        ok(L.cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d, d, pref, 1, &heur, &found),
           "cublasLtMatmulAlgoGetHeuristic") &&
        found == 0)
      err = "cublasLtMatmulAlgoGetHeuristic found no algorithm";
    if (err.empty() && pref) {
      std::lock_guard<std::mutex> l(L.mu);
      L.algos[key] = heur.algo;
    }
    if (err.empty()) {
      const CUdeviceptr out = outs.at(0), l = in.at(0), r = in.at(1);
      float one = 1, zero = 0;
      double one64 = 1, zero64 = 0;
      const void* alpha = f64 ? static_cast<const void*>(&one64) : &one;
      const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero;
      auto ptr = [](CUdeviceptr v) { return reinterpret_cast<void*>(static_cast<uintptr_t>(v)); };
      ok(L.cublasLtMatmul(handle, op, alpha, ptr(r), a, ptr(l), b, beta, ptr(out), d, ptr(out), d, &heur.algo,
                          workspace_ptr, workspace_ptr ? workspace : 0, stream),
         "cublasLtMatmul");
    }
    if (pref) L.cublasLtMatmulPreferenceDestroy(pref);
    for (auto lay : {a, b, d})
      if (lay) L.cublasLtMatrixLayoutDestroy(lay);
    if (op) L.cublasLtMatmulDescDestroy(op);
    return err;
  };
  return gpu.enqueue(producer, ins, {result}, work).at(0);
}

}  // namespace jitx::cuda
