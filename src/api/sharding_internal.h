// The sharding API's checks shared by its files (sharding.cpp, sharding_multihost.cpp).
#pragma once
#include <string_view>

#include "jitx/sharding.h"

namespace jitx::detail {

/// Checks that `sharding` fits an array of `shape` (the rank and, per split dimension, divisibility), naming `op`.
void check_sharding_fits(const Sharding& sharding, const Shape& shape, std::string_view op);

}  // namespace jitx::detail
