/* report_svg: a figure's SVG inlined into report.html, made safe and small.
 *
 * The figure's file is read into a tree through an allowlist: the elements gnuplot's SVG terminal
 * writes that a figure needs (no script, foreignObject, title, anchor, ...; each dropped with its
 * content) and their attributes but event handlers and references outside the figure (href and
 * url() only to the figure's own ids). It is then made smaller without changing what it draws:
 * - coordinates (d, points, transform, x, y, width, ...) to 0.1 units (0.01 below 10), decimals
 *   without trailing zeros, colours as #rgb or #rrggbb;
 * - a path of absolute moves and lines, and a polygon, as a path of h and v steps where a
 *   segment is horizontal or vertical; a text's translate() as its x and y;
 * - definitions nothing draws and ids nothing references left out; a pattern that repeats an
 *   earlier one replaced by it;
 * - a group of one element folded into that element (the group's inherited attributes and its
 *   transform moved down), neighbouring groups with the same attributes joined, empty groups
 *   left out; white space between tags (but inside a text), comments and titles left out;
 * - attribute sets gnuplot repeats written as classes, whose rules are rs_style.
 * Every id and every reference to one is prefixed, so that figures do not share ids. The same
 * file gives the same bytes. */
#ifndef PLOT_REPORT_SVG_H
#define PLOT_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

/* The style rules of the classes rs_inline writes, scoped to `.fig svg`. */
extern const char rs_style[];

/* Writes the <svg> element of the SVG text svg[0..len) (NUL-terminated) to out, its ids
 * prefixed with prefix. A malformed tag ends the figure there. Returns 0, or -1 when out of
 * memory (then nothing was written). */
int rs_inline(FILE *out, const char *svg, size_t len, const char *prefix);

#endif
