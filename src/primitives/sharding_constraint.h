// The sharding_constraint primitive (lax::with_sharding_constraint inside traced code): the identity, carrying a
// sharding for the partitioner.
#pragma once
#include "core/params.h"
#include "jitx/array.h"
#include "jitx/sharding.h"

namespace jitx::detail {

/// Binds sharding_constraint on x (a tracer, usually); the sharding is kept in a process-wide table and named in
/// the equation's params by its text ("NamedSharding(mesh=..., spec=P('data',))").
Array bind_sharding_constraint(const Array& x, const Sharding& sharding);
/// The sharding a sharding_constraint equation's params name.
const Sharding& constraint_sharding(const Params& params);

}  // namespace jitx::detail
