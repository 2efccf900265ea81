/* cellog: where a finished attempt becomes a cell's log.
 *
 * A cell's program writes to run/tmp/<log>.<attempt>; when the attempt ends (the program
 * exited, or Slurm/the local executor killed it) the file is completed and renamed to
 * run/logs/<log> in one step, so a log in logs/ is always whole. A log it replaces is moved
 * to run/attempts/ first: nothing is ever deleted. logs/, attempts/ and tmp/ must be real
 * folders (a link is refused, naming it), and logs are read and appended to without
 * following links. When the program could not say how it
 * ended (no result line, killed, crashed), the runner appends its own line:
 *   result status=timeout|error|oom source=runner state=TIMEOUT exit=0:15 reason="..." */
#ifndef RUNNER_CELLOG_H
#define RUNNER_CELLOG_H

/* Status of the last result line of a log ("ok", "timeout", ...) copied into buf, or "" when
 * the file has no result line; -1 when it cannot be read. */
int cellog_status(const char *path, char *buf, int size);

/* The last result line of a log: its status, the runner's state word (TIMEOUT, CANCELLED,
 * NODE_FAIL, ...; "" when the program wrote the line) and its reason ("" when none). */
typedef struct {
  char status[64], state[32], reason[256];
} cellog_result;
/* 0 (fields "" when the log has no result line), -1 when it cannot be read. */
int cellog_read_result(const char *path, cellog_result *out);

/* ok, unsupported and oom are final answers; anything else is rerun by --resume. */
int cellog_status_good(const char *status);

/* Completes one attempt of a cell.
 *   tmp:   the attempt's output, or NULL to take the newest run/tmp/<log>.* (none: empty log)
 *   rc:    the program's exit code (>= 0), or -1 when it did not exit by itself
 *   state: a Slurm job state (COMPLETED, FAILED, TIMEOUT, ...) or NULL for "from rc"
 *   exitcode: Slurm-style "code:signal" text, or NULL to derive it from rc
 *   reason: extra text for the runner's line, or NULL
 * Returns 0, or -1 with a message on stderr. */
int cellog_finish(const char *run_dir, const char *log, const char *tmp, int rc, const char *state,
                  const char *exitcode, const char *reason);

/* Moves run/logs/<log>, when it exists, to run/attempts/<log>.<n> (first free n). */
int cellog_retire(const char *run_dir, const char *log);

/* Maps a Slurm job state to the log's status word. */
const char *cellog_status_for_state(const char *state);

#endif
