// Regression tests for the fourth round of tools/conformance.py's findings against JAX 0.10.2 (x64), from the whole
// run (all 12 dtypes). The expected values were printed by JAX in the venv (/work/venv-jax). Each runs eagerly and
// under jit; run the file under each JITX_PLATFORM.
#include <cmath>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
