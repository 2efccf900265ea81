/* provenance: `repro-plot provenance`, where the shipped logs come from (see provenance.c). */
#ifndef PLOT_PROVENANCE_H
#define PLOT_PROVENANCE_H

/* argv[0] is "provenance". Returns the exit status: 0, 1 (no logs, or --one-commit failed),
 * 2 (usage). */
int pv_main(int argc, char **argv);

#endif
