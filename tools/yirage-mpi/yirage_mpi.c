/* yirage-mpi — `yirage superoptimize` over MPI ranks (docs/distributed.md):
 *
 *   mpirun -np N yirage-mpi superoptimize GRAPH [the options of yirage superoptimize]
 *          [--checkpoint DIR] [--units N] [--max-units N]
 *
 * Rank 0 runs the command line (cli.c) and plans the search in work units
 * (yirage_search_plan_*); it sends every other rank the graph, the options and the target, and
 * each plans the same units. Units are handed out one at a time to whichever thread of whichever
 * rank asks (their sizes differ by orders of magnitude), rank 0's threads among them; finished
 * units come back as partial results, which rank 0 adds to its plan (checking them) and keeps in
 * the checkpoint folder. Rank 0 then merges, verifies and profiles on its device, and prints what
 * yirage superoptimize prints. Every rank runs the same build of yirage-mpi and libyirage.
 *
 * A rank that dies ends the job (MPI's default): mpirun names it; the units finished before are
 * in the checkpoint, and a run with the same graph, options and --checkpoint redoes none of them. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Messages: control (hello, requests) to rank 0 on one tag; a request's partial result and the
 * reply to it on tags of the asking thread. */
enum { TAG_JOB = 1, TAG_CONTROL = 2, TAG_PLAN_ID = 3, TAG_PARTIAL = 10000, TAG_REPLY = 20000, MAX_THREADS = 4096 };
enum { MSG_HELLO = 1, MSG_REQUEST = 2 };
enum { DEFAULT_UNITS = 2048 };

/* What rank 0 sends each rank before a search (all ranks run the same build: the structs travel
 * as bytes). stop 1: no search, finish. */
typedef struct job {
  int32_t stop;
  uint32_t min_units, threads;
  uint64_t graph_size;
  double seconds; /* the enumeration's time left when sent */
  yirage_search_options options;
  yirage_target_properties target;
  int64_t grids[64], loops[64];
} job;

/* A control message: {type, thread, unit (-1: none), finished, partial bytes, states, structures,
 * microseconds the unit ran}. */
enum { CONTROL_FIELDS = 8 };
typedef int64_t control[CONTROL_FIELDS];

static int rank = 0, ranks = 1;
static int workers_released = 0;
/* Rank 0 sent a job the other ranks are still working on: an exit now must end them too. */
static int workers_busy = 0;

static double now(void) {
  return MPI_Wtime();
}

/* Waits for a message with pauses of `pause_us`: Open MPI's blocking receive spins, and a rank
 * spinning while it waits for the next job takes a core from rank 0's merge (or, oversubscribed,
 * from the units). Returns the message's status. */
static MPI_Status wait_for(int source, int tag, long pause_us) {
  MPI_Status status;
  for (int arrived = 0;;) {
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) return status;
    const struct timespec pause = {0, pause_us * 1000};
    nanosleep(&pause, NULL);
  }
}

/* ---- what a unit reports: states and structures, per thread ---- */

static _Thread_local int64_t unit_states, unit_structures;

static void on_unit_progress(const yirage_search_progress *p, void *user) {
  (void)user;
  unit_states = p->states;
  unit_structures = p->candidates;
}

static int thread_count(uint32_t requested) {
  if (requested > 0) return (int)(requested < MAX_THREADS ? requested : MAX_THREADS);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)(cores < MAX_THREADS ? cores : MAX_THREADS) : 1;
}

/* ---- rank 0: the job's bookkeeping ---- */

enum { UNIT_TODO = 0, UNIT_RUNNING = 1, UNIT_DONE = 2 };

/* Who ran a unit last and when (seconds since the search started), for --trace; returned 0: not
 * finished in this run. */
typedef struct unit_record {
  double given, returned, ran;
  int32_t rank, thread;
  int64_t states;
} unit_record;

typedef struct dispatch {
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  yirage_search_plan *plan;
  const yirage_search_options *options; /* the command line's: its progress callback */
  const char *folder;                   /* checkpoint folder of this plan, or NULL */
  unsigned char *state;                 /* per unit */
  size_t units, next, running, done, from_checkpoint, run_here, max_units;
  int stopping; /* no more units handed out: the budget, --max-units or every unit is done */
  int32_t cancel;
  char plan_id[33];
  double started, deadline;
  yirage_search_progress progress;
  unit_record *record; /* per unit */
  double *planned_at;  /* per rank: when its plan was ready (seconds since started) */
} dispatch;

