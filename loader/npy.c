/* NumPy .npy (format 1.0/2.0/3.0) and .npz (zip, STORED/DEFLATE read, STORED write) <-> mrt_tensor. */
#include "loader/npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"
#include "loader/inflate.h"
#include "loader/tensor_proto.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_ALIGN 64

static mrt_status oom(const char *what) { return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (%s)", what); }

static bool host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v & 0xffff); wr16(p + 2, v >> 16); }

/* ------------------------------------------------------------------ header parsing */

/* The element type an npy descr denotes. unit = bytes per swap unit, chars = code points for '<U'. */
typedef struct npy_type {
    mrt_dtype dtype;
    size_t itemsize;
    size_t unit;
    bool big_endian;
    size_t chars; /* unicode only */
} npy_type;

typedef struct hdr_cursor {
    const char *p, *end;
    const char *what;
} hdr_cursor;

static mrt_status bad_header(const hdr_cursor *c, const char *why)
{
    return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: malformed .npy header (%s)", c->what, why);
}

static void skip_ws(hdr_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool take(hdr_cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A Python string literal without escapes ('...' or "..."), copied into buf. */
static mrt_status parse_str(hdr_cursor *c, char *buf, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return bad_header(c, "expected a quoted string");
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\') return bad_header(c, "escape sequences are not supported");
        if (n + 1 >= cap) return bad_header(c, "string too long");
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return bad_header(c, "unterminated string");
    c->p++;
    buf[n] = '\0';
    return MRT_STATUS_OK;
}

static bool take_word(hdr_cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return true;
    }
    return false;
}

static mrt_status parse_shape(hdr_cursor *c, int *rank, int64_t *shape)
{
    if (!take(c, '(')) return bad_header(c, "'shape' is not a tuple");
    int r = 0;
    bool need_comma = false;
    for (;;) {
        skip_ws(c);
        if (take(c, ')')) break;
        if (need_comma) return bad_header(c, "expected ',' or ')' in 'shape'");
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return bad_header(c, "'shape' holds a non-integer");
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned d = (unsigned)(*c->p++ - '0');
            if (v > ((uint64_t)INT64_MAX - d) / 10)
                return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy shape dimension overflows int64", c->what);
            v = v * 10 + d;
        }
        if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 long literal */
        if (r >= MRT_MAX_RANK)
            return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy array has more than %d dimensions", c->what,
                            MRT_MAX_RANK);
        shape[r++] = (int64_t)v;
        need_comma = !take(c, ',');
    }
    /* "(3)" is an int in Python, not a tuple */
    if (r == 1 && need_comma) return bad_header(c, "'shape' is not a tuple");
    *rank = r;
    return MRT_STATUS_OK;
}

static mrt_status parse_descr(const char *descr, const char *what, npy_type *t)
{
    memset(t, 0, sizeof *t);
    char order = descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy dtype '%s' is not supported", what, descr);
    char kind = descr[1];
    const char *num = descr + 2;
    if (!kind || !*num) return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy dtype '%s' is not supported", what, descr);
    uint64_t size = 0;
    for (const char *p = num; *p; p++) {
        if (*p < '0' || *p > '9' || size > 100000000)
            return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy dtype '%s' is not supported", what, descr);
        size = size * 10 + (uint64_t)(*p - '0');
    }
    mrt_dtype dt = MRT_DTYPE_UNDEFINED;
    switch (kind) {
    case 'b': dt = size == 1 ? MRT_DTYPE_BOOL : dt; break;
    case 'i':
        dt = size == 1 ? MRT_DTYPE_INT8 : size == 2 ? MRT_DTYPE_INT16 : size == 4 ? MRT_DTYPE_INT32
           : size == 8 ? MRT_DTYPE_INT64 : dt;
        break;
    case 'u':
        dt = size == 1 ? MRT_DTYPE_UINT8 : size == 2 ? MRT_DTYPE_UINT16 : size == 4 ? MRT_DTYPE_UINT32
           : size == 8 ? MRT_DTYPE_UINT64 : dt;
        break;
    case 'f': dt = size == 2 ? MRT_DTYPE_FLOAT16 : size == 4 ? MRT_DTYPE_FLOAT : size == 8 ? MRT_DTYPE_DOUBLE : dt; break;
    case 'c': dt = size == 8 ? MRT_DTYPE_COMPLEX64 : size == 16 ? MRT_DTYPE_COMPLEX128 : dt; break;
    case 'U':
        if (size >= 1) {
            dt = MRT_DTYPE_STRING;
            t->chars = (size_t)size;
        }
        break;
    default: break;
    }
    if (dt == MRT_DTYPE_UNDEFINED)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy dtype '%s' is not supported", what, descr);
    t->dtype = dt;
    t->itemsize = dt == MRT_DTYPE_STRING ? 4 * t->chars : (size_t)size;
    t->unit = dt == MRT_DTYPE_STRING ? 4 : (dt == MRT_DTYPE_COMPLEX64 || dt == MRT_DTYPE_COMPLEX128) ? t->itemsize / 2
                                                                                                   : t->itemsize;
    if (order == '|' && t->unit > 1)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy dtype '%s' has no byte order", what, descr);
    t->big_endian = order == '>' || (order == '=' && !host_is_le());
    return MRT_STATUS_OK;
}

