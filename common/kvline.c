#include "kvline.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int kv_needs_quotes(const char *val) {
  if (!*val) return 1;
  for (const char *p = val; *p; p++)
    if (is_space(*p) || *p == '"' || *p == '\\' || *p == '=' || *p == '#') return 1;
  return 0;
}

void kv_put(FILE *out, const char *key, const char *val) {
  fprintf(out, " %s=", key);
  if (!kv_needs_quotes(val)) {
    fputs(val, out);
    return;
  }
  fputc('"', out);
  for (const char *p = val; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', out);
    if (*p == '\n') {
      fputs("\\n", out);
      continue;
    }
    if (*p == '\r') {
      fputs("\\r", out);
      continue;
    }
    fputc(*p, out);
  }
  fputc('"', out);
}

void kv_putf(FILE *out, const char *key, const char *fmt, ...) {
  char val[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  kv_put(out, key, val);
}

void kv_record_free(kv_record *rec) {
  free(rec->buf);
  rec->buf = NULL;
  rec->cap = 0;
}

const char *kv_get(const kv_record *rec, const char *key) {
  for (int i = 0; i < rec->npairs; i++)
    if (strcmp(rec->pairs[i].key, key) == 0) return rec->pairs[i].val;
  return NULL;
}

/* Unescape a quoted value in place: p points just past the opening quote. Returns the
 * position after the closing quote, or NULL when the quote never closes. */
static char *unquote(char *p, char *end) {
  char *w = p;
  while (p < end && *p != '"') {
    if (*p == '\\' && p + 1 < end) {
      p++;
      *w++ = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p;
      p++;
      continue;
    }
    *w++ = *p++;
  }
  if (p >= end) return NULL;
  *w = '\0';
  return p + 1;
}

int kv_parse(kv_record *rec, const char *line, size_t len, const char **err) {
  while (len && is_space(line[len - 1])) len--;
  if (rec->cap < len + 1) {
    char *nb = realloc(rec->buf, len + 1);
    if (!nb) {
      *err = "out of memory";
      return -1;
    }
    rec->buf = nb;
    rec->cap = len + 1;
  }
  memcpy(rec->buf, line, len);
  rec->buf[len] = '\0';
  char *p = rec->buf, *end = rec->buf + len;
  rec->npairs = 0;
  while (p < end && is_space(*p)) p++;
  if (p == end) {
    *err = "empty line";
    return -1;
  }
  rec->tag = p;
  while (p < end && !is_space(*p)) {
    if (*p == '=' || *p == '"') {
      *err = "line starts with a key=value, expected a tag word";
      return -1;
    }
    p++;
  }
  if (p < end) *p++ = '\0';
  for (;;) {
    while (p < end && is_space(*p)) p++;
    if (p >= end) return 0;
    if (rec->npairs == KV_MAX_PAIRS) {
      *err = "too many key=value pairs";
      return -1;
    }
    char *key = p;
    while (p < end && *p != '=' && !is_space(*p)) p++;
    if (p >= end || *p != '=' || p == key) {
      *err = "expected key=value";
      return -1;
    }
    *p++ = '\0';
    char *val = p;
    if (p < end && *p == '"') {
      val = p + 1;
      p = unquote(p + 1, end);
      if (!p) {
        *err = "unterminated quoted value";
        return -1;
      }
      if (p < end && !is_space(*p)) {
        *err = "text after a closing quote";
        return -1;
      }
    } else {
      while (p < end && !is_space(*p)) p++;
      if (p < end) *p++ = '\0';
    }
    rec->pairs[rec->npairs].key = key;
    rec->pairs[rec->npairs].val = val;
    rec->npairs++;
  }
}
