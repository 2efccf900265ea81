/* kvline: the one line format every log of this kit speaks (see README "Log contract").
 *
 *   <tag> key=value key="value with spaces" ...
 *
 * A tag is the first word (meta, config, check, result, ...). Values that are empty or hold a
 * space, tab, '"', '\\', '=' or '#' are double-quoted; inside quotes '"' and '\\' are escaped
 * with a backslash and a newline is written as \n, so one record is always one line.
 * Kernels, the runner and the PyTorch peers write it; the plot parser reads it. */
#ifndef KVLINE_H
#define KVLINE_H

#include <stddef.h>
#include <stdio.h>

#define KV_MAX_PAIRS 64

typedef struct {
  const char *key; /* NUL-terminated, points into kv_record.buf */
  const char *val; /* NUL-terminated, unescaped, points into kv_record.buf */
} kv_pair;

typedef struct {
  const char *tag; /* first word, points into buf */
  int npairs;
  kv_pair pairs[KV_MAX_PAIRS];
  char *buf; /* owned: a mutable copy of the line */
  size_t cap;
} kv_record;

/* Parse one line (without or with its trailing newline). Returns 0 on success, -1 when the
 * line is not a kv record (no tag, a word without '=', an unterminated quote, too many
 * pairs); *err then says why. The record's buffer is reused across calls; free with
 * kv_record_free. */
int kv_parse(kv_record *rec, const char *line, size_t len, const char **err);
void kv_record_free(kv_record *rec);

/* Value of key, or NULL when absent. */
const char *kv_get(const kv_record *rec, const char *key);

/* Write " key=value" (leading space included), quoting the value when needed. */
void kv_put(FILE *out, const char *key, const char *val);
void kv_putf(FILE *out, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 when a value must be quoted to survive a round trip. */
int kv_needs_quotes(const char *val);

#endif
