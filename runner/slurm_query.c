/* slurm_query: Slurm's commands run and their answers read: their output captured, which jobs
 * are a run's (their comment), the job states of a poll's arrays parsed (one squeue, then sacct,
 * or scontrol per array where Slurm keeps no accounting). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurm_impl.h"

/* Runs argv and collects its stdout; stderr is shown unless quiet. tag: the SBATCH_TAG
 * value for an sbatch, or NULL. Returns the exit status (0..255), or -1 when it could not
 * run or was killed. */
int slurm_capture_tagged(char *const argv[], sbuf *out, int quiet, const char *tag) {
  int fds[2];
  if (!out->s) sb_add(out, "");
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (quiet) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);
    }
    if (tag) setenv(SBATCH_TAG, tag, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "repro-run: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  if (tag) test_kill_point("sbatch-started");
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    sb_addn(out, buf, (size_t)n);
  }
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int slurm_capture(char *const argv[], sbuf *out, int quiet) {
  return slurm_capture_tagged(argv, out, quiet, NULL);
}

int slurm_available(void) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = xstrdup(path), *save = NULL;
  int found = 0;
  for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
    char *p = xasprintf("%s/sbatch", dir);
    found = access(p, X_OK) == 0;
    free(p);
  }
  free(copy);
  return found;
}

/* The comment every job of run r carries, "repro-run:<marker>" (caller frees), or NULL in a run
 * made before runs had markers. */
char *slurm_run_comment(const run *r) {
  return r->marker ? xasprintf("repro-run:%s", r->marker) : NULL;
}

/* Is a job whose comment squeue or sacct printed one of run r's? Only a run with a marker
 * claims jobs; sacct prints an empty comment when accounting does not keep comments
 * (AccountingStoreFlags without job_comment), and then the name, which holds the marker's
 * digits, stands (empty_ok). */
int slurm_job_is_ours(const run *r, const char *comment, int empty_ok) {
  char *want = slurm_run_comment(r);
  int ours = want && (strcmp(comment, want) == 0 || (empty_ok && !*comment));
  free(want);
  return ours;
}

/* The jobs named in names (comma-separated) whose comment is run r's, by squeue: the first
 * field of each (fmt: "%F" job ids, "%i" array tasks) into *ids. states: squeue's -t (NULL:
 * the live states); tasks: one line per array task (-r). In a run made before markers every job
 * of those names is taken: only slurm_live_tasks asks then. 0, or -1 when squeue cannot answer. */
int slurm_squeue_ours(const run *r, const char *names, const char *states, int tasks,
                      const char *fmt, strvec *ids) {
  char *format = xasprintf("%s|%%k", fmt);
  char *argv[12];
  int a = 0;
  argv[a++] = "squeue";
  argv[a++] = "-h";
  if (tasks) argv[a++] = "-r";
  if (states) {
    argv[a++] = "-t";
    argv[a++] = (char *)states;
  }
  argv[a++] = "-n";
  argv[a++] = (char *)names;
  argv[a++] = "-o";
  argv[a++] = format;
  argv[a] = NULL;
  sbuf out = {0};
  int rc = slurm_capture(argv, &out, 1);
  char *save = NULL;
  for (char *line = strtok_r(rc == 0 ? out.s : NULL, "\n", &save); rc == 0 && line;
       line = strtok_r(NULL, "\n", &save)) {
    char *bar = strchr(line, '|');
    if (!bar || bar == line) continue;
    *bar = '\0';
    /* a run made before markers: its names are all it has (only counted, never acted on) */
    if ((!r->marker || slurm_job_is_ours(r, bar + 1, 0)) && sv_find(ids, line) < 0)
      sv_push(ids, line);
  }
  sb_free(&out);
  free(format);
  return rc == 0 ? 0 : -1;
}

/* The job of submission s, one of run r's (its comment is r's), from sacct's accounting by
 * name (older jobs than squeue keeps): its id, or NULL when there is none or no accounting. */
char *slurm_sacct_ours(const run *r, const submission *s) {
  char *name = xasprintf("--name=%s", s->jobname), *jobid = NULL;
  char *acct[] = {"sacct",         "-n", "-X", "-P", name, "--starttime=now-90days", "-o",
                  "JobID,Comment", NULL};
  sbuf out = {0};
  char *save = NULL;
  if (slurm_capture(acct, &out, 1) == 0) {
    for (char *line = strtok_r(out.s, "\n", &save); line && !jobid;
         line = strtok_r(NULL, "\n", &save)) {
      size_t n = strspn(line, "0123456789");
      if (n && line[n] == '|' && slurm_job_is_ours(r, line + n + 1, 1)) jobid = xstrndup(line, n);
    }
  }
  sb_free(&out);
  free(name);
  return jobid;
}

/* Final and live job states, as squeue/sacct/scontrol print them. */
int slurm_state_final(const char *s) {
  static const char *const final[] = {"COMPLETED", "FAILED",    "TIMEOUT",   "OUT_OF_MEMORY",
                                      "NODE_FAIL", "CANCELLED", "PREEMPTED", "BOOT_FAIL",
                                      "DEADLINE",  NULL};
  for (const char *const *f = final; *f; f++)
    if (strncmp(s, *f, strlen(*f)) == 0) return 1;
  return 0;
}

int slurm_state_running(const char *s) {
  return strcmp(s, "RUNNING") == 0 || strcmp(s, "COMPLETING") == 0 || strcmp(s, "SIGNALING") == 0 ||
         strcmp(s, "STAGE_OUT") == 0;
}

int ts_slot(const taskstates *t, const char *jobid) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->subs[i]->jobid, jobid) == 0) return i;
  return -1;
}

