/* The CUDA quant family (ops_cuda/quant.cu: QuantizeLinear/DequantizeLinear 10-25, DynamicQuantizeLinear 11,
 * QLinearMatMul 10/21, QLinearConv 10) against the CPU kernels (tests/harness.h th_cuda_check), bit for bit: per
 * tensor, per axis and blocked parameters, every integer type incl. packed 4/2-bit, float8 (saturating or not),
 * float4e2m1, empty and odd shapes, broadcast matmul batches, grouped / padded / strided convolutions. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static void int_bounds(mrt_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: *lo = 0, *hi = 255; break;
    case MRT_DTYPE_INT8: *lo = -128, *hi = 127; break;
    case MRT_DTYPE_UINT16: *lo = 0, *hi = 65535; break;
    case MRT_DTYPE_INT16: *lo = -32768, *hi = 32767; break;
    case MRT_DTYPE_INT32: *lo = -100000, *hi = 100000; break;
    case MRT_DTYPE_UINT4: *lo = 0, *hi = 15; break;
    case MRT_DTYPE_INT4: *lo = -8, *hi = 7; break;
    case MRT_DTYPE_UINT2: *lo = 0, *hi = 3; break;
    case MRT_DTYPE_INT2: *lo = -2, *hi = 1; break;
    default: *lo = -2, *hi = 2; break; /* float8/float4: zero points of 0 only, chosen below */
    }
}

static bool is_int_q(mrt_dtype dt)
{
    return dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_INT8 || dt == MRT_DTYPE_UINT16 || dt == MRT_DTYPE_INT16 ||
           dt == MRT_DTYPE_INT32 || dt == MRT_DTYPE_UINT4 || dt == MRT_DTYPE_INT4 || dt == MRT_DTYPE_UINT2 ||
           dt == MRT_DTYPE_INT2;
}

/* mode 0 per tensor, 1 per axis, 2 blocked (block 3 along axis) */
static void qdq_case(bool quant, int opset, mrt_dtype qdt, mrt_dtype fdt, int mode, int64_t axis, bool zp, int saturate)
{
    static const struct {
        int rank;
        int64_t shape[4];
    } layouts[] = {{1, {0}}, {1, {1}}, {2, {5, 7}}, {3, {2, 7, 3}}, {4, {2, 3, 5, 2}}, {2, {37, 65}}};
    th_rng r;
    th_rng_init(&r, th_seed(quant ? "QuantizeLinear" : "DequantizeLinear"));
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        int rank = layouts[k].rank;
        const int64_t *shape = layouts[k].shape;
        if (mode && (axis >= rank || axis < -rank)) continue;
        int ax = (int)(axis < 0 ? axis + rank : axis);
        if (mode && shape[ax] == 0) continue;
        int prank = mode == 0 ? 0 : mode == 1 ? 1 : rank;
        int64_t pshape[4] = {0};
        if (mode == 1) pshape[0] = shape[ax];
        if (mode == 2) {
            for (int i = 0; i < rank; i++) pshape[i] = shape[i];
            pshape[ax] = (shape[ax] + 2) / 3;
        }
        double lo, hi;
        int_bounds(qdt, &lo, &hi);
        mrt_tensor x = quant ? th_rand(&r, fdt, rank, shape, -60, 60) : th_rand(&r, qdt, rank, shape, lo, hi);
        if (!quant && !is_int_q(qdt)) { /* minifloat inputs: codes from values */
            double *v = th_to_f64(&x);
            mrt_tensor_release(&x);
            x = th_rand(&r, fdt, rank, shape, -300, 300);
            double *f = th_to_f64(&x);
            mrt_tensor_release(&x);
            x = th_from_f64(qdt, rank, shape, f);
            free(v);
            free(f);
        }
        if (quant && mrt_tensor_numel(&x) > 3) { /* a tie, a huge value, a NaN for the float8 paths */
            mrt_store_f64(fdt, x.data, 0, 2.5);
            mrt_store_f64(fdt, x.data, 1, 1e6);
            if (!is_int_q(qdt)) mrt_store_f64(fdt, x.data, 2, NAN);
        }
        mrt_tensor s = th_rand(&r, fdt, prank, pshape, 0.05, 2);
        if (quant && mode == 0) mrt_store_f64(fdt, s.data, 0, 0.5); /* exact ties at .5 */
        mrt_tensor z = th_rand(&r, is_int_q(qdt) ? qdt : MRT_DTYPE_INT8, prank, pshape, is_int_q(qdt) ? lo : 0,
                               is_int_q(qdt) ? hi : 0);
        if (!is_int_q(qdt)) {
            double *zv = th_to_f64(&z);
            mrt_tensor_release(&z);
            z = th_from_f64(qdt, prank, pshape, zv);
            free(zv);
        }
        th_case *c = th_begin(quant ? "QuantizeLinear" : "DequantizeLinear", "", opset);
        th_input(c, &x);
        th_input(c, &s);
        if (zp) th_input(c, &z);
        if (mode) th_attr_int(c, "axis", axis);
        if (mode == 2) th_attr_int(c, "block_size", 3);
        if (saturate >= 0) th_attr_int(c, "saturate", saturate);
        if (quant && !zp) th_attr_int(c, "output_dtype", qdt);
        char label[160];
        snprintf(label, sizeof label, "%s-%d %s/%s mode %d axis %lld zp %d sat %d layout %zu", quant ? "Q" : "DQ", opset,
                 mrt_dtype_name(qdt), mrt_dtype_name(fdt), mode, (long long)axis, zp, saturate, k);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&x);
        mrt_tensor_release(&s);
        mrt_tensor_release(&z);
        th_free(c);
    }
}

