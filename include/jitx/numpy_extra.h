// jitx::numpy extras (tril/triu, roll, tile, repeat, outer, fmod, logaddexp, nan_to_num, nan reductions,
// isclose/allclose, pad): kept in their own header so this branch merges additively; include "jitx/numpy.h" too.
#pragma once
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "jitx/numpy.h"

namespace jitx::numpy {

// more jnp functions (src/ops/numpy_extra.cpp, numpy_pad.cpp), composed from lax so grad/vmap/jit apply
/// Lower / upper triangle of the last two axes (k: diagonal offset), batched over leading axes.
Array tril(const Array& x, int64_t k = 0, Loc loc = Loc::current());
Array triu(const Array& x, int64_t k = 0, Loc loc = Loc::current());
/// Rolls elements by shift along axis (flattened when axis is nullopt); the tuple form rolls each axis.
Array roll(const Array& x, int64_t shift, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
Array roll(const Array& x, std::vector<int64_t> shifts, std::vector<int64_t> axes, Loc loc = Loc::current());
Array tile(const Array& x, std::vector<int64_t> reps, Loc loc = Loc::current());
/// Repeats each element (flattened when axis is nullopt); per-element counts with the vector form.
Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis = std::nullopt, Loc loc = Loc::current());
Array repeat(const Array& x, const std::vector<int64_t>& repeats, std::optional<int64_t> axis = std::nullopt,
             Loc loc = Loc::current());
Array outer(const Array& a, const Array& b, Loc loc = Loc::current());
/// C fmod: the result has the sign of the dividend.
Array fmod(const Array& x, const Array& y, Loc loc = Loc::current());
/// log(exp(x) + exp(y)), stable.
Array logaddexp(const Array& x, const Array& y, Loc loc = Loc::current());
/// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the largest finite values of x's dtype).
Array nan_to_num(const Array& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt, Loc loc = Loc::current());
/// Reductions that ignore NaNs (all-NaN slices: nansum 0, nanmean/nanmax/nanmin NaN, as JAX).
Array nansum(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array nanmean(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array nanmax(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array nanmin(const Array& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
/// |a - b| <= atol + rtol * |b| elementwise (infinities are close only to themselves; NaNs if equal_nan).
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false,
              Loc loc = Loc::current());
Array allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false,
               Loc loc = Loc::current());
/// jnp.pad: pad_width holds one (before, after) pair per axis, or one pair for all axes. mode: "constant"
/// (constant_values), "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "linear_ramp"
/// (end_values), "median" (the statistics are taken axis by axis over the already padded array, as NumPy/JAX).
using PadWidth = std::vector<std::pair<int64_t, int64_t>>;
Array pad(const Array& x, PadWidth pad_width, std::string_view mode = "constant", const Array& constant_values = 0,
          const Array& end_values = 0, Loc loc = Loc::current());
Array pad(const Array& x, int64_t pad_width, std::string_view mode = "constant", const Array& constant_values = 0,
          const Array& end_values = 0, Loc loc = Loc::current());
/// int32 insertion points of v into the sorted 1-D a (side "left": first a[i] >= v, "right": first a[i] > v);
/// NaNs order last, as in JAX's sort. Any shape of v.
Array searchsorted(const Array& a, const Array& v, std::string_view side = "left", Loc loc = Loc::current());
/// Indices of the nonzero elements, one int64 array per axis (as JAX with x64). With size: exactly size entries (padded with
/// fill_value); without it the size comes from the value, so a tracer throws TracerError (JAX's
/// ConcretizationTypeError).
std::vector<Array> nonzero(const Array& x, std::optional<int64_t> size = std::nullopt, int64_t fill_value = 0,
                           Loc loc = Loc::current());
/// jnp.argwhere: the (count, ndim) indices of the nonzero elements (size and fill_value as nonzero; a 0-d x
/// counts as a 1-d array of one element, as JAX).
Array argwhere(const Array& x, std::optional<int64_t> size = std::nullopt, int64_t fill_value = 0,
               Loc loc = Loc::current());
/// jnp.flatnonzero: the indices of the nonzero elements of ravel(x) (size and fill_value as nonzero).
Array flatnonzero(const Array& x, std::optional<int64_t> size = std::nullopt, int64_t fill_value = 0,
                  Loc loc = Loc::current());
/// One-argument jnp.where(cond, size=, fill_value=): nonzero(cond, size, fill_value). Written
/// where(c, {.size = 3, .fill_value = -1}); an options struct so that where(c, 1, 0) stays the three-argument where.
struct NonzeroOptions {
  std::optional<int64_t> size;
  int64_t fill_value = 0;
};
std::vector<Array> where(const Array& cond, const NonzeroOptions& options = {}, Loc loc = Loc::current());

/// The where= and initial= arguments of JAX's reductions: `where` (a bool array broadcasting to x's shape)
/// selects the elements reduced; `initial` (a scalar, converted to the result dtype) is combined with the result
/// (so max/min accept an empty selection or axis with it, and need it with where, as JAX). mean/var/std with where
/// divide by the count of selected elements (NaN when none); any/all and mean/var/std take no initial.
/// Written sum(x, {0}, false, {.where = mask, .initial = 1.0}).
struct ReduceOptions {
  std::optional<Array> where;
  std::optional<Array> initial;
};
Array sum(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array prod(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array max(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array min(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array all(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array any(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array mean(const Array& x, Axes axes, bool keepdims, const ReduceOptions& options, Loc loc = Loc::current());
Array var(const Array& x, Axes axes, bool keepdims, int64_t ddof, const ReduceOptions& options,
          Loc loc = Loc::current());
Array std(const Array& x, Axes axes, bool keepdims, int64_t ddof, const ReduceOptions& options,
          Loc loc = Loc::current());

}  // namespace jitx::numpy
