/* table: the tidy table every reader fills and every emitter reads.
 *
 * One row per log file (one cell): its keys (figure, experiment, device, workload, system,
 * and its cell keys: the case keys its log name holds, e.g. m n k seqlen, and the keys the
 * plot's defaults name, e.g. seqlen), its numbers (NAN where the log has none), its status,
 * the GPU that ran it (meta gpu= cc=) and the file it came from. Readers append rows; the
 * figure code looks cells up by key; json/csv export writes it. */
#ifndef PLOT_TABLE_H
#define PLOT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define PT_NAME    48 /* figure/experiment/device/workload/system names (validated, short) */
#define PT_PATH    512
#define PT_REASON  160
#define PT_KEY     32 /* a case key's name: [a-z_][a-z0-9_]* (the runner's placeholders) */
#define PT_MAXKEYS 12 /* case keys per log name */
#define PT_GPU     96 /* meta gpu= */
#define PT_CC      16 /* meta cc= */

typedef enum {
  ST_OK = 0,
  ST_OOM,
  ST_UNSUPPORTED,
  ST_ERROR,
  ST_TIMEOUT,
  ST_MISSING, /* no log at all for a cell the figure wants; never stored in a table */
} pt_status;

/* One cell key of a row and its value (a name, as the runner's axis and case values are).
 * in_name: the log's file name holds it (a case key; problem_size lists it), or 0: the log's
 * config line or the plot's defaults gave it (seqlen for logs named without a length). */
typedef struct {
  char key[PT_KEY];
  char val[PT_NAME];
  int in_name;
} pt_kv;

typedef struct {
  char figure[PT_NAME];
  char experiment[PT_NAME];
  char device[PT_NAME];
  char workload[PT_NAME];
  char system[PT_NAME];
  pt_kv keys[PT_MAXKEYS]; /* the cell keys: the log name's other placeholders (case keys) in
                             its order (the problem size of the seed's JSON), then the others */
  int nkeys;
  double avg_ms, min_ms, max_ms, gflops_s, peak_mib; /* NAN when absent */
  double compile_s; /* result compile_s= (peers: the first call), NAN when absent */
  double scale;     /* config scale= (the softmax scale; NSA cells), NAN when absent; no cell key */
  char gpu[PT_GPU]; /* meta gpu= ("" when the log has none, "none" for CPU runs) */
  char cc[PT_CC];   /* meta cc= when it is a compute capability N.N, else "" */
  pt_status status;
  char format[8]; /* "ours" or "ae" (logs), "seed" (a row of the tilebench seed's JSON) */
  char source[PT_PATH];
  /* 1: read from a table (.csv, .json), which is the whole input: source names the log the
   * row came from and is never reopened (a CPU run is known by gpu "none") */
  int from_table;
  char reason[PT_REASON];
} pt_row;

typedef struct {
  pt_row *rows;
  size_t n, cap;
} pt_table;

void pt_row_init(pt_row *row);
/* Appends a copy; returns 0, or -1 when out of memory. */
int pt_append(pt_table *t, const pt_row *row);
void pt_free(pt_table *t);

const char *pt_status_name(pt_status s);            /* ok oom unsupported error timeout missing */
int pt_status_parse(const char *s, pt_status *out); /* 0 or -1 for an unknown word */

/* Same cell: experiment, device, workload, system and cell keys equal (figure and GPU
 * ignored; keys in any order, wherever they came from). */
int pt_same_cell(const pt_row *a, const pt_row *b);
/* Same cell on the same GPU: pt_same_cell, and the GPU models equal or one of them unknown
 * (the artifact's logs name none). merge keys on this: two GPUs' numbers are never one row. */
int pt_same_cell_gpu(const pt_row *a, const pt_row *b);
/* Total order on the cell keys (numbers as numbers; the length column first, then the keys in
 * a's order), then the GPU, for sorted output. */
int pt_cmp_cell(const void *a, const void *b);

/* Order of two values: numerically when both are numbers, else by bytes. */
int pt_cmp_value(const char *a, const char *b);

