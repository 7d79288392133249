/* Opdefs: DFT (17: axis attribute; 20: axis input), STFT (17), MelWeightMatrix (17) and the window functions
 * HannWindow, HammingWindow, BlackmanWindow (17). Signals are float/double/float16/bfloat16 with the
 * trailing [.., 1|2] real/complex dimension. */
#include <string.h>

#include "engine/opdef/signal.h"
#include "engine/registry.h"

static const char *shp(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

static bool is_float_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

/* Input i as one int32/int64 value. *present: the input exists; *known: its value could be read (it is
   constant at plan time, or this is run time). */
static mrt_status scalar_int(const mrt_op_ctx *ctx, int i, const char *name, bool *present, bool *known, int64_t *v)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    char ts[256];
    *present = t != NULL;
    *known = false;
    if (!t) return MRT_STATUS_OK;
    if (t->dtype != MRT_DTYPE_INT32 && t->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s, expected int32 or int64", name,
                           mrt_dtype_name(t->dtype));
    if (t->rank > 1 || mrt_tensor_numel(t) != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "input '%s' has shape %s, expected a scalar", name, shp(t, ts, sizeof ts));
    if (!t->data) return MRT_STATUS_OK;
    *known = true;
    *v = mrt_load_i64(t->dtype, t->data, 0);
    return MRT_STATUS_OK;
}

/* A real/complex signal: float dtype, rank >= min_rank, last dim 1 (real) or 2 (complex). */
static mrt_status check_signal(const mrt_op_ctx *ctx, const mrt_tensor *x, const char *name, int min_rank)
{
    char xs[256];
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 ('%s') is missing or not a tensor", name);
    if (!is_float_dtype(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "input '%s' has dtype %s; %s takes float16, bfloat16, float or double",
                           name, mrt_dtype_name(x->dtype), ctx->node->op_type);
    if (x->rank < min_rank || (x->shape[x->rank - 1] != 1 && x->shape[x->rank - 1] != 2))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "input '%s' has shape %s, expected rank >= %d with a last dimension "
                           "of 1 (real) or 2 (complex)", name, shp(x, xs, sizeof xs), min_rank);
    return MRT_STATUS_OK;
}

