/* repro-run: YAML experiment matrices run as Slurm job arrays or local processes.
 * See runner/README.md for the file formats and the run folder. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cellog.h"
#include "config.h"
#include "executor.h"
#include "expand.h"
#include "manifest.h"

/* Each command: its synopsis (`repro-run --help` lists them all) and what `repro-run CMD --help`
 * adds; run and check take the options print_options() lists. */
static const struct {
  const char *name, *synopsis, *details;
  int options; /* takes the run options */
} commands[] = {
    {"run", "[run] EXPERIMENT.yaml [options]   run a matrix (a new run, or --resume/--rerun)",
     "Runs the matrix's cells as Slurm job arrays or local processes: a new run, or the current\n"
     "one again (--resume, --rerun). Writes runs/<UTC time>/ beside EXPERIMENT.yaml (logs/: a log\n"
     "per cell; jobs/: the array scripts; manifest: the run's journal; attempts/: the logs a\n"
     "rerun replaced) and points ae_logs there at its logs/; --dry-run prints each cell's log\n"
     "and command and writes the array scripts to runs/dry-run-<UTC time>/ alone. Nothing is\n"
     "deleted. Exit 0 when every selected cell ended ok, unsupported or oom; 1 when some ended\n"
     "error or timeout; 2 bad input, a failed submission or another runner at work; 130\n"
     "interrupted.\n",
     1},
    {"check", "check EXPERIMENT.yaml [-c CLUSTER]  validate the files, count the cells",
     "Validates the experiment and the cluster file and renders every selected cell's command\n"
     "(--only, --device, --cases select them); prints the experiments, cells and arrays. Writes\n"
     "nothing. Exit 2 when a file or a command is bad.\n",
     1},
    {"status", "status [FIGDIR|RUNDIR]             progress and failed cells of a run",
     "One read-only poll of a run (FIGDIR: the run its ae_logs points to; default .): its cells,\n"
     "the failed and requeued ones and why. Writes nothing. Exit 1 when a cell failed, or when\n"
     "cells lack a good log and nothing works on them (--resume runs them); 2 when the run\n"
     "cannot be read.\n",
     0},
    {"cancel", "cancel [FIGDIR|RUNDIR]             scancel a run's jobs",
     "Cancels the run's queued and running Slurm jobs (scancel; their logs say CANCELLED, the\n"
     "run's journal records it), then prints the run's cells as status does.\n",
     0},
    {"verdict",
     "verdict LOG...                     is each log good? (the rule status and --resume use)",
     "Judges each LOG by the one rule repro-run (status, --resume, finish) and repro-plot hold\n"
     "logs to (common/logverdict.h): prints `good STATUS LOG` or `bad STATUS LOG: WHY` per log\n"
     "(STATUS `-` when it has no usable result line, `cut` when its last line is, `bad` for a\n"
     "final answer the rule refuses). Reads only: a link or a FIFO is bad.\n"
     "scripts/ship-logs.sh ships only good logs by it. Exit 0 when every LOG is good, 1 when one\n"
     "is not, 2 without a LOG.\n",
     0},
    {"finish", "finish RUNDIR LOG TMP RC           (job scripts) complete one cell's log",
     "For the job scripts: moves TMP, the output of one attempt of the cell whose log is LOG,\n"
     "to RUNDIR/logs/LOG, with the runner's result line when the program's own cannot stand\n"
     "(RC: the program's exit code). Exit 0 when the log reads good (ok, unsupported, oom),\n"
     "else RC (or 1); 2 on bad arguments.\n",
     0},
};

static void print_options(FILE *out) {
  fputs(
      "options:\n"
      "  -c, --cluster FILE   cluster file: devices -> partition, gres, vars (default "
      "$REPRO_CLUSTER)\n"
      "  --only K=V[,K=V...]  only cells with these axis/case values; repeat for more (OR);\n"
      "                       K!=V: cells whose K is not V; K=V with V outside K's list but\n"
      "                       in its range (axes: {K: {values: [...], range: [LO, HI]}}):\n"
      "                       V's cells as ad-hoc cells, kept by the run for --resume\n"
      "  --exclude K=V[,K=V...]  leave out the cells with these values (K!=V too); repeat for\n"
      "                       more (each leaves its cells out)\n"
      "  --set NAME=VALUE     this value for param NAME (defaults:/params:) in every command,\n"
      "                       over the cluster file's vars; repeat for more; a run keeps them\n"
      "  --device LABEL       only cells of this device (and the --only filters)\n"
      "  --cases NAME         the named case lists NAME of the experiments (default: default)\n"
      "  -n, --dry-run        print the cells and write the array scripts; submit nothing\n"
      "  --local | --slurm    executor (default: the cluster file's, else slurm when sbatch "
      "exists)\n"
      "  --gpus all|N|LIST    local executor: the GPUs cells run on, one cell per GPU at a time\n"
      "                       (default all: CUDA_VISIBLE_DEVICES, else nvidia-smi -L); N: the\n"
      "                       first N; LIST: indices or UUIDs, comma-separated (\"1,\": GPU 1)\n"
      "  -j N                 local executor: at most N cells at once (default: one per GPU, or\n"
      "                       1 without GPUs)\n"
      "  --resume             continue the current run (--run DIR's, which becomes current):\n"
      "                       only cells without a good log, not queued\n"
      "  --rerun              run the selected cells again into the current run (old logs kept)\n"
      "  --run DIR            the run for --resume/--rerun (default: the one ae_logs points to)\n"
      "  --widen              with --resume/--rerun: add the cells of --only/--device to the run\n"
      "  --allow-concurrent   start even though another runner works on this figure folder\n"
      "  --no-wait            submit and return\n"
      "  --detach             on Ctrl-C leave the submitted jobs running without asking\n"
      "  --poll SECONDS       seconds between Slurm polls (default 10)\n"
      "  --bin DIR            where the kernel binaries are (default: repro-run's own folder)\n"
      "  --python PATH        python for the peer systems (default python3)\n"
      "  -q, --quiet          no progress lines\n"
      "  -h, --help           this text\n",
      out);
}

static void usage(FILE *out) {
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(out, "%s repro-run %s\n", i ? "      " : "usage:", commands[i].synopsis);
  print_options(out);
  fputs("`repro-run COMMAND --help`: a command's text; runner/README.md explains them.\n", out);
}

/* `repro-run CMD ... --help` (or -h): 1, with CMD's usage on stdout, when CMD is a command and
 * an argument after it asks for help; else 0. */
static int command_help(int argc, char **argv) {
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
    if (strcmp(argv[1], commands[i].name)) continue;
    for (int a = 2; a < argc; a++) {
      if (strcmp(argv[a], "-h") && strcmp(argv[a], "--help")) continue;
      printf("usage: repro-run %s\n\n%s", commands[i].synopsis, commands[i].details);
      if (commands[i].options) {
        putchar('\n');
        print_options(stdout);
      }
      return 1;
    }
  }
  return 0;
}

