/*
 * minirt: a self-contained reference inference engine for ONNX models.
 *
 * Typical use:
 *
 *     mrt_model *model = NULL;
 *     if (mrt_model_load("model.onnx", &model) != MRT_STATUS_OK) {
 *         fprintf(stderr, "%s\n", mrt_last_error());
 *         return 1;
 *     }
 *     mrt_session *s = NULL;
 *     mrt_session_options opt = mrt_session_options_default();
 *     mrt_session_new(model, &opt, &s);
 *     mrt_value x = mrt_value_from_tensor(input_tensor);     // borrowed, not copied
 *     const char *names[] = {"x"};
 *     mrt_session_run(s, 1, names, &x);
 *     const mrt_value *y = mrt_session_output(s, 0);         // valid until the next run
 *     ...
 *     mrt_session_free(s);
 *     mrt_model_free(model);
 *
 * Conventions:
 * - Every fallible function returns an mrt_status; results come back through out-parameters.
 *   On failure, mrt_last_error() describes what went wrong (thread-local, overwritten by the next failure).
 * - mrt_X_new / mrt_X_free pairs own heap objects; free(NULL) is a no-op.
 * - Tensors are dense, row-major (C order) and describe borrowed storage unless said otherwise.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MRT_VERSION_STRING "0.1.0"
/* The git commit the library was built from (12 hex digits, or "unknown"), for provenance records. */
extern const char mrt_git_commit[];

/* ------------------------------------------------------------------ status */

typedef enum mrt_status {
    MRT_STATUS_OK = 0,
    MRT_STATUS_INVALID_ARG,     /* the caller passed something wrong (usage, input shape/dtype) */
    MRT_STATUS_INVALID_MODEL,   /* the model bytes or graph are malformed or inconsistent */
    MRT_STATUS_NOT_IMPLEMENTED, /* valid ONNX that minirt cannot run (no kernel, unsupported attr) */
    MRT_STATUS_OUT_OF_MEMORY,
    MRT_STATUS_DEVICE_ERROR,    /* CUDA/cuBLAS/cuDNN failure or no device */
    MRT_STATUS_IO_ERROR,        /* a file could not be read or written */
} mrt_status;

/* The message of the last failure on this thread ("" if none). Borrowed; valid until the next failure. */
const char *mrt_last_error(void);
const char *mrt_status_name(mrt_status status);

/* ------------------------------------------------------------------ dtypes */

/* Values are ONNX's TensorProto.DataType numbers, so they map 1:1 to the wire format. */
typedef enum mrt_dtype {
    MRT_DTYPE_UNDEFINED = 0,
    MRT_DTYPE_FLOAT = 1,
    MRT_DTYPE_UINT8 = 2,
    MRT_DTYPE_INT8 = 3,
    MRT_DTYPE_UINT16 = 4,
    MRT_DTYPE_INT16 = 5,
    MRT_DTYPE_INT32 = 6,
    MRT_DTYPE_INT64 = 7,
    MRT_DTYPE_STRING = 8,
    MRT_DTYPE_BOOL = 9,
    MRT_DTYPE_FLOAT16 = 10,
    MRT_DTYPE_DOUBLE = 11,
    MRT_DTYPE_UINT32 = 12,
    MRT_DTYPE_UINT64 = 13,
    MRT_DTYPE_COMPLEX64 = 14,
    MRT_DTYPE_COMPLEX128 = 15,
    MRT_DTYPE_BFLOAT16 = 16,
    MRT_DTYPE_FLOAT8E4M3FN = 17,
    MRT_DTYPE_FLOAT8E4M3FNUZ = 18,
    MRT_DTYPE_FLOAT8E5M2 = 19,
    MRT_DTYPE_FLOAT8E5M2FNUZ = 20,
    MRT_DTYPE_UINT4 = 21,
    MRT_DTYPE_INT4 = 22,
    MRT_DTYPE_FLOAT4E2M1 = 23,
    MRT_DTYPE_FLOAT8E8M0 = 24,
    MRT_DTYPE_UINT2 = 25,
    MRT_DTYPE_INT2 = 26,
    MRT_DTYPE_COUNT_ /* one past the last known id */
} mrt_dtype;

bool mrt_dtype_is_known(int dtype);
/* Storage bits per element (1 byte = 8). Sub-byte types (int4, uint2, float4...) pack low nibble first. */
int mrt_dtype_bits(mrt_dtype dtype);
/* Lower-case ONNX-style name ("float", "int64", "bfloat16"...); "undefined" for unknown ids. */
const char *mrt_dtype_name(mrt_dtype dtype);
bool mrt_dtype_is_float(mrt_dtype dtype);   /* float16/bfloat16/float/double (and float8/4 types) */
bool mrt_dtype_is_integer(mrt_dtype dtype); /* signed or unsigned integer types, not bool */

