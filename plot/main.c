/* repro-plot: logs -> tidy table -> gnuplot data + scripts -> figures; export, merge, compare,
 * report, provenance, render. Each command's synopsis, options and outputs, and the exit codes:
 * `commands` and usage() below (`repro-plot --help`, `repro-plot COMMAND --help`). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "emit.h"
#include "figure.h"
#include "fileio.h"
#include "provenance.h"
#include "reader.h"
#include "render.h"
#include "report.h"
#include "table.h"
#include "table_input.h"

#ifndef PLOT_TEMPLATE_DIR
#define PLOT_TEMPLATE_DIR "plot/gnuplot"
#endif

typedef struct {
  const char *config, *logs, *out, *format, *output, *templates, *device;
  int strict, no_render, verbose, jobs, latest;
  double tol;
  char **rest;
  int nrest;
  const char **tables; /* --table FILE..., in place of --logs */
  int ntables;
} cli;

/* Each command: its synopsis (`repro-plot --help` lists them all; continuation lines indented
 * under it) and what `repro-plot CMD --help` adds: its options and what it writes. */
static const struct {
  const char *name, *synopsis, *details;
} commands[] = {
    {"draw",
     "draw    --config FIG/experiment.yaml (--logs DIR | --table FILE...) [--out DIR]\n"
     "                     [--strict] [--no-render] [--verbose] [-j N] [--templates DIR]\n"
     "                     [--latest]",
     "Reads the logs in DIR (a folder that does not exist: every cell NS) with the experiment\n"
     "file and writes each of its plot: figures into --out DIR (default ./figures): NAME.dat and\n"
     "NAME.gp, then, through gnuplot, NAME.pdf, NAME.png and NAME.svg (gnuplot's messages in\n"
     "NAME.gnuplot.log). Prints each figure's table and missing logs, and every broken, unknown,\n"
     "odd or undrawn log with why.\n"
     "  --table FILE     draw from a table instead of DIR: a .csv or .json of `repro-plot table`\n"
     "                   or `merge`, or the tilebench seed's result JSON (its merged\n"
     "                   complete.json); the same .dat and .gp as from the logs it was made of.\n"
     "                   Repeatable: merged in order as merge does (a later table's row of a\n"
     "                   cell on the same GPU wins); rows of other figures are left out; a\n"
     "                   malformed or cut table is refused naming FILE:LINE (exit 1)\n"
     "  --strict         a broken, unknown, odd or undrawn log is an error (exit 3)\n"
     "  --no-render      the .dat and .gp files only, no gnuplot\n"
     "  --verbose        list every missing log, not the first 24\n"
     "  -j N             at most N gnuplot runs at once (default: one per CPU)\n"
     "  --templates DIR  the gnuplot templates (default $REPRO_PLOT_TEMPLATES, else plot/gnuplot)\n"
     "  --latest         of several logs of one cell draw the newest (else the cell is ERR;\n"
     "                   --logs only)\n"},
    {"table",
     "table   --config F (--logs DIR | --table FILE...) [--format csv|json] [-o FILE]\n"
     "                     [--strict] [--latest]\n"
     "  repro-plot table   --config F (--logs DIR | --table FILE...) --format markdown\n"
     "                     [--device NAME] [-o FILE]",
     "Writes the tidy table of the logs in DIR, a row per log (its cell's keys, status, times,\n"
     "reason, GPU: plot/README.md names the columns), as csv (the default) or json; or, with\n"
     "--format markdown, what the figures show as Markdown tables (README.md's results, with the\n"
     "paper's times; --device NAME: that device's alone), to stdout or to -o FILE. The broken\n"
     "or skipped logs are listed on stderr. --table FILE...: the rows of tables instead, read\n"
     "as draw --table reads them (F's figure's rows, completed, merged).\n"
     "  --strict         a broken or skipped log is an error (exit 3)\n"
     "  --latest         of several logs of one cell take the newest (else the cell is ERR)\n"},
    {"merge",
     "merge   [--format csv|json] [-o FILE] TABLE...   (TABLE: .csv, or .json: ours or the\n"
     "                     tilebench seed's result files)",
     "Writes one table of every TABLE's rows, as csv (the default) or json, to stdout or to -o\n"
     "FILE. A cell an earlier TABLE has on the same GPU is replaced by the later TABLE's row\n"
     "(said on stderr); rows of two GPUs are both kept.\n"},
    {"compare", "compare [--config F] [--tol 0.10] [--latest] A B   (A, B: log folders or tables)",
     "Prints, per cell, A's and B's time and B/A (\"<- outside\" when it is more than --tol off "
     "1),\n"
     "the cells of one side only and the geometric mean of B/A; writes nothing. A and B are log\n"
     "folders (read with --config F) or .csv/.json tables; --latest: of several logs of one cell\n"
     "the newest. Exit 4 when a cell is outside the tolerance.\n"},
    {"report",
     "report  [-o report.html] [--compare ROOT] [--paper ROOT] [--tolerance T]\n"
     "                     [--latest] --config F (--logs DIR | --table FILE...) [--figures DIR]\n"
     "                     [--config ...]",
     "Writes one self-contained HTML file (-o FILE, default ./report.html): per section (each\n"
     "--config, with the --logs and --figures after it) its figures (the .svg files in --figures\n"
     "DIR; without it, its tables alone), summary, geometric means, missing logs, and a sortable\n"
     "table of its logs with their checks and provenance. --table FILE... in place of --logs:\n"
     "the section's rows from tables, read as draw --table reads them (no check or meta\n"
     "records: a table holds none).\n"
     "  --compare ROOT   each cell's time against ROOT/<figure>'s log of the same cell\n"
     "  --paper ROOT     the original artifact's logs under ROOT/<figure> as the paper column\n"
     "  --tolerance T    --compare's tolerance (default 0.10)\n"
     "  --latest         of several logs of one cell read the newest\n"},
    {"provenance",
     "provenance [--device NAME] [--exclude GLOB]... [--one-commit] DIR...\n"
     "                     (each folder's logs by GPU and commit: dates, checks, statuses)",
     "Prints, tab-separated, a row per folder, GPU and commit of the *.log files under each DIR:\n"
     "the logs, their first and last meta dates, the checks passed and failed, the results by\n"
     "status; writes nothing.\n"
     "  --device NAME    one GPU's logs (the meta line's gpu=: \"NVIDIA H200\" is h200)\n"
     "  --exclude GLOB   leave out the logs whose file name matches (repeatable)\n"
     "  --one-commit     exit 1 unless they all name one commit, not -dirty, no check failed\n"
     "                   and every log could be read\n"},
    {"render",
     "render  DIR NAME...   (gnuplot DIR/NAME.gp as draw renders: outputs checked,\n"
     "                     reproducible PDF dates)",
     "Runs gnuplot on DIR/NAME.gp for each NAME as draw renders its figures, several at once:\n"
     "writes DIR/NAME.pdf, NAME.png and NAME.svg (checked, the PDF's date made reproducible) and\n"
     "gnuplot's messages to DIR/NAME.gnuplot.log; for a study's own gnuplot scripts\n"
     "(studies/h2o-diag/plot_diag.sh). Exit 2 on a NAME with / or without its NAME.gp, 1 when\n"
     "gnuplot is missing or a figure failed.\n"},
};

