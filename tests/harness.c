/* One-node test harness, seeded data and comparisons (see harness.h). */
#include "harness.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda_module.h"
#include "engine/dtype.h"
#include "engine/status.h"


struct th_case {
    mrt_model *model;
    mrt_node *node;
    int n_inputs;
    char in_names[TH_MAX_IO][16];
    bool in_runtime[TH_MAX_IO];
    mrt_tensor in_tensors[TH_MAX_IO]; /* borrowed from the caller */
    bool failed;                      /* a builder call failed: th_run reports it */
    mrt_status fail_status;
    char fail_msg[512];
    mrt_session_stats stats;          /* of the last th_run */
};

static void note_failure(th_case *c, mrt_status st)
{
    if (st && !c->failed) {
        c->failed = true;
        c->fail_status = st;
        snprintf(c->fail_msg, sizeof c->fail_msg, "%s", mrt_last_error());
    }
}

th_case *th_begin(const char *op_type, const char *domain, int opset)
{
    th_case *c = calloc(1, sizeof *c);
    c->model = mrt_model_new();
    c->model->graph = mrt_graph_new("test");
    note_failure(c, mrt_model_set_opset(c->model, "", opset));
    if (domain && domain[0]) note_failure(c, mrt_model_set_opset(c->model, domain, opset));
    note_failure(c, mrt_graph_add_node(c->model->graph, "node", op_type, domain, 0, NULL, 0, NULL, &c->node));
    return c;
}

static void add_input(th_case *c, const mrt_tensor *t, bool runtime)
{
    if (c->n_inputs >= TH_MAX_IO || !c->node) return;
    int k = c->n_inputs++;
    mrt_node *n = c->node;
    int *ni = realloc(n->inputs, (size_t)c->n_inputs * sizeof(int));
    if (!ni) return;
    n->inputs = ni;
    n->n_inputs = c->n_inputs;
    if (!t) {
        ni[k] = -1;
        return;
    }
    snprintf(c->in_names[k], sizeof c->in_names[k], "in%d", k);
    int vi;
    mrt_graph *g = c->model->graph;
    if (runtime) {
        note_failure(c, mrt_graph_add_input(g, c->in_names[k], NULL, &vi));
        c->in_runtime[k] = true;
        c->in_tensors[k] = *t;
    } else {
        mrt_tensor copy;
        note_failure(c, mrt_tensor_copy(&copy, t));
        note_failure(c, mrt_graph_set_initializer(g, c->in_names[k], &copy));
        vi = mrt_graph_find_value(g, c->in_names[k]);
    }
    c->node->inputs[k] = vi;
}

void th_input(th_case *c, const mrt_tensor *t) { add_input(c, t, true); }
void th_input_const(th_case *c, const mrt_tensor *t) { add_input(c, t, false); }
void th_input_absent(th_case *c) { add_input(c, NULL, false); }

void th_attr_int(th_case *c, const char *name, int64_t v) { note_failure(c, mrt_node_add_attr_int(c->node, name, v)); }
void th_attr_float(th_case *c, const char *name, float v) { note_failure(c, mrt_node_add_attr_float(c->node, name, v)); }
void th_attr_string(th_case *c, const char *name, const char *v)
{
    note_failure(c, mrt_node_add_attr_string(c->node, name, v));
}
void th_attr_ints(th_case *c, const char *name, int64_t n, const int64_t *v)
{
    note_failure(c, mrt_node_add_attr_ints(c->node, name, n, v));
}
void th_attr_floats(th_case *c, const char *name, int64_t n, const float *v)
{
    note_failure(c, mrt_node_add_attr_floats(c->node, name, n, v));
}
void th_attr_strings(th_case *c, const char *name, int64_t n, const char *const *v)
{
    note_failure(c, mrt_node_add_attr_strings(c->node, name, n, v));
}
void th_attr_tensor(th_case *c, const char *name, const mrt_tensor *t)
{
    note_failure(c, mrt_node_add_attr_tensor(c->node, name, t));
}

