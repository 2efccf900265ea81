/* report_section: a section of the report: one config, its logs (or tables), the records of
 * each log besides its numbers (logmeta.c), the logs compared with (--compare, --paper), and
 * each of its figures' models built as `repro-plot draw` builds them. */
#include "report_section.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figure_impl.h"
#include "table_input.h"

/* The meta and check records of r's log (our format; the artifact's logs have neither, a
 * table's row names a log it does not hold). */
static void read_logmeta(const pt_row *r, lm_meta *lm) {
  memset(lm, 0, sizeof *lm);
  if (strcmp(r->format, "ours") == 0 && !r->from_table) lm_read(r->source, lm);
}

/* ROOT/<figure>'s logs into t (the --compare and --paper roots). Returns 1, 0 or -1 as
 * pc_read_logs. */
static int read_root(const rp_section *s, const char *root, int latest, pt_table *t) {
  char dir[PT_PATH * 2];
  snprintf(dir, sizeof dir, "%s/%s", root, s->cfg.figure);
  rd_issues is = {0};
  int rc = pc_read_logs(&s->cfg, dir, latest, t, &is);
  rd_issues_free(&is);
  return rc;
}

static int row_home(const pc_config *c, const pt_row *r) {
  for (int f = 0; f < c->nfigures; f++) {
    const pc_figure *fig = &c->figures[f];
    if (fig->kind != FIG_SPEEDUP &&
        (!fig->experiment[0] || !strcmp(fig->experiment, r->experiment)))
      return f;
  }
  return -1;
}

static int cmp_rowp(const void *a, const void *b) {
  return pt_cmp_cell(*(const pt_row *const *)a, *(const pt_row *const *)b);
}

/* Builds figure f's models as `repro-plot draw` does and hands each to fn: one per device for
 * the per-device kinds (a speedup figure: its panels' models on that device), else one.
 * Returns 0, or -1 when out of memory. */
int rp_each_model(const rp_section *s, int f, rp_model_fn fn, void *ctx) {
  const pc_config *c = &s->cfg;
  const pc_figure *fig = &c->figures[f];
  int dev[PC_MAX_ITEMS], nd = 1;
  if (fg_per_device(fig)) nd = fg_devices(c, fig, &s->t, dev);
  for (int i = 0; i < nd; i++) {
    fg_model m[PC_MAX_FIGURES];
    int nm = fig->kind == FIG_SPEEDUP ? fig->npanels : 1, built = 0;
    for (; built < nm; built++) {
      const pc_figure *mf = fig->kind == FIG_SPEEDUP ? &c->figures[fig->panel_fig[built]] : fig;
      if ((fg_per_device(fig) ? fg_build_device(&m[built], c, mf, &s->t, dev[i])
                              : fg_build(&m[built], c, mf, &s->t)) != 0)
        break;
    }
    if (built == nm) {
      char name[2 * PT_NAME + 2];
      if (fg_per_device(fig))
        snprintf(name, sizeof name, "%s_%s", fig->name, c->devices[dev[i]].name);
      else
        snprintf(name, sizeof name, "%s", m[0].name);
      fn(s, f, m, nm, name, ctx);
    }
    for (int k = 0; k < built + (built < nm); k++) fg_free(&m[k]);
    if (built < nm) return -1;
  }
  return 0;
}

static void mark_drawn(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                       void *ctx) {
  (void)f, (void)name, (void)ctx;
  if (n != 1 || m->fig->kind == FIG_SPEEDUP) return;
  for (size_t k = 0; k < (size_t)m->ndev * (size_t)m->nx * (size_t)m->nsys; k++)
    if (m->cells[k].row) s->drawn[m->cells[k].row - s->t.rows] = 1;
}

/* The paper's times (plot: paper:) on the rows of ours that model m places in its cells. */
static void mark_paper(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                       void *ctx) {
  (void)f, (void)name, (void)ctx;
  if (n != 1 || m->ours < 0) return;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++) {
      const pt_row *r = fg_at(m, d, x, m->ours)->row;
      int dec = 3;
      double p = fg_paper_ms(m, d, x, &dec);
      if (!r || isnan(p)) continue;
      s->paper_ms[r - s->t.rows] = p;
      s->paper_dec[r - s->t.rows] = dec;
    }
}

/* The per-row arrays of a section whose logs are read. Returns 0, or -1 out of memory. */
static int index_rows(rp_section *s) {
  size_t n = s->t.n ? s->t.n : 1;
  s->meta = calloc(n, sizeof *s->meta);
  s->home = calloc(n, sizeof *s->home);
  s->drawn = calloc(n, 1);
  s->order = calloc(n, sizeof *s->order);
  s->paper_ms = calloc(n, sizeof *s->paper_ms);
  s->paper_dec = calloc(n, sizeof *s->paper_dec);
  s->stale = calloc(n, sizeof *s->stale);
  if (!s->meta || !s->home || !s->drawn || !s->order || !s->paper_ms || !s->paper_dec || !s->stale)
    return -1;
  for (size_t i = 0; i < s->t.n; i++) {
    s->paper_ms[i] = NAN;
    s->stale[i] = pc_stale_index(&s->cfg, s->t.rows[i].source);
    read_logmeta(&s->t.rows[i], &s->meta[i]);
    s->home[i] = row_home(&s->cfg, &s->t.rows[i]);
    s->order[i] = &s->t.rows[i];
  }
  if (s->t.n > 1) qsort(s->order, s->t.n, sizeof *s->order, cmp_rowp);
  for (int f = 0; f < s->cfg.nfigures; f++)
    if (rp_each_model(s, f, mark_drawn, NULL) || rp_each_model(s, f, mark_paper, NULL)) return -1;
  return 0;
}

/* Loads a section: its config, logs, the logs' records, and the compared logs. Returns 0, or
 * -1 with a message. */
int rp_load_section(rp_section *s, const rp_entry *e, const rp_opts *o) {
  s->e = e;
  if (pc_load(e->config, &s->cfg)) return -1;
  int rc = 1; /* tables are read whole, or refused */
  if (!e->ntables)
    rc = pc_read_logs(&s->cfg, e->logs, o->latest, &s->t, &s->is);
  else if (ti_read_tables(&s->cfg, e->tables, e->ntables, &s->t, &s->is))
    rc = -1;
  if (rc < 0) return -1;
  s->logs_exist = rc;
  if (rc == 0)
    fprintf(stderr, "repro-plot report: note: %s does not exist; every cell is NS\n", e->logs);
  if (index_rows(s)) {
    fprintf(stderr, "out of memory\n");
    return -1;
  }
  if (o->compare && (rc = read_root(s, o->compare, o->latest, &s->cmp)) < 0) return -1;
  s->has_cmp = o->compare && rc > 0;
  if (o->paper && (rc = read_root(s, o->paper, o->latest, &s->paper)) < 0) return -1;
  s->has_paper = o->paper && rc > 0;
  return 0;
}

void rp_free_section(rp_section *s) {
  pt_free(&s->t);
  pt_free(&s->cmp);
  pt_free(&s->paper);
  rd_issues_free(&s->is);
  free(s->meta);
  free(s->home);
  free(s->drawn);
  free(s->order);
  free(s->paper_ms);
  free(s->paper_dec);
  free(s->stale);
}
