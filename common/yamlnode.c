#include "yamlnode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fileio.h"
#include "names.h"
#include "strbuf.h"

/* Deep documents are a fuzzing hazard (recursion); no real matrix nests this far. */
#define Y_MAX_DEPTH 64

int y_error(ydoc_err *err, const ynode *at, const char *fmt, ...) {
  if (err->msg) return -1;
  sbuf b = {0};
  if (at)
    sb_addf(&b, "%s:%d:%d: ", err->file, at->line, at->col);
  else
    sb_addf(&b, "%s: ", err->file);
  va_list ap;
  va_start(ap, fmt);
  char tmp[1024];
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  sb_add(&b, tmp);
  err->msg = sb_take(&b);
  return -1;
}

const char *y_type_name(ytype t) {
  return t == Y_SCALAR ? "a scalar" : t == Y_SEQ ? "a list" : "a mapping";
}

void y_free(ynode *n) {
  if (!n) return;
  int count = n->type == Y_MAP ? 2 * n->n : n->n;
  for (int i = 0; i < count; i++) y_free(n->items[i]);
  free(n->items);
  free(n->str);
  free(n);
}

static ynode *new_node(ytype t, yaml_mark_t mark) {
  ynode *n = xcalloc(1, sizeof *n);
  n->type = t;
  n->line = (int)mark.line + 1;
  n->col = (int)mark.column + 1;
  return n;
}

/* Appends child as the next slot of parent->items (a mapping stores key, value, key, ...). */
static void push_item(ynode *parent, int slot, ynode *child, int *cap) {
  if (slot == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    parent->items = xrealloc(parent->items, (size_t)*cap * sizeof *parent->items);
  }
  parent->items[slot] = child;
}

typedef struct {
  yaml_parser_t parser;
  ydoc_err *err;
  const char *data; /* the text parsed, for the position of a reader error */
  size_t len;
} yreader;

/* The 1-based line and column (in characters, as libyaml counts them) of byte offset off of
 * data: libyaml's reader errors (bytes that are no UTF-8, control characters) give the offset
 * of the bad byte, not a mark. */
static ynode position_of(const char *data, size_t len, size_t off) {
  ynode at = {.line = 1, .col = 1};
  if (off > len) off = len;
  for (size_t i = 0; i < off; i++) {
    unsigned char c = (unsigned char)data[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= len || data[i + 1] != '\n'))) {
      at.line++;
      at.col = 1;
    } else if ((c & 0xC0) != 0x80 && c != '\r') { /* not a continuation byte */
      at.col++;
    }
  }
  return at;
}

/* libyaml's reader error as "file:line:col: YAML syntax error: <what> (byte 0xNN): expected
 * UTF-8 text without control characters". */
static int reader_error(yreader *r) {
  const yaml_parser_t *p = &r->parser;
  ynode at = position_of(r->data, r->len, p->problem_offset);
  char value[32] = "";
  if (p->problem_value >= 0 && p->problem_offset < r->len)
    snprintf(value, sizeof value, " (byte 0x%02X)", (unsigned char)r->data[p->problem_offset]);
  return y_error(r->err, &at,
                 "YAML syntax error: %s%s: expected UTF-8 text without control characters",
                 p->problem ? p->problem : "unreadable text", value);
}

static int next_event(yreader *r, yaml_event_t *ev) {
  if (yaml_parser_parse(&r->parser, ev)) return 0;
  if (r->parser.error == YAML_READER_ERROR) return reader_error(r);
  ynode at = {.line = (int)r->parser.problem_mark.line + 1,
              .col = (int)r->parser.problem_mark.column + 1};
  return y_error(r->err, &at, "YAML syntax error: %s%s%s",
                 r->parser.problem ? r->parser.problem : "unknown problem",
                 r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
}

static ynode *read_node(yreader *r, yaml_event_t *ev, int depth);

/* Reads the next node; returns NULL at the collection's end event (*at_end = 1) or on error. */
static ynode *read_next(yreader *r, yaml_event_type_t end, int depth, int *at_end) {
  yaml_event_t ev;
  *at_end = 0;
  if (next_event(r, &ev) != 0) return NULL;
  if (ev.type == end) {
    yaml_event_delete(&ev);
    *at_end = 1;
    return NULL;
  }
  ynode *n = read_node(r, &ev, depth);
  yaml_event_delete(&ev);
  return n;
}

/* The keys of one mapping while it is read: an open-addressing hash set of its pairs, so that
 * a duplicate key is found in constant time per key (a mapping of n keys in O(n), not the
 * O(n^2) of comparing each key with every earlier one). */
typedef struct {
  int *slot;  /* pair index + 1; 0: empty */
  size_t cap; /* a power of 2, at least twice the pairs */
} keyset;

static size_t key_hash(const char *s) { /* FNV-1a */
  unsigned long long h = 14695981039346656037ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)(h ^ h >> 32);
}

