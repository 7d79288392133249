/* Raw DEFLATE decoder (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks. Canonical Huffman
 * codes are decoded one bit at a time from per-length counts: simple and small, fast enough for .npz. */
#include "loader/inflate.h"

#include <string.h>

typedef struct bit_reader {
    const uint8_t *src;
    size_t len, pos;
    uint64_t buf;
    int cnt;
} bit_reader;

static int get_bits(bit_reader *b, int n, unsigned *v)
{
    while (b->cnt < n) {
        if (b->pos >= b->len) return -1;
        b->buf |= (uint64_t)b->src[b->pos++] << b->cnt;
        b->cnt += 8;
    }
    *v = (unsigned)(b->buf & ((1u << n) - 1));
    b->buf >>= n;
    b->cnt -= n;
    return 0;
}

#define MAX_BITS 15
#define MAX_SYMS 288

/* Canonical code: how many codes of each length, and the symbols sorted by (length, value). */
typedef struct huffman {
    uint16_t count[MAX_BITS + 1];
    uint16_t symbol[MAX_SYMS];
} huffman;

/* -1 if the lengths over-subscribe the code space; incomplete codes are accepted (an unused code then
   fails when met). */
static int huffman_build(huffman *h, const uint8_t *lengths, int n)
{
    uint16_t next[MAX_BITS + 2];
    memset(h->count, 0, sizeof h->count);
    for (int s = 0; s < n; s++) h->count[lengths[s]]++;
    long room = 1;
    for (int len = 1; len <= MAX_BITS; len++) {
        room = room * 2 - h->count[len];
        if (room < 0) return -1;
    }
    next[1] = 0;
    for (int len = 1; len <= MAX_BITS; len++) next[len + 1] = (uint16_t)(next[len] + h->count[len]);
    for (int s = 0; s < n; s++)
        if (lengths[s]) h->symbol[next[lengths[s]]++] = (uint16_t)s;
    return 0;
}

/* Codes of one length are consecutive integers starting at `first`; walk lengths until the code read so
   far falls inside the range of its length. */
static int huffman_decode(bit_reader *b, const huffman *h)
{
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= MAX_BITS; len++) {
        unsigned bit;
        if (get_bits(b, 1, &bit)) return -1;
        code |= (int)bit;
        int count = h->count[len];
        if (code - first < count) return h->symbol[index + code - first];
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return -1;
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                       33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

typedef struct out_buf {
    uint8_t *p;
    size_t cap, len;
} out_buf;

static int inflate_codes(bit_reader *b, out_buf *o, const huffman *lit, const huffman *dist)
{
    for (;;) {
        int sym = huffman_decode(b, lit);
        if (sym < 0) return -1;
        if (sym < 256) {
            if (o->len >= o->cap) return -2;
            o->p[o->len++] = (uint8_t)sym;
            continue;
        }
        if (sym == 256) return 0;
        sym -= 257;
        if (sym >= 29) return -1;
        unsigned extra;
        if (get_bits(b, len_extra[sym], &extra)) return -1;
        size_t length = len_base[sym] + extra;
        int ds = huffman_decode(b, dist);
        if (ds < 0 || ds >= 30) return -1;
        if (get_bits(b, dist_extra[ds], &extra)) return -1;
        size_t distance = dist_base[ds] + extra;
        if (distance > o->len) return -1;
        if (length > o->cap - o->len) return -2;
        /* byte by byte: source and destination may overlap (distance < length repeats a pattern) */
        for (size_t i = 0; i < length; i++, o->len++) o->p[o->len] = o->p[o->len - distance];
    }
}

static int inflate_stored(bit_reader *b, out_buf *o)
{
    b->buf >>= b->cnt % 8; /* skip to the byte boundary */
    b->cnt -= b->cnt % 8;
    unsigned len, nlen;
    if (get_bits(b, 16, &len) || get_bits(b, 16, &nlen)) return -1;
    if ((len ^ 0xffffu) != nlen) return -1;
    /* whole bytes still held in the bit buffer come first */
    while (len && b->cnt >= 8) {
        unsigned v;
        get_bits(b, 8, &v);
        if (o->len >= o->cap) return -2;
        o->p[o->len++] = (uint8_t)v;
        len--;
    }
    if (len > b->len - b->pos) return -1;
    if (len > o->cap - o->len) return -2;
    memcpy(o->p + o->len, b->src + b->pos, len);
    o->len += len;
    b->pos += len;
    return 0;
}

static int inflate_fixed(bit_reader *b, out_buf *o)
{
    uint8_t lengths[MAX_SYMS];
    huffman lit, dist;
    int s = 0;
    for (; s < 144; s++) lengths[s] = 8;
    for (; s < 256; s++) lengths[s] = 9;
    for (; s < 280; s++) lengths[s] = 7;
    for (; s < 288; s++) lengths[s] = 8;
    huffman_build(&lit, lengths, 288);
    for (s = 0; s < 30; s++) lengths[s] = 5;
    huffman_build(&dist, lengths, 30);
    return inflate_codes(b, o, &lit, &dist);
}

static int inflate_dynamic(bit_reader *b, out_buf *o)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    unsigned hlit, hdist, hclen;
    if (get_bits(b, 5, &hlit) || get_bits(b, 5, &hdist) || get_bits(b, 4, &hclen)) return -1;
    hlit += 257;
    hdist += 1;
    hclen += 4;
    if (hlit > 286 || hdist > 30) return -1;
    uint8_t lengths[MAX_SYMS + 32] = {0};
    for (unsigned i = 0; i < hclen; i++) {
        unsigned v;
        if (get_bits(b, 3, &v)) return -1;
        lengths[order[i]] = (uint8_t)v;
    }
    huffman clen, lit, dist;
    if (huffman_build(&clen, lengths, 19)) return -1;
    memset(lengths, 0, sizeof lengths);
    unsigned n = 0, total = hlit + hdist;
    while (n < total) {
        int sym = huffman_decode(b, &clen);
        if (sym < 0) return -1;
        if (sym < 16) {
            lengths[n++] = (uint8_t)sym;
            continue;
        }
        unsigned rep, value = 0;
        if (sym == 16) {
            if (n == 0) return -1;
            value = lengths[n - 1];
            if (get_bits(b, 2, &rep)) return -1;
            rep += 3;
        } else if (sym == 17) {
            if (get_bits(b, 3, &rep)) return -1;
            rep += 3;
        } else {
            if (get_bits(b, 7, &rep)) return -1;
            rep += 11;
        }
        if (n + rep > total) return -1;
        while (rep--) lengths[n++] = (uint8_t)value;
    }
    if (lengths[256] == 0) return -1; /* no end-of-block code */
    if (huffman_build(&lit, lengths, (int)hlit) || huffman_build(&dist, lengths + hlit, (int)hdist)) return -1;
    return inflate_codes(b, o, &lit, &dist);
}

int mrt_inflate(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_cap, size_t *out_len)
{
    bit_reader b = {src, src_len, 0, 0, 0};
    out_buf o = {dst, dst_cap, 0};
    unsigned last, type;
    int rc;
    *out_len = 0;
    do {
        if (get_bits(&b, 1, &last) || get_bits(&b, 2, &type)) return -1;
        if (type == 0) rc = inflate_stored(&b, &o);
        else if (type == 1) rc = inflate_fixed(&b, &o);
        else if (type == 2) rc = inflate_dynamic(&b, &o);
        else rc = -1;
        if (rc) return rc;
    } while (!last);
    *out_len = o.len;
    return 0;
}
