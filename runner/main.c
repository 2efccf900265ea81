/* repro-run: YAML experiment matrices run as Slurm job arrays or local processes. This file:
 * the commands' help, the options parsed and each command dispatched to its file (cli.h).
 * See runner/README.md for the file formats and the run folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

int main(int argc, char **argv) {
  setvbuf(stderr, NULL, _IOLBF, 0);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (command_help(argc, argv)) return 0;
  const char *cmd = argv[1];
  int finish = strcmp(cmd, "finish") == 0, verdict = strcmp(cmd, "verdict") == 0;
  if ((finish && argc != 6) || (verdict && argc < 3)) {
    usage(stderr);
    return 2;
  }
  if (finish) return cmd_finish(argv + 2);
  if (verdict) return cmd_verdict(argc - 2, argv + 2);
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
