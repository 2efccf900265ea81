/* layout: where every label of a figure goes, in inches (see layout.h). */
#include "layout.h"

#include <math.h>
#include <string.h>

/* ---- axis ranges and ticks ---- */

/* A round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) at or above v. */
double ly_nice_ceiling(double v) {
  if (!(v > 0)) return 1;
  double p = pow(10, floor(log10(v)));
  const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (steps[i] * p >= v) return steps[i] * p;
  return 10 * p;
}

/* A tick step of 1, 2, 2.5 or 5 times a power of ten giving at most 6 intervals up to hi. */
double ly_nice_step(double hi) {
  if (!(hi > 0)) return 1;
  double p = pow(10, floor(log10(hi / 6)));
  const double steps[] = {1, 2, 2.5, 5, 10};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (hi / (steps[i] * p) <= 6 + 1e-9) return steps[i] * p;
  return 10 * p;
}

/* The y range of a panel whose values span [mn, mx] (mn = INFINITY, mx = 0 when it has none):
 * a log axis of whole decades around the data, or 0 up to a round number above it. */
void ly_axis_range(double mn, double mx, int logy, double *lo, double *hi) {
  if (logy) {
    *lo =
        isfinite(mn) ? pow(10, floor(log10(mn)) - (mn < 3 * pow(10, floor(log10(mn))) ? 1 : 0)) : 1;
    *hi = mx > 0 ? pow(10, ceil(log10(mx * 2))) : 1e5;
    if (*hi <= *lo) *hi = *lo * 100;
  } else {
    *lo = 0;
    *hi = ly_nice_ceiling((mx > 0 ? mx : 1) * 1.2);
  }
}

/* ---- text metrics: DejaVu Sans, the templates' font ---- */

#define MARK_PT    6.0  /* NS/OOM/TLE/ERR and cut values */
#define SPEEDUP_PT 6.5  /* ours' speedup, bold */
#define THICK_EM   0.95 /* a line of caps and digits across, with some air */
#define PAD_IN     0.02 /* least room between two labels, and between a label and a bar */
/* gnuplot's cairo terminals (pdfcairo at fontscale 1, pngcairo at dpi/72) lay text out with
 * pango at 96 dpi: a "6" pt font is drawn 4/3 as large (measured: ten 6 pt digits are 0.69 in
 * wide, not 0.53). The svg terminal gets fontscale 4/3 so that all three formats agree. */
#define FONT_SCALE (96.0 / 72.0)

/* Advance widths in em of DejaVu Sans (its units / 2048) for the characters labels use (marks,
 * numbers, the case labels of x: templates); others count as wide. */
static double char_em(unsigned c) {
  static const double lower[26] = {0.613, 0.635, 0.550, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278,
                                   0.278, 0.579, 0.278, 0.974, 0.634, 0.612, 0.635, 0.635, 0.411,
                                   0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525};
  static const double upper[26] = {0.684, 0.686, 0.698, 0.770, 0.632, 0.575, 0.775, 0.752, 0.295,
                                   0.295, 0.656, 0.557, 0.863, 0.748, 0.787, 0.603, 0.787, 0.695,
                                   0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685};
  if (c >= '0' && c <= '9') return 0.636;
  if (c >= 'a' && c <= 'z') return lower[c - 'a'];
  if (c >= 'A' && c <= 'Z') return upper[c - 'A'];
  switch (c) {
  case ' ':
  case '.':
  case ',': return 0.318;
  case '-': return 0.361;
  case '/':
  case ':': return 0.337;
  case '(':
  case ')': return 0.390;
  case '=':
  case '+': return 0.838;
  case 0xD7: return 0.838; /* × */
  }
  return 0.8;
}

/* Length of a one-line text in inches (UTF-8: only U+00D7 × matters beyond ASCII). */
double ly_text_in(const char *s, double pt, int bold) {
  double em = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = *p;
    if (c == 0xC3 && p[1])
      c = 0xC0 | (*++p & 0x3F);
    else if (c >= 0x80)
      continue;
    em += char_em(c);
  }
  return em * pt * FONT_SCALE / 72.0 * (bold ? 1.08 : 1.0);
}

double ly_thick_in(double pt) { return THICK_EM * pt * FONT_SCALE / 72.0; }

/* ---- one panel: data coordinates and inches, the label boxes ---- */