typedef struct npy_header {
    npy_type type;
    bool fortran;
    int rank;
    int64_t shape[MRT_MAX_RANK];
    size_t data_offset;
} npy_header;

static mrt_status parse_header(const uint8_t *b, size_t len, const char *what, npy_header *h)
{
    memset(h, 0, sizeof *h);
    if (len < 10 || memcmp(b, NPY_MAGIC, 6) != 0)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: not a .npy file (bad magic)", what);
    uint8_t major = b[6], minor = b[7];
    size_t hlen, start;
    if (major == 1 && minor == 0) {
        hlen = rd16(b + 8);
        start = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (len < 12) return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: truncated .npy header", what);
        hlen = rd32(b + 8);
        start = 12;
    } else {
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: .npy format version %u.%u is not supported", what, major,
                        minor);
    }
    if (hlen > len - start)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: truncated .npy header (%zu bytes announced, %zu present)", what,
                        hlen, len - start);
    hdr_cursor c = {(const char *)b + start, (const char *)b + start + hlen, what};
    char key[32], descr[64] = "";
    bool have_descr = false, have_fortran = false, have_shape = false;
    if (!take(&c, '{')) return bad_header(&c, "expected '{'");
    for (;;) {
        if (take(&c, '}')) break;
        MRT_TRY(parse_str(&c, key, sizeof key));
        if (!take(&c, ':')) return bad_header(&c, "expected ':'");
        if (strcmp(key, "descr") == 0) {
            if (have_descr) return bad_header(&c, "duplicate key 'descr'");
            have_descr = true;
            MRT_TRY(parse_str(&c, descr, sizeof descr));
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran) return bad_header(&c, "duplicate key 'fortran_order'");
            have_fortran = true;
            if (take_word(&c, "True")) h->fortran = true;
            else if (take_word(&c, "False")) h->fortran = false;
            else return bad_header(&c, "'fortran_order' is not True or False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape) return bad_header(&c, "duplicate key 'shape'");
            have_shape = true;
            MRT_TRY(parse_shape(&c, &h->rank, h->shape));
        } else {
            return bad_header(&c, "unknown key");
        }
        if (take(&c, ',')) continue;
        if (take(&c, '}')) break;
        return bad_header(&c, "expected ',' or '}'");
    }
    skip_ws(&c);
    if (c.p != c.end) return bad_header(&c, "trailing characters after the dictionary");
    if (!have_descr || !have_fortran || !have_shape)
        return bad_header(&c, "'descr', 'fortran_order' and 'shape' are all required");
    MRT_TRY(parse_descr(descr, what, &h->type));
    h->data_offset = start + hlen;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ decode */