static const mrt_dtype int_types[] = {MRT_DTYPE_UINT8, MRT_DTYPE_INT8, MRT_DTYPE_UINT16, MRT_DTYPE_INT16,
                                      MRT_DTYPE_INT32, MRT_DTYPE_UINT4, MRT_DTYPE_INT4,  MRT_DTYPE_UINT2, MRT_DTYPE_INT2};

Test(cuda_quant, integer_types_all_layouts)
{
    th_cuda_require();
    for (size_t t = 0; t < sizeof int_types / sizeof int_types[0]; t++)
        for (int mode = 0; mode < 3; mode++)
            for (int q = 0; q < 2; q++) {
                if (q && int_types[t] == MRT_DTYPE_INT32) continue; /* the opdef quantizes to int32 nowhere */
                qdq_case(q, 25, int_types[t], MRT_DTYPE_FLOAT, mode, mode ? -1 : 1, true, -1);
                qdq_case(q, 25, int_types[t], MRT_DTYPE_FLOAT, mode, mode ? 0 : 1, false, -1);
            }
}

Test(cuda_quant, older_opsets_and_float_types)
{
    th_cuda_require();
    qdq_case(true, 10, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT, 0, 1, true, -1);
    qdq_case(false, 10, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT, 0, 1, true, -1);
    qdq_case(true, 13, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT, 1, 1, true, -1);
    qdq_case(false, 13, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT, 1, 1, true, -1);
    qdq_case(true, 19, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT16, 1, 1, true, -1);
    qdq_case(false, 19, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT16, 1, 1, true, -1);
    qdq_case(true, 21, MRT_DTYPE_UINT16, MRT_DTYPE_BFLOAT16, 2, 1, true, -1);
    qdq_case(false, 21, MRT_DTYPE_INT16, MRT_DTYPE_BFLOAT16, 2, 1, true, -1);
    qdq_case(true, 23, MRT_DTYPE_INT8, MRT_DTYPE_DOUBLE, 1, -1, true, -1);
    qdq_case(false, 23, MRT_DTYPE_INT32, MRT_DTYPE_FLOAT, 0, 1, true, -1);
}

