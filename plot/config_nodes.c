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

int pcy_color(ycx *y, const ynode *n, unsigned *dst) {
  const char *s = pcy_scalar(n);
  char *end;
  if (!s || s[0] != '#' || strlen(s) != 7) return yerr(y, n, "expected color: \"#rrggbb\"");
  unsigned long v = strtoul(s + 1, &end, 16);
  if (*end) return yerr(y, n, "expected color: \"#rrggbb\"");
  *dst = (unsigned)v;
  return 0;
}

int pcy_want(ycx *y, const ynode *n, ytype t, const char *what) {
  if (n && n->type == t) return 0;
  return yerr(y, n, "expected %s: %s, found %s", what, y_type_name(t),
              n ? y_type_name(n->type) : "nothing");
}

static int load_item(ycx *y, const ynode *n, pc_item *it, int is_system) {
  if (pcy_want(y, n, Y_MAP, "an item {name: ..., label: ...}")) return -1;
  memset(it, 0, sizeof *it);
  it->expected = 1;
  const ynode *k, *v;
  FOR_PAIRS(n, k, v) {
    const char *key = k->str;
    int rc;
    if (!strcmp(key, "name"))
      rc = pcy_name(y, v, it->name, "name");
    else if (!strcmp(key, "label"))
      rc = pcy_text(y, v, it->label, sizeof it->label, "label");
    else if (!strcmp(key, "aliases")) {
      if (pcy_want(y, v, Y_SEQ, "aliases")) return -1;
      const ynode *a;
      rc = 0;
      FOR_ITEMS(v, a) {
        if (it->naliases == PC_MAX_ALIASES) return yerr(y, a, "at most %d aliases", PC_MAX_ALIASES);
        if (pcy_name(y, a, it->aliases[it->naliases++], "alias")) return -1;
      }
    } else if (is_system && !strcmp(key, "ours"))
      rc = pcy_bool(y, v, &it->ours, "ours");
    else if (is_system && !strcmp(key, "expected"))
      rc = pcy_bool(y, v, &it->expected, "expected");
    else if (is_system && !strcmp(key, "color"))
      return yerr(y, k,
                  "color: a system's colour is its row in plot/systems.yaml, the same in "
                  "every figure; remove this key (or change the system's row there)");
    else
      return yerr(y, k, "unknown key \"%s\"; expected name, label, aliases%s", key,
                  is_system ? ", ours, expected" : "");
    if (rc) return -1;
  }
  if (!it->name[0]) return yerr(y, n, "item without a name");
  if (!it->label[0]) snprintf(it->label, sizeof it->label, "%s", it->name);
  return 0;
}

int pcy_list(ycx *y, const ynode *n, pc_item *items, int *count, int is_system, const char *what) {
  if (pcy_want(y, n, Y_SEQ, what)) return -1;
  const ynode *v;
  FOR_ITEMS(n, v) {
    if (*count == PC_MAX_ITEMS) return yerr(y, v, "at most %d %s", PC_MAX_ITEMS, what);
    if (load_item(y, v, &items[*count], is_system)) return -1;
    const pc_item *it = &items[*count];
    int dup = pc_find(items, *count, it->name) >= 0;
    for (int a = 0; a < it->naliases; a++) dup |= pc_find(items, *count, it->aliases[a]) >= 0;
    if (dup) return yerr(y, v, "%s \"%s\" is listed twice (as a name or alias)", what, it->name);
    (*count)++;
  }
  return 0;
}

const char *const pcy_metric_names[MET_COUNT] = {"ms", "tflops", "mib", "speedup"};
