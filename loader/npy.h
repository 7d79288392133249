/* NumPy .npy / .npz files <-> mrt_tensor.
 *
 * .npy read: format versions 1.0, 2.0, 3.0; dtypes bool (|b1), int8..int64, uint8..uint64, float16/32/64,
 * complex64/128 (little- or big-endian, the latter byte-swapped), fixed-width unicode '<U<n>' (decoded to
 * UTF-8 strings); Fortran-order arrays are transposed to C order; 0-d and empty arrays. Anything else
 * (object arrays, structured dtypes, byte strings...) is NOT_IMPLEMENTED; a malformed header, a shape that
 * overflows, or a data size that differs from what the header promises is INVALID_ARG.
 * .npy write: version 1.0, little-endian, C order, 64-byte aligned header; strings as '<U<n>';
 * bfloat16/float8/int4/... have no NumPy dtype and are refused (NOT_IMPLEMENTED).
 * .npz: a zip of .npy entries ("x.npy" -> tensor "x"); STORED and DEFLATE entries are read (CRC checked),
 * written STORED.
 * Every tensor returned owns its data (mrt_tensor_alloc): free it with mrt_tensor_release. */
#pragma once

#include <stddef.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

mrt_status mrt_npy_read_file(const char *path, mrt_tensor *out);
/* Decode .npy bytes already in memory. `what` names the source in error messages (may be NULL). */
mrt_status mrt_npy_decode(const void *bytes, size_t len, const char *what, mrt_tensor *out);
mrt_status mrt_npy_write_file(const char *path, const mrt_tensor *t);
/* Encode into a malloc'd buffer. */
mrt_status mrt_npy_encode(const mrt_tensor *t, void **bytes, size_t *len);

/* Read every array of an .npz: *n arrays, *names[i] (malloc'd) and *tensors[i] (owned). Free each name and
   tensor, then both arrays. On failure nothing is returned (all outputs zeroed). */
mrt_status mrt_npz_read_file(const char *path, int *n, char ***names, mrt_tensor **tensors);
/* The same from bytes in memory; `path` only names the source in messages. */
mrt_status mrt_npz_decode(const void *bytes, size_t len, const char *path, int *n, char ***names,
                          mrt_tensor **tensors);
mrt_status mrt_npz_write_file(const char *path, int n, const char *const *names, const mrt_tensor *tensors);

#ifdef __cplusplus
}
#endif
