/* report: the HTML report of figures, tables and logs (see report.h).
 *
 * One code path with `repro-plot draw`: each section's logs become the tidy table (reader.c),
 * the figures' models are built from it (figure.c) and the counts, marks and geometric means
 * are the terminal tables' (tables.c), stale logs (plot: stale:) left out. The verdict holds
 * those models' ratios against the baselines beside the config's plot: claims:. The check and
 * meta records, which the table does not carry, are read from each row's own log with kvline,
 * the log contract's one line parser. Every text that comes from a log, a path or a config is
 * HTML-escaped; the figures are gnuplot's SVG, inlined through an allowlist of SVG elements and
 * attributes (no script, no event handler, no reference outside the figure) and made smaller
 * on the way (report_svg.c). */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "figure.h"
#include "figure_impl.h"
#include "fileio.h"
#include "logmeta.h"
#include "reader.h"
#include "report_svg.h"
#include "table.h"
#include "table_input.h"

#define RP_MAX_SECTIONS 32
#define RP_MAX_TABLES   16 /* --table files of one section */
#define RP_MAX_SVG      ((size_t)16 << 20)

/* ---- options ---- */

typedef struct {
  const char *config, *logs, *figures; /* figures: NULL when the section has none */
  const char *tables[RP_MAX_TABLES];   /* --table files, in place of logs (table_input.h) */
  int ntables;
} rp_entry;

typedef struct {
  rp_entry sec[RP_MAX_SECTIONS];
  int nsec;
  const char *output, *compare, *paper;
  double tol;
  int latest; /* of several logs of one cell, the newest is read (draw's --latest) */
} rp_opts;

static void usage(void) {
  fputs("usage: repro-plot report [-o report.html] [--compare ROOT] [--paper ROOT] "
        "[--tolerance 0.10] [--latest]\n"
        "                         --config F (--logs DIR | --table FILE...) [--figures DIR] "
        "[--config ...]\n",
        stderr);
}

/* A section option (--logs, --table, --figures) sets the last --config's entry. */
static int set_section(rp_opts *o, const char *opt, const char *v) {
  if (!o->nsec) {
    fprintf(stderr, "repro-plot report: %s belongs to a --config given before it\n", opt);
    return -1;
  }
  rp_entry *e = &o->sec[o->nsec - 1];
  if (!strcmp(opt, "--table") && e->ntables == RP_MAX_TABLES) {
    fprintf(stderr, "repro-plot report: at most %d --table files a section\n", RP_MAX_TABLES);
    return -1;
  }
  if (!strcmp(opt, "--logs"))
    e->logs = v;
  else if (!strcmp(opt, "--table"))
    e->tables[e->ntables++] = v;
  else
    e->figures = v;
  return 0;
}

static int set_option(rp_opts *o, const char *opt, const char *v) {
  if (!strcmp(opt, "--config")) {
    if (o->nsec == RP_MAX_SECTIONS) {
      fprintf(stderr, "repro-plot report: at most %d sections\n", RP_MAX_SECTIONS);
      return -1;
    }
    o->sec[o->nsec++] = (rp_entry){.config = v};
  } else if (!strcmp(opt, "--logs") || !strcmp(opt, "--table") || !strcmp(opt, "--figures")) {
    return set_section(o, opt, v);
  } else if (!strcmp(opt, "-o")) {
    o->output = v;
  } else if (!strcmp(opt, "--compare")) {
    o->compare = v;
  } else if (!strcmp(opt, "--paper")) {
    o->paper = v;
  } else if (!strcmp(opt, "--tolerance") || !strcmp(opt, "--tol")) {
    char *end;
    o->tol = strtod(v, &end);
    if (*end || end == v || !(o->tol >= 0)) {
      fprintf(stderr, "repro-plot report: %s: expected a number >= 0, got \"%s\"\n", opt, v);
      return -1;
    }
  } else {
    fprintf(stderr, "repro-plot report: unknown option %s\n", opt);
    return -1;
  }
  return 0;
}

static int parse_args(int argc, char **argv, rp_opts *o) {
  memset(o, 0, sizeof *o);
  o->output = "report.html";
  o->tol = 0.10;
  for (int i = 1; i < argc;) {
    if (!strcmp(argv[i], "--latest")) {
      o->latest = 1;
      i++;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "repro-plot report: %s needs a value\n", argv[i]);
      return -1;
    }
    if (set_option(o, argv[i], argv[i + 1])) return -1;
    i += 2;
  }
  if (!o->nsec) {
    fprintf(stderr, "repro-plot report: give at least one --config F --logs DIR\n");
    return -1;
  }
  for (int s = 0; s < o->nsec; s++)
    if (!o->sec[s].logs == !o->sec[s].ntables) {
      fprintf(stderr, "repro-plot report: --config %s needs --logs DIR or --table FILE..., one\n",
              o->sec[s].config);
      return -1;
    }
  return 0;
}

/* ---- what a log says besides its numbers: its meta and check records (logmeta.c) ---- */

/* The meta and check records of r's log (our format; the artifact's logs have neither, a
 * table's row names a log it does not hold). */
static void read_logmeta(const pt_row *r, lm_meta *lm) {
  memset(lm, 0, sizeof *lm);
  if (strcmp(r->format, "ours") == 0 && !r->from_table) lm_read(r->source, lm);
}

/* ---- a section: one config, its logs, and the logs compared with ---- */

typedef struct {
  const rp_entry *e;
  pc_config cfg;
  pt_table t;     /* the logs, in the reader's order (the one draw builds its models from) */
  rd_issues is;   /* what reading them found broken or odd */
  int logs_exist; /* the log folder exists */
  lm_meta *meta;  /* per row of t */
  int *home;      /* per row: the figure whose table lists it, -1 when none draws its experiment */
  unsigned char *drawn; /* per row: a figure places it in a cell */
  const pt_row **order; /* t's rows in cell order (pt_cmp_cell), as `repro-plot table` writes */
  pt_table cmp, paper;  /* --compare and --paper logs of this section */
  int has_cmp, has_paper;
  /* per row: the paper's time of its cell (plot: paper:: ours' rows a grid figure draws), NAN
   * when none, and its digits after the point */
  double *paper_ms;
  int *paper_dec;
  int *stale; /* per row: its plot: stale: entry (drawn, marked, left out of the means), or -1 */
} rp_section;

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

/* A visitor of a figure's models: panels[0..n) (n > 1: a speedup figure's panels on one
 * device) and the name of the figure's file. */
typedef void (*model_fn)(const rp_section *s, int f, const fg_model *panels, int n,
                         const char *name, void *ctx);

/* Builds figure f's models as `repro-plot draw` does and hands each to fn: one per device for
 * the per-device kinds (a speedup figure: its panels' models on that device), else one.
 * Returns 0, or -1 when out of memory. */
static int each_model(const rp_section *s, int f, model_fn fn, void *ctx) {
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
    if (each_model(s, f, mark_drawn, NULL) || each_model(s, f, mark_paper, NULL)) return -1;
  return 0;
}

/* Loads a section: its config, logs, the logs' records, and the compared logs. Returns 0, or
 * -1 with a message. */
static int load_section(rp_section *s, const rp_entry *e, const rp_opts *o) {
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

static void free_section(rp_section *s) {
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

/* ---- HTML text ---- */

/* s[0..n) as HTML text: & < > " ' escaped (safe in text and in quoted attributes). */
static void escn(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    default: fputc(s[i], out);
    }
  }
}
static void esc(FILE *out, const char *s) { escn(out, s, strlen(s)); }