static void on_signal(int sig) {
  (void)sig;
  exec_interrupted = 1;
}

static void install_signals(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

typedef struct {
  const char *file, *cluster, *run_dir, *bin, *python, *device, *cases, *gpus;
  int nfilters;
  filter *filters;
  strvec only_args;    /* the --only arguments as given (a run's `select` record) */
  strvec exclude_args; /* the --exclude arguments as given (the same record) */
  strvec set_args;     /* the --set arguments as given (the same record) */
  strvec set_store;    /* the --set values' storage */
  paramlist sets;      /* --set NAME=VALUE, the run's own on --resume/--rerun without --set */
  strvec run_only; /* --resume/--rerun: the --only of the run's select records (ad-hoc values) */
  int dry_run, resume, rerun, no_wait, detach, quiet, jobs, widen, allow_concurrent;
  int cluster_given; /* -c on the command line (not $REPRO_CLUSTER): it overrides a run's */
  executor_kind executor;
  double poll_s;
} options;

/* One --only (or, exclude, --exclude) argument: parsed into o->filters and kept as given. */
static int add_filter(options *o, const char *arg, int exclude) {
  char *err = NULL;
  if (o->nfilters >= 60) {
    fprintf(stderr, "repro-run: at most 60 --only and --exclude filters\n");
    return -1;
  }
  o->filters = xrealloc(o->filters, (size_t)(o->nfilters + 1) * sizeof *o->filters);
  filter *f = &o->filters[o->nfilters];
  if ((exclude ? exclude_parse(arg, f, &err) : filter_parse(arg, f, &err)) != 0) {
    fprintf(stderr, "repro-run: %s\n", err);
    free(err);
    return -1;
  }
  sv_push(exclude ? &o->exclude_args : &o->only_args, arg);
  o->nfilters++;
  return 0;
}

static int parse_options(int argc, char **argv, options *o) {
  enum {
    O_ONLY = 256,
    O_DEVICE,
    O_LOCAL,
    O_SLURM,
    O_RESUME,
    O_RERUN,
    O_RUN,
    O_NOWAIT,
    O_DETACH,
    O_POLL,
    O_BIN,
    O_PYTHON,
    O_WIDEN,
    O_ALLOW,
    O_CASES,
    O_GPUS,
    O_EXCLUDE,
    O_SET
  };
  static const struct option longs[] = {{"cluster", required_argument, 0, 'c'},
                                        {"only", required_argument, 0, O_ONLY},
                                        {"exclude", required_argument, 0, O_EXCLUDE},
                                        {"set", required_argument, 0, O_SET},
                                        {"device", required_argument, 0, O_DEVICE},
                                        {"cases", required_argument, 0, O_CASES},
                                        {"dry-run", no_argument, 0, 'n'},
                                        {"local", no_argument, 0, O_LOCAL},
                                        {"gpus", required_argument, 0, O_GPUS},
                                        {"slurm", no_argument, 0, O_SLURM},
                                        {"resume", no_argument, 0, O_RESUME},
                                        {"rerun", no_argument, 0, O_RERUN},
                                        {"run", required_argument, 0, O_RUN},
                                        {"no-wait", no_argument, 0, O_NOWAIT},
                                        {"detach", no_argument, 0, O_DETACH},
                                        {"poll", required_argument, 0, O_POLL},
                                        {"bin", required_argument, 0, O_BIN},
                                        {"python", required_argument, 0, O_PYTHON},
                                        {"quiet", no_argument, 0, 'q'},
                                        {"widen", no_argument, 0, O_WIDEN},
                                        {"allow-concurrent", no_argument, 0, O_ALLOW},
                                        {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  int opt;
  while ((opt = getopt_long(argc, argv, "c:nj:qh", longs, NULL)) != -1) {
    char *err = NULL;
    switch (opt) {
    case 'c':
      o->cluster = optarg;
      o->cluster_given = 1;
      break;
    case 'n': o->dry_run = 1; break;
    case 'j':
      o->jobs = atoi(optarg);
      if (o->jobs < 1) {
        fprintf(stderr, "repro-run: -j expects a number >= 1\n");
        return -1;
      }
      break;
    case 'q': o->quiet = 1; break;
    case O_GPUS: o->gpus = optarg; break;
    case 'h': usage(stdout); exit(0);
    case O_ONLY:
    case O_EXCLUDE:
      if (add_filter(o, optarg, opt == O_EXCLUDE) != 0) return -1;
      break;
    case O_SET:
      sv_push(&o->set_args, optarg);
      if (set_parse(optarg, &o->sets, &o->set_store, &err) != 0) {
        fprintf(stderr, "repro-run: %s\n", err);
        free(err);
        return -1;
      }
      break;
    case O_DEVICE: o->device = optarg; break;
    case O_CASES: o->cases = optarg; break;
    case O_LOCAL: o->executor = EXEC_LOCAL; break;
    case O_SLURM: o->executor = EXEC_SLURM; break;
    case O_RESUME: o->resume = 1; break;
    case O_RERUN: o->rerun = 1; break;
    case O_RUN: o->run_dir = optarg; break;
    case O_NOWAIT: o->no_wait = 1; break;
    case O_DETACH: o->detach = 1; break;
    case O_POLL:
      o->poll_s = atof(optarg);
      if (o->poll_s <= 0) {
        fprintf(stderr, "repro-run: --poll expects seconds > 0\n");
        return -1;
      }
      break;
    case O_BIN: o->bin = optarg; break;
    case O_PYTHON: o->python = optarg; break;
    case O_WIDEN: o->widen = 1; break;
    case O_ALLOW: o->allow_concurrent = 1; break;
    default: usage(stderr); return -1;
    }
  }
  if (!o->cluster) o->cluster = getenv("REPRO_CLUSTER");
  if (o->cluster && !*o->cluster) o->cluster = NULL;
  if (o->resume && o->rerun) {
    fprintf(stderr, "repro-run: --resume and --rerun exclude each other\n");
    return -1;
  }
  if (o->widen && !o->resume && !o->rerun) {
    fprintf(stderr, "repro-run: --widen adds cells to an existing run: use it with --resume or "
                    "--rerun\n");
    return -1;
  }
  return 0;
}

static char *self_path(void) {
  char *p = path_absolute("/proc/self/exe");
  return p;
}

/* Takes run/lock for this process's lifetime: one runner per run at a time. */
static int lock_run(const run *r) {
  char *path = xasprintf("%s/lock", r->dir);
  int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "repro-run: %s: %s\n", path, strerror(errno));
    free(path);
    return -1;
  }
  free(path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    fprintf(stderr, "repro-run: another repro-run is working on %s; wait for it or stop it first\n",
            r->dir);
    close(fd);
    return -1;
  }
  return 0; /* fd stays open on purpose: the lock lives as long as the process */
}

/* Does a runner hold run/lock (lock_run) now? Looks only: takes no lock it keeps. */
static int run_is_held(const run *r) {
  char *path = xasprintf("%s/lock", r->dir);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), held = 0;
  free(path);
  if (fd < 0) return 0; /* no lock file: no runner ever held it */
  if (flock(fd, LOCK_SH | LOCK_NB) != 0)
    held = errno == EWOULDBLOCK;
  else
    flock(fd, LOCK_UN);
  close(fd);
  return held;
}