double ly_in_x(const panel *p, double x) { return (x - p->xlo) / (p->xhi - p->xlo) * p->pw; }
double ly_in_y(const panel *p, double v) {
  double t = p->logy ? log(v / p->ylo) / log(p->yhi / p->ylo) : (v - p->ylo) / (p->yhi - p->ylo);
  return fmin(fmax(t, 0), 1) * p->ph;
}
static double data_x(const panel *p, double in) { return p->xlo + in / p->pw * (p->xhi - p->xlo); }
static double data_y(const panel *p, double in) {
  double t = in / p->ph;
  return p->logy ? p->ylo * pow(p->yhi / p->ylo, t) : p->ylo + t * (p->yhi - p->ylo);
}

static int boxes_meet(box a, box b, double pad) {
  return a.x0 < b.x1 + pad && b.x0 < a.x1 + pad && a.y0 < b.y1 + pad && b.y0 < a.y1 + pad;
}

/* The lowest y >= y0 where a box [x0,x1] x [y,y+h] clears every label placed so far and,
 * with avoid_bars, every bar. */
static double lift(const panel *p, int nbars, double x0, double x1, double y0, double h,
                   int avoid_bars) {
  double y = y0;
  for (int moved = 1, guard = 0; moved && guard < 4 * MAX_BARS; guard++) {
    moved = 0;
    box b = {x0, x1, y, y + h};
    for (int i = 0; i < p->nlab; i++)
      if (boxes_meet(b, p->lab[i].b, PAD_IN)) {
        y = p->lab[i].b.y1 + PAD_IN;
        moved = 1;
        b.y0 = y;
        b.y1 = y + h;
      }
    for (int i = 0; avoid_bars && i < nbars; i++)
      if (p->has_bar[i] && boxes_meet(b, p->bar[i], PAD_IN)) {
        y = p->bar[i].y1 + PAD_IN;
        moved = 1;
        b.y0 = y;
        b.y1 = y + h;
      }
  }
  return y;
}

