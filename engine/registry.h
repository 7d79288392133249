/* The operator table. Two levels, both keyed by (domain, op_type, since_version):
 *  - opdefs (engine/opdef/<family>.c): arity and infer (attribute checks, output dtypes and shapes);
 *  - kernels, one table per device (ops_cpu/cpu_kernels.c, ops_cuda/cuda_kernels.c): run.
 * For a model importing opset V of a domain, the row used is the one with the highest since_version <= V.
 * Built-in tables are static data; plugins add rows at run time through mrt_registry_add_*. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MRT_OPDEF_NO_FOLD = 1u << 0,     /* never constant-fold (random ops) */
    MRT_OPDEF_HAS_SUBGRAPH = 1u << 1, /* If/Loop/Scan: outputs are computed by running attribute graphs */
    MRT_OPDEF_FOLD_ON_SHAPE = 1u << 2, /* the outputs depend only on the inputs' shapes (Shape, Size): fold
                                         once those are known; the kernel must not read input data */
    MRT_OPDEF_INPLACE = 1u << 3,      /* output 0 may take over input 0's buffer when input 0 dies here: the
                                         kernel never reads x0 at a position after writing y there (element-wise
                                         ops: y[i] from x0[i] alone; Softmax: a row is read before it is
                                         overwritten) and writes every element (the planner checks sizes and
                                         element widths) */
    MRT_OPDEF_OPTIONAL_LEADING = 1u << 4 /* the first min_inputs inputs must be there as slots but may be omitted
                                           with an empty name (Loop's M and cond) */
};

typedef struct mrt_opdef {
    const char *domain;      /* "" = ai.onnx */
    const char *op_type;
    int since_version;
    int min_inputs, max_inputs;   /* max_inputs -1 = variadic */
    int min_outputs, max_outputs; /* max_outputs -1 = variadic */
    mrt_infer_fn infer;
    unsigned flags;
} mrt_opdef;

typedef enum mrt_device_kind { MRT_DEVICE_CPU = 0, MRT_DEVICE_CUDA = 1, MRT_DEVICE_COUNT_ } mrt_device_kind;

typedef struct mrt_kernel {
    const char *domain;
    const char *op_type;
    int since_version;
    mrt_run_fn run;
    /* Optional: false (with a reason) when this kernel can't handle the node's dtypes/attributes. */
    bool (*supports)(const mrt_op_ctx *ctx, char *why, size_t why_len);
    /* Optional: called once per plan, after infer, for a node that runs (not folded, shapes known); inputs that
       are constants carry their data. What it builds (packed weights) is kept with the plan, handed to run as
       ctx->kernel_state, and freed with `release` (NULL when it lives in plan memory, mrt_plan_alloc, which the
       engine frees with the plan). *state may be left NULL. */
    mrt_status (*prepare)(mrt_op_ctx *ctx, void **state);
    void (*release)(void *state);
    unsigned flags; /* MRT_KERNEL_* */
    /* Optional: called once per plan after infer (and after placement: the row of the device the node runs on),
       for a node that runs with shapes known; requests with mrt_workspace_request / _parts the scratch this
       kernel's run will fetch, which the memory planner then lays out with the plan's values. The size is the
       kernel's business, not the opdef's: each device's row sizes its own (a CPU GEMM's packing buffers, a CUDA
       im2col chunk). Without it a run's mrt_workspace is served from a buffer grown on demand. */
    mrt_status (*workspace)(mrt_op_ctx *ctx);
} mrt_kernel;

