/* config_nodes: the readers of the loader's YAML nodes that the plot: section's loader files
 * share (config_load.c, config_figures.c, config_systems.c, config_extras.c); not part of
 * config.h. Each reader returns 0, or -1 with the first error ("file:line:col: message") kept
 * in y. */
#ifndef PLOT_CONFIG_NODES_H
#define PLOT_CONFIG_NODES_H

#include <stddef.h>

#include "config.h"
#include "yamlnode.h"

typedef struct {
  ydoc_err err; /* the first error, "file:line:col: message" */
} ycx;

#define yerr(y, n, ...) y_error(&(y)->err, (n), __VA_ARGS__)

/* Mapping pairs (k, v) and list items (v) of the loader's tree. */
#define FOR_PAIRS(map, k, v) \
  for (int p_ = 0;           \
       p_ < (map)->n && ((k) = (map)->items[2 * p_], (v) = (map)->items[2 * p_ + 1], 1); p_++)
#define FOR_ITEMS(seq, v) for (int i_ = 0; i_ < (seq)->n && ((v) = (seq)->items[i_], 1); i_++)

/* ---- one node read as what (names the thing in the message) ---- */

/* n's text when it is a scalar, else NULL. */
const char *pcy_scalar(const ynode *n);
/* A name of [A-Za-z0-9._-]+; a label (printable, no quotes or backslashes: it reaches gnuplot);
 * a number >= 0; a whole number; true or false. */
int pcy_name(ycx *y, const ynode *n, char *dst, const char *what);
int pcy_text(ycx *y, const ynode *n, char *dst, size_t cap, const char *what);
int pcy_number(ycx *y, const ynode *n, double *dst, const char *what);
int pcy_int(ycx *y, const ynode *n, int *dst, const char *what);
int pcy_bool(ycx *y, const ynode *n, int *dst, const char *what);
/* An error unless n is of type t. */
int pcy_want(ycx *y, const ynode *n, ytype t, const char *what);
/* The metrics' names in the YAML, by pc_metric: ms, tflops, mib, speedup. */
extern const char *const pcy_metric_names[MET_COUNT];

#endif