static void usage(FILE *f) {
  fputs("usage:\n", f);
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  repro-plot %s\n", commands[i].synopsis);
  fputs("`repro-plot COMMAND --help`: a command's options and what it writes (plot/README.md).\n"
        "exit: 0 fine, 1 error (a --table or TABLE malformed or cut: named FILE:LINE; provenance:\n"
        "no logs, or --one-commit failed), 2 usage, 3 --strict and some log or table row was\n"
        "broken or skipped, 4 compare found cells outside the tolerance\n",
        f);
}

/* `repro-plot CMD ... --help` (or -h): 1, with CMD's usage on stdout, when CMD is a command and
 * an argument after it asks for help; else 0. */
static int command_help(int argc, char **argv) {
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
    if (strcmp(argv[1], commands[i].name)) continue;
    for (int a = 2; a < argc; a++) {
      if (strcmp(argv[a], "-h") && strcmp(argv[a], "--help")) continue;
      printf("usage: repro-plot %s\n\n%s", commands[i].synopsis, commands[i].details);
      return 1;
    }
  }
  return 0;
}

/* --logs DIR or --table FILE... (draw and table; report parses its own): one kind of input;
 * --latest picks among logs only. */
static int check_input(const char *cmd, const cli *c) {
  if (c->ntables && strcmp(cmd, "draw") && strcmp(cmd, "table")) {
    fprintf(stderr,
            "repro-plot: --table: only with draw, table and report (%s takes tables as "
            "its arguments)\n",
            cmd);
    return -1;
  }
  if (c->logs && c->ntables) {
    fprintf(stderr, "repro-plot: give --logs DIR or --table FILE..., not both\n");
    return -1;
  }
  if (c->latest && c->ntables) {
    fprintf(stderr, "repro-plot: --latest: only with --logs (a table has one row per cell)\n");
    return -1;
  }
  return 0;
}