static void swap_units(uint8_t *p, size_t nbytes, size_t unit)
{
    if (unit <= 1) return;
    for (size_t i = 0; i + unit <= nbytes; i += unit)
        for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* Column-major -> row-major, element by element (itemsize bytes each). */
static void fortran_to_c(const uint8_t *src, uint8_t *dst, int rank, const int64_t *shape, size_t itemsize)
{
    int64_t fstride[MRT_MAX_RANK], idx[MRT_MAX_RANK] = {0}, numel = 1;
    for (int d = 0; d < rank; d++) {
        fstride[d] = numel;
        numel *= shape[d];
    }
    for (int64_t i = 0; i < numel; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) off += idx[d] * fstride[d];
        memcpy(dst + (size_t)i * itemsize, src + (size_t)off * itemsize, itemsize);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

static size_t utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* UCS-4 (already in host order) -> NUL-terminated UTF-8; trailing NULs are padding, as in NumPy. */
static mrt_status ucs4_to_utf8(const uint8_t *src, size_t chars, const char *what, char **out)
{
    size_t n = chars;
    uint32_t cp;
    while (n > 0) {
        memcpy(&cp, src + (n - 1) * 4, 4);
        if (cp) break;
        n--;
    }
    char *s = malloc(4 * n + 1), *o = s;
    if (!s) return oom("npy string");
    for (size_t i = 0; i < n; i++) {
        memcpy(&cp, src + i * 4, 4);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0) {
            free(s);
            return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy string holds an invalid code point U+%X", what, cp);
        }
        o += utf8_put(o, cp);
    }
    *o = '\0';
    *out = s;
    return MRT_STATUS_OK;
}

mrt_status mrt_npy_decode(const void *bytes, size_t len, const char *what, mrt_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (!what) what = ".npy data";
    if (!bytes) return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: NULL bytes", what);
    const uint8_t *b = bytes;
    npy_header h;
    MRT_TRY(parse_header(b, len, what, &h));
    int64_t numel;
    if (mrt_shape_numel(h.rank, h.shape, &numel)) return mrt_fail_prefix(MRT_STATUS_INVALID_ARG, "%s: ", what);
    char sh[256];
    if ((uint64_t)numel > (uint64_t)(SIZE_MAX / 4) / h.type.itemsize)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy shape %s is too large", what,
                        mrt_shape_describe(h.rank, h.shape, sh, sizeof sh));
    size_t need = (size_t)numel * h.type.itemsize, have = len - h.data_offset;
    if (have != need)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy data has %zu bytes, shape %s of '%s' items needs %zu (%s)",
                        what, have, mrt_shape_describe(h.rank, h.shape, sh, sizeof sh),
                        mrt_dtype_name(h.type.dtype), need, have < need ? "truncated" : "trailing bytes");
    const uint8_t *data = b + h.data_offset;
    uint8_t *tmp = NULL;
    bool needs_swap = h.type.big_endian == host_is_le() && h.type.unit > 1;
    bool reorder = h.fortran && h.rank > 1;
    if ((needs_swap || reorder) && need) {
        if (!(tmp = malloc(need))) return oom("npy data");
        if (reorder) fortran_to_c(data, tmp, h.rank, h.shape, h.type.itemsize);
        else memcpy(tmp, data, need);
        if (needs_swap) swap_units(tmp, need, h.type.unit);
        data = tmp;
    }
    mrt_status st = mrt_tensor_alloc(out, h.type.dtype, h.rank, h.shape);
    if (st) {
        free(tmp);
        return mrt_fail_prefix(st, "%s: ", what);
    }
    if (h.type.dtype == MRT_DTYPE_STRING) {
        char **d = out->data;
        for (int64_t i = 0; i < numel && !st; i++)
            st = ucs4_to_utf8(data + (size_t)i * h.type.itemsize, h.type.chars, what, &d[i]);
    } else if (need) {
        memcpy(out->data, data, need);
        if (h.type.dtype == MRT_DTYPE_BOOL) {
            uint8_t *d = out->data;
            for (size_t i = 0; i < need; i++)
                if (d[i] > 1) {
                    st = mrt_fail(MRT_STATUS_INVALID_ARG, "%s: .npy bool element %zu has byte value %u", what, i, d[i]);
                    break;
                }
        }
    }
    free(tmp);
    if (st) mrt_tensor_release(out);
    return st;
}