static label *add_label(panel *p, lkind kind, const char *text, int rot, unsigned fg, unsigned bg) {
  label *l = &p->lab[p->nlab++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  snprintf(l->text, sizeof l->text, "%s", text);
  l->rot = rot;
  l->fg = fg;
  l->bg = bg;
  return l;
}

/* WCAG relative luminance and contrast ratio of two 0xRRGGBB colours. */
static double luminance(unsigned rgb) {
  double c[3];
  for (int i = 0; i < 3; i++) {
    double v = ((rgb >> (16 - 8 * i)) & 0xFF) / 255.0;
    c[i] = v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
  }
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
static double contrast(unsigned a, unsigned b) {
  double la = luminance(a), lb = luminance(b);
  return (fmax(la, lb) + 0.05) / (fmin(la, lb) + 0.05);
}
/* Black or white, whichever reads better on bg. */
static unsigned text_on(unsigned bg) {
  return contrast(0x000000, bg) >= contrast(0xFFFFFF, bg) ? 0x000000 : 0xFFFFFF;
}

/* The value of a bar cut at the top of the axis: written inside the bar's top, upward, in
 * black or white by contrast; on a hatched bar (ours) on a white box. */
void ly_place_cut(panel *p, int i, const char *text, unsigned color, int hatched) {
  double len = ly_text_in(text, MARK_PT, 0), th = ly_thick_in(MARK_PT);
  double xc = (p->bar[i].x0 + p->bar[i].x1) / 2;
  label *l = add_label(p, L_CUT, text, 90, hatched ? 0x000000 : text_on(color),
                       hatched ? 0xFFFFFF : color);
  l->boxed = hatched;
  double y1 = p->ph - 0.04;
  l->b = (box){xc - th / 2, xc + th / 2, y1 - len, y1};
}

/* A mark where there is no bar: upward from just above the axis, lifted over earlier marks
 * that would touch it (adjacent NS marks in a dense panel stack instead of running together). */
void ly_place_mark(panel *p, int nbars, double xc, const char *text) {
  double len = ly_text_in(text, MARK_PT, 0), th = ly_thick_in(MARK_PT);
  double y = lift(p, nbars, xc - th / 2, xc + th / 2, 0.05, len, 0);
  if (y + len > p->ph) y = fmax(0, p->ph - len);
  label *l = add_label(p, L_MARK, text, 90, 0x000000, 0xFFFFFF);
  l->b = (box){xc - th / 2, xc + th / 2, y, y + len};
}

/* Ours' speedup, in order of preference: level and just above its own bar, when it is no
 * wider than the bar's slot (pitch) and clear of every bar and label; else upward just above its own bar (a label as narrow as
 * the bar, so it stays on its own bar); else level, lifted over its neighbours; else inside its
 * bar's top on a white box. Never over a neighbour's bar, never outside the axis. */
void ly_place_speedup(panel *p, int nbars, int own, const char *text, double pitch) {
  double len = ly_text_in(text, SPEEDUP_PT, 1), th = ly_thick_in(SPEEDUP_PT);
  double xc = (p->bar[own].x0 + p->bar[own].x1) / 2, top = p->bar[own].y1, base = top + PAD_IN;
  double x0 = fmin(fmax(xc - len / 2, 0), p->pw - len);
  double yh = lift(p, nbars, x0, x0 + len, base, th, 1);
  double yv = lift(p, nbars, xc - th / 2, xc + th / 2, base, len, 1);
  label *l = add_label(p, L_SPEEDUP, text, 0, 0xB00000, 0xFFFFFF);
  l->bold = 1;
  if (len <= pitch && yh <= base + 1e-9 && yh + th <= p->ph) {
    l->b = (box){x0, x0 + len, yh, yh + th};
  } else if (yv + len <= p->ph) {
    l->rot = 90;
    l->b = (box){xc - th / 2, xc + th / 2, yv, yv + len};
  } else if (yh + th <= p->ph) {
    l->b = (box){x0, x0 + len, yh, yh + th};
  } else {
    double y1 = top - 0.04;
    for (int i = 0; i < p->nlab - 1; i++) /* below the cut value, if the bar has one */
      if (p->lab[i].kind == L_CUT && p->lab[i].b.x0 < xc && xc < p->lab[i].b.x1)
        y1 = fmin(y1, p->lab[i].b.y0 - PAD_IN);
    l->rot = 90;
    l->boxed = 1;
    l->b = (box){xc - th / 2, xc + th / 2, fmax(0, y1 - len), fmax(0, y1 - len) + len};
  }
}

void ly_dat_bar_box(FILE *f, const panel *p, int i, int eol) {
  if (p->has_bar[i])
    fprintf(f, " %.4f %.4f %.4f %.4f", p->bar[i].x0, p->bar[i].x1, p->bar[i].y0, p->bar[i].y1);
  else
    fputs(" nan nan nan nan", f);
  if (eol) fputc('\n', f);
}

/* The labels block: gnuplot's anchor in data coordinates, then the box in inches (tests). */
void ly_dat_labels(FILE *f, const panel *p) {
  fprintf(f,
          "# labels: x y text rot bold boxed fg bg kind box_x0 box_x1 box_y0 box_y1 "
          "(box in inches from the panel's lower left; panel %.4f x %.4f in)\n",
          p->pw, p->ph);
  for (int i = 0; i < p->nlab; i++) {
    const label *l = &p->lab[i];
    double ax = data_x(p, (l->b.x0 + l->b.x1) / 2);
    double ay = data_y(p, l->rot ? l->b.y0 : (l->b.y0 + l->b.y1) / 2);
    static const char *kinds[] = {"mark", "cut", "speedup"};
    fprintf(f, "%.6g %.6g \"%s\" %d %d %d %u %u %s %.4f %.4f %.4f %.4f\n", ax, ay, l->text, l->rot,
            l->bold, l->boxed, l->fg, l->bg, kinds[l->kind], l->b.x0, l->b.x1, l->b.y0, l->b.y1);
  }
  /* a block gnuplot can address even when the panel has no label */
  fputs("nan nan \"\" 0 0 0 0 16777215 none nan nan nan nan\n\n\n", f);
}

/* ---- the whole figure: tick label widths, the legend ---- */

/* Width of the widest y tick label of a linear axis 0..hi in steps of step. */
double ly_ticks_linear(double hi, double step) {
  double w = 0;
  for (int k = 0; k * step <= hi * (1 + 1e-9) && k < 100; k++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", k * step);
    w = fmax(w, ly_text_in(buf, TICK_PT, 0));
  }
  return w;
}

/* A log axis labelled "%.0s%c" (1, 10, 100, 1k, 10k, ...): at most 3 digits and a prefix. */
double ly_ticks_log(void) { return ly_text_in("100k", TICK_PT, 0); }

/* The legend's columns (entries of entry_in inches across the plot width) and rows. */
void ly_legend(layout *L, int nsys, double entry_in) {
  L->lcols = (int)((L->w - L->left - L->right) / entry_in);
  if (L->lcols < 1) L->lcols = 1;
  if (L->lcols > nsys) L->lcols = nsys;
  L->lrows = (nsys + L->lcols - 1) / L->lcols;
}
