/* report_parts: the parts of the page that report.c puts in order (report_html.c,
 * report_logs.c, report_compare.c, report_summary.c, report_verdict.c, report_figures.c), over
 * a section (report_section.h); not part of repro-plot's interface (report.h). */
#ifndef PLOT_REPORT_PARTS_H
#define PLOT_REPORT_PARTS_H

#include <stddef.h>
#include <stdio.h>

#include "figure.h"
#include "figure_impl.h"
#include "report_section.h"
#include "table.h"

/* ---- report_html.c ---- */

/* s[0..n) and s as HTML text: & < > " ' escaped (safe in text and in quoted attributes). */
void rp_escn(FILE *out, const char *s, size_t n);
void rp_esc(FILE *out, const char *s);
/* "logs <code>DIR" or "tables <code>A, B": a section's input (the caller closes the code). */
void rp_put_input(FILE *out, const rp_entry *e);
/* <tag>text</tag>, text escaped; a number cell (right-aligned, sortable by data-v; empty when
 * v is NAN); a count cell, of class bad_class when not 0 (and bad_class not ""). */
void rp_cell(FILE *out, const char *tag, const char *text);
void rp_num_cell(FILE *out, double v, const char *fmt);
void rp_put_count(FILE *out, int v, const char *bad_class);
/* The page's style (the figures' classes follow it: rs_style) and its sorting script. */
extern const char rp_page_style[], rp_page_script[];

/* ---- report_logs.c: the tables of logs ---- */

/* A cell of another table (--compare, --paper) with r's keys, or NULL: compare's matching. */
const pt_row *rp_match(const pt_table *t, const pt_row *r);
/* The row's time over the compared row's, or NAN when either has none. */
double rp_compare_ratio(const pt_row *r, const pt_row *b);
/* A compact cell (no end tag), text escaped; a row's first cells (the cell it measures, its
 * mark, "ok, stale" when stale, and its time); a path's base name. */
void rp_td(FILE *out, const char *text);
void rp_put_cell_id(FILE *out, const pt_row *r, int stale);
const char *rp_base_name(const char *path);
/* The rows of the section whose home is figure home (-1: no figure), in cell order, folded
 * (summary says what); the count of them. */
int rp_put_rows(FILE *out, const rp_section *s, int home, double tol, const char *summary);

/* ---- report_compare.c: --compare ---- */

/* A section's comparison (a paragraph, its cells only in the compared logs folded), and the
 * table of every section's; nothing without --compare. */
void rp_put_compare_summary(FILE *out, const rp_opts *o, const rp_section *s);
void rp_put_compare_table(FILE *out, const rp_opts *o, const rp_section *secs, int n);

/* ---- report_summary.c ---- */

/* Model m's geometric means per device and ratio, and paper / ours where plot: paper: has the
 * paper's times: list items, or (inline) one line each. Stale logs are left out. */
void rp_put_geomeans(FILE *out, const fg_model *m, int inline_);
/* The summary table of every section's figures, and the logs' provenance. 0, or -1 out of
 * memory. */
int rp_put_summary(FILE *out, const rp_section *secs, int n);
int rp_put_provenance(FILE *out, const rp_section *secs, int n);

/* ---- report_verdict.c ---- */

/* The first table of the page: per figure with claims and GPU, the paper's claim, this run's
 * ratio of FlashTensor and of ours, and the verdict, with its rule. 0, or -1 out of memory. */
int rp_put_verdict(FILE *out, const rp_section *secs, int n);

/* ---- report_figures.c ---- */

/* A section: its figures with their tables, its folder's other figures, the comparison and
 * the broken logs; *nfig numbers the figures of the page. 0, or -1 out of memory. */
int rp_put_section(FILE *out, const rp_opts *o, const rp_section *s, int *nfig);

#endif
