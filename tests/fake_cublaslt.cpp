// The fake CUDA driver's cuBLASLt (see tests/fake_cuda_driver.cpp): built into the same library, loaded in place of
// libcublasLt by cuda::Blas::use_library_for_testing.
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fake_cuda.h"

using jitx_fake::count;
using jitx_fake::delay;
using jitx_fake::device_range;

// --- a fake cuBLASLt (the subset jitx's cublaslt.cpp calls), for the executor's tests: column-major matmuls
// (op(A) m x k times op(B) k x n into D, strided batches) computed in double on the stream's thread over host
// memory, f32/f64/bf16/f16 elements, as cuBLASLt documents them. Loaded in place of libcublasLt by
// cuda::Blas::use_library_for_testing. ---
struct cublasLtContext {
  int unused = 0;
};
namespace {
struct LtDesc {
  int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  cublasComputeType_t compute;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // BIAS, RELU_BIAS or GELU_BIAS: the bias per row of D
  const void* bias = nullptr;
  int32_t bias_type = -1;  // -1: D's type
};
struct LtLayout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
static_assert(sizeof(LtDesc) <= sizeof(cublasLtMatmulDescOpaque_t) &&
              sizeof(LtLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
LtDesc& desc(cublasLtMatmulDesc_t d) { return *reinterpret_cast<LtDesc*>(d->data); }
LtLayout& layout(cublasLtMatrixLayout_t l) { return *reinterpret_cast<LtLayout*>(l->data); }
size_t type_size(cudaDataType t) { return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2; }
double load(const char* p, cudaDataType t) {
  uint32_t bits;
  switch (t) {
    case CUDA_R_64F: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CUDA_R_16BF: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      bits = static_cast<uint32_t>(h) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    default: {  // f16
      uint16_t h;
      std::memcpy(&h, p, 2);
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
      return (h & 0x8000) ? -v : v;
    }
  }
}
void store(char* p, cudaDataType t, double v) {
  switch (t) {
    case CUDA_R_64F:
      std::memcpy(p, &v, 8);
      return;
    case CUDA_R_32F: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case CUDA_R_16BF: {  // round to nearest even
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      uint16_t h = static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16);
      std::memcpy(p, &h, 2);
      return;
    }
    default: {  // f16, round to nearest (the tests' values are normal)
      float f = static_cast<float>(v);
      int e;
      double m = std::frexp(std::fabs(f), &e);  // f = m 2^e, m in [0.5, 1)
      uint16_t h = f < 0 ? 0x8000 : 0;
      if (f != 0) {
        int be = e + 14;  // biased exponent of m 2^e = (2m) 2^(e-1)
        if (be >= 31)
          h |= 0x7c00;
        else if (be <= 0)
          h |= static_cast<uint16_t>(std::nearbyint(std::ldexp(std::fabs(f), 24)));
        else
          h |= static_cast<uint16_t>((be << 10) + static_cast<int>(std::nearbyint((2 * m - 1) * 1024)));
      }
      std::memcpy(p, &h, 2);
      return;
    }
  }
}
}  // namespace

#define JITX_FAKE_LT extern "C" __attribute__((visibility("default")))
JITX_FAKE_LT cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  *h = new cublasLtContext;
  count("cublaslt_handles");
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT const char* cublasLtGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_NOT_SUPPORTED (fake cuBLASLt)";
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t c, cudaDataType_t) {
  *d = new cublasLtMatmulDescOpaque_t{};
  desc(*d) = LtDesc{CUBLAS_OP_N, CUBLAS_OP_N, c};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                           const void* buf, size_t n) {
  if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) {
    if (n != sizeof(void*)) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&desc(d).bias, buf, n);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (n != 4) return CUBLAS_STATUS_INVALID_VALUE;
  if (a == CUBLASLT_MATMUL_DESC_TRANSA)
    std::memcpy(&desc(d).ta, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_TRANSB)
    std::memcpy(&desc(d).tb, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_EPILOGUE)
    std::memcpy(&desc(d).epilogue, buf, 4);
  else if (a == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE)
    std::memcpy(&desc(d).bias_type, buf, 4);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType t, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  if (ld < static_cast<int64_t>(rows)) return CUBLAS_STATUS_INVALID_VALUE;  // column-major: ld >= rows
  *l = new cublasLtMatrixLayoutOpaque_t{};
  layout(*l) = LtLayout{t, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                             cublasLtMatrixLayoutAttribute_t a, const void* buf,
                                                             size_t n) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && n == 4)
    std::memcpy(&layout(l).batch, buf, 4);
  else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && n == 8)
    std::memcpy(&layout(l).stride, buf, 8);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  *p = new cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                                 cublasLtMatmulPreferenceAttributes_t, const void*,
                                                                 size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatmulPreference_t, int requested,
                                                           cublasLtMatmulHeuristicResult_t results[], int* found) {
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}
JITX_FAKE_LT cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t op, const void* alpha, const void* A,
                                           cublasLtMatrixLayout_t Ad, const void* B, cublasLtMatrixLayout_t Bd,
                                           const void* beta, const void* C, cublasLtMatrixLayout_t Cd, void* D,
                                           cublasLtMatrixLayout_t Dd, const cublasLtMatmulAlgo_t* algo, void*, size_t,
                                           cudaStream_t s) {
  if (!s || !algo || C != D || Cd != Dd) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (s->ctx->sticky.load()) return CUBLAS_STATUS_EXECUTION_FAILED;
  LtDesc o = desc(op);
  LtLayout a = layout(Ad), b = layout(Bd), d = layout(Dd);
  bool f64 = o.compute == CUBLAS_COMPUTE_64F;
  double al = f64 ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  double be = f64 ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  uint64_t m = d.rows, n = d.cols, k = o.ta == CUBLAS_OP_N ? a.cols : a.rows;
  uint64_t am = o.ta == CUBLAS_OP_N ? a.rows : a.cols, bk = o.tb == CUBLAS_OP_N ? b.rows : b.cols,
           bn = o.tb == CUBLAS_OP_N ? b.cols : b.rows;
  if (am != m || bk != k || bn != n || a.batch != d.batch || b.batch != d.batch || be != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!device_range(reinterpret_cast<CUdeviceptr>(D), 1) || !device_range(reinterpret_cast<CUdeviceptr>(A), 1) ||
      !device_range(reinterpret_cast<CUdeviceptr>(B), 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  bool biased = o.epilogue == CUBLASLT_EPILOGUE_BIAS || o.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                o.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  if (o.epilogue != CUBLASLT_EPILOGUE_DEFAULT &&
      (!biased || !o.bias || !device_range(reinterpret_cast<CUdeviceptr>(o.bias), m * type_size(d.type))))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  cudaDataType bias_type = o.bias_type < 0 ? d.type : static_cast<cudaDataType>(o.bias_type);
  count("cublaslt_matmuls");
  if (biased) count("cublaslt_epilogues");
  s->push([=] {
    delay();
    auto* pa = static_cast<const char*>(A);
    auto* pb = static_cast<const char*>(B);
    auto* pd = static_cast<char*>(D);
    for (int32_t t = 0; t < d.batch; ++t)
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t i = 0; i < m; ++i) {
          double acc = 0;
          for (uint64_t p = 0; p < k; ++p) {
            int64_t ia = o.ta == CUBLAS_OP_N ? static_cast<int64_t>(i + p * a.ld) : static_cast<int64_t>(p + i * a.ld);
            int64_t ib = o.tb == CUBLAS_OP_N ? static_cast<int64_t>(p + j * b.ld) : static_cast<int64_t>(j + p * b.ld);
            acc += load(pa + (t * a.stride + ia) * type_size(a.type), a.type) *
                   load(pb + (t * b.stride + ib) * type_size(b.type), b.type);
          }
          double v = al * acc;
          if (biased) {  // computed in the compute type, rounded once into D, as cuBLASLt does
            v += load(static_cast<const char*>(o.bias) + i * type_size(bias_type), bias_type);
            if (o.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) v = std::max(v, 0.0);
            if (o.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS)
              v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          }
          store(pd + (t * d.stride + static_cast<int64_t>(i + j * d.ld)) * type_size(d.type), d.type, v);
        }
  });
  return CUBLAS_STATUS_SUCCESS;
}
#undef JITX_FAKE_LT
