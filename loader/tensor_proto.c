/* TensorProto <-> mrt_tensor (all 26 ONNX data types, raw/typed/external data, sparse), and the readers
 * for ONNX test data: TensorProto, SequenceProto and OptionalProto .pb files. onnx.proto 1.12 (the schema
 * compiled here) has no SequenceProto/OptionalProto, so those two are decoded from the wire format. */
#include "loader/tensor_proto.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/status.h"
#include "engine/weights.h"
#include "loader/wire.h"
#include "onnx.pb-c.h"

/* ------------------------------------------------------------------ small helpers */

static bool host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Byte width of the unit to swap for raw little-endian data (1 = nothing to swap). */
static size_t swap_unit(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_COMPLEX64: return 4;
    case MRT_DTYPE_COMPLEX128: return 8;
    case MRT_DTYPE_STRING: return 1;
    default: {
        int bits = mrt_dtype_bits(dt);
        return bits >= 16 ? (size_t)bits / 8 : 1;
    }
    }
}

static void swap_in_place(void *data, size_t nbytes, size_t unit)
{
    if (unit <= 1) return;
    uint8_t *p = data;
    for (size_t i = 0; i + unit <= nbytes; i += unit)
        for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

static mrt_status oom(const char *what) { return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (%s)", what); }

static const char *shape_str(int rank, const int64_t *dims, char *buf, size_t len)
{
    return mrt_shape_describe(rank, dims, buf, len);
}

/* malloc'd folder part of a path ("." when there is none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

mrt_status mrt_read_whole_file(const char *path, void **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return mrt_fail(MRT_STATUS_IO_ERROR, "'%s' is not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX / 2) {
        fclose(f);
        return mrt_fail(MRT_STATUS_IO_ERROR, "'%s' is too large (%lld bytes)", path, (long long)sb.st_size);
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(f);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path, n);
    }
    size_t got = n ? fread(buf, 1, n, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (got != n || err) {
        free(buf);
        return mrt_fail(MRT_STATUS_IO_ERROR, "reading '%s' failed after %zu of %zu bytes", path, got, n);
    }
    *bytes = buf;
    *len = n;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ external data */

static mrt_status parse_u64(const char *s, const char *key, const char *what, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data '%s' is empty", what, key);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data '%s' is '%s', not a decimal integer", what,
                            key, s);
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data '%s' (%s) overflows", what, key, s);
        v = v * 10 + d;
    }
    *out = v;
    return MRT_STATUS_OK;
}

/* A location is accepted only if it is relative, has no ".." component and (symlinks resolved) stays
   inside base_dir: a model must not be able to make the loader read arbitrary files. */
static mrt_status external_path(const char *base_dir, const char *location, const char *what, char **real_out)
{
    *real_out = NULL;
    if (location[0] == '/')
        return mrt_fail(MRT_STATUS_INVALID_MODEL,
                        "%s: external data location '%s' is an absolute path; only files inside the model's "
                        "folder may be referenced", what, location);
    for (const char *p = location; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return mrt_fail(MRT_STATUS_INVALID_MODEL,
                            "%s: external data location '%s' contains a '..' component; only files inside the "
                            "model's folder may be referenced", what, location);
        p += n;
        while (*p == '/') p++;
    }
    size_t len = strlen(base_dir) + strlen(location) + 2;
    char *joined = malloc(len);
    if (!joined) return oom("external data path");
    snprintf(joined, len, "%s/%s", base_dir, location);
    char *base_real = realpath(base_dir, NULL);
    if (!base_real) {
        mrt_status st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: model folder '%s' cannot be resolved: %s", what,
                                 base_dir, strerror(errno));
        free(joined);
        return st;
    }
    char *file_real = realpath(joined, NULL);
    if (!file_real) {
        mrt_status st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: cannot open external data file '%s': %s", what, joined,
                                 strerror(errno));
        free(joined);
        free(base_real);
        return st;
    }
    size_t bl = strlen(base_real);
    bool inside = strncmp(file_real, base_real, bl) == 0 &&
                  (file_real[bl] == '/' || (bl == 1 && base_real[0] == '/' && file_real[1] != '\0'));
    if (!inside) {
        mrt_status st = mrt_fail(MRT_STATUS_INVALID_MODEL,
                                 "%s: external data location '%s' resolves to '%s', outside the model's folder '%s'",
                                 what, location, file_real, base_real);
        free(joined);
        free(base_real);
        free(file_real);
        return st;
    }
    free(joined);
    free(base_real);
    *real_out = file_real;
    return MRT_STATUS_OK;
}

