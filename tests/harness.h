/* Test harness: build a one-node model in memory and run it through the real loader-free path
 * (graph -> plan -> CPU kernels), plus deterministic random data and result comparison.
 *
 *     th_case *c = th_begin("Conv", "", 13);        // op, domain, opset
 *     th_input(c, &x);                               // graph input (tensor borrowed, copied on run)
 *     th_input_const(c, &w);                         // initializer (constant at plan time)
 *     th_input_absent(c);                            // omitted optional input
 *     th_attr_ints(c, "pads", 4, (int64_t[]){1,1,1,1});
 *     mrt_tensor y;
 *     cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
 *     ... compare y with a reference ...
 *     mrt_tensor_release(&y);
 *     th_free(c);
 */
#pragma once

#include <stdint.h>

#include "engine/graph.h"
#include "minirt/minirt.h"

typedef struct th_case th_case;

#define TH_MAX_IO 32 /* inputs of one test node */

th_case *th_begin(const char *op_type, const char *domain, int opset);
void th_input(th_case *c, const mrt_tensor *t);
void th_input_const(th_case *c, const mrt_tensor *t);
void th_input_absent(th_case *c);
void th_attr_int(th_case *c, const char *name, int64_t v);
void th_attr_float(th_case *c, const char *name, float v);
void th_attr_string(th_case *c, const char *name, const char *v);
void th_attr_ints(th_case *c, const char *name, int64_t n, const int64_t *v);
void th_attr_floats(th_case *c, const char *name, int64_t n, const float *v);
void th_attr_strings(th_case *c, const char *name, int64_t n, const char *const *v);
void th_attr_tensor(th_case *c, const char *name, const mrt_tensor *t);
/* Run on the CPU; outputs are deep copies owned by the caller (release with mrt_tensor_release).
   Returns the status of model building, planning or running (message in mrt_last_error()). */
mrt_status th_run(th_case *c, int n_outputs, mrt_tensor *outputs);
/* Same, with session options (precision, threads...). */
mrt_status th_run_opt(th_case *c, const mrt_session_options *opt, int n_outputs, mrt_tensor *outputs);
/* The session th_run would use, for tests that run it themselves (twice, say): names/vals (TH_MAX_IO entries)
   receive the *n runtime inputs to pass to mrt_session_run. Free the session with mrt_session_free. */
mrt_status th_session(th_case *c, const mrt_session_options *opt, int n_outputs, mrt_session **s,
                      const char **names, mrt_value *vals, int *n);
/* What the last th_run's plan did (function nodes, in-place count, ...). */
const mrt_session_stats *th_stats(const th_case *c);
void th_free(th_case *c);

/* ---- data */

/* Seed for a test: derived from its name unless MRT_TEST_SEED is set; printed to stderr. */
uint64_t th_seed(const char *test_name);
/* xoshiro-style generator */
typedef struct th_rng { uint64_t s[4]; } th_rng;
void th_rng_init(th_rng *r, uint64_t seed);
double th_rng_uniform(th_rng *r, double lo, double hi);
int64_t th_rng_int(th_rng *r, int64_t lo, int64_t hi); /* inclusive */

/* Allocate a tensor (mrt_tensor_alloc) and fill it uniformly in [lo, hi) (integers: [lo, hi]). */
mrt_tensor th_rand(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, double lo, double hi);
/* Allocate a tensor and fill it from doubles (converted to dt). */
mrt_tensor th_from_f64(mrt_dtype dt, int rank, const int64_t *shape, const double *vals);
mrt_tensor th_scalar_i64(int64_t v);
mrt_tensor th_vec_i64(int64_t n, const int64_t *v);

/* ---- comparison
   Float: any NaN mismatch fails; inf must match with sign; NMSE = sum((a-b)^2)/sum(b^2) <= nmse_max and
   (when max_abs >= 0) every |a-b| <= max_abs + max_rel*|b|. Integers and bools compare exactly.
   Returns true when equal enough; otherwise writes a description (worst index, values) into why. */
bool th_check_f64(const mrt_tensor *got, const double *expect, int rank, const int64_t *shape, double nmse_max,
                  double max_abs, double max_rel, char *why, size_t why_len);
