/* .npy / .npz reading and writing: round trips for every dtype, NumPy-written fixtures (Fortran order,
 * big-endian, format 2.0/3.0, unicode, STORED and DEFLATE .npz), and malformed files -> a clear status. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/status.h"
#include "harness.h"
#include "loader/inflate.h"
#include "loader/npy.h"

#define FIXTURE(name) MRT_SOURCE_DIR "/tests/data/loader/" name

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/mrt_npy_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(npy, .init = make_tmpdir, .fini = remove_tmpdir);

static const char *tmp_path(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void assert_same_tensor(const mrt_tensor *a, const mrt_tensor *b)
{
    cr_assert_eq(a->dtype, b->dtype, "dtype %s vs %s", mrt_dtype_name(a->dtype), mrt_dtype_name(b->dtype));
    cr_assert_eq(a->rank, b->rank);
    for (int i = 0; i < a->rank; i++) cr_assert_eq(a->shape[i], b->shape[i]);
    if (a->dtype == MRT_DTYPE_STRING) {
        char **x = a->data, **y = b->data;
        for (int64_t i = 0; i < mrt_tensor_numel(a); i++) cr_assert_str_eq(x[i], y[i]);
    } else {
        cr_assert_eq(memcmp(a->data, b->data, mrt_tensor_nbytes(a)), 0, "data differs for %s",
                     mrt_dtype_name(a->dtype));
    }
}

/* Random bytes for any fixed-size dtype (bools kept 0/1, floats may be any bit pattern). */
static mrt_tensor random_tensor(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape)
{
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, dt, rank, shape), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t n = mrt_tensor_numel(&t);
    if (dt == MRT_DTYPE_STRING) {
        static const char *const words[] = {"", "a", "hello", "h\xc3\xa9llo", "\xe2\x98\x83 snow", "x y z"};
        char **s = t.data;
        for (int64_t i = 0; i < n; i++) s[i] = strdup(words[th_rng_int(r, 0, 5)]);
        return t;
    }
    uint8_t *d = t.data;
    for (size_t i = 0; i < mrt_tensor_nbytes(&t); i++) d[i] = (uint8_t)th_rng_int(r, 0, 255);
    if (dt == MRT_DTYPE_BOOL)
        for (int64_t i = 0; i < n; i++) d[i] &= 1;
    return t;
}

Test(npy, round_trip_every_dtype_and_shape)
{
    th_rng r;
    th_rng_init(&r, th_seed("npy.round_trip"));
    static const mrt_dtype dts[] = {MRT_DTYPE_BOOL,  MRT_DTYPE_INT8,    MRT_DTYPE_UINT8,     MRT_DTYPE_INT16,
                                    MRT_DTYPE_UINT16, MRT_DTYPE_INT32,  MRT_DTYPE_UINT32,    MRT_DTYPE_INT64,
                                    MRT_DTYPE_UINT64, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT,    MRT_DTYPE_DOUBLE,
                                    MRT_DTYPE_COMPLEX64, MRT_DTYPE_COMPLEX128, MRT_DTYPE_STRING};
    static const struct { int rank; int64_t shape[4]; } shapes[] = {
        {0, {0}}, {1, {7}}, {2, {2, 3}}, {2, {0, 3}}, {4, {2, 1, 3, 2}}, {1, {0}}};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            mrt_tensor t = random_tensor(&r, dts[d], shapes[s].rank, shapes[s].shape), back;
            const char *p = tmp_path("rt.npy");
            cr_assert_eq(mrt_npy_write_file(p, &t), MRT_STATUS_OK, "%s", mrt_last_error());
            cr_assert_eq(mrt_npy_read_file(p, &back), MRT_STATUS_OK, "%s: %s", mrt_dtype_name(dts[d]),
                         mrt_last_error());
            assert_same_tensor(&back, &t);
            mrt_tensor_release(&t);
            mrt_tensor_release(&back);
        }
    }
}

