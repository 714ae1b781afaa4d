// lax::with_sharding_constraint: a sharding for the partitioner inside traced code.
#pragma once
#include "jitx/array.h"
#include "jitx/sharding.h"

namespace jitx {

namespace lax {
/// x, with the sharding the partitioner must give it (jax.lax.with_sharding_constraint): inside traced code a
/// sharding_constraint equation (the identity in value; JVP, transpose and vmap keep the constraint); on a concrete
/// array, device_put(x, sharding).
Array with_sharding_constraint(const Array& x, const Sharding& sharding, Loc loc = Loc::current());
}  // namespace lax

}  // namespace jitx