enum {
    /* run writes every element of output 0 (so the engine skips zero-filling it) and, for float32 output, applies
       ctx->epilogue to it: element-wise successors may be fused into the node (engine/fuse.c) */
    MRT_KERNEL_EPILOGUE = 1u << 0,
    /* run applies ctx->prologue (a per-channel scale or BatchNormalization [-> Relu] of input 0, engine/epilogue.h)
       whenever it is set: a Mul(x, s) or those nodes read only by this node may be fused into it */
    MRT_KERNEL_INPUT_SCALE = 1u << 1,
    /* prepare's result depends only on the node's constant inputs and attributes (never on another input's shape
       or data), so a step whose shapes are only known at run time (dynamic: after NonZero, NMS, a Loop) prepares
       at its first run and keeps the result: the heads of a detector pack their weights once, not every run */
    MRT_KERNEL_PREPARE_FROM_CONSTANTS = 1u << 2,
    /* run applies ctx->prologue's zero pads of input 0 (engine/epilogue.h) whenever they are set: a Pad read only by
       this node may be fused into it */
    MRT_KERNEL_INPUT_PAD = 1u << 3,
    /* run writes every element of every output, whatever the inputs, so the engine does not zero-fill them first
       (a serial pass over memory the kernel overwrites). Never set it on a kernel that accumulates into its output,
       writes only some positions (a scatter without a copy of its input, an unpooling), or stops early on some
       inputs; the conformance runner (session option poison_outputs) checks the kernels that set it. */
    MRT_KERNEL_WRITES_ALL = 1u << 4,
};

/* Static tables: each family file defines `const mrt_opdef mrt_opdefs_<family>[]` / `const mrt_kernel
   mrt_cpu_kernels_<family>[]` ending with a zeroed row; the lists of families are in engine/opdef/opdefs.c
   and ops_cpu/cpu_kernels.c. */
typedef struct mrt_opdef_table { const mrt_opdef *rows; } mrt_opdef_table;
typedef struct mrt_kernel_table { const mrt_kernel *rows; } mrt_kernel_table;

extern const mrt_opdef_table mrt_builtin_opdefs[];    /* NULL-terminated list of tables */
extern const mrt_kernel_table mrt_cpu_kernel_tables[]; /* NULL-terminated list of tables */
/* The CPU backend's setup for a session of n_threads (ops_cpu/cpu_kernels.c): the threads of the libraries its
   kernels call (OpenBLAS's count is process-wide: the last session created sets it). */
void mrt_cpu_backend_set_threads(int n_threads);

typedef struct mrt_registry mrt_registry;

/* The registry holds the built-in tables plus rows added by plugins (and the plugin handles). */
mrt_status mrt_registry_new(mrt_registry **out);
void mrt_registry_free(mrt_registry *r);
/* The process-wide registry used by sessions that don't name one. */
mrt_registry *mrt_registry_default(void);

/* Plugin rows. Adding a row whose (domain, op, since_version) already exists fails unless replace. */
mrt_status mrt_registry_add_opdef(mrt_registry *r, const mrt_opdef *def, bool replace);
mrt_status mrt_registry_add_kernel(mrt_registry *r, mrt_device_kind dev, const mrt_kernel *k, bool replace);

/* Keep a plugin's dlopen handle (closed by mrt_registry_free) and its name for error messages. */
mrt_status mrt_registry_add_plugin_handle(mrt_registry *r, void *handle, const char *name);
/* "libfoo.so, libbar.so" or "none" into buf; returns buf. */
const char *mrt_registry_plugin_list(const mrt_registry *r, char *buf, size_t len);

/* Resolution for a model opset: NULL when none. */
const mrt_opdef *mrt_registry_find_opdef(const mrt_registry *r, const char *domain, const char *op_type,
                                         int64_t opset);
/* The CUDA module's built-in rows (a NULL-terminated list of tables), registered when the module is loaded. */
void mrt_registry_set_cuda_tables(const mrt_kernel_table *tables);
const mrt_kernel *mrt_registry_find_kernel(const mrt_registry *r, mrt_device_kind dev, const char *domain,
                                           const char *op_type, int64_t opset);

/* Iterate over all opdef rows (built-in then plugin). Returns false when i is past the end. */
bool mrt_registry_opdef_at(const mrt_registry *r, size_t i, const mrt_opdef **out);
/* All since_versions registered for (domain, op) in ascending order; returns the count (<= max). */
int mrt_registry_versions(const mrt_registry *r, const char *domain, const char *op_type, int *versions, int max);
/* The since_versions of a device's kernel rows for (domain, op), ascending; returns the count (<= max). */
int mrt_registry_kernel_versions(const mrt_registry *r, mrt_device_kind dev, const char *domain, const char *op_type,
                                 int *versions, int max);
bool mrt_registry_has_kernel_row(const mrt_registry *r, mrt_device_kind dev, const char *domain,
                                 const char *op_type, int since_version);

#ifdef __cplusplus
}
#endif