/* The pid in a figure lock's "pid N, ..." text, or 0. */
static long lock_holder_pid(int fd) {
  char text[64];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  long pid = 0;
  return sscanf(text, "pid %ld", &pid) == 1 ? pid : 0;
}

/* flock(fd) now, or, while the holder named in the file is dead, within a few seconds: a cell
 * its runner forked just before being killed shares the runner's descriptors until its exec
 * closes them (close-on-exec), so for that moment the dead runner's lock is still held, and
 * the cell is not yet visible as the run's (its tag is set for the exec). Waiting for the exec
 * lets a resume right after a kill start (and see the cell) instead of being refused. */
static int flock_after_dead_holder(int fd) {
  for (int tries = 0;; tries++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    long pid = lock_holder_pid(fd);
    if (tries >= 100 || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH) return -1;
    struct timespec ts = {0, 50 * 1000000L}; /* 100 x 50 ms */
    nanosleep(&ts, NULL);
  }
}

/* One runner per figure folder: FIGDIR/runs/.lock, flock()ed for the runner's whole life and
 * close-on-exec (cells never hold it once they run), holding "pid N, run ID" of its holder.
 * Returns 0 with *fd the lock (or -1 when --allow-concurrent goes on beside another runner),
 * -1 refused. */
static int lock_figure(const char *figdir, int allow, int *fd) {
  *fd = -1;
  char *runs = xasprintf("%s/runs", figdir), *path = xasprintf("%s/.lock", runs);
  mkdir_p(runs, 0755);
  int lfd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644), rc = 0;
  if (lfd < 0) {
    fprintf(stderr, "repro-run: cannot open %s: %s\n", path, strerror(errno));
    rc = -1;
  } else if (flock_after_dead_holder(lfd) == 0) {
    char text[64];
    int n = snprintf(text, sizeof text, "pid %ld, run (starting)\n", (long)getpid());
    if (ftruncate(lfd, 0) != 0 || pwrite(lfd, text, (size_t)n, 0) != n) { /* only a message */
    }
    *fd = lfd;
  } else {
    char holder[512];
    ssize_t n = pread(lfd, holder, sizeof holder - 1, 0);
    holder[n > 0 ? n : 0] = '\0';
    holder[strcspn(holder, "\n")] = '\0';
    close(lfd);
    if (!holder[0]) snprintf(holder, sizeof holder, "pid unknown");
    if (allow) {
      fprintf(stderr,
              "repro-run: another runner works on %s (%s): starting beside it "
              "(--allow-concurrent)\n",
              figdir, holder);
    } else {
      fprintf(stderr,
              "repro-run: another runner works on %s (%s): two runners of one figure submit "
              "its cells twice and, on one GPU, spoil each other's timings. Wait for it, stop it, "
              "or pass --allow-concurrent for a deliberate second run\n",
              figdir, holder);
      rc = -1;
    }
  }
  free(runs);
  free(path);
  return rc;
}

/* Says in the figure lock which run its holder works on. */
static void lock_figure_note(int fd, const run *r) {
  if (fd < 0) return;
  char *text = xasprintf("pid %ld, run %s\n", (long)getpid(), r->dir);
  size_t n = strlen(text);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text, n, 0) != (ssize_t)n) { /* only a message */
  }
  free(text);
}

static int has_slurm_subs(const run *r);

/* A runner returns while its Slurm jobs wait in the queue (--no-wait, Ctrl-C, a killed
 * runner): the figure lock is free then, but the cells are not. Refuses (unless allow) while
 * a run of this figure other than `self` still has tasks queued or running. */
static int check_queued_runs(const char *figdir, const char *self, int allow) {
  if (!slurm_available()) return 0;
  char *runs = xasprintf("%s/runs", figdir);
  DIR *d = opendir(runs);
  int rc = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "dry-run-", 8) == 0) continue;
    char *dir = xasprintf("%s/%s", runs, e->d_name), *manifest = xasprintf("%s/manifest", dir);
    char *abs = path_absolute(dir);
    run r;
    if (file_exists(manifest) && !(self && strcmp(abs, self) == 0) &&
        run_open(&r, dir, RUN_READ) == 0) {
      int live = has_slurm_subs(&r) ? slurm_live_tasks(&r) : 0;
      if (live > 0 && allow) {
        fprintf(stderr,
                "repro-run: run %s still has %d cells queued or running under Slurm: "
                "starting beside it (--allow-concurrent)\n",
                r.dir, live);
      } else if (live > 0) {
        fprintf(stderr,
                "repro-run: run %s still has %d cells queued or running under Slurm (its runner "
                "has returned): a new run would submit them again. `repro-run status %s` shows "
                "them, `--resume` continues that run, `repro-run cancel %s` ends it; "
                "--allow-concurrent starts a second run anyway\n",
                r.dir, live, r.dir, r.dir);
        rc = -1;
      }
      run_close(&r);
    }
    free(abs);
    free(manifest);
    free(dir);
  }
  if (d) closedir(d);
  free(runs);
  return rc;
}

/* "--device D --only K=V ..." of a run's selection (caller frees). */
static char *describe_selection(const run *r) {
  sbuf b = {0};
  for (int i = 0; i < r->nselects; i++) {
    const selection *sel = &r->selects[i];
    if (i) sb_add(&b, "; or ");
    if (sel->device) sb_addf(&b, "--device %s", sel->device);
    for (int k = 0; k < sel->only.n; k++)
      sb_addf(&b, "%s--only %s", sel->device || k ? " " : "", sel->only.v[k]);
    for (int k = 0; k < sel->exclude.n; k++)
      sb_addf(&b, "%s--exclude %s", sel->device || sel->only.n || k ? " " : "", sel->exclude.v[k]);
    if (!sel->device && !sel->only.n && !sel->exclude.n) sb_add(&b, "every cell");
  }
  return sb_take(&b);
}

/* The filters of one `select` record (*f: caller frees each and the array): their number, or
 * -1 with *err. */
