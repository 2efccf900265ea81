/* tables: the terminal output of `repro-plot draw`: each table shows what its figure shows
 * (with the paper's times of ours beside a grid's, from plot: paper:), and the expected logs
 * that are missing, as the file names they would have; the same tables in Markdown
 * (`repro-plot table --format markdown`, README.md's results). */
#include "figure_impl.h"

#include <math.h>
#include <string.h>

#include "bpanel.h"

/* A cell's value of metric k as the tables print it, or its mark; a stale log's value ends in
 * '*' (the note under the table says why, and no ratio counts it). */
static void value_text(const fg_cell *c, pc_metric k, char *buf, size_t cap) {
  double v = fg_cell_value(c, k);
  const char *mark = c->stale >= 0 ? "*" : "";
  if (isnan(v))
    snprintf(buf, cap, "%s%s", fg_cell_mark(c, v), mark);
  else if (k == MET_MS || v < 1)
    snprintf(buf, cap, "%.*f%s", v < 0.01 ? 5 : 3, v, mark);
  else
    snprintf(buf, cap, "%.*f%s", v >= 1000 ? 0 : v >= 100 ? 1 : 2, v, mark);
}

/* Under a table of device row d with stale cells: what '*' means, each plot: stale: entry that
 * marks one of them with its reason (md: as a Markdown paragraph). */
static void stale_note(const fg_model *m, int d, int md, FILE *out) {
  int n = fg_stale_cells(m, d);
  if (!n) return;
  fprintf(out, "%s %d stale log%s (plot: stale:), drawn but in no ratio or geometric mean:",
          md ? "\n\\*" : "*", n, n == 1 ? "" : "s");
  for (int i = 0; i < m->cfg->nstale; i++) {
    int used = 0;
    for (int x = 0; x < m->nx && !used; x++)
      for (int s = 0; s < m->nsys; s++) used |= fg_at(m, d, x, s)->stale == i;
    if (used)
      fprintf(out, md ? " `%s`: %s." : " %s: %s.", m->cfg->stale[i].log, m->cfg->stale[i].reason);
  }
  fputc('\n', out);
}

/* Under a time table of device row d whose speedup counts a system with a log but no bar. */
static void unlisted_note(const fg_model *m, int d, pc_metric k, int md, FILE *out) {
  int n = 0;
  for (int x = 0; k == MET_MS && m->ours >= 0 && x < m->nx; x++)
    n += !isnan(m->unlisted_ms[(size_t)d * (size_t)m->nx + (size_t)x]);
  if (n)
    fprintf(out,
            "%s(in %d %s the speedup counts a system with a log there but no column here: "
            "its log is listed as not drawn)\n",
            md ? "\n" : "", n, fg_cols_name(m));
}

double fg_paper_ms(const fg_model *m, int d, int x, int *decimals) {
  if (m->fig->kind != FIG_GRID || m->fig->x[0] || m->ours < 0) return NAN;
  return pc_paper_ms(m->cfg, m->fig->experiment, m->dev[d], m->xw[x], decimals);
}

int fg_has_paper(const fg_model *m, int d) {
  for (int x = 0; x < m->nx; x++)
    if (!isnan(fg_paper_ms(m, d, x, NULL))) return 1;
  return 0;
}

double fg_paper_ratio(const fg_model *m, int d, int x) {
  double p = fg_paper_ms(m, d, x, NULL);
  double ours = m->ours < 0 ? NAN : fg_fresh_value(m, d, x, m->ours, MET_MS);
  return isnan(p) || isnan(ours) ? NAN : p / ours;
}

double fg_geomean(const fg_model *m, int d, double (*ratio)(const fg_model *, int, int, pc_metric),
                  pc_metric k, int *n) {
  double logsum = 0;
  *n = 0;
  for (int x = 0; x < m->nx; x++) {
    double r = ratio(m, d, x, k);
    if (!isnan(r)) logsum += log(r), (*n)++;
  }
  return *n ? exp(logsum / *n) : NAN;
}

/* fg_paper_ratio as fg_geomean takes it (time only). */
double fg_paper_ratio_k(const fg_model *m, int d, int x, pc_metric k) {
  (void)k;
  return fg_paper_ratio(m, d, x);
}

