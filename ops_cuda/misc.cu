// ONNX Einsum 12, Det 11/22, Bernoulli 15/22, RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike 1/22 on
// CUDA, as the CPU kernels (ops_cpu/misc.c). Einsum: two float/double inputs without diagonals or broadcasting and at
// most one summed label run on minirt's tiled GEMM (ops_cuda/gemm.cuh; every other label a batch dimension), the rest
// on a loop kernel, one thread per output element summing in the CPU's order in double (or wrapping uint64 for
// integers); at most 8 inputs and 20 labels there (the nest travels as a kernel argument). Det: one thread per matrix,
// the CPU's partial-pivot LU in double. The random ops draw from MT19937 (numpy's RandomState(seed),
// ops_cpu/random.h), whose state advances sequentially: the values are drawn on the host exactly as the CPU draws
// them (Bernoulli reads its probabilities back first) and copied up.
#include <cmath>
#include <cstdlib>

#include "engine/opdef/einsum.h"
#include "engine/opdef/misc.h"
#include "ops_cpu/random.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/gemm.cuh"
#include "ops_cuda/segments.cuh"

namespace {

// ---- Einsum

const int NEST_INPUTS = 8, NEST_LABELS = 20;

// The CPU's loop nest (ops_cpu/misc.c einsum_nest): the output's labels, then the summed ones; strides[k][j] is
// input k's element stride along loop label j (repeated labels add up: a diagonal; broadcast dims have 0).
struct nest {
    int n_in, n_out, n_sum;
    int64_t size[NEST_LABELS];
    int64_t strides[NEST_INPUTS][NEST_LABELS];
};

// false when the equation needs more inputs or labels than the kernel argument holds
static bool nest_init(const mrt_op_ctx *ctx, const mrt_einsum *e, nest *n)
{
    memset(n, 0, sizeof *n);
    if (e->n_inputs > NEST_INPUTS) return false;
    n->n_in = e->n_inputs;
    bool in_out[MRT_EINSUM_MAX_LABELS] = {false};
    int at[MRT_EINSUM_MAX_LABELS], j = 0;
    for (int i = 0; i < e->out_rank; i++) {
        in_out[e->out_label[i]] = true;
        at[e->out_label[i]] = j++;
    }
    n->n_out = e->out_rank;
    for (int l = 0; l < e->n_labels; l++)
        if (e->size[l] >= 0 && !in_out[l]) at[l] = j++;
    if (j > NEST_LABELS) return false;
    n->n_sum = j - n->n_out;
    for (int l = 0; l < e->n_labels; l++)
        if (e->size[l] >= 0) n->size[at[l]] = e->size[l];
    for (int k = 0; k < e->n_inputs; k++) mrt_einsum_add_strides(e, k, mrt_input(ctx, k), at, n->strides[k]);
    return true;
}

struct einsum_inputs {
    const void *p[NEST_INPUTS];
};

template <typename T> __device__ __forceinline__ double ein_load(const T *p, int64_t i, double *) { return (double)mrt_cu_load(p, i); }
template <typename T> __device__ __forceinline__ uint64_t ein_load(const T *p, int64_t i, uint64_t *)
{
    return (uint64_t)(int64_t)p[i]; // the CPU's int64 copy, multiplied as uint64 (wrapping)
}

// One thread per output element: the product of the inputs summed over the summed labels in the CPU's order.
template <typename T, typename Acc> __global__ void einsum_kernel(einsum_inputs in, T *y, int64_t total, nest n)
{
    MRT_CU_FOR(o, total)
    {
        int64_t off[NEST_INPUTS], idx[NEST_LABELS] = {0}, count = 1, rest = o;
        for (int k = 0; k < n.n_in; k++) off[k] = 0;
        for (int j = n.n_out - 1; j >= 0; j--) {
            int64_t c = rest % n.size[j];
            rest /= n.size[j];
            for (int k = 0; k < n.n_in; k++) off[k] += c * n.strides[k][j];
        }
        for (int j = n.n_out; j < n.n_out + n.n_sum; j++) count *= n.size[j];
        Acc acc = 0;
        for (int64_t c = 0; c < count; c++) {
            Acc prod = ein_load((const T *)in.p[0], off[0], (Acc *)NULL);
            for (int k = 1; k < n.n_in; k++) prod = prod * ein_load((const T *)in.p[k], off[k], (Acc *)NULL);
            acc += prod;
            for (int j = n.n_out + n.n_sum - 1; j >= n.n_out; j--) {
                for (int k = 0; k < n.n_in; k++) off[k] += n.strides[k][j];
                if (++idx[j] < n.size[j]) break;
                for (int k = 0; k < n.n_in; k++) off[k] -= n.size[j] * n.strides[k][j];
                idx[j] = 0;
            }
        }
        if constexpr (std::is_same<Acc, double>::value) mrt_cu_store(y, o, (typename mrt_cu_compute<T>::type)acc);
        else y[o] = (T)(int64_t)acc;
    }
}

// The GEMM form: two inputs, no diagonal or broadcast, at most one summed label (in both inputs). The GEMM's row is
// the last output label of A alone, its column the output's last label when it is B's alone (so the output's columns
// are contiguous), K the summed label; every other label is a batch dim with its strides in A, B and Y (0 where
// absent). Returns false when the equation has another form or too many batch dims.
static bool einsum_gemm_geom(const mrt_op_ctx *ctx, const mrt_einsum *e, mrt_cu_gemm::geom *g)
{
    if (e->n_inputs != 2) return false;
    int64_t st[3][MRT_EINSUM_MAX_LABELS];
    bool has[3][MRT_EINSUM_MAX_LABELS];
    memset(st, 0, sizeof st);
    memset(has, 0, sizeof has);
    for (int k = 0; k < 2; k++) {
        const mrt_tensor *x = mrt_input(ctx, k);
        int64_t s[MRT_MAX_RANK];
        mrt_shape_strides(x->rank, x->shape, s);
        for (int a = 0; a < x->rank; a++) {
            int l = e->in_label[k][a];
            if (has[k][l] || x->shape[a] != e->size[l]) return false; // diagonal or broadcast
            has[k][l] = true;
            st[k][l] = s[a];
        }
    }
    int64_t ys[MRT_MAX_RANK];
    mrt_shape_strides(e->out_rank, e->out_shape, ys);
    for (int i = 0; i < e->out_rank; i++) {
        has[2][e->out_label[i]] = true;
        st[2][e->out_label[i]] = ys[i];
    }
    int row = -1, col = -1, kl = -1;
    for (int l = 0; l < e->n_labels; l++) {
        if (e->size[l] < 0 || has[2][l]) continue;
        if (!has[0][l] || !has[1][l] || kl >= 0) return false; // summed over one input, or a second summed label
        kl = l;
    }
    if (e->out_rank > 0) {
        int last = e->out_label[e->out_rank - 1];
        if (has[1][last] && !has[0][last]) col = last;
    }
    for (int i = e->out_rank - 1; i >= 0 && row < 0; i--) {
        int l = e->out_label[i];
        if (has[0][l] && !has[1][l]) row = l;
    }
    *g = mrt_cu_gemm::plain(row >= 0 ? e->size[row] : 1, col >= 0 ? e->size[col] : 1, kl >= 0 ? e->size[kl] : 1);
    g->a_rs = row >= 0 ? st[0][row] : 0, g->a_cs = kl >= 0 ? st[0][kl] : 0;
    g->b_rs = kl >= 0 ? st[1][kl] : 0, g->b_cs = col >= 0 ? st[1][col] : 0;
    g->y_rs = row >= 0 ? st[2][row] : 0;
    g->int_exact = false;
    for (int i = 0; i < e->out_rank; i++) {
        int l = e->out_label[i];
        if (l == row || l == col) continue;
        if (g->batch_rank == MRT_MAX_RANK) return false;
        mrt_cu_gemm::add_batch(g, e->size[l], st[0][l], st[1][l], 0, st[2][l]);
    }
    return true;
}

struct einsum_launch {
    const mrt_einsum *e;
    const nest *n;
    bool gemm;
    const mrt_cu_gemm::geom *g;
    template <typename T> mrt_status run(mrt_op_ctx *ctx)
    {
        mrt_tensor *y = mrt_output(ctx, 0);
        cudaStream_t st = mrt_cu_stream(ctx);
        if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
            if (gemm) {
                if (!mrt_cu_gemm::launch<T, T, T, T>(st, (const T *)mrt_input(ctx, 0)->data,
                                                     (const T *)mrt_input(ctx, 1)->data, (const T *)NULL, (T *)y->data, *g))
                    return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Einsum: too many columns for one grid");
                MRT_CU_CHECK_LAUNCH(ctx, "einsum GEMM");
                return MRT_STATUS_OK;
            }
        }
        einsum_inputs in{};
        for (int k = 0; k < e->n_inputs; k++) in.p[k] = mrt_input(ctx, k)->data;
        int64_t total = mrt_tensor_numel(y);
        typedef typename std::conditional<std::is_integral<T>::value, uint64_t, double>::type Acc;
        auto *kern = einsum_kernel<T, Acc>;
        MRT_LAUNCH(kern, mrt_cu_blocks(total), MRT_CU_THREADS, 0, st, in, (T *)y->data, total, *n);
        MRT_CU_CHECK_LAUNCH(ctx, "einsum kernel");
        return MRT_STATUS_OK;
    }
};

