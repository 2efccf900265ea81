/* report: the HTML report of figures, tables and logs (see report.h).
 *
 * One code path with `repro-plot draw`: each section's logs become the tidy table (reader.c),
 * the figures' models are built from it (figure.c) and the counts, marks and geometric means
 * are the terminal tables' (tables.c). The check and meta records, which the table does not
 * carry, are read from each row's own log with kvline, the log contract's one line parser.
 * Every text that comes from a log, a path or a config is HTML-escaped; the figures are
 * gnuplot's SVG, inlined through an allowlist of SVG elements and attributes (no script, no
 * event handler, no reference outside the figure) and made smaller on the way. */
#include "report.h"

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
#include "table.h"

#define RP_MAX_SECTIONS 32
#define RP_MAX_SVG      ((size_t)16 << 20)

/* ---- options ---- */

typedef struct {
  const char *config, *logs, *figures; /* figures: NULL when the section has none */
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
        "                         --config F --logs DIR [--figures DIR] [--config F --logs DIR "
        "...]\n",
        stderr);
}

/* A section option (--logs, --figures) sets the last --config's entry. */
static int set_section(rp_opts *o, const char *opt, const char *v) {
  if (!o->nsec) {
    fprintf(stderr, "repro-plot report: %s belongs to a --config given before it\n", opt);
    return -1;
  }
  rp_entry *e = &o->sec[o->nsec - 1];
  if (!strcmp(opt, "--logs"))
    e->logs = v;
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
  } else if (!strcmp(opt, "--logs") || !strcmp(opt, "--figures")) {
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
    if (!o->sec[s].logs) {
      fprintf(stderr, "repro-plot report: --config %s has no --logs\n", o->sec[s].config);
      return -1;
    }
  return 0;
}

/* ---- what a log says besides its numbers: its meta and check records (logmeta.c) ---- */

