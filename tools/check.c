/* `minirt check MODEL...`: onnx.checker's rules as minirt applies them (loader/validate.c), without running
 * anything. Exit 0 when every model is valid, 1 when any has a problem (each one listed), 2 on a usage error. */
#include <stdio.h>
#include <string.h>

#include "loader/validate.h"
#include "tools/cli.h"

static const char usage[] =
    "usage: minirt check MODEL...\n"
    "\n"
    "Validate models as the ONNX checker does (full check): IR and opset versions, values defined once, inputs\n"
    "defined, ops and their required attributes, attribute types, input/output counts, subgraph nesting, and\n"
    "everything else loading refuses (initializer data, external data). Every problem is listed, one a line:\n"
    "  MODEL: error: MESSAGE                 minirt refuses the model\n"
    "  MODEL: error (minirt runs it): ...    the ONNX checker refuses it; minirt accepts it (what exporters write)\n"
    "and one line on stderr per invalid model. Exit status: 0 when every model is valid, 1 when any has a problem.\n";

int cmd_check(int argc, char **argv)
{
    int n_models = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return MRT_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("check: unknown option '%s' (try 'minirt check --help')", argv[i]);
            return MRT_EXIT_USAGE;
        }
        n_models++;
    }
    if (!n_models) {
        fputs(usage, stderr);
        return MRT_EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        mrt_problems p;
        mrt_status st = mrt_model_check_file(argv[i], &p);
        if (st) {
            mrt_problems_free(&p);
            cli_fail_status(st, argv[i]);
            bad = 1;
            continue;
        }
        for (int k = 0; k < p.n; k++)
            printf("%s: error%s: %s\n", argv[i], p.items[k].runs ? " (minirt runs it)" : "", p.items[k].message);
        if (p.n_dropped) printf("%s: ... and %d more problems\n", argv[i], p.n_dropped);
        if (p.n) {
            fflush(stdout);
            cli_error("%s: %d problem%s (%d that minirt refuses)", argv[i], p.n + p.n_dropped,
                      p.n + p.n_dropped > 1 ? "s" : "", p.n_refused);
        } else
            printf("%s: valid\n", argv[i]);
        bad |= p.n > 0;
        mrt_problems_free(&p);
    }
    return bad ? MRT_EXIT_ERROR : MRT_EXIT_OK;
}