/* Read the external data into dst, or, with `maps`, map its file (once per model) and point *mapped at it. */
static mrt_status read_external(const Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                const mrt_tensor *t, size_t nbytes, void *dst, mrt_mapping **maps,
                                const uint8_t **mapped)
{
    const char *location = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e || !e->key) continue;
        if (strcmp(e->key, "location") == 0) location = e->value;
        else if (strcmp(e->key, "offset") == 0) off_s = e->value;
        else if (strcmp(e->key, "length") == 0) len_s = e->value;
    }
    if (!location || !location[0])
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data has no 'location'", what);
    if (!base_dir)
        return mrt_fail(MRT_STATUS_INVALID_ARG,
                        "%s: data is in external file '%s' but no folder to read it from was given (model loaded "
                        "from memory without base_dir)", what, location);
    uint64_t offset = 0, length = 0;
    if (off_s) MRT_TRY(parse_u64(off_s, "offset", what, &offset));
    if (len_s) MRT_TRY(parse_u64(len_s, "length", what, &length));
    char *path;
    MRT_TRY(external_path(base_dir, location, what, &path));
    mrt_status st = MRT_STATUS_OK;
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f) {
        st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: cannot open external data file '%s': %s", what, path,
                      strerror(errno));
        goto done;
    }
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: external data '%s' is not a regular file", what, path);
        goto done;
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (offset > size) {
        st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data offset %llu is beyond the end of '%s' (%llu bytes)",
                      what, (unsigned long long)offset, location, (unsigned long long)size);
        goto done;
    }
    if (!len_s) length = size - offset;
    if (length > size - offset) {
        st = mrt_fail(MRT_STATUS_INVALID_MODEL,
                      "%s: external data offset %llu + length %llu is beyond the end of '%s' (%llu bytes)", what,
                      (unsigned long long)offset, (unsigned long long)length, location, (unsigned long long)size);
        goto done;
    }
    if (length != (uint64_t)nbytes) {
        char sh[256];
        st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: external data has %llu bytes, shape %s of %s needs %zu", what,
                      (unsigned long long)length, shape_str(t->rank, t->shape, sh, sizeof sh),
                      mrt_dtype_name(t->dtype), nbytes);
        goto done;
    }
    if (maps) { /* the file checked above is the one mapped: same resolved path */
        const uint8_t *base;
        size_t mlen;
        st = mrt_mapping_open(path, maps, &base, &mlen);
        if (!st && (mlen < offset || mlen - offset < nbytes))
            st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: external data file '%s' changed while it was read", what, path);
        if (!st) *mapped = base + offset;
        if (st) mrt_fail_prefix(st, "%s: ", what);
        goto done;
    }
    if (nbytes && (fseeko(f, (off_t)offset, SEEK_SET) != 0 || fread(dst, 1, nbytes, f) != nbytes)) {
        st = mrt_fail(MRT_STATUS_IO_ERROR, "%s: reading %zu bytes at offset %llu of '%s' failed", what, nbytes,
                      (unsigned long long)offset, path);
        goto done;
    }
done:
    if (f) fclose(f);
    free(path);
    return st;
}

/* ------------------------------------------------------------------ TensorProto -> mrt_tensor */

/* The typed field that carries `dt` when raw_data is not used. */
static const char *typed_field_for(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_COMPLEX64: return "float_data";
    case MRT_DTYPE_DOUBLE: case MRT_DTYPE_COMPLEX128: return "double_data";
    case MRT_DTYPE_INT64: return "int64_data";
    case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: return "uint64_data";
    case MRT_DTYPE_STRING: return "string_data";
    default: return "int32_data";
    }
}

