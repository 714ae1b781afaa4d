// Pytree structures as users read them, for cache-miss explanations.
#pragma once
#include <string>
#include <string_view>

namespace jitx::detail {
/// The Flattener's structure encoding of a call's arguments as a tuple of their trees, JAX's PyTreeDef style:
/// "([*, *], None, Params{*, *}, static)" (`*` a traced leaf, `static` a static value). Returns the encoding
/// itself should it not parse.
std::string structure_str(std::string_view encoded);
}  // namespace jitx::detail
