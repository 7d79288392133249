/* The contract between the engine and operator code (opdefs in engine/opdef/, kernels in ops_cpu/,
 * ops_cuda/ and plugins).
 *
 * One context type serves both phases of a node:
 *  - infer (opdef, device-independent): validate attributes and input types/shapes, then declare each
 *    output with mrt_output_set(). Called at plan time, where an input's `data` is non-NULL only when its
 *    value is a constant (initializer, Constant, or folded). An infer that needs data it does not have
 *    calls `return mrt_infer_dynamic(ctx);`; the engine then calls infer again at run time with every
 *    input's data available. If it still cannot size an output there (NonZero, Unique...), it calls
 *    mrt_infer_dynamic() again and the kernel allocates that output itself with mrt_output_alloc().
 *  - run (kernel, per device): outputs declared by infer arrive allocated (`data` set); compute them.
 *
 * Errors: `return mrt_op_fail(ctx, MRT_STATUS_..., "fmt", ...)` prefixes the node name and op type.
 */
#pragma once

#include <stdarg.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "engine/status.h"
#include "engine/threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_op_ctx mrt_op_ctx;
typedef mrt_status (*mrt_infer_fn)(mrt_op_ctx *ctx);
typedef mrt_status (*mrt_run_fn)(mrt_op_ctx *ctx);

struct mrt_exec; /* engine-private: session/plan state for subgraphs and allocation */

/* The first attribute a kernel asked for with the wrong type (engine-private: the getters record it so that
   the engine fails the node with a clear message instead of letting the default stand in silently). */
typedef struct mrt_attr_mismatch {
    const char *name;
    mrt_attr_type got, want;
} mrt_attr_mismatch;

struct mrt_op_ctx {
    const mrt_node *node;
    const mrt_model *model;      /* for opsets and functions */
    int64_t opset;               /* the model's opset for node->domain */
    int n_inputs;
    const mrt_value **inputs;    /* NULL entries for omitted optional inputs */
    int n_outputs;
    mrt_value **outputs;         /* NULL entries for omitted optional outputs */
    int n_threads;
    bool planning;               /* true during plan-time infer/folding */
    bool dynamic;                /* set by mrt_infer_dynamic() */
    struct mrt_exec *exec;       /* engine-private */
    mrt_attr_mismatch *attr_mismatch; /* engine-private, may be NULL */
    size_t workspace_request;    /* set by mrt_workspace_request in the kernel's workspace hook */
    void *workspace;             /* in run: the planned workspace, or NULL (see mrt_workspace) */
    size_t workspace_bytes;
    struct mrt_threadpool *pool; /* the session's threads (see mrt_parallel_for) */
    const void *kernel_state;    /* in run: what the kernel's prepare built for this step, or NULL */
    const struct mrt_epilogue *epilogue; /* in run: element-wise work fused into this node (see ops_cpu/epilogue.h), or NULL */
    const struct mrt_prologue *prologue; /* in run: a scale of input 0 fused into this node (engine/epilogue.h), or NULL */
    bool no_winograd;            /* the session's no_winograd: 3x3 Convs take the GEMM (ops_cpu/conv_winograd.h) */
    int device;                  /* mrt_device_kind this run happens on: CUDA kernels see device pointers in
                                    their tensors' data and a device workspace */
    void *stream;                /* CUDA: the cudaStream_t the kernel must issue its work on */
    bool allow_tf32;             /* CUDA: the session's allow_tf32 (cuBLAS/cuDNN math mode) */
    unsigned prepared_inputs;    /* in prepare: the kernel sets bit i when its state holds input i's data in the form
                                    run reads (packed weights) and run never reads that input's data: the engine may
                                    then let the model's copy go (engine/weights.h); its shape stays readable */
};

/* In prepare: `bytes` (64-byte aligned) that live as long as the plan, for the state the kernel builds (packed
   weights). The engine frees them with the plan: the kernel's release must not (it needs none for this memory). A
   plan's requests are laid out together in large blocks on transparent huge pages where the system offers them
   (engine/plan_mem.h). NULL when out of memory, over the allocation limit, or outside the engine's plan. */
void *mrt_plan_alloc(const mrt_op_ctx *ctx, size_t bytes);

/* ---- inputs and outputs */

/* Input tensor i, or NULL when omitted (or beyond n_inputs) or not a tensor. */
const mrt_tensor *mrt_input(const mrt_op_ctx *ctx, int i);
/* Output tensor i, or NULL when the output is omitted. */
mrt_tensor *mrt_output(mrt_op_ctx *ctx, int i);
/* In infer: declare output i (ignored when that output is omitted). */
mrt_status mrt_output_set(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int rank, const int64_t *shape);
/* In infer: declare output i as a sequence of `dtype` tensors, or as an optional/none. */
mrt_status mrt_output_set_sequence(mrt_op_ctx *ctx, int i, mrt_dtype dtype);
mrt_status mrt_output_set_none(mrt_op_ctx *ctx, int i);
/* In infer: outputs can't be sized yet (see above). Returns OK. */
mrt_status mrt_infer_dynamic(mrt_op_ctx *ctx);
/* In run, for outputs infer left dynamic: allocate output i (zeroed, owned by the engine). */
mrt_status mrt_output_alloc(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int rank, const int64_t *shape,
                            mrt_tensor **out);