mrt_status th_session(th_case *c, const mrt_session_options *opt, int n_outputs, mrt_session **s,
                      const char **names, mrt_value *vals, int *n)
{
    *s = NULL;
    *n = 0;
    if (c->failed) return mrt_fail(c->fail_status, "%s", c->fail_msg);
    mrt_graph *g = c->model->graph;
    /* outputs are attached at run time, once the caller says how many it wants */
    if (c->node->n_outputs == 0 && n_outputs > 0) {
        int *no = malloc((size_t)n_outputs * sizeof(int));
        if (!no) return MRT_STATUS_OUT_OF_MEMORY;
        free(c->node->outputs); /* the zero-length array from mrt_graph_add_node */
        c->node->outputs = no;
        c->node->n_outputs = n_outputs;
        for (int i = 0; i < n_outputs; i++) {
            char name[16];
            snprintf(name, sizeof name, "out%d", i);
            int vi;
            MRT_TRY(mrt_graph_add_output(g, name, NULL, &vi));
            g->values[vi].producer = 0;
            c->node->outputs[i] = vi;
        }
    }
    MRT_TRY(mrt_session_new(c->model, opt, s));
    for (int k = 0; k < c->n_inputs; k++) {
        if (!c->in_runtime[k]) continue;
        names[*n] = c->in_names[k];
        vals[(*n)++] = mrt_value_from_tensor(c->in_tensors[k]);
    }
    return MRT_STATUS_OK;
}

mrt_status th_run_opt(th_case *c, const mrt_session_options *opt, int n_outputs, mrt_tensor *outputs)
{
    for (int i = 0; i < n_outputs; i++) memset(&outputs[i], 0, sizeof outputs[i]);
    mrt_session *s;
    const char *names[TH_MAX_IO];
    mrt_value vals[TH_MAX_IO];
    int n;
    MRT_TRY(th_session(c, opt, n_outputs, &s, names, vals, &n));
    mrt_status st = mrt_session_run(s, n, names, vals);
    for (int i = 0; !st && i < n_outputs; i++) {
        const mrt_value *v = mrt_session_output(s, i);
        if (v->kind != MRT_VALUE_TENSOR) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "harness: output %d is not a tensor", i);
            break;
        }
        st = mrt_tensor_copy(&outputs[i], &v->tensor);
    }
    if (st)
        for (int i = 0; i < n_outputs; i++) mrt_tensor_release(&outputs[i]);
    mrt_session_get_stats(s, &c->stats);
    mrt_session_free(s);
    return st;
}

mrt_status th_run(th_case *c, int n_outputs, mrt_tensor *outputs) { return th_run_opt(c, NULL, n_outputs, outputs); }

const mrt_session_stats *th_stats(const th_case *c) { return &c->stats; }

void th_free(th_case *c)
{
    if (!c) return;
    mrt_model_free(c->model);
    free(c);
}

/* ------------------------------------------------------------------ data */

uint64_t th_seed(const char *test_name)
{
    const char *env = getenv("MRT_TEST_SEED");
    uint64_t seed;
    if (env && env[0]) {
        seed = strtoull(env, NULL, 0);
    } else {
        seed = 1469598103934665603ull;
        for (const char *p = test_name; *p; p++) seed = (seed ^ (unsigned char)*p) * 1099511628211ull;
    }
    fprintf(stderr, "[seed] %s: MRT_TEST_SEED=%llu\n", test_name, (unsigned long long)seed);
    return seed;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(th_rng *r)
{
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

void th_rng_init(th_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        seed += 0x9e3779b97f4a7c15ull;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        r->s[i] = z ^ (z >> 31);
    }
}

double th_rng_uniform(th_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next(r) >> 11) / 9007199254740992.0);
}

int64_t th_rng_int(th_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return span ? lo + (int64_t)(rng_next(r) % span) : (int64_t)rng_next(r);
}

mrt_tensor th_rand(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, double lo, double hi)
{
    mrt_tensor t;
    if (mrt_tensor_alloc(&t, dt, rank, shape) != MRT_STATUS_OK) {
        memset(&t, 0, sizeof t);
        return t;
    }
    int64_t n = mrt_tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) {
        if (mrt_dtype_is_float(dt))
            mrt_store_f64(dt, t.data, i, th_rng_uniform(r, lo, hi));
        else
            mrt_store_i64(dt, t.data, i, th_rng_int(r, (int64_t)lo, (int64_t)hi));
    }
    return t;
}

mrt_tensor th_from_f64(mrt_dtype dt, int rank, const int64_t *shape, const double *vals)
{
    mrt_tensor t;
    if (mrt_tensor_alloc(&t, dt, rank, shape) != MRT_STATUS_OK) {
        memset(&t, 0, sizeof t);
        return t;
    }
    int64_t n = vals ? mrt_tensor_numel(&t) : 0; /* NULL: zero-filled */
    for (int64_t i = 0; i < n; i++) {
        if (mrt_dtype_is_float(dt))
            mrt_store_f64(dt, t.data, i, vals[i]);
        else
            mrt_store_i64(dt, t.data, i, (int64_t)vals[i]);
    }
    return t;
}

