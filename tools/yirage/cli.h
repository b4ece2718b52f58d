/* The command-line tool's commands (cli.c), for the programs that run them: `yirage` and
 * `yirage-mpi`. Built on the public C ABI (yirage.h) only. */
#ifndef YIRAGE_TOOLS_CLI_H_
#define YIRAGE_TOOLS_CLI_H_

#include <stddef.h>
#include <stdint.h>

#include "yirage.h"

enum { EXIT_WORK_FAILED = 1, EXIT_USAGE = 2 };

/* The command line, parsed. */
typedef struct options {
  const char *command, *graph, *backend, *output, *cache, *reference, *format, *candidates;
  const char *target;     /* superoptimize for this built-in target without a device; NULL: the device's */
  const char *checkpoint; /* yirage-mpi: the folder of finished work units; NULL: none */
  const char *trace;      /* yirage-mpi: where each unit ran and when (a TSV file); NULL: none */
  const char *plugins[16];
  size_t num_plugins;
  int32_t device;
  double budget;
  uint32_t threads, top_k, repeats, max_inputs; /* max_inputs 0: the library's default */
  uint32_t max_block_ops, max_kernel_ops;       /* 0: the library's defaults */
  uint32_t units;                               /* yirage-mpi: work units to plan (0: its default) */
  uint32_t max_units;                           /* yirage-mpi: stop after this many units (0: no limit) */
  int quiet, cold, remeasure, isolated, plan;
} options;

/* How the running program searches. */
typedef struct cli_engine {
  const char *program; /* in messages and the usage */
  /* In place of yirage_superoptimize (NULL: it): the same contract, for the command line `o`.
   * A program with one takes only the superoptimize command, and the sharding options. */
  yirage_status (*superoptimize)(const options *o, const yirage_graph *graph, const yirage_search_options *so,
                                 yirage_search_result **out_result);
} cli_engine;

/* Runs the command line; returns the exit status (or exits with it). `engine` NULL: yirage's. */
int cli_main(int argc, char **argv, const cli_engine *engine);

/* "<program>: <message>" on stderr. */
void cli_fail(const char *format, ...);
/* Where `status` is an error: prints it with the last yirage error for `what`, and exits. */
void cli_check(yirage_status status, const char *what);

#endif /* YIRAGE_TOOLS_CLI_H_ */
