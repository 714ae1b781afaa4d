// The collectives of shard_map's body (JAX's jax.lax parallel operators): psum, pmean, pmax, pmin, all_gather,
// psum_scatter, all_to_all, ppermute, axis_index, axis_size. Axis names are bound by an enclosing
// jitx::shard_map (jitx/shard_map.h); an unbound name is a TypeError ("unbound axis name: z", JAX's NameError).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "jitx/array.h"

namespace jitx {
namespace lax {

/// The axis names of one collective: one name ("data") or several ({"data", "model"}: JAX's tuple of names).
struct AxisNames {
  std::vector<std::string> names;
  AxisNames(const char* n) : names{n} {}                                 // NOLINT(google-explicit-constructor)
  AxisNames(std::string n) : names{std::move(n)} {}                      // NOLINT(google-explicit-constructor)
  AxisNames(std::initializer_list<std::string> n) : names(n) {}          // NOLINT(google-explicit-constructor)
  explicit AxisNames(std::vector<std::string> n) : names(std::move(n)) {}
};

Array psum(const Array& x, const AxisNames& axis_name, Loc loc = Loc::current());
Array pmean(const Array& x, const AxisNames& axis_name, Loc loc = Loc::current());
Array pmax(const Array& x, const AxisNames& axis_name, Loc loc = Loc::current());
Array pmin(const Array& x, const AxisNames& axis_name, Loc loc = Loc::current());
/// Gathers the blocks of the group along a new axis `axis` (or concatenated along `axis` when tiled).
Array all_gather(const Array& x, const AxisNames& axis_name, int64_t axis = 0, bool tiled = false,
                 Loc loc = Loc::current());
/// psum, then each device keeps its chunk of scatter_dimension (which must be the group size unless tiled).
Array psum_scatter(const Array& x, const AxisNames& axis_name, int64_t scatter_dimension = 0, bool tiled = false,
                   Loc loc = Loc::current());
/// Splits split_axis into group-size chunks, sends chunk j to device j, concatenates what arrives along
/// concat_axis (JAX's lax.all_to_all; not tiled: split_axis has the group size and is replaced by a new axis).
Array all_to_all(const Array& x, const std::string& axis_name, int64_t split_axis, int64_t concat_axis,
                 bool tiled = false, Loc loc = Loc::current());
/// Sends the block of device src to device dst for each (src, dst) pair; devices that receive nothing get zeros.
Array ppermute(const Array& x, const std::string& axis_name, const std::vector<std::pair<int64_t, int64_t>>& perm,
               Loc loc = Loc::current());
/// This device's index along the axis (int32), as JAX's lax.axis_index.
Array axis_index(const std::string& axis_name, Loc loc = Loc::current());
/// The size of the axis (the product over several names), as JAX's lax.axis_size.
int64_t axis_size(const AxisNames& axis_name, Loc loc = Loc::current());

}  // namespace lax
}  // namespace jitx