/* The slot of key among map's pairs in ks: the one holding it, or the empty one it goes to. */
static size_t keyset_find(const keyset *ks, const ynode *map, const char *key) {
  size_t i = key_hash(key) & (ks->cap - 1);
  while (ks->slot[i] && strcmp(map->items[2 * (ks->slot[i] - 1)]->str, key) != 0)
    i = (i + 1) & (ks->cap - 1);
  return i;
}

/* Makes room for pair npairs (the next one), doubling and refilling the set when it is half
 * full. */
static void keyset_reserve(keyset *ks, const ynode *map, int npairs) {
  if ((size_t)npairs * 2 < ks->cap) return;
  free(ks->slot);
  ks->cap = ks->cap ? ks->cap * 2 : 16;
  ks->slot = xcalloc(ks->cap, sizeof *ks->slot);
  for (int p = 0; p < npairs; p++) ks->slot[keyset_find(ks, map, map->items[2 * p]->str)] = p + 1;
}

/* The earlier key of map equal to key (the map's pairs so far are in ks), or NULL. */
static const ynode *keyset_earlier(keyset *ks, const ynode *map, const ynode *key) {
  keyset_reserve(ks, map, map->n);
  int p = ks->slot[keyset_find(ks, map, key->str)];
  return p ? map->items[2 * (p - 1)] : NULL;
}

/* Adds map's last pair (its key read and checked with keyset_earlier) to ks. */
static void keyset_add_last(keyset *ks, const ynode *map) {
  ks->slot[keyset_find(ks, map, map->items[2 * (map->n - 1)]->str)] = map->n;
}

/* Reads the children of a sequence or mapping up to its end event. */
static ynode *read_collection(yreader *r, ynode *n, yaml_event_type_t end, int depth) {
  int cap = 0, at_end = 0;
  keyset keys = {0};
  for (;;) {
    ynode *child = read_next(r, end, depth + 1, &at_end);
    if (at_end) {
      free(keys.slot);
      return n;
    }
    if (!child) break;
    if (n->type == Y_SEQ) {
      push_item(n, n->n, child, &cap);
      n->n++;
      continue;
    }
    ynode *key = child;
    int bad = 0;
    if (key->type != Y_SCALAR) {
      y_error(r->err, key, "expected a plain scalar as mapping key, found %s",
              y_type_name(key->type));
      bad = 1;
    }
    const ynode *first = bad ? NULL : keyset_earlier(&keys, n, key);
    if (first) {
      y_error(r->err, key, "duplicate key '%s' (first at line %d)", key->str, first->line);
      bad = 1;
    }
    ynode *val = bad ? NULL : read_next(r, end, depth + 1, &at_end);
    if (!val) {
      if (at_end) y_error(r->err, key, "key '%s' without a value", key->str);
      y_free(key);
      break;
    }
    push_item(n, 2 * n->n, key, &cap);
    push_item(n, 2 * n->n + 1, val, &cap);
    n->n++;
    keyset_add_last(&keys, n);
  }
  free(keys.slot);
  y_free(n);
  return NULL;
}

static ynode *read_node(yreader *r, yaml_event_t *ev, int depth) {
  if (depth > Y_MAX_DEPTH) {
    ynode at = {.line = (int)ev->start_mark.line + 1, .col = (int)ev->start_mark.column + 1};
    y_error(r->err, &at, "nesting deeper than %d levels", Y_MAX_DEPTH);
    return NULL;
  }
  switch (ev->type) {
  case YAML_SCALAR_EVENT: {
    if (ev->data.scalar.anchor) goto anchor;
    ynode *n = new_node(Y_SCALAR, ev->start_mark);
    n->str = xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    if (strlen(n->str) != ev->data.scalar.length) {
      y_error(r->err, n, "NUL byte inside a scalar");
      y_free(n);
      return NULL;
    }
    n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return n;
  }
  case YAML_SEQUENCE_START_EVENT:
    if (ev->data.sequence_start.anchor) goto anchor;
    return read_collection(r, new_node(Y_SEQ, ev->start_mark), YAML_SEQUENCE_END_EVENT, depth);
  case YAML_MAPPING_START_EVENT:
    if (ev->data.mapping_start.anchor) goto anchor;
    return read_collection(r, new_node(Y_MAP, ev->start_mark), YAML_MAPPING_END_EVENT, depth);
  case YAML_ALIAS_EVENT: {
    ynode at = {.line = (int)ev->start_mark.line + 1, .col = (int)ev->start_mark.column + 1};
    y_error(r->err, &at, "aliases (*name) are not supported: write the value out");
    return NULL;
  }
  default: {
    ynode at = {.line = (int)ev->start_mark.line + 1, .col = (int)ev->start_mark.column + 1};
    y_error(r->err, &at, "unexpected YAML event");
    return NULL;
  }
  }
anchor:;
  ynode at = {.line = (int)ev->start_mark.line + 1, .col = (int)ev->start_mark.column + 1};
  y_error(r->err, &at, "anchors (&name) are not supported: write the value out");
  return NULL;
}

