/* cmd_run: `run` and `check`: the experiment and cluster files loaded and the matrix expanded,
 * then a new run made (or the current one taken again by --resume/--rerun, resume.c) and its
 * cells printed (--dry-run), submitted to Slurm or run here. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cellog.h"
#include "cli.h"
#include "reporoot.h"

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

static char *self_path(void) {
  char *p = path_absolute("/proc/self/exe");
  return p;
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

/* One `run`: what it loaded, the run it works on and what it holds until it returns. */
typedef struct {
  options *o;
  inputs in;
  executor_kind kind;
  run r;
  exec_ctx x;
  gpu_list gpus;
  int figlock; /* FIGDIR/runs/.lock (lock_figure), or -1 */
  int reuse;   /* --resume/--rerun continue the current run */
  char *self, *bin, *root;
} run_job;

/* The executor, the template values and the executors' context of a loaded matrix. */
static void job_init(run_job *j, options *o) {
  j->o = o;
  j->kind = o->executor;
  if (j->kind == EXEC_AUTO && j->in.have_cluster) j->kind = j->in.cluster.executor;
  if (j->kind == EXEC_AUTO) j->kind = slurm_available() ? EXEC_SLURM : EXEC_LOCAL;
  j->self = self_path();
  j->bin = o->bin ? path_absolute(o->bin) : path_dirname(j->self);
  j->root = repro_root_find(j->in.file.dir); /* NULL: {root} cannot be rendered (expand.c) */
  j->x = (exec_ctx){.file = &j->in.file,
                    .cluster = j->in.have_cluster ? &j->in.cluster : NULL,
                    .cs = &j->in.cs,
                    .r = &j->r,
                    .rt = {.bin = j->bin,
                           .root = j->root,
                           .python = o->python ? o->python : getenv("REPRO_PYTHON")},
                    .runner_path = j->self,
                    .jobs = o->jobs,
                    .poll_s = o->poll_s > 0 ? o->poll_s : 10,
                    .detach = o->detach,
                    .quiet = o->quiet};
  memset(&j->gpus, 0, sizeof j->gpus);
  j->x.gpus = &j->gpus;
  memset(&j->r, 0, sizeof j->r);
  j->r.fd = -1;
  j->figlock = -1;
  j->reuse = 0;
}

static void job_free(run_job *j) {
  gpus_free(&j->gpus);
  run_close(&j->r);
  if (j->figlock >= 0) close(j->figlock);
  free(j->self);
  free(j->bin);
  free(j->root);
  free_inputs(&j->in);
}

/* The run this runner works on: the current one (`current`, NULL: none) again for
 * --resume/--rerun, else a new one; the figure's and the run's locks taken, the executor's
 * checks passed. 0, or -1 with the refusal said. */
static int job_take_run(run_job *j, const char *current) {
  const options *o = j->o;
  const expfile *file = &j->in.file;
  const clusterfile *cluster = j->in.have_cluster ? &j->in.cluster : NULL;
  int reuse = (o->resume || o->rerun) && !o->dry_run;
  if ((o->resume || reuse) && !current) {
    fprintf(stderr,
            "repro-run: %s: %s has no current run (ae_logs) to continue; start one without %s\n",
            o->resume ? "--resume" : "--rerun", file->dir, o->resume ? "--resume" : "--rerun");
    return -1;
  }
  j->reuse = reuse = reuse && current;
  if (!o->dry_run &&
      (lock_figure(file->dir, o->allow_concurrent, &j->figlock) != 0 ||
       check_queued_runs(file->dir, reuse ? current : NULL, o->allow_concurrent) != 0))
    return -1;
  if (reuse) {
    if (run_open(&j->r, current, RUN_WRITE) != 0 || lock_run(&j->r) != 0 ||
        apply_run_selection(o, &j->in.cs, cluster, &j->r) != 0)
      return -1;
    j->kind = resumed_executor(o, &j->r, j->kind);
  }
  print_selection_notes(&j->x);
  if (j->kind == EXEC_LOCAL && !o->dry_run &&
      (check_local_devices(&j->in.cs) != 0 || local_gpus(o, &j->gpus) != 0))
    return -1;
  if (j->kind != EXEC_LOCAL && o->gpus) {
    fprintf(stderr, "repro-run: --gpus is the local executor's; under Slurm the cluster file's "
                    "gres says how many GPUs a cell gets\n");
    return -1;
  }
  if (!reuse && (run_create(&j->r, file->dir, o->dry_run ? "dry-run-" : NULL, file->figure,
                            file->path, cluster ? cluster->path : NULL) != 0 ||
                 (!o->dry_run && lock_run(&j->r) != 0) || note_select(o, &j->r) != 0))
    return -1;
  return 0;
}

/* job_take_run after the checks that need no run; 0 or -1. */
static int job_open(run_job *j) {
  if (j->kind == EXEC_SLURM && !j->in.have_cluster && !j->o->dry_run) {
    fprintf(stderr, "repro-run: the Slurm executor needs a cluster file (-c FILE or "
                    "$REPRO_CLUSTER): it says which partition and GPUs a device means\n");
    return -1;
  }
  char *current = NULL;
  if (run_locate(j->o->run_dir, j->in.file.dir, &current) != 0) return -1;
  int rc = job_take_run(j, current);
  free(current);
  if (rc != 0) return -1;
  lock_figure_note(j->figlock, &j->r);
  j->x.rt.run_dir = j->r.dir;
  return 0;
}