static mrt_status fill_from_typed(const Onnx__TensorProto *tp, const char *field, size_t count, const char *what,
                                  mrt_tensor *t, size_t nbytes)
{
    mrt_dtype dt = t->dtype;
    int64_t numel = mrt_tensor_numel(t);
    /* entries the field must hold: complex = 2 per element; int32_data packs sub-byte types one byte per entry */
    uint64_t need = (uint64_t)numel;
    if (dt == MRT_DTYPE_COMPLEX64 || dt == MRT_DTYPE_COMPLEX128) need *= 2;
    else if (strcmp(field, "int32_data") == 0 && mrt_dtype_bits(dt) < 8) need = nbytes;
    if ((uint64_t)count != need) {
        char sh[256];
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: %s has %zu values, shape %s of %s needs %llu", what, field,
                        count, shape_str(t->rank, t->shape, sh, sizeof sh), mrt_dtype_name(dt),
                        (unsigned long long)need);
    }
    if (count == 0) return MRT_STATUS_OK;
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_COMPLEX64: memcpy(t->data, tp->float_data, count * sizeof(float)); break;
    case MRT_DTYPE_DOUBLE: case MRT_DTYPE_COMPLEX128: memcpy(t->data, tp->double_data, count * sizeof(double)); break;
    case MRT_DTYPE_INT64: memcpy(t->data, tp->int64_data, count * sizeof(int64_t)); break;
    case MRT_DTYPE_UINT64: memcpy(t->data, tp->uint64_data, count * sizeof(uint64_t)); break;
    case MRT_DTYPE_UINT32: {
        uint32_t *d = t->data;
        for (size_t i = 0; i < count; i++) {
            if (tp->uint64_data[i] > UINT32_MAX)
                return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: uint64_data[%zu] = %llu does not fit uint32", what, i,
                                (unsigned long long)tp->uint64_data[i]);
            d[i] = (uint32_t)tp->uint64_data[i];
        }
        break;
    }
    case MRT_DTYPE_STRING: {
        char **d = t->data;
        for (size_t i = 0; i < count; i++) {
            const ProtobufCBinaryData *s = &tp->string_data[i];
            d[i] = malloc(s->len + 1);
            if (!d[i]) return oom("string tensor");
            if (s->len) memcpy(d[i], s->data, s->len);
            d[i][s->len] = '\0';
        }
        break;
    }
    case MRT_DTYPE_INT32: memcpy(t->data, tp->int32_data, count * sizeof(int32_t)); break;
    case MRT_DTYPE_BOOL: {
        uint8_t *d = t->data;
        for (size_t i = 0; i < count; i++) d[i] = tp->int32_data[i] != 0;
        break;
    }
    default: {
        /* int32_data carries the value or bit pattern in its low bits: one 8/16-bit element, or one packed byte */
        int bits = mrt_dtype_bits(dt);
        if (bits == 16) {
            uint16_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = (uint16_t)(uint32_t)tp->int32_data[i];
        } else {
            uint8_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = (uint8_t)(uint32_t)tp->int32_data[i];
        }
        break;
    }
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                 mrt_tensor *out)
{
    return mrt_tensor_from_proto_ex(tp, base_dir, what, NULL, out);
}

/* Point `out` at `nbytes` persistent (mapped) bytes when they are usable in place, else at an aligned copy of them;
   ld->weight says which. The file pages a copy was made from leave the resident set (mrt_weight_copy). */
static mrt_status borrow_or_copy(mrt_dtype dt, int rank, const int64_t *dims, const uint8_t *bytes, size_t nbytes,
                                 const char *what, mrt_tensor_load *ld, mrt_tensor *out)
{
    bool in_place = mrt_weight_in_place_ok(dt) && (uintptr_t)bytes % mrt_weight_align(dt) == 0;
    if (!in_place) MRT_TRY(mrt_check_alloc(nbytes, what));
    mrt_weight_src *w = calloc(1, sizeof *w);
    if (!w) return oom("initializer");
    void *data = in_place ? (void *)(uintptr_t)bytes : mrt_weight_copy(dt, bytes, nbytes);
    if (!data) {
        free(w);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "%s: out of memory copying %zu bytes", what, nbytes);
    }
    *w = (mrt_weight_src){in_place ? MRT_WEIGHT_MAPPED : MRT_WEIGHT_COPIED, bytes, nbytes, 0, false};
    out->dtype = dt;
    out->rank = rank;
    if (rank) memcpy(out->shape, dims, (size_t)rank * sizeof(int64_t));
    out->data = data;
    ld->weight = w;
    return MRT_STATUS_OK;
}

