/* The command-line tool's commands (docs/cli.md), shared by `yirage` (yirage.c) and `yirage-mpi`
 * (tools/yirage-mpi), which searches over MPI ranks. Built on the public C ABI (yirage.h) only.
 *
 *   yirage devices [--isolated]
 *   yirage superoptimize GRAPH --backend NAME [-o OUT] [...]
 *   yirage run GRAPH --backend NAME [--reference GRAPH]
 *   yirage bench GRAPH --backend NAME [...]
 *   yirage show GRAPH [--format text|dot|svg] [-o FILE]
 *
 * Exit status: 0 success; 1 the work failed (an error, or a kernel whose output is wrong);
 * 2 the command line is wrong. Errors go to stderr as "yirage: <message>". */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The tool running: its name in messages and how it searches. */
static cli_engine engine = {"yirage", NULL};

/* The commands, in the order the usage lists them. */
typedef struct command_help {
  const char *name, *operand, *summary;
} command_help;

static const command_help kCommands[] = {
    {"devices", "", "list backends, their devices and properties"},
    {"superoptimize", "GRAPH", "search for a faster equivalent graph, profile it, save it"},
    {"run", "GRAPH", "compile GRAPH, run it on random inputs, check it, time it"},
    {"bench", "GRAPH", "superoptimize, then time the original against the result"},
    {"show", "GRAPH", "print the graph and its µGraphs, or draw them"},
};

/* Each option's lines in the usage and the commands it applies to (`yirage COMMAND --help`
 * lists those only). */
typedef struct option_help {
  const char *commands, *text;
} option_help;

static const option_help kOptions[] = {
    {"superoptimize run bench", "  --backend NAME      backend plugin (default cpu)\n"},
    {"superoptimize run bench", "  --device N          device index (default 0)\n"},
    {"devices superoptimize run bench", "  --plugin PATH       load this plugin file too (repeatable)\n"},
    {"devices",
     "  --isolated          devices: load each plugin first in a child process and skip one that\n"
     "                      crashes, exits or hangs there (YIRAGE_PLUGIN_PROBE=isolated)\n"},
    {"superoptimize show",
     "  -o, --output FILE   superoptimize: where to save the best graph (.yrg binary, .json text);\n"
     "                      show: where to write (default stdout)\n"},
    {"show",
     "  --format FORMAT     show: text (one line per operator, the default), dot (a Graphviz\n"
     "                      picture of the graph and its µGraphs) or svg (that picture drawn by\n"
     "                      Graphviz's `dot`, which must be on PATH)\n"},
    {"superoptimize bench", "  --budget SECONDS    search time budget (default 60)\n"},
    {"superoptimize bench",
     "  --max-block-ops N   operators per thread-block graph, 1..16 (default 8): each one more\n"
     "                      multiplies the search's work\n"
     "  --max-kernel-ops N  kernel operators per candidate, 1..8 (default 2)\n"},
    {"superoptimize",
     "  --target NAME       superoptimize: search for this built-in target (h100, cpu, ...) with no\n"
     "                      device: candidates ranked by the cost model, nothing profiled\n"},
    {"sharded",
     "  --checkpoint DIR    keep each finished work unit in DIR/<plan id>/; a run with the same\n"
     "                      graph and options resumes from it, redoing no finished unit\n"
     "  --units N           plan at least N work units (default 2048)\n"
     "  --max-units N       stop after N units have finished (checkpointed) in this run\n"
     "  --trace FILE        write where and when each unit ran, and each rank's planning and\n"
     "                      rank 0's merge, to FILE (tab-separated, seconds since the start)\n"},
    {"superoptimize bench", "  --threads N         search threads (default: all cores)\n"},
    {"superoptimize bench", "  --top-k K           candidates profiled on the device (default 4)\n"},
    {"superoptimize bench",
     "  --max-inputs N      tensors one fused operator may read, 1..16 (default 4; a graph\n"
     "                      with more inputs fuses in parts, docs/search.md \"Options\")\n"},
    {"superoptimize run bench", "  --repeats N         timed runs per measurement (default 10)\n"},
    {"run bench",
     "  --cold              run, bench: before each timed run, flush the device's L2 (its size\n"
     "                      as the device reports it) so that runs start with cold caches and\n"
     "                      the timing holds the device's time alone (as the search's profiling)\n"},
    {"superoptimize bench",
     "  --cache DIR         search result cache folder: a request profiled before on this\n"
     "                      device and plugin build is answered from it, nothing measured\n"},
    {"superoptimize bench", "  --remeasure         superoptimize, bench: profile a cached answer again\n"},
    {"run", "  --reference GRAPH   run: check against this graph instead of GRAPH itself\n"},
    {"run",
     "  --plan              run: first print how a run launches (its device launches, operators\n"
     "                      run as one program, recordings)\n"},
    {"superoptimize",
     "  --candidates DIR    superoptimize: also save every measured candidate there (DIR/N.yrg,\n"
     "                      N its rank) with DIR/candidates.tsv: rank, estimate, measured median,\n"
     "                      fastest and slowest run (seconds; -1: none), description\n"},
    {"superoptimize bench", "  --quiet             no progress bar\n"},
    {"devices superoptimize run bench show", "  -h, --help          this usage\n"},
};

