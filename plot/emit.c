/* emit: a figure's files, <dir>/<name>.dat and .gp (see emit.h): the emitter of its kind
 * (emit_grid.c, emit_sweep.c, emit_bars.c) writes the data and the script's variables, then
 * the kind's template (plot/gnuplot/) is appended; both files are renamed into place whole. */
#include "emit.h"

#include <errno.h>
#include <string.h>

#include "emit_parts.h"
#include "fileio.h"

/* Appends the figure kind's template (plot/gnuplot/<kind>.gp) to the .gp. */
static int copy_template(FILE *f, const char *template_dir, const char *kind) {
  char path[PT_PATH];
  snprintf(path, sizeof path, "%s/%s.gp", template_dir, kind);
  FILE *in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "%s: cannot open the gnuplot template: %s\n", path, strerror(errno));
    return -1;
  }
  fprintf(f, "# ---- template %s.gp ----\n", kind);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, f);
  fclose(in);
  return 0;
}

/* Opens <dir>/<name>.<ext> through a temporary of its own (fileio.h's afile). */
static int open_out(afile *a, const char *dir, const char *name, const char *ext) {
  char path[PT_PATH], why[256];
  snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
  if (afile_open(a, path, 0666, 0, why, sizeof why) == 0) return 0;
  fprintf(stderr, "%s: %s\n", path, why);
  return -1;
}

/* Writes <dir>/<name>.dat and .gp: emit, then the template. Each file is renamed into place
 * whole once both are written; an emitter's error puts neither there. */
static int emit_files(const char *dir, const char *name, const char *tmpl_dir, const char *tmpl,
                      int (*emit)(const void *, FILE *, FILE *), const void *arg) {
  afile dat, gp;
  if (open_out(&dat, dir, name, "dat")) return -1;
  if (open_out(&gp, dir, name, "gp")) {
    afile_abort(&dat);
    return -1;
  }
  fprintf(dat.f, "# %s: gnuplot data written by repro-plot from the logs; NaN = no bar.\n", name);
  int rc = emit(arg, dat.f, gp.f);
  if (rc == 0) rc = copy_template(gp.f, tmpl_dir, tmpl);
  char why[256] = "";
  if (rc != 0) {
    afile_abort(&dat);
    afile_abort(&gp);
  } else if (afile_commit(&dat, why, sizeof why) != 0) {
    afile_abort(&gp);
    rc = -1;
  } else if (afile_commit(&gp, why, sizeof why) != 0) {
    rc = -1;
  }
  if (rc)
    fprintf(stderr, "%s/%s: writing the figure files failed%s%s\n", dir, name, why[0] ? ": " : "",
            why);
  return rc;
}

/* emit_files' callback for a grid, sweep or comparison figure: the emitter of its kind. */
static int emit_model(const void *arg, FILE *dat, FILE *gp) {
  const fg_model *m = arg;
  switch (m->fig->kind) {
  case FIG_GRID: return fg_emit_grid(m, dat, gp);
  case FIG_SWEEP: return fg_emit_sweep(m, dat, gp);
  case FIG_COMPARISON: return fg_emit_comparison(m, dat, gp);
  case FIG_SPEEDUP: break;
  }
  return -1;
}

int fg_emit(const fg_model *m, const char *dir, const char *template_dir) {
  const char *tmpl = m->fig->kind == FIG_GRID    ? "grid"
                     : m->fig->kind == FIG_SWEEP ? "sweep"
                                                 : "bars";
  return emit_files(dir, m->name, template_dir, tmpl, emit_model, m);
}

/* A speedup figure's emit_files argument: its panels' models, the figure and its file name. */
typedef struct {
  const fg_model *panels;
  const pc_figure *fig;
  const char *name;
} speedup_arg;

/* emit_files' callback for a speedup figure: its panels' models, drawn by emit_bars.c. */
static int emit_speedup(const void *arg, FILE *dat, FILE *gp) {
  const speedup_arg *a = arg;
  return fg_emit_speedup_bars(a->panels, a->fig, a->name, dat, gp);
}

int fg_emit_speedup(const fg_model *panels, const pc_figure *fig, const char *name, const char *dir,
                    const char *template_dir) {
  speedup_arg a = {panels, fig, name};
  return emit_files(dir, name, template_dir, "bars", emit_speedup, &a);
}
