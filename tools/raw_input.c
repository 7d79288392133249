/* `--input NAME=file.bin`: raw bytes for a static-shaped input, as trtexec's --loadInputs takes them (the
 * elements in C order, little-endian, in the dtype the model declares). The file carries no shape, so the model's
 * declared type supplies it and the file's size must match it exactly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"
#include "tools/cli.h"

mrt_status raw_input_read(const mrt_model *m, const char *name, const char *path, mrt_tensor *t)
{
    int k = -1;
    for (int i = 0; i < mrt_model_n_inputs(m); i++)
        if (strcmp(mrt_model_input_name(m, i), name) == 0) k = i;
    if (k < 0)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s' (raw file '%s'): the model has no graph input of that name",
                        name, path);
    mrt_declared_type dt;
    MRT_TRY(mrt_model_input_type(m, k, &dt));
    char shape[256];
    if (dt.kind != MRT_DECLARED_TENSOR || dt.rank < 0 || !mrt_dtype_is_known(dt.dtype) ||
        dt.dtype == MRT_DTYPE_UNDEFINED || dt.dtype == MRT_DTYPE_STRING)
        return mrt_fail(MRT_STATUS_INVALID_ARG,
                        "input '%s': a raw file ('%s') needs a tensor input with a declared dtype and shape; the model "
                        "does not declare one (use .npy, which carries both)", name, path);
    for (int i = 0; i < dt.rank; i++)
        if (dt.dims[i] < 0) {
            snprintf(shape, sizeof shape, "[");
            for (int j = 0; j < dt.rank; j++) {
                size_t l = strlen(shape);
                if (dt.dims[j] >= 0)
                    snprintf(shape + l, sizeof shape - l, "%s%lld", j ? "," : "", (long long)dt.dims[j]);
                else
                    snprintf(shape + l, sizeof shape - l, "%s%s", j ? "," : "", dt.dim_params[j] ? dt.dim_params[j] : "?");
            }
            size_t l = strlen(shape);
            snprintf(shape + l, sizeof shape - l, "]");
            return mrt_fail(MRT_STATUS_INVALID_ARG,
                            "input '%s': a raw file ('%s') needs a static shape, and the model declares %s %s "
                            "(use .npy, which carries its shape)", name, path, mrt_dtype_name(dt.dtype), shape);
        }
    size_t need;
    MRT_TRY(mrt_shape_nbytes(dt.dtype, dt.rank, dt.dims, &need));
    FILE *f = fopen(path, "rb");
    if (!f) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return mrt_fail(MRT_STATUS_IO_ERROR, "cannot read '%s': not a regular file", path);
    }
    mrt_tensor tmp = {.dtype = dt.dtype, .rank = dt.rank};
    memcpy(tmp.shape, dt.dims, sizeof dt.dims);
    if ((size_t)size != need) {
        fclose(f);
        return mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s': raw file '%s' has %ld bytes, but %s needs %zu", name, path,
                        size, mrt_tensor_describe(&tmp, shape, sizeof shape), need);
    }
    mrt_status st = mrt_tensor_alloc(t, dt.dtype, dt.rank, dt.dims);
    if (st) {
        fclose(f);
        return st;
    }
    if (need && fread(t->data, 1, need, f) != need) {
        fclose(f);
        mrt_tensor_release(t);
        return mrt_fail(MRT_STATUS_IO_ERROR, "error reading '%s'", path);
    }
    fclose(f);
    return MRT_STATUS_OK;
}