mrt_status mrt_tensor_from_proto_ex(const Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                    mrt_tensor_load *ld, mrt_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (ld) ld->weight = NULL;
    if (!tp) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: missing tensor", what);
    int dti = tp->has_data_type ? tp->data_type : 0;
    if (dti == 0) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: data type is undefined", what);
    if (!mrt_dtype_is_known(dti))
        return mrt_fail(dti < 0 ? MRT_STATUS_INVALID_MODEL : MRT_STATUS_NOT_IMPLEMENTED,
                        "%s: data type %d is not supported (minirt knows ONNX data types 1-%d)", what, dti,
                        MRT_DTYPE_COUNT_ - 1);
    mrt_dtype dt = (mrt_dtype)dti;
    if (tp->segment) return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: segmented tensors are not supported", what);
    if (tp->n_dims > MRT_MAX_RANK)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: rank %zu exceeds minirt's maximum rank %d", what,
                        tp->n_dims, MRT_MAX_RANK);
    int rank = (int)tp->n_dims;
    for (int i = 0; i < rank; i++)
        if (tp->dims[i] < 0)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: dimension %d is negative (%lld)", what, i,
                            (long long)tp->dims[i]);
    size_t nbytes;
    if (mrt_shape_nbytes(dt, rank, tp->dims, &nbytes) != MRT_STATUS_OK)
        return mrt_fail_prefix(MRT_STATUS_INVALID_MODEL, "%s: ", what);
    int64_t numel;
    MRT_TRY(mrt_shape_numel(rank, tp->dims, &numel));

    /* exactly one data source */
    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (tp->has_data_location && !external && tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: unknown data_location %d", what, (int)tp->data_location);
    const char *sources[8];
    size_t counts[8];
    int n_src = 0;
#define MRT_SRC(cond, nm, cnt) \
    if (cond) { sources[n_src] = nm; counts[n_src] = cnt; n_src++; }
    MRT_SRC(external, "external data", 0);
    /* raw_data the loader located in the file bytes itself (and left out of the parsed proto), or the proto's */
    bool has_raw = ld && ld->has_raw ? true : tp->has_raw_data;
    const uint8_t *raw = ld && ld->has_raw ? ld->raw : tp->raw_data.data;
    size_t raw_len = ld && ld->has_raw ? ld->raw_len : tp->raw_data.len;
    if (ld && ld->has_raw && tp->has_raw_data)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: raw_data appears twice", what);
    MRT_SRC(has_raw, "raw_data", raw_len);
    MRT_SRC(tp->n_float_data, "float_data", tp->n_float_data);
    MRT_SRC(tp->n_int32_data, "int32_data", tp->n_int32_data);
    MRT_SRC(tp->n_string_data, "string_data", tp->n_string_data);
    MRT_SRC(tp->n_int64_data, "int64_data", tp->n_int64_data);
    MRT_SRC(tp->n_double_data, "double_data", tp->n_double_data);
    MRT_SRC(tp->n_uint64_data, "uint64_data", tp->n_uint64_data);
#undef MRT_SRC
    if (n_src > 1)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: data is stored in both %s and %s (only one is allowed)", what,
                        sources[0], sources[1]);
    char sh[256];
    if (n_src == 0 && numel != 0)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: has no data, shape %s of %s needs %lld elements", what,
                        shape_str(rank, tp->dims, sh, sizeof sh), mrt_dtype_name(dt), (long long)numel);
    const char *src = n_src ? sources[0] : NULL;
    if (src && dt == MRT_DTYPE_STRING && strcmp(src, "string_data") != 0)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: string tensors must use string_data, not %s", what, src);
    if (src && strcmp(src, "raw_data") == 0 && raw_len != nbytes)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: raw_data has %zu bytes, shape %s of %s needs %zu", what,
                        raw_len, shape_str(rank, tp->dims, sh, sizeof sh), mrt_dtype_name(dt), nbytes);
    bool typed = src && strcmp(src, "raw_data") != 0 && strcmp(src, "external data") != 0;
    if (typed && strcmp(src, typed_field_for(dt)) != 0)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: a %s tensor cannot be stored in %s (expected %s)", what,
                        mrt_dtype_name(dt), src, typed_field_for(dt));

    /* a typed field holds at most 4 elements per entry (int2/uint2 packing): refuse before allocating a
       shape the data can't fill */
    if (typed && numel > 0 && (uint64_t)numel > (uint64_t)counts[0] * 4)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: %s has %zu entries, shape %s of %s needs %lld elements", what,
                        src, counts[0], shape_str(rank, tp->dims, sh, sizeof sh), mrt_dtype_name(dt), (long long)numel);
    if (ld && src && !typed && nbytes) { /* bytes that outlive the model: borrowed, or copied once */
        const uint8_t *bytes = NULL;
        out->dtype = dt; /* for read_external's messages */
        out->rank = rank;
        if (rank) memcpy(out->shape, tp->dims, (size_t)rank * sizeof(int64_t));
        if (external) {
            if (!ld->maps)
                return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: external data cannot be mapped here", what);
            MRT_TRY(read_external(tp, base_dir, what, out, nbytes, NULL, ld->maps, &bytes));
        } else if (ld->persistent && ld->has_raw) {
            bytes = raw;
        }
        if (bytes) return borrow_or_copy(dt, rank, tp->dims, bytes, nbytes, what, ld, out);
    }
    MRT_TRY(mrt_tensor_alloc(out, dt, rank, tp->dims));
    mrt_status st = MRT_STATUS_OK;
    if (!src) {
        /* empty tensor: nothing to copy */
    } else if (typed) {
        st = fill_from_typed(tp, src, counts[0], what, out, nbytes);
    } else {
        if (external) st = read_external(tp, base_dir, what, out, nbytes, out->data, NULL, NULL);
        else if (nbytes) memcpy(out->data, raw, nbytes);
        if (!st && !host_is_le()) swap_in_place(out->data, nbytes, swap_unit(dt));
        if (!st && dt == MRT_DTYPE_BOOL) {
            uint8_t *d = out->data;
            for (size_t i = 0; i < nbytes; i++) d[i] = d[i] != 0;
        }
    }
    if (st) mrt_tensor_release(out);
    return st;
}