Test(npy, written_header_is_numpy_style)
{
    int64_t shape[1] = {3};
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, MRT_DTYPE_FLOAT, 1, shape), MRT_STATUS_OK);
    void *b;
    size_t n;
    cr_assert_eq(mrt_npy_encode(&t, &b, &n), MRT_STATUS_OK);
    const uint8_t *u = b;
    cr_assert_eq(memcmp(u, "\x93NUMPY\x01\x00", 8), 0);
    size_t hlen = (size_t)(u[8] | u[9] << 8);
    cr_assert_eq((10 + hlen) % 64, 0, "header not 64-byte aligned");
    cr_assert_eq(u[10 + hlen - 1], '\n');
    cr_assert(strstr((const char *)u + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") != NULL);
    cr_assert_eq(n, 10 + hlen + 12);
    free(b);
    mrt_tensor_release(&t);
}

Test(npy, unsupported_dtypes_are_refused_on_write)
{
    int64_t shape[1] = {4};
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, MRT_DTYPE_BFLOAT16, 1, shape), MRT_STATUS_OK);
    cr_assert_eq(mrt_npy_write_file(tmp_path("bf16.npy"), &t), MRT_STATUS_NOT_IMPLEMENTED);
    cr_assert(strstr(mrt_last_error(), "bfloat16") != NULL, "%s", mrt_last_error());
    mrt_tensor_release(&t);
    cr_assert_eq(access(tmp_path("bf16.npy"), F_OK), -1, "no file should be left behind");
}

/* ------------------------------------------------------------------ NumPy-written fixtures */

static mrt_tensor read_fixture(const char *path)
{
    mrt_tensor t;
    cr_assert_eq(mrt_npy_read_file(path, &t), MRT_STATUS_OK, "%s", mrt_last_error());
    return t;
}

Test(npy, numpy_fixtures)
{
    mrt_tensor t = read_fixture(FIXTURE("f32_2x3.npy"));
    cr_assert_eq(t.dtype, MRT_DTYPE_FLOAT);
    cr_assert(t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 3);
    for (int i = 0; i < 6; i++) cr_assert_eq(((float *)t.data)[i], (float)i);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("i32_fortran_2x3.npy")); /* transposed back to C order */
    cr_assert_eq(t.dtype, MRT_DTYPE_INT32);
    for (int i = 0; i < 6; i++) cr_assert_eq(((int32_t *)t.data)[i], i);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("i64_fortran_2x3x4.npy"));
    cr_assert(t.rank == 3 && t.shape[2] == 4);
    for (int i = 0; i < 24; i++) cr_assert_eq(((int64_t *)t.data)[i], i);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("f64_be.npy")); /* big-endian, byte-swapped */
    cr_assert_eq(t.dtype, MRT_DTYPE_DOUBLE);
    for (int i = 0; i < 4; i++) cr_assert_eq(((double *)t.data)[i], (double)i);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("i16_v2.npy")); /* format 2.0 */
    cr_assert_eq(t.dtype, MRT_DTYPE_INT16);
    for (int i = 0; i < 6; i++) cr_assert_eq(((int16_t *)t.data)[i], i - 3);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("str_v3.npy")); /* format 3.0, '<U5' -> UTF-8 */
    cr_assert_eq(t.dtype, MRT_DTYPE_STRING);
    cr_assert_eq(t.shape[0], 4);
    char **s = t.data;
    cr_assert_str_eq(s[0], "a");
    cr_assert_str_eq(s[1], "h\xc3\xa9llo");
    cr_assert_str_eq(s[2], "");
    cr_assert_str_eq(s[3], "\xe2\x98\x83x");
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("bool_0d.npy"));
    cr_assert(t.dtype == MRT_DTYPE_BOOL && t.rank == 0 && ((uint8_t *)t.data)[0] == 1);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("f16.npy"));
    cr_assert_eq(t.dtype, MRT_DTYPE_FLOAT16);
    const uint16_t f16[4] = {0x3e00, 0xc000, 0x7bff, 0x0000};
    cr_assert_eq(memcmp(t.data, f16, 8), 0);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("empty_0x3.npy"));
    cr_assert(t.rank == 2 && t.shape[0] == 0 && t.shape[1] == 3 && mrt_tensor_numel(&t) == 0);
    mrt_tensor_release(&t);

    t = read_fixture(FIXTURE("c64.npy"));
    cr_assert_eq(t.dtype, MRT_DTYPE_COMPLEX64);
    const float c[4] = {1, 2, -3.5f, 0.25f};
    cr_assert_eq(memcmp(t.data, c, 16), 0);
    mrt_tensor_release(&t);
}