static int selection_filters(const selection *sel, filter **f, char **err) {
  int n = sel->only.n + sel->exclude.n, nf = 0;
  *f = xcalloc((size_t)(n ? n : 1), sizeof **f);
  for (int k = 0; k < sel->only.n; k++, nf++)
    if (filter_parse(sel->only.v[k], &(*f)[nf], err) != 0) goto fail;
  for (int k = 0; k < sel->exclude.n; k++, nf++)
    if (exclude_parse(sel->exclude.v[k], &(*f)[nf], err) != 0) goto fail;
  return nf;
fail:
  for (int k = 0; k < nf; k++) filter_free(&(*f)[k]);
  free(*f);
  *f = NULL;
  return -1;
}

/* The command line's selection as a `select` record of r; 0 or -1. */
static int note_select(const options *o, run *r) {
  return run_note_select(r, o->device, &o->only_args, &o->exclude_args, &o->set_args, o->cases) == 0
             ? 0
             : -1;
}

/* A resume's --set, when given, must be the run's (its first select record's): a run's cells
 * all run with the same values. */
static int check_run_sets(const options *o, const run *r) {
  if (r->nselects == 0 || o->set_args.n == 0) return 0;
  const strvec *was = &r->selects[0].set;
  int same = was->n == o->set_args.n;
  for (int i = 0; same && i < was->n; i++) same = strcmp(was->v[i], o->set_args.v[i]) == 0;
  if (same) return 0;
  sbuf b = {0};
  for (int i = 0; i < was->n; i++) sb_addf(&b, " --set %s", was->v[i]);
  fprintf(stderr,
          "repro-run: run %s was made with%s: continue it without --set (it keeps its own) or "
          "start a new run\n",
          r->dir, was->n ? b.s : " no --set");
  sb_free(&b);
  return -1;
}

/* member[i] := 1 for each cell of cs that some select record of r holds. 0, or -1 with the
 * refusal printed when a record no longer fits the experiment file. */
static int run_members(const cellset *cs, const clusterfile *cluster, const run *r, char *member) {
  for (int i = 0; i < r->nselects; i++) {
    const selection *sel = &r->selects[i];
    filter *f = NULL;
    char *err = NULL;
    int nf = selection_filters(sel, &f, &err), bad = nf < 0;
    if (bad) nf = 0;
    cellset run_cs;
    if (!bad && expand(cs->file, cluster, f, nf, &run_cs, &err) == 0) {
      /* a record holds the ad-hoc cells its --only named, never those another record added */
      for (int k = 0; k < run_cs.ncells && k < cs->ncells; k++)
        if (run_cs.cells[k].sel == CELL_SELECTED &&
            (!sel->device ||
             strcmp(cell_value(&run_cs, &run_cs.cells[k], "device"), sel->device) == 0) &&
            filters_name_adhoc(&run_cs, &run_cs.cells[k], f, nf))
          member[k] = 1;
      cellset_free(&run_cs);
    } else {
      bad = 1;
    }
    for (int k = 0; k < nf; k++) filter_free(&f[k]);
    free(f);
    if (bad) {
      fprintf(stderr, "repro-run: the selection of run %s no longer fits %s: %s\n", r->dir,
              cs->file->path, err ? err : "?");
      free(err);
      return -1;
    }
  }
  return 0;
}

/* A selected cell outside the run is a cell of the listed values (OUTSIDE_LISTED), an ad-hoc
 * cell whose values this command line's --only names (OUTSIDE_NAMED), or one whose ad-hoc value
 * only another select record of the run named (OUTSIDE_OTHER: no record holds it and nobody
 * asks for it now). */
enum { OUTSIDE_LISTED, OUTSIDE_NAMED, OUTSIDE_OTHER };
static int outside_kind(const options *o, const cellset *cs, const cell *c) {
  if (experiment_adhoc_axis(&cs->file->exps[c->exp], c->vals) < 0) return OUTSIDE_LISTED;
  return filters_name_adhoc(cs, c, o->filters, o->nfilters) ? OUTSIDE_NAMED : OUTSIDE_OTHER;
}

/* The selected cells of cs that are not members, counted by their outside_kind. */
static void count_outside(const options *o, const cellset *cs, const char *member, int n[3]) {
  n[0] = n[1] = n[2] = 0;
  for (int i = 0; i < cs->ncells; i++)
    if (cs->cells[i].sel == CELL_SELECTED && !member[i]) n[outside_kind(o, cs, &cs->cells[i])]++;
}

/* --resume/--rerun keep to the cells of the run (its `select` records): cells of the command
 * line outside it are left out, or added to the run with --widen. The ad-hoc cells the command
 * line names join it without --widen (no record of the run can have meant them) when nothing
 * else it selects lies outside. */
static int apply_run_selection(const options *o, cellset *cs, const clusterfile *cluster, run *r) {
  for (int i = 0; i < r->nselects; i++) {
    const char *was = r->selects[i].cases ? r->selects[i].cases : "default";
    if (strcmp(was, o->cases ? o->cases : "default") != 0) {
      fprintf(stderr, "repro-run: run %s was made with --cases %s: continue it with --cases %s\n",
              r->dir, was, was);
      return -1;
    }
  }
  if (check_run_sets(o, r) != 0) return -1;
  if (o->widen) return note_select(o, r);
  if (r->nselects == 0) return 0; /* a run from before runs remembered their selection */
  char *member = xcalloc((size_t)(cs->ncells ? cs->ncells : 1), 1);
  int n[3], left = 0;
  if (run_members(cs, cluster, r, member) != 0) {
    free(member);
    return -1;
  }
  count_outside(o, cs, member, n);
  int joins = n[OUTSIDE_NAMED] && !n[OUTSIDE_LISTED];
  if (joins)
    fprintf(stderr,
            "repro-run: %d ad-hoc cells (a value --only names outside its axis's list) join run "
            "%s: its select records keep them for --resume\n",
            n[OUTSIDE_NAMED], r->dir);
  for (int i = 0; i < cs->ncells; i++) {
    cell *c = &cs->cells[i];
    if (c->sel != CELL_SELECTED) continue;
    if (member[i] || (joins && outside_kind(o, cs, c) == OUTSIDE_NAMED))
      left++;
    else
      c->sel = CELL_FILTERED;
  }
  free(member);
  if (joins) return note_select(o, r);
  int outside = n[OUTSIDE_LISTED] + n[OUTSIDE_NAMED], asked = o->nfilters > 0 || o->device;
  if (outside && asked) {
    char *what = describe_selection(r);
    fprintf(stderr,
            "repro-run: %d of the cells you selected are not part of run %s (made with %s)%s; "
            "to add them to the run, repeat the command with --widen\n",
            outside, r->dir, what, left ? ": left out" : "");
    free(what);
    if (!left) return -1;
  }
  return 0;
}