static mrt_status bool_attr(const mrt_op_ctx *ctx, const char *name, int64_t def, bool *out)
{
    int64_t v = mrt_attr_int(ctx, name, def);
    if (v != 0 && v != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute '%s' is %lld, expected 0 or 1", name, (long long)v);
    *out = v != 0;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ DFT */

mrt_status mrt_dft_desc_get(const mrt_op_ctx *ctx, mrt_dft_desc *d, bool *ready)
{
    memset(d, 0, sizeof *d);
    *ready = false;
    const mrt_tensor *x = mrt_input(ctx, 0);
    MRT_TRY(check_signal(ctx, x, "input", 2));
    MRT_TRY(bool_attr(ctx, "inverse", 0, &d->inverse));
    MRT_TRY(bool_attr(ctx, "onesided", 0, &d->onesided));
    int r = x->rank;
    int64_t axis = -2;
    bool present, known_len = true, known_axis = true;
    if (ctx->opset >= 20) {
        int64_t v;
        MRT_TRY(scalar_int(ctx, 2, "axis", &present, &known_axis, &v));
        if (present && known_axis) axis = v;
        if (!present) known_axis = true;
    } else {
        axis = mrt_attr_int(ctx, "axis", 1);
    }
    int64_t len = 0;
    bool has_len;
    MRT_TRY(scalar_int(ctx, 1, "dft_length", &has_len, &known_len, &len));
    if (!has_len) known_len = true;
    if (!known_axis || !known_len) return MRT_STATUS_OK;

    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a > r - 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "axis %lld is outside [%d, -2] U [0, %d] for an input of rank %d "
                           "(the last dimension holds the real/imaginary parts)", (long long)axis, -r, r - 2, r);
    d->axis = (int)a;
    d->dim = x->shape[a];
    d->comp = x->shape[r - 1];
    d->outer = 1;
    d->inner = 1;
    for (int i = 0; i < a; i++) d->outer *= x->shape[i];
    for (int i = (int)a + 1; i < r - 1; i++) d->inner *= x->shape[i];
    bool irfft = d->inverse && d->onesided;
    if (has_len) {
        if (len < 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "dft_length is %lld, expected a positive length", (long long)len);
        d->n = len;
    } else {
        d->n = irfft ? 2 * (d->dim - 1) : d->dim;
        if (d->n < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "an inverse onesided DFT of an empty axis needs dft_length");
    }
    d->out_len = d->onesided && !d->inverse ? d->n / 2 + 1 : d->n;
    d->out_comp = irfft ? 1 : 2;
    *ready = true;
    return MRT_STATUS_OK;
}

bool mrt_dft_plan_parts(int64_t n, int64_t parts[MRT_DFT_PARTS])
{
    if (n < 0 || n > INT32_MAX) return false;
    bool pow2 = n > 0 && (n & (n - 1)) == 0;
    int kind = pow2 || n <= 1 ? 0 : n <= MRT_DFT_DIRECT_MAX ? 1 : 2;
    int64_t m = n;
    if (kind == 2)
        for (m = 1; m < 2 * n - 1; m <<= 1) {}
    int64_t tw = kind == 1 ? n : m, work = kind == 2 ? m : n;
    int64_t counts[MRT_DFT_PARTS] = {tw, tw, n, n, work, work, kind == 2 ? n : 0, kind == 2 ? n : 0,
                                     kind == 2 ? m : 0, kind == 2 ? m : 0};
    memcpy(parts, counts, sizeof counts);
    return true;
}

static mrt_status infer_dft(mrt_op_ctx *ctx)
{
    mrt_dft_desc d;
    bool ready;
    MRT_TRY(mrt_dft_desc_get(ctx, &d, &ready));
    if (!ready) return mrt_infer_dynamic(ctx);
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t shape[MRT_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[d.axis] = d.out_len;
    shape[x->rank - 1] = d.out_comp;
    return mrt_output_set(ctx, 0, x->dtype, x->rank, shape);
}

/* ------------------------------------------------------------------ STFT */

mrt_status mrt_stft_desc_get(const mrt_op_ctx *ctx, mrt_stft_desc *d, bool *ready)
{
    memset(d, 0, sizeof *d);
    *ready = false;
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 2);
    char xs[256], ws[256];
    MRT_TRY(check_signal(ctx, x, "signal", 3));
    if (x->rank != 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "input 'signal' has shape %s, expected [batch_size, signal_length, 1|2]",
                           shp(x, xs, sizeof xs));
    d->batch = x->shape[0];
    d->len = x->shape[1];
    d->comp = x->shape[2];
    if (w) {
        if (w->dtype != x->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'window' has dtype %s, expected %s like 'signal'",
                               mrt_dtype_name(w->dtype), mrt_dtype_name(x->dtype));
        if (w->rank != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "input 'window' has shape %s, expected 1-D", shp(w, ws, sizeof ws));
        d->has_window = true;
    }
    bool onesided;
    MRT_TRY(bool_attr(ctx, "onesided", 1, &onesided));
    bool has_step, known_step, has_fl, known_fl;
    int64_t fl = 0;
    MRT_TRY(scalar_int(ctx, 1, "frame_step", &has_step, &known_step, &d->step));
    if (!has_step) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 1 ('frame_step') is missing");
    MRT_TRY(scalar_int(ctx, 3, "frame_length", &has_fl, &known_fl, &fl));
    if (!known_step || (has_fl && !known_fl)) return MRT_STATUS_OK;
    if (d->step < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "frame_step is %lld, expected a positive step", (long long)d->step);
    d->frame = has_fl ? fl : w ? w->shape[0] : d->len;
    if (w && has_fl && w->shape[0] != fl)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "input 'window' has shape %s but frame_length is %lld; they must agree",
                           shp(w, ws, sizeof ws), (long long)fl);
    if (d->frame < 1 || d->frame > d->len)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "frame_length %lld is outside [1, %lld] (the signal_length of 'signal' %s)",
                           (long long)d->frame, (long long)d->len, shp(x, xs, sizeof xs));
    d->frames = (d->len - d->frame) / d->step + 1;
    d->bins = onesided ? d->frame / 2 + 1 : d->frame;
    *ready = true;
    return MRT_STATUS_OK;
}

