/* layout: where every label of a figure goes, in inches.
 *
 * Text is measured as cairo draws DejaVu Sans (the templates' font; pango at 96 dpi, so 4/3
 * the nominal size). A panel maps its data ranges onto its size in inches and holds its bars'
 * boxes and the labels placed so far: NS/OOM/TLE/ERR marks stack when adjacent ones would
 * touch, a cut bar's value sits inside its top in black or white by WCAG contrast (on a white
 * box over a hatched bar), ours' speedup sits just above its own bar and never over a
 * neighbour. The emitters (emit_grid.c, emit_sweep.c, emit_bars.c) fill a panel, place its
 * labels here and write both to the .dat; the figure's margins come from the widest labels. */
#ifndef PLOT_LAYOUT_H
#define PLOT_LAYOUT_H

#include <stdio.h>

#include "figure.h"

#define TICK_PT  7.0                             /* y tick labels */
#define MAX_BARS (FG_MAX_COLUMNS * PC_MAX_ITEMS) /* bars of one panel: cases x systems */

typedef struct {
  double x0, x1, y0, y1; /* inches from the panel's lower left corner */
} box;

typedef enum { L_MARK, L_CUT, L_SPEEDUP } lkind;

typedef struct {
  lkind kind;
  char text[32];
  int rot;     /* 0 horizontal (anchored at its centre), 90 upward (anchored at its start) */
  int bold;    /* the speedup */
  int boxed;   /* on an opaque white box (a value over a hatched bar) */
  unsigned fg; /* text colour */
  unsigned bg; /* what is behind it: a bar's colour, or white */
  box b;
} label;

/* One panel's geometry: data ranges mapped onto its size in inches, its bars and labels.
 * Large (a box per bar): the emitters keep theirs in static storage. */
typedef struct {
  double pw, ph, xlo, xhi, ylo, yhi;
  int logy;
  box bar[MAX_BARS];
  int has_bar[MAX_BARS];
  label lab[2 * MAX_BARS];
  int nlab;
} panel;

/* The whole figure in inches: page, margins, gaps, one panel's size, the note's height and
 * the legend's grid. */
typedef struct {
  double w, h, left, right, top, bottom, cgap, rgap, pw, ph, note_h;
  int lcols, lrows;
} layout;

/* Axis ranges: a round ceiling, a tick step (at most 6 intervals), and the range of values
 * spanning [mn, mx] (mn = INFINITY, mx = 0 when there are none) on a linear or log axis. */
double ly_nice_ceiling(double v);
double ly_nice_step(double hi);
void ly_axis_range(double mn, double mx, int logy, double *lo, double *hi);

/* Text: the length of a one-line text at pt points (bold: the speedup), and the thickness of
 * a line of it, in inches. */
double ly_text_in(const char *s, double pt, int bold);
double ly_thick_in(double pt);

/* A data x or y value of panel p in inches from its lower left corner (y clamped inside). */
double ly_in_x(const panel *p, double x);
double ly_in_y(const panel *p, double v);

/* Labels, placed in this order so that later ones clear earlier ones: the value of bar i cut
 * at the top of the axis; the mark of a missing bar centred at xc; ours' speedup over bar own
 * (pitch: the width of a bar's slot). nbars: the bars the label must clear. */
void ly_place_cut(panel *p, int i, const char *text, unsigned color, int hatched);
void ly_place_mark(panel *p, int nbars, double xc, const char *text);
void ly_place_speedup(panel *p, int nbars, int own, const char *text, double pitch);

/* The .dat: bar i's box (nan without a bar; eol ends the line), and the labels block. */
void ly_dat_bar_box(FILE *f, const panel *p, int i, int eol);
void ly_dat_labels(FILE *f, const panel *p);

/* Width of the widest y tick label of a linear axis 0..hi by step, and of a log axis. */
double ly_ticks_linear(double hi, double step);
double ly_ticks_log(void);
/* The legend's grid: entries entry_in inches wide across the plot width, nsys of them. */
void ly_legend(layout *L, int nsys, double entry_in);

#endif
