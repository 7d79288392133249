/* Failure reporting: mrt_fail() records a formatted message in a thread-local buffer and returns the
 * status, so `return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (Conv): ...", ...)` is the idiom. */
#pragma once

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MRT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MRT_PRINTF(a, b)
#endif

mrt_status mrt_fail(mrt_status status, const char *fmt, ...) MRT_PRINTF(2, 3);
/* Prepend context ("while loading X: ") to the current message and return status unchanged. */
mrt_status mrt_fail_prefix(mrt_status status, const char *fmt, ...) MRT_PRINTF(2, 3);
void mrt_clear_error(void);

/* Largest single allocation minirt attempts: physical memory, or MRT_MAX_ALLOC_BYTES. */
size_t mrt_alloc_limit(void);
/* OUT_OF_MEMORY naming `what` and the size when bytes exceeds the limit, before anything is attempted. */
mrt_status mrt_check_alloc(size_t bytes, const char *what);

#define MRT_TRY(expr)                            \
    do {                                         \
        mrt_status mrt_try_st_ = (expr);         \
        if (mrt_try_st_ != MRT_STATUS_OK) return mrt_try_st_; \
    } while (0)

#ifdef __cplusplus
}
#endif
