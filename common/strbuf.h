/* strbuf: checked allocation, a growable string and a growable array of strings, shared by
 * the runner and the YAML loader. Out of memory is fatal (exit 70 after a message); every
 * other error is returned by the caller's functions. */
#ifndef REPRO_STRBUF_H
#define REPRO_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* snprintf into a fixed buffer (a reason, a message) that cuts what does not fit, on purpose. */
void text_set(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Growable NUL-terminated string. */
typedef struct {
  char *s;
  size_t len, cap;
} sbuf;
void sb_addn(sbuf *b, const char *s, size_t n);
void sb_add(sbuf *b, const char *s);
void sb_addc(sbuf *b, char c);
void sb_addf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_clear(sbuf *b);
void sb_free(sbuf *b);
char *sb_take(sbuf *b); /* hands the string to the caller, leaves b empty */

/* Growable array of owned strings. */
typedef struct {
  char **v;
  int n, cap;
} strvec;
void sv_push(strvec *sv, const char *s);      /* copies s */
void sv_push_own(strvec *sv, char *s);        /* takes s */
int sv_find(const strvec *sv, const char *s); /* index or -1 */
void sv_free(strvec *sv);

#endif