/* In run: set output i to a sequence of n tensors; the engine takes ownership of items (each item's
   data from mrt_tensor_alloc, the array from malloc). */
mrt_status mrt_output_take_sequence(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int64_t n, mrt_tensor *items);

/* In run: make *v (owned: its storage from mrt_tensor_alloc/malloc) output i; the engine takes ownership
   and *v is zeroed. For outputs infer left dynamic. */
mrt_status mrt_output_take_value(mrt_op_ctx *ctx, int i, mrt_value *v);
/* Input value i (tensor, sequence or none), or NULL when the input is omitted. */
const mrt_value *mrt_input_value(const mrt_op_ctx *ctx, int i);

/* ---- workspaces: scratch memory planned like a value that lives for one step, so that nothing allocates
   inside a run. The kernel row's workspace hook (engine/registry.h) says how many bytes its run will need; run
   fetches them, once per call (carve several buffers out of one request). Without a plan (dynamic shapes, folding, --no-mem-plan) the engine
   serves the request from a buffer it grows on demand and keeps across runs. */
void mrt_workspace_request(mrt_op_ctx *ctx, size_t bytes);
/* At least `bytes`, 64-byte aligned, valid until the kernel returns, holding garbage (sanitizer builds fill it
   with 0xFF bytes, NaN or -1, to prove no kernel counts on zeros); NULL (with a failed status from mrt_op_fail
   already set) only when the memory can't be had. */
void *mrt_workspace(mrt_op_ctx *ctx, size_t bytes);

/* One workspace carved into n buffers of counts[i] elements of elem_bytes each, every buffer 64-byte aligned (a
   count of 0 gives an empty buffer). The workspace hook requests it (failing, naming the op, when the size overflows); run
   fetches it and gets the buffers' addresses in parts[] (NULL, status set, when the memory can't be had). */
mrt_status mrt_workspace_request_parts(mrt_op_ctx *ctx, int n, const int64_t *counts, size_t elem_bytes);
void *mrt_workspace_parts(mrt_op_ctx *ctx, int n, const int64_t *counts, size_t elem_bytes, void **parts);

/* ---- threads: run fn over [0, n) in ranges of at least `grain` indices on the session's threads (the caller
   included); returns when all are done. See engine/threadpool.h: ranges vary between calls, so each index's
   result must depend on that index alone. */
void mrt_parallel_for(const mrt_op_ctx *ctx, int64_t n, int64_t grain, mrt_range_fn fn, void *arg);

/* ---- attributes (by name; defaults when absent). An attribute of another type also gives the default, and
   the engine then fails the node naming the attribute and both types. Accepted conversions: an int where a
   float is asked for, an int where ints are asked for (a one-element list). */

int64_t mrt_attr_int(const mrt_op_ctx *ctx, const char *name, int64_t def);
float mrt_attr_float(const mrt_op_ctx *ctx, const char *name, float def);
const char *mrt_attr_string(const mrt_op_ctx *ctx, const char *name, const char *def);
/* List attributes: *n = 0 and *v = NULL when absent. Returns true when present. */
bool mrt_attr_ints(const mrt_op_ctx *ctx, const char *name, const int64_t **v, int64_t *n);
bool mrt_attr_floats(const mrt_op_ctx *ctx, const char *name, const float **v, int64_t *n);
/* Typed access that fails (INVALID_MODEL, naming the node) when the attribute has another type. */
mrt_status mrt_attr_get(const mrt_op_ctx *ctx, const char *name, mrt_attr_type type, const mrt_attr **out);

/* ---- errors */

mrt_status mrt_op_fail(const mrt_op_ctx *ctx, mrt_status status, const char *fmt, ...) MRT_PRINTF(3, 4);

/* ---- shape helpers */

/* numpy broadcasting of two shapes; fails naming both shapes when incompatible. */
mrt_status mrt_broadcast_shapes(const mrt_op_ctx *ctx, int ra, const int64_t *a, int rb, const int64_t *b,
                                int *rank, int64_t *shape);
/* Normalise a possibly negative axis into [0, rank); fails naming the attribute when out of range. */
mrt_status mrt_normalize_axis(const mrt_op_ctx *ctx, const char *what, int64_t axis, int rank, int *out);
/* Read an int32/int64 1-D (or scalar) tensor into int64 values (max n_max); fails on other dtypes. */
mrt_status mrt_tensor_read_ints(const mrt_op_ctx *ctx, const char *what, const mrt_tensor *t, int64_t *vals,
                                int64_t n_max, int64_t *n);
/* Row-major strides (in elements) of a shape. */
void mrt_shape_strides(int rank, const int64_t *shape, int64_t *strides);

/* ---- subgraphs (If/Loop/Scan) */

/* Run `body` (an attribute graph of ctx->node) with the given input values; outputs are copied into
   `outputs` (n_outputs of them, owned by the caller: release with mrt_value_release). Outer-scope values
   visible to ctx->node are visible to the body. */
mrt_status mrt_op_run_subgraph(mrt_op_ctx *ctx, const mrt_graph *body, int n_inputs, const mrt_value *inputs,
                               int n_outputs, mrt_value *outputs);

#ifdef __cplusplus
}
#endif