/* ------------------------------------------------------------------ malformed .npy */

/* Build "\x93NUMPY" v1.0 + header dict (padded) + data bytes. */
static size_t make_npy(uint8_t *buf, const char *dict, const void *data, size_t data_len)
{
    size_t dl = strlen(dict), hlen = dl + 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)hlen;
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, dict, dl);
    buf[10 + dl] = '\n';
    if (data_len) memcpy(buf + 10 + hlen, data, data_len);
    return 10 + hlen + data_len;
}

static void expect_npy_fail(const char *dict, size_t data_len, mrt_status want, const char *needle)
{
    uint8_t buf[4096], data[256] = {0};
    size_t n = make_npy(buf, dict, data, data_len);
    mrt_tensor t;
    mrt_status st = mrt_npy_decode(buf, n, "case", &t);
    cr_assert_eq(st, want, "%s: got status %s (%s)", dict, mrt_status_name(st), mrt_last_error());
    cr_assert(strstr(mrt_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", dict, mrt_last_error(), needle);
    cr_assert_null(t.data);
}

Test(npy, valid_hand_made_header)
{
    uint8_t buf[256], data[24] = {0};
    size_t n = make_npy(buf, "{\"descr\":\"<i4\",\"shape\":(2,3),\"fortran_order\":False}", data, 24);
    mrt_tensor t;
    cr_assert_eq(mrt_npy_decode(buf, n, "case", &t), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert(t.rank == 2 && t.shape[1] == 3 && t.dtype == MRT_DTYPE_INT32);
    mrt_tensor_release(&t);
}

Test(npy, malformed_headers_give_clear_errors)
{
    const mrt_status BAD = MRT_STATUS_INVALID_ARG, NI = MRT_STATUS_NOT_IMPLEMENTED;
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", 8, BAD, "malformed");
    expect_npy_fail("'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, BAD, "expected '{'");
    expect_npy_fail("{'descr': '<f4', 'shape': (2,), }", 8, BAD, "required");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, BAD, "unknown key");
    expect_npy_fail("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, BAD, "duplicate");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8, BAD, "True or False");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8, BAD, "not a tuple");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8, BAD, "not a tuple");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8, BAD, "non-integer");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}", 8, BAD, "expected ','");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", 8, BAD, "trailing");
    expect_npy_fail("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", 8, BAD, "expected ',' or '}'");
    expect_npy_fail("{'descr': '<f3', 'fortran_order': False, 'shape': (2,)}", 8, NI, "'<f3' is not supported");
    expect_npy_fail("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", 8, NI, "not supported");
    expect_npy_fail("{'descr': '<V8', 'fortran_order': False, 'shape': (2,)}", 8, NI, "not supported");
    expect_npy_fail("{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", 8, BAD, "byte order");
    expect_npy_fail("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8, BAD, "quoted string");
    /* shapes whose element count or byte size overflows */
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0, BAD, "overflow");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 0, BAD, "2^63");
    expect_npy_fail("{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807,)}", 0, BAD, "too large");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 4, NI,
                    "dimensions");
    /* data size vs header */
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 8, BAD, "truncated");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 8, BAD, "trailing bytes");
    expect_npy_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}", 1, BAD, "trailing bytes");
}