mrt_status mrt_npy_read_file(const char *path, mrt_tensor *out)
{
    memset(out, 0, sizeof *out);
    void *bytes;
    size_t len;
    MRT_TRY(mrt_read_whole_file(path, &bytes, &len));
    mrt_status st = mrt_npy_decode(bytes, len, path, out);
    free(bytes);
    return st;
}

/* ------------------------------------------------------------------ encode */

static const char *npy_descr(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_BOOL: return "|b1";
    case MRT_DTYPE_INT8: return "|i1";
    case MRT_DTYPE_UINT8: return "|u1";
    case MRT_DTYPE_INT16: return "<i2";
    case MRT_DTYPE_UINT16: return "<u2";
    case MRT_DTYPE_INT32: return "<i4";
    case MRT_DTYPE_UINT32: return "<u4";
    case MRT_DTYPE_INT64: return "<i8";
    case MRT_DTYPE_UINT64: return "<u8";
    case MRT_DTYPE_FLOAT16: return "<f2";
    case MRT_DTYPE_FLOAT: return "<f4";
    case MRT_DTYPE_DOUBLE: return "<f8";
    case MRT_DTYPE_COMPLEX64: return "<c8";
    case MRT_DTYPE_COMPLEX128: return "<c16";
    default: return NULL;
    }
}

/* Decode one UTF-8 sequence; returns bytes used, 0 on invalid input. */
static size_t utf8_get(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    int n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!n) return 0;
    uint32_t v = c & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_cp[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return (size_t)n;
}

static mrt_status utf8_count(const char *s, size_t *chars)
{
    size_t n = 0;
    uint32_t cp;
    for (const unsigned char *p = (const unsigned char *)s; *p; n++) {
        size_t k = utf8_get(p, &cp);
        if (!k) return mrt_fail(MRT_STATUS_INVALID_ARG, "string \"%.40s\" is not valid UTF-8", s);
        p += k;
    }
    *chars = n;
    return MRT_STATUS_OK;
}