static const char *kGraphNote = "GRAPH is a yirage graph file: binary (.yrg) or JSON.\n";

static const command_help *find_command(const char *name) {
  for (size_t i = 0; i < sizeof kCommands / sizeof kCommands[0]; ++i) {
    if (!strcmp(kCommands[i].name, name)) return &kCommands[i];
  }
  return NULL;
}

/* Whether `name` is one of the space-separated words of `list`. */
static int listed(const char *list, const char *name) {
  const size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  }
  return 0;
}

/* The usage on stdout: every command and option, or (`command` non-NULL) one command's. */
static void print_usage(const command_help *command) {
  if (command == NULL) {
    printf("usage: %s <command> [options]\n\ncommands:\n", engine.program);
    for (size_t i = 0; i < sizeof kCommands / sizeof kCommands[0]; ++i) {
      if (engine.superoptimize && strcmp(kCommands[i].name, "superoptimize") != 0) continue;
      char left[64];
      snprintf(left, sizeof left, "%s %s", kCommands[i].name, kCommands[i].operand);
      printf("  %-28s %s\n", left, kCommands[i].summary);
    }
    printf("(%s <command> --help: that command's options)\n", engine.program);
  } else {
    printf("usage: %s %s%s%s [options]\n\n%s\n", engine.program, command->name, command->operand[0] ? " " : "",
           command->operand, command->summary);
  }
  printf("\noptions:\n");
  for (size_t i = 0; i < sizeof kOptions / sizeof kOptions[0]; ++i) {
    const int shown = command == NULL || listed(kOptions[i].commands, command->name);
    if (listed(kOptions[i].commands, "sharded") ? engine.superoptimize != NULL : shown) fputs(kOptions[i].text, stdout);
  }
  if (command == NULL || command->operand[0]) fputs(kGraphNote, stdout);
}

void cli_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "%s: ", engine.program);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

void cli_check(yirage_status status, const char *what) {
  if (status == YIRAGE_OK) return;
  cli_fail("%s: %s (%s)", what, yirage_last_error_message(), yirage_status_name(status));
  exit(EXIT_WORK_FAILED);
}

static void usage_error(const char *format, const char *arg) {
  fprintf(stderr, "%s: ", engine.program);
  fprintf(stderr, format, arg);
  fprintf(stderr, "\n(%s --help shows the usage)\n", engine.program);
  exit(EXIT_USAGE);
}

static double number_arg(const char *flag, const char *text, double lo) {
  char *end = NULL;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo)) usage_error("bad value for %s", flag);
  return v;
}

/* A whole number in [lo, hi], for options that are counts or indices (never truncated). */
static uint32_t count_arg(const char *flag, const char *text, uint32_t lo, uint32_t hi) {
  const double v = number_arg(flag, text, lo);
  if (v > hi || v != (double)(uint32_t)v) {
    char message[256];
    snprintf(message, sizeof message, "%s must be a whole number from %u to %u, not %s", flag, lo, hi, text);
    usage_error("%s", message);
  }
  return (uint32_t)v;
}