static int parse_cli(int argc, char **argv, cli *c) {
  memset(c, 0, sizeof *c);
  c->format = "csv";
  c->tol = 0.10;
  c->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
  c->rest = calloc((size_t)argc, sizeof *c->rest);
  c->tables = calloc((size_t)argc, sizeof *c->tables);
  if (!c->rest || !c->tables) return -1;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = NULL;
    if (!strcmp(a, "--config"))
      slot = &c->config;
    else if (!strcmp(a, "--logs"))
      slot = &c->logs;
    else if (!strcmp(a, "--table"))
      slot = &c->tables[c->ntables++];
    else if (!strcmp(a, "--out"))
      slot = &c->out;
    else if (!strcmp(a, "--format"))
      slot = &c->format;
    else if (!strcmp(a, "-o"))
      slot = &c->output;
    else if (!strcmp(a, "--templates"))
      slot = &c->templates;
    else if (!strcmp(a, "--device"))
      slot = &c->device;
    else if (!strcmp(a, "--strict")) {
      c->strict = 1;
      continue;
    } else if (!strcmp(a, "--no-render")) {
      c->no_render = 1;
      continue;
    } else if (!strcmp(a, "--latest")) {
      c->latest = 1;
      continue;
    } else if (!strcmp(a, "--verbose")) {
      c->verbose = 1;
      continue;
    } else if (!strcmp(a, "-j") || !strcmp(a, "--tol")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "repro-plot: %s needs a value\n", a);
        return -1;
      }
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || v < 0) {
        fprintf(stderr, "repro-plot: %s: expected a number >= 0, got \"%s\"\n", a, argv[i]);
        return -1;
      }
      if (a[1] == 'j')
        c->jobs = (int)v;
      else
        c->tol = v;
      continue;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "repro-plot: unknown option %s\n", a);
      return -1;
    } else {
      c->rest[c->nrest++] = argv[i];
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "repro-plot: %s needs a value\n", a);
      return -1;
    }
    *slot = argv[++i];
  }
  if (strcmp(c->format, "csv") && strcmp(c->format, "json") && strcmp(c->format, "markdown")) {
    fprintf(stderr, "repro-plot: --format: expected csv, json or markdown, got \"%s\"\n",
            c->format);
    return -1;
  }
  if (c->device && strcmp(c->format, "markdown")) {
    fprintf(stderr, "repro-plot: --device: only with table --format markdown\n");
    return -1;
  }
  return check_input(argv[1], c);
}

/* Reads a log folder with a config into t (latest: of several logs of one cell, the newest).
 * Returns 0, or -1 when the folder is unreadable.
 * A folder that does not exist counts as empty (every cell NS), with a note. */
static int read_logs(const pc_config *cfg, const char *logs, int latest, pt_table *t,
                     rd_issues *is) {
  int rc = pc_read_logs(cfg, logs, latest, t, is);
  if (rc == 0) fprintf(stderr, "repro-plot: note: %s does not exist; every cell is NS\n", logs);
  return rc < 0 ? -1 : 0;
}

/* draw's and table's input: the --logs folder, or the --table files (table_input.h).
 * Returns 0, or -1 when the folder cannot be read or a table is refused. */
static int read_input(const cli *c, const pc_config *cfg, pt_table *t, rd_issues *is) {
  if (c->ntables) return ti_read_tables(cfg, c->tables, c->ntables, t, is);
  return read_logs(cfg, c->logs, c->latest, t, is);
}

