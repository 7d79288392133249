/* Shared pieces of the minirt command-line tool (the files in tools/). */
#pragma once

#include <stdio.h>

#include "minirt/minirt.h"

/* Exit statuses of the CLI contract. */
enum { MRT_EXIT_OK = 0, MRT_EXIT_ERROR = 1, MRT_EXIT_USAGE = 2 };

/* Print "minirt: error: <msg>" (one line) to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Report the library's last error and return MRT_EXIT_ERROR. */
int cli_fail_status(mrt_status st, const char *context);

/* mkdir -p; 0 or -1 with errno. */
int cli_mkdirs(const char *path);
/* Replace every character outside [A-Za-z0-9._-] by '_' (in a new malloc'd string). */
char *cli_sanitize_name(const char *name);

/* Inputs bound from --input arguments: names and values own their memory. */
typedef struct bound_inputs {
    int n, cap;
    char **names;
    mrt_value *vals;
} bound_inputs;
/* Bind one --input argument ("NAME=PATH", or "PATH" for the next unbound input); returns an exit status. */
int bind_arg(bound_inputs *b, const mrt_model *m, const char *arg);
/* Bind a tensor (ownership passes to b, also on failure); returns an exit status. */
int bind_tensor(bound_inputs *b, const char *name, mrt_tensor t);
void bound_free(bound_inputs *b);
/* A raw .bin/.raw file for graph input `name`: the model's declared static shape and dtype, size checked. */
mrt_status raw_input_read(const mrt_model *m, const char *name, const char *path, mrt_tensor *t);
/* The file part of an --input argument. */
const char *input_arg_path(const char *arg);

/* Re-execute once with OPENBLAS_CORETYPE=SkylakeX on AVX-512 CPUs that OpenBLAS 0.3.21 does not recognise
   (first thing in main; a no-op when the user chose a core type or set MRT_NO_BLAS_REEXEC). */
void cli_prefer_avx512_blas(char **argv);

/* The device options every command that runs a model takes: --device cpu|cuda, --no-cpu-fallback, --allow-tf32.
   Returns 1 when argv[*i] was one of them (consuming its value), 0 when not. */
int cli_device_option(int argc, char **argv, int *i, mrt_session_options *opt);
#define CLI_DEVICE_USAGE                                                                                          \
    "  --device cpu|cuda     execution device (default cpu); MRT_CUDA_MODULE=build/libminirt_cuda_emu.so runs\n"   \
    "                        the CUDA kernels emulated on the CPU (docs/cuda.md)\n"                                  \
    "  --no-cpu-fallback     with --device cuda: a node no CUDA kernel takes is an error, not a CPU step\n"         \
    "  --allow-tf32          with --device cuda: let cuBLAS/cuDNN use TF32 for float32 (off: exact products)\n"

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