ynode *y_parse(const char *file, const char *data, size_t len, ydoc_err *err) {
  yreader r = {.err = err, .data = data, .len = len};
  err->file = file;
  if (!yaml_parser_initialize(&r.parser)) {
    y_error(err, NULL, "cannot initialise the YAML parser");
    return NULL;
  }
  yaml_parser_set_input_string(&r.parser, (const unsigned char *)data, len);
  ynode *root = NULL;
  yaml_event_t ev;
  /* stream start, document start, root node, document end, stream end */
  if (next_event(&r, &ev) != 0) goto done;
  yaml_event_delete(&ev);
  if (next_event(&r, &ev) != 0) goto done;
  if (ev.type == YAML_STREAM_END_EVENT) {
    yaml_event_delete(&ev);
    y_error(err, NULL, "empty file: expected a mapping");
    goto done;
  }
  yaml_event_delete(&ev);
  if (next_event(&r, &ev) != 0) goto done;
  root = read_node(&r, &ev, 0);
  yaml_event_delete(&ev);
  if (!root) goto done;
  if (root->type != Y_MAP) {
    y_error(err, root, "expected a mapping at the top of the file, found %s",
            y_type_name(root->type));
    goto fail;
  }
  if (next_event(&r, &ev) != 0) goto fail; /* document end */
  yaml_event_delete(&ev);
  if (next_event(&r, &ev) != 0) goto fail;
  int more = ev.type != YAML_STREAM_END_EVENT;
  ynode at = {.line = (int)ev.start_mark.line + 1, .col = (int)ev.start_mark.column + 1};
  yaml_event_delete(&ev);
  if (more) {
    y_error(err, &at, "a second YAML document: expected one document per file");
    goto fail;
  }
  goto done;
fail:
  y_free(root);
  root = NULL;
done:
  yaml_parser_delete(&r.parser);
  return root;
}

ynode *y_load_file(const char *file, ydoc_err *err) {
  char why[128];
  size_t len;
  err->file = file;
  char *data = repro_slurp(file, REPRO_MAX_YAML_BYTES, &len, why, sizeof why);
  if (!data) {
    y_error(err, NULL, "cannot read: %s", why);
    return NULL;
  }
  ynode *root = y_parse(file, data, len, err);
  free(data);
  return root;
}

ynode *y_get(const ynode *map, const char *key) {
  if (!map || map->type != Y_MAP) return NULL;
  for (int i = 0; i < map->n; i++)
    if (strcmp(map->items[2 * i]->str, key) == 0) return map->items[2 * i + 1];
  return NULL;
}

int y_expect(ydoc_err *err, const ynode *n, ytype t, const char *what) {
  if (n->type == t) return 0;
  return y_error(err, n, "%s: expected %s, found %s", what, y_type_name(t), y_type_name(n->type));
}

int y_check_keys(ydoc_err *err, const ynode *map, const char *const *allowed, const char *where) {
  for (int i = 0; i < map->n; i++) {
    const ynode *key = map->items[2 * i];
    int ok = 0;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(key->str, *a) == 0) ok = 1;
    if (ok) continue;
    sbuf list = {0};
    for (const char *const *a = allowed; *a; a++)
      sb_addf(&list, "%s%s", a == allowed ? "" : ", ", *a);
    y_error(err, key, "unknown key '%s' in %s: expected one of %s", key->str, where, list.s);
    sb_free(&list);
    return -1;
  }
  return 0;
}

int y_int(ydoc_err *err, const ynode *n, long min, long max, long *out) {
  if (n->type != Y_SCALAR || n->quoted)
    return y_error(err, n, "expected an integer in [%ld, %ld]", min, max);
  char *end;
  errno = 0;
  long v = strtol(n->str, &end, 10);
  if (errno || end == n->str || *end || v < min || v > max)
    return y_error(err, n, "expected an integer in [%ld, %ld], found '%s'", min, max, n->str);
  *out = v;
  return 0;
}

int y_name(ydoc_err *err, const ynode *n, const char *what, const char **out) {
  if (n->type != Y_SCALAR)
    return y_error(err, n, "%s: expected a name, found %s", what, y_type_name(n->type));
  if (!repro_is_name(n->str))
    return y_error(
        err, n,
        "%s: '%.60s%s' is not a valid name: expected [A-Za-z0-9._-]+, not starting with '.'", what,
        n->str, strlen(n->str) > 60 ? "..." : "");
  *out = n->str;
  return 0;
}