/* The value of a cell key: experiment, device, workload, system, or one of the row's keys.
 * Returns NULL when the row has none. */
const char *pt_key_value(const pt_row *r, const char *key);
/* Sets (adds or replaces) cell key key; in_name as pt_kv's. Returns 0, or -1 when the row has
 * PT_MAXKEYS keys or key/val are no valid names. */
int pt_set_key(pt_row *r, const char *key, const char *val, int in_name);
/* The number of the row's keys its log name holds (its case keys). */
int pt_case_keys(const pt_row *r);

/* The table's length column: csv and json `seqlen`, compare's `...@4096`. The artifact's
 * tables had it, so ours keep it; it shows the row's PT_LENGTH_KEY key, "0" when the row has
 * none, and is filled back into that key when a table is read. The key itself is an ordinary
 * cell key (a sweep's columns are its values). */
#define PT_LENGTH_KEY "seqlen"
const char *pt_length(const pt_row *r);
/* 1 when s is a key name: [a-z_][a-z0-9_]*, shorter than PT_KEY. */
int pt_valid_key(const char *s);
/* "sm_90" from cc "9.0" into buf; "" when the row has no compute capability. */
const char *pt_arch(const pt_row *r, char *buf, size_t cap);
/* 1 when s is a compute capability N.N that fits pt_row.cc. */
int pt_valid_cc(const char *s);
/* A case key's name in the seed's problem_size (to_seed: seqlen -> seq_len, causal ->
 * is_causal), or back (to_seed 0); the other keys keep their names. */
const char *pt_seed_key(const char *key, int to_seed);
/* v as the shortest of %.15g..%.17g that reads back exactly (1.2997, not 1.2997000000000001). */
void pt_fmt_double(char *buf, size_t cap, double v);

/* The one rule on a row's numbers, for the log reader and the table readers (csv, json) alike:
 * a time (avg_ms) that is not a positive number, or none under status=ok, makes the row ERR
 * (pt_time_error: reason PT_TIME_REASON, no times or GFLOP/s); another number below 0 never
 * counts (NAN). note(arg, key, value) (may be NULL) is called for each: key "avg_ms" for the
 * time, else the number's key (compile_s for compilation_time); value NAN for a time that is
 * missing. Numbers that are no finite decimal numbers never reach a row: pt_parse_decimal
 * refuses them. */
#define PT_TIME_REASON "avg_ms must be a positive number"
typedef void (*pt_number_note)(void *arg, const char *key, double value);
void pt_check_numbers(pt_row *r, pt_number_note note, void *arg);
/* Marks r ERR for its time: status error, reason PT_TIME_REASON, avg/min/max ms and GFLOP/s
 * NAN. */
void pt_time_error(pt_row *r);
/* What pt_check_numbers' note says of key and value, into buf: "avg_ms must be a positive
 * number (got -1): the cell is ERR", "peak_mib=-3 is not a finite number >= 0; it does not
 * count". */
void pt_number_message(char *buf, size_t cap, const char *key, double value);

/* Export. Numbers NAN are written as empty (csv) or null (json). json rows also carry the
 * seed's fields (kernel = experiment, backend = system, arch, gpu_model, compute_capability,
 * problem_size = the case keys under the seed's names (pt_seed_key; numbers as numbers,
 * is_causal true/false) and scale, latency_ms = avg_ms, tflops = gflops_s / 1000,
 * compilation_time = compile_s); csv adds gpu_model, compute_capability, compilation_time and
 * problem_size ("m=1024 n=1024 k=1024", our key names, then scale=) at the end. The output is
 * always valid UTF-8 (invalid bytes in a source path or reason are written as U+FFFD) and its
 * texts hold no control characters: they are written as \xNN (pt_safe_copy; json escapes that
 * text's backslash), so every record is one line. csv quotes a field holding a comma or quote
 * as RFC 4180 says. csv text fields that a spreadsheet would run as a formula (beginning with
 * =, +, - or @, OWASP's list, after any apostrophes, so that the guard reads back
 * unambiguously; OWASP's tab and carriage return are written as \x09 and \x0d, so they never
 * begin a field) are written quoted with an apostrophe before them: "'=HYPERLINK(...)". Number
 * fields are numbers as pt_fmt_double writes them (a spreadsheet reads -1.5 as a number) and
 * never get one. */