static mrt_status infer_stft(mrt_op_ctx *ctx)
{
    mrt_stft_desc d;
    bool ready;
    MRT_TRY(mrt_stft_desc_get(ctx, &d, &ready));
    if (!ready) return mrt_infer_dynamic(ctx);
    int64_t shape[4] = {d.batch, d.frames, d.bins, 2};
    return mrt_output_set(ctx, 0, mrt_input(ctx, 0)->dtype, 4, shape);
}

/* ------------------------------------------------------------------ MelWeightMatrix */

static bool numeric_out_dtype(int64_t dt)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64:
    case MRT_DTYPE_INT8: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64:
    case MRT_DTYPE_FLOAT16: case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_BFLOAT16:
        return true;
    default:
        return false;
    }
}

static mrt_status infer_mel(mrt_op_ctx *ctx)
{
    static const char *names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
    int64_t dt = mrt_attr_int(ctx, "output_datatype", MRT_DTYPE_FLOAT);
    if (!numeric_out_dtype(dt))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "output_datatype %lld is not a numeric type MelWeightMatrix produces",
                           (long long)dt);
    int64_t v[3] = {0, 0, 0};
    bool known_all = true;
    for (int i = 0; i < 3; i++) {
        bool present, known;
        MRT_TRY(scalar_int(ctx, i, names[i], &present, &known, &v[i]));
        if (!present) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing", i, names[i]);
        if (known && v[i] < 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "%s is %lld, expected a positive value", names[i], (long long)v[i]);
        if (i < 2) known_all = known_all && known;
    }
    for (int i = 3; i < 5; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        char ts[256];
        if (!t) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing", i, names[i]);
        if (!is_float_dtype(t->dtype))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "input '%s' has dtype %s, expected a float type", names[i],
                               mrt_dtype_name(t->dtype));
        if (t->rank > 1 || mrt_tensor_numel(t) != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "input '%s' has shape %s, expected a scalar", names[i], shp(t, ts, sizeof ts));
    }
    if (!known_all) return mrt_infer_dynamic(ctx);
    int64_t shape[2] = {v[1] / 2 + 1, v[0]};
    return mrt_output_set(ctx, 0, (mrt_dtype)dt, 2, shape);
}

/* ------------------------------------------------------------------ windows */

static mrt_status infer_window(mrt_op_ctx *ctx)
{
    const mrt_tensor *n = mrt_input(ctx, 0);
    int64_t dt = mrt_attr_int(ctx, "output_datatype", MRT_DTYPE_FLOAT);
    if (!n || mrt_tensor_numel(n) != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'size' must be one integer");
    if (!numeric_out_dtype(dt))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output_datatype %lld is not a numeric type", (long long)dt);
    MRT_TRY(bool_attr(ctx, "periodic", 1, &(bool){false}));
    if (n->dtype != MRT_DTYPE_INT32 && n->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "input 'size' has dtype %s, expected int32 or int64", mrt_dtype_name(n->dtype));
    if (!n->data) return mrt_infer_dynamic(ctx);
    int64_t len = mrt_load_i64(n->dtype, n->data, 0);
    if (len < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "window size %lld is negative", (long long)len);
    return mrt_output_set(ctx, 0, (mrt_dtype)dt, 1, &len);
}

const mrt_opdef mrt_opdefs_signal[] = {
    {"", "DFT", 17, 1, 2, 1, 1, infer_dft, 0},
    {"", "DFT", 20, 1, 3, 1, 1, infer_dft, 0},
    {"", "STFT", 17, 2, 4, 1, 1, infer_stft, 0},
    {"", "MelWeightMatrix", 17, 5, 5, 1, 1, infer_mel, 0},
    {"", "HannWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {"", "HammingWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {"", "BlackmanWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {0},
};