/* ------------------------------------------------------------------ sparse tensors */

mrt_status mrt_tensor_from_sparse_proto(const Onnx__SparseTensorProto *sp, const char *base_dir, const char *what,
                                        mrt_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (!sp->values) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sparse tensor has no values", what);
    if (sp->n_dims > MRT_MAX_RANK)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: rank %zu exceeds minirt's maximum rank %d", what,
                        sp->n_dims, MRT_MAX_RANK);
    int rank = (int)sp->n_dims;
    char sub[512];
    mrt_tensor vals, idx;
    memset(&idx, 0, sizeof idx);
    snprintf(sub, sizeof sub, "%s (sparse values)", what);
    MRT_TRY(mrt_tensor_from_proto(sp->values, base_dir, sub, &vals));
    mrt_status st = MRT_STATUS_OK;
    char sh[256];
    int64_t nnz = vals.rank == 1 ? vals.shape[0] : -1;
    if (nnz < 0) {
        st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sparse values have shape %s, expected [NNZ]", what,
                      shape_str(vals.rank, vals.shape, sh, sizeof sh));
        goto done;
    }
    if (mrt_dtype_bits(vals.dtype) < 8) {
        st = mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: sparse tensors of %s are not supported", what,
                      mrt_dtype_name(vals.dtype));
        goto done;
    }
    if (nnz > 0 && !sp->indices) {
        st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sparse tensor has %lld values but no indices", what,
                      (long long)nnz);
        goto done;
    }
    if (sp->indices) {
        snprintf(sub, sizeof sub, "%s (sparse indices)", what);
        if ((st = mrt_tensor_from_proto(sp->indices, base_dir, sub, &idx))) goto done;
        bool linear = idx.rank == 1 && idx.shape[0] == nnz;
        bool coords = idx.rank == 2 && idx.shape[0] == nnz && idx.shape[1] == rank;
        if (idx.dtype != MRT_DTYPE_INT64 || !(linear || coords)) {
            st = mrt_fail(MRT_STATUS_INVALID_MODEL,
                          "%s: sparse indices are %s%s, expected int64 [%lld] or [%lld,%d]", what,
                          mrt_dtype_name(idx.dtype), shape_str(idx.rank, idx.shape, sh, sizeof sh), (long long)nnz,
                          (long long)nnz, rank);
            goto done;
        }
    }
    for (int i = 0; i < rank; i++)
        if (sp->dims[i] < 0) {
            st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: dimension %d is negative", what, i);
            goto done;
        }
    if ((st = mrt_tensor_alloc(out, vals.dtype, rank, sp->dims))) {
        mrt_fail_prefix(st, "%s: ", what);
        goto done;
    }
    int64_t numel = mrt_tensor_numel(out);
    size_t esz = (size_t)mrt_dtype_bits(vals.dtype) / 8;
    if (vals.dtype == MRT_DTYPE_STRING) {
        char **d = out->data;
        for (int64_t i = 0; i < numel; i++)
            if (!(d[i] = strdup(""))) {
                st = oom("sparse string tensor");
                goto done;
            }
    }
    const int64_t *ix = idx.data;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t lin = 0;
        if (idx.rank == 1) {
            lin = ix[k];
            if (lin < 0 || lin >= numel) {
                st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sparse index %lld is outside [0, %lld)", what,
                              (long long)lin, (long long)numel);
                goto done;
            }
        } else {
            for (int d = 0; d < rank; d++) {
                int64_t c = ix[k * rank + d];
                if (c < 0 || c >= out->shape[d]) {
                    st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sparse coordinate %lld of value %lld is outside [0, %lld)",
                                  what, (long long)c, (long long)k, (long long)out->shape[d]);
                    goto done;
                }
                lin = lin * out->shape[d] + c;
            }
        }
        if (vals.dtype == MRT_DTYPE_STRING) {
            char **d = out->data, **s = vals.data;
            free(d[lin]);
            d[lin] = s[k];
            s[k] = NULL;
            if (!d[lin] && !(d[lin] = strdup(""))) {
                st = oom("sparse string tensor");
                goto done;
            }
        } else {
            memcpy((uint8_t *)out->data + (size_t)lin * esz, (uint8_t *)vals.data + (size_t)k * esz, esz);
        }
    }