static void print_cells(const exec_ctx *x) {
  sbuf cmd = {0};
  for (int i = 0; i < x->cs->ncells; i++) {
    const cell *c = &x->cs->cells[i];
    if (c->sel != CELL_SELECTED) continue;
    const experiment *e = &x->file->exps[c->exp];
    const char *device = e->axes[e->device_axis].values.v[c->vals[e->device_axis]];
    cell_env env = {x->cs, c, x->cluster ? cluster_device(x->cluster, device) : NULL, &x->rt};
    char *err = NULL;
    sb_clear(&cmd);
    if (cell_command(&env, &cmd, &err) != 0) {
      fprintf(stderr, "repro-run: %s\n", err);
      free(err);
      continue;
    }
    printf("%s\t%s\n", c->log, cmd.s);
  }
  sb_free(&cmd);
}

static void print_selection_notes(const exec_ctx *x) {
  int absent = 0, nodev = 0, selected = 0;
  strvec devs = {0};
  for (int i = 0; i < x->cs->ncells; i++) {
    const cell *c = &x->cs->cells[i];
    if (c->sel == CELL_SELECTED) selected++;
    if (c->sel == CELL_ABSENT) absent++;
    if (c->sel == CELL_NO_DEVICE) {
      nodev++;
      const char *d = cell_value(x->cs, c, "device");
      if (sv_find(&devs, d) < 0) sv_push(&devs, d);
    }
  }
  if (!x->quiet) {
    fprintf(stderr, "%s: %d cells selected of %d", x->file->figure, selected, x->cs->ncells);
    if (absent) fprintf(stderr, "; %d of absent systems (not run: they plot as NS)", absent);
    if (nodev) {
      fprintf(stderr, "; %d on devices not in the cluster file (", nodev);
      for (int i = 0; i < devs.n; i++) fprintf(stderr, "%s%s", i ? " " : "", devs.v[i]);
      fputc(')', stderr);
    }
    fputc('\n', stderr);
  }
  sv_free(&devs);
}

/* Prints the run's cells (or, with cs, the selected ones) whose logs do not say
 * ok/unsupported/oom; returns their count. */
static int report_failures(FILE *out, const run *r, const cellset *cs) {
  int bad = 0;
  for (int i = 0; i < (cs ? cs->ncells : r->cap); i++) {
    const char *log = cs ? cs->cells[i].log : r->cells[i].log;
    if (!log || (cs && cs->cells[i].sel != CELL_SELECTED)) continue;
    char *path = run_log_path(r, log);
    cellog_result res;
    int have = cellog_read_result(path, &res) == 0;
    if (!have || !cellog_status_good(res.status)) {
      if (bad < 30) {
        /* the reason first (TIMEOUT, CANCELLED, NODE_FAIL, OUT_OF_MEMORY or the program's
         * own words), then where the whole story is; a job that ended without a log (seen by
         * a read-only poll) shows its state */
        const cellrec *rec = have ? NULL : run_cell(r, log);
        const char *state = res.state[0] ? res.state : "-";
        char *why = res.reason[0] ? quote_value(res.reason) : NULL;
        if (rec && rec->ended[0]) {
          state = rec->ended;
          why = xstrdup("ended without a log (--resume writes it)");
        }
        fprintf(out, "  %-10s %-13s %s%s%s\n",
                have ? (res.status[0] ? res.status : "no-result") : "no-log", state, log,
                why ? ": " : "", why ? why : "");
        fprintf(out, "             %s\n", path);
        free(why);
      }
      bad++;
    }
    free(path);
  }
  if (bad > 30) fprintf(out, "  ... and %d more\n", bad - 30);
  return bad;
}

/* The executor a --resume/--rerun continues with: --local/--slurm when given, else the one the
 * run last submitted with (a run made with --local stays local under a Slurm cluster file),
 * else `kind`, the cluster file's or the machine's. */
static executor_kind resumed_executor(const options *o, const run *r, executor_kind kind) {
  if (o->executor != EXEC_AUTO) return o->executor;
  for (int i = r->nsubs - 1; i >= 0; i--) {
    const char *ex = r->subs[i].executor;
    if (!ex) continue;
    executor_kind was = strcmp(ex, "local") == 0 ? EXEC_LOCAL : EXEC_SLURM;
    if (was != kind)
      fprintf(stderr,
              "repro-run: run %s was made with the %s executor: continuing with it (%s "
              "picks the other)\n",
              r->dir, ex, was == EXEC_LOCAL ? "--slurm" : "--local");
    return was;
  }
  return kind;
}

static int has_slurm_subs(const run *r) {
  for (int i = 0; i < r->nsubs; i++)
    if (r->subs[i].executor && strcmp(r->subs[i].executor, "slurm") == 0) return 1;
  return 0;
}

/* --device: cells of other devices are filtered out. */
static int restrict_device(cellset *cs, const char *device) {
  if (!device) return 0;
  int known = 0;
  for (int i = 0; i < cs->ncells; i++) {
    cell *c = &cs->cells[i];
    int same = strcmp(cell_value(cs, c, "device"), device) == 0;
    known |= same;
    if (!same && c->sel != CELL_FILTERED) c->sel = CELL_FILTERED;
  }
  if (!known)
    fprintf(stderr, "repro-run: --device %s: no experiment has this device on its device axis\n",
            device);
  return known ? 0 : -1;
}

/* One machine has one kind of GPU: the local executor runs the cells of one device. */
static int check_local_devices(const cellset *cs) {
  const char *first = NULL;
  for (int i = 0; i < cs->ncells; i++) {
    if (cs->cells[i].sel != CELL_SELECTED) continue;
    const char *d = cell_value(cs, &cs->cells[i], "device");
    if (!first)
      first = d;
    else if (strcmp(first, d) != 0) {
      fprintf(stderr,
              "repro-run: the local executor runs on this machine's GPU, but the cells span "
              "devices %s and %s: pick one with --device LABEL\n",
              first, d);
      return -1;
    }
  }
  return 0;
}

/* The GPUs of a local run (--gpus, else every visible one), announced once. An empty list
 * (no GPU found, as on a CPU machine) runs cells unpinned, -j at a time. */
static int local_gpus(const options *o, gpu_list *gpus) {
  char *err = NULL;
  if (gpus_visible(gpus, &err) != 0 || gpus_select(gpus, o->gpus, &err) != 0) {
    fprintf(stderr, "repro-run: %s\n", err);
    free(err);
    return -1;
  }
  if (gpus->n == 0 || o->quiet) return 0;
  sbuf line = {0};
  for (int i = 0; i < gpus->n; i++)
    sb_addf(&line, "%s%s%s%s%s", i ? ", " : "", gpus->gpus[i].index,
            gpus->gpus[i].uuid[0] ? " (" : "", gpus->gpus[i].uuid,
            gpus->gpus[i].uuid[0] ? ")" : "");
  int at_once = o->jobs > 0 && o->jobs < gpus->n ? o->jobs : gpus->n;
  fprintf(stderr, "local executor: %d GPU(s) %s%s%s: %d cell(s) at once, one per GPU\n", gpus->n,
          gpus->gpus[0].name[0] ? gpus->gpus[0].name : "", gpus->gpus[0].name[0] ? " " : "", line.s,
          at_once);
  if (o->jobs > gpus->n)
    fprintf(stderr, "local executor: -j %d > %d GPU(s): timing cells never share a GPU\n", o->jobs,
            gpus->n);
  sb_free(&line);
  return 0;
}

