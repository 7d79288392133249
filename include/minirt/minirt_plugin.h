/*
 * minirt op plugins: the ABI between minirt and a shared library that adds operators.
 *
 * A plugin includes ONLY this header (no other minirt header) and does not link to minirt: everything it
 * needs from the engine arrives as function pointers in `mrt_plugin_api`. This follows SQLite's
 * sqlite3ext.h model:
 *  - MRT_PLUGIN_ABI_VERSION names the layout of every struct below;
 *  - the structs only ever GROW AT THEIR END (a field, once released, keeps its offset and meaning), so a
 *    plugin built for ABI N loads into any minirt that provides ABI >= N;
 *  - both sides check: the engine reads the plugin's exported `mrt_plugin_abi_version` before calling
 *    anything, and the plugin checks `api->abi_version` (MRT_PLUGIN_CHECK_ABI) in mrt_plugin_init.
 *
 * Minimal plugin (see examples/plugins/customop2.c and docs/custom_ops.md):
 *
 *     #include "minirt/minirt_plugin.h"
 *     MRT_PLUGIN_DECLARE_ABI();
 *
 *     static int my_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user) {...}
 *     static int my_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user) {...}
 *
 *     MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg,
 *                                           char *errmsg, size_t errmsg_len)
 *     {
 *         MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
 *         mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
 *         op.domain = "my_domain"; op.op_type = "MyOp"; op.since_version = 1;
 *         op.min_inputs = op.max_inputs = 1; op.min_outputs = op.max_outputs = 1;
 *         op.infer = my_infer; op.run_cpu = my_run;
 *         return api->register_op(reg, &op);
 *     }
 *
 * Status codes are ints with the values of mrt_status (minirt.h): 0 is success.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. Bump only when appending fields (never reorder or remove). */
#define MRT_PLUGIN_ABI_VERSION 2

#if defined(_WIN32)
#define MRT_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define MRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define MRT_PLUGIN_EXPORT
#endif

#if defined(__GNUC__)
#define MRT_PLUGIN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MRT_PLUGIN_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------ status codes (= mrt_status) */

enum {
    MRT_PLUGIN_OK = 0,
    MRT_PLUGIN_INVALID_ARG = 1,      /* bad input shape/dtype given by the caller */
    MRT_PLUGIN_INVALID_MODEL = 2,    /* bad attributes, inconsistent node */
    MRT_PLUGIN_NOT_IMPLEMENTED = 3,  /* valid, but this plugin does not handle it (dtype, attribute) */
    MRT_PLUGIN_OUT_OF_MEMORY = 4,
    MRT_PLUGIN_DEVICE_ERROR = 5,
    MRT_PLUGIN_IO_ERROR = 6
};

/* ------------------------------------------------------------------ element types */

/* ONNX TensorProto.DataType numbers (the same values as mrt_dtype). */
enum {
    MRT_PLUGIN_DTYPE_UNDEFINED = 0,
    MRT_PLUGIN_DTYPE_FLOAT = 1,
    MRT_PLUGIN_DTYPE_UINT8 = 2,
    MRT_PLUGIN_DTYPE_INT8 = 3,
    MRT_PLUGIN_DTYPE_UINT16 = 4,
    MRT_PLUGIN_DTYPE_INT16 = 5,
    MRT_PLUGIN_DTYPE_INT32 = 6,
    MRT_PLUGIN_DTYPE_INT64 = 7,
    MRT_PLUGIN_DTYPE_STRING = 8,     /* data is char *[numel] */
    MRT_PLUGIN_DTYPE_BOOL = 9,       /* one byte per element, 0 or 1 */
    MRT_PLUGIN_DTYPE_FLOAT16 = 10,   /* uint16_t bits; see api->f16_to_f32 */
    MRT_PLUGIN_DTYPE_DOUBLE = 11,
    MRT_PLUGIN_DTYPE_UINT32 = 12,
    MRT_PLUGIN_DTYPE_UINT64 = 13,
    MRT_PLUGIN_DTYPE_COMPLEX64 = 14,
    MRT_PLUGIN_DTYPE_COMPLEX128 = 15,
    MRT_PLUGIN_DTYPE_BFLOAT16 = 16   /* uint16_t bits; see api->bf16_to_f32 */
    /* 17..26: float8/int4/float4/int2 families, numbered as in ONNX */
};

/* ONNX AttributeProto.AttributeType numbers, returned by api->attr_type. */
enum {
    MRT_PLUGIN_ATTR_NONE = 0, /* no such attribute */
    MRT_PLUGIN_ATTR_FLOAT = 1,
    MRT_PLUGIN_ATTR_INT = 2,
    MRT_PLUGIN_ATTR_STRING = 3,
    MRT_PLUGIN_ATTR_TENSOR = 4,
    MRT_PLUGIN_ATTR_GRAPH = 5,
    MRT_PLUGIN_ATTR_FLOATS = 6,
    MRT_PLUGIN_ATTR_INTS = 7,
    MRT_PLUGIN_ATTR_STRINGS = 8
};