/* ------------------------------------------------------------------ tensors */

/* Highest rank minirt accepts; larger ranks are refused with a clear error. */
#define MRT_MAX_RANK 16

typedef struct mrt_tensor {
    mrt_dtype dtype;
    int rank;
    int64_t shape[MRT_MAX_RANK];
    /* Dense row-major elements. STRING tensors hold `char *[numel]`, each NUL-terminated. */
    void *data;
} mrt_tensor;

/* Number of elements; 1 for rank 0. Assumes the shape was validated (see mrt_shape_numel). */
int64_t mrt_tensor_numel(const mrt_tensor *t);
/* Whether a and b have the same rank and dims (dtypes are not compared). */
bool mrt_tensor_same_shape(const mrt_tensor *a, const mrt_tensor *b);
/* Bytes of `data` (packed for sub-byte types; sizeof(char *) per element for strings). */
size_t mrt_tensor_nbytes(const mrt_tensor *t);
/* Checked element count: fails (INVALID_ARG) on negative dims, rank > MRT_MAX_RANK or int64 overflow. */
mrt_status mrt_shape_numel(int rank, const int64_t *shape, int64_t *numel);
/* Checked byte size for dtype × shape. */
mrt_status mrt_shape_nbytes(mrt_dtype dtype, int rank, const int64_t *shape, size_t *nbytes);

/* Allocate zeroed storage owned by the tensor: release it with mrt_tensor_release. */
mrt_status mrt_tensor_alloc(mrt_tensor *t, mrt_dtype dtype, int rank, const int64_t *shape);
/* Free storage obtained from mrt_tensor_alloc/mrt_tensor_copy (and, for strings, each string). Buffers of 1 MiB
   and more are kept for reuse by later allocations (at most 16 of them, 512 MiB). */
void mrt_tensor_release(mrt_tensor *t);
/* Free those kept buffers now (done when the last session is freed). */
void mrt_tensor_cache_flush(void);
/* Deep copy into freshly allocated storage. */
mrt_status mrt_tensor_copy(mrt_tensor *dst, const mrt_tensor *src);
/* "float32[1,3,224,224]"-style description into buf; returns buf. */
const char *mrt_tensor_describe(const mrt_tensor *t, char *buf, size_t len);
const char *mrt_shape_describe(int rank, const int64_t *shape, char *buf, size_t len);

/* ------------------------------------------------------------------ values */

typedef enum mrt_value_kind {
    MRT_VALUE_NONE = 0, /* an absent optional input/output, or an empty Optional */
    MRT_VALUE_TENSOR,
    MRT_VALUE_SEQUENCE,
} mrt_value_kind;

/* A runtime value: a tensor, a sequence of tensors, or nothing (empty optional). */
typedef struct mrt_value {
    mrt_value_kind kind;
    mrt_tensor tensor;     /* kind == TENSOR */
    mrt_dtype seq_dtype;   /* kind == SEQUENCE: element dtype (also for empty sequences) */
    int64_t n_items;       /* kind == SEQUENCE */
    mrt_tensor *items;     /* kind == SEQUENCE; owned by whoever produced the value */
    bool is_optional;      /* declared as optional(...) in the model */
} mrt_value;

mrt_value mrt_value_from_tensor(mrt_tensor t);
/* Deep copy (tensor data, sequence items) into freshly allocated storage. */
mrt_status mrt_value_copy(mrt_value *dst, const mrt_value *src);
/* Free storage owned by a value built with mrt_tensor_alloc'd tensors/items. */
void mrt_value_release(mrt_value *v);

/* ------------------------------------------------------------------ models */

typedef struct mrt_model mrt_model; /* defined in engine/graph.h */

/* Load an ONNX model file. External data is read relative to the file's folder. */
mrt_status mrt_model_load(const char *path, mrt_model **out);
/* Load from bytes; base_dir (may be NULL) is where external data lives. */
mrt_status mrt_model_load_from_memory(const void *bytes, size_t len, const char *base_dir, mrt_model **out);
void mrt_model_free(mrt_model *model);

/* Graph inputs that are not initializers, and graph outputs, in graph order. Names are borrowed. */
int mrt_model_n_inputs(const mrt_model *model);
const char *mrt_model_input_name(const mrt_model *model, int i);
int mrt_model_n_outputs(const mrt_model *model);
const char *mrt_model_output_name(const mrt_model *model, int i);

