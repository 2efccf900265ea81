#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Out of memory is fatal: none of the kit's tools can do anything useful without it. */
static void oom(void) {
  fputs("out of memory\n", stderr);
  exit(70);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom();
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom();
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom();
  return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *xasprintf(const char *fmt, ...) {
  sbuf b = {0};
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) oom();
  if ((size_t)n < sizeof tmp) {
    va_end(ap2);
    return xstrdup(tmp);
  }
  b.s = xmalloc((size_t)n + 1);
  vsnprintf(b.s, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return b.s;
}

static void sb_reserve(sbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  b->s = xrealloc(b->s, cap);
  b->cap = cap;
}

void sb_addn(sbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void sb_add(sbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }
void sb_addc(sbuf *b, char c) { sb_addn(b, &c, 1); }

void sb_addf(sbuf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) oom();
  sb_reserve(b, (size_t)n);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void sb_clear(sbuf *b) {
  b->len = 0;
  if (b->s) b->s[0] = '\0';
}

void sb_free(sbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

char *sb_take(sbuf *b) {
  char *s = b->s ? b->s : xstrdup("");
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

void sv_push_own(strvec *sv, char *s) {
  if (sv->n == sv->cap) {
    sv->cap = sv->cap ? sv->cap * 2 : 8;
    sv->v = xrealloc(sv->v, (size_t)sv->cap * sizeof *sv->v);
  }
  sv->v[sv->n++] = s;
}

void sv_push(strvec *sv, const char *s) { sv_push_own(sv, xstrdup(s)); }

int sv_find(const strvec *sv, const char *s) {
  for (int i = 0; i < sv->n; i++)
    if (strcmp(sv->v[i], s) == 0) return i;
  return -1;
}

void sv_free(strvec *sv) {
  for (int i = 0; i < sv->n; i++) free(sv->v[i]);
  free(sv->v);
  sv->v = NULL;
  sv->n = sv->cap = 0;
}

void text_set(char *dst, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, cap, fmt, ap);
  va_end(ap);
}