/* ------------------------------------------------------------------ tensors */

/* A view of an input or output, filled by api->input / api->output / api->output_alloc. Everything it
   points to belongs to the engine and is valid until the callback returns. Dense, row-major. */
typedef struct mrt_plugin_tensor {
    int32_t dtype;          /* MRT_PLUGIN_DTYPE_* */
    int32_t rank;           /* 0 = scalar */
    const int64_t *shape;   /* rank dims */
    int64_t numel;          /* product of the dims (1 for a scalar) */
    void *data;             /* elements; NULL in infer unless the input is a constant; may be NULL when
                               numel == 0; device memory in run_cuda. Inputs are read-only. */
} mrt_plugin_tensor;

/* ------------------------------------------------------------------ callbacks */

typedef struct mrt_plugin_api mrt_plugin_api;
typedef struct mrt_plugin_ctx mrt_plugin_ctx;             /* one node being inferred or run (opaque) */
typedef struct mrt_plugin_registrar mrt_plugin_registrar; /* valid only inside mrt_plugin_init (opaque) */

/* infer: validate inputs/attributes and declare every output with api->output_set (plan time; inputs
   have data only when constant - call api->infer_dynamic to be called again at run time with data).
   run: outputs declared by infer arrive allocated and zero-filled; compute them.
   Both return MRT_PLUGIN_OK, or the status of api->fail(...) on error. */
typedef int (*mrt_plugin_infer_fn)(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user_data);
typedef int (*mrt_plugin_run_fn)(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user_data);

enum {
    MRT_PLUGIN_OP_NO_FOLD = 1u << 0 /* never constant-fold this op (random ops, side effects) */
};

/* One operator version. Start from MRT_PLUGIN_OP_INIT so struct_size and the defaults are right. */
typedef struct mrt_plugin_op {
    uint32_t struct_size;            /* sizeof(mrt_plugin_op) as the plugin was compiled */
    const char *domain;              /* "my_domain"; "" or "ai.onnx" = the ONNX domain */
    const char *op_type;
    int32_t since_version;           /* used for models importing opset >= since_version of the domain */
    int32_t min_inputs, max_inputs;  /* max -1 = variadic */
    int32_t min_outputs, max_outputs;
    mrt_plugin_infer_fn infer;       /* required */
    mrt_plugin_run_fn run_cpu;       /* CPU kernel (host pointers) */
    mrt_plugin_run_fn run_cuda;      /* optional CUDA kernel (device pointers), NULL if none */
    void *user_data;                 /* passed to infer/run as is */
    uint32_t flags;                  /* MRT_PLUGIN_OP_* */
    /* ABI 1 ends here. */
} mrt_plugin_op;

#define MRT_PLUGIN_OP_INIT                                                                             \
    {                                                                                                  \
        sizeof(mrt_plugin_op), "", NULL, 1, 1, 1, 1, 1, NULL, NULL, NULL, NULL, 0                      \
    }

/* ------------------------------------------------------------------ the engine's functions */

struct mrt_plugin_api {
    uint32_t abi_version;            /* MRT_PLUGIN_ABI_VERSION of the engine */
    uint32_t struct_size;            /* sizeof(mrt_plugin_api) in the engine */
    const char *minirt_version;      /* "0.1.0" */

    /* Registration (only inside mrt_plugin_init). Fails (non-zero, with a message the engine reports)
       on a malformed op, a duplicate, or a built-in op when replacing was not allowed by the user. */
    int (*register_op)(mrt_plugin_registrar *reg, const mrt_plugin_op *op);

    /* The node. */
    const char *(*node_name)(const mrt_plugin_ctx *ctx);
    const char *(*node_domain)(const mrt_plugin_ctx *ctx);  /* "" for the ONNX domain */
    const char *(*node_op_type)(const mrt_plugin_ctx *ctx);
    int64_t (*opset)(const mrt_plugin_ctx *ctx);            /* the model's opset for the node's domain */
    int (*n_threads)(const mrt_plugin_ctx *ctx);            /* threads the session may use */

    /* Inputs and outputs. input/output return 1 and fill *out when present (a tensor), 0 when omitted. */
    int (*n_inputs)(const mrt_plugin_ctx *ctx);
    int (*n_outputs)(const mrt_plugin_ctx *ctx);
    int (*input)(const mrt_plugin_ctx *ctx, int i, mrt_plugin_tensor *out);
    int (*output)(mrt_plugin_ctx *ctx, int i, mrt_plugin_tensor *out); /* in run: declared outputs */
    /* infer: declare output i (ignored when that output is omitted). Returns a status. */
    int (*output_set)(mrt_plugin_ctx *ctx, int i, int32_t dtype, int rank, const int64_t *shape);
    /* infer: outputs can't be sized at plan time; infer runs again at run time with input data. If it
       still can't (data-dependent sizes), it calls this again and run uses output_alloc. */
    int (*infer_dynamic)(mrt_plugin_ctx *ctx);
    /* run: allocate (zeroed) an output that infer left dynamic. Returns a status; fills *out. */
    int (*output_alloc)(mrt_plugin_ctx *ctx, int i, int32_t dtype, int rank, const int64_t *shape,
                        mrt_plugin_tensor *out);