/* What the input is called in draw's lines: the log folder, or the tables. */
static void input_name(const cli *c, char *buf, size_t cap) {
  if (!c->ntables) {
    snprintf(buf, cap, "%s", c->logs);
    return;
  }
  buf[0] = '\0';
  for (int i = 0; i < c->ntables; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", c->tables[i]);
}

static int print_issues(const rd_issues *is, FILE *out) {
  if (!is->n) return 0;
  fprintf(out, "\n== broken, unknown, odd or undrawn logs (%zu)\n", is->n);
  static const char *const kind[] = {"skipped", "warning", "not drawn"};
  for (size_t i = 0; i < is->n; i++) {
    const rd_issue *it = &is->v[i];
    if (it->line)
      fprintf(out, "  %-7s %s:%d: %s\n", kind[it->kind], it->path, it->line, it->msg);
    else
      fprintf(out, "  %-7s %s: %s\n", kind[it->kind], it->path, it->msg);
  }
  return (int)is->n;
}

static size_t note_undrawn(const pc_config *cfg, const pt_table *t, const unsigned char *drawn,
                           rd_issues *is) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (drawn[i]) continue;
    char why[320];
    fg_why_not_drawn(cfg, &t->rows[i], why, sizeof why);
    rd_issue_add(is, ISSUE_NOT_DRAWN, t->rows[i].source, 0, "%s", why);
    n++;
  }
  return n;
}

/* Marks the rows model m places in a cell. */
static void mark_drawn(const fg_model *m, const pt_table *t, unsigned char *drawn) {
  for (size_t k = 0; k < (size_t)m->ndev * (size_t)m->nx * (size_t)m->nsys; k++)
    if (m->cells[k].row) drawn[m->cells[k].row - t->rows] = 1;
}

static const char *template_dir(const cli *c) {
  if (c->templates) return c->templates;
  const char *env = getenv("REPRO_PLOT_TEMPLATES");
  return env && *env ? env : PLOT_TEMPLATE_DIR;
}

/* Builds each figure of cfg as its models (a file per figure, or per figure and device:
 * comparison, speedup), writes its .dat and .gp into dir, prints its tables and adds its file
 * name to names[*nnames]; the rows a figure draws are marked in drawn. Returns 0, 1 when a
 * figure's files were not written, or -1 when out of memory (said on stderr). */
static int draw_figures(const cli *c, const pc_config *cfg, const pt_table *t, const char *dir,
                        char (*names)[RENDER_NAME], int *nnames, unsigned char *drawn) {
  int oom = 0, rc = 0;
  for (int f = 0; f < cfg->nfigures && !oom; f++) {
    const pc_figure *fig = &cfg->figures[f];
    int dev[PC_MAX_ITEMS], nd = 1;
    if (fg_per_device(fig)) nd = fg_devices(cfg, fig, t, dev);
    for (int i = 0; i < nd && !oom; i++) {
      fg_model m[PC_MAX_FIGURES]; /* one, or a speedup figure's panels */
      int nm = fig->kind == FIG_SPEEDUP ? fig->npanels : 1, built = 0;
      for (; built < nm; built++) {
        const pc_figure *mf = fig->kind == FIG_SPEEDUP ? &cfg->figures[fig->panel_fig[built]] : fig;
        if ((fg_per_device(fig) ? fg_build_device(&m[built], cfg, mf, t, dev[i])
                                : fg_build(&m[built], cfg, mf, t)) != 0)
          break;
      }
      if (built < nm) {
        fprintf(stderr, "out of memory\n");
        oom = 1;
      } else if (fig->kind == FIG_SPEEDUP) {
        snprintf(names[*nnames], RENDER_NAME, "%s_%s", fig->name, cfg->devices[dev[i]].name);
        if (fg_emit_speedup(m, fig, names[*nnames], dir, template_dir(c))) rc = 1;
        fg_print_speedup(m, fig, names[*nnames], stdout);
        (*nnames)++;
      } else {
        mark_drawn(&m[0], t, drawn);
        if (fg_emit(&m[0], dir, template_dir(c))) rc = 1;
        fg_print_table(&m[0], stdout);
        /* a figure without any log says so (its note); its missing logs are its whole matrix */
        if (t->n && (m[0].nrows || c->verbose))
          fg_print_missing(&m[0], stdout, c->verbose ? 0 : 24);
        snprintf(names[(*nnames)++], RENDER_NAME, "%s", m[0].name);
      }
      for (int k = 0; k < built; k++) fg_free(&m[k]);
    }
  }
  return oom ? -1 : rc;
}