/* "logs <code>DIR" or "tables <code>A, B": a section's input (the caller closes the code). */
static void put_input(FILE *out, const rp_entry *e) {
  fputs(e->ntables ? "tables <code>" : "logs <code>", out);
  if (!e->ntables) esc(out, e->logs);
  for (int i = 0; i < e->ntables; i++) {
    if (i) fputs(", ", out);
    esc(out, e->tables[i]);
  }
}

/* <tag>text</tag>, text escaped. */
static void cell(FILE *out, const char *tag, const char *text) {
  fprintf(out, "<%s>", tag);
  esc(out, text);
  fprintf(out, "</%s>", tag);
}

/* A number cell (right-aligned, sortable by data-v); empty when v is NAN. */
static void num_cell(FILE *out, double v, const char *fmt) {
  if (isnan(v)) {
    fputs("<td class=\"n\" data-v=\"\"></td>", out);
    return;
  }
  fprintf(out, "<td class=\"n\" data-v=\"%.6g\">", v);
  fprintf(out, fmt, v);
  fputs("</td>", out);
}

/* The page's style (the figures' classes follow it: rs_style). Wide tables scroll in their own
 * box (.scroll), figures take the content's width, and a figure that is the page's :target
 * (its link was clicked) covers the window. The tables of logs (.tidy) align their number
 * columns by position: ms, TFLOP/s, peak MiB, then the paper's (p) and the compared (c) ones. */
static const char *style =
    "body{font:14px/1.45 system-ui,sans-serif;color:#222;max-width:1240px;margin:1em auto;"
    "padding:0 1em}h1{font-size:1.5em}h2{margin-top:2em;border-bottom:2px solid #ccc}"
    "h3{margin-top:1.6em}small,.note{color:#666}code{font-size:12px;overflow-wrap:anywhere}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:.4em 0 1em;font-size:12px}"
    "th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f1f3f5}table.sort th{cursor:pointer}"
    "td.n,.tidy td:nth-child(n+6):nth-child(-n+8),.tidy.p td:nth-child(9),"
    ".tidy.c td:nth-child(n+9):nth-child(-n+10),.tidy.p.c td:nth-child(11),.only td:nth-child(6)"
    "{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".tidy td:nth-last-child(2){overflow-wrap:anywhere;min-width:10em;max-width:18em}"
    ".tidy td:nth-last-child(1){min-width:14em}"
    ".ok{color:#1a7f37}.bad{color:#c00;font-weight:600}.ns{color:#888}"
    ".warn{color:#9a6700;font-weight:600}.stale{color:#9a6700}tr.stale td{font-style:italic}"
    "td.out{background:#ffd8d8;font-weight:600}tr.out td{border-color:#f5b5b5}"
    "table.verdict{font-size:13px}table.verdict td:nth-child(n+4):nth-child(-n+6)"
    "{text-align:right;white-space:nowrap}"
    ".fig{margin:.5em 0}.fig svg{width:100%;height:auto;max-height:85vh;display:block}"
    ".fig a.zoom{display:block;cursor:zoom-in}.fig figcaption{font-size:11px;color:#888}"
    ".fig .close{display:none}.fig:target{position:fixed;top:0;left:0;right:0;bottom:0;"
    "z-index:9;margin:0;padding:.5em 1em;background:#fff;overflow:auto}"
    ".fig:target svg{height:calc(100vh - 3em);max-height:none}.fig:target a.zoom{cursor:default}"
    ".fig:target .close{display:inline}.fig:target .enlarge{display:none}"
    "details{margin:.3em 0}summary{cursor:pointer}";

/* Sorts a table by the clicked column: by data-v where a cell has it (empty last), numbers in a
 * column whose head is class n (marks last), text naturally. */
static const char *script =
    "document.querySelectorAll('table.sort th').forEach(function(th){"
    "th.addEventListener('click',function(){"
    "var tb=th.closest('table').tBodies[0],i=th.cellIndex,d=th.dataset.d==='1'?-1:1,"
    "num=th.classList.contains('n');th.dataset.d=d;"
    "function k(tr){var c=tr.cells[i];if(!c)return'';var v=c.dataset.v;"
    "if(v!==undefined)return v===''?Infinity:+v;"
    "if(num){v=parseFloat(c.textContent);return isNaN(v)?Infinity:v;}return c.textContent;}"
    "Array.from(tb.rows).sort(function(a,b){var x=k(a),y=k(b);"
    "return d*(typeof x==='number'&&typeof y==='number'?(x>y)-(x<y):"
    "String(x).localeCompare(String(y),undefined,{numeric:true}));})"
    ".forEach(function(tr){tb.appendChild(tr);});});});";

/* ---- figures: gnuplot's SVG, inlined (report_svg.c) ---- */

/* The figure <name>.svg of folder dir, inlined at the content's width (a note when there is
 * none). A click on it makes the figure the page's :target, shown over the whole window; its
 * "close" link returns to the anchor before it. No script, no other file. */
static void put_svg(FILE *out, const char *dir, const char *name, int *nfig) {
  int id = (*nfig)++;
  fprintf(out, "<div id=\"a%d\"></div><figure class=\"fig\" data-name=\"", id);
  esc(out, name);
  fprintf(out, "\" id=\"z%d\">", id);
  char *svg = NULL, why[160] = "no --figures folder was given";
  size_t len = 0;
  if (dir) {
    size_t cap = strlen(dir) + strlen(name) + 8;
    char *path = malloc(cap);
    if (path) {
      snprintf(path, cap, "%s/%s.svg", dir, name);
      svg = repro_slurp(path, RP_MAX_SVG, &len, why, sizeof why);
      free(path);
    }
  }
  if (svg) {
    char prefix[24];
    snprintf(prefix, sizeof prefix, "f%d-", id);
    fprintf(out, "<a class=\"zoom\" href=\"#z%d\" title=\"enlarge\">", id);
    if (rs_inline(out, svg, len, prefix)) fputs("<span class=\"note\">out of memory</span>", out);
    fputs("</a>", out);
    free(svg);
  } else {
    fputs("<p class=\"note nofig\">figure not drawn here: ", out);
    if (dir) {
      esc(out, dir);
      fputc('/', out);
      esc(out, name);
      fputs(".svg: ", out);
    }
    esc(out, why);
    fputs("</p>", out);
  }
  fputs("<figcaption>", out);
  esc(out, name);
  fputs(".svg", out);
  if (svg)
    fprintf(out,
            " &middot; <a class=\"enlarge\" href=\"#z%d\">enlarge</a><a class=\"close\" "
            "href=\"#a%d\">close</a>",
            id, id);
  fputs("</figcaption></figure>\n", out);
}

/* ---- counts and geometric means, as the terminal tables, stale logs left out ---- */

/* The columns of device row d that hold a stale log. */
static int stale_columns(const fg_model *m, int d) {
  int n = 0;
  for (int x = 0; x < m->nx; x++) n += fg_column_stale(m, d, x);
  return n;
}

typedef struct {
  int drawn, missing, failed, oom, ns, stale;
} rp_counts;

/* drawn: a log with status ok (stale: of which plot: stale: names); not run (missing): no log
 * of a system expected here; failed: ERR, TLE; OOM: the system ran out of GPU memory (a size it
 * cannot hold, as the paper's figures mark it, not a fault of the run); NS: not supported, or
 * no log of a system nobody can run here. */
