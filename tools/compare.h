/* Tensor comparison with Polygraphy's semantics (B is the reference): an element fails only when
 * |a-b| > atol AND |a-b| > rtol*|b|. Used by `minirt compare` and `minirt diff`. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "minirt/minirt.h"

typedef enum error_stat { ERROR_STAT_ELEMWISE, ERROR_STAT_MAX, ERROR_STAT_MEAN, ERROR_STAT_MEDIAN, ERROR_STAT_QUANTILE } error_stat;

typedef struct compare_tolerance {
    double atol, rtol;
    error_stat stat;
    double quantile; /* for ERROR_STAT_QUANTILE */
    /* NaN in either tensor fails that element (as Polygraphy, numpy.allclose and torch.testing.assert_close do)
       unless equal_nan, which counts NaN against NaN at the same position as equal (--equal-nan). */
    bool equal_nan;
} compare_tolerance;

typedef struct compare_result {
    bool passed;
    char reason[256];          /* why it failed (shape, dtype, NaN mismatch, tolerance) */
    int64_t count;
    double max_abs, mean_abs, median_abs;
    double max_rel, mean_rel, median_rel;
    int64_t worst_index;       /* flat index of the largest |a-b|, -1 if none */
    double worst_a, worst_b;
    double l2;                 /* ||a-b||_2 */
    double cosine;             /* a.b / (|a||b|) */
    double max_ulp;            /* in the reference's float type */
    double psnr_db;            /* 10 log10(max|b|^2 / mse) */
    double fail_fraction;      /* elements failing the elemwise rule */
    int64_t nan_mismatch, inf_mismatch;
    double min_atol_to_pass;   /* smallest atol that would pass, with rtol as given */
    double min_rtol_to_pass;   /* smallest rtol that would pass, with atol as given */
} compare_result;

/* Compare a against the reference b. Tensors of different float types are compared as doubles
   (so a float32 run can be judged against a float64 oracle). */
/* Units in the last place between a and b, counted in float64 when dbl, else in float32. */
double ulp_distance(double a, double b, bool dbl);
void compare_tensors(const mrt_tensor *a, const mrt_tensor *b, const compare_tolerance *tol, compare_result *r);
void compare_print(FILE *f, const char *name, const compare_result *r);
void compare_json(FILE *f, const char *name, const compare_result *r);

/* Named tensors (owned). */
typedef struct tensor_set {
    int n, cap;
    char **names;
    mrt_tensor *tensors;
} tensor_set;
mrt_status set_add(tensor_set *s, const char *name, mrt_tensor *t);
/* Index of `name` in s, or -1: the exact name, else the one name whose sanitised form (cli_sanitize_name: what
   --output-dir and dump files are called) equals name's, so a folder of `_conv1_Conv_output_0.npy` files matches
   the value `/conv1/Conv_output_0`. Two candidates with the same sanitised form match neither. */
int set_find(const tensor_set *s, const char *name);
void set_free(tensor_set *s);
/* Load a .npy (named by its file stem), an .npz, or a dump folder (names from manifest.json, else file stems). */
mrt_status compare_load_set(const char *path, tensor_set *s);