/* The ad-hoc values the command line's --only and, on --resume/--rerun, the run's select
 * records name join their ranged axes before the matrix is expanded. A record that no longer
 * parses adds nothing here; apply_run_selection refuses it. */
static void add_adhoc_values(const options *o, expfile *file) {
  filters_add_values(file, o->filters, o->nfilters);
  for (int i = 0; i < o->run_only.n; i++) {
    filter f;
    char *err = NULL;
    if (filter_parse(o->run_only.v[i], &f, &err) == 0) {
      filters_add_values(file, &f, 1);
      filter_free(&f);
    }
    free(err);
  }
}

/* Loads the experiment file, the cluster file when given, and expands the matrix with the
 * filters and --device. Returns 0, or 2 with everything freed and the error printed. */
typedef struct {
  expfile file;
  clusterfile cluster;
  int have_cluster;
  cellset cs;
} inputs;

static int load_inputs(const options *o, inputs *in) {
  char *err = NULL;
  memset(in, 0, sizeof *in);
  if (expfile_load_cases(o->file, o->cases, &in->file, &err) != 0) goto fail;
  in->file.sets = &o->sets;
  add_adhoc_values(o, &in->file);
  if (o->cluster) {
    if (cluster_load(o->cluster, &in->cluster, &err) != 0) {
      expfile_free(&in->file);
      goto fail;
    }
    in->have_cluster = 1;
  }
  if (expand(&in->file, in->have_cluster ? &in->cluster : NULL, o->filters, o->nfilters, &in->cs,
             &err) != 0 ||
      restrict_device(&in->cs, o->device) != 0) {
    cellset_free(&in->cs);
    if (in->have_cluster) cluster_free(&in->cluster);
    expfile_free(&in->file);
    goto fail;
  }
  return 0;
fail:
  if (err) fprintf(stderr, "repro-run: %s\n", err);
  free(err);
  return 2;
}

static void free_inputs(inputs *in) {
  cellset_free(&in->cs);
  if (in->have_cluster) cluster_free(&in->cluster);
  expfile_free(&in->file);
}

/* The run's --set values (its first select record's) into o->sets; -1 when one is not
 * NAME=VALUE (an edited journal). */
static int recorded_sets(options *o, const strvec *set) {
  for (int i = 0; i < set->n; i++) {
    char *err = NULL;
    if (set_parse(set->v[i], &o->sets, &o->set_store, &err) != 0) {
      fprintf(stderr, "repro-run: the run's select record: %s\n", err);
      free(err);
      return -1;
    }
  }
  return 0;
}

/* --resume/--rerun continue the run as it was made: without --cases in its own case lists
 * and without --set with its own --set values (its first select record), so run_single.sh needs no --cases for a run made with one, and
 * with its own cluster file (the run record's; "" when it had none), its records' --only in
 * o->run_only (their ad-hoc values). Sets *cases and *cluster
 * (caller frees; NULL: nothing to take); -1 when the run cannot be read. */
static int run_recorded(options *o, char **cases, char **cluster) {
  *cases = *cluster = NULL;
  if (!(o->resume || o->rerun) || o->dry_run) return 0;
  char *abs = path_absolute(o->file), *dir = path_dirname(abs), *cur = NULL;
  run r;
  int rc = run_locate(o->run_dir, dir, &cur);
  if (rc == 0 && cur && (rc = run_open(&r, cur, RUN_READ)) == 0) {
    if (!o->cases && r.nselects > 0 && r.selects[0].cases) *cases = xstrdup(r.selects[0].cases);
    if (!o->set_args.n && r.nselects > 0 && recorded_sets(o, &r.selects[0].set) != 0) rc = -1;
    for (int i = 0; i < r.nselects; i++)
      for (int k = 0; k < r.selects[i].only.n; k++) sv_push(&o->run_only, r.selects[i].only.v[k]);
    *cluster = xstrdup(r.cluster ? r.cluster : "");
    run_close(&r);
  }
  free(cur);
  free(dir);
  free(abs);
  return rc;
}

/* The cluster file of a resume or rerun: -c when given (said when it is not the run's), else
 * the run's own (recorded; "" for none), not $REPRO_CLUSTER. -1 when the run's is no file. */
static int use_run_cluster(options *o, const char *recorded) {
  if (o->cluster_given) {
    char *given = path_absolute(o->cluster);
    if (strcmp(given, recorded) != 0)
      fprintf(stderr, "repro-run: -c %s overrides the run's cluster file %s\n", o->cluster,
              recorded[0] ? recorded : "(none)");
    free(given);
    return 0;
  }
  struct stat st;
  if (recorded[0] && (stat(recorded, &st) != 0 || !S_ISREG(st.st_mode))) {
    fprintf(stderr,
            "repro-run: the run's cluster file %s (its manifest's run record) is not a readable "
            "file: pass -c FILE to continue the run with another\n",
            recorded);
    return -1;
  }
  if (o->cluster && strcmp(o->cluster, recorded) != 0)
    fprintf(stderr,
            "repro-run: continuing with the run's cluster file %s, not $REPRO_CLUSTER (%s); -c "
            "FILE overrides it\n",
            recorded[0] ? recorded : "(none)", o->cluster);
  o->cluster = recorded[0] ? recorded : NULL;
  return 0;
}