mrt_status mrt_npy_encode(const mrt_tensor *t, void **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    char sh[256];
    int64_t numel;
    if (mrt_shape_numel(t->rank, t->shape, &numel)) return mrt_fail_prefix(MRT_STATUS_INVALID_ARG, "writing .npy: ");
    const char *descr = npy_descr(t->dtype);
    char ustr[32];
    size_t itemsize = 0, chars = 1;
    if (t->dtype == MRT_DTYPE_STRING) {
        char *const *s = t->data;
        for (int64_t i = 0; i < numel; i++) {
            size_t c = 0;
            MRT_TRY(utf8_count(s && s[i] ? s[i] : "", &c));
            if (c > chars) chars = c;
        }
        snprintf(ustr, sizeof ustr, "<U%zu", chars);
        descr = ustr;
        itemsize = 4 * chars;
    } else if (descr) {
        itemsize = (size_t)mrt_dtype_bits(t->dtype) / 8;
    } else {
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s tensors have no NumPy dtype; cannot write .npy",
                        mrt_dtype_name(t->dtype));
    }
    if ((uint64_t)numel > (uint64_t)(SIZE_MAX / 4) / itemsize)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "writing .npy: shape %s is too large",
                        mrt_shape_describe(t->rank, t->shape, sh, sizeof sh));
    size_t nbytes = (size_t)numel * itemsize;
    if (nbytes && !t->data && t->dtype != MRT_DTYPE_STRING)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "writing .npy: tensor has no data");

    /* "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" padded with spaces, ending in '\n' */
    char dict[64 + 22 * MRT_MAX_RANK + 64];
    size_t dl = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++)
        dl += (size_t)snprintf(dict + dl, sizeof dict - dl, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    dl += (size_t)snprintf(dict + dl, sizeof dict - dl, "%s), }", t->rank == 1 ? "," : "");
    size_t pre = 10, total_hdr = pre + dl + 1;
    total_hdr = (total_hdr + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total_hdr - pre;
    uint8_t *buf = malloc(total_hdr + nbytes);
    if (!buf) return oom("npy buffer");
    memcpy(buf, NPY_MAGIC, 6);
    buf[6] = 1;
    buf[7] = 0;
    wr16(buf + 8, (uint32_t)hlen);
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', hlen - dl - 1);
    buf[total_hdr - 1] = '\n';
    uint8_t *d = buf + total_hdr;
    if (t->dtype == MRT_DTYPE_STRING) {
        memset(d, 0, nbytes);
        char *const *s = t->data;
        for (int64_t i = 0; i < numel; i++) {
            const unsigned char *p = (const unsigned char *)(s && s[i] ? s[i] : "");
            uint8_t *o = d + (size_t)i * itemsize;
            uint32_t cp;
            while (*p) {
                p += utf8_get(p, &cp); /* validated above */
                wr32(o, cp);
                o += 4;
            }
        }
    } else if (nbytes) {
        memcpy(d, t->data, nbytes);
        if (!host_is_le())
            swap_units(d, nbytes, t->dtype == MRT_DTYPE_COMPLEX64 ? 4 : t->dtype == MRT_DTYPE_COMPLEX128 ? 8 : itemsize);
    }
    *bytes = buf;
    *len = total_hdr + nbytes;
    return MRT_STATUS_OK;
}

static mrt_status write_all(const char *path, const void *a, size_t alen)
{
    FILE *f = fopen(path, "wb");
    if (!f) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot create '%s': %s", path, strerror(errno));
    bool ok = !alen || fwrite(a, 1, alen, f) == alen;
    if (fclose(f) != 0) ok = false;
    return ok ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_IO_ERROR, "writing '%s' failed", path);
}

mrt_status mrt_npy_write_file(const char *path, const mrt_tensor *t)
{
    void *bytes;
    size_t len;
    mrt_status st = mrt_npy_encode(t, &bytes, &len);
    if (st) return mrt_fail_prefix(st, "'%s': ", path);
    st = write_all(path, bytes, len);
    free(bytes);
    return st;
}

/* ------------------------------------------------------------------ .npz (zip) */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t table[256]; /* built per call (2K steps): no shared state between threads */
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static mrt_status bad_zip(const char *path, const char *why)
{
    return mrt_fail(MRT_STATUS_INVALID_ARG, "%s: malformed .npz (zip) file: %s", path, why);
}

typedef struct zip_entry {
    char *name;
    uint16_t method, flags;
    uint32_t crc;
    uint64_t csize, usize, local_off;
} zip_entry;

/* Locate the central directory: EOCD record, or its ZIP64 version when the fields overflowed. */
static mrt_status zip_find_cd(const uint8_t *b, size_t len, const char *path, uint64_t *n_entries, uint64_t *cd_off,
                              uint64_t *cd_size)
{
    if (len < 22) return bad_zip(path, "too short");
    size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
    size_t eocd = SIZE_MAX;
    for (size_t i = len - 22 + 1; i-- > lo;)
        if (rd32(b + i) == 0x06054b50u && i + 22 + rd16(b + i + 20) == len) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX) return bad_zip(path, "no end-of-central-directory record");
    *n_entries = rd16(b + eocd + 10);
    *cd_size = rd32(b + eocd + 12);
    *cd_off = rd32(b + eocd + 16);
    if (*n_entries == 0xffff || *cd_size == 0xffffffffu || *cd_off == 0xffffffffu) {
        if (eocd < 20 || rd32(b + eocd - 20) != 0x07064b50u) return bad_zip(path, "missing ZIP64 locator");
        uint64_t z = rd64(b + eocd - 20 + 8);
        if (z > len || len - z < 56 || rd32(b + z) != 0x06064b50u) return bad_zip(path, "bad ZIP64 end record");
        *n_entries = rd64(b + z + 32);
        *cd_size = rd64(b + z + 40);
        *cd_off = rd64(b + z + 48);
    }
    if (*cd_off > len || *cd_size > len - *cd_off) return bad_zip(path, "central directory outside the file");
    return MRT_STATUS_OK;
}

