/* yamlnode: the kit's one YAML loader (runner and plotter), a tree with positions.
 *
 * libyaml parses; we keep a small tree of scalars, sequences and mappings, each node with its
 * 1-based line and column, so every schema error can say file:line:column and what was
 * expected. Aliases and anchors are refused (no expansion bombs, no surprises); a document
 * must be a single mapping. Duplicate mapping keys are errors, found in time linear in a
 * mapping's keys (a hash set per mapping while it is read) and reported at the second key with
 * the first one's line. Text that is no UTF-8, or holds a control character, is an error at the
 * bad byte's line:column. Out of memory exits (strbuf.h). */
#ifndef REPRO_YAMLNODE_H
#define REPRO_YAMLNODE_H

#include <stddef.h>

typedef enum { Y_SCALAR, Y_SEQ, Y_MAP } ytype;

typedef struct ynode ynode;
struct ynode {
  ytype type;
  int line, col;
  int quoted;    /* scalar written with quotes: never a null/bool/number */
  char *str;     /* Y_SCALAR: the text */
  int n;         /* Y_SEQ: items; Y_MAP: pairs */
  ynode **items; /* Y_SEQ: n items; Y_MAP: 2n nodes, key then value */
};

typedef struct {
  const char *file; /* for messages; not owned */
  char *msg;        /* the first error, "file:line:col: message", or NULL */
} ydoc_err;

/* Parse a whole buffer; returns the root mapping or NULL with err->msg set. */
ynode *y_parse(const char *file, const char *data, size_t len, ydoc_err *err);
/* Read (at most REPRO_MAX_YAML_BYTES) and parse a file; NULL with err->msg set, e.g.
 * "file: cannot read: No such file or directory". */
ynode *y_load_file(const char *file, ydoc_err *err);
void y_free(ynode *n);

/* Record an error at a node (only the first error is kept). Returns -1. */
int y_error(ydoc_err *err, const ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *y_type_name(ytype t);
/* Value of key in a mapping, or NULL. */
ynode *y_get(const ynode *map, const char *key);

/* Checked accessors: -1 (with an error naming the node) when the type is wrong. */
int y_expect(ydoc_err *err, const ynode *n, ytype t, const char *what);
/* Every key of map must be one of the NULL-terminated list `allowed`. */
int y_check_keys(ydoc_err *err, const ynode *map, const char *const *allowed, const char *where);
int y_int(ydoc_err *err, const ynode *n, long min, long max, long *out);
/* A scalar matching the name pattern of names.h (what may appear in file names and shell
 * scripts unquoted). */
int y_name(ydoc_err *err, const ynode *n, const char *what, const char **out);

#endif
