/* The CUDA signal family (ops_cuda/signal.cu: DFT 17/20, STFT 17, MelWeightMatrix 17, Hann/Hamming/BlackmanWindow 17)
 * against the CPU kernels (tests/harness.h th_cuda_check): every transform kind (radix-2, direct sum, Bluestein),
 * forward and inverse, onesided RFFT/IRFFT, dft_length padding and truncation, every axis, real and complex input,
 * windows periodic and symmetric in float and integer dtypes, empty tensors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

/* [batch, len, inner, comp] signals; the transform runs along axis 1 (or 2). */
Test(cuda_signal, dft_every_kind_and_direction)
{
    th_cuda_require();
    static const int64_t lens[] = {1, 8, 12, 64, 70, 0};
    th_rng r;
    th_rng_init(&r, th_seed("DFT"));
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (int comp = 1; comp <= 2; comp++)
            for (int inverse = 0; inverse < 2; inverse++)
                for (int onesided = 0; onesided < 2; onesided++)
                    for (int opset = 17; opset <= 20; opset += 3) {
                        if (onesided && inverse && comp == 1) continue; /* an IRFFT takes a complex spectrum */
                        if (onesided && !inverse && comp == 2) continue; /* an RFFT takes a real signal */
                        if (onesided && inverse && !lens[l]) continue; /* an empty IRFFT needs a length */
                        int64_t shape[4] = {2, lens[l], 3, comp};
                        mrt_tensor x = th_rand(&r, comp == 2 && inverse ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 4, shape, -1, 1);
                        int64_t n = lens[l] ? lens[l] + (l % 2 ? 3 : -1) : 0; /* padded or truncated */
                        if (n < 1) n = lens[l] ? 1 : 0;
                        mrt_tensor len = th_vec_i64(1, &n), axis = th_vec_i64(1, (int64_t[]){1});
                        len.rank = 0;
                        axis.rank = 0;
                        th_case *c = th_begin("DFT", "", opset);
                        th_input(c, &x);
                        if (n) th_input(c, &len);
                        else th_input_absent(c);
                        if (opset >= 20) th_input(c, &axis);
                        else th_attr_int(c, "axis", 1);
                        th_attr_int(c, "inverse", inverse);
                        th_attr_int(c, "onesided", onesided);
                        char label[128];
                        snprintf(label, sizeof label, "DFT-%d len %lld n %lld comp %d inverse %d onesided %d", opset,
                                 (long long)lens[l], (long long)n, comp, inverse, onesided);
                        th_cuda_check(c, 1, 1, label);
                        mrt_tensor_release(&x);
                        mrt_tensor_release(&len);
                        mrt_tensor_release(&axis);
                        th_free(c);
                    }
}

Test(cuda_signal, dft_inner_axis)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("DFT axis"));
    for (int axis = 0; axis < 3; axis++) {
        int64_t shape[4] = {3, 5, 7, 2};
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, shape, -1, 1);
        th_case *c = th_begin("DFT", "", 17);
        th_input(c, &x);
        th_attr_int(c, "axis", axis);
        char label[64];
        snprintf(label, sizeof label, "DFT axis %d", axis);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(cuda_signal, stft_frames_and_windows)
{
    th_cuda_require();
    static const int64_t frames[] = {16, 10, 80};
    th_rng r;
    th_rng_init(&r, th_seed("STFT"));
    for (size_t f = 0; f < 3; f++)
        for (int comp = 1; comp <= 2; comp++)
            for (int win = 0; win < 2; win++) {
                int64_t shape[3] = {2, 200, comp}, fl = frames[f], step = 7 + (int64_t)f * 5;
                mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, shape, -1, 1);
                mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 1, &fl, 0, 1);
                mrt_tensor st = th_vec_i64(1, &step), len = th_vec_i64(1, &fl);
                st.rank = len.rank = 0;
                th_case *c = th_begin("STFT", "", 17);
                th_input(c, &x);
                th_input(c, &st);
                if (win) th_input(c, &w);
                else th_input_absent(c);
                th_input(c, &len);
                th_attr_int(c, "onesided", comp == 1 && win);
                char label[96];
                snprintf(label, sizeof label, "STFT frame %lld comp %d window %d", (long long)fl, comp, win);
                th_cuda_check(c, 1, 1, label);
                mrt_tensor_release(&x);
                mrt_tensor_release(&w);
                mrt_tensor_release(&st);
                mrt_tensor_release(&len);
                th_free(c);
            }
}

Test(cuda_signal, windows_and_mel)
{
    th_cuda_require();
    static const char *ops[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    static const int64_t sizes[] = {0, 1, 10, 33};
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT32};
    for (int o = 0; o < 3; o++)
        for (size_t s = 0; s < 4; s++)
            for (int periodic = 0; periodic < 2; periodic++) {
                mrt_tensor n = th_vec_i64(1, &sizes[s]);
                n.rank = 0;
                th_case *c = th_begin(ops[o], "", 17);
                th_input(c, &n);
                th_attr_int(c, "periodic", periodic);
                th_attr_int(c, "output_datatype", dts[(s + periodic) % 4]);
                char label[96];
                snprintf(label, sizeof label, "%s size %lld periodic %d", ops[o], (long long)sizes[s], periodic);
                th_cuda_check(c, 1, 1, label);
                mrt_tensor_release(&n);
                th_free(c);
            }
    static const double mel[][5] = {{8, 64, 8000, 0, 4000}, {3, 17, 16000, 100, 7000}, {20, 256, 22050, 30, 11000}};
    for (int m = 0; m < 3; m++) {
        th_case *c = th_begin("MelWeightMatrix", "", 17);
        mrt_tensor in[5];
        for (int i = 0; i < 3; i++) {
            int64_t v = (int64_t)mel[m][i];
            in[i] = th_vec_i64(1, &v);
            in[i].rank = 0;
        }
        for (int i = 3; i < 5; i++) in[i] = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, &mel[m][i]);
        for (int i = 0; i < 5; i++) th_input(c, &in[i]);
        th_attr_int(c, "output_datatype", m == 1 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT);
        char label[64];
        snprintf(label, sizeof label, "MelWeightMatrix case %d", m);
        th_cuda_check(c, 1, 1, label);
        for (int i = 0; i < 5; i++) mrt_tensor_release(&in[i]);
        th_free(c);
    }
}
