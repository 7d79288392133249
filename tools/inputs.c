/* Binding --input arguments to a model's graph inputs (shared by run, diff and bench). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader/npy.h"
#include "engine/status.h"
#include "loader/tensor_proto.h"
#include "tools/cli.h"

static bool has_suffix(const char *s, const char *suf)
{
    size_t ls = strlen(s), lf = strlen(suf);
    return ls >= lf && strcmp(s + ls - lf, suf) == 0;
}

int bind_tensor(bound_inputs *b, const char *name, mrt_tensor t)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) {
            mrt_tensor_release(&t);
            cli_error("input '%s' is given twice", name);
            return MRT_EXIT_USAGE;
        }
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 8;
        char **nn = realloc(b->names, (size_t)nc * sizeof *nn);
        if (nn) b->names = nn;
        mrt_value *nv = nn ? realloc(b->vals, (size_t)nc * sizeof *nv) : NULL;
        if (!nn || !nv) {
            mrt_tensor_release(&t);
            cli_error("out of memory");
            return MRT_EXIT_ERROR;
        }
        b->vals = nv;
        b->cap = nc;
    }
    b->names[b->n] = strdup(name);
    b->vals[b->n] = mrt_value_from_tensor(t);
    b->n++;
    return MRT_EXIT_OK;
}

void bound_free(bound_inputs *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->names[i]);
        mrt_value_release(&b->vals[i]);
    }
    free(b->names);
    free(b->vals);
}

static bool is_bound(const bound_inputs *b, const char *name)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) return true;
    return false;
}

/* The file part of an --input argument ("NAME=PATH" or "PATH"). */
const char *input_arg_path(const char *arg)
{
    struct stat sb;
    const char *eq = strchr(arg, '=');
    return eq && stat(arg, &sb) != 0 ? eq + 1 : arg;
}

/* One --input argument. */
int bind_arg(bound_inputs *b, const mrt_model *m, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *name = NULL;
    const char *path = arg;
    /* NAME=PATH, unless the '=' is part of a path that exists as given */
    struct stat sb;
    if (eq && stat(arg, &sb) != 0) {
        name = strndup(arg, (size_t)(eq - arg));
        path = eq + 1;
    }
    int rc = MRT_EXIT_OK;
    mrt_status st;
    if (has_suffix(path, ".npz")) {
        int n = 0;
        char **names = NULL;
        mrt_tensor *ts = NULL;
        st = mrt_npz_read_file(path, &n, &names, &ts);
        if (st) {
            free(name);
            return cli_fail_status(st, path);
        }
        for (int i = 0; i < n; i++) {
            if (rc == MRT_EXIT_OK)
                rc = bind_tensor(b, names[i], ts[i]);
            else
                mrt_tensor_release(&ts[i]);
            free(names[i]);
        }
        free(names);
        free(ts);
        free(name);
        return rc;
    }
    mrt_tensor t;
    if (has_suffix(path, ".npy")) {
        st = mrt_npy_read_file(path, &t);
    } else if (has_suffix(path, ".bin") || has_suffix(path, ".raw")) {
        /* raw bytes carry no shape: the model's declared one, so the name comes first */
        for (int i = 0; !name && i < mrt_model_n_inputs(m); i++)
            if (!is_bound(b, mrt_model_input_name(m, i))) name = strdup(mrt_model_input_name(m, i));
        st = name ? raw_input_read(m, name, path, &t)
                  : mrt_fail(MRT_STATUS_INVALID_ARG, "input file '%s': every model input is already bound", path);
    } else if (has_suffix(path, ".pb")) {
        char *pb_name = NULL;
        st = mrt_tensor_proto_read_file(path, &t, &pb_name);
        free(pb_name);
    } else {
        free(name);
        cli_error("input file '%s': unknown format (expected .npy, .pb, .npz, or .bin/.raw raw bytes)", path);
        return MRT_EXIT_USAGE;
    }
    if (st) {
        free(name);
        return cli_fail_status(st, path);
    }
    if (!name) {
        for (int i = 0; i < mrt_model_n_inputs(m); i++) {
            const char *in = mrt_model_input_name(m, i);
            if (!is_bound(b, in)) {
                name = strdup(in);
                break;
            }
        }
        if (!name) {
            mrt_tensor_release(&t);
            cli_error("input file '%s': every model input is already bound (the model has %d inputs)", path,
                      mrt_model_n_inputs(m));
            return MRT_EXIT_USAGE;
        }
    }
    rc = bind_tensor(b, name, t);
    free(name);
    return rc;
}