static void parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->backend = "cpu";
  o->format = "text";
  o->budget = 60;
  o->top_k = 4;
  o->repeats = 10;
  if (argc < 2) usage_error("%s", "no command given");
  o->command = argv[1];
  if (!strcmp(o->command, "-h") || !strcmp(o->command, "--help") || !strcmp(o->command, "help")) {
    const command_help *topic = argc > 2 ? find_command(argv[2]) : NULL;
    if (argc > 2 && topic == NULL) usage_error("unknown command %s", argv[2]);
    print_usage(topic);
    exit(0);
  }
  const command_help *command = find_command(o->command);
  if (command == NULL) usage_error("unknown command %s", o->command);
  if (engine.superoptimize && strcmp(o->command, "superoptimize") != 0)
    usage_error("%s runs superoptimize only; yirage runs the other commands", engine.program);
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      print_usage(command);
      exit(0);
    }
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES_VALUE()                                    \
  if (value == NULL) usage_error("%s needs a value", a); \
  ++i
    if (!strcmp(a, "--backend")) {
      TAKES_VALUE();
      o->backend = value;
    } else if (!strcmp(a, "--device")) {
      TAKES_VALUE();
      o->device = (int32_t)count_arg(a, value, 0, INT32_MAX);
    } else if (!strcmp(a, "--plugin")) {
      TAKES_VALUE();
      if (o->num_plugins == 16) usage_error("%s", "at most 16 --plugin options");
      o->plugins[o->num_plugins++] = value;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      TAKES_VALUE();
      o->output = value;
    } else if (!strcmp(a, "--budget")) {
      TAKES_VALUE();
      o->budget = number_arg(a, value, 1e-3);
    } else if (!strcmp(a, "--threads")) {
      TAKES_VALUE();
      o->threads = count_arg(a, value, 0, 4096);
    } else if (!strcmp(a, "--top-k")) {
      TAKES_VALUE();
      o->top_k = count_arg(a, value, 1, 1u << 20);
    } else if (!strcmp(a, "--max-inputs")) {
      TAKES_VALUE();
      o->max_inputs = count_arg(a, value, 1, 16);
    } else if (!strcmp(a, "--repeats")) {
      TAKES_VALUE();
      o->repeats = count_arg(a, value, 1, 1u << 24);
    } else if (!strcmp(a, "--cache")) {
      TAKES_VALUE();
      o->cache = value;
    } else if (!strcmp(a, "--max-block-ops")) {
      TAKES_VALUE();
      o->max_block_ops = count_arg(a, value, 1, 16);
    } else if (!strcmp(a, "--max-kernel-ops")) {
      TAKES_VALUE();
      o->max_kernel_ops = count_arg(a, value, 1, 8);
    } else if (!strcmp(a, "--target")) {
      TAKES_VALUE();
      o->target = value;
    } else if (!strcmp(a, "--checkpoint") && engine.superoptimize) {
      TAKES_VALUE();
      o->checkpoint = value;
    } else if (!strcmp(a, "--units") && engine.superoptimize) {
      TAKES_VALUE();
      o->units = count_arg(a, value, 1, 1u << 24);
    } else if (!strcmp(a, "--trace") && engine.superoptimize) {
      TAKES_VALUE();
      o->trace = value;
    } else if (!strcmp(a, "--max-units") && engine.superoptimize) {
      TAKES_VALUE();
      o->max_units = count_arg(a, value, 1, 1u << 30);
    } else if (!strcmp(a, "--candidates")) {
      TAKES_VALUE();
      o->candidates = value;
    } else if (!strcmp(a, "--reference")) {
      TAKES_VALUE();
      o->reference = value;
    } else if (!strcmp(a, "--format")) {
      TAKES_VALUE();
      if (strcmp(value, "text") && strcmp(value, "dot") && strcmp(value, "svg"))
        usage_error("--format must be text, dot or svg, not %s", value);
      o->format = value;
    } else if (!strcmp(a, "--quiet"))
      o->quiet = 1;
    else if (!strcmp(a, "--cold"))
      o->cold = 1;
    else if (!strcmp(a, "--plan") && !strcmp(o->command, "run"))
      o->plan = 1;
    else if (!strcmp(a, "--remeasure"))
      o->remeasure = 1;
    else if (!strcmp(a, "--isolated"))
      o->isolated = 1;
    else if (a[0] == '-')
      usage_error("unknown option %s", a);
    else if (o->graph == NULL)
      o->graph = a;
    else
      usage_error("unexpected argument %s", a);
#undef TAKES_VALUE
  }
  const int needs_graph = strcmp(o->command, "devices") != 0;
  if (needs_graph && o->graph == NULL) usage_error("%s needs a graph file", o->command);
  if (!needs_graph && o->graph != NULL) usage_error("devices takes no graph (%s)", o->graph);
  if (needs_graph && o->isolated) usage_error("--isolated is an option of devices, not %s", o->command);
  if (o->candidates && strcmp(o->command, "superoptimize") != 0)
    usage_error("--candidates is an option of superoptimize, not %s", o->command);
  if (o->target && strcmp(o->command, "superoptimize") != 0)
    usage_error("--target is an option of superoptimize, not %s", o->command);
  if (o->target && o->remeasure) usage_error("%s", "--target searches without a device: nothing to remeasure");
  if (o->max_inputs && strcmp(o->command, "superoptimize") != 0 && strcmp(o->command, "bench") != 0)
    usage_error("--max-inputs is an option of superoptimize and bench, not %s", o->command);
}