done:
    if (st) mrt_tensor_release(out);
    mrt_tensor_release(&vals);
    mrt_tensor_release(&idx);
    return st;
}

/* ------------------------------------------------------------------ .pb files holding a TensorProto */

static mrt_status decode_tensor(const void *bytes, size_t len, const char *base_dir, const char *what,
                                mrt_tensor *out, char **name_out)
{
    memset(out, 0, sizeof *out);
    if (name_out) *name_out = NULL;
    if (!bytes && len) return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: NULL bytes", what);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, bytes);
    if (!tp) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: not a valid TensorProto (protobuf parse failed)", what);
    mrt_status st = mrt_tensor_from_proto(tp, base_dir, what, out);
    if (!st && name_out && !(*name_out = strdup(tp->name ? tp->name : ""))) {
        mrt_tensor_release(out);
        st = oom("tensor name");
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return st;
}

mrt_status mrt_tensor_proto_decode(const void *bytes, size_t len, mrt_tensor *out, char **name_out)
{
    return decode_tensor(bytes, len, NULL, "TensorProto", out, name_out);
}

mrt_status mrt_tensor_proto_read_file(const char *path, mrt_tensor *out, char **name_out)
{
    memset(out, 0, sizeof *out);
    if (name_out) *name_out = NULL;
    void *bytes;
    size_t len;
    MRT_TRY(mrt_read_whole_file(path, &bytes, &len));
    char *dir = dir_of(path);
    mrt_status st = dir ? decode_tensor(bytes, len, dir, path, out, name_out) : oom("path");
    free(dir);
    free(bytes);
    return st;
}

mrt_status mrt_tensor_proto_write_file(const char *path, const mrt_tensor *t, const char *name)
{
    if (!mrt_dtype_is_known((int)t->dtype))
        return mrt_fail(MRT_STATUS_INVALID_ARG, "writing '%s': unknown data type %d", path, (int)t->dtype);
    size_t nbytes;
    if (mrt_shape_nbytes(t->dtype, t->rank, t->shape, &nbytes))
        return mrt_fail_prefix(MRT_STATUS_INVALID_ARG, "writing '%s': ", path);
    if (nbytes && !t->data) return mrt_fail(MRT_STATUS_INVALID_ARG, "writing '%s': tensor has no data", path);
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[MRT_MAX_RANK];
    memcpy(dims, t->shape, sizeof dims);
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = (int32_t)t->dtype;
    char *nm = strdup(name ? name : "");
    ProtobufCBinaryData *strs = NULL;
    uint8_t *swapped = NULL, *buf = NULL;
    mrt_status st = MRT_STATUS_OK;
    if (!nm) {
        st = oom("tensor name");
        goto done;
    }
    if (name) tp.name = nm;
    if (t->dtype == MRT_DTYPE_STRING) {
        int64_t n = mrt_tensor_numel(t);
        strs = calloc((size_t)(n ? n : 1), sizeof *strs);
        if (!strs) {
            st = oom("string tensor");
            goto done;
        }
        char *const *s = t->data;
        for (int64_t i = 0; i < n; i++) {
            strs[i].data = (uint8_t *)(s[i] ? s[i] : "");
            strs[i].len = strlen((const char *)strs[i].data);
        }
        tp.n_string_data = (size_t)n;
        tp.string_data = strs;
    } else {
        tp.has_raw_data = 1;
        tp.raw_data.len = nbytes;
        tp.raw_data.data = t->data;
        if (!host_is_le() && nbytes) {
            if (!(swapped = malloc(nbytes))) {
                st = oom("byte swap");
                goto done;
            }
            memcpy(swapped, t->data, nbytes);
            swap_in_place(swapped, nbytes, swap_unit(t->dtype));
            tp.raw_data.data = swapped;
        }
    }
    size_t size = onnx__tensor_proto__get_packed_size(&tp);
    if (!(buf = malloc(size ? size : 1))) {
        st = oom("TensorProto");
        goto done;
    }
    onnx__tensor_proto__pack(&tp, buf);
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = mrt_fail(MRT_STATUS_IO_ERROR, "cannot create '%s': %s", path, strerror(errno));
        goto done;
    }
    bool ok = fwrite(buf, 1, size, f) == size;
    if (fclose(f) != 0) ok = false;
    if (!ok) st = mrt_fail(MRT_STATUS_IO_ERROR, "writing '%s' failed", path);
done:
    free(nm);
    free(strs);
    free(swapped);
    free(buf);
    return st;
}

