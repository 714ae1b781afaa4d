// jitx::FloatingPointError: what config().debug_nans / debug_infs throw (in its own header, as ParseError is).
#pragma once
#include "jitx/error.h"

namespace jitx {

/// A NaN (or inf) produced while config().debug_nans (debug_infs) is on: JAX's FloatingPointError. The message
/// names the first primitive that produced it and the user's line.
class FloatingPointError : public Error {
 public:
  using Error::Error;
};

}  // namespace jitx
