/* Tensor dumps for accuracy alignment: every selected value as DIR/<sanitised name>.npy plus
 * DIR/manifest.json (per tensor in execution order: name, file, producing node and op, dtype, shape,
 * min/max/mean/std, NaN and Inf counts; and a provenance block). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "minirt/minirt.h"

typedef struct dump_ctx dump_ctx;

typedef struct dump_options {
    const char *dir;
    const char *names;    /* comma-separated value names, or NULL for all */
    const char *op_types; /* comma-separated op types, or NULL for all */
} dump_options;

/* Creates the folder. */
mrt_status dump_begin(const dump_options *opt, dump_ctx **out);
/* Dump one value (graph inputs: producer NULL). Applies the selection. */
mrt_status dump_value(dump_ctx *d, const char *name, const char *producer, const char *op_type, const mrt_value *v);
/* mrt_node_callback adapter: dumps a node's outputs. */
mrt_status dump_on_node(void *user, const mrt_node *node, int n_outputs, const char *const *names,
                        const mrt_value *const *values);

typedef struct dump_provenance {
    const char *model_path;
    const char *device;
    const char *precision;
    int n_threads;
    int n_inputs;
    const char *const *input_paths;
} dump_provenance;

/* Write manifest.json and free the context. */
mrt_status dump_finish(dump_ctx *d, const dump_provenance *prov);
void dump_abort(dump_ctx *d);

/* Per-tensor statistics, shared with `compare`. */
typedef struct tensor_stats {
    double min, max, mean, std;
    int64_t nan_count, inf_count;
} tensor_stats;
void tensor_compute_stats(const mrt_tensor *t, tensor_stats *s);
void json_write_string(FILE *f, const char *s);
/* Non-finite doubles are not JSON: written as null. */
void json_write_number(FILE *f, double v);