/* What a metric's table says: its title, its ratio column, the words of its geometric mean,
 * and what the ratio is (every ratio > 1 where ours is the better: speedup = other / ours). */
typedef struct {
  const char *what, *ratio_name, *ratio_what, *ratio_ref, *ratio_def;
} metric_words;

static metric_words words_of(pc_metric k) {
  switch (k) {
  case MET_TFLOPS:
    return (metric_words){"throughput, TFLOP/s (higher is better)", "ours/best", "throughput",
                          "over the best other system (ours / best)",
                          "ours/best = ours' TFLOP/s / the best other system's (> 1: ours is "
                          "faster)"};
  case MET_MIB:
    return (metric_words){"peak memory, MiB (lower is better)", "saving", "memory saving",
                          "against the lowest other system (lowest / ours)",
                          "saving = the lowest other system's MiB / ours' (> 1: ours uses "
                          "less)"};
  default:
    return (metric_words){"execution time, ms (lower is better)", "speedup", "speedup",
                          "over the best other system",
                          "speedup = the best other system's time / ours' (> 1: ours is "
                          "faster)"};
  }
}

/* What the paper column's ratio is: a time ratio, > 1 where this run is the faster. */
static const char paper_def[] =
    "paper / ours = the paper's time of ours / this run's (> 1: this run is faster)";

/* One text table: rows the figure's columns (workloads, lengths or cases), columns the
 * systems, then ours' ratio to the best other system and its geometric mean; for time, the
 * paper's time of ours and paper / ours where plot: paper: has them. */
static void print_metric_table(const fg_model *m, int d, pc_metric k, FILE *out) {
  const pc_config *c = m->cfg;
  metric_words mw = words_of(k);
  int paper = k == MET_MS && fg_has_paper(m, d);
  int w[PC_MAX_ITEMS], cw = fg_col_width(m);
  for (int s = 0; s < m->nsys; s++) {
    int l = (int)strlen(fg_sys_item(m, s)->name);
    w[s] = l > 8 ? l : 8;
  }
  fprintf(out, "[%s] %s\n", c->devices[m->dev[d]].label, mw.what);
  if (m->ours >= 0)
    fprintf(out, "   (%s%s%s)\n", mw.ratio_def, paper ? "; " : "", paper ? paper_def : "");
  fprintf(out, "%-*s", cw,
          m->fig->x[0]                ? "case"
          : m->fig->kind == FIG_SWEEP ? m->fig->sweep_key
                                      : "workload");
  for (int s = 0; s < m->nsys; s++) fprintf(out, " %*s", w[s], fg_sys_item(m, s)->name);
  fprintf(out, " %9s", mw.ratio_name);
  fputs(paper ? "     paper paper/ours\n" : "\n", out);
  for (int x = 0; x < m->nx; x++) {
    char lab[PC_XLABEL], v[32];
    fg_col_text(m, x, lab, sizeof lab);
    fprintf(out, "%-*s", cw, lab);
    for (int s = 0; s < m->nsys; s++) {
      value_text(fg_at(m, d, x, s), k, v, sizeof v);
      fprintf(out, " %*s", w[s], v);
    }
    double r = fg_ours_ratio(m, d, x, k);
    if (isnan(r))
      fprintf(out, " %9s", "-");
    else
      fprintf(out, " %8.2fx", r);
    if (paper) {
      int dec = 3;
      double p = fg_paper_ms(m, d, x, &dec), q = fg_paper_ratio(m, d, x);
      if (isnan(p))
        fprintf(out, " %9s", "-");
      else
        fprintf(out, " %9.*f", dec, p);
      if (isnan(q))
        fprintf(out, " %10s", "-");
      else
        fprintf(out, " %9.2fx", q);
    }
    fputc('\n', out);
  }
  stale_note(m, d, 0, out);
  unlisted_note(m, d, k, 0, out);
  if (m->ours < 0) return;
  int n;
  double g = fg_geomean(m, d, fg_ours_ratio, k, &n);
  if (n)
    fprintf(out, "geometric mean %s of %s %s: %.2fx (%d of %d %s)\n", mw.ratio_what,
            fg_sys_item(m, m->ours)->label, mw.ratio_ref, g, n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "geometric mean %s of %s: - (none of the %s has both ours and another system)\n",
            mw.ratio_what, fg_sys_item(m, m->ours)->label, fg_cols_name(m));
  if (!paper) return;
  g = fg_geomean(m, d, fg_paper_ratio_k, MET_MS, &n);
  if (n)
    fprintf(out,
            "geometric mean paper / ours (the paper's time of %s over this run's): %.2fx "
            "(%d of %d %s)\n",
            fg_sys_item(m, m->ours)->label, g, n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "geometric mean paper / ours: - (none of the %s has both)\n", fg_cols_name(m));
}

