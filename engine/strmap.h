/* A small string -> int hash map (open addressing, keys copied). Used for value-name lookup. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_strmap {
    size_t cap;   /* power of two, or 0 */
    size_t count;
    char **keys;  /* NULL = empty slot */
    int *vals;
} mrt_strmap;

void mrt_strmap_init(mrt_strmap *m);
void mrt_strmap_clear(mrt_strmap *m);
/* Insert or overwrite. */
mrt_status mrt_strmap_put(mrt_strmap *m, const char *key, int val);
/* true and *val set when found. */
bool mrt_strmap_get(const mrt_strmap *m, const char *key, int *val);

#ifdef __cplusplus
}
#endif