static yirage_context *open_context(const options *o) {
  yirage_context_options co;
  yirage_context_options_init(&co);
  co.plugin_paths = o->plugins;
  co.num_plugin_paths = o->num_plugins;
  yirage_context *context = NULL;
  cli_check(yirage_context_create(&co, &context), "loading backends");
  return context;
}

static const yirage_device *open_device(yirage_context *context, const options *o) {
  const yirage_device *device = NULL;
  cli_check(yirage_context_get_device(context, o->backend, o->device, &device), "choosing the device");
  return device;
}

static yirage_graph *load_graph(const char *path) {
  yirage_graph *graph = NULL;
  cli_check(yirage_graph_load(path, &graph), path);
  return graph;
}

static void print_seconds(double s) {
  if (s < 0)
    printf("%10s", "-");
  else if (s < 1e-3)
    printf("%8.1f us", s * 1e6);
  else if (s < 1)
    printf("%8.2f ms", s * 1e3);
  else
    printf("%8.2f s ", s);
}

/* A time (s >= 0) as text in `out`: "25.6 us", "2.59 ms", "1.20 s". */
static const char *seconds_text(double s, char *out, size_t n) {
  if (s < 1e-3)
    snprintf(out, n, "%.1f us", s * 1e6);
  else if (s < 1)
    snprintf(out, n, "%.2f ms", s * 1e3);
  else
    snprintf(out, n, "%.2f s", s);
  return out;
}

/* The spread of a measurement's timed runs, "25.1 us to 27.0 us over 20 runs"; "" when it has
 * none recorded. */
static const char *spread_text(double min, double max, uint32_t samples, char *out, size_t n) {
  char a[32], b[32];
  if (samples == 0 || min < 0 || max < 0)
    snprintf(out, n, "%s", "");
  else if (samples == 1)
    snprintf(out, n, "one run");
  else
    snprintf(out, n, "%s to %s over %u runs", seconds_text(min, a, sizeof a), seconds_text(max, b, sizeof b), samples);
  return out;
}

/* A spread this wide says the machine was busy while the runs were timed. */
static int busy_spread(double min, double max) {
  return min > 0 && max > 2 * min;
}

/* ---- devices ---- */

static int cmd_devices(const options *o) {
  /* The library reads the probe mode from the environment when the context is created. */
  if (o->isolated && setenv("YIRAGE_PLUGIN_PROBE", "isolated", 1) != 0) {
    cli_fail("cannot set YIRAGE_PLUGIN_PROBE: %s", strerror(errno));
    return EXIT_WORK_FAILED;
  }
  yirage_context *context = open_context(o);
  size_t n = 0;
  cli_check(yirage_context_num_backends(context, &n), "listing backends");
  if (n == 0) printf("no backends found (set YIRAGE_BACKEND_PATH or pass --plugin)\n");
  for (size_t b = 0; b < n; ++b) {
    yirage_backend_info info;
    info.struct_size = sizeof info;
    cli_check(yirage_context_backend_info(context, b, &info), "reading a backend");
    printf("%s %s (%s): %d device(s)%s%s\n", info.name, info.version, info.path, info.num_devices,
           info.num_devices ? "" : ": ", info.unavailable_reason);
    for (int32_t d = 0; d < info.num_devices; ++d) {
      const yirage_device *device = NULL;
      cli_check(yirage_context_get_device(context, info.name, d, &device), "opening a device");
      yirage_device_info di;
      memset(&di, 0, sizeof di);
      di.struct_size = sizeof di;
      cli_check(yirage_device_get_info(device, &di), "reading a device");
      const yirage_target_properties *t = &di.target;
      printf("  [%d] %s\n", d, di.name);
      printf("      compute units %lld, shared memory per block %lld KiB, warp width %lld\n",
             (long long)t->compute_units, (long long)(t->shared_memory_per_block / 1024), (long long)t->warp_width);
      printf("      memory %.1f GiB at %.1f GB/s, L2 %lld KiB, peak %.1f TFLOP/s (float32)\n",
             (double)t->memory_bytes / (1 << 30), t->memory_bandwidth / 1e9, (long long)(t->l2_bytes / 1024),
             t->peak_flops_float32 / 1e12);
      printf("      dtypes:%s%s%s\n", di.dtypes & (1u << YIRAGE_FLOAT16) ? " float16" : "",
             di.dtypes & (1u << YIRAGE_BFLOAT16) ? " bfloat16" : "",
             di.dtypes & (1u << YIRAGE_FLOAT32) ? " float32" : "");
    }
  }
  const char *errors = NULL;
  cli_check(yirage_context_load_errors(context, &errors), "reading load errors");
  if (errors[0]) printf("skipped:\n%s", errors);
  yirage_context_release(context);
  return 0;
}