static int cmd_run(options *o) {
  char *own_cases = NULL, *own_cluster = NULL;
  const char *given_cluster = o->cluster;
  if (run_recorded(o, &own_cases, &own_cluster) != 0 ||
      (own_cluster && use_run_cluster(o, own_cluster) != 0)) {
    free(own_cases);
    free(own_cluster);
    return 2;
  }
  if (own_cases) o->cases = own_cases;
  inputs in;
  if (load_inputs(o, &in) != 0) {
    if (own_cases) o->cases = NULL;
    o->cluster = given_cluster;
    free(own_cases);
    free(own_cluster);
    return 2;
  }
  expfile *file = &in.file;
  clusterfile *cluster = &in.cluster;
  cellset *cs = &in.cs;
  int have_cluster = in.have_cluster, rc = 2;
  executor_kind kind = o->executor;
  if (kind == EXEC_AUTO && have_cluster) kind = cluster->executor;
  if (kind == EXEC_AUTO) kind = slurm_available() ? EXEC_SLURM : EXEC_LOCAL;
  char *self = self_path(), *bin = o->bin ? path_absolute(o->bin) : path_dirname(self);
  char *root = repo_root_find(file->dir); /* NULL: {root} cannot be rendered (expand.c) */
  run r;
  exec_ctx x = {
      .file = file,
      .cluster = have_cluster ? cluster : NULL,
      .cs = cs,
      .r = &r,
      .rt = {.bin = bin, .root = root, .python = o->python ? o->python : getenv("REPRO_PYTHON")},
      .runner_path = self,
      .jobs = o->jobs,
      .poll_s = o->poll_s > 0 ? o->poll_s : 10,
      .detach = o->detach,
      .quiet = o->quiet};
  gpu_list gpus = {0};
  x.gpus = &gpus;
  memset(&r, 0, sizeof r);
  r.fd = -1;
  int figlock = -1;
  if (kind == EXEC_SLURM && !have_cluster && !o->dry_run) {
    fprintf(stderr, "repro-run: the Slurm executor needs a cluster file (-c FILE or "
                    "$REPRO_CLUSTER): it says which partition and GPUs a device means\n");
    goto out_all;
  }
  char *current = NULL;
  if (run_locate(o->run_dir, file->dir, &current) != 0) goto out_all;
  int reuse = (o->resume || o->rerun) && !o->dry_run;
  if ((o->resume || reuse) && !current) {
    fprintf(stderr,
            "repro-run: %s: %s has no current run (ae_logs) to continue; start one without %s\n",
            o->resume ? "--resume" : "--rerun", file->dir, o->resume ? "--resume" : "--rerun");
    goto out_all;
  }
  reuse = reuse && current;
  if (!o->dry_run &&
      (lock_figure(file->dir, o->allow_concurrent, &figlock) != 0 ||
       check_queued_runs(file->dir, reuse ? current : NULL, o->allow_concurrent) != 0)) {
    free(current);
    goto out_all;
  }
  if (reuse) {
    if (run_open(&r, current, RUN_WRITE) != 0 || lock_run(&r) != 0 ||
        apply_run_selection(o, cs, have_cluster ? cluster : NULL, &r) != 0) {
      free(current);
      goto out_all;
    }
    kind = resumed_executor(o, &r, kind);
  }
  print_selection_notes(&x);
  if (kind == EXEC_LOCAL && !o->dry_run &&
      (check_local_devices(cs) != 0 || local_gpus(o, &gpus) != 0)) {
    free(current);
    goto out_all;
  }
  if (kind != EXEC_LOCAL && o->gpus) {
    fprintf(stderr, "repro-run: --gpus is the local executor's; under Slurm the cluster file's "
                    "gres says how many GPUs a cell gets\n");
    free(current);
    goto out_all;
  }
  if (!reuse && (run_create(&r, file->dir, o->dry_run ? "dry-run-" : NULL, file->figure, file->path,
                            have_cluster ? cluster->path : NULL) != 0 ||
                 (!o->dry_run && lock_run(&r) != 0) || note_select(o, &r) != 0)) {
    free(current);
    goto out_all;
  }
  free(current);
  lock_figure_note(figlock, &r);
  x.rt.run_dir = r.dir;
  if (o->dry_run) {
    print_cells(&x);
    int *sel = xmalloc((size_t)(cs->ncells ? cs->ncells : 1) * sizeof *sel), n = 0;
    for (int i = 0; i < cs->ncells; i++)
      if (cs->cells[i].sel == CELL_SELECTED) sel[n++] = i;
    rc = slurm_write_scripts(&x, sel, n, 0) == 0 ? 0 : 2;
    if (!o->quiet)
      fprintf(stderr, "dry run: array scripts in %s/jobs (nothing submitted)\n", r.dir);
    free(sel);
    goto out_all;
  }
  /* ae_logs follows the run this runner works on: a new one, or one --resume/--rerun continues */
  int made_current = run_make_current(&r, file->dir) == 0;
  install_signals();
  local_recover(&x);
  if (has_slurm_subs(&r)) {
    if (!slurm_available()) {
      fprintf(stderr,
              "repro-run: this run has Slurm jobs but sbatch/squeue are not on PATH here\n");
      goto out_all;
    }
    if (slurm_recover(&x) != 0) goto out_all;
    progress p;
    x.silent = 1;
    slurm_wait(&x, 1, &p); /* learn which cells are queued or running; record ended ones */
    x.silent = 0; /* what was done before this runner began: the ETA waits for a new cell */
  }
  /* the cells to submit now */
  int *todo = xmalloc((size_t)(cs->ncells ? cs->ncells : 1) * sizeof *todo), n = 0, inflight = 0,
      good = 0;
  for (int i = 0; i < cs->ncells; i++) {
    const cell *c = &cs->cells[i];
    if (c->sel != CELL_SELECTED) continue;
    if (reuse && slurm_cell_in_flight(&x, c->log)) {
      inflight++;
      continue;
    }
    if (o->resume) {
      char *path = run_log_path(&r, c->log);
      char status[64];
      int keep = cellog_status(path, status, sizeof status) == 0 && cellog_status_good(status);
      free(path);
      if (keep) {
        good++;
        continue;
      }
    }
    todo[n++] = i;
  }
  if (inflight && !x.quiet)
    fprintf(stderr, "%d cells are already queued or running: not submitted again\n", inflight);
  if (good && !x.quiet) fprintf(stderr, "%d cells already have a good log: kept\n", good);
  if (!x.quiet)
    fprintf(stderr, "run %s: %d cells to run (%s executor)\n", r.dir, n,
            kind == EXEC_SLURM ? "slurm" : "local");
  rc = 0;
  if (kind == EXEC_SLURM) {
    if (n && slurm_write_scripts(&x, todo, n, 1) != 0) rc = 2;
    if (rc == 0 && !o->no_wait) {
      progress p;
      rc = slurm_wait(&x, 0, &p);
    }
  } else if (n) {
    int lr = local_run(&x, todo, n);
    rc = lr == 130 ? 130 : lr != 0 ? 2 : 0;
  }
  free(todo);
  if (rc == 0 && !o->no_wait) {
    int bad = report_failures(stderr, &r, cs);
    if (bad)
      fprintf(stderr, "%d cells did not end ok (their logs say why); `--resume` runs them again\n",
              bad);
    if (has_slurm_subs(&r)) slurm_report_requeued(stderr, &r);
    rc = bad ? 1 : 0;
  }
  if (rc == 0 || rc == 1)
    fprintf(stderr, "logs: %s/logs%s\n", r.dir, made_current ? " (ae_logs points there)" : "");
out_all:
  gpus_free(&gpus);
  run_close(&r);
  if (figlock >= 0) close(figlock);
  free(self);
  free(bin);
  free(root);
  free_inputs(&in);
  if (own_cases) o->cases = NULL;
  free(own_cases);
  o->cluster = given_cluster;
  free(own_cluster);
  return rc;
}