static void count_cells(const fg_model *m, rp_counts *c) {
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) {
        pt_status st = fg_at(m, d, x, s)->status;
        if (st == ST_OK)
          c->drawn++, c->stale += fg_at(m, d, x, s)->stale >= 0;
        else if (st == ST_UNSUPPORTED)
          c->ns++;
        else if (st == ST_OOM)
          c->oom++;
        else if (st != ST_MISSING)
          c->failed++;
        else if (m->fig->x[0] && !m->xrow[x]) /* no logs: no cells to name */
          continue;
        else if (fg_sys_item(m, s)->expected)
          c->missing++;
        else
          c->ns++;
      }
}

static const char *ratio_name(pc_metric k) {
  return k == MET_MS ? "speedup" : k == MET_TFLOPS ? "throughput ours/best" : "memory saving";
}

/* One geometric mean: "H100 speedup: 5.38x (7 of 7 workloads)"; both: what a column needs
 * to count ("ours and another system"); nstale: columns whose stale logs were left out. */
static void put_geomean(FILE *out, const fg_model *m, int d, const char *what, double g, int n,
                        const char *both, int nstale) {
  esc(out, m->cfg->devices[m->dev[d]].label);
  fprintf(out, " %s: ", what);
  if (n)
    fprintf(out, "<b>%.2f&times;</b> (%d of %d %s", g, n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "- (none of the %s has both %s", fg_cols_name(m), both);
  if (nstale)
    fprintf(out, "; <span class=\"stale\">%d %s with stale logs left out</span>", nstale,
            fg_cols_name(m));
  fputc(')', out);
}

/* Model m's geometric means per device and ratio, and paper / ours where plot: paper: has the
 * paper's times: list items, or (inline) one line each. Stale logs are left out. */
static void put_geomeans(FILE *out, const fg_model *m, int inline_) {
  pc_metric k[MET_COUNT];
  int nk = m->ours < 0 ? 0 : fg_table_metrics(m->fig, k), n;
  for (int d = 0; d < m->ndev; d++) {
    int nstale = stale_columns(m, d);
    for (int i = 0; i < nk; i++) {
      double g = fg_geomean(m, d, fg_ours_ratio, k[i], &n);
      fputs(inline_ ? "<div>" : "<li>", out);
      put_geomean(out, m, d, ratio_name(k[i]), g, n, "ours and another system", nstale);
      if (!inline_) {
        fputs(" of ", out);
        esc(out, fg_sys_item(m, m->ours)->label);
      }
      fputs(inline_ ? "</div>" : "</li>", out);
    }
    if (!fg_has_paper(m, d)) continue;
    double g = fg_geomean(m, d, fg_paper_ratio_k, MET_MS, &n);
    fputs(inline_ ? "<div>" : "<li>", out);
    put_geomean(out, m, d, "paper / ours", g, n, "ours and the paper's time", nstale);
    if (!inline_) fputs(" (the paper's time of ours over this run's, plot: paper:)", out);
    fputs(inline_ ? "</div>" : "</li>", out);
  }
}

/* ---- the tables of logs ---- */

/* A cell of another table (--compare, --paper) with r's keys, or NULL: compare's matching. */
static const pt_row *match(const pt_table *t, const pt_row *r) {
  for (size_t i = 0; i < t->n; i++)
    if (pt_same_cell(&t->rows[i], r)) return &t->rows[i];
  return NULL;
}

static double row_ms(const pt_row *r) {
  return r && r->status == ST_OK && isfinite(r->avg_ms) && r->avg_ms > 0 ? r->avg_ms : NAN;
}

/* The row's time over the compared row's, or NAN when either has none. */
static double compare_ratio(const pt_row *r, const pt_row *b) {
  double a = row_ms(r), c = row_ms(b);
  return isnan(a) || isnan(c) ? NAN : a / c;
}

/* The mark of a row: ok, or NS/OOM/TLE/ERR as the figures show it; its class. */
static const char *row_mark(const pt_row *r) {
  fg_cell c = {r->status, r, -1};
  return r->status == ST_OK ? "ok" : fg_cell_mark(&c, NAN);
}
static const char *row_class(const pt_row *r) {
  return r->status == ST_OK ? "ok" : r->status == ST_UNSUPPORTED ? "ns" : "bad";
}

/* The rows of the tables of logs are written compact, a thousand of them being most of the
 * page: HTML's optional end tags of td and tr left out, numbers aligned by their column (the
 * style's .tidy rules) and sorted by their text (the head's class n). */
static void td(FILE *out, const char *text) {
  fputs("<td>", out);
  esc(out, text);
}

/* A number, or an empty cell when v is NAN. */
static void td_num(FILE *out, double v, const char *fmt) {
  fputs("<td>", out);
  if (!isnan(v)) fprintf(out, fmt, v);
}

static void td_ms(FILE *out, double v) {
  td_num(out, v, v < 0.01 ? "%.5f" : v < 1000 ? "%.3f" : "%.1f");
}

/* The row's mark (ok, NS, OOM, TLE, ERR) in its class. */
static void td_mark(FILE *out, const pt_row *r) {
  fprintf(out, "<td class=\"%s\">%s", row_class(r), row_mark(r));
}

static const char *check_class(int ok) { return ok == 1 ? "ok" : ok == 0 ? "bad" : "ns"; }

static void put_keys(FILE *out, const pt_row *r) {
  fputs("<td>", out);
  for (int k = 0; k < r->nkeys; k++) {
    if (k) fputc(' ', out);
    esc(out, r->keys[k].key);
    fputc('=', out);
    esc(out, r->keys[k].val);
  }
}

/* The check records: passed (a check mark), failed (a cross) or unjudged, each its output and
 * rel_l2; when all are alike their class is the cell's. */
static void put_checks(FILE *out, const lm_meta *lm) {
  int same = lm->nchecks > 0 && lm->ntotal == lm->nchecks;
  for (int i = 1; same && i < lm->nchecks; i++) same = lm->checks[i].ok == lm->checks[0].ok;
  if (same)
    fprintf(out, "<td class=\"%s\">", check_class(lm->checks[0].ok));
  else
    fputs("<td>", out);
  for (int i = 0; i < lm->nchecks; i++) {
    const lm_check *c = &lm->checks[i];
    if (i) fputs("<br>", out);
    if (!same) fprintf(out, "<span class=\"%s\">", check_class(c->ok));
    fputs(c->ok == 1 ? "\xe2\x9c\x93 " : c->ok == 0 ? "\xe2\x9c\x97 " : "? ", out);
    esc(out, c->output);
    fputc(' ', out);
    esc(out, c->rel_l2);
    if (!same) fputs("</span>", out);
  }
  if (lm->ntotal > lm->nchecks)
    fprintf(out, "<br>+%d more (%d failed in all)", lm->ntotal - lm->nchecks, lm->nfailed);
}

/* The compared cell's time and the ratio, highlighted outside the tolerance. */
static void put_compare(FILE *out, const pt_row *r, const pt_row *b, double tol) {
  if (!b) {
    fputs("<td class=\"ns\">only here<td>", out);
    return;
  }
  if (isnan(row_ms(b)))
    td_mark(out, b);
  else
    td_ms(out, b->avg_ms);
  double q = compare_ratio(r, b);
  if (!isnan(q) && fabs(q - 1) > tol)
    fprintf(out, "<td class=\"out\">%.3f", q);
  else
    td_num(out, q, "%.3f");
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The tables' paper column: the --paper logs when given (the artifact's, every system), else
 * the config's plot: paper: times of ours; none when the section has neither. */
static int paper_column(const rp_section *s) { return s->has_paper || s->cfg.npaper > 0; }

