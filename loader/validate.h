/* Model validation as onnx.checker does it (full check), on the parsed ModelProto before minirt converts it.
 * See docs/architecture.md, "Validation", for the rules and for what minirt runs although the checker refuses it. */
#pragma once

#include <stdbool.h>

#include "minirt/minirt.h"

typedef struct mrt_problem {
    char *message;
    bool runs;     /* the ONNX checker refuses this, but minirt runs the model anyway (a documented choice) */
} mrt_problem;

typedef struct mrt_problems {
    int n, cap;
    mrt_problem *items;
    int n_refused; /* problems with runs == false: minirt refuses the model */
    int n_dropped; /* problems beyond the list's bound, counted only */
} mrt_problems;

void mrt_problems_free(mrt_problems *p);

struct Onnx__ModelProto;
/* Every problem of `mp` into `out` (which starts zeroed). Fails only for lack of memory. Recursion follows
   subgraphs, bounded by MRT_MAX_GRAPH_DEPTH (the bytes were checked by mrt_proto_check_nesting first). */
mrt_status mrt_validate_model_proto(const struct Onnx__ModelProto *mp, mrt_problems *out);

/* `minirt check`: read, parse and validate the file at `path`, then (when nothing is refused) load it fully, so
   that data errors (initializers, external data) are found too. Problems go to `out`; the status is an error only
   when the file cannot be read or memory runs out. */
mrt_status mrt_model_check_file(const char *path, mrt_problems *out);

/* The newest IR version minirt reads: onnx 1.23's (its float6 types are refused where they occur). */
#define MRT_IR_VERSION_MAX 14
