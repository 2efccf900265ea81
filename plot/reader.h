/* reader: where a log becomes a number.
 *
 * Two formats, detected from the content: our log contract (kvline records, "# repro-log 1"
 * header; the LAST result line wins) and the FlashTensor-AE artifact's logs (free text
 * scanned with the pattern table in patterns.c). The cell keys come from the file name,
 * matched against the figure's log name template ("{experiment}.{device}.{workload}.{system}.log"),
 * then from the log's config line, then from the figure's defaults (experiment, workload, and
 * any other key the defaults name, e.g. seqlen).
 *
 * Nothing here aborts: an empty, binary, truncated or unknown file becomes an issue (file,
 * line, what was expected) and is skipped; the caller decides whether issues are fatal. A log
 * that cannot be trusted is an ERR row with its reason: a check line that did not pass under a
 * result that says ok, a time that is no finite decimal number, a key twice on one line, two
 * logs of one cell. Whether one log of our format is good, ERR or skipped, and why, is
 * common/logverdict.c's rule (the runner's too); this adds the values and where each line is odd.
 * Issues hold no control characters (written as \xNN), so they print safely. */
#ifndef PLOT_READER_H
#define PLOT_READER_H

#include <stddef.h>

#include "issues.h"
#include "table.h"

typedef enum { AXIS_EXPERIMENT, AXIS_DEVICE, AXIS_WORKLOAD, AXIS_SYSTEM } rd_axis;

#define RD_MAX_TEMPLATES 16

typedef struct {
  const char *figure;   /* stored in every row */
  const char *log_name; /* file name template; placeholders {experiment} {device}
                             {workload} {system}, and any other {key} (a case key of the
                             experiment, e.g. {m} or {seqlen}: kept in the row's keys) */
  /* Several templates (experiments whose logs are named differently, each holding
   * {experiment}): a file is read with the first one that matches it and names its own
   * experiment. nlog_names == 0: log_name alone. */
  const char *log_names[RD_MAX_TEMPLATES], *log_experiments[RD_MAX_TEMPLATES];
  int nlog_names;
  const char *default_experiment, *default_workload;
  /* Cell keys every row has (the plot's defaults besides experiment and workload, e.g.
   * seqlen: 4096): a log whose name lacks one takes it from its config line, else this value.
   * A grid figure prefers, of two logs of one cell, the one that has these values. */
  const pt_kv *default_keys;
  int ndefault_keys;
  /* Maps an alias to its canonical name (dynamo -> inductor, keyformer -> kf); may be NULL.
   * Returns the name itself when it is no alias. */
  const char *(*canon)(void *ctx, rd_axis axis, const char *name);
  void *canon_ctx;
  /* Of several logs of one cell: 0, the cell is ERR naming them all; 1 (--latest), the newest
   * by its meta date= (else its file's modification time) is read, the others are listed as
   * not drawn, naming it. */
  int latest;
} rd_opts;

/* Compiles the pattern table; call once. Returns 0, or -1 with a message on stderr. */
int rd_init(void);
void rd_cleanup(void);

/* Parses one log held in memory into row (numbers, status, and for our format experiment,
 * workload and system from its config line; the default keys need rd_read_path). Returns 0 when the row is usable, -1 when the file must be
 * skipped (an ISSUE_SKIPPED was added). Never reads past buf+len; buf need not be
 * NUL-terminated. */
int rd_parse_buffer(const char *buf, size_t len, const char *path, pt_row *row, rd_issues *is);

/* Reads one file or every regular file under a directory (recursively, sorted by name;
 * dot files ignored) and appends one row per cell (o->latest says which of several logs of one
 * cell). Returns the number of rows added, or -1 when dir cannot be opened at all. Entries are
 * lstat'ed first: a FIFO, socket or device is listed and never opened, a dangling symlink is
 * listed, a symlink whose real path lies outside the directory's is listed and not followed,
 * and no directory or file is read twice (their (st_dev, st_ino) are remembered: directory
 * links to . loop no more). */
int rd_read_path(const rd_opts *o, const char *path, pt_table *t, rd_issues *is);

/* What every row gets once its own keys are read (a log's, or a table's: table_input.c): the
 * figure's defaults where it lacks them (experiment, workload, the default keys), then the
 * canonical names (o->canon). Returns 0, or -1 when the row cannot tell its cell: it needs a
 * device, a system, and a workload or case keys. */
int rd_complete_row(const rd_opts *o, pt_row *row);

/* Called by rd_walk_files with each file's path and its content (len bytes, NUL-terminated;
 * owned by the walk). */
typedef void (*rd_file_fn)(void *ctx, const char *path, const char *buf, size_t len);

/* Walks the directory path as rd_read_path does (sorted, lstat first, links out of it not
 * followed, each directory and file once, unreadable entries as issues) and calls fn with
 * every regular file whose name ends in suffix. Returns the files handed over, or -1 when
 * path is no directory that can be read. */
int rd_walk_files(const char *path, const char *suffix, rd_file_fn fn, void *ctx, rd_issues *is);

/* Matches a file's base name against a template; fills the keys it names (device lowered;
 * placeholders other than experiment, device, workload and system go to row->keys as case keys,
 * in the template's order). Returns 0 on a match, -1 otherwise. Exposed for tests. */
int rd_match_name(const char *tmpl, const char *base, pt_row *row);

#endif
