/* Opdefs for Einsum (12), Det (11, 22), Bernoulli (15, 22), RandomUniform / RandomNormal / RandomUniformLike /
   RandomNormalLike (1, 22). The random ops are never constant-folded. */
#include <stdio.h>
#include <string.h>

#include "engine/opdef/einsum.h"
#include "engine/registry.h"

/* ---- Einsum */

static int letter_label(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}

static char label_char(int label) { return (char)(label < 26 ? 'A' + label : 'a' + (label - 26)); }

/* One term "ab...c": letters in order, and where the ellipsis sits (-1 = none). Stops at ',', '-' or the end;
   *end is left at the stopping character. */
typedef struct einsum_term {
    int n;
    int letters[MRT_EINSUM_LETTERS * 2];
    int ellipsis_at;
} einsum_term;

static mrt_status parse_term(const mrt_op_ctx *ctx, const char *eq, const char **p, const char *what,
                             einsum_term *t)
{
    t->n = 0;
    t->ellipsis_at = -1;
    const char *s = *p;
    for (; *s && *s != ',' && *s != '-'; s++) {
        if (*s == ' ') continue;
        if (*s == '.') {
            if (s[1] != '.' || s[2] != '.')
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': '.' must be part of an ellipsis '...' (%s)",
                                   eq, what);
            if (t->ellipsis_at >= 0)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': %s has more than one ellipsis", eq, what);
            t->ellipsis_at = t->n;
            s += 2;
            continue;
        }
        int l = letter_label(*s);
        if (l < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': invalid character '%c' in %s", eq, *s, what);
        if (t->n >= (int)(sizeof t->letters / sizeof t->letters[0]))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': %s has too many labels", eq, what);
        t->letters[t->n++] = l;
    }
    *p = s;
    return MRT_STATUS_OK;
}

/* Merge dimension `d` of input `k` into label `l`'s size: equal, or 1 (broadcast). */
static mrt_status merge_size(const mrt_op_ctx *ctx, mrt_einsum *e, const char *eq, int k, int l, int64_t d)
{
    int64_t *sz = &e->size[l];
    if (*sz < 0 || *sz == 1) {
        if (*sz < 0 || d != 1) *sz = d;
        return MRT_STATUS_OK;
    }
    if (d == *sz || d == 1) return MRT_STATUS_OK;
    if (l >= MRT_EINSUM_LETTERS)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "equation '%s': broadcast ('...') dimension %d of input %d has size %lld, which does not "
                           "broadcast with size %lld from another input",
                           eq, l - MRT_EINSUM_LETTERS, k, (long long)d, (long long)*sz);
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                       "equation '%s': label '%c' has size %lld in input %d but %lld elsewhere", eq, label_char(l),
                       (long long)d, k, (long long)*sz);
}

