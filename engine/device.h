/* Engine-private: running an exec's steps on the CUDA device (docs/cuda.md, docs/architecture.md "Devices").
 *
 * Placement: a session on "cuda" places each step that runs (not folded) on the CUDA kernel row of its op when the
 * module has one and its `supports` accepts the node, else on the CPU (or fails, naming the node, with
 * no_cpu_fallback). Folding always uses the CPU kernel: it happens at plan time on constants.
 *
 * Storage: every value keeps its host storage as on the CPU (the host arena); a value that a CUDA step writes or
 * reads also gets device storage: an offset in one device arena sized by the memory planner (values whose shapes
 * are known at plan time, and the CUDA steps' workspaces), one upload per plan for the constants a CUDA step reads,
 * or an allocation at run time (dynamic shapes). Per value, two bits say where its current bytes are; a step's
 * inputs are copied to its device when they are not there yet. The plan lists those copies (mrt_dev_copy) for
 * `minirt info`; at run time the bits decide, so the copies made are exactly the listed ones for a static plan.
 *
 * Streams: steps of the main graph run on the streams engine/sched.c assigns, with events on edges that cross
 * streams, where an edge is a data dependence or a reuse of device-arena bytes (the writer of a reused block waits
 * for every reader of the block's previous value). Subgraphs and function bodies run on stream 0. */
#pragma once

#include "engine/cuda_module.h"
#include "engine/exec.h"
#include "engine/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MRT_ON_HOST = 1, MRT_ON_DEVICE = 2 };

/* A copy the plan makes before a step (for minirt info and the stats). */
typedef struct mrt_dev_copy {
    int step;      /* before this step */
    int value;
    bool to_device;
} mrt_dev_copy;

typedef struct mrt_dev_exec {
    const mrt_cuda_api *api;
    void **ptr;               /* per value: device storage or NULL */
    uint8_t *own;             /* per value: 1 when ptr is a run-time allocation of its own (freed with the value) */
    uint8_t *where;           /* per value: MRT_ON_HOST | MRT_ON_DEVICE, where its current bytes are */
    uint8_t *reads_on_host;   /* per value: read by a CPU step, or a graph output (planning) */
    void *arena;              /* device arena (one allocation) */
    size_t arena_bytes;
    void *consts;             /* the constants CUDA steps read, uploaded once per plan (one allocation) */
    size_t consts_bytes;
    void *scratch;            /* device workspace for steps the plan could not size */
    size_t scratch_bytes;
    mrt_dev_copy *copies;
    int n_copies, cap_copies;
    mrt_value *out_view;      /* a CUDA step's outputs as the kernel sees them (device pointers) */
    int out_view_cap;
    void *temp[64];           /* this step's replaced inputs on the device (teacher forcing), freed after it */
    int n_temp;
    void **timing;            /* device_node_timing: per step, a start and an end event (2 * n_steps), or NULL */
    float *step_ms;           /* per step: the last run's device time, -1 when not timed */
    void **ws;                /* per step: a CUDA step's planned device workspace, or NULL */
    mrt_schedule sched;       /* stream per step (main graph; empty for subgraphs) */
    void **events;            /* per step: recorded after it when a later step on another stream waits on it */
    int n_events;
} mrt_dev_exec;

/* The session's CUDA state (NULL fields on a CPU session). */
typedef struct mrt_dev_session {
    const mrt_cuda_api *api;
    int n_streams;
    void *streams[8];
    void *run_start, *run_end; /* timing events around a run, for gpu_ms */
    float last_gpu_ms;
    void *staging;             /* pinned host memory every upload and download goes through (grown on demand) */
    size_t staging_bytes;
    bool sync_each_node;       /* MRT_SYNC_EACH_NODE=1: synchronise after every node so a fault lands on it */
} mrt_dev_session;

mrt_status mrt_dev_session_open(mrt_session *s);
void mrt_dev_session_close(mrt_session *s);

mrt_status mrt_dev_exec_new(mrt_exec *e);
/* Drop the plan's device storage (the plan is being rebuilt or the exec freed). */
void mrt_dev_exec_release_plan(mrt_exec *e);
void mrt_dev_exec_free(mrt_exec *e);

/* Plan time, after infer: put the step on CUDA when a kernel row takes it (see above). */
mrt_status mrt_dev_place_step(mrt_exec *e, mrt_step *step, mrt_op_ctx *ctx);
/* Plan time, after plan_storage: device arena, constant uploads, copies, streams. */
mrt_status mrt_dev_plan(mrt_exec *e);
/* After mrt_dev_plan: constant v was uploaded with the plan's constants and no host step reads it (no CPU step, not a
   graph output), so the host's copy may go. */
bool mrt_dev_const_on_device_only(const mrt_exec *e, int v);

/* Inputs of step s plus the outer values its subgraphs read (-1 for omitted inputs), into a growing *list. */
mrt_status mrt_dev_step_reads(const mrt_exec *e, int s, int **list, int *n, int *cap);
/* A dynamic CUDA step after its run-time infer: keep it on CUDA if the kernel takes the shapes, else the CPU. */
mrt_status mrt_dev_check_dynamic(mrt_exec *e, mrt_step *step, mrt_op_ctx *ctx);

/* Run time. Before a run: the bits of sources (inputs are on the host). */
void mrt_dev_run_begin(mrt_exec *e);
/* Before a step: make its inputs present where it runs, and for a CUDA step point the context at device storage
   (the inputs' copies and the outputs' views); dynamic CUDA steps allocate their outputs here (after infer). */
mrt_status mrt_dev_step_inputs(mrt_exec *e, int s, mrt_op_ctx *ctx);
/* After a step: mark where its outputs are, check the device's error state, record events. */
mrt_status mrt_dev_step_done(mrt_exec *e, int s, mrt_op_ctx *ctx);
/* Bring value v's bytes to the host (a callback, a graph output, a CPU reader). */
mrt_status mrt_dev_to_host(mrt_exec *e, int v);
/* After the last step: graph outputs to the host, the streams joined. */
mrt_status mrt_dev_run_end(mrt_exec *e);
/* A value's storage is being released (a run-time value died, or the plan is dropped). */
void mrt_dev_release_value(mrt_exec *e, int v);
/* Value v's last reader, step s, is issued: its run-time device storage returns to the pool on s's stream. */
void mrt_dev_value_dies(mrt_exec *e, int v, int s);
/* A CUDA step's zero fill / poison of an output (device memory). */
mrt_status mrt_dev_fill(mrt_exec *e, int s, void *dst, int byte, size_t bytes);
/* Device workspace for a step the plan could not size. */
void *mrt_dev_scratch(mrt_exec *e, size_t bytes);
/* A dynamic CUDA kernel's mrt_output_alloc: device storage for value vi. */
mrt_status mrt_dev_output_alloc(mrt_op_ctx *ctx, int vi, mrt_value *view);

#ifdef __cplusplus
}
#endif
