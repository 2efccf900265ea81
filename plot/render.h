/* render: runs gnuplot on the generated scripts, several at a time. */
#ifndef PLOT_RENDER_H
#define PLOT_RENDER_H

/* Runs `gnuplot <name>.gp` in dir for each name, at most jobs at once, and checks that
 * <name>.pdf/.png/.svg exist and are not empty. Returns the number of failed figures. */
int render_all(const char *dir, char names[][48], int n, int jobs);

/* 1 when a gnuplot binary is on PATH. */
int render_have_gnuplot(void);

#endif