/* Row i's paper cell: the --paper log of its cell, or its plot: paper: time. */
static void put_paper(FILE *out, const rp_section *s, size_t i) {
  if (!s->has_paper) {
    double v = s->paper_ms[i];
    fputs("<td>", out);
    if (!isnan(v)) fprintf(out, "%.*f", s->paper_dec[i], v);
    return;
  }
  const pt_row *p = match(&s->paper, &s->t.rows[i]);
  if (p && isnan(row_ms(p)))
    td_mark(out, p);
  else
    td_ms(out, row_ms(p));
}

static void put_table_head(FILE *out, const rp_section *s) {
  fprintf(out,
          "<div class=\"scroll\"><table class=\"sort tidy%s%s\"><thead><tr><th>device</th>"
          "<th>workload</th><th>system</th><th>keys</th><th>status</th><th class=\"n\">ms</th>"
          "<th class=\"n\">TFLOP/s</th><th class=\"n\">peak MiB</th>",
          paper_column(s) ? " p" : "", s->has_cmp ? " c" : "");
  if (paper_column(s)) fputs("<th class=\"n\">paper ms</th>", out);
  if (s->has_cmp) fputs("<th class=\"n\">compare ms</th><th class=\"n\">ms / compare</th>", out);
  fputs("<th>checks: output rel_l2</th><th>drawn</th><th>GPU</th><th>commit</th><th>log</th>"
        "<th>reason</th>"
        "</tr></thead><tbody>\n",
        out);
}

/* A row's first cells: the cell it measures (device, workload, system, case keys), its mark
 * ("ok, stale" for a log plot: stale: names) and its time. */
static void put_cell_id(FILE *out, const pt_row *r, int stale) {
  td(out, r->device);
  td(out, r->workload);
  td(out, r->system);
  put_keys(out, r);
  if (stale)
    fprintf(out, "<td class=\"stale\">%s, stale", row_mark(r));
  else
    td_mark(out, r);
  td_ms(out, row_ms(r));
}

/* Row i's drawn cell: yes, or no with why (a system its figure does not list, say): the log is
 * a row of its own here even when no bar shows it. */
static void put_drawn(FILE *out, const rp_section *s, size_t i) {
  if (s->drawn[i]) {
    fputs("<td>yes", out);
    return;
  }
  char why[320];
  fg_why_not_drawn(&s->cfg, &s->t.rows[i], why, sizeof why);
  fputs("<td class=\"warn\">no: ", out);
  esc(out, why);
}

static void put_row(FILE *out, const rp_section *s, size_t i, double tol) {
  const pt_row *r = &s->t.rows[i], *b = s->has_cmp ? match(&s->cmp, r) : NULL;
  double q = b ? compare_ratio(r, b) : NAN;
  int out_ = !isnan(q) && fabs(q - 1) > tol, stale = s->stale[i] >= 0;
  const char *cls = out_ && stale ? " class=\"out stale\""
                    : out_        ? " class=\"out\""
                    : stale       ? " class=\"stale\""
                                  : "";
  fprintf(out, "<tr%s>", cls);
  put_cell_id(out, r, stale);
  td_num(out, r->gflops_s / 1000, "%.1f");
  td_num(out, r->peak_mib, "%.1f");
  if (paper_column(s)) put_paper(out, s, i);
  if (s->has_cmp) put_compare(out, r, b, tol);
  put_checks(out, &s->meta[i]);
  put_drawn(out, s, i);
  td(out, r->gpu);
  td(out, s->meta[i].commit);
  td(out, base_name(r->source));
  fputs("<td>", out);
  if (stale) {
    fputs("<span class=\"stale\">stale: ", out);
    esc(out, s->cfg.stale[s->stale[i]].reason);
    fputs("</span>", out);
    if (r->reason[0]) fputs("; ", out);
  }
  esc(out, r->reason);
  fputc('\n', out);
}

/* The rows of t whose home is figure home (-1: no figure), in cell order, folded (a details
 * closed at first: summary says what); the count of them. */
static int put_rows(FILE *out, const rp_section *s, int home, double tol, const char *summary) {
  int n = 0, nstale = 0, nundrawn = 0;
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    if (s->home[i] != home) continue;
    n++;
    nstale += s->stale[i] >= 0;
    nundrawn += !s->drawn[i];
  }
  if (!n) return 0;
  fprintf(out, "<details class=\"cells\"><summary>%s: %d logs", summary, n);
  if (nstale) fprintf(out, ", <span class=\"stale\">%d stale</span>", nstale);
  if (nundrawn) fprintf(out, ", <span class=\"warn\">%d not drawn (why: its row)</span>", nundrawn);
  fputs("</summary>\n", out);
  put_table_head(out, s);
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    if (s->home[i] == home) put_row(out, s, i, tol);
  }
  fputs("</tbody></table></div></details>\n", out);
  return n;
}

/* ---- a section: its figures, each with its table ---- */

typedef struct {
  FILE *out;
  int *nfig;
} fig_ctx;

/* Is cell (d, x, s) of model m a missing log (no log of a system expected here)? */
static int is_missing(const fg_model *m, int d, int x, int s) {
  return fg_at(m, d, x, s)->status == ST_MISSING && fg_sys_item(m, s)->expected &&
         !(m->fig->x[0] && !m->xrow[x]);
}

/* The cells of model m nobody ran (missing logs), as the file names they would have
 * (fg_print_missing's): shown neutral, folded. */
static void put_missing(FILE *out, const fg_model *m) {
  int n = 0;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) n += is_missing(m, d, x, s);
  if (!n) return;
  fprintf(out,
          "<details class=\"notrun\"><summary class=\"ns\">%d cells not run (no log): the "
          "file names they would have</summary><ul>",
          n);
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) {
        if (!is_missing(m, d, x, s)) continue;
        char name[PT_PATH];
        fg_cell_file_name(m, d, x, s, name, sizeof name);
        fputs("<li><code>", out);
        esc(out, name);
        fputs("</code></li>", out);
      }
  fputs("</ul></details>\n", out);
}

/* Says which of the panels' cells are drawn from stale logs (plot: stale:), and why. */
static void put_stale_note(FILE *out, const fg_model *panels, int n) {
  int count = 0, seen[PC_MAX_STALE] = {0};
  for (int p = 0; p < n; p++) {
    const fg_model *m = &panels[p];
    for (int d = 0; d < m->ndev; d++)
      for (int x = 0; x < m->nx; x++)
        for (int s = 0; s < m->nsys; s++) {
          const pt_row *r = fg_at(m, d, x, s)->row;
          int k = r ? pc_stale_index(m->cfg, r->source) : -1;
          if (k >= 0) count++, seen[k] = 1;
        }
  }
  if (!count) return;
  fprintf(out,
          "<p class=\"stale\">%d of the bars are drawn from stale logs (status &ldquo;ok, "
          "stale&rdquo; in the table; left out of every geometric mean here):",
          count);
  for (int k = 0; k < panels->cfg->nstale; k++) {
    if (!seen[k]) continue;
    fputs(" <code>", out);
    esc(out, panels->cfg->stale[k].log);
    fputs("</code>: ", out);
    esc(out, panels->cfg->stale[k].reason);
    fputc('.', out);
  }
  fputs("</p>\n", out);
}

static void put_model(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                      void *arg) {
  const fig_ctx *c = arg;
  (void)f;
  put_svg(c->out, s->e->figures, name, c->nfig);
  put_stale_note(c->out, m, n);
  if (n != 1) return; /* a speedup figure: its panels' tables are theirs */
  char note[160];
  fg_note(m, note, sizeof note);
  if (note[0]) {
    fputs("<p class=\"bad\">", c->out);
    esc(c->out, note);
    fputs("</p>", c->out);
  }
  fputs("<ul class=\"gm\">", c->out);
  put_geomeans(c->out, m, 0);
  fputs("</ul>\n", c->out);
  put_missing(c->out, m);
}