int fg_table_metrics(const pc_figure *fig, pc_metric *k) {
  switch (fig->kind) {
  case FIG_GRID: k[0] = MET_MS; return 1;
  case FIG_SWEEP:
    k[0] = MET_TFLOPS;
    k[1] = MET_MIB;
    return 2;
  case FIG_COMPARISON:
    for (int i = 0; i < fig->nmetrics; i++) k[i] = fig->metrics[i];
    return fig->nmetrics;
  case FIG_SPEEDUP: break;
  }
  return 0;
}

void fg_print_table(const fg_model *m, FILE *out) {
  const pc_config *c = m->cfg;
  const char *marks = "NS = no log or not supported, OOM, TLE = timeout, ERR = failed";
  if (m->fig->kind == FIG_GRID) {
    fprintf(out, "\n== %s: execution time in ms per %s (experiment %s), as the bars; ",
            m->fig->name, m->fig->x[0] ? "case" : "workload",
            m->fig->experiment[0] ? m->fig->experiment : "all");
    fprintf(out, "speedup of ours = the best other system's time / ours' (> 1: ours is faster), "
                 "the red label\n");
  } else if (m->fig->kind == FIG_COMPARISON) {
    fprintf(out, "\n== %s: experiment %s per case on %s, the figure's panels\n", m->name,
            m->fig->experiment, c->devices[m->dev[0]].label);
  } else {
    int w = pc_find(c->workloads, c->nworkloads, m->fig->workload);
    fprintf(out, "\n== %s: %s by sequence length: throughput in TFLOP/s and peak memory in MiB, ",
            m->fig->name, w >= 0 ? c->workloads[w].label : m->fig->workload);
    fprintf(out, "the figure's two columns of panels\n");
  }
  fprintf(out, "   (%s)\n", marks);
  char note[160];
  fg_note(m, note, sizeof note);
  if (note[0]) fprintf(out, "** %s **\n", note);
  pc_metric k[MET_COUNT];
  int nk = fg_table_metrics(m->fig, k);
  for (int d = 0; d < m->ndev; d++)
    for (int i = 0; i < nk; i++) print_metric_table(m, d, k[i], out);
}

/* ---- Markdown: the same tables for a document (`repro-plot table --format markdown`) ---- */

/* Text in a Markdown table cell: '|' escaped. */
static void md_text(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputc('\\', out);
    fputc(*s, out);
  }
}

/* Does bar s have a column in device row d's Markdown table? Every system expected here, and
 * one nobody can run here only where it has a log. */
static int md_shows(const fg_model *m, int d, int s) {
  if (fg_sys_item(m, s)->expected) return 1;
  for (int x = 0; x < m->nx; x++)
    if (fg_at(m, d, x, s)->status != ST_MISSING) return 1;
  return 0;
}

static void md_head(const fg_model *m, int d, const metric_words *mw, int paper, FILE *out) {
  fprintf(out, "| %s |",
          m->fig->x[0]                ? "case"
          : m->fig->kind == FIG_SWEEP ? m->fig->sweep_key
                                      : "workload");
  int ncol = 0;
  for (int s = 0; s < m->nsys; s++) {
    if (!md_shows(m, d, s)) continue;
    fputc(' ', out);
    md_text(out, fg_sys_item(m, s)->label);
    fputs(" |", out);
    ncol++;
  }
  if (m->ours >= 0) {
    fprintf(out, " %s |", mw->ratio_name);
    ncol++;
  }
  if (paper) {
    fputs(" paper | paper / ours |", out);
    ncol += 2;
  }
  fputs("\n|---|", out);
  for (int i = 0; i < ncol; i++) fputs("---:|", out);
  fputc('\n', out);
}