static mrt_status zip_parse_entry(const uint8_t *b, size_t len, size_t *pos, size_t cd_end, const char *path,
                                  zip_entry *e)
{
    size_t p = *pos;
    if (cd_end - p < 46 || rd32(b + p) != 0x02014b50u) return bad_zip(path, "bad central directory entry");
    e->flags = rd16(b + p + 8);
    e->method = rd16(b + p + 10);
    e->crc = rd32(b + p + 16);
    e->csize = rd32(b + p + 20);
    e->usize = rd32(b + p + 24);
    size_t nlen = rd16(b + p + 28), xlen = rd16(b + p + 30), clen = rd16(b + p + 32);
    e->local_off = rd32(b + p + 42);
    if (cd_end - p - 46 < nlen + xlen + clen) return bad_zip(path, "central directory entry overruns");
    const uint8_t *x = b + p + 46 + nlen, *xend = x + xlen;
    while (xend - x >= 4) { /* ZIP64 extended information: the overflowed fields, in this order */
        uint16_t id = rd16(x), sz = rd16(x + 2);
        if ((size_t)(xend - x - 4) < sz) return bad_zip(path, "bad extra field");
        if (id == 0x0001) {
            const uint8_t *q = x + 4, *qend = q + sz;
            if (e->usize == 0xffffffffu) { if (qend - q < 8) return bad_zip(path, "short ZIP64 field"); e->usize = rd64(q); q += 8; }
            if (e->csize == 0xffffffffu) { if (qend - q < 8) return bad_zip(path, "short ZIP64 field"); e->csize = rd64(q); q += 8; }
            if (e->local_off == 0xffffffffu) { if (qend - q < 8) return bad_zip(path, "short ZIP64 field"); e->local_off = rd64(q); }
        }
        x += 4 + sz;
    }
    e->name = malloc(nlen + 1);
    if (!e->name) return oom("npz entry name");
    memcpy(e->name, b + p + 46, nlen);
    e->name[nlen] = '\0';
    (void)len;
    *pos = p + 46 + nlen + xlen + clen;
    return MRT_STATUS_OK;
}