Test(npy, malformed_preambles)
{
    mrt_tensor t;
    uint8_t buf[128];
    cr_assert_eq(mrt_npy_decode("\x93NUM", 4, "short", &t), MRT_STATUS_INVALID_ARG);
    cr_assert_eq(mrt_npy_decode("PK\x03\x04 not npy at all", 20, "zip", &t), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "magic") != NULL);
    size_t n = make_npy(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "\0\0\0\0", 4);
    buf[6] = 4; /* version 4.0 */
    cr_assert_eq(mrt_npy_decode(buf, n, "v4", &t), MRT_STATUS_NOT_IMPLEMENTED);
    buf[6] = 1;
    buf[8] = 0xff; /* header length past the end */
    cr_assert_eq(mrt_npy_decode(buf, n, "hlen", &t), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "truncated") != NULL, "%s", mrt_last_error());
    /* every truncation of a valid file fails cleanly */
    buf[8] = (uint8_t)(n - 14);
    for (size_t k = 0; k < n; k++) {
        cr_assert_neq(mrt_npy_decode(buf, k, "prefix", &t), MRT_STATUS_OK, "prefix of %zu bytes accepted", k);
        cr_assert_null(t.data);
    }
    cr_assert_eq(mrt_npy_decode(buf, n, "full", &t), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor_release(&t);
    /* a bool byte other than 0/1 */
    n = make_npy(buf, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}", "\1\2", 2);
    cr_assert_eq(mrt_npy_decode(buf, n, "bool", &t), MRT_STATUS_INVALID_ARG);
    /* an invalid code point in a unicode array */
    n = make_npy(buf, "{'descr': '<U1', 'fortran_order': False, 'shape': (1,)}", "\0\xd8\0\0", 4);
    cr_assert_eq(mrt_npy_decode(buf, n, "ucs4", &t), MRT_STATUS_INVALID_ARG);
    cr_assert_eq(mrt_npy_read_file(tmp_path("does-not-exist.npy"), &t), MRT_STATUS_IO_ERROR);
}

Test(npy, random_garbage_never_crashes)
{
    th_rng r;
    th_rng_init(&r, th_seed("npy.garbage"));
    uint8_t buf[512];
    size_t base = make_npy(buf, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", "abcdefghijkl", 12);
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t m[512];
        memcpy(m, buf, base);
        int flips = (int)th_rng_int(&r, 1, 4);
        for (int k = 0; k < flips; k++) m[th_rng_int(&r, 0, (int64_t)base - 1)] = (uint8_t)th_rng_int(&r, 0, 255);
        mrt_tensor t;
        if (mrt_npy_decode(m, (size_t)th_rng_int(&r, 0, (int64_t)base), "garbage", &t) == MRT_STATUS_OK)
            mrt_tensor_release(&t);
        else
            cr_assert_neq(mrt_last_error()[0], '\0');
    }
}

/* ------------------------------------------------------------------ .npz */

static void free_npz(int n, char **names, mrt_tensor *ts)
{
    for (int i = 0; i < n; i++) {
        free(names[i]);
        mrt_tensor_release(&ts[i]);
    }
    free(names);
    free(ts);
}

static int find_name(int n, char **names, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], want) == 0) return i;
    cr_assert_fail("array '%s' missing", want);
    return -1;
}

