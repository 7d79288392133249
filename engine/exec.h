/* Engine-private: the plan and runtime state of one graph (the session's main graph, or a subgraph run
 * by If/Loop/Scan). Not part of the operator contract; kernels only see mrt_op_ctx. */
#pragma once

#include "engine/plan_mem.h"
#include "engine/registry.h"

/* What is known about a value while planning. */
typedef enum mrt_value_state {
    MRT_VS_UNSET = 0, /* not yet produced */
    MRT_VS_CONST,     /* data known at plan time: initializer, outer constant, or folded */
    MRT_VS_SHAPED,    /* type and shape known; data produced at run time */
    MRT_VS_DYNAMIC,   /* shape known only at run time */
} mrt_value_state;

/* Who frees a value's storage. */
typedef enum mrt_alloc_kind {
    MRT_ALLOC_BORROWED = 0, /* initializer, user input, outer value, arena view */
    MRT_ALLOC_PLAN,         /* heap, freed when the plan is rebuilt or the exec freed */
    MRT_ALLOC_RUN,          /* heap, freed at the start of the next run */
} mrt_alloc_kind;

typedef struct mrt_step {
    int node;                    /* index in graph->nodes */
    mrt_node *call_shadow;       /* inside a function body: the node with the caller's attributes resolved, or NULL */
    mrt_node *shadow;            /* fp64 precision: a copy of the node with dtype attributes widened, or NULL */
    const mrt_opdef *def;
    const mrt_kernel *kernel;
    bool folded;                 /* computed at plan time; skipped at run (callback still fires) */
    bool dynamic;                /* infer runs again at run time */
    int64_t opset;
    size_t ws_bytes;             /* workspace the kernel row's hook asked for (mrt_workspace_request) */
    size_t ws_offset;            /* its place in the arena (when planned: ws_bytes && arena) */
    void *kernel_state;          /* what the kernel's prepare built (packed weights), freed with the plan */
    bool prepared_at_run;        /* dynamic step: prepare ran at its first run (MRT_KERNEL_PREPARE_FROM_CONSTANTS) */
    struct mrt_fusion *fusion;   /* Conv/Gemm with element-wise successors fused into it (engine/fuse.c), or NULL */
    int fused_into;              /* >= 0: this step's work is done by that step (it is skipped); else -1 */
    bool inputs_in_output;       /* a Concat some of whose inputs were planned inside its output (plan_storage):
                                    its output is not zero-filled, and those inputs are not copied */
    uint8_t device;              /* mrt_device_kind the step runs on (engine/device.h) */
    const mrt_kernel *cpu_kernel;/* the CPU row (folding, fallback) when `kernel` is the CUDA one */
    char *placement_why;         /* device "cuda": why the step runs on the CPU (malloc'd), or NULL */
} mrt_step;

typedef struct mrt_session mrt_session;

/* A subgraph or function body run by one of an exec's nodes, kept between calls (see mrt_exec_call). */
typedef struct mrt_child_exec {
    const mrt_graph *body;
    const mrt_function *function;
    const mrt_node *caller;
    struct mrt_exec *exec;
} mrt_child_exec;

typedef struct mrt_exec {
    mrt_session *session;
    const mrt_model *model;
    const mrt_graph *graph;
    struct mrt_exec *parent;     /* enclosing exec for subgraphs */
    int depth;                   /* nesting of subgraph and function calls (bounded: a function may call itself) */
    const mrt_node *caller;      /* function bodies: the calling node (its attributes) */
    const mrt_function *function;/* function bodies: the function (its opset imports) */
    mrt_value *vals;             /* one per graph value */
    uint8_t *state;              /* mrt_value_state per value */
    uint8_t *alloc;              /* mrt_alloc_kind per value */
    uint8_t *fused_away;         /* per value: 1 when a fused chain never computes it (engine/fuse.c) */
    int n_steps;
    mrt_step *steps;
    int *order;                  /* topological node order (n_nodes) */
    bool planned;
    /* plan cache key: dtype+shape of each bound input and outer value */
    int64_t *sig;
    size_t sig_len, sig_cap;
    int64_t *sig_work;           /* where the next run's signature is built (kept between runs) */
    size_t sig_work_cap;
    void *arena;                 /* planned intermediate storage (NULL with no_mem_plan) */
    mrt_plan_mem plan_mem;       /* the kernels' prepared state (mrt_plan_alloc), freed with the plan */
    size_t arena_bytes;
    void *scratch;               /* workspace for kernels the plan could not size (dynamic shapes, folding,
                                    no_mem_plan): grown on demand, kept across runs */
    size_t scratch_bytes;
    int scratch_grows;           /* how often it grew (0 after the first run once shapes are stable) */
    /* values whose storage is allocated at run time (outputs of dynamic steps) die after their last reader:
       step s frees dies_at[dies_at_start[s] .. dies_at_start[s + 1]) when it is done (built with the plan) */
    int *dies_at_start, *dies_at;
    size_t run_bytes, run_peak_bytes; /* those values' bytes alive now, and at most, in the last run */
    const mrt_value **ctx_in;    /* node-context arrays, reused by every node (ctx_prepare) */
    mrt_value **ctx_out;
    mrt_value *ctx_in_copy;
    int ctx_cap_in, ctx_cap_out;
    /* the execs of subgraphs and function bodies its nodes ran: a Loop's next iteration, or the next run, reuses
       their plans; dropped with this exec's plan, since the constants they folded may change with it */
    mrt_child_exec *children;
    int n_children, cap_children;
    /* statistics of the last plan */
    int nodes_before, nodes_after, inplace_count, fused_count, concat_inputs_in_place;
    size_t naive_bytes, lower_bound_bytes;
    double plan_ms;
    struct mrt_dev_exec *dev;    /* device "cuda": placement and device storage (engine/device.c), else NULL */
    /* the model's weights this plan holds (engine/weights.h): per value, whether the plan holds its initializer, how
       many of the plan's steps still have to be planned that read it, and whether one of them reads its data after
       planning (then it is kept); a weight whose every reader packed it is let go (engine/plan_weights.c) */
    uint8_t *weight_held, *weight_kept;
    int *weight_readers;
    size_t weights_dropped_bytes; /* let go by this plan */
    /* run_once (main graph): step s takes the weights wtake[wtake_start[s] .. wtake_start[s + 1]) before it runs
       and lets go of wdrop[wdrop_start[s] ..] once it ran (mrt_exec_weights_plan_drops) */
    bool run_once;
    int *wtake_start, *wtake, *wdrop_start, *wdrop;
} mrt_exec;