Test(cuda_quant, float8_and_float4)
{
    th_cuda_require();
    static const mrt_dtype f8[] = {MRT_DTYPE_FLOAT8E4M3FN, MRT_DTYPE_FLOAT8E4M3FNUZ, MRT_DTYPE_FLOAT8E5M2,
                                   MRT_DTYPE_FLOAT8E5M2FNUZ, MRT_DTYPE_FLOAT4E2M1};
    for (int t = 0; t < 5; t++)
        for (int sat = 0; sat < 2; sat++) {
            if (f8[t] == MRT_DTYPE_FLOAT4E2M1 && !sat) continue;
            qdq_case(true, 25, f8[t], MRT_DTYPE_FLOAT, 1, -1, true, f8[t] == MRT_DTYPE_FLOAT4E2M1 ? -1 : sat);
        }
    for (int t = 0; t < 5; t++) qdq_case(false, 25, f8[t], MRT_DTYPE_FLOAT, 0, 0, true, -1);
}

static void dynamic_case(int rank, const int64_t *shape, double lo, double hi)
{
    th_rng r;
    th_rng_init(&r, th_seed("DynamicQuantizeLinear"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, rank, shape, lo, hi);
    th_case *c = th_begin("DynamicQuantizeLinear", "", 11);
    th_input(c, &x);
    char label[96];
    snprintf(label, sizeof label, "DynamicQuantizeLinear rank %d [%g, %g)", rank, lo, hi);
    th_cuda_check(c, 3, 1, label);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(cuda_quant, dynamic_quantize)
{
    th_cuda_require();
    int64_t s0[1] = {0}, s1[1] = {1}, s2[2] = {7, 13}, s3[3] = {3, 50, 41};
    dynamic_case(1, s0, -1, 1);
    dynamic_case(1, s1, 2, 3);
    dynamic_case(2, s2, -5, 5);
    dynamic_case(3, s3, 1, 9);
    dynamic_case(3, s3, -9, -1);
}

static void qmm_case(int opset, mrt_dtype adt, mrt_dtype bdt, mrt_dtype sdt, int ra, const int64_t *sa, int rb,
                     const int64_t *sb, bool per_row, bool per_col)
{
    th_rng r;
    th_rng_init(&r, th_seed("QLinearMatMul"));
    double alo = adt == MRT_DTYPE_INT8 ? -128 : 0, ahi = adt == MRT_DTYPE_INT8 ? 127 : 255;
    double blo = bdt == MRT_DTYPE_INT8 ? -128 : 0, bhi = bdt == MRT_DTYPE_INT8 ? 127 : 255;
    int64_t m = sa[ra - 1 - 1 + (ra == 1)], n = sb[rb - 1];
    if (ra == 1) m = 1;
    mrt_tensor a = th_rand(&r, adt, ra, sa, alo, ahi), b = th_rand(&r, bdt, rb, sb, blo, bhi);
    mrt_tensor as = th_rand(&r, sdt, per_row, &m, 0.001, 0.05), az = th_rand(&r, adt, per_row, &m, alo, ahi);
    mrt_tensor bs = th_rand(&r, sdt, per_col, &n, 0.001, 0.05), bz = th_rand(&r, bdt, per_col, &n, blo, bhi);
    mrt_tensor ys = th_rand(&r, sdt, 0, NULL, 0.5, 2), yz = th_rand(&r, adt, 0, NULL, alo, ahi);
    th_case *c = th_begin("QLinearMatMul", "", opset);
    const mrt_tensor *ins[8] = {&a, &as, &az, &b, &bs, &bz, &ys, &yz};
    for (int i = 0; i < 8; i++) th_input(c, ins[i]);
    char label[128];
    snprintf(label, sizeof label, "QLinearMatMul-%d %s x %s (%s) ranks %d/%d row %d col %d", opset, mrt_dtype_name(adt),
             mrt_dtype_name(bdt), mrt_dtype_name(sdt), ra, rb, per_row, per_col);
    th_cuda_check(c, 1, 1, label);
    for (int i = 0; i < 8; i++) mrt_tensor_release((mrt_tensor *)ins[i]);
    th_free(c);
}

Test(cuda_quant, qlinear_matmul)
{
    th_cuda_require();
    int64_t a2[2] = {5, 7}, b2[2] = {7, 9}, a3[3] = {3, 4, 6}, b3[3] = {1, 6, 5}, e2[2] = {0, 7}, b4[4] = {2, 1, 6, 3};
    qmm_case(10, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT, 2, a2, 2, b2, false, false);
    qmm_case(10, MRT_DTYPE_INT8, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT, 2, a2, 2, b2, true, true);
    qmm_case(21, MRT_DTYPE_UINT8, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT16, 3, a3, 3, b3, false, true);
    qmm_case(21, MRT_DTYPE_INT8, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT, 3, a3, 4, b4, false, false);
    qmm_case(10, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT, 2, e2, 2, b2, false, false);
}

static void qconv_case(int nsp, int64_t group, bool pads, bool strides, bool bias, bool per_channel, mrt_dtype xdt,
                       mrt_dtype wdt)
{
    th_rng r;
    th_rng_init(&r, th_seed("QLinearConv"));
    int64_t cin = 2 * group, cout = 3 * group;
    int64_t xs[5] = {2, cin, 7, 6, 5}, ws[5] = {cout, cin / group, 3, 2, 2};
    double xlo = xdt == MRT_DTYPE_INT8 ? -128 : 0, xhi = xdt == MRT_DTYPE_INT8 ? 127 : 255;
    double wlo = wdt == MRT_DTYPE_INT8 ? -128 : 0, whi = wdt == MRT_DTYPE_INT8 ? 127 : 255;
    mrt_tensor x = th_rand(&r, xdt, nsp + 2, xs, xlo, xhi), w = th_rand(&r, wdt, nsp + 2, ws, wlo, whi);
    int64_t pc = cout;
    mrt_tensor xsc = th_rand(&r, MRT_DTYPE_FLOAT, 0, NULL, 0.01, 0.05), xz = th_rand(&r, xdt, 0, NULL, xlo, xhi);
    mrt_tensor wsc = th_rand(&r, MRT_DTYPE_FLOAT, per_channel, &pc, 0.01, 0.05);
    mrt_tensor wz = th_rand(&r, wdt, per_channel, &pc, wdt == MRT_DTYPE_INT8 ? 0 : wlo, wdt == MRT_DTYPE_INT8 ? 0 : whi);
    mrt_tensor ysc = th_rand(&r, MRT_DTYPE_FLOAT, 0, NULL, 2, 8), yz = th_rand(&r, xdt, 0, NULL, xlo, xhi);
    mrt_tensor b = th_rand(&r, MRT_DTYPE_INT32, 1, &pc, -5000, 5000);
    th_case *c = th_begin("QLinearConv", "", 10);
    const mrt_tensor *ins[9] = {&x, &xsc, &xz, &w, &wsc, &wz, &ysc, &yz, &b};
    for (int i = 0; i < (bias ? 9 : 8); i++) th_input(c, ins[i]);
    th_attr_int(c, "group", group);
    if (pads) th_attr_ints(c, "pads", 2 * nsp, (int64_t[]){1, 0, 2, 1, 1, 0});
    if (strides) th_attr_ints(c, "strides", nsp, (int64_t[]){2, 1, 2});
    if (strides) th_attr_ints(c, "dilations", nsp, (int64_t[]){1, 2, 1});
    char label[160];
    snprintf(label, sizeof label, "QLinearConv %dd group %lld pads %d strides %d bias %d per-channel %d %s/%s", nsp,
             (long long)group, pads, strides, bias, per_channel, mrt_dtype_name(xdt), mrt_dtype_name(wdt));
    th_cuda_check(c, 1, 1, label);
    for (int i = 0; i < 9; i++) mrt_tensor_release((mrt_tensor *)ins[i]);
    th_free(c);
}

Test(cuda_quant, qlinear_conv)
{
    th_cuda_require();
    for (int nsp = 1; nsp <= 3; nsp++) {
        qconv_case(nsp, 1, false, false, false, false, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8);
        qconv_case(nsp, 2, true, true, true, true, MRT_DTYPE_UINT8, MRT_DTYPE_INT8);
        qconv_case(nsp, 1, true, false, true, false, MRT_DTYPE_INT8, MRT_DTYPE_INT8);
    }
}