mrt_tensor th_scalar_i64(int64_t v)
{
    mrt_tensor t;
    mrt_tensor_alloc(&t, MRT_DTYPE_INT64, 0, NULL);
    if (t.data) ((int64_t *)t.data)[0] = v;
    return t;
}

mrt_tensor th_vec_i64(int64_t n, const int64_t *v)
{
    mrt_tensor t;
    mrt_tensor_alloc(&t, MRT_DTYPE_INT64, 1, &n);
    if (t.data && n) memcpy(t.data, v, (size_t)n * sizeof(int64_t));
    return t;
}

/* ------------------------------------------------------------------ comparison */

double *th_to_f64(const mrt_tensor *t)
{
    int64_t n = mrt_tensor_numel(t);
    double *d = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!d) return NULL;
    for (int64_t i = 0; i < n; i++)
        d[i] = mrt_dtype_is_float(t->dtype) ? mrt_load_f64(t->dtype, t->data, i)
                                            : (double)mrt_load_i64(t->dtype, t->data, i);
    return d;
}

static bool same_shape(const mrt_tensor *got, int rank, const int64_t *shape, char *why, size_t why_len)
{
    bool ok = got->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = got->shape[i] == shape[i];
    if (!ok) {
        char a[256], b[256];
        snprintf(why, why_len, "shape %s, expected %s", mrt_shape_describe(got->rank, got->shape, a, sizeof a),
                 mrt_shape_describe(rank, shape, b, sizeof b));
    }
    return ok;
}

bool th_check_f64(const mrt_tensor *got, const double *expect, int rank, const int64_t *shape, double nmse_max,
                  double max_abs, double max_rel, char *why, size_t why_len)
{
    if (!same_shape(got, rank, shape, why, why_len)) return false;
    int64_t n = mrt_tensor_numel(got);
    bool exact = !mrt_dtype_is_float(got->dtype);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = exact ? (double)mrt_load_i64(got->dtype, got->data, i) : mrt_load_f64(got->dtype, got->data, i);
        double b = expect[i];
        if (isnan(a) || isnan(b)) {
            if (isnan(a) && isnan(b)) continue;
            snprintf(why, why_len, "element %lld: got %.9g, expected %.9g (NaN mismatch)", (long long)i, a, b);
            return false;
        }
        if (isinf(a) || isinf(b)) {
            if (a == b) continue;
            snprintf(why, why_len, "element %lld: got %.9g, expected %.9g (inf mismatch)", (long long)i, a, b);
            return false;
        }
        if (exact && a != b) {
            snprintf(why, why_len, "element %lld: got %.17g, expected %.17g (exact)", (long long)i, a, b);
            return false;
        }
        if (max_abs >= 0 && fabs(a - b) > max_abs + max_rel * fabs(b)) {
            snprintf(why, why_len, "element %lld: got %.9g, expected %.9g (|diff| %.3g > %.3g + %.3g*|expected|)",
                     (long long)i, a, b, fabs(a - b), max_abs, max_rel);
            return false;
        }
        num += (a - b) * (a - b);
        den += b * b;
    }
    double nmse = den > 0 ? num / den : num;
    if (nmse > nmse_max) {
        snprintf(why, why_len, "NMSE %.3g > %.3g", nmse, nmse_max);
        return false;
    }
    return true;
}

bool th_check_tensor(const mrt_tensor *got, const mrt_tensor *expect, double nmse_max, double max_abs,
                     double max_rel, char *why, size_t why_len)
{
    if (got->dtype != expect->dtype) {
        snprintf(why, why_len, "dtype %s, expected %s", mrt_dtype_name(got->dtype), mrt_dtype_name(expect->dtype));
        return false;
    }
    if (got->dtype == MRT_DTYPE_STRING) {
        if (!same_shape(got, expect->rank, expect->shape, why, why_len)) return false;
        int64_t n = mrt_tensor_numel(got);
        for (int64_t i = 0; i < n; i++) {
            const char *a = ((char **)got->data)[i], *b = ((char **)expect->data)[i];
            if (strcmp(a ? a : "", b ? b : "") != 0) {
                snprintf(why, why_len, "element %lld: got \"%s\", expected \"%s\"", (long long)i, a, b);
                return false;
            }
        }
        return true;
    }
    double *e = th_to_f64(expect);
    if (!e) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    bool ok = th_check_f64(got, e, expect->rank, expect->shape, nmse_max, max_abs, max_rel, why, why_len);
    free(e);
    return ok;
}

/* ------------------------------------------------------------------ shared test scaffolding */

