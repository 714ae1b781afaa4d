// Reference evaluation of the indexing ops (gather, scatter, sort, top_k) and convolution.
#pragma once
#include <cstring>
#include <vector>

#include "hlo/evaluator/evaluator.h"

namespace jitx::evaluator {

/// Copies element j of src into element i of dst (same dtype) without conversion.
inline void copy_elem(detail::Literal& dst, int64_t i, const detail::Literal& src, int64_t j) {
  size_t es = dtype_size(dst.dtype);
  std::memcpy(static_cast<char*>(dst.data()) + i * es, static_cast<const char*>(src.data()) + j * es, es);
}

/// StableHLO gather; start indices are clamped so each slice lies inside the operand.
detail::Literal eval_gather(const hlo::Instruction& inst, const detail::Literal& operand,
                            const detail::Literal& indices);
/// StableHLO scatter with the update kind in attribute "reducer"; windows that do not fit are dropped.
detail::Literal eval_scatter(const hlo::Instruction& inst, const detail::Literal& operand,
                             const detail::Literal& indices, const detail::Literal& updates);
/// Ascending lexicographic sort on the first num_keys operands (floats: -0.0 == 0.0, NaNs last); stable.
Value eval_sort(const hlo::Instruction& inst, const std::vector<const detail::Literal*>& ops);
/// (values, int32 indices) of the k largest along the last axis; NaN is largest, ties keep the lower index.
Value eval_top_k(const hlo::Instruction& inst, const detail::Literal& x);
/// General dilated convolution with feature and batch groups; floats accumulate in double.
detail::Literal eval_convolution(const hlo::Instruction& inst, const detail::Literal& lhs, const detail::Literal& rhs);

}  // namespace jitx::evaluator
