/* emit: a figure's gnuplot files, <dir>/<name>.dat and .gp: the data and the variables its
 * kind's emitter writes from the model (figure.h), then the template in plot/gnuplot/. Each
 * file is renamed into place whole; an error leaves neither. */
#ifndef PLOT_EMIT_H
#define PLOT_EMIT_H

#include "figure.h"

/* Writes <dir>/<m->name>.dat and .gp from the template in template_dir (grid, sweep,
 * comparison). Returns 0, or -1 with a message on stderr. */
int fg_emit(const fg_model *m, const char *dir, const char *template_dir);

/* A speedup figure on one device from its panels' models (fg_build_device of each panel's
 * figure): <dir>/<name>.dat and .gp. Returns 0, or -1 with a message on stderr. */
int fg_emit_speedup(const fg_model *panels, const pc_figure *fig, const char *name, const char *dir,
                    const char *template_dir);

#endif