struct mrt_session {
    const mrt_model *model;
    mrt_session_options opt;
    mrt_registry *registry;
    mrt_exec *main;
    int n_threads;
    mrt_threadpool *pool;        /* n_threads threads, the caller's included (engine/threadpool.h) */
    mrt_value *bound;            /* mrt_session_run's inputs in graph order (reused) */
    /* the standard's function bodies this session runs, parsed on first use (engine/function.c) */
    const struct mrt_std_function **std_src;
    mrt_function **std_fn;
    int n_std;
    struct mrt_dev_session *dev; /* device "cuda": the module, streams (engine/device.c), else NULL */
};

mrt_status mrt_exec_new(mrt_session *s, const mrt_graph *g, mrt_exec *parent, mrt_exec **out);

/* ---- the plan's holds on the model's weights (engine/plan_weights.c) */
/* Let go of weight v (engine/weights.h's drop); `count` adds its bytes to weights_dropped_bytes (not for a run_once
   weight that is taken again before its first reader). A freed copy leaves no pointer behind in e->vals. */
void mrt_exec_weight_let_go(mrt_exec *e, int v, bool count);
/* Hold weight v again (copied again from the mapping if it was a freed copy) and point e->vals[v] at it. */
mrt_status mrt_exec_weight_take(mrt_exec *e, int v);
/* With the plan: every hold released (without dropping), the run_once lists freed. */
void mrt_exec_weights_release(mrt_exec *e);
/* Before the steps are planned (live: per node): which held weights may be let go at all, and their readers. */
mrt_status mrt_exec_weights_plan_begin(mrt_exec *e, const bool *live);
/* Step planned; bit i of `packed`: its kernel packed input i and never reads that input's data. */
void mrt_exec_weights_step_planned(mrt_exec *e, const mrt_step *step, unsigned packed);
/* After the device plan uploaded its constants: the host copies of those only CUDA steps read go. */
void mrt_exec_weights_uploaded(mrt_exec *e);
/* run_once: the per-step takes and drops (wtake/wdrop), and every such weight let go until its first reader. */
mrt_status mrt_exec_weights_plan_drops(mrt_exec *e);
/* Append to *list the values of `target` that node nd's subgraph attributes read (implicit inputs of If/Loop/Scan,
   at any depth). */
mrt_status mrt_node_outer_refs(const mrt_node *nd, const mrt_graph *target, int **list, int *n, int *cap);
/* The unplanned-workspace fallback of mrt_workspace: e->scratch grown to at least `bytes`, or NULL. */
void *mrt_exec_scratch(mrt_exec *e, size_t bytes);
void mrt_exec_free(mrt_exec *e);
/* Bind values to the graph's inputs (n == graph->n_inputs; a NONE entry keeps the initializer default)
   and run: plans first when the input signature changed. */
mrt_status mrt_exec_run(mrt_exec *e, const mrt_value *inputs, bool top_level);
/* Run `body` as a child of ctx's exec (a subgraph when f is NULL, else a call of function f by ctx->node);
   outputs are deep copies owned by the caller. */
mrt_status mrt_exec_call(mrt_op_ctx *ctx, const mrt_graph *body, const mrt_function *f, int n_inputs,
                         const mrt_value *inputs, int n_outputs, mrt_value *outputs);