/* The meta and check records of r's log (our format; the artifact's logs have neither). */
static void read_logmeta(const pt_row *r, lm_meta *lm) {
  memset(lm, 0, sizeof *lm);
  if (strcmp(r->format, "ours") == 0) lm_read(r->source, lm);
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
  if (!s->meta || !s->home || !s->drawn || !s->order || !s->paper_ms || !s->paper_dec) return -1;
  for (size_t i = 0; i < s->t.n; i++) {
    s->paper_ms[i] = NAN;
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
  int rc = pc_read_logs(&s->cfg, e->logs, o->latest, &s->t, &s->is);
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

/* A time in ms as the terminal tables print it. */
static void ms_cell(FILE *out, double v) {
  num_cell(out, v, v < 0.01 ? "%.5f" : v < 1000 ? "%.3f" : "%.1f");
}

static const char *style =
    "body{font:14px/1.45 system-ui,sans-serif;color:#222;max-width:1240px;margin:1em auto;"
    "padding:0 1em}h1{font-size:1.5em}h2{margin-top:2em;border-bottom:2px solid #ccc}"
    "h3{margin-top:1.6em}small,.note{color:#666}"
    "table{border-collapse:collapse;margin:.4em 0 1em;font-size:12px}"
    "th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f1f3f5;position:sticky;top:0}table.sort th{cursor:pointer}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.f{overflow-wrap:anywhere;min-width:10em;max-width:18em}td.r{min-width:14em}"
    ".ok{color:#1a7f37}.bad{color:#c00;font-weight:600}.ns{color:#888}"
    "td.out{background:#ffd8d8;font-weight:600}tr.out td{border-color:#f5b5b5}"
    ".fig{margin:.5em 0}.fig svg{max-width:100%;height:auto;display:block}"
    ".fig figcaption{font-size:11px;color:#888}"
    "svg g.q{fill:none;stroke:currentColor;stroke-linecap:butt;stroke-linejoin:miter}"
    "svg g.t{stroke:none;fill:black;font-family:'DejaVu Sans'}"
    "details{margin:.3em 0}code{font-size:12px}";

/* Sorts a table by the clicked column: numbers by data-v (empty last), text naturally. */
static const char *script =
    "document.querySelectorAll('table.sort th').forEach(function(th){"
    "th.addEventListener('click',function(){"
    "var tb=th.closest('table').tBodies[0],i=th.cellIndex,d=th.dataset.d==='1'?-1:1;"
    "th.dataset.d=d;"
    "function k(tr){var c=tr.cells[i];if(!c)return'';var v=c.dataset.v;"
    "return v===undefined?c.textContent:v===''?Infinity:+v;}"
    "Array.from(tb.rows).sort(function(a,b){var x=k(a),y=k(b);"
    "return d*(typeof x==='number'&&typeof y==='number'?(x>y)-(x<y):"
    "String(x).localeCompare(String(y),undefined,{numeric:true}));})"
    ".forEach(function(tr){tb.appendChild(tr);});});});";

/* ---- figures: gnuplot's SVG, inlined ---- */

typedef struct {
  const char *name, *val;
  size_t nlen, vlen;
} svg_attr;

#define SVG_MAX_ATTRS 24

typedef struct {
  int end, empty; /* </name>, <name/> */
  const char *name;
  size_t nlen;
  svg_attr a[SVG_MAX_ATTRS];
  int na;
} svg_tag;

/* The elements gnuplot's SVG terminal writes that a figure needs. Anything else (script,
 * foreignObject, title, desc, ...) is dropped with its content. */
static const char *const svg_allowed[] = {
    "svg",     "g",       "path",        "polygon",  "polyline",       "rect", "circle",
    "ellipse", "line",    "text",        "tspan",    "defs",           "use",  "pattern",
    "filter",  "feFlood", "feComposite", "clipPath", "linearGradient", "stop", "marker",
    "symbol",  NULL};

static int name_is(const svg_tag *t, const char *name) {
  return t->nlen == strlen(name) && !memcmp(t->name, name, t->nlen);
}

static int svg_allowed_tag(const svg_tag *t) {
  for (int i = 0; svg_allowed[i]; i++)
    if (name_is(t, svg_allowed[i])) return 1;
  return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == ':' || c == '.';
}

/* One attribute at p: name, optional spaces, '=', optional spaces, a quoted value. Returns
 * the byte after it, or NULL when there is none. */
static const char *parse_attr(const char *p, const char *end, svg_attr *a) {
  a->name = p;
  while (p < end && is_name_char(*p)) p++;
  a->nlen = (size_t)(p - a->name);
  while (p < end && is_space(*p)) p++;
  if (!a->nlen || p >= end || *p != '=') return NULL;
  for (p++; p < end && is_space(*p);) p++;
  if (p >= end || (*p != '"' && *p != '\'')) return NULL;
  char q = *p++;
  a->val = p;
  while (p < end && *p != q) p++;
  if (p >= end) return NULL;
  a->vlen = (size_t)(p - a->val);
  return p + 1;
}

/* Parses the tag at p (p[0] == '<') up to its '>'. Returns the byte after it, or NULL when the
 * tag is malformed (the rest of the figure is dropped). */
static const char *parse_tag(const char *p, const char *end, svg_tag *t) {
  memset(t, 0, sizeof *t);
  p++;
  if (p < end && *p == '/') t->end = 1, p++;
  t->name = p;
  while (p < end && is_name_char(*p)) p++;
  t->nlen = (size_t)(p - t->name);
  if (!t->nlen) return NULL;
  for (;;) {
    while (p < end && is_space(*p)) p++;
    if (p >= end) return NULL;
    if (*p == '>') return p + 1;
    if (*p == '/' && p + 1 < end && p[1] == '>') {
      t->empty = 1;
      return p + 2;
    }
    svg_attr a;
    if (!(p = parse_attr(p, end, &a))) return NULL;
    if (t->na < SVG_MAX_ATTRS) t->a[t->na++] = a;
  }
}

/* The end of the element whose start tag ends at p (its content skipped). */
static const char *skip_element(const char *p, const char *end, const svg_tag *start) {
  int depth = 1;
  while (depth && (p = memchr(p, '<', (size_t)(end - p)))) {
    svg_tag t;
    const char *next = parse_tag(p, end, &t);
    if (!next) return end;
    if (t.nlen == start->nlen && !memcmp(t.name, start->name, t.nlen) && !t.empty)
      depth += t.end ? -1 : 1;
    p = next;
  }
  return p ? p : end;
}

static int attr_is(const svg_attr *a, const char *name) {
  return a->nlen == strlen(name) && !memcmp(a->name, name, a->nlen);
}
static int val_is(const svg_attr *a, const char *v) {
  return a->vlen == strlen(v) && !memcmp(a->val, v, a->vlen);
}

/* gnuplot's `rgb(  0, 114, 178)` as #0072b2 into hex; 0 when v is no such colour. */
static int rgb_hex(const char *v, size_t n, char hex[8]) {
  char buf[40];
  int r, g, b, used = 0;
  if (n >= sizeof buf) return 0;
  memcpy(buf, v, n);
  buf[n] = '\0';
  if (sscanf(buf, "rgb(%d ,%d ,%d )%n", &r, &g, &b, &used) != 3 || (size_t)used != n) return 0;
  if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255) return 0;
  snprintf(hex, 8, "#%02x%02x%02x", r, g, b);
  return 1;
}

/* A decimal number's length without its trailing zeros ("1.00" -> "1", "0.50" -> "0.5"), or n
 * when v is no plain decimal. */
static size_t trim_decimal(const char *v, size_t n) {
  size_t i = v[0] == '-', dot = 0;
  for (; i < n; i++)
    if (v[i] == '.' && !dot)
      dot = i;
    else if (v[i] < '0' || v[i] > '9')
      return n;
  if (!dot) return n;
  while (n > dot + 1 && v[n - 1] == '0') n--;
  return v[n - 1] == '.' ? n - 1 : n;
}

/* 1 when n bytes at v hold sub. */
static int has_sub(const char *v, size_t n, const char *sub) {
  size_t k = strlen(sub);
  for (size_t i = 0; i + k <= n; i++)
    if (!strncasecmp(v + i, sub, k)) return 1;
  return 0;
}

/* 1 when attribute a may be kept: no event handler, and every reference (href, url()) points
 * into the figure itself. */
static int attr_safe(const svg_attr *a) {
  if (a->nlen > 2 && !strncasecmp(a->name, "on", 2)) return 0;
  if (attr_is(a, "href") || attr_is(a, "xlink:href")) return a->vlen > 1 && a->val[0] == '#';
  const char *end = a->val + a->vlen;
  for (const char *p = a->val; p + 4 <= end; p++)
    if (!strncasecmp(p, "url(", 4) && (p + 4 == end || p[4] != '#')) return 0;
  return 1;
}

/* The value of a, its references to the figure's ids prefixed (ids are unique in the report,
 * which holds many figures). */
static void put_value(FILE *out, const svg_attr *a, const char *prefix) {
  const char *v = a->val, *end = a->val + a->vlen;
  if (attr_is(a, "id")) {
    fputs(prefix, out);
    fwrite(v, 1, a->vlen, out);
  } else if (attr_is(a, "href") || attr_is(a, "xlink:href")) {
    fprintf(out, "#%s", prefix);
    fwrite(v + 1, 1, a->vlen - 1, out);
  } else if (!has_sub(v, a->vlen, "url(#")) {
    fwrite(v, 1, trim_decimal(v, a->vlen), out);
  } else {
    for (const char *p = v; p < end; p++) {
      if (end - p >= 5 && !strncasecmp(p, "url(#", 5)) {
        fprintf(out, "url(#%s", prefix);
        p += 4;
      } else {
        fputc(*p, out);
      }
    }
  }
}

/* One attribute, checked and made smaller; event handlers and references outside the figure
 * are dropped. */
static void put_attr(FILE *out, const svg_attr *a, const char *prefix) {
  svg_attr v = *a;
  while (v.vlen && is_space(v.val[v.vlen - 1])) v.vlen--;
  while (v.vlen && is_space(v.val[0])) v.val++, v.vlen--;
  if (!attr_safe(&v)) return;
  int dq = memchr(v.val, '"', v.vlen) != NULL;
  if (dq && memchr(v.val, '\'', v.vlen)) return;
  char hex[8], q = dq ? '\'' : '"';
  fprintf(out, " %.*s=%c", (int)v.nlen, v.name, q);
  if (rgb_hex(v.val, v.vlen, hex))
    fputs(hex, out);
  else
    put_value(out, &v, prefix);
  fputc(q, out);
}

/* Attribute sets gnuplot repeats on its groups, each written once as a class of the style. */
typedef struct {
  const char *cls;
  const char *attr[4][2]; /* name, value; NULL ends the set */
} group_class;

static const group_class group_classes[] = {
    {"q",
     {{"fill", "none"},
      {"stroke", "currentColor"},
      {"stroke-linecap", "butt"},
      {"stroke-linejoin", "miter"}}},
    {"t", {{"stroke", "none"}, {"fill", "black"}, {"font-family", "DejaVu Sans"}, {NULL, NULL}}},
};
#define N_GROUP_CLASSES (int)(sizeof group_classes / sizeof *group_classes)

static int in_class(const group_class *c, const svg_attr *a) {
  for (int i = 0; i < 4 && c->attr[i][0]; i++)
    if (attr_is(a, c->attr[i][0]) && val_is(a, c->attr[i][1])) return 1;
  return 0;
}

/* The class whose every attribute group tag t has, or NULL. */
static const group_class *group_class_of(const svg_tag *t) {
  if (!name_is(t, "g")) return NULL;
  for (int k = 0; k < N_GROUP_CLASSES; k++) {
    const group_class *c = &group_classes[k];
    int want = 0, have = 0;
    while (want < 4 && c->attr[want][0]) want++;
    for (int i = 0; i < t->na; i++) have += in_class(c, &t->a[i]);
    if (have == want) return c;
  }
  return NULL;
}

static void put_tag(FILE *out, const svg_tag *t, const char *prefix) {
  if (t->end) {
    fprintf(out, "</%.*s>", (int)t->nlen, t->name);
    return;
  }
  fprintf(out, "<%.*s", (int)t->nlen, t->name);
  const group_class *c = group_class_of(t);
  if (c) fprintf(out, " class=\"%s\"", c->cls);
  for (int i = 0; i < t->na; i++)
    if (!c || !in_class(c, &t->a[i])) put_attr(out, &t->a[i], prefix);
  fputs(t->empty ? "/>" : ">", out);
}

/* A <g> start tag is held back until the next tag: a group with nothing in it is dropped. */
typedef struct {
  FILE *out;
  const char *prefix;
  svg_tag pending;
  int has_pending;
} svg_writer;

static void flush_pending(svg_writer *w) {
  if (w->has_pending) put_tag(w->out, &w->pending, w->prefix);
  w->has_pending = 0;
}

/* Text between tags: dropped when it is only white space. */
static const char *put_text(svg_writer *w, const char *p, const char *end) {
  const char *q = memchr(p, '<', (size_t)(end - p)), *k = p;
  if (!q) q = end;
  while (k < q && is_space(*k)) k++;
  if (k < q) {
    flush_pending(w);
    fwrite(p, 1, (size_t)(q - p), w->out);
  }
  return q;
}

/* The markup that is no element (comments, <?xml ...?>, <!DOCTYPE ...>): skipped. Returns the
 * byte after it, or NULL when p starts an element. */
static const char *skip_markup(const char *p, const char *end) {
  if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
    const char *c = strstr(p, "-->");
    return c ? c + 3 : end;
  }
  if (end - p >= 2 && (p[1] == '?' || p[1] == '!')) {
    const char *c = memchr(p, '>', (size_t)(end - p));
    return c ? c + 1 : end;
  }
  return NULL;
}