mrt_status cu_einsum(mrt_op_ctx *ctx)
{
    mrt_einsum e;
    MRT_TRY(mrt_einsum_parse(ctx, &e));
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    nest n;
    mrt_cu_gemm::geom g;
    bool gemm = (y->dtype == MRT_DTYPE_FLOAT || y->dtype == MRT_DTYPE_DOUBLE) && einsum_gemm_geom(ctx, &e, &g);
    einsum_launch l{&e, &n, gemm, &g};
    if (!l.gemm && !nest_init(ctx, &e, &n))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Einsum: too many inputs or labels for the CUDA kernel");
    switch (y->dtype) {
    case MRT_DTYPE_FLOAT: return l.run<float>(ctx);
    case MRT_DTYPE_DOUBLE: return l.run<double>(ctx);
    case MRT_DTYPE_FLOAT16: return l.run<mrt_cu_half>(ctx);
    case MRT_DTYPE_BFLOAT16: return l.run<mrt_cu_bf16>(ctx);
    case MRT_DTYPE_INT8: return l.run<int8_t>(ctx);
    case MRT_DTYPE_INT16: return l.run<int16_t>(ctx);
    case MRT_DTYPE_INT32: return l.run<int32_t>(ctx);
    case MRT_DTYPE_INT64: return l.run<int64_t>(ctx);
    case MRT_DTYPE_UINT8: return l.run<uint8_t>(ctx);
    case MRT_DTYPE_UINT16: return l.run<uint16_t>(ctx);
    case MRT_DTYPE_UINT32: return l.run<uint32_t>(ctx);
    case MRT_DTYPE_UINT64: return l.run<uint64_t>(ctx);
    default: return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Einsum: dtype %s", mrt_dtype_name(y->dtype));
    }
}