/* ---- superoptimize ---- */

typedef struct progress_state {
  double budget;
} progress_state;

static void draw_progress(const yirage_search_progress *p, void *user) {
  const progress_state *s = (const progress_state *)user;
  const int width = 30;
  double fraction = p->seconds / s->budget;
  if (fraction > 1) fraction = 1;
  const int filled = (int)(fraction * width);
  fprintf(stderr, "\r[");
  for (int i = 0; i < width; ++i) fputc(i < filled ? '#' : '.', stderr);
  fprintf(stderr, "] %5.1f/%.0f s  %lld states  %lld candidates ", p->seconds, s->budget, (long long)p->states,
          (long long)p->candidates);
  fflush(stderr);
}

/* Runs the search with profiling on `device` (NULL: for o->target, unprofiled); exits on failure
 * or when nothing was found. */
static yirage_search_result *search(const options *o, const yirage_graph *graph, const yirage_device *device) {
  yirage_search_options so;
  yirage_search_options_init(&so);
  yirage_target_properties target;
  if (o->target) {
    target.struct_size = sizeof target;
    cli_check(yirage_target_builtin(o->target, &target), "--target");
    so.target = &target;
  }
  so.time_budget_seconds = o->budget;
  so.threads = o->threads;
  so.device = device;
  so.profile_top_k = o->top_k;
  if (o->max_inputs != 0) so.max_customized_inputs = o->max_inputs;
  if (o->max_block_ops != 0) so.max_block_ops = o->max_block_ops;
  if (o->max_kernel_ops != 0) so.max_kernel_ops = o->max_kernel_ops;
  so.profile_repeats = o->repeats;
  so.cache_dir = o->cache;
  so.remeasure = o->remeasure;
  progress_state state = {o->budget};
  const int bar = !o->quiet && isatty(STDERR_FILENO);
  if (bar) {
    so.progress = draw_progress;
    so.progress_user_data = &state;
  }
  yirage_search_result *result = NULL;
  /* The time printed is the call's: the library's figure covers only a sharded search's merge. */
  struct timespec began, ended;
  clock_gettime(CLOCK_MONOTONIC, &began);
  const yirage_status status =
      engine.superoptimize ? engine.superoptimize(o, graph, &so, &result) : yirage_superoptimize(graph, &so, &result);
  clock_gettime(CLOCK_MONOTONIC, &ended);
  const double seconds = (double)(ended.tv_sec - began.tv_sec) + 1e-9 * (double)(ended.tv_nsec - began.tv_nsec);
  if (bar) fputs("\n", stderr);
  if (status == YIRAGE_ERROR_TIMEOUT) {
    cli_fail("%s", yirage_last_error_message()); /* keeps what was found */
  } else {
    cli_check(status, "searching"); /* the library's message names superoptimize itself */
  }
  yirage_search_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  cli_check(yirage_search_result_stats(result, &stats), "reading statistics");
  printf("search: %.1f s%s, %lld states, %lld candidates, %lld fingerprint checks (%.1f s)", seconds,
         stats.from_cache ? " (from the cache)" : "", (long long)stats.states, (long long)stats.candidates,
         (long long)stats.fingerprint_checks, stats.fingerprint_seconds);
  if (stats.unbuildable > 0) printf(", %lld the backend cannot build", (long long)stats.unbuildable);
  printf("\n");
  size_t profiled = 0;
  cli_check(yirage_search_result_num_profiled(result, &profiled), "reading profiles");
  int busy = 0;
  if (profiled > 0)
    printf("\n  #       estimate     measured  %-32s  rel.error     result  description\n", "spread of the timed runs");
  for (size_t i = 0; i < profiled; ++i) {
    yirage_search_profile_record r;
    r.struct_size = sizeof r;
    cli_check(yirage_search_result_profiled(result, i, &r), "reading a profile");
    char estimate[32], measured[32], spread[96], error[32];
    if (r.estimated_seconds >= 0)
      seconds_text(r.estimated_seconds, estimate, sizeof estimate);
    else
      snprintf(estimate, sizeof estimate, "not estimated");
    if (r.measured_seconds >= 0)
      seconds_text(r.measured_seconds, measured, sizeof measured);
    else
      snprintf(measured, sizeof measured, "not timed");
    if (r.relative_error >= 0)
      snprintf(error, sizeof error, "%.1e", r.relative_error);
    else
      snprintf(error, sizeof error, "not checked");
    spread_text(r.min_seconds, r.max_seconds, r.samples, spread, sizeof spread);
    busy = busy || (r.kept && busy_spread(r.min_seconds, r.max_seconds));
    printf("%3zu  %13s  %11s  %-32s  %-12s  %-6s  %s\n", i, estimate, measured, spread, error, r.kept ? "ok" : "DROP",
           r.description);
    if (!r.kept) printf("        dropped: %s\n", r.error);
  }
  if (busy)
    printf(
        "  (a run took over twice the fastest: the machine was busy while they were timed; --remeasure on a quiet "
        "machine gives steadier figures)\n");
  if (profiled == 0 && stats.from_cache)
    printf("  (a cached profiled answer: nothing measured now; --remeasure measures)\n");
  size_t n = 0;
  cli_check(yirage_search_result_num_candidates(result, &n), "reading candidates");
  if (n == 0) {
    /* The table above says why each measured graph was dropped. */
    cli_fail(status == YIRAGE_ERROR_TIMEOUT
                 ? "no correct candidate was found (the budget ran out; try a larger --budget)"
                 : "no correct candidate was found (the table above says why each was dropped)");
    exit(EXIT_WORK_FAILED);
  }
  return result;
}