/* The bytes of an entry, uncompressed into *owned when it was deflated. */
static mrt_status zip_entry_data(const uint8_t *b, size_t len, const zip_entry *e, const char *path,
                                 const uint8_t **data, uint8_t **owned)
{
    *owned = NULL;
    char why[600];
    if (e->flags & 1) {
        snprintf(why, sizeof why, "entry '%s' is encrypted", e->name);
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: %s", path, why);
    }
    if (e->local_off > len || len - e->local_off < 30 || rd32(b + e->local_off) != 0x04034b50u) {
        snprintf(why, sizeof why, "bad local header for '%s'", e->name);
        return bad_zip(path, why);
    }
    uint64_t start = e->local_off + 30 + rd16(b + e->local_off + 26) + rd16(b + e->local_off + 28);
    if (start > len || e->csize > len - start) {
        snprintf(why, sizeof why, "data of '%s' runs past the end of the file", e->name);
        return bad_zip(path, why);
    }
    const uint8_t *src = b + start;
    if (e->method == 0) {
        if (e->csize != e->usize) {
            snprintf(why, sizeof why, "stored entry '%s' has different compressed and uncompressed sizes", e->name);
            return bad_zip(path, why);
        }
        *data = src;
    } else if (e->method == 8) {
        if (e->usize > SIZE_MAX / 2) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "%s: entry '%s' is too large", path, e->name);
        /* deflate expands at most ~1032:1: a larger claimed size is a corrupt (or hostile) header */
        if (e->usize > (uint64_t)e->csize * 1032 + 1024) {
            snprintf(why, sizeof why, "entry '%s' claims %llu bytes from %llu compressed (impossible for deflate)",
                     e->name, (unsigned long long)e->usize, (unsigned long long)e->csize);
            return bad_zip(path, why);
        }
        MRT_TRY(mrt_check_alloc((size_t)e->usize, "an npz entry"));
        uint8_t *out = malloc(e->usize ? (size_t)e->usize : 1);
        if (!out) return oom("npz inflate");
        size_t got = 0;
        if (mrt_inflate(src, (size_t)e->csize, out, (size_t)e->usize, &got) != 0 || got != e->usize) {
            free(out);
            snprintf(why, sizeof why, "entry '%s': DEFLATE data is corrupt or has the wrong size", e->name);
            return bad_zip(path, why);
        }
        *owned = out;
        *data = out;
    } else {
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: entry '%s' uses zip compression method %u (only stored and "
                        "deflate are supported)", path, e->name, e->method);
    }
    if (crc32_of(*data, (size_t)e->usize) != e->crc) {
        free(*owned);
        *owned = NULL;
        snprintf(why, sizeof why, "CRC mismatch in entry '%s'", e->name);
        return bad_zip(path, why);
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_npz_decode(const void *bytes, size_t len, const char *path, int *n, char ***names,
                          mrt_tensor **tensors)
{
    *n = 0;
    *names = NULL;
    *tensors = NULL;
    const uint8_t *b = bytes;
    uint64_t n_entries = 0, cd_off = 0, cd_size = 0;
    mrt_status st = zip_find_cd(b, len, path, &n_entries, &cd_off, &cd_size);
    char **nm = NULL;
    mrt_tensor *ts = NULL;
    int count = 0;
    if (st) goto done;
    if (n_entries > (uint64_t)cd_size / 46 || n_entries > 1000000) {
        st = bad_zip(path, "entry count does not fit the central directory");
        goto done;
    }
    nm = calloc((size_t)n_entries + 1, sizeof *nm);
    ts = calloc((size_t)n_entries + 1, sizeof *ts);
    if (!nm || !ts) {
        st = oom("npz");
        goto done;
    }
    size_t pos = (size_t)cd_off, cd_end = (size_t)(cd_off + cd_size);
    for (uint64_t i = 0; i < n_entries && !st; i++) {
        zip_entry e;
        memset(&e, 0, sizeof e);
        if ((st = zip_parse_entry(b, len, &pos, cd_end, path, &e))) break;
        size_t nl = strlen(e.name);
        if (nl && e.name[nl - 1] == '/') { /* a folder entry */
            free(e.name);
            continue;
        }
        if (nl < 5 || strcmp(e.name + nl - 4, ".npy") != 0) {
            st = mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: entry '%s' is not a .npy array", path, e.name);
            free(e.name);
            break;
        }
        const uint8_t *data = NULL;
        uint8_t *owned;
        if ((st = zip_entry_data(b, len, &e, path, &data, &owned))) {
            free(e.name);
            break;
        }
        char what[700];
        snprintf(what, sizeof what, "%s[%s]", path, e.name);
        e.name[nl - 4] = '\0';
        for (int k = 0; k < count && !st; k++)
            if (strcmp(nm[k], e.name) == 0) st = mrt_fail(MRT_STATUS_INVALID_ARG, "%s: array '%s' appears twice", path, e.name);
        if (!st) st = mrt_npy_decode(data, (size_t)e.usize, what, &ts[count]);
        free(owned);
        if (st) {
            free(e.name);
            break;
        }
        nm[count++] = e.name;
    }
done:
    if (st) {
        for (int k = 0; k < count; k++) {
            free(nm[k]);
            mrt_tensor_release(&ts[k]);
        }
        free(nm);
        free(ts);
        return st;
    }
    *n = count;
    *names = nm;
    *tensors = ts;
    return MRT_STATUS_OK;
}

mrt_status mrt_npz_read_file(const char *path, int *n, char ***names, mrt_tensor **tensors)
{
    void *bytes;
    size_t len;
    *n = 0;
    *names = NULL;
    *tensors = NULL;
    MRT_TRY(mrt_read_whole_file(path, &bytes, &len));
    mrt_status st = mrt_npz_decode(bytes, len, path, n, names, tensors);
    free(bytes);
    return st;
}

typedef struct grow_buf {
    uint8_t *p;
    size_t len, cap;
} grow_buf;

static bool gb_put(grow_buf *g, const void *src, size_t n)
{
    if (n > SIZE_MAX / 2 - g->len) return false;
    if (g->len + n > g->cap) {
        size_t nc = g->cap ? g->cap : 4096;
        while (nc < g->len + n) nc *= 2;
        uint8_t *np = realloc(g->p, nc);
        if (!np) return false;
        g->p = np;
        g->cap = nc;
    }
    if (n) memcpy(g->p + g->len, src, n);
    g->len += n;
    return true;
}

mrt_status mrt_npz_write_file(const char *path, int n, const char *const *names, const mrt_tensor *tensors)
{
    if (n < 0 || n > 65534) return mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': cannot write %d arrays to an .npz", path, n);
    grow_buf body = {0}, cd = {0};
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n && !st; i++) {
        const char *nm = names[i] ? names[i] : "";
        size_t nl = strlen(nm) + 4;
        if (nl > 65535) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': array name too long", path);
            break;
        }
        void *npy;
        size_t npy_len;
        if ((st = mrt_npy_encode(&tensors[i], &npy, &npy_len))) {
            mrt_fail_prefix(st, "'%s', array '%s': ", path, nm);
            break;
        }
        if (npy_len >= 0xffffffffu || body.len >= 0xffffffffu - npy_len - nl - 30) {
            free(npy);
            st = mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "'%s': .npz files over 4 GiB are not supported", path);
            break;
        }
        uint32_t crc = crc32_of(npy, npy_len), off = (uint32_t)body.len;
        bool utf8 = false;
        for (const char *p = nm; *p; p++) utf8 |= (unsigned char)*p >= 0x80;
        uint8_t lh[30] = {0}, ch[46] = {0};
        wr32(lh, 0x04034b50u);
        wr16(lh + 4, 20);
        wr16(lh + 6, utf8 ? 0x0800 : 0);
        wr16(lh + 12, 0x0021); /* 1980-01-01: fixed, so equal arrays give equal files */
        wr32(lh + 14, crc);
        wr32(lh + 18, (uint32_t)npy_len);
        wr32(lh + 22, (uint32_t)npy_len);
        wr16(lh + 26, (uint32_t)nl);
        wr32(ch, 0x02014b50u);
        wr16(ch + 4, 20);
        wr16(ch + 6, 20);
        wr16(ch + 8, utf8 ? 0x0800 : 0);
        wr16(ch + 14, 0x0021);
        wr32(ch + 16, crc);
        wr32(ch + 20, (uint32_t)npy_len);
        wr32(ch + 24, (uint32_t)npy_len);
        wr16(ch + 28, (uint32_t)nl);
        wr32(ch + 38, 0644u << 16);
        wr32(ch + 42, off);
        bool ok = gb_put(&body, lh, 30) && gb_put(&body, nm, nl - 4) && gb_put(&body, ".npy", 4) &&
                  gb_put(&body, npy, npy_len) && gb_put(&cd, ch, 46) && gb_put(&cd, nm, nl - 4) &&
                  gb_put(&cd, ".npy", 4);
        free(npy);
        if (!ok) st = oom("npz");
    }
    if (!st) {
        uint8_t eocd[22] = {0};
        wr32(eocd, 0x06054b50u);
        wr16(eocd + 8, (uint32_t)n);
        wr16(eocd + 10, (uint32_t)n);
        wr32(eocd + 12, (uint32_t)cd.len);
        wr32(eocd + 16, (uint32_t)body.len);
        if (!gb_put(&body, cd.p, cd.len) || !gb_put(&body, eocd, 22)) st = oom("npz");
    }
    if (!st) st = write_all(path, body.p, body.len);
    free(body.p);
    free(cd.p);
    return st;
}
