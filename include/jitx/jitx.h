// jitx: JAX for C++. Include this one header.
#pragma once
#include "jitx/array.h"
#include "jitx/autodiff.h"
#include "jitx/config.h"
#include "jitx/device.h"
#include "jitx/dtype.h"
#include "jitx/error.h"
#include "jitx/jit.h"
#include "jitx/lax.h"
#include "jitx/nn.h"
#include "jitx/numpy.h"
#include "jitx/pytree.h"
#include "jitx/random.h"