/* Writes the <svg> element of gnuplot's file svg[0..len) (NUL-terminated): allowed elements
 * and attributes only, ids prefixed, white space between tags, empty groups, titles and the
 * attributes every group repeats left out, colours as #rrggbb. */
static void svg_inline(FILE *out, const char *svg, size_t len, const char *prefix) {
  const char *end = svg + len, *p = strstr(svg, "<svg");
  svg_writer w = {.out = out, .prefix = prefix};
  while (p && p < end) {
    const char *next;
    svg_tag t;
    if (*p != '<') {
      p = put_text(&w, p, end);
    } else if ((next = skip_markup(p, end))) {
      p = next;
    } else if (!(next = parse_tag(p, end, &t))) {
      break;
    } else if (!svg_allowed_tag(&t)) {
      p = t.end || t.empty ? next : skip_element(next, end, &t);
    } else if (t.end && w.has_pending && name_is(&t, "g")) {
      w.has_pending = 0; /* an empty group */
      p = next;
    } else {
      flush_pending(&w);
      if (!t.end && !t.empty && name_is(&t, "g")) {
        w.pending = t;
        w.has_pending = 1;
      } else {
        put_tag(out, &t, prefix);
      }
      p = next;
    }
  }
  flush_pending(&w);
}

/* The figure <name>.svg of folder dir, inlined (a note when there is none). */
static void put_svg(FILE *out, const char *dir, const char *name, int *nfig) {
  fputs("<figure class=\"fig\" data-name=\"", out);
  esc(out, name);
  fputs("\">", out);
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
    snprintf(prefix, sizeof prefix, "f%d-", (*nfig)++);
    svg_inline(out, svg, len, prefix);
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
  fputs(".svg</figcaption></figure>\n", out);
}

