/* tables: the terminal output of `repro-plot draw`: each table shows what its figure shows,
 * and the expected logs that are missing, as the file names they would have. */
#include "figure_impl.h"

#include <math.h>
#include <string.h>

/* A cell's value of metric k in a column w wide, or its mark. */
static void print_value(FILE *out, const fg_cell *c, pc_metric k, int w) {
  double v = fg_cell_value(c, k);
  if (isnan(v))
    fprintf(out, " %*s", w, fg_cell_mark(c, v));
  else if (k == MET_MS || v < 1)
    fprintf(out, " %*.*f", w, v < 0.01 ? 5 : 3, v);
  else
    fprintf(out, " %*.*f", w, v >= 1000 ? 0 : v >= 100 ? 1 : 2, v);
}

/* Ours against the best other system in column x: time and memory lower is better (best/ours),
 * throughput higher is better (ours/best). NAN when either is missing. */
double fg_ours_ratio(const fg_model *m, int d, int x, pc_metric k) {
  if (m->ours < 0) return NAN;
  double ours = fg_cell_value(fg_at(m, d, x, m->ours), k), best = NAN;
  for (int s = 0; s < m->nsys; s++) {
    if (s == m->ours) continue;
    double v = fg_cell_value(fg_at(m, d, x, s), k);
    if (!isnan(v) && (isnan(best) || (k == MET_TFLOPS ? v > best : v < best))) best = v;
  }
  if (isnan(ours) || isnan(best)) return NAN;
  return k == MET_TFLOPS ? ours / best : best / ours;
}

/* One table: rows the figure's columns (workloads, lengths or cases), columns the systems,
 * then ours' ratio to the best other system and its geometric mean. */
static void print_metric_table(const fg_model *m, int d, pc_metric k, const char *what,
                               const char *ratio_name, const char *ratio_what,
                               const char *ratio_ref, FILE *out) {
  const pc_config *c = m->cfg;
  int w[PC_MAX_ITEMS], cw = fg_col_width(m);
  for (int s = 0; s < m->nsys; s++) {
    int l = (int)strlen(fg_sys_item(m, s)->name);
    w[s] = l > 8 ? l : 8;
  }
  fprintf(out, "[%s] %s\n%-*s", c->devices[m->dev[d]].label, what, cw,
          m->fig->x[0]                ? "case"
          : m->fig->kind == FIG_SWEEP ? m->fig->sweep_key
                                      : "workload");
  for (int s = 0; s < m->nsys; s++) fprintf(out, " %*s", w[s], fg_sys_item(m, s)->name);
  fprintf(out, " %9s\n", ratio_name);
  double logsum = 0;
  int n = 0;
  for (int x = 0; x < m->nx; x++) {
    char lab[PC_XLABEL];
    fg_col_text(m, x, lab, sizeof lab);
    fprintf(out, "%-*s", cw, lab);
    for (int s = 0; s < m->nsys; s++) print_value(out, fg_at(m, d, x, s), k, w[s]);
    double r = fg_ours_ratio(m, d, x, k);
    if (isnan(r)) {
      fprintf(out, " %9s\n", "-");
    } else {
      fprintf(out, " %8.2fx\n", r);
      logsum += log(r);
      n++;
    }
  }
  if (m->ours < 0) return;
  if (n)
    fprintf(out, "geometric mean %s of %s %s: %.2fx (%d of %d %s)\n", ratio_what,
            fg_sys_item(m, m->ours)->label, ratio_ref, exp(logsum / n), n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "geometric mean %s of %s: - (no %s has both ours and another system)\n",
            ratio_what, fg_sys_item(m, m->ours)->label, fg_cols_name(m));
}

static void print_panel_metric(const fg_model *m, int d, pc_metric k, FILE *out) {
  switch (k) {
  case MET_MS:
    print_metric_table(m, d, MET_MS, "execution time, ms (lower is better)", "speedup", "speedup",
                       "over the best other system", out);
    break;
  case MET_TFLOPS:
    print_metric_table(m, d, MET_TFLOPS, "throughput, TFLOP/s (higher is better)", "ours/best",
                       "throughput", "over the best other system (ours / best)", out);
    break;
  case MET_MIB:
    print_metric_table(m, d, MET_MIB, "peak memory, MiB (lower is better)", "saving",
                       "memory saving", "against the lowest other system (lowest / ours)", out);
    break;
  default: break;
  }
}

void fg_print_table(const fg_model *m, FILE *out) {
  const pc_config *c = m->cfg;
  const char *marks = "NS = no log or not supported, OOM, TLE = timeout, ERR = failed";
  if (m->fig->kind == FIG_GRID) {
    fprintf(out, "\n== %s: execution time in ms per %s (experiment %s), as the bars; ",
            m->fig->name, m->fig->x[0] ? "case" : "workload",
            m->fig->experiment[0] ? m->fig->experiment : "all");
    fprintf(out, "speedup = best other / ours, the red label\n");
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
  fg_cpu_note(m, note, sizeof note);
  if (note[0]) fprintf(out, "** %s **\n", note);
  for (int d = 0; d < m->ndev; d++) {
    if (m->fig->kind == FIG_GRID) {
      print_panel_metric(m, d, MET_MS, out);
    } else if (m->fig->kind == FIG_COMPARISON) {
      for (int i = 0; i < m->fig->nmetrics; i++) print_panel_metric(m, d, m->fig->metrics[i], out);
    } else {
      print_panel_metric(m, d, MET_TFLOPS, out);
      print_panel_metric(m, d, MET_MIB, out);
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
  if (!strcmp(key, "workload")) return f->kind != FIG_SWEEP ? c->workloads[x].name : f->workload;
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
    fprintf(out, "[%s] speedup over %s (higher is better)\n%-*s", fg_panel_label(m),
            fg_sys_item(m, base)->name, cw, m->fig->x[0] ? "case" : "workload");
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