static yirage_graph *best_candidate(const yirage_search_result *result, yirage_search_candidate_info *info) {
  yirage_graph *best = NULL;
  info->struct_size = sizeof *info;
  cli_check(yirage_search_result_candidate(result, 0, &best, info), "reading the best candidate");
  return best;
}

/* Exits unless `path` can be written: its folder exists and takes new files, and a file already
 * there may be replaced. Checked before a search of minutes, not after it. */
static void check_writable(const char *path) {
  char *copy = strdup(path);
  const char *folder = dirname(copy);
  const int writable = access(folder, W_OK | X_OK) == 0 && (access(path, F_OK) != 0 || access(path, W_OK) == 0);
  if (!writable) {
    cli_fail("cannot write %s: %s", path, strerror(errno));
    exit(EXIT_WORK_FAILED);
  }
  free(copy);
}

/* Saves every measured candidate of `result` (every candidate where `all`: a search without a
 * device, whose measured column is -1) in `folder` (created if missing) as N.yrg, and their
 * figures in candidates.tsv: what a study of the cost model against the device needs. */
static void save_candidates(const yirage_search_result *result, const char *folder, int all) {
  size_t n = 0;
  cli_check(yirage_search_result_num_candidates(result, &n), "reading candidates");
  char path[4096];
  snprintf(path, sizeof path, "%s/candidates.tsv", folder);
  FILE *table = fopen(path, "w");
  if (table == NULL) {
    cli_fail("cannot write %s: %s", path, strerror(errno));
    exit(EXIT_WORK_FAILED);
  }
  fprintf(table, "rank\testimate\tmeasured\tfastest\tslowest\tdescription\n");
  for (size_t i = 0; i < n; ++i) {
    yirage_graph *graph = NULL;
    yirage_search_candidate_info info;
    info.struct_size = sizeof info;
    cli_check(yirage_search_result_candidate(result, i, &graph, &info), "reading a candidate");
    if (all || info.measured_seconds >= 0) {
      snprintf(path, sizeof path, "%s/%zu.yrg", folder, i);
      cli_check(yirage_graph_save(graph, path), path);
      fprintf(table, "%zu\t%.9g\t%.9g\t%.9g\t%.9g\t%s\n", i, info.estimated_seconds, info.measured_seconds,
              info.measured_min_seconds, info.measured_max_seconds, info.description);
    }
    yirage_graph_release(graph);
  }
  if (fclose(table) != 0) {
    cli_fail("cannot write %s/candidates.tsv: %s", folder, strerror(errno));
    exit(EXIT_WORK_FAILED);
  }
  printf("%s saved in %s\n", all ? "candidates" : "measured candidates", folder);
}