/* ------------------------------------------------------------------ SequenceProto / OptionalProto */

/* Next field of w (loader/wire.h): number, wire type, and a varint's value or a length-delimited payload. */
static bool wire_next(mrt_wire *w, uint32_t *field, int *wt, const uint8_t **data, size_t *len, uint64_t *ival)
{
    uint64_t tag;
    if (!mrt_wire_field(w, &tag, ival, data, len)) return false;
    *field = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    return true;
}

enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SPARSE = 2, ELEM_SEQUENCE = 3, ELEM_MAP = 4, ELEM_OPTIONAL = 5 };

static const char *elem_kind_name(uint64_t k)
{
    static const char *const names[] = {"undefined", "tensor", "sparse tensor", "sequence", "map", "optional"};
    return k < 6 ? names[k] : "unknown";
}

static mrt_status decode_sequence(const uint8_t *bytes, size_t len, const char *base_dir, const char *what,
                                  mrt_value *out)
{
    memset(out, 0, sizeof *out);
    mrt_wire w = {bytes, bytes + len};
    uint32_t field;
    int wt;
    const uint8_t *data;
    size_t dlen;
    uint64_t ival, elem_type = ELEM_UNDEFINED;
    int64_t n_tensors = 0;
    while (w.p < w.end) {
        if (!wire_next(&w, &field, &wt, &data, &dlen, &ival))
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: not a valid SequenceProto (malformed protobuf)", what);
        if (field == 2 && wt == 0) elem_type = ival;
        else if (field == 3 && wt == 2) n_tensors++;
        else if (field >= 4 && field <= 7 && wt == 2)
            return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: sequences of %s values are not supported", what,
                            field == 4 ? "sparse tensor" : field == 5 ? "sequence" : field == 6 ? "map" : "optional");
    }
    if (elem_type != ELEM_UNDEFINED && elem_type != ELEM_TENSOR)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: sequences of %s values are not supported", what,
                        elem_kind_name(elem_type));
    out->kind = MRT_VALUE_SEQUENCE;
    out->items = calloc((size_t)(n_tensors ? n_tensors : 1), sizeof(mrt_tensor));
    if (!out->items) return oom("sequence");
    w.p = bytes;
    mrt_status st = MRT_STATUS_OK;
    char sub[512];
    while (w.p < w.end && !st) {
        wire_next(&w, &field, &wt, &data, &dlen, &ival); /* validated by the first pass */
        if (field != 3 || wt != 2) continue;
        snprintf(sub, sizeof sub, "%s, sequence item %lld", what, (long long)out->n_items);
        st = decode_tensor(data, dlen, base_dir, sub, &out->items[out->n_items], NULL);
        if (!st) out->n_items++;
    }
    if (st) {
        mrt_value_release(out);
        free(out->items);
        memset(out, 0, sizeof *out);
        return st;
    }
    out->seq_dtype = out->n_items ? out->items[0].dtype : MRT_DTYPE_UNDEFINED;
    for (int64_t i = 1; i < out->n_items; i++)
        if (out->items[i].dtype != out->seq_dtype) {
            st = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: sequence item %lld is %s, item 0 is %s", what, (long long)i,
                          mrt_dtype_name(out->items[i].dtype), mrt_dtype_name(out->seq_dtype));
            mrt_value_release(out);
            memset(out, 0, sizeof *out);
            return st;
        }
    return MRT_STATUS_OK;
}

