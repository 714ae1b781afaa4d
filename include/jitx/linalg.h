// jitx::numpy::linalg (jnp::linalg): linear algebra as JAX's jnp.linalg. Only norm so far (issue 15's other
// functions, the decompositions, are not done yet: see the README's jnp::linalg paragraph).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "jitx/array.h"

namespace jitx::numpy::linalg {

/// jnp.linalg.norm with a numeric ord (nullopt: the 2-norm of a vector, Frobenius of a matrix, or, with no axis,
/// the 2-norm of x flattened). axis: nullopt (a vector norm of a 1-d x, a matrix norm of a 2-d x when ord is
/// given; else every axis flattened), one axis (a vector norm: any p, +-inf, 0) or two (a matrix norm: 1, -1,
/// +-inf; 2 and -2 need an SVD and throw until it exists). Integers promote to the default float, as in JAX.
Array norm(const Array& x, std::optional<double> ord = std::nullopt,
           std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false, Loc loc = Loc::current());
/// jnp.linalg.norm with ord "fro" (matrix norms only; "nuc" needs an SVD and throws until it exists).
Array norm(const Array& x, std::string_view ord, std::optional<std::vector<int64_t>> axis = std::nullopt,
           bool keepdims = false, Loc loc = Loc::current());

}  // namespace jitx::numpy::linalg
