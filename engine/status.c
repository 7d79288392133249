#include "engine/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MRT_ERROR_LEN 4096

static _Thread_local char last_error[MRT_ERROR_LEN];

const char *mrt_last_error(void) { return last_error; }

void mrt_clear_error(void) { last_error[0] = '\0'; }

const char *mrt_status_name(mrt_status status)
{
    switch (status) {
    case MRT_STATUS_OK: return "ok";
    case MRT_STATUS_INVALID_ARG: return "invalid argument";
    case MRT_STATUS_INVALID_MODEL: return "invalid model";
    case MRT_STATUS_NOT_IMPLEMENTED: return "not implemented";
    case MRT_STATUS_OUT_OF_MEMORY: return "out of memory";
    case MRT_STATUS_DEVICE_ERROR: return "device error";
    case MRT_STATUS_IO_ERROR: return "I/O error";
    }
    return "unknown status";
}

mrt_status mrt_fail(mrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return status;
}

mrt_status mrt_fail_prefix(mrt_status status, const char *fmt, ...)
{
    char prefix[1024], old[MRT_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof(old));
    size_t lp = strlen(prefix), lo = strlen(old);
    if (lp > MRT_ERROR_LEN - 1) lp = MRT_ERROR_LEN - 1;
    if (lo > MRT_ERROR_LEN - 1 - lp) lo = MRT_ERROR_LEN - 1 - lp;
    memcpy(last_error, prefix, lp);
    memcpy(last_error + lp, old, lo);
    last_error[lp + lo] = '\0';
    return status;
}