static const char *kind_name(pc_kind k) {
  return k == FIG_GRID         ? "grid"
         : k == FIG_SWEEP      ? "sweep"
         : k == FIG_COMPARISON ? "comparison"
                               : "speedup";
}

static int put_figure(FILE *out, const rp_section *s, int f, int *nfig, double tol) {
  const pc_figure *fig = &s->cfg.figures[f];
  fputs("<div class=\"figblock\" data-name=\"", out);
  esc(out, fig->name);
  fputs("\"><h3>", out);
  esc(out, fig->name);
  fprintf(out, " <small>%s", kind_name(fig->kind));
  if (fig->experiment[0]) {
    fputs(", experiment ", out);
    esc(out, fig->experiment);
  }
  fputs("</small></h3>\n", out);
  fig_ctx c = {out, nfig};
  if (each_model(s, f, put_model, &c)) return -1;
  if (fig->kind != FIG_SPEEDUP && !put_rows(out, s, f, tol, "the table of its cells"))
    fputs("<p class=\"note\">no logs of this figure's experiment</p>\n", out);
  fputs("</div>\n", out);
  return 0;
}

/* The names of the figure files a section's plot: figures draw. */
typedef struct {
  char (*v)[2 * PT_NAME + 2];
  int n, cap, oom;
} name_list;

static void collect_name(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                         void *arg) {
  (void)s, (void)f, (void)m, (void)n;
  name_list *l = arg;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 32;
    void *v = realloc(l->v, (size_t)cap * sizeof *l->v);
    if (!v) {
      l->oom = 1;
      return;
    }
    l->v = v, l->cap = cap;
  }
  snprintf(l->v[l->n++], sizeof *l->v, "%s", name);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The figures of the section's --figures folder that no plot: figure draws (a study's own
 * script draws them: studies/h2o-diag/plot_diag.sh), in name order. Returns 0, or -1 out of
 * memory. */
static int put_own_figures(FILE *out, const rp_section *s, int *nfig) {
  if (!s->e->figures) return 0;
  DIR *dir = opendir(s->e->figures);
  if (!dir) return 0;
  name_list drawn = {0};
  char **own = NULL;
  int nown = 0, cap = 0, rc = 0;
  for (int f = 0; f < s->cfg.nfigures && !rc; f++)
    rc = each_model(s, f, collect_name, &drawn) || drawn.oom ? -1 : 0;
  for (struct dirent *de; !rc && (de = readdir(dir));) {
    size_t len = strlen(de->d_name);
    if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".svg")) continue;
    int k = 0;
    while (k < drawn.n &&
           (strlen(drawn.v[k]) != len - 4 || memcmp(drawn.v[k], de->d_name, len - 4)))
      k++;
    if (k < drawn.n) continue;
    if (nown == cap) {
      cap = cap ? 2 * cap : 8;
      char **v = realloc(own, (size_t)cap * sizeof *own);
      if (!v) {
        rc = -1;
        break;
      }
      own = v;
    }
    if (!(own[nown] = strndup(de->d_name, len - 4)))
      rc = -1;
    else
      nown++;
  }
  closedir(dir);
  if (!rc && nown > 1) qsort(own, (size_t)nown, sizeof *own, cmp_str);
  for (int i = 0; !rc && i < nown; i++) {
    fputs("<div class=\"figblock own\" data-name=\"", out);
    esc(out, own[i]);
    fputs("\"><h3>", out);
    esc(out, own[i]);
    fputs(" <small>drawn by the study's own script (no plot: figure draws it)</small></h3>\n", out);
    put_svg(out, s->e->figures, own[i], nfig);
    fputs("</div>\n", out);
  }
  for (int i = 0; i < nown; i++) free(own[i]);
  free(own);
  free(drawn.v);
  return rc;
}

typedef struct {
  int n, outside, only_here, only_cmp;
  double logsum;
} cmp_stats;

/* compare's numbers: cells with a time on both sides, their ratios' geometric mean, those
 * outside the tolerance, cells of one side only. */
static void compare_stats(const rp_section *s, double tol, cmp_stats *st) {
  memset(st, 0, sizeof *st);
  for (size_t i = 0; i < s->t.n; i++) {
    const pt_row *b = match(&s->cmp, &s->t.rows[i]);
    double q = compare_ratio(&s->t.rows[i], b);
    st->only_here += !b;
    if (isnan(q)) continue;
    st->n++;
    st->logsum += log(q);
    st->outside += fabs(q - 1) > tol;
  }
  for (size_t j = 0; j < s->cmp.n; j++) st->only_cmp += !match(&s->t, &s->cmp.rows[j]);
}

/* The compared logs' cells that these logs lack. */
static void put_only_compare(FILE *out, const rp_section *s) {
  fputs("<div class=\"scroll\"><table class=\"sort only\"><thead><tr><th>device</th>"
        "<th>workload</th><th>system</th><th>keys</th><th>status</th>"
        "<th class=\"n\">compare ms</th><th>log</th></tr></thead><tbody>\n",
        out);
  for (size_t j = 0; j < s->cmp.n; j++) {
    const pt_row *b = &s->cmp.rows[j];
    if (match(&s->t, b)) continue;
    fputs("<tr>", out);
    put_cell_id(out, b, pc_stale_index(&s->cfg, b->source) >= 0);
    td(out, base_name(b->source));
    fputc('\n', out);
  }
  fputs("</tbody></table></div>\n", out);
}

static void put_compare_summary(FILE *out, const rp_opts *o, const rp_section *s) {
  if (!o->compare) return;
  if (!s->has_cmp) {
    fputs("<p class=\"note\">--compare: no folder <code>", out);
    esc(out, o->compare);
    fputc('/', out);
    esc(out, s->cfg.figure);
    fputs("</code>", out);
    fputs("</p>\n", out);
    return;
  }
  cmp_stats st;
  compare_stats(s, o->tol, &st);
  fputs("<p class=\"cmp\">compared with <code>", out);
  esc(out, o->compare);
  fputc('/', out);
  esc(out, s->cfg.figure);
  fputs("</code>: ", out);
  if (st.n)
    fprintf(out, "geometric mean of ms / compare over %d cells <b>%.4f</b>", st.n,
            exp(st.logsum / st.n));
  else
    fputs("no cell has a time on both sides", out);
  fprintf(out,
          "; <b class=\"%s\">%d outside &plusmn;%g%%</b>; only here: %d; only in compare: %d</p>\n",
          st.outside ? "bad" : "ok", st.outside, o->tol * 100, st.only_here, st.only_cmp);
  if (st.only_cmp) {
    fprintf(out, "<details class=\"cells\"><summary>%d cells only in the compared logs</summary>",
            st.only_cmp);
    put_only_compare(out, s);
    fputs("</details>\n", out);
  }
}

static void put_issues(FILE *out, const rd_issues *is) {
  if (!is->n) return;
  static const char *const kind[] = {"skipped", "warning", "not drawn"};
  fprintf(out, "<details><summary>%zu broken, unknown or odd logs</summary><ul>", is->n);
  for (size_t i = 0; i < is->n; i++) {
    fprintf(out, "<li>%s <code>", kind[is->v[i].kind]);
    esc(out, is->v[i].path);
    if (is->v[i].line) fprintf(out, ":%d", is->v[i].line);
    fputs("</code>: ", out);
    esc(out, is->v[i].msg);
    fputs("</li>", out);
  }
  fputs("</ul></details>\n", out);
}