bool th_check_tensor(const mrt_tensor *got, const mrt_tensor *expect, double nmse_max, double max_abs,
                     double max_rel, char *why, size_t why_len);
/* Convert any numeric tensor to a malloc'd array of doubles. */
double *th_to_f64(const mrt_tensor *t);

/* Shared test scaffolding (Criterion assertions inside). The tolerances suit kernels that accumulate in the
   input's precision: float64 1e-10, float32 1e-4, float16 2e-2/1e-2, bfloat16 1e-1/2e-2; integers exact. */
void th_tolerance(mrt_dtype dt, double *nmse, double *abs_tol, double *rel);
/* Asserts got has dtype dt and matches expect within th_tolerance(dt); label prefixes the failure. */
void th_assert_close(const mrt_tensor *got, mrt_dtype dt, const double *expect, int rank, const int64_t *shape,
                     const char *label);
/* Asserts that every element of the float32 tensor got is the float64 tensor want's element rounded to float, bit
   for bit (NaN matching any NaN): a float32 kernel that computes in double against the same kernel run on float64
   values. label prefixes the failure, which names the element. */
void th_assert_f32_is_f64_rounded(const mrt_tensor *got, const mrt_tensor *want, const char *label);
/* Runs c (up to 4 outputs), asserts it fails with a message containing needle, and frees c. */
void th_expect_failure(th_case *c, int n_out, const char *needle, const char *label);
int64_t th_numel(int rank, const int64_t *shape);
/* n zeroed doubles (at least one, so an empty tensor never asks for calloc(0)). */
double *th_alloc_f64(int64_t n);

/* ---- CUDA kernels against their CPU twins (tests/test_cuda_*.c)

   Runs case c (n_out outputs, at most 8) on the CPU and on device "cuda" with no_cpu_fallback (so the node runs on the
   CUDA kernel or the test fails), and asserts every output matches: integers, bools and exact-flagged cases bit for
   bit, floats within th_tolerance of the output dtype scaled by tol_scale (1 = the usual; a kernel whose summation
   order differs from the CPU's may need more, say why at the call). The module is MRT_CUDA_MODULE (CMake points the
   CUDA tests at the emulated one, build/libminirt_cuda_emu.so; scripts/gpu-check.sh at the real one); without a
   module or device the test is skipped with the reason. label names the case in a failure. Frees nothing: c stays the
   caller's. */
void th_cuda_check(th_case *c, int n_out, double tol_scale, const char *label);
/* Skips the calling Criterion test when no CUDA module/device can be opened (call first in a CUDA test). */
void th_cuda_require(void);

/* Tolerances for th_check_f64: normalized MSE, absolute, relative. */
typedef struct tol {
    double nmse, abs, rel;
} tol;

/* Asserts got matches expect within the tolerances t; the printf-style arguments say which case it was. */
#define TH_CHECK_TOL(got, expect, rank, shape, t, ...)                                                         \
    do {                                                                                                      \
        char why_[512];                                                                                       \
        tol t_ = (t);                                                                                         \
        bool ok_ = th_check_f64((got), (expect), (rank), (shape), t_.nmse, t_.abs, t_.rel, why_, sizeof why_); \
        if (!ok_) {                                                                                           \
            char ctx_[512];                                                                                   \
            snprintf(ctx_, sizeof ctx_, __VA_ARGS__);                                                         \
            cr_assert(ok_, "%s: %s", ctx_, why_);                                                             \
        }                                                                                                     \
    } while (0)

/* Runs c and asserts success; the printf-style arguments say which case it was. Needs criterion and stdio. */
#define RUN_OK(c, n, outs, ...)                                                                               \
    do {                                                                                                      \
        mrt_status st_ = th_run((c), (n), (outs));                                                            \
        if (st_ != MRT_STATUS_OK) {                                                                           \
            char ctx_[512];                                                                                   \
            snprintf(ctx_, sizeof ctx_, __VA_ARGS__);                                                         \
            cr_assert_eq(st_, MRT_STATUS_OK, "%s: %s", ctx_, mrt_last_error());                               \
        }                                                                                                     \
    } while (0)