    /* Attributes of the node, by name; the defaults are returned when absent or of another type. */
    int (*attr_type)(const mrt_plugin_ctx *ctx, const char *name); /* MRT_PLUGIN_ATTR_*, 0 when absent */
    int64_t (*attr_int)(const mrt_plugin_ctx *ctx, const char *name, int64_t def);
    float (*attr_float)(const mrt_plugin_ctx *ctx, const char *name, float def);
    const char *(*attr_string)(const mrt_plugin_ctx *ctx, const char *name, const char *def);
    /* Lists: return 1 and set *v and *n when present; 0 with *v = NULL, *n = 0 otherwise. */
    int (*attr_ints)(const mrt_plugin_ctx *ctx, const char *name, const int64_t **v, int64_t *n);
    int (*attr_floats)(const mrt_plugin_ctx *ctx, const char *name, const float **v, int64_t *n);

    /* Errors: record "node '<name>' (<domain>::<op>, plugin <lib>): <message>" as minirt's last error and
       return `status` (MRT_PLUGIN_INVALID_MODEL when 0 was passed): `return api->fail(ctx, ...);`. */
    int (*fail)(const mrt_plugin_ctx *ctx, int status, const char *fmt, ...) MRT_PLUGIN_PRINTF(3, 4);

    /* Element types. */
    const char *(*dtype_name)(int32_t dtype); /* "float", "int64", ...; "undefined" when unknown */
    int (*dtype_bits)(int32_t dtype);         /* storage bits per element; 0 when unknown */
    float (*f16_to_f32)(uint16_t h);
    uint16_t (*f32_to_f16)(float f);          /* round to nearest even */
    float (*bf16_to_f32)(uint16_t b);
    uint16_t (*f32_to_bf16)(float f);         /* round to nearest even */
    /* Element i of a numeric/bool buffer of that dtype, as double; store converts (rounding to nearest). */
    double (*load_f64)(int32_t dtype, const void *data, int64_t i);
    void (*store_f64)(int32_t dtype, void *data, int64_t i, double v);

    /* ABI 1 ends here. Later versions append below; check api->abi_version before using them. */

    /* ABI 2: in run_cuda, the cudaStream_t the node runs on (launch and copy on it; NULL = the legacy default
       stream); NULL in run_cpu and infer. Tensors there hold device pointers. */
    void *(*cuda_stream)(const mrt_plugin_ctx *ctx);
};

/* ------------------------------------------------------------------ what a plugin exports */

/* The ABI the plugin was compiled for; minirt reads it before calling mrt_plugin_init and refuses a
   plugin built for a newer ABI than it provides. Define it with MRT_PLUGIN_DECLARE_ABI(); at file scope. */
#ifdef __cplusplus
#define MRT_PLUGIN_DECLARE_ABI() \
    extern "C" MRT_PLUGIN_EXPORT const uint32_t mrt_plugin_abi_version = MRT_PLUGIN_ABI_VERSION
#else
#define MRT_PLUGIN_DECLARE_ABI() MRT_PLUGIN_EXPORT const uint32_t mrt_plugin_abi_version = MRT_PLUGIN_ABI_VERSION
#endif
MRT_PLUGIN_EXPORT extern const uint32_t mrt_plugin_abi_version;

/* Entry point: register ops through api->register_op(reg, ...). Return 0 on success; otherwise write a
   NUL-terminated message into errmsg (errmsg_len bytes) and return non-zero: the plugin is not loaded. */
typedef int (*mrt_plugin_init_fn)(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                  size_t errmsg_len);
MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len);

/* In mrt_plugin_init: refuse to run against an engine older than this header. */
#define MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len)                                                         \
    do {                                                                                                      \
        if (!(api) || (api)->abi_version < MRT_PLUGIN_ABI_VERSION ||                                          \
            (api)->struct_size < sizeof(mrt_plugin_api)) {                                                    \
            snprintf((errmsg), (errmsg_len), "this plugin was built for minirt plugin ABI %d, this minirt "   \
                     "provides %u", MRT_PLUGIN_ABI_VERSION, (api) ? (unsigned)(api)->abi_version : 0u);       \
            return MRT_PLUGIN_INVALID_ARG;                                                                    \
        }                                                                                                     \
    } while (0)

#ifdef __cplusplus
}
#endif