mrt_status mrt_einsum_parse(const mrt_op_ctx *ctx, mrt_einsum *e)
{
    memset(e, 0, sizeof *e);
    const char *eq = mrt_attr_string(ctx, "equation", NULL);
    if (!eq) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'equation' is required");
    int n = ctx->n_inputs;
    if (n < 1 || n > MRT_EINSUM_MAX_INPUTS)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Einsum with %d inputs (1 to %d supported)", n,
                           MRT_EINSUM_MAX_INPUTS);
    e->n_inputs = n;
    for (int k = 0; k < n; k++) {
        const mrt_tensor *x = mrt_input(ctx, k);
        if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is missing", k);
        if (x->dtype != mrt_input(ctx, 0)->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is %s but input 0 is %s", k,
                               mrt_dtype_name(x->dtype), mrt_dtype_name(mrt_input(ctx, 0)->dtype));
    }
    const char *arrow = strstr(eq, "->");
    if (arrow && strstr(arrow + 2, "->"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s' has more than one '->'", eq);
    for (int l = 0; l < MRT_EINSUM_MAX_LABELS; l++) e->size[l] = -1;

    /* inputs */
    static const einsum_term zero_term;
    einsum_term terms[MRT_EINSUM_MAX_INPUTS];
    int count[MRT_EINSUM_LETTERS] = {0}, n_ell = 0, ell_dims[MRT_EINSUM_MAX_INPUTS];
    const char *p = eq;
    char what[64];
    for (int k = 0; k < n; k++) {
        const mrt_tensor *x = mrt_input(ctx, k);
        snprintf(what, sizeof what, "input term %d", k);
        terms[k] = zero_term;
        MRT_TRY(parse_term(ctx, eq, &p, what, &terms[k]));
        if (k + 1 < n) {
            if (*p != ',')
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s' has %d input terms for %d inputs", eq,
                                   k + 1, n);
            p++;
        }
        einsum_term *t = &terms[k];
        int e_k = x->rank - t->n;
        if (t->ellipsis_at < 0 ? e_k != 0 : e_k < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': input term %d has %d labels%s but input %d has rank %d",
                               eq, k, t->n, t->ellipsis_at >= 0 ? " and '...'" : "", k, x->rank);
        ell_dims[k] = t->ellipsis_at < 0 ? 0 : e_k;
        if (ell_dims[k] > n_ell) n_ell = ell_dims[k];
        for (int i = 0; i < t->n; i++) count[t->letters[i]]++;
    }
    if (*p == ',')
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s' has more input terms than the %d inputs", eq, n);
    if (*p && !(p == arrow))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': unexpected '%c'", eq, *p);
    e->n_ellipsis = n_ell;
    e->n_labels = MRT_EINSUM_LETTERS + n_ell;

    /* label of each input dim, and the label sizes */
    for (int k = 0; k < n; k++) {
        const mrt_tensor *x = mrt_input(ctx, k);
        const einsum_term *t = &terms[k];
        int d = 0;
        e->in_rank[k] = x->rank;
        for (int i = 0; i <= t->n; i++) {
            if (i == t->ellipsis_at)
                for (int j = 0; j < ell_dims[k]; j++) e->in_label[k][d++] = MRT_EINSUM_LETTERS + n_ell - ell_dims[k] + j;
            if (i < t->n) e->in_label[k][d++] = t->letters[i];
        }
        /* a label repeated inside one term takes a diagonal: its dims must agree exactly */
        for (int a = 0; a < x->rank; a++)
            for (int b = a + 1; b < x->rank; b++)
                if (e->in_label[k][a] == e->in_label[k][b] && x->shape[a] != x->shape[b])
                    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                       "equation '%s': label '%c' repeats in input %d over dims of sizes %lld and %lld", eq,
                                       label_char(e->in_label[k][a]), k, (long long)x->shape[a], (long long)x->shape[b]);
        for (int a = 0; a < x->rank; a++) MRT_TRY(merge_size(ctx, e, eq, k, e->in_label[k][a], x->shape[a]));
    }

    /* output */
    e->out_rank = 0;
    if (arrow) {
        const char *q = arrow + 2;
        einsum_term out;
        MRT_TRY(parse_term(ctx, eq, &q, "the output term", &out));
        if (*q) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': unexpected '%c' in the output term", eq, *q);
        int rank = out.n + (out.ellipsis_at >= 0 ? n_ell : 0);
        if (rank > MRT_MAX_RANK)
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "equation '%s': output rank %d exceeds %d", eq, rank, MRT_MAX_RANK);
        for (int i = 0; i <= out.n; i++) {
            if (i == out.ellipsis_at)
                for (int j = 0; j < n_ell; j++) e->out_label[e->out_rank++] = MRT_EINSUM_LETTERS + j;
            if (i == out.n) break;
            int l = out.letters[i];
            if (e->size[l] < 0)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': output label '%c' is in no input term", eq,
                                   label_char(l));
            for (int j = 0; j < i; j++)
                if (out.letters[j] == l)
                    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "equation '%s': output label '%c' appears twice", eq,
                                       label_char(l));
            e->out_label[e->out_rank++] = l;
        }
    } else { /* implicit: broadcast dims, then the letters used once, in ASCII order */
        for (int j = 0; j < n_ell; j++) e->out_label[e->out_rank++] = MRT_EINSUM_LETTERS + j;
        for (int l = 0; l < MRT_EINSUM_LETTERS; l++)
            if (count[l] == 1) {
                if (e->out_rank == MRT_MAX_RANK)
                    return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "equation '%s': output rank exceeds %d", eq, MRT_MAX_RANK);
                e->out_label[e->out_rank++] = l;
            }
    }
    for (int i = 0; i < e->out_rank; i++) e->out_shape[i] = e->size[e->out_label[i]];
    return MRT_STATUS_OK;
}

static mrt_status infer_einsum(mrt_op_ctx *ctx)
{
    mrt_einsum e;
    MRT_TRY(mrt_einsum_parse(ctx, &e));
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    if (!(mrt_dtype_is_integer(dt) || dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 ||
          dt == MRT_DTYPE_BFLOAT16) || mrt_dtype_bits(dt) < 8)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "Einsum inputs must be numeric, got %s", mrt_dtype_name(dt));
    return mrt_output_set(ctx, 0, dt, e.out_rank, e.out_shape); /* checks that the output size fits */
}

/* ---- Det */