static int cmd_draw(const cli *c) {
  if (!c->config || (!c->logs && !c->ntables)) {
    usage(stderr);
    return 2;
  }
  pc_config cfg;
  if (pc_load(c->config, &cfg)) return 1;
  pt_table t = {0};
  rd_issues is = {0};
  int rc = 0;
  char in[2 * PT_PATH];
  input_name(c, in, sizeof in);
  const char *noun = c->ntables ? "rows" : "logs"; /* what the input holds */
  if (read_input(c, &cfg, &t, &is)) {
    rc = 1;
    goto out;
  }
  const char *out = c->out ? c->out : "figures";
  if (mkdir_p(out, 0777)) {
    fprintf(stderr, "%s: cannot create: %s\n", out, strerror(errno));
    rc = 1;
    goto out;
  }
  /* every file is made in a private folder of out and renamed into out when done (render.h) */
  render_stage stage;
  if (render_stage_open(&stage, out, 0, NULL, 0) != 0) {
    rc = 1;
    goto out;
  }
  printf("repro-plot: %zu %s read from %s (%s)\n", t.n, noun, in, cfg.figure);
  /* a file per figure, or per figure and device (comparison, speedup) */
  char(*names)[RENDER_NAME] = calloc((size_t)cfg.nfigures * PC_MAX_ITEMS, sizeof *names);
  int nnames = 0;
  unsigned char *drawn = calloc(t.n ? t.n : 1, 1);
  unsigned char *ok = calloc((size_t)cfg.nfigures * PC_MAX_ITEMS + 1, 1);
  if (!drawn || !names || !ok) {
    fprintf(stderr, "out of memory\n");
    free(drawn);
    free(names);
    free(ok);
    render_stage_close(&stage);
    rc = 1;
    goto out;
  }
  int drew = draw_figures(c, &cfg, &t, stage.stage, names, &nnames, drawn), oom = drew < 0;
  if (drew > 0) rc = 1;
  if (oom) {
    free(drawn);
    free(names);
    free(ok);
    render_stage_close(&stage);
    rc = 1;
    goto out;
  }
  if (!t.n) printf("\n(no %s in %s: every cell is NS)\n", noun, in);
  size_t undrawn = note_undrawn(&cfg, &t, drawn, &is);
  free(drawn);
  if (t.n)
    printf("\n%zu %s read: %zu drawn, %zu read and not drawn%s\n", t.n, noun, t.n - undrawn,
           undrawn, undrawn ? " (listed below, with why)" : "");
  print_issues(&is, stdout);
  int rendered = 0;
  if (rc == 0 && !c->no_render) {
    if (!render_have_gnuplot()) {
      fprintf(stderr,
              "repro-plot: gnuplot is not installed (scripts/install.sh installs gnuplot-nox); "
              "the .dat and .gp files are in %s\n",
              out);
      rc = 1;
    } else {
      rendered = 1;
      if (render_run(&stage, names, nnames, c->jobs, ok) > 0) rc = 1;
    }
  }
  /* the .dat and .gp always; a figure's PDF, PNG and SVG when gnuplot drew it */
  if (render_publish(&stage, names, nnames, rendered ? ok : NULL) != 0) rc = 1;
  render_stage_close(&stage);
  if (rendered && rc == 0) {
    printf("\nfigures written to %s/:", out);
    for (int f = 0; f < nnames; f++) printf(" %s.{pdf,png,svg}", names[f]);
    printf("\n");
  }
  free(names);
  free(ok);
  if (rc == 0 && c->strict && is.n) {
    fprintf(stderr, "repro-plot: --strict: %zu logs are broken, odd or not drawn (listed above)\n",
            is.n);
    rc = 3;
  }
out:
  rd_issues_free(&is);
  pt_free(&t);
  return rc;
}

/* Where table and merge write: -o FILE through a temporary of its own beside it, renamed over
 * it whole when done (fileio.h's afile: a concurrent writer of FILE never mixes with this
 * one, and on an error FILE keeps what it held), else stdout. */
typedef struct {
  afile a;
  FILE *f;
  const char *path; /* NULL: stdout */
} output;

static int output_open(output *o, const char *path) {
  char why[256];
  *o = (output){.f = stdout, .path = path};
  if (!path) return 0;
  if (afile_open(&o->a, path, 0666, 0, why, sizeof why) != 0) {
    fprintf(stderr, "%s: %s\n", path, why);
    return 1;
  }
  o->f = o->a.f;
  return 0;
}

