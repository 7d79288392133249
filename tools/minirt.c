/* minirt command-line tool: dispatch and shared helpers. */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "tools/cli.h"

static const char usage[] =
    "usage: minirt <command> [options]\n"
    "\n"
    "commands:\n"
    "  run MODEL [--input [NAME=]PATH]... [--output-dir DIR]   run a model on inputs (.npy, .pb, .npz)\n"
    "  info MODEL                                             inputs, outputs, opsets and nodes of a model\n"
    "  check MODEL...                                         validate as the ONNX checker does; list every problem\n"
    "  ops                                                    the operator table\n"
    "  conformance [--json FILE] [--require LIST] DIR...      run ONNX backend node tests\n"
    "  compare A B [--atol X] [--rtol X] [--json FILE]        compare tensors (.npy/.npz/dump folders)\n"
    "  diff MODEL --input ... [--against fp64|cpu|DIR]        first diverging node (chained + teacher-forced)\n"
    "  bench MODEL [--input ...] [--json F] [--profile F]     latency statistics, per-node profile\n"
    "\n"
    "Run 'minirt <command> --help' for the options of a command.\n";

int main(int argc, char **argv)
{
    cli_prefer_avx512_blas(argv);
    if (argc < 2) {
        fputs(usage, stderr);
        return MRT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "ops") == 0) return cmd_ops(argc - 1, argv + 1);
    if (strcmp(cmd, "conformance") == 0) return cmd_conformance(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0) return cmd_diff(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return MRT_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("minirt %s (%s)\n", MRT_VERSION_STRING, mrt_git_commit);
        return MRT_EXIT_OK;
    }
    cli_error("unknown command '%s' (try 'minirt --help')", cmd);
    return MRT_EXIT_USAGE;
}