static int cmd_superoptimize(const options *o) {
  if (o->output) check_writable(o->output);
  if (o->candidates) {
    if (mkdir(o->candidates, 0777) != 0 && errno != EEXIST) {
      cli_fail("cannot create %s: %s", o->candidates, strerror(errno));
      exit(EXIT_WORK_FAILED);
    }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/candidates.tsv", o->candidates);
    check_writable(probe);
  }
  yirage_graph *graph = load_graph(o->graph);
  /* With --target nothing runs here: no backend is loaded. */
  yirage_context *context = o->target ? NULL : open_context(o);
  const yirage_device *device = o->target ? NULL : open_device(context, o);
  yirage_search_result *result = search(o, graph, device);
  yirage_search_candidate_info info;
  yirage_graph *best = best_candidate(result, &info);
  char measured[32], spread[96];
  if (info.measured_seconds >= 0) {
    spread_text(info.measured_min_seconds, info.measured_max_seconds, info.measured_samples, spread, sizeof spread);
    printf("\nbest: %s, measured %s%s%s%s\n", info.description,
           seconds_text(info.measured_seconds, measured, sizeof measured), *spread ? " (" : "", spread,
           *spread ? ")" : "");
  } else {
    printf("\nbest: %s, not measured (%s)\n", info.description, info.not_measured);
  }
  if (o->output) {
    cli_check(yirage_graph_save(best, o->output), o->output);
    printf("saved to %s\n", o->output);
  }
  if (o->candidates) save_candidates(result, o->candidates, o->target != NULL);
  yirage_graph_release(best);
  yirage_search_result_release(result);
  yirage_graph_release(graph);
  yirage_context_release(context);
  return 0;
}

/* ---- run and bench ---- */

static int measure(const options *o, const yirage_device *device, const yirage_graph *graph,
                   const yirage_graph *reference, yirage_measurement *m) {
  yirage_kernel *kernel = NULL;
  cli_check(yirage_compile(graph, device, NULL, &kernel), "compile");
  if (o->plan) {
    yirage_blob *plan = NULL;
    cli_check(yirage_kernel_describe(kernel, &plan), "describe");
    fputs((const char *)yirage_blob_data(plan), stdout);
    yirage_blob_release(plan);
  }
  yirage_measure_options mo;
  yirage_measure_options_init(&mo);
  mo.repeats = o->repeats;
  if (o->cold) {
    yirage_device_info di;
    memset(&di, 0, sizeof di);
    di.struct_size = sizeof di;
    cli_check(yirage_device_get_info(device, &di), "reading the device");
    if (di.target.l2_bytes <= 0) {
      cli_fail("--cold: %s reports no L2 size", di.name);
      exit(EXIT_WORK_FAILED);
    }
    mo.flush_bytes = (uint64_t)di.target.l2_bytes;
  }
  m->struct_size = sizeof *m;
  cli_check(yirage_kernel_measure(kernel, reference, &mo, m), "measure");
  yirage_kernel_release(kernel);
  return m->correct;
}

static int cmd_run(const options *o) {
  yirage_graph *graph = load_graph(o->graph);
  yirage_graph *reference = o->reference ? load_graph(o->reference) : NULL;
  yirage_context *context = open_context(o);
  const yirage_device *device = open_device(context, o);
  yirage_measurement m;
  const int ok = measure(o, device, graph, reference, &m);
  if (ok) {
    printf("correct (relative error %.2e); median ", m.relative_error);
    print_seconds(m.median_seconds);
    printf(", min ");
    print_seconds(m.min_seconds);
    printf(" over %u runs on %s device %d%s\n", o->repeats, o->backend, o->device,
           o->cold ? ", L2 flushed before each" : "");
  } else {
    cli_fail("wrong result: %s", m.error);
  }
  yirage_graph_release(reference);
  yirage_graph_release(graph);
  yirage_context_release(context);
  return ok ? 0 : EXIT_WORK_FAILED;
}

static void print_bench_row(const char *name, const yirage_measurement *m, int ok) {
  printf("%-16s ", name);
  print_seconds(m->median_seconds);
  printf("   ");
  print_seconds(m->min_seconds);
  printf(" %10.1e%s\n", m->relative_error, ok ? "" : "  WRONG");
}