static int put_section(FILE *out, const rp_opts *o, const rp_section *s, int *nfig) {
  const pc_config *c = &s->cfg;
  size_t drawn = 0;
  for (size_t i = 0; i < s->t.n; i++) drawn += s->drawn[i];
  fputs("<section data-figure=\"", out);
  esc(out, c->figure);
  fputs("\" id=\"sec-", out);
  esc(out, c->figure);
  fputs("\"><h2>", out);
  esc(out, c->figure);
  fputs("</h2>\n<p>config <code>", out);
  esc(out, s->e->config);
  fputs("</code>, ", out);
  put_input(out, s->e);
  if (s->logs_exist)
    fprintf(out, "</code>: %zu %s read, %zu drawn, %zu read and not drawn</p>\n", s->t.n,
            s->e->ntables ? "rows" : "logs", drawn, s->t.n - drawn);
  else
    fputs("</code>: no such folder, every cell is NS</p>\n", out);
  put_compare_summary(out, o, s);
  for (int f = 0; f < c->nfigures; f++)
    if (put_figure(out, s, f, nfig, o->tol)) return -1;
  if (put_own_figures(out, s, nfig)) return -1;
  int other = 0;
  for (size_t i = 0; i < s->t.n; i++) other += s->home[i] < 0;
  if (other) {
    fprintf(out, "<h3>logs of experiments no figure draws (%d)</h3>\n", other);
    put_rows(out, s, -1, o->tol, "their table");
  }
  put_issues(out, &s->is);
  fputs("</section>\n", out);
  return 0;
}

/* ---- the summary: per figure, and the logs' provenance ---- */

static void sum_counts(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                       void *arg) {
  (void)s, (void)f, (void)name;
  if (n == 1) count_cells(m, arg);
}

static void sum_geomeans(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                         void *arg) {
  (void)s, (void)f, (void)name;
  if (n == 1) put_geomeans(arg, m, 1);
}

static void put_count(FILE *out, int v, const char *bad_class) {
  int mark = v && *bad_class;
  fprintf(out, "<td class=\"n%s%s\" data-v=\"%d\">%d</td>", mark ? " " : "", mark ? bad_class : "",
          v, v);
}

static int put_summary_row(FILE *out, const rp_section *s, int f) {
  const pc_figure *fig = &s->cfg.figures[f];
  fputs("<tr><td><a href=\"#sec-", out);
  esc(out, s->cfg.figure);
  fputs("\">", out);
  esc(out, s->cfg.figure);
  fputs("</a></td>", out);
  cell(out, "td", fig->name);
  if (fig->kind == FIG_SPEEDUP) {
    fputs("<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td>"
          "<td>speedup over each panel's baseline (its panels' cells)</td></tr>\n",
          out);
    return 0;
  }
  rp_counts c = {0};
  if (each_model(s, f, sum_counts, &c)) return -1;
  put_count(out, c.drawn, "ok");
  put_count(out, c.stale, "stale");
  put_count(out, c.missing, "ns");
  put_count(out, c.failed, "bad");
  put_count(out, c.oom, "ns");
  put_count(out, c.ns, "ns");
  fputs("<td>", out);
  if (each_model(s, f, sum_geomeans, out)) return -1;
  fputs("</td></tr>\n", out);
  return 0;
}