static dispatch d;

/* The next unit to run for thread `thread` of rank `from`, or -1 (under d.mutex). */
static int64_t take_unit(int from, int thread) {
  if (d.stopping) return -1;
  while (d.next < d.units && d.state[d.next] != UNIT_TODO) ++d.next;
  if (d.next == d.units) {
    /* A unit given back unfinished is handed out again. */
    for (d.next = 0; d.next < d.units && d.state[d.next] != UNIT_TODO; ++d.next) {
    }
    if (d.next == d.units) return -1;
  }
  const size_t unit = d.next;
  d.state[unit] = UNIT_RUNNING;
  ++d.running;
  d.record[unit].given = now() - d.started;
  d.record[unit].rank = from;
  d.record[unit].thread = thread;
  return (int64_t)unit;
}

static void write_checkpoint(size_t unit, const void *bytes, size_t size) {
  char path[4096], temporary[4200];
  snprintf(path, sizeof path, "%s/unit-%zu.yrsc", d.folder, unit);
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  FILE *f = fopen(temporary, "wb");
  const int written = f != NULL && fwrite(bytes, 1, size, f) == size;
  if (f == NULL || fclose(f) != 0 || !written || rename(temporary, path) != 0) {
    cli_fail("cannot write the checkpoint %s: %s", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
  }
}

/* A unit came back: finished with its partial result's bytes, or not. Its result is checked and
 * kept outside d.mutex, so that the queue keeps answering meanwhile. */
static void unit_returned(int64_t unit, int finished, const void *bytes, size_t size, int64_t states,
                          int64_t structures, double ran_seconds) {
  pthread_mutex_lock(&d.mutex);
  const int known = unit >= 0 && (size_t)unit < d.units && d.state[unit] == UNIT_RUNNING;
  pthread_mutex_unlock(&d.mutex);
  if (!known) {
    cli_fail("a rank returned unit %lld, which it was not running", (long long)unit);
    MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
  }
  if (finished) {
    size_t added = 0;
    /* Another rank's bytes are checked like any partial result's. */
    if (yirage_search_plan_add_partial(d.plan, bytes, size, &added) != YIRAGE_OK) {
      cli_fail("the result of unit %lld: %s", (long long)unit, yirage_last_error_message());
      MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
    }
    if (d.folder) write_checkpoint((size_t)unit, bytes, size);
  }
  pthread_mutex_lock(&d.mutex);
  --d.running;
  d.state[unit] = finished ? UNIT_DONE : UNIT_TODO;
  if (finished) {
    ++d.done;
    ++d.run_here;
    d.record[unit].returned = now() - d.started;
    d.record[unit].ran = ran_seconds;
    d.record[unit].states = states;
    d.progress.states += states;
    d.progress.candidates += structures;
    d.progress.seconds = now() - d.started;
    if (d.options->progress) d.options->progress(&d.progress, d.options->progress_user_data);
    if (d.max_units && d.run_here >= d.max_units) d.stopping = 1;
  }
  if (d.done == d.units) d.stopping = 1;
  pthread_cond_broadcast(&d.changed);
  pthread_mutex_unlock(&d.mutex);
}

/* The next unit to run for thread `thread` of rank `from`, or -1. */
static int64_t next_unit(int from, int thread) {
  pthread_mutex_lock(&d.mutex);
  const int64_t unit = take_unit(from, thread);
  pthread_mutex_unlock(&d.mutex);
  return unit;
}

/* Runs one unit: YIRAGE_OK (finished) or YIRAGE_ERROR_TIMEOUT (stopped by the budget); anything
 * else ends the job. `seconds`: how long it ran here. */
static yirage_status run_unit(const yirage_search_plan *plan, uint32_t u, yirage_blob **partial, double *seconds) {
  unit_states = unit_structures = 0;
  const double began = now();
  const yirage_status status = yirage_search_plan_run_units(plan, &u, 1, partial);
  if (status != YIRAGE_OK && status != YIRAGE_ERROR_TIMEOUT) {
    cli_fail("rank %d: running unit %u: %s", rank, u, yirage_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
  }
  *seconds = now() - began;
  return status;
}

/* Rank 0's own threads: units straight from the queue. */
static void *local_worker(void *arg) {
  const int thread = (int)(intptr_t)arg;
  for (int64_t unit; (unit = next_unit(0, thread)) >= 0;) {
    yirage_blob *partial = NULL;
    double seconds = 0;
    const yirage_status status = run_unit(d.plan, (uint32_t)unit, &partial, &seconds);
    unit_returned(unit, status == YIRAGE_OK, yirage_blob_data(partial), yirage_blob_size(partial), unit_states,
                  unit_structures, seconds);
    yirage_blob_release(partial);
  }
  return NULL;
}

/* Rank 0's messenger: answers every other rank's threads until each has been told to stop. */
static void *dispatcher(void *arg) {
  (void)arg;
  int hellos = 0;
  int64_t threads = 0, stopped = 0;
  while (hellos < ranks - 1 || stopped < threads) {
    control m;
    MPI_Status status = wait_for(MPI_ANY_SOURCE, TAG_CONTROL, 200);
    MPI_Recv(m, CONTROL_FIELDS, MPI_INT64_T, status.MPI_SOURCE, TAG_CONTROL, MPI_COMM_WORLD, &status);
    if (m[0] == MSG_HELLO) {
      char id[33];
      MPI_Recv(id, 33, MPI_CHAR, status.MPI_SOURCE, TAG_PLAN_ID, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (strcmp(id, d.plan_id) != 0) {
        cli_fail("rank %d planned other units than rank 0 (every rank must run the same build of yirage)",
                 status.MPI_SOURCE);
        MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
      }
      ++hellos;
      threads += m[1];
      d.planned_at[status.MPI_SOURCE] = now() - d.started;
      continue;
    }
    void *bytes = NULL;
    if (m[4] > 0) {
      bytes = malloc((size_t)m[4]);
      if (bytes == NULL) {
        cli_fail("out of memory for a partial result of %lld bytes", (long long)m[4]);
        MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
      }
      MPI_Recv(bytes, (int)m[4], MPI_BYTE, status.MPI_SOURCE, TAG_PARTIAL + (int)m[1], MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    /* The next unit first: the asking thread works while its result is checked and kept. */
    int64_t next = next_unit(status.MPI_SOURCE, (int)m[1]);
    if (next < 0) ++stopped;
    MPI_Send(&next, 1, MPI_INT64_T, status.MPI_SOURCE, TAG_REPLY + (int)m[1], MPI_COMM_WORLD);
    if (m[2] >= 0) unit_returned(m[2], (int)m[3], bytes, (size_t)m[4], m[5], m[6], (double)m[7] * 1e-6);
    free(bytes);
  }
  return NULL;
}

/* --trace: a row per rank's plan, per unit run in this job (the checkpoint's are not) and for the
 * merge. */
static void write_trace(const char *path, double merge_started, double merge_ended) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    cli_fail("cannot write the trace %s: %s", path, strerror(errno));
    return;
  }
  fprintf(f, "event\tunit\trank\tthread\tstart_s\tend_s\tran_s\tstates\n");
  for (int r = 0; r < ranks; ++r) fprintf(f, "plan\t-\t%d\t-\t0\t%.4f\t-\t-\n", r, d.planned_at[r]);
  for (size_t u = 0; u < d.units; ++u) {
    const unit_record *r = &d.record[u];
    if (r->returned <= 0) continue;
    fprintf(f, "unit\t%zu\t%d\t%d\t%.4f\t%.4f\t%.4f\t%lld\n", u, r->rank, r->thread, r->given, r->returned, r->ran,
            (long long)r->states);
  }
  fprintf(f, "merge\t-\t0\t-\t%.4f\t%.4f\t-\t-\n", merge_started, merge_ended);
  if (fclose(f) != 0) cli_fail("cannot write the trace %s: %s", path, strerror(errno));
}

static void mkdir_p(const char *path) {
  char partial[4096];
  snprintf(partial, sizeof partial, "%s", path);
  for (char *p = partial + 1;; ++p) {
    const char c = *p;
    if (c == '/' || c == '\0') {
      *p = '\0';
      if (mkdir(partial, 0777) != 0 && errno != EEXIST) {
        cli_fail("cannot create %s: %s", partial, strerror(errno));
        exit(EXIT_WORK_FAILED);
      }
      *p = c;
    }
    if (c == '\0') break;
  }
}

/* Adds the units already in the checkpoint folder; removes temporaries of a killed run. */
static void resume(void) {
  DIR *dir = opendir(d.folder);
  if (dir == NULL) {
    cli_fail("cannot read %s: %s", d.folder, strerror(errno));
    exit(EXIT_WORK_FAILED);
  }
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    char path[4096];
    size_t unit = 0;
    char tail[8] = "";
    snprintf(path, sizeof path, "%s/%s", d.folder, e->d_name);
    const size_t n = strlen(e->d_name);
    if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp")) {
      remove(path);
      continue;
    }
    if (sscanf(e->d_name, "unit-%zu.yrs%1s", &unit, tail) != 2 || strcmp(tail, "c") != 0) continue;
    FILE *f = fopen(path, "rb");
    void *bytes = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (bytes = malloc((size_t)size + 1)) != NULL && fread(bytes, 1, (size_t)size, f) == (size_t)size) {
      size_t added = 0;
      const yirage_status status = yirage_search_plan_add_partial(d.plan, bytes, (size_t)size, &added);
      if (status != YIRAGE_OK) {
        cli_fail("checkpoint %s: %s (delete it to run its unit again)", path, yirage_last_error_message());
        exit(EXIT_WORK_FAILED);
      }
    } else {
      cli_fail("cannot read the checkpoint %s: %s", path, strerror(errno));
      exit(EXIT_WORK_FAILED);
    }
    free(bytes);
    if (f) fclose(f);
  }
  closedir(dir);
  for (size_t u = 0; u < d.units; ++u) {
    int32_t done = 0;
    cli_check(yirage_search_plan_unit_done(d.plan, u, &done), "reading the checkpoint");
    if (done) {
      d.state[u] = UNIT_DONE;
      ++d.done;
    }
  }
  d.from_checkpoint = d.done;
}