static int cmd_bench(const options *o) {
  yirage_graph *graph = load_graph(o->graph);
  yirage_context *context = open_context(o);
  const yirage_device *device = open_device(context, o);
  yirage_search_result *result = search(o, graph, device);
  yirage_search_candidate_info info;
  yirage_graph *best = best_candidate(result, &info);
  yirage_measurement original, optimized;
  const int original_ok = measure(o, device, graph, graph, &original);
  const int optimized_ok = measure(o, device, best, graph, &optimized);
  printf("\n%-16s %12s %12s %10s\n", "", "median", "min", "rel.error");
  print_bench_row("original", &original, original_ok);
  print_bench_row("superoptimized", &optimized, optimized_ok);
  if (original_ok && optimized_ok) {
    printf("speedup %.2fx (original median / superoptimized median)\n",
           original.median_seconds / optimized.median_seconds);
  }
  if (!original_ok) printf("original: %s\n", original.error);
  if (!optimized_ok) cli_fail("the superoptimized graph is wrong: %s", optimized.error);
  yirage_graph_release(best);
  yirage_search_result_release(result);
  yirage_graph_release(graph);
  yirage_context_release(context);
  return optimized_ok ? 0 : EXIT_WORK_FAILED;
}

/* ---- show ---- */

/* The full path of `program` in a folder of $PATH, in `path` (size n); 0 if none has it. */
static int find_on_path(const char *program, char *path, size_t n) {
  const char *folders = getenv("PATH");
  while (folders != NULL && *folders != '\0') {
    const char *end = strchr(folders, ':');
    const size_t len = end ? (size_t)(end - folders) : strlen(folders);
    const int written = snprintf(path, n, "%.*s/%s", (int)len, len ? folders : ".", program);
    if (written > 0 && (size_t)written < n && access(path, X_OK) == 0) return 1;
    folders = end ? end + 1 : NULL;
  }
  return 0;
}

/* Writes `text` to FILE (or stdout when NULL). */
static int write_text(const char *text, const char *file) {
  FILE *out = file ? fopen(file, "w") : stdout;
  if (out == NULL) {
    cli_fail("cannot create %s: %s", file, strerror(errno));
    return EXIT_WORK_FAILED;
  }
  const int written = fputs(text, out) >= 0;
  if ((file ? fclose(out) : fflush(out)) != 0 || !written) {
    cli_fail("cannot write %s: %s", file ? file : "stdout", strerror(errno));
    return EXIT_WORK_FAILED;
  }
  return 0;
}

/* Pipes the DOT text through Graphviz's `dot -Tsvg`, which writes FILE (or stdout). */
static int draw_svg(const char *dot_text, const char *file) {
  char dot[4096];
  if (!find_on_path("dot", dot, sizeof dot)) {
    cli_fail("--format svg needs Graphviz's `dot` program (Debian: apt-get install graphviz)");
    return EXIT_WORK_FAILED;
  }
  int to_dot[2];
  if (pipe(to_dot) != 0) {
    cli_fail("cannot start %s: %s", dot, strerror(errno));
    return EXIT_WORK_FAILED;
  }
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    cli_fail("cannot start %s: %s", dot, strerror(errno));
    return EXIT_WORK_FAILED;
  }
  if (child == 0) {
    char *argv[] = {dot, "-Tsvg", file ? "-o" : NULL, (char *)file, NULL};
    dup2(to_dot[0], STDIN_FILENO);
    close(to_dot[0]);
    close(to_dot[1]);
    execv(dot, argv);
    _exit(127);
  }
  close(to_dot[0]);
  signal(SIGPIPE, SIG_IGN); /* a dot that exits early is reported by its status below */
  const size_t size = strlen(dot_text);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(to_dot[1], dot_text + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  close(to_dot[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || done < size) {
    cli_fail("%s -Tsvg failed (%s %d)", dot, WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return EXIT_WORK_FAILED;
  }
  return 0;
}

static int cmd_show(const options *o) {
  yirage_graph *graph = load_graph(o->graph);
  yirage_blob *text = NULL;
  if (!strcmp(o->format, "text"))
    cli_check(yirage_graph_describe(graph, &text), "describe");
  else
    cli_check(yirage_graph_to_dot(graph, &text), "drawing the graph");
  yirage_graph_release(graph);
  const char *chars = (const char *)yirage_blob_data(text);
  const int rc = !strcmp(o->format, "svg") ? draw_svg(chars, o->output) : write_text(chars, o->output);
  yirage_blob_release(text);
  return rc;
}

int cli_main(int argc, char **argv, const cli_engine *how) {
  if (how) engine = *how;
  options o;
  parse(argc, argv, &o);
  if (!strcmp(o.command, "devices")) return cmd_devices(&o);
  if (!strcmp(o.command, "superoptimize")) return cmd_superoptimize(&o);
  if (!strcmp(o.command, "run")) return cmd_run(&o);
  if (!strcmp(o.command, "bench")) return cmd_bench(&o);
  return cmd_show(&o); /* parse() refused any other command */
}