/* The type a graph input (numbered as by mrt_model_input_name) or output declares. For a sequence or optional,
   dtype/rank/dims describe the element (kind says which). rank -1: not declared; dims[i] -1: not fixed, and
   dim_params[i] is its symbolic name when the model gives one (borrowed from the model, else NULL). */
typedef enum mrt_declared_kind {
    MRT_DECLARED_UNKNOWN = 0,
    MRT_DECLARED_TENSOR,
    MRT_DECLARED_SEQUENCE,
    MRT_DECLARED_OPTIONAL,
    MRT_DECLARED_OTHER, /* sparse tensor, map */
} mrt_declared_kind;
typedef struct mrt_declared_type {
    mrt_declared_kind kind;
    mrt_dtype dtype;
    int rank;
    int64_t dims[MRT_MAX_RANK];
    const char *dim_params[MRT_MAX_RANK];
} mrt_declared_type;
/* INVALID_ARG when i is out of range. */
mrt_status mrt_model_input_type(const mrt_model *model, int i, mrt_declared_type *out);
mrt_status mrt_model_output_type(const mrt_model *model, int i, mrt_declared_type *out);

/* ------------------------------------------------------------------ sessions */

typedef struct mrt_session mrt_session;
typedef struct mrt_node mrt_node; /* defined in engine/graph.h */

typedef enum mrt_precision {
    MRT_PRECISION_DEFAULT = 0, /* each op in the model's dtypes */
    MRT_PRECISION_FP64,        /* float32/float16/bfloat16 widened to float64 everywhere */
} mrt_precision;

/* Called after each executed node with its output values (borrowed, valid during the call).
   Returning non-OK stops the run with that status. */
typedef mrt_status (*mrt_node_callback)(void *user, const mrt_node *node, int n_outputs,
                                         const char *const *output_names, const mrt_value *const *outputs);

/* Called before each executed node for each of its inputs: return true and fill *replacement (borrowed,
   must stay valid until the node's on_node callback returns) to feed the node that value instead of the one
   the run computed. Used for teacher-forced comparison. Constant folding is disabled when set. */
typedef bool (*mrt_input_override)(void *user, const mrt_node *node, int input_index, const char *value_name,
                                   const mrt_value *computed, mrt_value *replacement);

typedef struct mrt_session_options {
    int n_threads;                 /* 0 = all cores */
    const char *device;            /* "cpu" (default) or "cuda" */
    mrt_precision precision;
    bool no_mem_plan;              /* one buffer per value instead of the planned arena (debugging) */
    bool no_fold;                  /* disable constant folding */
    mrt_node_callback on_node;
    void *on_node_user;
    mrt_input_override override_input;
    void *override_user;
    /* Ops to run through their ONNX function body even where a kernel exists: "all" or a comma-separated list
       of op types (NULL: none). Checks a kernel against the standard's definition (--expand-functions). */
    const char *expand_functions;
    /* Fusion (on unless disabled): element-wise successors of a Conv (BatchNormalization, a residual Add, Relu,
       Clip, Sigmoid, SiLU) run inside it, with the same bits as separate nodes. Their intermediate values are
       then never computed, so fusion is off when on_node or override_input is set, unless fuse_with_callback
       (profiling, which wants the real run and needs no values: the callbacks of fused nodes then fire right
       after their producer's, and outputs that were never computed have no data). */
    bool no_fuse;
    bool fuse_with_callback;
    /* float32 3x3 stride-1 Convs by Winograd's F(2x2, 3x3) (on unless disabled; docs/architecture.md): with
       no_winograd they take the GEMM, summing the products in the order every other Conv does (im2col's). */
    bool no_winograd;
    /* Testing: the outputs that built-in kernels promise to write in full (the elementwise, movement, pooling,
       reduction, Softmax and LayerNorm kernels, Conv's, Gemm's and MatMul's first output), which the engine
       otherwise hands over as the arena holds them, are filled with 0xFF bytes (NaN in floats, -1 in integers)
       before the kernel runs, so an element one fails to write shows. The conformance runner sets it. Every other
       output (plugins' included) starts as zeros either way. */
    bool poison_outputs;
    /* device "cuda": a node that no CUDA kernel takes is an error naming it, instead of running on the CPU */
    bool no_cpu_fallback;
    /* device "cuda": let cuBLAS and cuDNN use TF32 tensor cores for float32 (off: float32 products stay exact) */
    bool allow_tf32;
    /* device "cuda": time every CUDA node of the main graph with a pair of CUDA events (bench --profile); read with
       mrt_session_node_gpu_ms after the run */
    bool device_node_timing;
    /* The session serves one run (minirt info's trial runs): kernels pack nothing (no prepare) and each weight the
       main graph's CPU steps read is let go once its last reader has run, so a run holds at most the model's weights
       (docs/memory.md, "Weights"). A later run plans again, copying the weights it needs again. */
    bool run_once;
} mrt_session_options;