bool cu_einsum_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    mrt_einsum e;
    if (mrt_einsum_parse(ctx, &e) != MRT_STATUS_OK) return snprintf(why, len, "the equation does not parse"), false;
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    if (!seg_float_dtype(dt) && !mrt_dtype_is_integer(dt))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", mrt_dtype_name(dt)), false;
    nest n;
    mrt_cu_gemm::geom g;
    bool gemm = (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE) && einsum_gemm_geom(ctx, &e, &g);
    if (!gemm && !nest_init(ctx, &e, &n))
        return snprintf(why, len, "more than %d inputs or %d labels", NEST_INPUTS, NEST_LABELS), false;
    return true;
}

// ---- Det

// One thread per matrix: the CPU's partial-pivot LU in double, on a copy in the workspace.
__global__ void det_kernel(const void *x, void *y, double *ws, int dt, int64_t m, int64_t batch)
{
    MRT_CU_FOR(b, batch)
    {
        int64_t mm = m * m;
        double *a = ws + b * mm;
        for (int64_t i = 0; i < mm; i++) a[i] = ld_any(dt, x, b * mm + i);
        st_any(dt, y, b, mrt_det_eliminate(a, m));
    }
}

// Every matrix's elimination copy, in double; none for an empty batch
size_t det_workspace_bytes(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t m = x->shape[x->rank - 1], batch = mrt_tensor_numel(mrt_output(ctx, 0));
    return batch ? (size_t)(batch * m * m + 1) * sizeof(double) : 0;
}

mrt_status cu_det_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, det_workspace_bytes(ctx));
    return MRT_STATUS_OK;
}