/* Puts the output in place (failed: drops it instead). 0, or 1 with the reason on stderr. */
static int output_close(output *o, int failed) {
  char why[256];
  if (!o->path) {
    if (fflush(stdout) == 0 && !ferror(stdout)) return failed;
    fprintf(stderr, "stdout: write failed\n");
    return 1;
  }
  if (failed) {
    afile_abort(&o->a);
    return 1;
  }
  if (afile_commit(&o->a, why, sizeof why) == 0) return 0;
  fprintf(stderr, "%s: %s (the file is as it was)\n", o->path, why);
  return 1;
}

static int write_table(const cli *c, pt_table *t) {
  if (t->n > 1) qsort(t->rows, t->n, sizeof *t->rows, pt_cmp_cell);
  output o;
  if (output_open(&o, c->output)) return 1;
  if (!strcmp(c->format, "json"))
    pt_write_json(o.f, t);
  else
    pt_write_csv(o.f, t);
  return output_close(&o, 0);
}

/* Every figure's tables in Markdown (fg_print_markdown), the models built as draw builds them;
 * dev >= 0: that device's only. Returns 0, or -1 out of memory. */
static int print_markdown(const pc_config *cfg, const pt_table *t, int dev, FILE *out) {
  int n = 0;
  for (int f = 0; f < cfg->nfigures; f++) {
    const pc_figure *fig = &cfg->figures[f];
    if (fig->kind == FIG_SPEEDUP) continue; /* its panels' figures have the tables */
    int devs[PC_MAX_ITEMS], nd = 1;
    if (fg_per_device(fig)) nd = fg_devices(cfg, fig, t, devs);
    for (int i = 0; i < nd; i++) {
      if (fg_per_device(fig) && dev >= 0 && devs[i] != dev) continue;
      fg_model m;
      if ((fg_per_device(fig) ? fg_build_device(&m, cfg, fig, t, devs[i])
                              : fg_build(&m, cfg, fig, t)))
        return -1;
      fg_print_markdown(&m, dev, &n, out);
      fg_free(&m);
    }
  }
  return 0;
}

/* The tables in Markdown to -o or stdout. */
static int write_markdown(const cli *c, const pc_config *cfg, const pt_table *t) {
  int dev = -1;
  if (c->device && (dev = pc_find(cfg->devices, cfg->ndevices, c->device)) < 0) {
    fprintf(stderr, "repro-plot: --device %s: not a device of %s's plot: devices\n", c->device,
            cfg->figure);
    return 1;
  }
  output o;
  if (output_open(&o, c->output)) return 1;
  int oom = print_markdown(cfg, t, dev, o.f) != 0;
  if (oom) fprintf(stderr, "out of memory\n");
  return output_close(&o, oom);
}

static int cmd_table(const cli *c) {
  if (!c->config || (!c->logs && !c->ntables)) {
    usage(stderr);
    return 2;
  }
  pc_config cfg;
  if (pc_load(c->config, &cfg)) return 1;
  pt_table t = {0};
  rd_issues is = {0};
  int rc = read_input(c, &cfg, &t, &is)     ? 1
           : !strcmp(c->format, "markdown") ? write_markdown(c, &cfg, &t)
                                            : write_table(c, &t);
  print_issues(&is, stderr);
  if (rc == 0 && c->strict && is.n) rc = 3;
  rd_issues_free(&is);
  pt_free(&t);
  return rc;
}

static int cmd_merge(const cli *c) {
  if (c->nrest < 1) {
    usage(stderr);
    return 2;
  }
  pt_table all = {0};
  int rc = 0;
  for (int i = 0; i < c->nrest && !rc; i++) {
    pt_table t = {0};
    if (pt_read_table(c->rest[i], &t, NULL, NULL) || ti_merge(&all, &t, c->rest[i], "merge"))
      rc = 1;
    pt_free(&t);
  }
  if (!rc) rc = write_table(c, &all);
  pt_free(&all);
  return rc;
}

/* A compare input: a table (.csv, .json), or a log folder read with --config. */
static int load_any(const cli *c, const char *what, pt_table *t) {
  size_t n = strlen(what);
  if ((n > 4 && !strcmp(what + n - 4, ".csv")) || (n > 5 && !strcmp(what + n - 5, ".json")))
    return pt_read_table(what, t, NULL, NULL);
  if (!c->config) {
    fprintf(stderr, "compare: %s is a log folder: give --config FIG/experiment.yaml\n", what);
    return -1;
  }
  pc_config cfg;
  if (pc_load(c->config, &cfg)) return -1;
  rd_issues is = {0};
  struct stat st;
  int rc = stat(what, &st) != 0 ? (fprintf(stderr, "%s: %s\n", what, strerror(errno)), -1)
                                : read_logs(&cfg, what, c->latest, t, &is);
  if (is.n) fprintf(stderr, "compare: %zu logs in %s were broken or skipped\n", is.n, what);
  rd_issues_free(&is);
  return rc;
}

