/* config_nodes: the readers of the loader's YAML nodes that every part of the plot: section
 * shares (names, texts, numbers, booleans, colours, lists of items, metric names). */
#include "config_nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pcy_scalar(const ynode *n) { return n && n->type == Y_SCALAR ? n->str : NULL; }

int pcy_name(ycx *y, const ynode *n, char *dst, const char *what) {
  const char *s = pcy_scalar(n);
  if (!s || !pt_valid_name(s))
    return yerr(y, n, "expected %s: a name of [A-Za-z0-9._-]+ shorter than %d characters", what,
                PT_NAME);
  strcpy(dst, s);
  return 0;
}

int pcy_text(ycx *y, const ynode *n, char *dst, size_t cap, const char *what) {
  const char *s = pcy_scalar(n);
  if (!s || strlen(s) >= cap)
    return yerr(y, n, "expected %s: a string shorter than %zu characters", what, cap);
  /* labels reach gnuplot scripts inside double quotes: keep them printable and quote-free */
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\'' || *p == '\\' || *p == '`')
      return yerr(
          y, n,
          "expected %s without quotes, apostrophes, backslashes, backticks or control characters",
          what);
  strcpy(dst, s);
  return 0;
}

int pcy_number(ycx *y, const ynode *n, double *dst, const char *what) {
  const char *s = pcy_scalar(n);
  char *end;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (!s || !*s || *end || errno || v < 0) return yerr(y, n, "expected %s: a number >= 0", what);
  *dst = v;
  return 0;
}

int pcy_int(ycx *y, const ynode *n, int *dst, const char *what) {
  double v = 0;
  if (pcy_number(y, n, &v, what)) return -1;
  if (v != (int)v || v > 1 << 24) return yerr(y, n, "expected %s: a whole number", what);
  *dst = (int)v;
  return 0;
}

int pcy_bool(ycx *y, const ynode *n, int *dst, const char *what) {
  const char *s = pcy_scalar(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) {
    *dst = 1;
    return 0;
  }
  if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) {
    *dst = 0;
    return 0;
  }
  return yerr(y, n, "expected %s: true or false", what);
}

int pcy_want(ycx *y, const ynode *n, ytype t, const char *what) {
  if (n && n->type == t) return 0;
  return yerr(y, n, "expected %s: %s, found %s", what, y_type_name(t),
              n ? y_type_name(n->type) : "nothing");
}

const char *const pcy_metric_names[MET_COUNT] = {"ms", "tflops", "mib", "speedup"};
