/* render: runs gnuplot on the generated scripts, several at a time. */
#ifndef PLOT_RENDER_H
#define PLOT_RENDER_H

#define RENDER_NAME 104 /* a figure's file name: <figure>_<device> */

/* Runs `gnuplot <name>.gp` in dir for each name, at most jobs at once, and checks that
 * <name>.pdf/.png/.svg exist and are not empty, then fixes the PDF's date
 * (render_fix_pdf_date). Returns the number of failed figures. */
int render_all(const char *dir, char names[][RENDER_NAME], int n, int jobs);

/* Makes a PDF reproducible bit for bit: cairo 1.16 (Debian 12) writes the wall-clock time as
 * /CreationDate and ignores SOURCE_DATE_EPOCH, so the date is overwritten in place (same
 * length: the xref offsets stay valid) with SOURCE_DATE_EPOCH, or 1970-01-01 when unset.
 * PNG and SVG from gnuplot's cairo and svg terminals carry no date. Returns 0 or -1. */
int render_fix_pdf_date(const char *path);

/* 1 when a gnuplot binary is on PATH. */
int render_have_gnuplot(void);

#endif