/* A ratio cell: 1.23x, or - without one. */
static void md_ratio(FILE *out, double r) {
  if (isnan(r))
    fputs(" - |", out);
  else
    fprintf(out, " %.2fx |", r);
}

static void md_row(const fg_model *m, int d, int x, pc_metric k, int paper, FILE *out) {
  char lab[PC_XLABEL], v[32];
  fg_col_text(m, x, lab, sizeof lab);
  fputs("| ", out);
  md_text(out, lab);
  fputs(" |", out);
  for (int s = 0; s < m->nsys; s++) {
    if (!md_shows(m, d, s)) continue;
    value_text(fg_at(m, d, x, s), k, v, sizeof v);
    fprintf(out, " %s |", v);
  }
  if (m->ours >= 0) md_ratio(out, fg_ours_ratio(m, d, x, k));
  if (paper) {
    int dec = 3;
    double p = fg_paper_ms(m, d, x, &dec);
    if (isnan(p))
      fputs(" - |", out);
    else
      fprintf(out, " %.*f |", dec, p);
    md_ratio(out, fg_paper_ratio(m, d, x));
  }
  fputc('\n', out);
}

/* The geometric means, in the ratio columns of a last row. */
static void md_geomeans(const fg_model *m, int d, pc_metric k, int paper, FILE *out) {
  if (m->ours < 0) return;
  int n;
  fputs("| geometric mean |", out);
  for (int s = 0; s < m->nsys; s++)
    if (md_shows(m, d, s)) fputs(" |", out);
  md_ratio(out, fg_geomean(m, d, fg_ours_ratio, k, &n));
  if (paper) {
    fputs(" |", out);
    md_ratio(out, fg_geomean(m, d, fg_paper_ratio_k, MET_MS, &n));
  }
  fputc('\n', out);
}

/* Has column x a log on device row d? A case column (`x:`) is a case of some device's logs;
 * the Markdown table of a device without a log of it leaves its row out. */
static int md_has_log(const fg_model *m, int d, int x) {
  for (int s = 0; s < m->nsys; s++)
    if (fg_at(m, d, x, s)->status != ST_MISSING) return 1;
  return 0;
}

static void md_metric_table(const fg_model *m, int d, pc_metric k, FILE *out) {
  metric_words mw = words_of(k);
  int paper = k == MET_MS && fg_has_paper(m, d);
  fputc('*', out);
  md_text(out, m->name);
  fputs(", ", out);
  md_text(out, m->cfg->devices[m->dev[d]].label);
  fprintf(out, ": %s*\n\n", mw.what);
  if (m->ours >= 0)
    fprintf(out, "%s%s%s.\n\n", mw.ratio_def, paper ? "; " : "", paper ? paper_def : "");
  md_head(m, d, &mw, paper, out);
  for (int x = 0; x < m->nx; x++)
    if (!m->fig->x[0] || md_has_log(m, d, x)) md_row(m, d, x, k, paper, out);
  md_geomeans(m, d, k, paper, out);
  stale_note(m, d, 1, out);
  unlisted_note(m, d, k, 1, out);
}

void fg_print_markdown(const fg_model *m, int dev, int *printed, FILE *out) {
  pc_metric k[MET_COUNT];
  int nk = fg_table_metrics(m->fig, k);
  for (int d = 0; d < m->ndev; d++) {
    if (dev >= 0 && m->dev[d] != dev) continue;
    for (int i = 0; i < nk; i++) {
      if ((*printed)++) fputc('\n', out);
      md_metric_table(m, d, k[i], out);
    }
  }
}

/* The value of placeholder key in the log name of cell (d, x, s): the cell's axes, a log of its
 * x: column, its workload, its sweep column, the plot's default; "" when none tells it. */
