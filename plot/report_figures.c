/* report_figures: a section of the page: its figures (gnuplot's SVG inlined through
 * report_svg.c), each with its stale bars, geometric means, cells not run and table of logs;
 * the other figures of its folder; the comparison and the broken logs. */
#include "report_parts.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "report_svg.h"

#define RP_MAX_SVG ((size_t)16 << 20)

/* The figure <name>.svg of folder dir, inlined at the content's width (a note when there is
 * none). A click on it makes the figure the page's :target, shown over the whole window; its
 * "close" link returns to the anchor before it. No script, no other file. */
static void put_svg(FILE *out, const char *dir, const char *name, int *nfig) {
  int id = (*nfig)++;
  fprintf(out, "<div id=\"a%d\"></div><figure class=\"fig\" data-name=\"", id);
  rp_esc(out, name);
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
      rp_esc(out, dir);
      fputc('/', out);
      rp_esc(out, name);
      fputs(".svg: ", out);
    }
    rp_esc(out, why);
    fputs("</p>", out);
  }
  fputs("<figcaption>", out);
  rp_esc(out, name);
  fputs(".svg", out);
  if (svg)
    fprintf(out,
            " &middot; <a class=\"enlarge\" href=\"#z%d\">enlarge</a><a class=\"close\" "
            "href=\"#a%d\">close</a>",
            id, id);
  fputs("</figcaption></figure>\n", out);
}

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
        rp_esc(out, name);
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
    rp_esc(out, panels->cfg->stale[k].log);
    fputs("</code>: ", out);
    rp_esc(out, panels->cfg->stale[k].reason);
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
    rp_esc(c->out, note);
    fputs("</p>", c->out);
  }
  fputs("<ul class=\"gm\">", c->out);
  rp_put_geomeans(c->out, m, 0);
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
  rp_esc(out, fig->name);
  fputs("\"><h3>", out);
  rp_esc(out, fig->name);
  fprintf(out, " <small>%s", kind_name(fig->kind));
  if (fig->experiment[0]) {
    fputs(", experiment ", out);
    rp_esc(out, fig->experiment);
  }
  fputs("</small></h3>\n", out);
  fig_ctx c = {out, nfig};
  if (rp_each_model(s, f, put_model, &c)) return -1;
  if (fig->kind != FIG_SPEEDUP && !rp_put_rows(out, s, f, tol, "the table of its cells"))
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
    rc = rp_each_model(s, f, collect_name, &drawn) || drawn.oom ? -1 : 0;
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
    rp_esc(out, own[i]);
    fputs("\"><h3>", out);
    rp_esc(out, own[i]);
    fputs(" <small>drawn by the study's own script (no plot: figure draws it)</small></h3>\n", out);
    put_svg(out, s->e->figures, own[i], nfig);
    fputs("</div>\n", out);
  }
  for (int i = 0; i < nown; i++) free(own[i]);
  free(own);
  free(drawn.v);
  return rc;
}

static void put_issues(FILE *out, const rd_issues *is) {
  if (!is->n) return;
  static const char *const kind[] = {"skipped", "warning", "not drawn"};
  fprintf(out, "<details><summary>%zu broken, unknown or odd logs</summary><ul>", is->n);
  for (size_t i = 0; i < is->n; i++) {
    fprintf(out, "<li>%s <code>", kind[is->v[i].kind]);
    rp_esc(out, is->v[i].path);
    if (is->v[i].line) fprintf(out, ":%d", is->v[i].line);
    fputs("</code>: ", out);
    rp_esc(out, is->v[i].msg);
    fputs("</li>", out);
  }
  fputs("</ul></details>\n", out);
}

int rp_put_section(FILE *out, const rp_opts *o, const rp_section *s, int *nfig) {
  const pc_config *c = &s->cfg;
  size_t drawn = 0;
  for (size_t i = 0; i < s->t.n; i++) drawn += s->drawn[i];
  fputs("<section data-figure=\"", out);
  rp_esc(out, c->figure);
  fputs("\" id=\"sec-", out);
  rp_esc(out, c->figure);
  fputs("\"><h2>", out);
  rp_esc(out, c->figure);
  fputs("</h2>\n<p>config <code>", out);
  rp_esc(out, s->e->config);
  fputs("</code>, ", out);
  rp_put_input(out, s->e);
  if (s->logs_exist)
    fprintf(out, "</code>: %zu %s read, %zu drawn, %zu read and not drawn</p>\n", s->t.n,
            s->e->ntables ? "rows" : "logs", drawn, s->t.n - drawn);
  else
    fputs("</code>: no such folder, every cell is NS</p>\n", out);
  rp_put_compare_summary(out, o, s);
  for (int f = 0; f < c->nfigures; f++)
    if (put_figure(out, s, f, nfig, o->tol)) return -1;
  if (put_own_figures(out, s, nfig)) return -1;
  int other = 0;
  for (size_t i = 0; i < s->t.n; i++) other += s->home[i] < 0;
  if (other) {
    fprintf(out, "<h3>logs of experiments no figure draws (%d)</h3>\n", other);
    rp_put_rows(out, s, -1, o->tol, "their table");
  }
  put_issues(out, &s->is);
  fputs("</section>\n", out);
  return 0;
}