static int cmd_check(options *o) {
  inputs in;
  if (load_inputs(o, &in) != 0) return 2;
  /* render every command once, so a bad value shows up now, not on the cluster */
  runtime_vars rt = {.bin = "/bin", .root = "/", .run_dir = "/run"};
  sbuf cmd = {0};
  int selected = 0, rc = 0;
  for (int i = 0; i < in.cs.ncells && rc == 0; i++) {
    const cell *c = &in.cs.cells[i];
    if (c->sel != CELL_SELECTED) continue;
    selected++;
    const char *dev = cell_value(&in.cs, c, "device");
    cell_env env = {&in.cs, c, in.have_cluster ? cluster_device(&in.cluster, dev) : NULL, &rt};
    char *err = NULL;
    sb_clear(&cmd);
    if (cell_command(&env, &cmd, &err) != 0) {
      fprintf(stderr, "repro-run: %s\n", err);
      free(err);
      rc = 2;
    }
  }
  sb_free(&cmd);
  if (rc == 0)
    printf("%s: ok: %d experiments, %d cells, %d selected, %d arrays\n", in.file.path,
           in.file.nexps, in.cs.ncells, selected, in.cs.ngroups);
  free_inputs(&in);
  return rc;
}

/* A figure folder (its ae_logs) or a run folder. */
static int open_run_arg(const char *arg, run *r, run_mode mode) {
  char *dir = NULL;
  int rc = run_find(arg, &dir) == 0 ? run_open(r, dir, mode) : -1;
  free(dir);
  return rc;
}

static int cmd_status(const char *arg, int cancel) {
  run r;
  if (open_run_arg(arg, &r, cancel ? RUN_WRITE : RUN_READ) != 0) return 2;
  expfile dummy = {.figure = r.figure ? r.figure : r.id};
  /* status only looks: cells that ended without a log keep none (the next runner writes it) */
  exec_ctx x = {.file = &dummy, .r = &r, .poll_s = 1, .readonly = !cancel};
  int rc = 0, queued = 0;
  if (has_slurm_subs(&r) && slurm_available()) {
    if (cancel) {
      if (lock_run(&r) != 0) {
        run_close(&r);
        return 2;
      }
      rc = slurm_cancel(&x) == 0 ? 0 : 1;
    } else {
      progress p;
      slurm_wait(&x, 1, &p);
      queued = p.running + p.pending + p.unknown;
    }
  } else if (cancel) {
    fprintf(stderr, "repro-run: %s has no Slurm jobs to cancel\n", r.dir);
  }
  int total = 0;
  for (int i = 0; i < r.cap; i++) total += r.cells[i].log != NULL;
  printf("run %s: %d cells\n", r.dir, total);
  int bad = report_failures(stdout, &r, NULL);
  printf("%d cells without a good log (failed, timed out, still running or never run)\n", bad);
  slurm_report_requeued(stdout, &r);
  if (!cancel && run_failed_cells(&r) > 0) rc = 1; /* 1: cells failed, as a run's exit says */
  if (!cancel && rc == 0 && bad > 0 && !queued && !run_is_held(&r)) {
    /* nothing works on them: no runner holds the run and no job of it is queued or running */
    printf("no runner holds the run and none of its jobs is queued or running: `--resume` runs "
           "the %d cells\n",
           bad);
    rc = 1;
  }
  run_close(&r);
  return rc;
}

static int cmd_finish(int argc, char **argv) {
  if (argc != 4) {
    usage(stderr);
    return 2;
  }
  char *end;
  long rc = strtol(argv[3], &end, 10);
  if (*end || rc < 0 || rc > 255) {
    fprintf(stderr, "repro-run finish: RC must be an exit code, got '%s'\n", argv[3]);
    return 2;
  }
  if (cellog_finish(argv[0], argv[1], argv[2], (int)rc, NULL, NULL, NULL) != 0) return 2;
  /* The log says how the cell ended. A final answer it keeps (ok, unsupported: exit 4, oom:
   * exit 3) ends the task with 0, so sacct shows COMPLETED, not FAILED; a failed cell keeps
   * its code, so Slurm records FAILED. */
  char *path = xasprintf("%s/logs/%s", argv[0], argv[1]);
  char status[64];
  int good = cellog_status(path, status, sizeof status) == 0 && cellog_status_good(status);
  free(path);
  return good ? 0 : rc ? (int)rc : 1;
}

/* `verdict LOG...`: each log good or not, by cellog_read_result's rule; 0 all good, 1 not. */
static int cmd_verdict(int argc, char **argv) {
  if (argc < 1) {
    usage(stderr);
    return 2;
  }
  int bad = 0;
  for (int i = 0; i < argc; i++) {
    cellog_result res;
    if (cellog_read_result(argv[i], &res) != 0) {
      printf("bad - %s: cannot be read as a log (missing, a link, a FIFO or a read error)\n",
             argv[i]);
      bad++;
      continue;
    }
    const char *status = res.status[0] ? res.status : "-";
    if (cellog_status_good(res.status)) {
      printf("good %s %s\n", status, argv[i]);
    } else {
      printf("bad %s %s: %s\n", status, argv[i],
             res.reason[0]   ? res.reason
             : res.status[0] ? "not a final answer"
                             : "no usable result line");
      bad++;
    }
  }
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  setvbuf(stderr, NULL, _IOLBF, 0);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (command_help(argc, argv)) return 0;
  const char *cmd = argv[1];
  if (strcmp(cmd, "finish") == 0) return cmd_finish(argc - 2, argv + 2);
  if (strcmp(cmd, "verdict") == 0) return cmd_verdict(argc - 2, argv + 2);
  if (strcmp(cmd, "status") == 0 || strcmp(cmd, "cancel") == 0) {
    if (argc > 3) {
      usage(stderr);
      return 2;
    }
    return cmd_status(argc == 3 ? argv[2] : NULL, strcmp(cmd, "cancel") == 0);
  }
  int check = strcmp(cmd, "check") == 0;
  if (check || strcmp(cmd, "run") == 0) {
    argv++;
    argc--;
  }
  options o = {0};
  if (parse_options(argc, argv, &o) != 0) return 2;
  if (optind != argc - 1) {
    usage(stderr);
    return 2;
  }
  o.file = argv[optind];
  int rc = check ? cmd_check(&o) : cmd_run(&o);
  for (int i = 0; i < o.nfilters; i++) filter_free(&o.filters[i]);
  free(o.filters);
  sv_free(&o.only_args);
  sv_free(&o.exclude_args);
  sv_free(&o.set_args);
  sv_free(&o.set_store);
  sv_free(&o.run_only);
  free(o.sets.v);
  return rc;
}