Test(npy, npz_round_trip)
{
    th_rng r;
    th_rng_init(&r, th_seed("npy.npz_round_trip"));
    int64_t s1[2] = {3, 4}, s2[1] = {5}, s3[1] = {0};
    mrt_tensor ts[4] = {random_tensor(&r, MRT_DTYPE_FLOAT, 2, s1), random_tensor(&r, MRT_DTYPE_INT64, 1, s2),
                        random_tensor(&r, MRT_DTYPE_STRING, 1, s2), random_tensor(&r, MRT_DTYPE_UINT8, 1, s3)};
    const char *names[4] = {"x", "indices", "labels", "caf\xc3\xa9"};
    const char *p = tmp_path("rt.npz");
    cr_assert_eq(mrt_npz_write_file(p, 4, names, ts), MRT_STATUS_OK, "%s", mrt_last_error());
    int n;
    char **got_names;
    mrt_tensor *got;
    cr_assert_eq(mrt_npz_read_file(p, &n, &got_names, &got), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(n, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(got_names[i], names[i]);
        assert_same_tensor(&got[i], &ts[i]);
        mrt_tensor_release(&ts[i]);
    }
    free_npz(n, got_names, got);
    /* an empty archive */
    cr_assert_eq(mrt_npz_write_file(p, 0, NULL, NULL), MRT_STATUS_OK);
    cr_assert_eq(mrt_npz_read_file(p, &n, &got_names, &got), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(n, 0);
    free_npz(n, got_names, got);
}

static void check_fixture_npz(const char *path)
{
    int n;
    char **names;
    mrt_tensor *ts;
    cr_assert_eq(mrt_npz_read_file(path, &n, &names, &ts), MRT_STATUS_OK, "%s: %s", path, mrt_last_error());
    cr_assert_eq(n, 4);
    const mrt_tensor *a = &ts[find_name(n, names, "a")];
    cr_assert(a->dtype == MRT_DTYPE_INT64 && a->rank == 1 && a->shape[0] == 1000);
    for (int i = 0; i < 1000; i++) cr_assert_eq(((int64_t *)a->data)[i], i);
    const mrt_tensor *rep = &ts[find_name(n, names, "rep")];
    cr_assert(rep->dtype == MRT_DTYPE_UINT8 && rep->shape[0] == 7 * 1500);
    for (int i = 0; i < 7 * 1500; i++) cr_assert_eq(((uint8_t *)rep->data)[i], i % 7);
    const mrt_tensor *s = &ts[find_name(n, names, "s")];
    cr_assert_str_eq(((char **)s->data)[1], "beta");
    /* b: float32 sin values, compared across the archives below */
    free_npz(n, names, ts);
}

Test(npy, npz_fixtures_stored_and_deflated)
{
    check_fixture_npz(FIXTURE("stored.npz"));
    check_fixture_npz(FIXTURE("deflate.npz"));
    check_fixture_npz(FIXTURE("deflate_levels.npz"));
    int n1, n2;
    char **a1, **a2;
    mrt_tensor *t1, *t2;
    cr_assert_eq(mrt_npz_read_file(FIXTURE("stored.npz"), &n1, &a1, &t1), MRT_STATUS_OK);
    cr_assert_eq(mrt_npz_read_file(FIXTURE("deflate.npz"), &n2, &a2, &t2), MRT_STATUS_OK);
    for (int i = 0; i < n1; i++) assert_same_tensor(&t1[i], &t2[find_name(n2, a2, a1[i])]);
    free_npz(n1, a1, t1);
    free_npz(n2, a2, t2);
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*len);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

Test(npy, npz_corruption_is_detected)
{
    size_t len;
    uint8_t *orig = read_all(FIXTURE("deflate.npz"), &len);
    int n;
    char **names;
    mrt_tensor *ts;
    const char *p = tmp_path("bad.npz");
    /* a flipped byte inside the first entry's compressed data: CRC or DEFLATE error */
    uint8_t *b = malloc(len);
    memcpy(b, orig, len);
    b[60] ^= 0x55;
    write_bytes(p, b, len);
    cr_assert_eq(mrt_npz_read_file(p, &n, &names, &ts), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "malformed .npz") != NULL, "%s", mrt_last_error());
    cr_assert(n == 0 && names == NULL && ts == NULL);
    /* truncations: no end record, or entries past the end */
    size_t cuts[] = {0, 10, 21, len / 2, len - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        write_bytes(p, orig, cuts[k]);
        cr_assert_neq(mrt_npz_read_file(p, &n, &names, &ts), MRT_STATUS_OK, "cut at %zu accepted", cuts[k]);
    }
    /* random damage anywhere never crashes */
    th_rng r;
    th_rng_init(&r, th_seed("npy.npz_corruption"));
    for (int iter = 0; iter < 300; iter++) {
        memcpy(b, orig, len);
        for (int k = 0; k < 3; k++) b[th_rng_int(&r, 0, (int64_t)len - 1)] ^= (uint8_t)th_rng_int(&r, 1, 255);
        write_bytes(p, b, len);
        if (mrt_npz_read_file(p, &n, &names, &ts) == MRT_STATUS_OK) free_npz(n, names, ts);
    }
    free(b);
    free(orig);
}

Test(npy, npz_non_npy_entry_and_missing_file)
{
    /* A stored zip whose one entry is "notes.txt" */
    static const uint8_t zip[] = {
        'P', 'K', 3, 4, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0,
        'n', 'o', 't', 'e', 's', '.', 't', 'x', 't',
        'P', 'K', 1, 2, 20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'n', 'o', 't', 'e', 's', '.', 't', 'x', 't',
        'P', 'K', 5, 6, 0, 0, 0, 0, 1, 0, 1, 0, 55, 0, 0, 0, 39, 0, 0, 0, 0, 0};
    const char *p = tmp_path("notes.npz");
    write_bytes(p, zip, sizeof zip);
    int n;
    char **names;
    mrt_tensor *ts;
    cr_assert_eq(mrt_npz_read_file(p, &n, &names, &ts), MRT_STATUS_NOT_IMPLEMENTED, "%s", mrt_last_error());
    cr_assert(strstr(mrt_last_error(), "notes.txt") != NULL, "%s", mrt_last_error());
    cr_assert_eq(mrt_npz_read_file(tmp_path("nope.npz"), &n, &names, &ts), MRT_STATUS_IO_ERROR);
}

/* ------------------------------------------------------------------ inflate */

Test(npy, inflate_hand_made_streams)
{
    uint8_t out[64];
    size_t n;
    /* one final stored block holding "abc" */
    static const uint8_t stored[] = {0x01, 0x03, 0x00, 0xfc, 0xff, 'a', 'b', 'c'};
    cr_assert_eq(mrt_inflate(stored, sizeof stored, out, sizeof out, &n), 0);
    cr_assert(n == 3 && memcmp(out, "abc", 3) == 0);
    /* fixed Huffman "a" repeated: zlib output for "aaaaaaaaaa": literals, then a match with distance 1 */
    static const uint8_t fixed[] = {0x4b, 0x4c, 0x84, 0x01, 0x00};
    cr_assert_eq(mrt_inflate(fixed, sizeof fixed, out, sizeof out, &n), 0);
    cr_assert(n == 10 && memcmp(out, "aaaaaaaaaa", 10) == 0, "n=%zu", n);
    /* output limit, bad block type, LEN/NLEN mismatch, truncation */
    cr_assert_eq(mrt_inflate(fixed, sizeof fixed, out, 5, &n), -2);
    static const uint8_t bad_type[] = {0x07};
    cr_assert_eq(mrt_inflate(bad_type, 1, out, sizeof out, &n), -1);
    static const uint8_t bad_len[] = {0x01, 0x03, 0x00, 0xfc, 0xfe, 'a', 'b', 'c'};
    cr_assert_eq(mrt_inflate(bad_len, sizeof bad_len, out, sizeof out, &n), -1);
    for (size_t k = 0; k < sizeof fixed - 1; k++) cr_assert_eq(mrt_inflate(fixed, k, out, sizeof out, &n), -1);
    /* a distance reaching before the start of the output: literal-free match */
    static const uint8_t far[] = {0x03, 0x02, 0x00};
    cr_assert_neq(mrt_inflate(far, sizeof far, out, sizeof out, &n), 0);
}
