/*
 * minirt's tools for bindings (the Python package): what the CLI does, as calls exported by libminirt.so.
 * Every name starts with mrt_tool_; the library exports nothing else of the CLI.
 */
#pragma once

#include <stdbool.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A session configured by name = value options, the CLI's run options:
 *   threads=N  device=cpu|cuda  precision=fp32|fp64  expand_functions=all|OP,...
 *   no_fuse|no_winograd|no_mem_plan|poison_outputs=0|1
 *   dump_dir=DIR   every run writes every input, intermediate and output to DIR/<name>.npy + manifest.json
 *                  (as `minirt run --dump-all DIR`)
 *   model_path=P   recorded in the dump's provenance
 * An unknown name or a bad value is INVALID_ARG naming it. */
typedef struct mrt_tool_session mrt_tool_session;
mrt_status mrt_tool_session_new(const mrt_model *model, int n_options, const char *const *names,
                                const char *const *values, mrt_tool_session **out);
mrt_status mrt_tool_session_run(mrt_tool_session *s, int n_inputs, const char *const *names, const mrt_value *inputs);
/* The engine session inside (outputs: mrt_session_output). */
mrt_session *mrt_tool_session_get(mrt_tool_session *s);
void mrt_tool_session_free(mrt_tool_session *s);

/* `minirt compare`'s statistics for a against the reference b, as the JSON object `compare --json` writes per
   tensor (malloc'd; release with mrt_tool_free). stat: elemwise|max|mean|median|quantile. NULL on a bad stat
   (mrt_last_error says why) or out of memory. */
char *mrt_tool_compare_json(const mrt_tensor *a, const mrt_tensor *b, double atol, double rtol, const char *stat,
                            double quantile, bool equal_nan);
void mrt_tool_free(void *p);

/* The CLI in-process: argv[0] is "minirt", argv[1] the command. Returns the exit status; stdout is flushed. */
int mrt_tool_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