/* --dry-run: the cells printed, their array scripts written, nothing submitted. */
static int job_dry_run(run_job *j) {
  const cellset *cs = &j->in.cs;
  print_cells(&j->x);
  int *sel = xmalloc((size_t)(cs->ncells ? cs->ncells : 1) * sizeof *sel), n = 0;
  for (int i = 0; i < cs->ncells; i++)
    if (cs->cells[i].sel == CELL_SELECTED) sel[n++] = i;
  int rc = slurm_write_scripts(&j->x, sel, n, 0) == 0 ? 0 : 2;
  if (!j->o->quiet)
    fprintf(stderr, "dry run: array scripts in %s/jobs (nothing submitted)\n", j->r.dir);
  free(sel);
  return rc;
}

/* What a killed runner of this run left: its local orphans ended, its Slurm submissions
 * settled and polled once (which cells are queued or running; ended ones recorded). */
static int job_settle(run_job *j) {
  exec_ctx *x = &j->x;
  install_signals();
  local_recover(x);
  if (!slurm_has_subs(&j->r)) return 0;
  if (!slurm_available()) {
    fprintf(stderr, "repro-run: this run has Slurm jobs but sbatch/squeue are not on PATH here\n");
    return -1;
  }
  if (slurm_recover(x) != 0) return -1;
  progress p;
  x->silent = 1;
  slurm_wait(x, 1, &p); /* learn which cells are queued or running; record ended ones */
  /* what was done before this runner began: the ETA waits for a new cell */
  x->silent = 0;
  return 0;
}

/* The cells to run now into todo (their number): the selected ones, less those queued or
 * running and, on --resume, those with a good log. */
static int job_todo(run_job *j, int *todo) {
  const cellset *cs = &j->in.cs;
  int n = 0, inflight = 0, good = 0;
  for (int i = 0; i < cs->ncells; i++) {
    const cell *c = &cs->cells[i];
    if (c->sel != CELL_SELECTED) continue;
    if (j->reuse && slurm_cell_in_flight(&j->x, c->log)) {
      inflight++;
      continue;
    }
    if (j->o->resume) {
      char *path = run_log_path(&j->r, c->log);
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
  if (inflight && !j->x.quiet)
    fprintf(stderr, "%d cells are already queued or running: not submitted again\n", inflight);
  if (good && !j->x.quiet) fprintf(stderr, "%d cells already have a good log: kept\n", good);
  if (!j->x.quiet)
    fprintf(stderr, "run %s: %d cells to run (%s executor)\n", j->r.dir, n,
            j->kind == EXEC_SLURM ? "slurm" : "local");
  return n;
}

/* The run's cells submitted or run here, waited for (unless --no-wait) and summed up. */
static int job_execute(run_job *j) {
  const options *o = j->o;
  run *r = &j->r;
  /* ae_logs follows the run this runner works on: a new one, or one --resume/--rerun continues */
  int made_current = run_make_current(r, j->in.file.dir) == 0;
  if (job_settle(j) != 0) return 2;
  const cellset *cs = &j->in.cs;
  int *todo = xmalloc((size_t)(cs->ncells ? cs->ncells : 1) * sizeof *todo);
  int n = job_todo(j, todo), rc = 0;
  if (j->kind == EXEC_SLURM) {
    if (n && slurm_write_scripts(&j->x, todo, n, 1) != 0) rc = 2;
    if (rc == 0 && !o->no_wait) {
      progress p;
      rc = slurm_wait(&j->x, 0, &p);
    }
  } else if (n) {
    int lr = local_run(&j->x, todo, n);
    rc = lr == 130 ? 130 : lr != 0 ? 2 : 0;
  }
  free(todo);
  if (rc == 0 && !o->no_wait) {
    int bad = report_failures(stderr, r, cs);
    if (bad)
      fprintf(stderr, "%d cells did not end ok (their logs say why); `--resume` runs them again\n",
              bad);
    if (slurm_has_subs(r)) slurm_report_requeued(stderr, r);
    rc = bad ? 1 : 0;
  }
  if (rc == 0 || rc == 1)
    fprintf(stderr, "logs: %s/logs%s\n", r->dir, made_current ? " (ae_logs points there)" : "");
  return rc;
}

int cmd_run(options *o) {
  char *own_cases = NULL, *own_cluster = NULL;
  const char *given_cluster = o->cluster;
  if (run_recorded(o, &own_cases, &own_cluster) != 0 ||
      (own_cluster && use_run_cluster(o, own_cluster) != 0)) {
    free(own_cases);
    free(own_cluster);
    return 2;
  }
  if (own_cases) o->cases = own_cases;
  run_job j;
  int rc = 2;
  if (load_inputs(o, &j.in) == 0) {
    job_init(&j, o);
    rc = job_open(&j) != 0 ? 2 : o->dry_run ? job_dry_run(&j) : job_execute(&j);
    job_free(&j);
  }
  if (own_cases) o->cases = NULL;
  free(own_cases);
  o->cluster = given_cluster;
  free(own_cluster);
  return rc;
}

int cmd_check(options *o) {
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
