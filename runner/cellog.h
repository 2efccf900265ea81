/* cellog: where a finished attempt becomes a cell's log.
 *
 * A cell's program writes to run/tmp/<log>.<attempt>; when the attempt ends (the program
 * exited, or Slurm/the local executor killed it) the file is completed and renamed to
 * run/logs/<log> in one step, so a log in logs/ is always whole. A log it replaces is moved
 * to run/attempts/ first: nothing is ever deleted. logs/, attempts/ and tmp/ must be real
 * folders (a link is refused, naming it), and logs are read and appended to without
 * following links. When the program could not say how it
 * ended (no result line, killed, crashed, a log cut short, a non-zero exit after
 * status=ok), the runner appends its own line, on a line of its own:
 *   result status=timeout|error|oom source=runner state=TIMEOUT exit=0:15 reason="..."
 * Whether a log is good is common/logverdict.c's rule, the plotter's too (plot/reader.c): whole
 * (its last record ends in a newline), not binary, no key twice on a line, its last usable
 * result line says ok, unsupported or oom, and under status=ok a positive finite avg_ms and no
 * check line that did not pass. */
#ifndef RUNNER_CELLOG_H
#define RUNNER_CELLOG_H

/* The status of a log whose last line is cut (a record without its newline: a write that did
 * not end, a full disk): whatever its result lines say, it is not good. */
#define CELLOG_CUT "cut"
/* The status of a log whose last result line says ok, unsupported or oom but that does not
 * stand (the plotter draws it ERR): a failed check under status=ok, status=ok without a
 * positive finite avg_ms, a key twice on a line, a malformed result line after the last usable
 * one. */
#define CELLOG_BAD "bad"

/* The status of a log (cellog_read_result's) copied into buf; -1 when it cannot be read. */
int cellog_status(const char *path, char *buf, int size);

/* A log as the runner reports it. Its last usable result line's status ("ok", "timeout", ...),
 * the runner's state word (TIMEOUT, CANCELLED, NODE_FAIL, ...; "" when the program wrote the
 * line) and its reason ("" when none) when that line stands; status CELLOG_CUT or CELLOG_BAD
 * with the verdict's reason in the plotter's words ("torn log: line N is cut (no newline)",
 * "check output=lse failed (line 4: ...)") when the log spoils it; status "" when the log has
 * no usable result line (reason "", or why a binary or foreign file is none). */
typedef struct {
  char status[64], state[32], reason[256];
} cellog_result;
/* 0, or -1 when the log cannot be read (missing, a link, a FIFO, larger than a log may be). */
int cellog_read_result(const char *path, cellog_result *out);

/* ok, unsupported and oom are final answers; anything else (error, timeout, CELLOG_CUT,
 * CELLOG_BAD, "") is rerun by --resume. */
int cellog_status_good(const char *status);

/* Completes one attempt of a cell: its log moves to run/logs/<log>, with the runner's line
 * appended when the program's own cannot stand (it did not exit by itself, wrote no usable
 * result line, its log is cut or binary, or it exited non-zero after status=ok). A log that is
 * not good for another reason (a failed check, a bad avg_ms, a key twice) at exit 0 keeps the
 * program's line: its verdict says why.
 *   tmp:   the attempt's output, or NULL to take the newest run/tmp/<log>.* (none: empty log)
 *   rc:    the program's exit code (>= 0), or -1 when it did not exit by itself
 *   state: a Slurm job state (COMPLETED, FAILED, TIMEOUT, ...) or NULL for "from rc"
 *   exitcode: Slurm-style "code:signal" text, or NULL to derive it from rc
 *   reason: extra text for the runner's line, or NULL
 * Returns 0, or -1 with a message on stderr. When the runner's line cannot be written (a full
 * disk) nothing of it stays in the file; the log still moves to logs/ when it reads as not good
 * (cut, no result line, an error), and stays in tmp/ when it would read good (so the cell has
 * no log and --resume runs it again). */
int cellog_finish(const char *run_dir, const char *log, const char *tmp, int rc, const char *state,
                  const char *exitcode, const char *reason);

/* Moves run/logs/<log>, when it exists, to run/attempts/<log>.<n> (first free n). */
int cellog_retire(const char *run_dir, const char *log);

/* Maps a Slurm job state to the log's status word. */
const char *cellog_status_for_state(const char *state);

#endif