/* ---- counts and geometric means, as the terminal tables ---- */

typedef struct {
  int drawn, missing, failed, oom, ns;
} rp_counts;

/* drawn: a log with status ok; missing: no log of a system expected here; failed: ERR, TLE;
 * OOM: the system ran out of GPU memory (a size it cannot hold, as the paper's figures mark
 * it, not a fault of the run); NS: not supported, or no log of a system nobody can run here. */
static void count_cells(const fg_model *m, rp_counts *c) {
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) {
        pt_status st = fg_at(m, d, x, s)->status;
        if (st == ST_OK)
          c->drawn++;
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
 * to count ("ours and another system"). */
static void put_geomean(FILE *out, const fg_model *m, int d, const char *what, double g, int n,
                        const char *both) {
  esc(out, m->cfg->devices[m->dev[d]].label);
  fprintf(out, " %s: ", what);
  if (n)
    fprintf(out, "<b>%.2f&times;</b> (%d of %d %s)", g, n, m->nx, fg_cols_name(m));
  else
    fprintf(out, "- (no %s has both %s)", fg_cols_name(m), both);
}

/* Model m's geometric means per device and ratio, and paper / ours where plot: paper: has the
 * paper's times: list items, or (inline) one line each. */
static void put_geomeans(FILE *out, const fg_model *m, int inline_) {
  pc_metric k[MET_COUNT];
  int nk = m->ours < 0 ? 0 : fg_table_metrics(m->fig, k), n;
  for (int d = 0; d < m->ndev; d++) {
    for (int i = 0; i < nk; i++) {
      double g = fg_geomean(m, d, fg_ours_ratio, k[i], &n);
      fputs(inline_ ? "<div>" : "<li>", out);
      put_geomean(out, m, d, ratio_name(k[i]), g, n, "ours and another system");
      if (!inline_) {
        fputs(" of ", out);
        esc(out, fg_sys_item(m, m->ours)->label);
      }
      fputs(inline_ ? "</div>" : "</li>", out);
    }
    if (!fg_has_paper(m, d)) continue;
    double g = fg_geomean(m, d, fg_paper_ratio_k, MET_MS, &n);
    fputs(inline_ ? "<div>" : "<li>", out);
    put_geomean(out, m, d, "paper / ours", g, n, "ours and the paper's time");
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
  fg_cell c = {r->status, r};
  return r->status == ST_OK ? "ok" : fg_cell_mark(&c, NAN);
}
static const char *row_class(const pt_row *r) {
  return r->status == ST_OK ? "ok" : r->status == ST_UNSUPPORTED ? "ns" : "bad";
}

static void put_keys(FILE *out, const pt_row *r) {
  fputs("<td>", out);
  for (int k = 0; k < r->nkeys; k++) {
    if (k) fputc(' ', out);
    esc(out, r->keys[k].key);
    fputc('=', out);
    esc(out, r->keys[k].val);
  }
  fputs("</td>", out);
}

static void put_checks(FILE *out, const lm_meta *lm) {
  fputs("<td>", out);
  for (int i = 0; i < lm->nchecks; i++) {
    const lm_check *c = &lm->checks[i];
    fprintf(out, "%s<span class=\"%s\">%s ", i ? "<br>" : "",
            c->ok == 1   ? "ok"
            : c->ok == 0 ? "bad"
                         : "ns",
            c->ok == 1   ? "&#10003;"
            : c->ok == 0 ? "&#10007;"
                         : "?");
    esc(out, c->output);
    fputc(' ', out);
    esc(out, c->rel_l2);
    fputs("</span>", out);
  }
  if (lm->ntotal > lm->nchecks)
    fprintf(out, "<br>+%d more (%d failed in all)", lm->ntotal - lm->nchecks, lm->nfailed);
  fputs("</td>", out);
}

/* The compared cell's time and the ratio, highlighted outside the tolerance. */
static void put_compare(FILE *out, const pt_row *r, const pt_row *b, double tol) {
  if (!b) {
    fputs("<td class=\"ns\" data-v=\"\">only here</td><td class=\"n\" data-v=\"\"></td>", out);
    return;
  }
  if (isnan(row_ms(b))) {
    fprintf(out, "<td class=\"%s\" data-v=\"\">%s</td>", row_class(b), row_mark(b));
  } else {
    ms_cell(out, b->avg_ms);
  }
  double q = compare_ratio(r, b);
  if (!isnan(q) && fabs(q - 1) > tol)
    fprintf(out, "<td class=\"n out\" data-v=\"%.6g\">%.3f</td>", q, q);
  else
    num_cell(out, q, "%.3f");
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
    if (isnan(v))
      fputs("<td class=\"n\" data-v=\"\"></td>", out);
    else
      fprintf(out, "<td class=\"n\" data-v=\"%.6g\">%.*f</td>", v, s->paper_dec[i], v);
    return;
  }
  const pt_row *p = match(&s->paper, &s->t.rows[i]);
  if (p && isnan(row_ms(p)))
    fprintf(out, "<td class=\"%s\" data-v=\"\">%s</td>", row_class(p), row_mark(p));
  else
    ms_cell(out, row_ms(p));
}

static void put_table_head(FILE *out, const rp_section *s, const char *cls) {
  fprintf(out,
          "<table class=\"sort %s\"><thead><tr><th>device</th><th>workload</th>"
          "<th>system</th><th>keys</th><th>status</th><th>ms</th><th>TFLOP/s</th>"
          "<th>peak MiB</th>",
          cls);
  if (paper_column(s)) fputs("<th>paper ms</th>", out);
  if (s->has_cmp) fputs("<th>compare ms</th><th>ms / compare</th>", out);
  fputs("<th>checks: output rel_l2</th><th>drawn</th><th>GPU</th><th>commit</th><th>log</th>"
        "<th>reason</th>"
        "</tr></thead><tbody>\n",
        out);
}

/* A row's first cells: the cell it measures (device, workload, system, case keys), its mark
 * and its time. */
static void put_cell_id(FILE *out, const pt_row *r) {
  cell(out, "td", r->device);
  cell(out, "td", r->workload);
  cell(out, "td", r->system);
  put_keys(out, r);
  fprintf(out, "<td class=\"%s\">%s</td>", row_class(r), row_mark(r));
  ms_cell(out, row_ms(r));
}

static void put_row(FILE *out, const rp_section *s, size_t i, double tol) {
  const pt_row *r = &s->t.rows[i], *b = s->has_cmp ? match(&s->cmp, r) : NULL;
  double q = b ? compare_ratio(r, b) : NAN;
  fputs(!isnan(q) && fabs(q - 1) > tol ? "<tr class=\"out\">" : "<tr>", out);
  put_cell_id(out, r);
  num_cell(out, r->gflops_s / 1000, "%.1f");
  num_cell(out, r->peak_mib, "%.1f");
  if (paper_column(s)) put_paper(out, s, i);
  if (s->has_cmp) put_compare(out, r, b, tol);
  put_checks(out, &s->meta[i]);
  fputs(s->drawn[i] ? "<td>yes</td>" : "<td class=\"ns\">no</td>", out);
  cell(out, "td", r->gpu);
  cell(out, "td", s->meta[i].commit);
  fputs("<td class=\"f\">", out);
  esc(out, base_name(r->source));
  fputs("</td><td class=\"r\">", out);
  esc(out, r->reason);
  fputs("</td></tr>\n", out);
}

/* The rows of t whose home is figure home (-1: no figure), in cell order; the count of them. */
static int put_rows(FILE *out, const rp_section *s, int home, double tol) {
  int n = 0;
  for (size_t j = 0; j < s->t.n; j++) n += s->home[s->order[j] - s->t.rows] == home;
  if (!n) return 0;
  put_table_head(out, s, "tidy");
  for (size_t j = 0; j < s->t.n; j++) {
    size_t i = (size_t)(s->order[j] - s->t.rows);
    if (s->home[i] == home) put_row(out, s, i, tol);
  }
  fputs("</tbody></table>\n", out);
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

/* Missing logs of model m, as the file names they would have (fg_print_missing's). */
static void put_missing(FILE *out, const fg_model *m) {
  int n = 0;
  for (int d = 0; d < m->ndev; d++)
    for (int x = 0; x < m->nx; x++)
      for (int s = 0; s < m->nsys; s++) n += is_missing(m, d, x, s);
  if (!n) return;
  fprintf(out, "<details><summary>%d missing logs</summary><ul>", n);
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

static void put_model(const rp_section *s, int f, const fg_model *m, int n, const char *name,
                      void *arg) {
  const fig_ctx *c = arg;
  (void)f;
  put_svg(c->out, s->e->figures, name, c->nfig);
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
  if (fig->kind != FIG_SPEEDUP && !put_rows(out, s, f, tol))
    fputs("<p class=\"note\">no logs of this figure's experiment</p>\n", out);
  fputs("</div>\n", out);
  return 0;
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
  fputs("<table class=\"sort only\"><thead><tr><th>device</th><th>workload</th><th>system</th>"
        "<th>keys</th><th>status</th><th>compare ms</th><th>log</th></tr></thead><tbody>\n",
        out);
  for (size_t j = 0; j < s->cmp.n; j++) {
    const pt_row *b = &s->cmp.rows[j];
    if (match(&s->t, b)) continue;
    fputs("<tr>", out);
    put_cell_id(out, b);
    cell(out, "td", base_name(b->source));
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table>\n", out);
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
    fprintf(out, "<details open><summary>%d cells only in the compared logs</summary>",
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
  fputs("</code>, logs <code>", out);
  esc(out, s->e->logs);
  if (s->logs_exist)
    fprintf(out, "</code>: %zu logs read, %zu drawn, %zu read and not drawn</p>\n", s->t.n, drawn,
            s->t.n - drawn);
  else
    fputs("</code>: no such folder, every cell is NS</p>\n", out);
  put_compare_summary(out, o, s);
  for (int f = 0; f < c->nfigures; f++)
    if (put_figure(out, s, f, nfig, o->tol)) return -1;
  int other = 0;
  for (size_t i = 0; i < s->t.n; i++) other += s->home[i] < 0;
  if (other) {
    fprintf(out, "<h3>logs of experiments no figure draws (%d)</h3>\n", other);
    put_rows(out, s, -1, o->tol);
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
          "<td class=\"n\" data-v=\"\"></td><td>speedup over each panel's baseline (its panels' "
          "cells)</td></tr>\n",
          out);
    return 0;
  }
  rp_counts c = {0};
  if (each_model(s, f, sum_counts, &c)) return -1;
  put_count(out, c.drawn, "ok");
  put_count(out, c.missing, "bad");
  put_count(out, c.failed, "bad");
  put_count(out, c.oom, "ns");
  put_count(out, c.ns, "ns");
  fputs("<td>", out);
  if (each_model(s, f, sum_geomeans, out)) return -1;
  fputs("</td></tr>\n", out);
  return 0;
}

static int put_summary(FILE *out, const rp_section *secs, int n) {
  fputs("<h2 id=\"summary\">Summary</h2>\n<table class=\"sort summary\"><thead><tr><th>section"
        "</th><th>figure</th><th>cells "
        "drawn</th><th>missing</th><th>failed</th><th>OOM</th><th>NS</th>"
        "<th>geometric mean of ours over the best other system</th></tr></thead><tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    for (int f = 0; f < secs[i].cfg.nfigures; f++)
      if (put_summary_row(out, &secs[i], f)) return -1;
  fputs("</tbody></table>\n<p class=\"note\">drawn: a log with status ok; missing: no log of "
        "a system expected here; failed: ERR, TLE; OOM: out of GPU memory at that size; NS: "
        "not supported, or no log of a system nobody can run here. The geometric means are the "
        "terminal tables' (speedup: "
        "best other / ours; throughput: ours / best; memory saving: lowest other / ours).</p>\n",
        out);
  return 0;
}

static void put_compare_table(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  if (!o->compare) return;
  fputs("<h3>Compared with <code>", out);
  esc(out, o->compare);
  fprintf(out,
          "</code> (tolerance &plusmn;%g%%)</h3>\n<table class=\"sort compare\"><thead><tr>"
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
  fputs("</tbody></table>\n", out);
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
        "<table class=\"sort prov\"><thead><tr><th>section</th><th>GPU</th><th>driver</th>"
        "<th>CUDA</th><th>commit</th><th>logs</th><th>first</th><th>last</th></tr></thead>"
        "<tbody>\n",
        out);
  for (int i = 0; i < n; i++)
    if (put_provenance_rows(out, &secs[i])) return -1;
  fputs("</tbody></table>\n<p class=\"note\">From each log's meta line; the original "
        "artifact's logs have none.</p>\n",
        out);
  return 0;
}

/* ---- the document ---- */

static void put_intro(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  fputs("<h1>Reproduction report: FlashTensor figures and studies</h1>\n<p>Drawn by "
        "<code>repro-plot report</code> from the tidy table of each section's logs. Marks: NS = "
        "no log or not supported, OOM, TLE = timeout, ERR = failed. Click a column head to "
        "sort.</p>\n<ul class=\"toc\">",
        out);
  for (int i = 0; i < n; i++) {
    fputs("<li><a href=\"#sec-", out);
    esc(out, secs[i].cfg.figure);
    fputs("\">", out);
    esc(out, secs[i].cfg.figure);
    fputs("</a>: logs <code>", out);
    esc(out, secs[i].e->logs);
    fputs("</code></li>", out);
  }
  fputs("</ul>\n", out);
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

static int put_document(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  fprintf(out,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<title>FlashTensor reproduction report</title><style>%s</style></head>\n<body>\n",
          style);
  put_intro(out, o, secs, n);
  if (put_summary(out, secs, n)) return -1;
  put_compare_table(out, o, secs, n);
  if (put_provenance(out, secs, n)) return -1;
  int nfig = 0;
  for (int i = 0; i < n; i++)
    if (put_section(out, o, &secs[i], &nfig)) return -1;
  fprintf(out, "<script>%s</script>\n</body></html>\n", script);
  return 0;
}

/* Writes the report to a temporary file beside the output, then renames it. */
static int write_report(const rp_opts *o, const rp_section *secs) {
  size_t cap = strlen(o->output) + 8;
  char *tmp = malloc(cap);
  if (!tmp) return 1;
  snprintf(tmp, cap, "%s.tmp", o->output);
  FILE *out = fopen(tmp, "w");
  if (!out) {
    fprintf(stderr, "%s: cannot write: %s\n", tmp, strerror(errno));
    free(tmp);
    return 1;
  }
  int bad = put_document(out, o, secs, o->nsec) != 0;
  bad |= ferror(out) != 0;
  bad |= fclose(out) != 0;
  if (bad || rename(tmp, o->output) != 0) {
    fprintf(stderr, "%s: writing the report failed: %s\n", o->output, strerror(errno));
    remove(tmp);
    free(tmp);
    return 1;
  }
  free(tmp);
  struct stat st;
  printf("report written to %s (%lld bytes)\n", o->output,
         stat(o->output, &st) == 0 ? (long long)st.st_size : -1LL);
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
