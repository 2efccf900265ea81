/* jobscript: where cells become a Slurm array script.
 *
 * One script per submission: #SBATCH lines from the cluster file's device, then a `case` on
 * SLURM_ARRAY_TASK_ID that picks the cell's log name and command (values shell-quoted), the
 * device's setup lines, and one job step (`srun`) that runs the command with its output in
 * run/tmp/; `repro-run finish` then completes the log and renames it into run/logs/. */
#ifndef RUNNER_JOBSCRIPT_H
#define RUNNER_JOBSCRIPT_H

#include "expand.h"

typedef struct {
  const char *run_dir;
  const char *runner; /* absolute path of repro-run, called by each task to finish its log */
  const char *jobname;
  const device_def *dev; /* may be NULL: no partition/gres lines */
  long time_limit_s;
  int ncells;
  const int *cells; /* cell indices into cs */
  const int *tasks; /* array index of each */
} jobscript_spec;

/* "0-3,5,7-9": compact array index list (tasks must be ascending). */
void jobscript_ranges(sbuf *out, const int *tasks, int n);

/* Writes the script text into out; -1 with *err when a command cannot be rendered. */
int jobscript_render(const jobscript_spec *spec, const cellset *cs, const runtime_vars *rt,
                     sbuf *out, char **err);

#endif
