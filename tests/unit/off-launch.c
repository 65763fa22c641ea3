/* off-launch.c: runtime/launch.c as a build without --enable-test-overrides compiles it
 * (tests/unit/test_overrides.c). */
#include "config.h"
#undef ZSP_TEST_OVERRIDES
#include "runtime/launch.c"
