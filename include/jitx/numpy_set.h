// jitx::numpy unique values: jnp.unique and the array API's unique_all/unique_counts/unique_inverse/unique_values,
// and union1d, with JAX's names, defaults, result dtypes and padding. Include "jitx/numpy.h" too.
#pragma once
#include <cstdint>
#include <optional>

#include "jitx/numpy.h"

namespace jitx::numpy {

// Unique values (src/ops/numpy_set.cpp), of the flattened input (JAX's axis=None), sorted as jnp.sort sorts (NaNs
// last). How many there are depends on the values: without `size` the input must be concrete (a TracerError under
// jit, as JAX's ConcretizationTypeError); with `size` every result has exactly size entries (the first size unique
// values, padded with fill_value: by default the smallest value, its index the smallest value's, its count 0) and
// works under jit. A zero-sized input with a nonzero size needs a fill_value (TypeError, as JAX's ValueError).

/// The unique values, their first indices in the flattened input, each input element's position among them
/// (inverse: the input's shape) and how often each occurs (counts); indices are int64 (JAX with x64).
struct UniqueResult {
  Array values, indices, inverse, counts;
};
/// jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=..., size=..., fill_value=...).
/// equal_nan: all NaNs are one value (JAX's default), else each NaN its own.
UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan,
                        Loc loc = Loc::current());
/// jnp.unique_all (the array API's): every NaN its own value.
UniqueResult unique_all(const Array& x, std::optional<int64_t> size = std::nullopt,
                        std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());
/// jnp.unique(x): the sorted unique values.
Array unique(const Array& x, std::optional<int64_t> size = std::nullopt, std::optional<Array> fill_value = std::nullopt,
             bool equal_nan = true, Loc loc = Loc::current());
/// jnp.unique_values: unique with every NaN its own value.
Array unique_values(const Array& x, std::optional<int64_t> size = std::nullopt,
                    std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());
/// jnp.unique_counts: (values, counts), every NaN its own value.
std::pair<Array, Array> unique_counts(const Array& x, std::optional<int64_t> size = std::nullopt,
                                      std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());
/// jnp.unique_inverse: (values, inverse), every NaN its own value.
std::pair<Array, Array> unique_inverse(const Array& x, std::optional<int64_t> size = std::nullopt,
                                       std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());
/// jnp.union1d: the unique values of both (flattened, promoted to one dtype), NaNs as one.
Array union1d(const Array& a, const Array& b, std::optional<int64_t> size = std::nullopt,
              std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());

}  // namespace jitx::numpy
