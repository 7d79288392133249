/* Test plugin: a shared library that is not a minirt plugin (no mrt_plugin_init). */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_EXPORT int mrt_test_not_a_plugin(void);

MRT_PLUGIN_EXPORT int mrt_test_not_a_plugin(void) { return 42; }