static mrt_status decode_optional(const uint8_t *bytes, size_t len, const char *base_dir, const char *what,
                                  mrt_value *out)
{
    memset(out, 0, sizeof *out);
    mrt_wire w = {bytes, bytes + len};
    uint32_t field;
    int wt;
    const uint8_t *data, *tensor = NULL, *seq = NULL;
    size_t dlen, tensor_len = 0, seq_len = 0;
    uint64_t ival, elem_type = ELEM_UNDEFINED;
    while (w.p < w.end) {
        if (!wire_next(&w, &field, &wt, &data, &dlen, &ival))
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: not a valid OptionalProto (malformed protobuf)", what);
        if (field == 2 && wt == 0) elem_type = ival;
        else if (field == 3 && wt == 2) tensor = data, tensor_len = dlen;
        else if (field == 5 && wt == 2) seq = data, seq_len = dlen;
        else if ((field == 4 || field == 6 || field == 7) && wt == 2)
            return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: optional %s values are not supported", what,
                            field == 4 ? "sparse tensor" : field == 6 ? "map" : "optional");
    }
    if (elem_type > ELEM_OPTIONAL || elem_type == ELEM_SPARSE || elem_type == ELEM_MAP || elem_type == ELEM_OPTIONAL)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: optional %s values are not supported", what,
                        elem_kind_name(elem_type));
    mrt_status st = MRT_STATUS_OK;
    if (tensor && seq)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: OptionalProto holds both a tensor and a sequence", what);
    if (tensor) {
        if (elem_type == ELEM_SEQUENCE)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: OptionalProto says sequence but holds a tensor", what);
        out->kind = MRT_VALUE_TENSOR;
        st = decode_tensor(tensor, tensor_len, base_dir, what, &out->tensor, NULL);
    } else if (seq) {
        if (elem_type == ELEM_TENSOR)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: OptionalProto says tensor but holds a sequence", what);
        st = decode_sequence(seq, seq_len, base_dir, what, out);
    } else {
        out->kind = MRT_VALUE_NONE; /* an empty optional */
    }
    if (st) {
        memset(out, 0, sizeof *out);
        return st;
    }
    out->is_optional = true;
    return MRT_STATUS_OK;
}

static mrt_status decode_value(const void *bytes, size_t len, mrt_type_kind kind, const char *base_dir,
                               const char *what, mrt_value *out)
{
    memset(out, 0, sizeof *out);
    if (!bytes && len) return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: NULL bytes", what);
    switch (kind) {
    case MRT_TYPE_UNKNOWN:
    case MRT_TYPE_TENSOR: {
        mrt_status st = decode_tensor(bytes, len, base_dir, what, &out->tensor, NULL);
        if (!st) out->kind = MRT_VALUE_TENSOR;
        return st;
    }
    case MRT_TYPE_SEQUENCE: return decode_sequence(bytes, len, base_dir, what, out);
    case MRT_TYPE_OPTIONAL: return decode_optional(bytes, len, base_dir, what, out);
    case MRT_TYPE_SPARSE_TENSOR:
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: sparse tensor values are not supported", what);
    case MRT_TYPE_MAP: return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: map values are not supported", what);
    }
    return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: unknown value kind %d", what, (int)kind);
}

mrt_status mrt_value_proto_decode(const void *bytes, size_t len, mrt_type_kind expected_kind, mrt_value *out)
{
    return decode_value(bytes, len, expected_kind, NULL, "value proto", out);
}

mrt_status mrt_value_proto_read_file(const char *path, mrt_type_kind expected_kind, mrt_value *out)
{
    memset(out, 0, sizeof *out);
    void *bytes;
    size_t len;
    MRT_TRY(mrt_read_whole_file(path, &bytes, &len));
    char *dir = dir_of(path);
    mrt_status st = dir ? decode_value(bytes, len, expected_kind, dir, path, out) : oom("path");
    free(dir);
    free(bytes);
    return st;
}