static bool is_real_float(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static mrt_status infer_det(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    char buf[256];
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' is missing");
    if (!is_real_float(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' must be float16/bfloat16/float/double, got %s",
                           mrt_dtype_name(x->dtype));
    if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [*, M, M] (square matrices)",
                           mrt_shape_describe(x->rank, x->shape, buf, sizeof buf));
    int64_t m = x->shape[x->rank - 1];
    if (m > 0 && m > INT64_MAX / 8 / m)
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "%lldx%lld matrices are too large", (long long)m, (long long)m);
    return mrt_output_set(ctx, 0, x->dtype, x->rank - 2, x->shape);
}

/* ---- random ops */

static mrt_status random_dtype(mrt_op_ctx *ctx, mrt_dtype def, bool any, mrt_dtype *out)
{
    int64_t dt = mrt_attr_int(ctx, "dtype", def);
    bool ok = mrt_dtype_is_known((int)dt) &&
              (any ? dt != MRT_DTYPE_STRING && (mrt_dtype_bits((mrt_dtype)dt) >= 8 || dt == MRT_DTYPE_BOOL) &&
                         (mrt_dtype_is_integer((mrt_dtype)dt) || dt == MRT_DTYPE_BOOL || is_real_float((mrt_dtype)dt))
                   : is_real_float((mrt_dtype)dt));
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output dtype %s (%s) is not %s",
                           mrt_dtype_is_known((int)dt) ? mrt_dtype_name((mrt_dtype)dt) : "unknown",
                           mrt_node_attr(ctx->node, "dtype") ? "attribute 'dtype'" : "the input's type: set attribute 'dtype'",
                           any ? "a numeric or bool type" : "float16/bfloat16/float/double");
    *out = (mrt_dtype)dt;
    return MRT_STATUS_OK;
}

static mrt_status infer_random(mrt_op_ctx *ctx)
{
    const int64_t *shape;
    int64_t rank;
    mrt_dtype dt;
    if (!mrt_attr_ints(ctx, "shape", &shape, &rank))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'shape' is required");
    if (rank > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "attribute 'shape' has rank %lld (at most %d)", (long long)rank,
                           MRT_MAX_RANK);
    for (int64_t i = 0; i < rank; i++)
        if (shape[i] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'shape' has a negative dimension %lld",
                               (long long)shape[i]);
    MRT_TRY(random_dtype(ctx, MRT_DTYPE_FLOAT, false, &dt));
    return mrt_output_set(ctx, 0, dt, (int)rank, shape);
}

static mrt_status infer_random_like(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_dtype dt;
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' is missing");
    MRT_TRY(random_dtype(ctx, x->dtype, false, &dt));
    return mrt_output_set(ctx, 0, dt, x->rank, x->shape);
}

static mrt_status infer_bernoulli(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_dtype dt;
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' is missing");
    if (!is_real_float(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' (probabilities) must be a float tensor, got %s",
                           mrt_dtype_name(x->dtype));
    MRT_TRY(random_dtype(ctx, x->dtype, true, &dt));
    return mrt_output_set(ctx, 0, dt, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_misc[] = {
    {"", "Einsum", 12, 1, -1, 1, 1, infer_einsum, 0},
    {"", "Det", 11, 1, 1, 1, 1, infer_det, 0},
    {"", "Det", 22, 1, 1, 1, 1, infer_det, 0},
    {"", "Bernoulli", 15, 1, 1, 1, 1, infer_bernoulli, MRT_OPDEF_NO_FOLD},
    {"", "Bernoulli", 22, 1, 1, 1, 1, infer_bernoulli, MRT_OPDEF_NO_FOLD},
    {"", "RandomUniform", 1, 0, 0, 1, 1, infer_random, MRT_OPDEF_NO_FOLD},
    {"", "RandomUniform", 22, 0, 0, 1, 1, infer_random, MRT_OPDEF_NO_FOLD},
    {"", "RandomNormal", 1, 0, 0, 1, 1, infer_random, MRT_OPDEF_NO_FOLD},
    {"", "RandomNormal", 22, 0, 0, 1, 1, infer_random, MRT_OPDEF_NO_FOLD},
    {"", "RandomUniformLike", 1, 1, 1, 1, 1, infer_random_like, MRT_OPDEF_NO_FOLD},
    {"", "RandomUniformLike", 22, 1, 1, 1, 1, infer_random_like, MRT_OPDEF_NO_FOLD},
    {"", "RandomNormalLike", 1, 1, 1, 1, 1, infer_random_like, MRT_OPDEF_NO_FOLD},
    {"", "RandomNormalLike", 22, 1, 1, 1, 1, infer_random_like, MRT_OPDEF_NO_FOLD},
    {0},
};
