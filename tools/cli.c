/* Shared CLI helpers: error reporting and file-name sanitising. */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("minirt: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_fail_status(mrt_status st, const char *context)
{
    (void)st;
    if (context && !strstr(mrt_last_error(), context)) /* the library's message may name the file already */
        cli_error("%s: %s", context, mrt_last_error());
    else
        cli_error("%s", mrt_last_error());
    return MRT_EXIT_ERROR;
}

char *cli_sanitize_name(const char *name)
{
    char *s = strdup(name && name[0] ? name : "_");
    if (!s) return NULL;
    for (char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
        if (!ok) *p = '_';
    }
    /* "." and ".." would name directories */
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        for (char *p = s; *p; p++) *p = '_';
    return s;
}


int cli_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        buf[i] = c;
    }
    return 0;
}

/* OpenBLAS 0.3.21 does not know Zen 5 and falls back to its AVX2 kernels (about half the sgemm speed here).
   It reads OPENBLAS_CORETYPE only when it is loaded, before main: so when the CPU has AVX-512BW and the user
   did not choose, set it and re-execute once. MRT_NO_BLAS_REEXEC=1 disables this. */
void cli_prefer_avx512_blas(char **argv)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (getenv("OPENBLAS_CORETYPE") || getenv("MRT_NO_BLAS_REEXEC")) return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512f")) return;
    if (setenv("OPENBLAS_CORETYPE", "SkylakeX", 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: carry on with the default kernels */
#else
    (void)argv;
#endif
}

int cli_device_option(int argc, char **argv, int *i, mrt_session_options *opt)
{
    const char *a = argv[*i];
    if (strcmp(a, "--device") == 0 && *i + 1 < argc) {
        opt->device = argv[++*i];
        return 1;
    }
    if (strcmp(a, "--no-cpu-fallback") == 0) {
        opt->no_cpu_fallback = true;
        return 1;
    }
    if (strcmp(a, "--allow-tf32") == 0) {
        opt->allow_tf32 = true;
        return 1;
    }
    return 0;
}
