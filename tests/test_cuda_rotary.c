/* The CUDA rotary family (ops_cuda/rotary.cu: RotaryEmbedding 23) against the CPU kernel (tests/harness.h
 * th_cuda_check): 3-D and 4-D X, position ids or per-position caches, interleaved or halves, partial rotary dims,
 * float/double/float16/bfloat16, empty, and a position id outside the caches failing with the CPU's message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void rotary_case(const char *label, mrt_dtype dt, bool four, int64_t b, int64_t n, int64_t s, int64_t h,
                        int64_t rot, bool interleaved, bool pos)
{
    th_rng r;
    th_rng_init(&r, th_seed(label));
    int64_t xs4[4] = {b, n, s, h}, xs3[3] = {b, s, n * h}, R = rot ? rot : h, max_pos = 11;
    int64_t cs_pos[2] = {max_pos, R / 2}, cs_nopos[3] = {b, s, R / 2}, ps[2] = {b, s};
    mrt_tensor x = four ? th_rand(&r, dt, 4, xs4, -2, 2) : th_rand(&r, dt, 3, xs3, -2, 2);
    mrt_tensor co = pos ? th_rand(&r, dt, 2, cs_pos, -1, 1) : th_rand(&r, dt, 3, cs_nopos, -1, 1);
    mrt_tensor si = pos ? th_rand(&r, dt, 2, cs_pos, -1, 1) : th_rand(&r, dt, 3, cs_nopos, -1, 1);
    mrt_tensor p = th_rand(&r, MRT_DTYPE_INT64, 2, ps, 0, (double)max_pos - 1);
    th_case *c = th_begin("RotaryEmbedding", "", 23);
    th_input(c, &x);
    th_input(c, &co);
    th_input(c, &si);
    if (pos) th_input(c, &p);
    if (!four) th_attr_int(c, "num_heads", n);
    if (rot) th_attr_int(c, "rotary_embedding_dim", rot);
    if (interleaved) th_attr_int(c, "interleaved", 1);
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&x);
    mrt_tensor_release(&co);
    mrt_tensor_release(&si);
    mrt_tensor_release(&p);
    th_free(c);
}

Test(cuda_rotary, layouts)
{
    th_cuda_require();
    for (int f = 0; f < 16; f++) {
        char label[96];
        bool four = f & 1, inter = f & 2, pos = f & 4, partial = f & 8;
        snprintf(label, sizeof label, "rotary %s%s%s%s", four ? "4-D" : "3-D", inter ? " interleaved" : "",
                 pos ? " position_ids" : "", partial ? " partial" : "");
        rotary_case(label, MRT_DTYPE_FLOAT, four, 2, 3, 5, 8, partial ? 4 : 0, inter, pos);
    }
    rotary_case("rotary odd heads", MRT_DTYPE_FLOAT, true, 3, 5, 7, 6, 2, false, true);
    rotary_case("rotary empty", MRT_DTYPE_FLOAT, true, 2, 3, 0, 8, 0, false, true);
    rotary_case("rotary large", MRT_DTYPE_FLOAT, false, 2, 4, 33, 64, 32, true, false);
}

Test(cuda_rotary, dtypes)
{
    th_cuda_require();
    rotary_case("rotary double", MRT_DTYPE_DOUBLE, true, 2, 2, 3, 8, 0, true, true);
    rotary_case("rotary float16", MRT_DTYPE_FLOAT16, false, 2, 2, 3, 8, 4, false, true);
    rotary_case("rotary bfloat16", MRT_DTYPE_BFLOAT16, true, 1, 2, 4, 8, 0, false, false);
}

Test(cuda_rotary, position_outside_caches_fails)
{
    th_cuda_require();
    int64_t xs[4] = {1, 1, 2, 4}, cs[2] = {3, 2};
    double xv[8] = {0}, cv[6] = {0}, pv[2] = {1, 3};
    int64_t ps[2] = {1, 2};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 4, xs, xv), co = th_from_f64(MRT_DTYPE_FLOAT, 2, cs, cv);
    mrt_tensor p = th_from_f64(MRT_DTYPE_INT64, 2, ps, pv);
    th_case *c = th_begin("RotaryEmbedding", "", 23);
    th_input(c, &x);
    th_input(c, &co);
    th_input(c, &co);
    th_input(c, &p);
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    o.no_cpu_fallback = true;
    mrt_tensor y;
    cr_assert_neq(th_run_opt(c, &o, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "position id 3 is outside the caches' 3 rows") != NULL, "%s", mrt_last_error());
    mrt_tensor_release(&x);
    mrt_tensor_release(&co);
    mrt_tensor_release(&p);
    th_free(c);
}
