/* SHA-256 (FIPS 180-4), for provenance records (model and input file hashes). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "minirt/minirt.h"

typedef struct mrt_sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t fill;
} mrt_sha256;

void mrt_sha256_init(mrt_sha256 *s);
void mrt_sha256_update(mrt_sha256 *s, const void *data, size_t len);
/* Writes 64 hex characters + NUL. */
void mrt_sha256_final_hex(mrt_sha256 *s, char hex[65]);
/* Hash a whole file; IO_ERROR when it can't be read. */
mrt_status mrt_sha256_file(const char *path, char hex[65]);