static const char *cell_key_value(const fg_model *m, int d, int x, int s, const char *key) {
  const pc_config *c = m->cfg;
  const pc_figure *f = m->fig;
  if (!strcmp(key, "experiment")) return f->experiment;
  if (!strcmp(key, "device")) return c->devices[m->dev[d]].name;
  if (!strcmp(key, "system")) return fg_sys_item(m, s)->name;
  const char *v = f->x[0] && m->xrow[x] ? pt_key_value(m->xrow[x], key) : NULL;
  if (v) return v;
  if (!strcmp(key, "workload"))
    return f->kind != FIG_SWEEP ? c->workloads[m->xw[x]].name : f->workload;
  if (f->kind == FIG_SWEEP && !strcmp(key, f->sweep_key)) return f->sweep[x];
  for (int k = 0; k < c->ndefault_keys; k++)
    if (!strcmp(key, c->default_keys[k].key)) return c->default_keys[k].val;
  return "";
}

/* The file name a cell's log would have: its experiment's template with the placeholders
 * filled. */
void fg_cell_file_name(const fg_model *m, int d, int x, int s, char *out, size_t cap) {
  const char *t = pc_log_name(m->cfg, m->fig->experiment);
  size_t n = 0;
  while (*t && n + 1 < cap) {
    if (*t != '{') {
      out[n++] = *t++;
      continue;
    }
    const char *close = strchr(t, '}');
    if (!close) break;
    char key[PT_KEY];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    n += (size_t)snprintf(out + n, cap - n, "%s", cell_key_value(m, d, x, s, key));
    if (n >= cap) n = cap - 1;
    t = close + 1;
  }
  out[n] = '\0';
}

int fg_print_missing(const fg_model *m, FILE *out, int limit) {
  int missing = 0;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) {
        if (fg_at(m, d, x, s)->status != ST_MISSING || !fg_sys_item(m, s)->expected) continue;
        if (m->fig->x[0] && !m->xrow[x]) continue; /* no logs: no names to give */
        if (limit == 0 || missing < limit) {
          char name[PT_PATH];
          fg_cell_file_name(m, d, x, s, name, sizeof name);
          fprintf(out, "  missing  %s\n", name);
        }
        missing++;
      }
  if (limit && missing > limit)
    fprintf(out, "  ... and %d more missing logs of %s (--verbose lists all)\n", missing - limit,
            m->name);
  return missing;
}

void fg_print_speedup(const fg_model *panels, const pc_figure *fig, const char *name, FILE *out) {
  const fg_model *m0 = &panels[0];
  fprintf(out, "\n== %s: speedup over each panel's baseline on %s (baseline time / system time)\n",
          name, m0->cfg->devices[m0->dev[0]].label);
  fprintf(out, "   (NS = no log or not supported, OOM, TLE = timeout, ERR = failed, n/a = the "
               "baseline has no time)\n");
  for (int i = 0; i < fig->npanels; i++) {
    const fg_model *m = &panels[i];
    int base = fg_bar_of(m, m->cfg->systems[fig->panel_base[i]].name), cw = fg_col_width(m);
    fg_bpanel b = {.m = m, .d = 0, .k = MET_SPEEDUP, .base = base};
    fprintf(out, "[%s] speedup over %s = its time / the system's (> 1: the system is faster)\n%-*s",
            fg_panel_label(m), fg_sys_item(m, base)->name, cw, m->fig->x[0] ? "case" : "workload");
    for (int j = 0; j < fg_bp_nbars(&b); j++) {
      int l = (int)strlen(fg_sys_item(m, fg_bp_sys(&b, j))->name);
      fprintf(out, " %*s", l > 8 ? l : 8, fg_sys_item(m, fg_bp_sys(&b, j))->name);
    }
    fputc('\n', out);
    for (int x = 0; x < m->nx; x++) {
      char lab[PC_XLABEL];
      fg_col_text(m, x, lab, sizeof lab);
      fprintf(out, "%-*s", cw, lab);
      for (int j = 0; j < fg_bp_nbars(&b); j++) {
        int s = fg_bp_sys(&b, j), l = (int)strlen(fg_sys_item(m, s)->name);
        double v = fg_bp_value(&b, x, s);
        if (isnan(v))
          fprintf(out, " %*s", l > 8 ? l : 8, fg_bp_mark(&b, x, s));
        else
          fprintf(out, " %*.2fx", (l > 8 ? l : 8) - 1, v);
      }
      fputc('\n', out);
    }
  }
}