static int cmd_compare(const cli *c) {
  if (c->nrest != 2) {
    usage(stderr);
    return 2;
  }
  pt_table a = {0}, b = {0};
  int rc = 0;
  if (load_any(c, c->rest[0], &a) || load_any(c, c->rest[1], &b)) {
    rc = 1;
    goto out;
  }
  if (a.n > 1) qsort(a.rows, a.n, sizeof *a.rows, pt_cmp_cell);
  printf("%-44s %12s %12s %8s\n", "cell (experiment.device.workload.system@seqlen)", "A ms", "B ms",
         "B/A");
  double logsum = 0;
  int n = 0, outside = 0, only_a = 0;
  for (size_t i = 0; i < a.n; i++) {
    const pt_row *ra = &a.rows[i], *rb = NULL;
    for (size_t j = 0; j < b.n && !rb; j++)
      if (pt_same_cell(ra, &b.rows[j])) rb = &b.rows[j];
    char name[TI_CELL_NAME];
    ti_cell_name(ra, name, sizeof name);
    if (!rb) {
      only_a++;
      printf("%-44s %12s %12s %8s\n", name, "", "absent", "-");
      continue;
    }
    int ok = ra->status == ST_OK && rb->status == ST_OK && ra->avg_ms > 0 && rb->avg_ms > 0;
    if (!ok) {
      printf("%-44s %12s %12s %8s\n", name, pt_status_name(ra->status), pt_status_name(rb->status),
             "-");
      continue;
    }
    double r = rb->avg_ms / ra->avg_ms;
    int off = fabs(r - 1) > c->tol;
    printf("%-44s %12.4f %12.4f %8.3f%s\n", name, ra->avg_ms, rb->avg_ms, r,
           off ? "  <- outside" : "");
    logsum += log(r);
    n++;
    outside += off;
  }
  int only_b = 0;
  for (size_t j = 0; j < b.n; j++) {
    int found = 0;
    for (size_t i = 0; i < a.n && !found; i++) found = pt_same_cell(&a.rows[i], &b.rows[j]);
    if (!found) {
      only_b++;
      char name[TI_CELL_NAME];
      ti_cell_name(&b.rows[j], name, sizeof name);
      printf("%-44s only in B\n", name);
    }
  }
  if (n)
    printf("\ngeometric mean of B/A over %d cells: %.4f\n", n, exp(logsum / n));
  else
    printf("\nno cell has a time in both A and B\n");
  printf("cells outside +-%.0f%%: %d; only in A: %d; only in B: %d\n", c->tol * 100, outside,
         only_a, only_b);
  rc = outside ? 4 : 0;
out:
  pt_free(&a);
  pt_free(&b);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (command_help(argc, argv)) return 0;
  if (!strcmp(argv[1], "provenance")) /* options of its own, no config */
    return pv_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "render")) /* DIR NAME...: a study's own gnuplot scripts */
    return render_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "report")) { /* options of its own: sections of --config --logs */
    int rc = rd_init() ? 1 : rp_main(argc - 1, argv + 1);
    rd_cleanup();
    return rc;
  }
  cli c;
  if (parse_cli(argc, argv, &c)) {
    usage(stderr);
    free(c.rest);
    free(c.tables);
    return 2;
  }
  if (rd_init()) {
    free(c.rest);
    free(c.tables);
    return 1;
  }
  int rc;
  if (!strcmp(argv[1], "draw"))
    rc = cmd_draw(&c);
  else if (!strcmp(argv[1], "table"))
    rc = cmd_table(&c);
  else if (!strcmp(argv[1], "merge"))
    rc = cmd_merge(&c);
  else if (!strcmp(argv[1], "compare"))
    rc = cmd_compare(&c);
  else {
    fprintf(stderr, "repro-plot: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    rc = 2;
  }
  rd_cleanup();
  free(c.rest);
  free(c.tables);
  return rc;
}