mrt_status cu_det(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t m = x->shape[x->rank - 1], batch = mrt_tensor_numel(y);
    if (batch == 0) return MRT_STATUS_OK;
    double *ws = (double *)mrt_workspace(ctx, det_workspace_bytes(ctx));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    MRT_LAUNCH(det_kernel, mrt_cu_blocks(batch), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data, y->data,
               ws, (int)x->dtype, m, batch);
    MRT_CU_CHECK_LAUNCH(ctx, "det kernel");
    return MRT_STATUS_OK;
}

bool cu_float_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !seg_float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

// ---- random ops: drawn on the host (the generator is sequential), then copied up

// A host buffer of y's size, then the upload (synchronised, so the buffer can go).
static mrt_status upload(mrt_op_ctx *ctx, mrt_tensor *y, void *h)
{
    cudaStream_t st = mrt_cu_stream(ctx);
    cudaError_t e = cudaMemcpyAsync(y->data, h, mrt_tensor_nbytes(y), cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    free(h);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "uploading the draws: %s", cudaGetErrorString(e));
    return MRT_STATUS_OK;
}

static mrt_status fill_random(mrt_op_ctx *ctx, bool normal)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_dtype dt = y->dtype;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    void *h = malloc(mrt_tensor_nbytes(y));
    mrt_mt19937 *s = (mrt_mt19937 *)malloc(sizeof *s);
    if (!h || !s) {
        free(h);
        free(s);
        return MRT_STATUS_OUT_OF_MEMORY;
    }
    mrt_random_fill(ctx, s, normal, dt, h, n);
    free(s);
    return upload(ctx, y, h);
}

mrt_status cu_random_uniform(mrt_op_ctx *ctx) { return fill_random(ctx, false); }
mrt_status cu_random_normal(mrt_op_ctx *ctx) { return fill_random(ctx, true); }

bool cu_random_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *y = mrt_output(const_cast<mrt_op_ctx *>(ctx), 0); // only read
    if (!y || !seg_float_dtype(y->dtype))
        return snprintf(why, len, "output dtype %s is not supported by the CUDA kernel", y ? mrt_dtype_name(y->dtype) : "?"), false;
    return true;
}

mrt_status cu_bernoulli(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    size_t xb = mrt_tensor_nbytes(x);
    void *hx = malloc(xb), *h = malloc(mrt_tensor_nbytes(y));
    mrt_mt19937 *s = (mrt_mt19937 *)malloc(sizeof *s);
    cudaError_t e = hx && h && s ? cudaMemcpyAsync(hx, x->data, xb, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx)) : cudaSuccess;
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    mrt_status st = !hx || !h || !s ? MRT_STATUS_OUT_OF_MEMORY : MRT_STATUS_OK;
    if (st == MRT_STATUS_OK && e != cudaSuccess)
        st = mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the probabilities: %s", cudaGetErrorString(e));
    if (st == MRT_STATUS_OK) st = mrt_random_check_probs(ctx, x->dtype, hx, n);
    if (st == MRT_STATUS_OK) mrt_random_bernoulli(ctx, s, x->dtype, hx, y->dtype, h, n);
    free(hx);
    free(s);
    if (st != MRT_STATUS_OK) {
        free(h);
        return st;
    }
    return upload(ctx, y, h);
}

bool cu_bernoulli_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *y = mrt_output(const_cast<mrt_op_ctx *>(ctx), 0);
    if (!x || !seg_float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    if (!y || mrt_dtype_bits(y->dtype) < 8)
        return snprintf(why, len, "output dtype %s is not supported by the CUDA kernel", y ? mrt_dtype_name(y->dtype) : "?"), false;
    return true;
}

} // namespace

// Every output element is written (Einsum's empty sums included: the GEMM's k = 0 and the loop's count 0 give zeros).
extern "C" const mrt_kernel mrt_cuda_kernels_misc[] = {
    MRT_CU_ROW_S("Einsum", 12, cu_einsum, cu_einsum_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_SW("Det", 11, cu_det, cu_float_supports, MRT_KERNEL_WRITES_ALL, cu_det_workspace),
    MRT_CU_ROW_S("Bernoulli", 15, cu_bernoulli, cu_bernoulli_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("RandomUniform", 1, cu_random_uniform, cu_random_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("RandomNormal", 1, cu_random_normal, cu_random_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("RandomUniformLike", 1, cu_random_uniform, cu_random_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("RandomNormalLike", 1, cu_random_normal, cu_random_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
