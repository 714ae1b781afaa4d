// Dots on a CUDA device through cuBLASLt, opened with dlopen at run time (never linked): libcublasLt.so.13 (or .so.12,
// or JITX_CUBLASLT_LIBRARY), its entry points resolved once. Without the library dots run on the host (the
// executable's fallback), and nothing else changes.
//
// A dot_general maps to one (strided batched) matmul when its operands and result are row-major and each operand is
// [batch..., free..., contracting...] or [batch..., contracting..., free...] (batch dimensions leading, in order;
// each group contiguous, contracting dimensions paired in order): the row-major product C = A B is the column-major
// C^T = B^T A^T, so the rhs is cuBLASLt's A and the lhs its B. f32 (computed in f32, no TF32: the cpu's results),
// bf16 and f16 (f32 accumulation; an f32 or same-dtype result) and f64.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_runtime.h"

namespace jitx::cuda {

/// One dot as `batch` row-major products [m, k] x [k, n] -> [m, n] (lhs_t: the lhs is stored [k, m]; rhs_t: the
/// rhs is stored [n, k]); batches `m k`, `k n` and `m n` elements apart.
struct GemmPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool lhs_t = false, rhs_t = false;
  DType in = DType::float32, out = DType::float32;
};
/// The plan of `dot` (a kDot), or nullopt when it does not map to one matmul (then it runs on the host).
std::optional<GemmPlan> plan_gemm(const hlo::Instruction& dot);

/// A cuBLASLt epilogue: the output fusion's bias (a vector along the result's minor dim, of the result's dtype) and
/// activation, applied by the matmul itself (CUBLASLT_EPILOGUE_BIAS / RELU_BIAS / GELU_BIAS: GELU is the tanh form,
/// jax.nn.gelu's default).
struct Epilogue {
  enum class Kind { kNone, kBias, kReluBias, kGeluBias } kind = Kind::kNone;
  std::shared_ptr<GpuArray> bias;
};
const char* epilogue_name(Epilogue::Kind k);

/// The epilogue an output fusion's computation is, if it is one cuBLASLt has: root = [convert](act(add([convert](dot),
/// broadcast(bias)))) with act none, relu (maximum with 0) or jitx's tanh-form GELU, one rank-2 dot of two
/// parameters, the bias a parameter [n] broadcast along dim 1, the bias and result of the dot's cuBLASLt output type
/// (f32, bf16 or f16: f64 keeps its epilogue kernel).
/// Returns the kind and the bias's parameter number.
struct EpiloguePlan {
  Epilogue::Kind kind;
  int64_t bias_parameter;
};
std::optional<EpiloguePlan> plan_epilogue(const hlo::Computation& fused, const GemmPlan& gemm);

class Blas {
 public:
  /// The library, loaded once; nullptr with the reason in *why when it is missing or lacks entry points.
  static Blas* get(std::string* why = nullptr);
  /// Test-only: loads the library at `path` instead (tests/fake_cuda_driver.cpp exports a fake cuBLASLt); "" goes
  /// back to the default search. Blas objects handed out before stay valid.
  static void use_library_for_testing(const std::string& path);

  /// Enqueues the dot `plan` on `gpu`'s compute stream after its operands: returns the result at once.
  /// With an epilogue, its bias is read too and the result is the epilogue's (of the result's dtype).
  std::shared_ptr<GpuArray> matmul(GpuDevice& gpu, const GemmPlan& plan, const std::shared_ptr<GpuArray>& lhs,
                                   const std::shared_ptr<GpuArray>& rhs, const hlo::Shape& result,
                                   const std::string& producer, const Epilogue& epilogue = {});

  struct Impl;
  explicit Blas(std::unique_ptr<Impl> impl);
  ~Blas();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace jitx::cuda