mrt_session_options mrt_session_options_default(void);

mrt_status mrt_session_new(const mrt_model *model, const mrt_session_options *opt, mrt_session **out);
void mrt_session_free(mrt_session *s);

/* Bind inputs by name (names of graph inputs; initializer-backed inputs may be overridden)
   and run. Inputs are borrowed for the duration of the call. */
mrt_status mrt_session_run(mrt_session *s, int n_inputs, const char *const *names, const mrt_value *inputs);

/* What the last plan did (for --stats). */
typedef struct mrt_session_stats {
    int nodes_before, nodes_after; /* graph nodes; nodes left to run after constant folding */
    int dynamic_nodes;             /* nodes whose shapes are only known at run time */
    size_t arena_peak_bytes;       /* the planned arena (0 with no_mem_plan) */
    size_t naive_bytes;            /* sum of all intermediate sizes */
    size_t lower_bound_bytes;      /* max over steps of the bytes alive at once (planned values) */
    int inplace_count;
    int concat_inputs_in_place;    /* Concat inputs written by their producers straight into the Concat's output */
    double plan_ms;
    int function_nodes;            /* nodes run through an ONNX function body (no kernel, or expand_functions) */
    int fused_nodes;               /* nodes run inside another node's kernel (fusion) */
    size_t run_peak_bytes;         /* the last run's dynamically shaped tensors (allocated at run time, freed after
                                      their last reader): the most bytes alive at once, main graph only */
    /* device "cuda" (main graph): */
    int cuda_nodes, cpu_nodes;     /* steps placed on each device (folded and fused ones not counted) */
    size_t device_arena_bytes;     /* the device arena the memory planner sized */
    size_t device_const_bytes;     /* the constants CUDA steps read, uploaded once per plan */
    int planned_copies;            /* host<->device copies the plan makes per run (minirt info lists them) */
    int streams_used;
    float gpu_ms;                  /* the last run on the device, from CUDA events (0 on the CPU) */
    /* the model's weights (initializers, every graph of the model; docs/memory.md, "Weights"): */
    size_t weights_mapped_bytes;   /* read in place from the model file's (or external data's) read-only mapping */
    size_t weights_copied_bytes;   /* held as copies: raw_data not aligned for its type, typed fields, models loaded
                                      from a caller's buffer */
    size_t weights_released_bytes; /* let go after every kernel reading them packed them (they come back if a new
                                      input shape replans) */
    size_t weights_packed_bytes;   /* what the kernels built from them at plan time (packed weights), main graph */
} mrt_session_stats;
void mrt_session_get_stats(const mrt_session *s, mrt_session_stats *out);
int mrt_session_n_threads(const mrt_session *s);

/* Where the last plan put node `node` (index in the main graph): "cuda", "cpu", "folded" (computed at plan time),
   "fused" (run inside another node), or NULL when the plan has no step for it (dead code, or nothing planned yet).
   *why (may be NULL) receives why a node of a CUDA session runs on the CPU, or NULL; borrowed until the next plan. */
const char *mrt_session_node_device(const mrt_session *s, int node, const char **why);
/* With device_node_timing: the device time of node `node` (main graph) in the last run, from CUDA events; -1 when
   it did not run on the device (or timing is off). */
float mrt_session_node_gpu_ms(const mrt_session *s, int node);
/* The host<->device copies the last plan makes per run, i in [0, stats.planned_copies): the copied value's name, the
   node it is made for (NULL: the graph's outputs at the end), and whether it goes to the device. False past the end. */
bool mrt_session_plan_copy(const mrt_session *s, int i, const char **value, const char **before_node, bool *to_device);

/* Outputs of the last run, in graph order; borrowed, valid until the next run or free. */
int mrt_session_n_outputs(const mrt_session *s);
const char *mrt_session_output_name(const mrt_session *s, int i);
const mrt_value *mrt_session_output(const mrt_session *s, int i);

/* ------------------------------------------------------------------ plugins */

/* Load an op plugin (a shared library exporting mrt_plugin_init, see minirt/minirt_plugin.h) into the
   process-wide operator table used by every session. Built-in ops can only be replaced when
   allow_replace is true. The library stays loaded until the process ends. */
mrt_status mrt_plugin_load(const char *path, bool allow_replace);

#ifdef __cplusplus
}
#endif
