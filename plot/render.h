/* render: runs gnuplot on the generated scripts, several at a time, in a private folder whose
 * files are then renamed into place one by one.
 *
 * gnuplot writes NAME.pdf, .png and .svg where it runs, byte by byte. It runs in a stage: a
 * folder of its own beside the outputs (DIR/.repro-plot.XXXXXX, fileio.h's temporary name),
 * and each file it (or draw's emitters) wrote there is renamed into DIR when it is done. A
 * reader of DIR/NAME.pdf sees a whole figure; of two draws into one folder each file is one
 * draw's whole file (the last rename wins); a figure that failed leaves DIR's old figure
 * files as they were. */
#ifndef PLOT_RENDER_H
#define PLOT_RENDER_H

#define RENDER_NAME 104 /* a figure's file name: <figure>_<device> */
#define RENDER_PATH 1024

typedef struct {
  char dir[RENDER_PATH];   /* where the files go */
  char stage[RENDER_PATH]; /* the private folder in dir where they are made */
} render_stage;

/* Makes s's stage in dir. mirror: the stage holds a link to each entry of dir (names starting
 * with '.' and the outputs of names[0..n) left out), so that a script of dir that reads its
 * own files by relative names (data, `load`, `< command` pipes) finds them there. 0, or -1
 * with the reason on stderr. */
int render_stage_open(render_stage *s, const char *dir, int mirror, char names[][RENDER_NAME],
                      int n);

/* Runs `gnuplot NAME.gp` in the stage for each name, at most jobs at once; checks that
 * NAME.pdf/.png/.svg exist and are not empty and fixes the PDF's date (render_fix_pdf_date).
 * ok[i] (may be NULL) says whether names[i] succeeded. Messages name the files as they will be
 * in s->dir. Returns the number of failed figures. */
int render_run(const render_stage *s, char names[][RENDER_NAME], int n, int jobs,
               unsigned char *ok);

/* Renames every file made in the stage into s->dir, each in one step; the NAME.pdf, .png and
 * .svg of a names[i] whose ok[i] is 0 are removed instead (ok NULL: every file goes). Links
 * of a mirror stay. 0, or -1 with the files that could not be moved named on stderr. */
int render_publish(const render_stage *s, char names[][RENDER_NAME], int n,
                   const unsigned char *ok);

/* Removes the stage and what is left in it. */
void render_stage_close(render_stage *s);

/* render_stage_open (a mirror of dir), render_run and render_publish of dir's NAME.gp scripts:
 * the files gnuplot writes land in dir as they would without a stage. Returns the number of
 * failed figures (n when the stage cannot be made). */
int render_all(const char *dir, char names[][RENDER_NAME], int n, int jobs);

/* Makes a PDF reproducible bit for bit: cairo 1.16 (Debian 12) writes the wall-clock time as
 * /CreationDate and ignores SOURCE_DATE_EPOCH, so the date is overwritten (same length: the
 * xref offsets stay valid) with SOURCE_DATE_EPOCH, or 1970-01-01 when unset, and the file is
 * replaced whole (fileio.h's repro_write_file). PNG and SVG from gnuplot's cairo and svg
 * terminals carry no date. Returns 0 or -1. */
int render_fix_pdf_date(const char *path);

/* repro-plot render DIR NAME...: render_all of DIR's NAME.gp scripts, for figures drawn by a
 * study's own gnuplot scripts (studies/h2o-diag/plot_diag.sh), so their outputs are checked
 * and their PDFs dated as draw's. argv[0] is "render". Exit 0, 1 when a figure failed or
 * gnuplot is missing, 2 usage (a NAME with '/' or without its NAME.gp). */
int render_main(int argc, char **argv);

/* 1 when a gnuplot binary is on PATH. */
int render_have_gnuplot(void);

#endif