static int put_summary(FILE *out, const rp_section *secs, int n) {
  fputs("<h2 id=\"summary\">Summary</h2>\n<div class=\"scroll\"><table class=\"sort summary\">"
        "<thead><tr><th>section</th><th>figure</th><th>cells drawn</th><th>of which stale</th>"
        "<th>not run</th><th>failed</th><th>OOM</th><th>NS</th>"
        "<th>geometric mean of ours over the best other system</th></tr></thead><tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    for (int f = 0; f < secs[i].cfg.nfigures; f++)
      if (put_summary_row(out, &secs[i], f)) return -1;
  fputs("</tbody></table></div>\n<p class=\"note\">drawn: a log with status ok (stale: one "
        "its plot: stale: names, drawn but left out of every geometric mean); not run: no log of "
        "a system expected here (nobody ran the cell; not a failure); failed: ERR, TLE; OOM: out "
        "of GPU memory at that size; NS: not supported, or no log of a system nobody can run "
        "here. The geometric means are the terminal tables' (speedup: best other / ours; "
        "throughput: ours / best; memory saving: lowest other / ours), stale logs left "
        "out.</p>\n",
        out);
  return 0;
}

static void put_compare_table(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  if (!o->compare) return;
  fputs("<h3>Compared with <code>", out);
  esc(out, o->compare);
  fprintf(out,
          "</code> (tolerance &plusmn;%g%%)</h3>\n<div class=\"scroll\"><table class=\"sort "
          "compare\"><thead><tr>"
          "<th>section</th><th>cells on both sides</th><th>geometric mean ms / compare</th>"
          "<th>outside</th><th>only here</th><th>only in compare</th></tr></thead><tbody>\n",
          o->tol * 100);
  for (int i = 0; i < n; i++) {
    const rp_section *s = &secs[i];
    fputs("<tr>", out);
    cell(out, "td", s->cfg.figure);
    if (!s->has_cmp) {
      fputs("<td colspan=\"5\" class=\"ns\">no such folder in the compared root</td></tr>\n", out);
      continue;
    }
    cmp_stats st;
    compare_stats(s, o->tol, &st);
    put_count(out, st.n, "");
    num_cell(out, st.n ? exp(st.logsum / st.n) : NAN, "%.4f");
    put_count(out, st.outside, "bad");
    put_count(out, st.only_here, "");
    put_count(out, st.only_cmp, "");
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table></div>\n", out);
}

/* One provenance group: the logs of one GPU, driver, CUDA and commit. */
typedef struct {
  const pt_row *row;
  const lm_meta *lm;
  int n;
  const char *first, *last;
} prov_group;

static int same_prov(const prov_group *g, const pt_row *r, const lm_meta *lm) {
  return !strcmp(g->row->gpu, r->gpu) && !strcmp(g->lm->driver, lm->driver) &&
         !strcmp(g->lm->cuda, lm->cuda) && !strcmp(g->lm->commit, lm->commit);
}

static void put_prov_row(FILE *out, const rp_section *s, const prov_group *g) {
  fputs("<tr>", out);
  cell(out, "td", s->cfg.figure);
  cell(out, "td", g->row->gpu[0] ? g->row->gpu : "(no meta line)");
  cell(out, "td", g->lm->driver);
  cell(out, "td", g->lm->cuda);
  cell(out, "td", g->lm->commit);
  put_count(out, g->n, "");
  cell(out, "td", g->first ? g->first : "");
  cell(out, "td", g->last ? g->last : "");
  fputs("</tr>\n", out);
}

/* The section's logs grouped by GPU, driver, CUDA and commit, with their dates. */
static int put_provenance_rows(FILE *out, const rp_section *s) {
  prov_group *g = calloc(s->t.n ? s->t.n : 1, sizeof *g);
  if (!g) return -1;
  int ng = 0;
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    const pt_row *r = &s->t.rows[i];
    const lm_meta *lm = &s->meta[i];
    int k = 0;
    while (k < ng && !same_prov(&g[k], r, lm)) k++;
    if (k == ng) g[ng++] = (prov_group){.row = r, .lm = lm};
    g[k].n++;
    if (lm->date[0] && (!g[k].first || strcmp(lm->date, g[k].first) < 0)) g[k].first = lm->date;
    if (lm->date[0] && (!g[k].last || strcmp(lm->date, g[k].last) > 0)) g[k].last = lm->date;
  }
  for (int k = 0; k < ng; k++) put_prov_row(out, s, &g[k]);
  free(g);
  return 0;
}

static int put_provenance(FILE *out, const rp_section *secs, int n) {
  fputs("<h2 id=\"logs\">Logs: GPU, driver, CUDA, commit and dates</h2>\n"
        "<div class=\"scroll\"><table class=\"sort "
        "prov\"><thead><tr><th>section</th><th>GPU</th><th>driver</th>"
        "<th>CUDA</th><th>commit</th><th>logs</th><th>first</th><th>last</th></tr></thead>"
        "<tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    if (put_provenance_rows(out, &secs[i])) return -1;
  fputs("</tbody></table></div>\n<p class=\"note\">From each log's meta line; the original "
        "artifact's logs have none.</p>\n",
        out);
  return 0;
}

/* ---- the verdict: the paper's claims (plot: claims:) against this run ---- */

/* A claim is reproduced when this run's ratio is above 1 and at least this fraction of it. */
#define RP_CLAIM_HOLDS 0.8

/* System s's ratio to the best baseline in column x of device row d for metric k (best / it
 * for time and memory, it / best for throughput), or NAN. Baselines: the figure's systems not
 * marked ours (FlashTensor (artifact) and ours (CUDA C) are neither's baseline); stale logs
 * count for nobody. */
static double baseline_ratio(const fg_model *m, int d, int x, int s, pc_metric k) {
  double v = fg_fresh_value(m, d, x, s, k), best = NAN;
  for (int b = 0; b < m->nsys; b++) {
    if (fg_sys_item(m, b)->ours) continue;
    double w = fg_fresh_value(m, d, x, b, k);
    if (!isnan(w) && (isnan(best) || (k == MET_TFLOPS ? w > best : w < best))) best = w;
  }
  if (isnan(v) || isnan(best)) return NAN;
  return k == MET_TFLOPS ? v / best : best / v;
}

/* The geometric mean of baseline_ratio over device row d's columns; *n the columns counted. */
static double baseline_geomean(const fg_model *m, int d, int s, pc_metric k, int *n) {
  double logsum = 0;
  *n = 0;
  for (int x = 0; d >= 0 && s >= 0 && x < m->nx; x++) {
    double r = baseline_ratio(m, d, x, s, k);
    if (!isnan(r)) logsum += log(r), (*n)++;
  }
  return *n ? exp(logsum / *n) : NAN;
}

/* The claim of figure f, metric k, device dev (config indices), or NAN. */
static double claim_of(const pc_config *c, int f, pc_metric k, int dev) {
  for (int i = 0; i < c->nclaims; i++)
    if (c->claims[i].figure == f && c->claims[i].metric == k && c->claims[i].device == dev)
      return c->claims[i].ratio;
  return NAN;
}

/* The bar of the claims' system in m, and the bar of ours: the last other system marked ours. */
static int claim_bar(const fg_model *m) {
  return m->cfg->claim_system < 0 ? -1 : fg_bar_of(m, m->cfg->systems[m->cfg->claim_system].name);
}
static int ours_bar(const fg_model *m) {
  int c = claim_bar(m);
  for (int b = m->nsys - 1; b >= 0; b--)
    if (fg_sys_item(m, b)->ours && b != c) return b;
  return -1;
}

static const char *verdict_ratio_name(pc_metric k) {
  return k == MET_MS       ? "speedup: best baseline ms / its ms"
         : k == MET_TFLOPS ? "throughput: its TFLOP/s / best baseline's"
                           : "memory saving: lowest baseline MiB / its MiB";
}

/* This run's ratio as a cell: "2.80x (7 of 7 workloads)", or "no log". */
static void put_verdict_value(FILE *out, const fg_model *m, double v, int n) {
  if (isnan(v))
    fputs("<td class=\"ns\">no log</td>", out);
  else
    fprintf(out, "<td>%.2fx (%d of %d %s)</td>", v, n, m->nx, fg_cols_name(m));
}

/* The rule's outcome for value v against claim c. */
static int holds(double v, double c) { return v > 1 && v >= RP_CLAIM_HOLDS * c; }

/* One row: figure, GPU, ratio, the paper's claim, this run's values and the verdict. */
static void put_verdict_row(FILE *out, const fg_model *m, int f, pc_metric k, int dev) {
  const pc_config *c = m->cfg;
  int d = 0, cb = claim_bar(m), ob = ours_bar(m), nft, nours;
  while (d < m->ndev && m->dev[d] != dev) d++;
  if (d == m->ndev) d = -1;
  const char *paper_dev = "";
  double claim = claim_of(c, f, k, dev);
  if (isnan(claim) && c->claim_device >= 0) {
    claim = claim_of(c, f, k, c->claim_device);
    paper_dev = c->devices[c->claim_device].label;
  }
  double ft = baseline_geomean(m, d, cb, k, &nft), ours = baseline_geomean(m, d, ob, k, &nours);
  fputs("<tr>", out);
  cell(out, "td", c->figures[f].name);
  cell(out, "td", c->devices[dev].label);
  cell(out, "td", verdict_ratio_name(k));
  if (isnan(claim)) {
    fputs("<td class=\"ns\">none</td>", out);
  } else {
    fprintf(out, "<td>%.2fx", claim);
    if (paper_dev[0]) {
      fputs(" (", out);
      esc(out, paper_dev);
      fputc(')', out);
    }
    fputs("</td>", out);
  }
  put_verdict_value(out, m, ft, nft);
  put_verdict_value(out, m, ours, nours);
  char vs[96] = "";
  if (!isnan(claim)) {
    int len = snprintf(vs, sizeof vs, " vs paper %.2fx", claim);
    if (paper_dev[0]) snprintf(vs + len, sizeof vs - (size_t)len, " (%s)", paper_dev);
  }
  const char *ft_label = cb >= 0 ? fg_sys_item(m, cb)->label : "FlashTensor";
  const char *ours_label = ob >= 0 ? fg_sys_item(m, ob)->label : "ours";
  if (isnan(claim)) {
    fputs("<td class=\"ns\">the paper claims nothing here</td>", out);
  } else if (!isnan(ft)) {
    int ok = holds(ft, claim);
    fprintf(out, "<td class=\"%s\">%s: ", ok ? "ok" : "warn", ok ? "reproduced" : "not reproduced");
    esc(out, ft_label);
    fprintf(out, " %.2fx", ft);
    esc(out, vs);
    fputs("</td>", out);
  } else if (!isnan(ours)) {
    int ok = holds(ours, claim);
    fputs("<td class=\"ns\">", out);
    esc(out, ft_label);
    fputs(" not run on this GPU; ", out);
    esc(out, ours_label);
    fprintf(out, " %.2fx", ours);
    esc(out, vs);
    fprintf(out, ": <span class=\"%s\">%s</span></td>", ok ? "ok" : "warn",
            ok ? "the claim holds for it" : "the claim does not hold for it");
  } else {
    fputs("<td class=\"ns\">not run on this GPU</td>", out);
  }
  fputs("</tr>\n", out);
}

/* A figure's rows: per metric its claims are of, per device with a claim or with logs. */
static void verdict_model(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                          void *arg) {
  (void)s, (void)name;
  if (n != 1) return;
  FILE *out = arg;
  const pc_config *c = m->cfg;
  pc_metric k[MET_COUNT];
  int nk = fg_table_metrics(m->fig, k);
  for (int i = 0; i < nk; i++)
    for (int dev = 0; dev < c->ndevices; dev++) {
      int any = 0, rows = 0;
      for (int dev2 = 0; dev2 < c->ndevices; dev2++) any |= !isnan(claim_of(c, f, k[i], dev2));
      for (int d = 0; d < m->ndev; d++) rows |= m->dev[d] == dev;
      if (any && (rows || !isnan(claim_of(c, f, k[i], dev)))) put_verdict_row(out, m, f, k[i], dev);
    }
}

/* The first table of the page: per figure with claims and GPU, the paper's claim, this run's
 * ratio of FlashTensor and of ours, and the verdict, with its rule. */
static int put_verdict(FILE *out, const rp_section *secs, int n) {
  const pc_config *first = NULL;
  for (int i = 0; i < n && !first; i++)
    if (secs[i].cfg.nclaims && secs[i].cfg.claim_system >= 0) first = &secs[i].cfg;
  fputs("<h2 id=\"verdict\">Verdict: the paper's claims against this run</h2>\n", out);
  if (!first) {
    fputs("<p class=\"note\">No section's config has <code>plot: claims:</code>: there is no "
          "claim to hold this run to.</p>\n",
          out);
    return 0;
  }
  const char *ft = first->systems[first->claim_system].label, *ours = "ours";
  for (int sys = first->nsystems - 1; sys >= 0; sys--)
    if (first->systems[sys].ours && sys != first->claim_system) {
      ours = first->systems[sys].label;
      break;
    }
  fputs("<div class=\"scroll\"><table class=\"verdict\"><thead><tr><th>figure</th><th>GPU</th>"
        "<th>ratio (&gt; 1: better than the best baseline)</th><th>paper: ",
        out);
  esc(out, ft);
  fputs(" in the artifact's logs</th><th>", out);
  esc(out, ft);
  fputs(", this run</th><th>", out);
  esc(out, ours);
  fputs(", this run</th><th>verdict</th></tr></thead><tbody>\n", out);
  for (int i = 0; i < n; i++) {
    const rp_section *s = &secs[i];
    if (!s->cfg.nclaims || s->cfg.claim_system < 0) continue;
    for (int f = 0; f < s->cfg.nfigures; f++) {
      int any = 0;
      for (int c = 0; c < s->cfg.nclaims; c++) any |= s->cfg.claims[c].figure == f;
      if (any && each_model(s, f, verdict_model, out)) return -1;
    }
  }
  fputs("</tbody></table></div>\n<p class=\"note\">The rule. Ratio: per column (workload, "
        "length), the best baseline's time over the system's (throughput: the system's over the "
        "best baseline's; memory: the lowest baseline's over the system's), so that &gt; 1 means "
        "better; its geometric mean over the columns where both have a log. Baselines: the "
        "figure's systems that are neither ",
        out);
  esc(out, ft);
  fputs(" nor ", out);
  esc(out, ours);
  fprintf(out,
          " (those not marked <code>ours: true</code>); stale logs count for nobody. Paper: the "
          "same ratio of %s in the original artifact's own logs "
          "(<code>plot: claims:</code> of the figure's experiment.yaml, with how it was drawn); "
          "a GPU the artifact has no logs of is held to the paper's GPU's claim (named in "
          "brackets). Verdict: <b>reproduced</b> when %s's ratio in this run is above 1 and at "
          "least %g &times; the paper's, <b>not reproduced</b> otherwise; where %s has no log "
          "on the GPU, the rule is applied to %s and said so; <b>not run on this GPU</b> when "
          "neither has a log there.</p>\n",
          ft, ft, RP_CLAIM_HOLDS, ft, ours);
  return 0;
}

/* ---- the document ---- */

/* The sections, each a link. */
static void put_toc(FILE *out, const rp_section *secs, int n) {
  fputs("<ul class=\"toc\">", out);
  for (int i = 0; i < n; i++) {
    fputs("<li><a href=\"#sec-", out);
    esc(out, secs[i].cfg.figure);
    fputs("\">", out);
    esc(out, secs[i].cfg.figure);
    fputs("</a>: ", out);
    put_input(out, secs[i].e);
    fputs("</code></li>", out);
  }
  fputs("</ul>\n", out);
}

/* What the paper ms columns hold. */
static void put_paper_note(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  int npaper = 0;
  for (int i = 0; i < n; i++) npaper += secs[i].cfg.npaper > 0;
  if (o->paper) {
    fputs("<p>paper ms: the original artifact's logs under <code>", out);
    esc(out, o->paper);
    fputs("/&lt;section&gt;</code>, matched cell by cell.</p>\n", out);
  } else if (npaper) {
    fputs("<p>paper ms: the paper's own times of ours, from the <code>plot: paper:</code> "
          "section of the config (the paper's GPU only); paper / ours: that time over this "
          "run's.</p>\n",
          out);
  }
}

static void put_intro(FILE *out) {
  fputs("<h1>Reproduction report: FlashTensor figures and studies</h1>\n<p>Drawn by "
        "<code>repro-plot report</code> from the tidy table of each section's logs: the verdict "
        "first, then the summary, the logs' provenance and each section's figures (click one to "
        "enlarge it) with the table of its cells (folded). Marks: NS = no log or not supported, "
        "OOM, TLE = timeout, ERR = failed; not run = no log of a cell nobody ran. Click a column "
        "head to sort.</p>\n",
        out);
}

static int put_document(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  fprintf(out,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<title>FlashTensor reproduction report</title><style>%s%s</style></head>\n<body>\n",
          style, rs_style);
  put_intro(out);
  if (put_verdict(out, secs, n)) return -1;
  put_toc(out, secs, n);
  put_paper_note(out, o, secs, n);
  if (put_summary(out, secs, n)) return -1;
  put_compare_table(out, o, secs, n);
  if (put_provenance(out, secs, n)) return -1;
  int nfig = 0;
  for (int i = 0; i < n; i++)
    if (put_section(out, o, &secs[i], &nfig)) return -1;
  fprintf(out, "<script>%s</script>\n</body></html>\n", script);
  return 0;
}

/* Writes the report through a temporary of its own beside the output (fileio.h's afile), renamed
 * over it whole: a concurrent report to the same file never mixes with this one, and the
 * bytes counted are this report's. On an error the output keeps what it held. */
static int write_report(const rp_opts *o, const rp_section *secs) {
  afile a;
  char why[256];
  if (afile_open(&a, o->output, 0666, 0, why, sizeof why) != 0) {
    fprintf(stderr, "%s: report not written: %s\n", o->output, why);
    return 1;
  }
  if (put_document(a.f, o, secs, o->nsec) != 0) {
    afile_abort(&a);
    fprintf(stderr, "%s: report not written: out of memory (the file is as it was)\n", o->output);
    return 1;
  }
  long bytes = ftell(a.f);
  if (afile_commit(&a, why, sizeof why) != 0) {
    fprintf(stderr, "%s: report not written: %s (the file is as it was)\n", o->output, why);
    return 1;
  }
  printf("report written to %s (%ld bytes)\n", o->output, bytes);
  return 0;
}

int rp_main(int argc, char **argv) {
  rp_opts o;
  if (parse_args(argc, argv, &o)) {
    usage();
    return 2;
  }
  rp_section *secs = calloc(RP_MAX_SECTIONS, sizeof *secs);
  if (!secs) return 1;
  int rc = 0;
  for (int i = 0; i < o.nsec && !rc; i++)
    if (load_section(&secs[i], &o.sec[i], &o)) rc = 1;
  if (!rc) rc = write_report(&o, secs);
  for (int i = 0; i < o.nsec; i++) free_section(&secs[i]);
  free(secs);
  return rc;
}
