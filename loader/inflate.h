/* Raw DEFLATE (RFC 1951) decoding, for DEFLATE entries of .npz archives. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decompress src into dst (capacity dst_cap). Returns 0 and the byte count in *out_len on success,
   -1 on malformed or truncated input, -2 when the output would exceed dst_cap. */
int mrt_inflate(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_cap, size_t *out_len);

#ifdef __cplusplus
}
#endif