void pt_write_csv(FILE *out, const pt_table *t);
void pt_write_json(FILE *out, const pt_table *t);

/* Where the table readers' warnings go (a number pt_check_numbers drops from a row):
 * warn(arg, path, line, message), or with warn NULL stderr, as "path:line: warning: message".
 * Rows read are marked from_table. */
typedef void (*pt_warn_fn)(void *arg, const char *path, int line, const char *msg);

/* Reads a csv written by pt_write_csv (merge, compare, draw --table): RFC 4180 records
 * (quoted fields may hold commas, doubled quotes and line breaks; CRLF or LF line ends), each
 * ending with a line end (a file that ends inside a record, or inside a quoted field, is a
 * table cut short and refused); numbers are decimal (pt_parse_decimal) or empty, then held to
 * pt_check_numbers (a warning naming path:line for each number it drops); a text field's
 * apostrophe before a formula-like text (pt_write_csv) is removed. Tables written before the
 * GPU and problem-size columns (15 fields) are read too. Returns 0, or -1 with a message
 * naming path:line and what was expected on stderr. */
int pt_read_csv(const char *path, pt_table *t, pt_warn_fn warn, void *arg);

/* table_json.c (jansson): reads a JSON list of row objects, the rows pt_write_json writes or
 * the tilebench seed's result files (kernel, backend, gpu_model, compute_capability,
 * problem_size, latency_ms, tflops, compilation_time: mapped onto our cell keys and numbers;
 * plot/README.md), each row held to pt_check_numbers (a warning "row N: ..." naming the line
 * the row starts on). Returns 0, or -1 with a message on stderr naming path:line (the line of
 * the syntax error, or the one the row starts on, "path:7: row 3: latency_ms: expected ..."). */
int pt_read_json(const char *path, pt_table *t, pt_warn_fn warn, void *arg);
/* pt_read_json for a .json file or one whose first non-space byte is '[' or '{', else
 * pt_read_csv. */
int pt_read_table(const char *path, pt_table *t, pt_warn_fn warn, void *arg);

/* Length of the well-formed UTF-8 sequence at p (at most avail bytes), or 0 when the bytes
 * there are not one (a stray continuation byte, an overlong form, a surrogate, a cut
 * character). */
size_t pt_utf8_len(const char *p, size_t avail);

/* Copies src into dst[0..cap) as valid UTF-8: invalid bytes become U+FFFD, and a text too
 * long is cut at a character boundary. dst is always NUL-terminated (cap > 0). */
void pt_utf8_copy(char *dst, size_t cap, const char *src);

/* pt_utf8_copy that also writes each control character (a byte below 0x20, or 0x7f) as the
 * four characters \xNN, so the text is safe to print on a terminal and one line long. A text
 * too long is cut before a character or an escape, never inside one. */
void pt_safe_copy(char *dst, size_t cap, const char *src);

/* The log verdict's decimal numbers (common/logverdict.h, lv_parse_decimal: its grammar has
 * that one home): 0 with *out set, PT_NUM_SYNTAX when the text is no such number, PT_NUM_RANGE
 * when it is one too large for a double (1e999); *out is left alone on an error. */
#define PT_NUM_SYNTAX (-1) /* LV_NUM_SYNTAX */
#define PT_NUM_RANGE  (-2) /* LV_NUM_RANGE */
int pt_parse_decimal(const char *s, size_t len, double *out);
/* What a pt_parse_decimal error says of a value ("is not a decimal number"). */
const char *pt_num_problem(int rc);

/* 1 when s is a safe name: [A-Za-z0-9._-]+, shorter than PT_NAME. */
int pt_valid_name(const char *s);

#endif
