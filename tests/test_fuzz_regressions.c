/* Inputs the fuzzers once found (tests/fuzz/regressions/<target>/): each must now end quickly in a status,
 * with no crash (the sanitizer build runs this too). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loader/npy.h"
#include "loader/tensor_proto.h"

#define REG MRT_SOURCE_DIR "/tests/fuzz/regressions/"

typedef void (*replay_fn)(const char *path, const void *bytes, size_t len);

static int replay_dir(const char *dir, replay_fn fn)
{
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        void *bytes;
        size_t len;
        cr_assert_eq(mrt_read_whole_file(path, &bytes, &len), MRT_STATUS_OK, "%s", mrt_last_error());
        fn(path, bytes, len);
        free(bytes);
        n++;
    }
    closedir(d);
    return n;
}

static void replay_model(const char *path, const void *bytes, size_t len)
{
    (void)path;
    mrt_model *m = NULL;
    if (mrt_model_load_from_memory(bytes, len, NULL, &m) != MRT_STATUS_OK) return;
    mrt_session *s = NULL;
    if (mrt_session_new(m, NULL, &s) == MRT_STATUS_OK) {
        /* zero inputs are what the fuzzer fed; the loop guard keeps a hostile trip count short */
        int n = mrt_model_n_inputs(m);
        const char **names = calloc((size_t)n + 1, sizeof *names);
        mrt_value *vals = calloc((size_t)n + 1, sizeof *vals);
        for (int i = 0; i < n; i++) {
            names[i] = mrt_model_input_name(m, i);
            vals[i].kind = MRT_VALUE_NONE;
            vals[i].is_optional = true;
        }
        (void)mrt_session_run(s, n, names, vals);
        free(names);
        free(vals);
    }
    mrt_session_free(s);
    mrt_model_free(m);
}

static void replay_tensor_proto(const char *path, const void *bytes, size_t len)
{
    mrt_tensor t;
    char *name = NULL;
    mrt_status st = mrt_tensor_proto_decode(bytes, len, &t, &name);
    if (st == MRT_STATUS_OK) mrt_tensor_release(&t);
    else cr_assert(strlen(mrt_last_error()) > 0, "%s: a failure must say why", path);
    free(name);
}

static void replay_npy(const char *path, const void *bytes, size_t len)
{
    mrt_tensor t;
    if (mrt_npy_decode(bytes, len, path, &t) == MRT_STATUS_OK) mrt_tensor_release(&t);
}

static void replay_npz(const char *path, const void *bytes, size_t len)
{
    (void)bytes;
    (void)len;
    int n;
    char **names;
    mrt_tensor *ts;
    mrt_status st = mrt_npz_read_file(path, &n, &names, &ts);
    cr_assert_neq(st, MRT_STATUS_OK, "%s is corrupt and must be refused", path);
    cr_assert(strstr(mrt_last_error(), path), "the message names the file: %s", mrt_last_error());
}

Test(fuzz_regressions, replay_every_saved_input, .timeout = 120)
{
    setenv("MRT_MAX_LOOP_ITERATIONS", "1000", 1);
    int n = replay_dir(REG "model", replay_model);
    n += replay_dir(REG "tensor_proto", replay_tensor_proto);
    n += replay_dir(REG "npy", replay_npy);
    n += replay_dir(REG "npz", replay_npz);
    cr_assert_geq(n, 3);
}