void th_tolerance(mrt_dtype dt, double *nmse, double *abs_tol, double *rel)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: *nmse = 1e-24; *abs_tol = 1e-10; *rel = 1e-10; break;
    case MRT_DTYPE_FLOAT: *nmse = 1e-10; *abs_tol = 1e-4; *rel = 1e-4; break;
    case MRT_DTYPE_FLOAT16: *nmse = 1e-5; *abs_tol = 2e-2; *rel = 1e-2; break;
    case MRT_DTYPE_BFLOAT16: *nmse = 1e-4; *abs_tol = 1e-1; *rel = 2e-2; break;
    default: *nmse = 0; *abs_tol = 0; *rel = 0; break; /* integers compare exactly */
    }
}

void th_assert_close(const mrt_tensor *got, mrt_dtype dt, const double *expect, int rank, const int64_t *shape,
                      const char *label)
{
    char why[512];
    double nmse, at, rt;
    th_tolerance(dt, &nmse, &at, &rt);
    cr_assert_eq(got->dtype, dt, "%s: output dtype %s, expected %s", label, mrt_dtype_name(got->dtype),
                 mrt_dtype_name(dt));
    cr_assert(th_check_f64(got, expect, rank, shape, nmse, at, rt, why, sizeof why), "%s: %s", label, why);
}

void th_assert_f32_is_f64_rounded(const mrt_tensor *got, const mrt_tensor *want, const char *label)
{
    cr_assert(got->dtype == MRT_DTYPE_FLOAT && want->dtype == MRT_DTYPE_DOUBLE, "%s: expected float32 against float64",
              label);
    int64_t n = mrt_tensor_numel(got);
    cr_assert_eq(n, mrt_tensor_numel(want), "%s: %lld elements against %lld", label, (long long)n,
                 (long long)mrt_tensor_numel(want));
    const float *g = got->data;
    const double *w = want->data;
    for (int64_t i = 0; i < n; i++) {
        float r = (float)w[i];
        cr_assert(memcmp(&g[i], &r, sizeof r) == 0 || (isnan(g[i]) && isnan(r)),
                  "%s, element %lld: got %.9g, the float64 sums give %.9g", label, (long long)i, (double)g[i], (double)r);
    }
}

void th_expect_failure(th_case *c, int n_out, const char *needle, const char *label)
{
    mrt_tensor y[4];
    mrt_status st = th_run(c, n_out, y);
    cr_assert_neq(st, MRT_STATUS_OK, "%s: expected a failure", label);
    cr_assert(strstr(mrt_last_error(), needle) != NULL, "%s: message '%s' does not mention '%s'", label,
              mrt_last_error(), needle);
    th_free(c);
}

int64_t th_numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    return n;
}

double *th_alloc_f64(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* ------------------------------------------------------------------ CUDA against the CPU */

void th_cuda_require(void)
{
    const mrt_cuda_api *api;
    if (mrt_cuda_open(&api) != MRT_STATUS_OK) cr_skip_test("no CUDA module or device: %s", mrt_last_error());
}

void th_cuda_check(th_case *c, int n_out, double tol_scale, const char *label)
{
    mrt_tensor cpu[8], gpu[8];
    cr_assert(n_out >= 0 && n_out <= 8, "%s: th_cuda_check takes up to 8 outputs", label);
    memset(cpu, 0, sizeof cpu);
    memset(gpu, 0, sizeof gpu);
    mrt_session_options o = mrt_session_options_default();
    o.poison_outputs = true; /* a kernel flagged to write every element is held to it, on both devices */
    mrt_status st = th_run_opt(c, &o, n_out, cpu);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: the CPU run failed: %s", label, mrt_last_error());
    o.device = "cuda";
    o.no_cpu_fallback = true;
    st = th_run_opt(c, &o, n_out, gpu);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: the CUDA run failed: %s", label, mrt_last_error());
    for (int i = 0; i < n_out; i++) {
        char why[512];
        double nmse, at, rt;
        th_tolerance(cpu[i].dtype, &nmse, &at, &rt);
        cr_assert_eq(gpu[i].dtype, cpu[i].dtype, "%s: output %d dtype %s on CUDA, %s on the CPU", label, i,
                     mrt_dtype_name(gpu[i].dtype), mrt_dtype_name(cpu[i].dtype));
        cr_assert(mrt_tensor_same_shape(&gpu[i], &cpu[i]), "%s: output %d shapes differ", label, i);
        cr_assert(th_check_tensor(&gpu[i], &cpu[i], nmse * tol_scale * tol_scale, at * tol_scale, rt * tol_scale, why,
                                  sizeof why),
                  "%s: output %d, CUDA against the CPU: %s", label, i, why);
        mrt_tensor_release(&cpu[i]);
        mrt_tensor_release(&gpu[i]);
    }
}
