// jitx::numpy unique values and set operations: jnp.unique (also of rows along an axis) and the array API's
// unique_all/unique_counts/unique_inverse/unique_values, union1d, intersect1d, setdiff1d and setxor1d, with JAX's
// names, defaults, result dtypes and padding. Include "jitx/numpy.h" too.
#pragma once
#include <cstdint>
#include <optional>

#include "jitx/numpy.h"

namespace jitx::numpy {

// Unique values (src/ops/numpy_set.cpp), of the flattened input (JAX's axis=None) or, with an axis, the unique
// slices along it (unique rows for axis=0), sorted as jnp.sort sorts (NaNs last; slices lexicographically). How many there are depends on the values: without `size` the input must be concrete (a TracerError under
// jit, as JAX's ConcretizationTypeError); with `size` every result has exactly size entries (the first size unique
// values, padded with fill_value: by default the smallest value, its index the smallest value's, its count 0) and
// works under jit. A zero-sized input with a nonzero size needs a fill_value (TypeError, as JAX's ValueError).

/// The unique values, their first indices in the flattened input, each input element's position among them
/// (inverse: the input's shape) and how often each occurs (counts); indices are int64 (JAX with x64).
struct UniqueResult {
  Array values, indices, inverse, counts;
};
/// jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=..., size=..., fill_value=...,
/// axis=...). equal_nan: all NaNs are one value (JAX's default), else each NaN its own. With an axis, values has
/// size entries along it (the other dims kept), and indices, inverse and counts are 1-D, over the slices.
UniqueResult unique_all(const Array& x, std::optional<int64_t> size, std::optional<Array> fill_value, bool equal_nan,
                        std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
/// jnp.unique_all (the array API's): every NaN its own value.
UniqueResult unique_all(const Array& x, std::optional<int64_t> size = std::nullopt,
                        std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());
/// jnp.unique(x): the sorted unique values (axis: the unique slices along it).
Array unique(const Array& x, std::optional<int64_t> size = std::nullopt, std::optional<Array> fill_value = std::nullopt,
             bool equal_nan = true, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
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


// Set operations on two arrays (flattened). As for unique, the result's length depends on the values: without
// `size` both inputs must be concrete (TracerError under jit); with it the result has size entries, padded as JAX
// pads: setdiff1d with fill_value (default 0), setxor1d and intersect1d with fill_value or else the smallest
// result. assume_unique=true skips the deduplication (results are unspecified if an input has duplicates, as in
// JAX). NaNs: each input's NaNs count as one value, and no NaN is in the other input (NaN != NaN). size=0 gives
// empty results (JAX raises an internal error there; a documented difference).

/// jnp.setdiff1d: the unique values of ar1 that are not in ar2, sorted, in ar1's dtype (fill_value converted to it).
Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                std::optional<int64_t> size = std::nullopt, std::optional<Array> fill_value = std::nullopt,
                Loc loc = Loc::current());
/// jnp.setxor1d: the values in exactly one of ar1 and ar2, sorted, in their promoted dtype.
Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
               std::optional<int64_t> size = std::nullopt, std::optional<Array> fill_value = std::nullopt,
               Loc loc = Loc::current());
/// jnp.intersect1d: the values in both ar1 and ar2, sorted, in their promoted dtype.
Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                  std::optional<int64_t> size = std::nullopt, std::optional<Array> fill_value = std::nullopt,
                  Loc loc = Loc::current());
/// jnp.intersect1d(..., return_indices=True): the intersection and where each value first occurs in the flattened
/// ar1 (indices1) and ar2 (indices2). Padding entries (with size) hold the out-of-range index ar1.size / ar2.size.
/// Index dtype as JAX's: int64 (the default int), but int32 with assume_unique and no size.
struct Intersect1dResult {
  Array values, indices1, indices2;
};
Intersect1dResult intersect1d_with_indices(const Array& ar1, const Array& ar2, bool assume_unique = false,
                                           std::optional<int64_t> size = std::nullopt,
                                           std::optional<Array> fill_value = std::nullopt, Loc loc = Loc::current());

}  // namespace jitx::numpy
