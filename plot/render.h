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

/* repro-plot render DIR NAME...: render_all of DIR's NAME.gp scripts, for figures drawn by a
 * study's own gnuplot scripts (studies/h2o-diag/plot_diag.sh), so their outputs are checked
 * and their PDFs dated as draw's. argv[0] is "render". Exit 0, 1 when a figure failed or
 * gnuplot is missing, 2 usage (a NAME with '/' or without its NAME.gp). */
int render_main(int argc, char **argv);

/* 1 when a gnuplot binary is on PATH. */
int render_have_gnuplot(void);

#endif