static void ts_set(taskstates *t, int slot, int task, const char *state, const char *exitcode) {
  if (task < 0 || task >= t->ntasks[slot]) return;
  if (state) {
    free(t->state[slot][task]);
    t->state[slot][task] = xstrdup(state);
  }
  if (exitcode) {
    free(t->exitcode[slot][task]);
    t->exitcode[slot][task] = xstrdup(exitcode);
  }
}

void ts_add(taskstates *t, submission *s) {
  int maxtask = 0;
  for (int k = 0; k < s->ncells; k++) maxtask = s->tasks[k] > maxtask ? s->tasks[k] : maxtask;
  t->subs = xrealloc(t->subs, (size_t)(t->n + 1) * sizeof *t->subs);
  t->ntasks = xrealloc(t->ntasks, (size_t)(t->n + 1) * sizeof *t->ntasks);
  t->state = xrealloc(t->state, (size_t)(t->n + 1) * sizeof *t->state);
  t->exitcode = xrealloc(t->exitcode, (size_t)(t->n + 1) * sizeof *t->exitcode);
  t->subs[t->n] = s;
  t->ntasks[t->n] = maxtask + 1;
  t->state[t->n] = xcalloc((size_t)maxtask + 1, sizeof(char *));
  t->exitcode[t->n] = xcalloc((size_t)maxtask + 1, sizeof(char *));
  t->n++;
}

void ts_free(taskstates *t) {
  for (int i = 0; i < t->n; i++) {
    for (int k = 0; k < t->ntasks[i]; k++) {
      free(t->state[i][k]);
      free(t->exitcode[i][k]);
    }
    free(t->state[i]);
    free(t->exitcode[i]);
  }
  free(t->subs);
  free(t->ntasks);
  free(t->state);
  free(t->exitcode);
}

/* Parses "1234_5", "1234_[5-9,11]" (state applies to each) from squeue/sacct. */
static void ts_apply_id(taskstates *t, const char *id, const char *state, const char *exitcode) {
  const char *us = strchr(id, '_');
  if (!us) return;
  char *jobid = xstrndup(id, (size_t)(us - id));
  int slot = ts_slot(t, jobid);
  free(jobid);
  if (slot < 0) return;
  const char *p = us + 1;
  if (*p != '[') {
    ts_set(t, slot, atoi(p), state, exitcode);
    return;
  }
  for (p++; *p && *p != ']';) {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (end == p) break;
    p = end;
    if (*p == '-') b = strtol(p + 1, (char **)&p, 10);
    for (long k = a; k <= b && k - a < 1000000; k++) ts_set(t, slot, (int)k, state, exitcode);
    if (*p == '%') break;
    if (*p == ',') p++;
  }
}

static void join_jobids(const taskstates *t, sbuf *ids) {
  for (int i = 0; i < t->n; i++) sb_addf(ids, "%s%s", i ? "," : "", t->subs[i]->jobid);
}

void ts_query_squeue(taskstates *t) {
  sbuf ids = {0}, out = {0};
  join_jobids(t, &ids);
  char *argv[] = {"squeue", "-h", "-r", "-t", "all", "-j", ids.s, "-o", "%i|%T|%r", NULL};
  slurm_capture(argv, &out, 1); /* fails when no job is known any more: nothing to apply */
  char *save = NULL;
  for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *bar = strchr(line, '|');
    if (!bar) continue;
    *bar = '\0';
    char *state = bar + 1, *reason = strchr(state, '|');
    if (reason) *reason++ = '\0';
    /* a held task (e.g. "launch failed requeued held") waits for `scontrol release` */
    if (reason && strstr(reason, "held") && strcmp(state, "PENDING") == 0) state = "HELD";
    ts_apply_id(t, line, state, NULL);
  }
  sb_free(&ids);
  sb_free(&out);
}

/* Final states and exit codes: sacct when accounting exists, else scontrol per array job. */
void ts_query_final(taskstates *t, const int *need_slot) {
  sbuf ids = {0}, out = {0};
  join_jobids(t, &ids);
  char *argv[] = {"sacct", "-n", "-P", "-X", "-j", ids.s, "-o", "JobID,State,ExitCode", NULL};
  int found = 0;
  if (slurm_capture(argv, &out, 1) == 0) {
    char *save = NULL;
    for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      char *f[3] = {line, NULL, NULL};
      for (int k = 1; k < 3 && f[k - 1]; k++)
        if ((f[k] = strchr(f[k - 1], '|'))) *f[k]++ = '\0';
      if (!f[2]) continue;
      char *sp = strchr(f[1], ' '); /* "CANCELLED by 0" */
      if (sp) *sp = '\0';
      ts_apply_id(t, f[0], f[1], f[2]);
      found++;
    }
  }
  sb_free(&ids);
  if (found) {
    sb_free(&out);
    return;
  }
  for (int i = 0; i < t->n; i++) {
    if (!need_slot[i]) continue;
    sb_clear(&out);
    char *sc[] = {"scontrol", "show", "job", "-o", t->subs[i]->jobid, NULL};
    if (slurm_capture(sc, &out, 1) != 0) continue;
    char *save = NULL;
    for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      char *task = strstr(line, " ArrayTaskId="), *st = strstr(line, " JobState="),
           *ex = strstr(line, " ExitCode=");
      if (!task || !st) continue;
      char state[64] = "", code[32] = "";
      sscanf(st + 10, "%63[^ ]", state);
      if (ex) sscanf(ex + 10, "%31[^ ]", code);
      char id[96];
      snprintf(id, sizeof id, "%s_%.*s", t->subs[i]->jobid, (int)strcspn(task + 13, " "),
               task + 13);
      ts_apply_id(t, id, state, code[0] ? code : NULL);
    }
  }
  sb_free(&out);
}
