#include "jobscript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

void jobscript_ranges(sbuf *out, const int *tasks, int n) {
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && tasks[j + 1] == tasks[j] + 1) j++;
    if (i > 0) sb_addc(out, ',');
    if (j > i)
      sb_addf(out, "%d-%d", tasks[i], tasks[j]);
    else
      sb_addf(out, "%d", tasks[i]);
    i = j + 1;
  }
}

static void header(const jobscript_spec *s, sbuf *out) {
  long t = s->time_limit_s;
  /* Slurm counts whole minutes: round up so a limit is never shorter than asked */
  long minutes = (t + 59) / 60;
  sb_add(out, "#!/bin/bash\n");
  sb_add(out, "# Written by repro-run: one array task per cell, see runner/README.md.\n"
              "# Submit from the run folder (repro-run passes --chdir).\n");
  sb_addf(out, "#SBATCH --job-name=%s\n", s->jobname);
  sb_add(out, "#SBATCH --array=");
  jobscript_ranges(out, s->tasks, s->ncells);
  if (s->dev && s->dev->max_concurrent) sb_addf(out, "%%%ld", s->dev->max_concurrent);
  sb_addc(out, '\n');
  sb_addf(out, "#SBATCH --time=%ld:%02ld:00\n", minutes / 60, minutes % 60);
  if (s->dev && s->dev->partition) sb_addf(out, "#SBATCH --partition=%s\n", s->dev->partition);
  if (s->dev && s->dev->gres) sb_addf(out, "#SBATCH --gres=%s\n", s->dev->gres);
  if (s->dev && s->dev->account) sb_addf(out, "#SBATCH --account=%s\n", s->dev->account);
  if (s->dev && s->dev->qos) sb_addf(out, "#SBATCH --qos=%s\n", s->dev->qos);
  if (s->dev && s->dev->mem) sb_addf(out, "#SBATCH --mem=%s\n", s->dev->mem);
  if (s->dev && s->dev->cpus_per_task)
    sb_addf(out, "#SBATCH --cpus-per-task=%ld\n", s->dev->cpus_per_task);
  sb_add(out, "#SBATCH --ntasks=1\n#SBATCH --requeue\n");
  /* relative to the working directory: repro-run submits with --chdir=<run folder> */
  sb_add(out, "#SBATCH --output=slurm/%A_%a.out\n#SBATCH --open-mode=append\n");
}

int jobscript_render(const jobscript_spec *s, const cellset *cs, const runtime_vars *rt, sbuf *out,
                     char **err) {
  header(s, out);
  sb_add(out, "set -u\nrun=");
  tpl_shell_quote(out, s->run_dir);
  sb_add(out, "\nrunner=");
  tpl_shell_quote(out, s->runner);
  sb_add(out, "\n# tells a resumed runner that this submission reached Slurm\n");
  sb_add(out, "printf '%s\\n' \"$SLURM_ARRAY_JOB_ID\" "
              ">\"$run/jobs/$SLURM_JOB_NAME.jobid.$SLURM_ARRAY_TASK_ID\"\n");
  sb_add(out, "case \"$SLURM_ARRAY_TASK_ID\" in\n");
  sbuf cmd = {0};
  for (int i = 0; i < s->ncells; i++) {
    const cell *c = &cs->cells[s->cells[i]];
    cell_env env = {cs, c, s->dev, rt};
    sb_clear(&cmd);
    if (cell_command(&env, &cmd, err) != 0) {
      sb_free(&cmd);
      return -1;
    }
    sb_addf(out, "  %d) log=%s\n     cmd=", s->tasks[i], c->log);
    tpl_shell_quote(out, cmd.s);
    sb_add(out, " ;;\n");
  }
  sb_free(&cmd);
  sb_add(out, "  *) echo \"repro-run: no cell for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 "
              ";;\nesac\n");
  if (s->dev && s->dev->setup.n) {
    sb_add(out, "# setup lines of the cluster file\n");
    for (int i = 0; i < s->dev->setup.n; i++) sb_addf(out, "%s\n", s->dev->setup.v[i]);
  }
  if (s->dev && s->dev->cpus_per_task)
    sb_add(out, "export SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n");
  sb_add(
      out,
      "attempt=\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}.r${SLURM_RESTART_COUNT:-0}\"\n"
      "tmp=\"$run/tmp/$log.$attempt\"\n"
      "export REPRO_CELL=\"$log\"\n"
      "status=\"$run/err/$log.$attempt.exit\"\n"
      "# the step writes the program's exit code itself: no file means the step was killed\n"
      "# (time limit, node failure, cancel) and Slurm's final state, read by the runner, says how\n"
      "srun --ntasks=1 /bin/bash -c '/bin/bash -c \"$1\"; echo $? >\"$2\"' cell \"$cmd\" "
      "\"$status\" \\\n"
      "  >\"$tmp\" 2>\"$run/err/$log.$attempt\"\n"
      "if [ ! -s \"$status\" ]; then\n"
      "  echo \"repro-run: the job step of $log ended without an exit code\" >&2\n"
      "  exit 1\n"
      "fi\n"
      "exec \"$runner\" finish \"$run\" \"$log\" \"$tmp\" \"$(cat \"$status\")\"\n");
  return 0;
}