/* The target the search uses: the options', their device's, or the built-in "cpu". */
static void search_target(const yirage_search_options *so, yirage_target_properties *target) {
  memset(target, 0, sizeof *target);
  target->struct_size = sizeof *target;
  if (so->target) {
    *target = *so->target;
  } else if (so->device) {
    yirage_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    cli_check(yirage_device_get_info(so->device, &info), "reading the device");
    *target = info.target;
  } else {
    cli_check(yirage_target_builtin("cpu", target), "the cpu target");
  }
}

static void release_workers(void) {
  if (workers_released) return;
  workers_released = 1;
  job stop;
  memset(&stop, 0, sizeof stop);
  stop.stop = 1;
  for (int r = 1; r < ranks; ++r) MPI_Send(&stop, sizeof stop, MPI_BYTE, r, TAG_JOB, MPI_COMM_WORLD);
}

static void finish_mpi(void) {
  if (rank == 0 && workers_busy) MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
  if (rank == 0) release_workers();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

/* The cli's search: the plan, its units over every rank, the merge. */
static yirage_status sharded_superoptimize(const options *o, const yirage_graph *graph, const yirage_search_options *so,
                                           yirage_search_result **out) {
  memset(&d, 0, sizeof d);
  pthread_mutex_init(&d.mutex, NULL);
  pthread_cond_init(&d.changed, NULL);
  d.options = so;
  d.started = now();
  d.max_units = o->max_units;
  /* Enumeration takes 80% of the search's share of the budget, as in one process (the search
   * takes 3/4 of it where it profiles). */
  const double share = so->device ? 0.75 : 1.0;
  d.deadline = d.started + 0.8 * share * so->time_budget_seconds;

  job j;
  memset(&j, 0, sizeof j);
  search_target(so, &j.target);
  j.options = *so;
  j.options.target = &j.target;
  j.options.progress = on_unit_progress;
  j.options.progress_user_data = NULL;
  j.options.cancel = &d.cancel;
  j.options.cache_dir = NULL;
  j.options.time_budget_seconds = so->time_budget_seconds;
  j.min_units = o->units ? o->units : DEFAULT_UNITS;
  /* Every other rank gets the job and the graph first: all ranks plan at once. */
  yirage_blob *graph_bytes = NULL;
  cli_check(yirage_graph_serialize(graph, YIRAGE_GRAPH_FORMAT_BINARY, &graph_bytes), "sending the graph");
  j.graph_size = yirage_blob_size(graph_bytes);
  j.threads = so->threads;
  j.seconds = d.deadline - now();
  for (size_t i = 0; i < so->num_grid_candidates && i < 64; ++i) j.grids[i] = so->grid_candidates[i];
  for (size_t i = 0; i < so->num_forloop_candidates && i < 64; ++i) j.loops[i] = so->forloop_candidates[i];
  for (int r = 1; r < ranks; ++r) {
    MPI_Send(&j, sizeof j, MPI_BYTE, r, TAG_JOB, MPI_COMM_WORLD);
    MPI_Send(yirage_blob_data(graph_bytes), (int)j.graph_size, MPI_BYTE, r, TAG_JOB, MPI_COMM_WORLD);
  }
  yirage_blob_release(graph_bytes);
  workers_busy = 1;
  const yirage_status planned = yirage_search_plan_create(graph, &j.options, j.min_units, &d.plan);
  if (planned != YIRAGE_OK) return planned;
  cli_check(yirage_search_plan_id(d.plan, d.plan_id), "naming the plan");
  cli_check(yirage_search_plan_num_units(d.plan, &d.units), "counting units");
  d.state = calloc(d.units + 1, 1);
  d.record = calloc(d.units + 1, sizeof *d.record);
  d.planned_at = calloc((size_t)ranks, sizeof *d.planned_at);
  if (!d.state || !d.record || !d.planned_at) {
    cli_fail("out of memory for %zu work units", d.units);
    exit(EXIT_WORK_FAILED);
  }
  d.planned_at[0] = now() - d.started;
  if (o->checkpoint) {
    static char folder[4096];
    snprintf(folder, sizeof folder, "%s/%s", o->checkpoint, d.plan_id);
    mkdir_p(folder);
    d.folder = folder;
    resume();
  }
  if (d.done == d.units) d.stopping = 1;

  pthread_t messenger, local[MAX_THREADS];
  if (ranks > 1) pthread_create(&messenger, NULL, dispatcher, NULL);
  const int threads = thread_count(so->threads);
  for (int t = 0; t < threads; ++t) pthread_create(&local[t], NULL, local_worker, (void *)(intptr_t)t);
  /* Until every unit is done or the budget's enumeration share is spent, and nothing runs. */
  pthread_mutex_lock(&d.mutex);
  while (!(d.stopping && d.running == 0)) {
    if (!d.stopping && now() >= d.deadline) {
      d.stopping = 1;
      __atomic_store_n(&d.cancel, 1, __ATOMIC_RELAXED);
    }
    struct timespec wake;
    clock_gettime(CLOCK_REALTIME, &wake);
    wake.tv_nsec += 50 * 1000 * 1000;
    if (wake.tv_nsec >= 1000000000) {
      wake.tv_nsec -= 1000000000;
      ++wake.tv_sec;
    }
    pthread_cond_timedwait(&d.changed, &d.mutex, &wake);
  }
  pthread_mutex_unlock(&d.mutex);
  for (int t = 0; t < threads; ++t) pthread_join(local[t], NULL);
  if (ranks > 1) pthread_join(messenger, NULL);
  workers_busy = 0;

  fprintf(stderr, "%s: %zu work units: %zu from the checkpoint, %zu run now on %d rank(s); %zu not run\n", "yirage-mpi",
          d.units, d.from_checkpoint, d.run_here, ranks, d.units - d.done);
  if (d.max_units && d.done < d.units && d.run_here >= d.max_units) {
    cli_fail("stopped after %zu units (--max-units); %zu of %zu are done%s%s", d.run_here, d.done, d.units,
             d.folder ? " and kept in " : " (no --checkpoint: they are lost)", d.folder ? d.folder : "");
    exit(EXIT_WORK_FAILED);
  }
  /* The merge: verification and profiling with what is left of the budget. */
  yirage_search_options merge = *so;
  const double left = so->time_budget_seconds - (now() - d.started);
  merge.time_budget_seconds = left > 1e-3 ? left : 1e-3;
  merge.progress = NULL;
  /* Every other rank waits now: the merge's builds and fingerprints take all of rank 0's cores. */
  merge.threads = 0;
  const double merge_started = now() - d.started;
  const yirage_status status = yirage_search_plan_merge(d.plan, &merge, out);
  if (o->trace) write_trace(o->trace, merge_started, now() - d.started);
  yirage_search_plan_release(d.plan);
  free(d.state);
  free(d.record);
  free(d.planned_at);
  return status;
}

/* ---- the other ranks ---- */

static int32_t worker_cancel = 0, threads_finished = 0;

typedef struct worker_state {
  yirage_search_plan *plan;
  int thread;
} worker_state;

static void *remote_worker(void *arg) {
  const worker_state *w = (const worker_state *)arg;
  control m = {MSG_REQUEST, w->thread, -1, 0, 0, 0, 0, 0};
  yirage_blob *partial = NULL;
  for (;;) {
    MPI_Send(m, CONTROL_FIELDS, MPI_INT64_T, 0, TAG_CONTROL, MPI_COMM_WORLD);
    if (m[4] > 0) {
      MPI_Send(yirage_blob_data(partial), (int)m[4], MPI_BYTE, 0, TAG_PARTIAL + w->thread, MPI_COMM_WORLD);
    }
    yirage_blob_release(partial);
    partial = NULL;
    int64_t unit = -1;
    MPI_Recv(&unit, 1, MPI_INT64_T, 0, TAG_REPLY + w->thread, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (unit < 0) break;
    double seconds = 0;
    const yirage_status status = run_unit(w->plan, (uint32_t)unit, &partial, &seconds);
    m[2] = unit;
    m[3] = status == YIRAGE_OK;
    m[4] = status == YIRAGE_OK ? (int64_t)yirage_blob_size(partial) : 0;
    m[5] = unit_states;
    m[6] = unit_structures;
    m[7] = (int64_t)(seconds * 1e6);
  }
  __atomic_add_fetch(&threads_finished, 1, __ATOMIC_RELAXED);
  return NULL;
}

/* Searches the jobs rank 0 sends until it says stop. */
static int work(void) {
  for (;;) {
    job j;
    wait_for(0, TAG_JOB, 2000);
    MPI_Recv(&j, sizeof j, MPI_BYTE, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (j.stop) return 0;
    const double deadline = now() + j.seconds;
    char *bytes = malloc(j.graph_size + 1);
    MPI_Recv(bytes, (int)j.graph_size, MPI_BYTE, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    yirage_graph *graph = NULL;
    yirage_search_plan *plan = NULL;
    char id[33];
    j.options.target = &j.target;
    j.options.grid_candidates = j.options.num_grid_candidates ? j.grids : NULL;
    j.options.forloop_candidates = j.options.num_forloop_candidates ? j.loops : NULL;
    j.options.progress = on_unit_progress;
    j.options.progress_user_data = NULL;
    worker_cancel = 0;
    threads_finished = 0;
    j.options.cancel = &worker_cancel;
    j.options.cache_dir = NULL;
    j.options.device = NULL;
    if (yirage_graph_deserialize(bytes, j.graph_size, &graph) != YIRAGE_OK ||
        yirage_search_plan_create(graph, &j.options, j.min_units, &plan) != YIRAGE_OK ||
        yirage_search_plan_id(plan, id) != YIRAGE_OK) {
      cli_fail("rank %d cannot plan rank 0's search: %s", rank, yirage_last_error_message());
      MPI_Abort(MPI_COMM_WORLD, EXIT_WORK_FAILED);
    }
    free(bytes);
    const int threads = thread_count(j.threads);
    control hello = {MSG_HELLO, threads, 0, 0, 0, 0, 0, 0};
    MPI_Send(hello, CONTROL_FIELDS, MPI_INT64_T, 0, TAG_CONTROL, MPI_COMM_WORLD);
    MPI_Send(id, 33, MPI_CHAR, 0, TAG_PLAN_ID, MPI_COMM_WORLD);
    pthread_t pool[MAX_THREADS];
    worker_state states[MAX_THREADS];
    for (int t = 0; t < threads; ++t) {
      states[t].plan = plan;
      states[t].thread = t;
      pthread_create(&pool[t], NULL, remote_worker, &states[t]);
    }
    /* Units running past the enumeration's share of the budget are stopped there. */
    while (__atomic_load_n(&threads_finished, __ATOMIC_RELAXED) < threads) {
      if (now() >= deadline) __atomic_store_n(&worker_cancel, 1, __ATOMIC_RELAXED);
      const struct timespec pause = {0, 20 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    for (int t = 0; t < threads; ++t) pthread_join(pool[t], NULL);
    yirage_search_plan_release(plan);
    yirage_graph_release(graph);
  }
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "yirage-mpi: this MPI library does not support MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return EXIT_WORK_FAILED;
  }
  atexit(finish_mpi);
  if (rank != 0) return work();
  const cli_engine engine = {"yirage-mpi", sharded_superoptimize};
  return cli_main(argc, argv, &engine);
}
