/* svg_impl: what the files of report_svg share (report_svg.c, svg_tree.c, svg_read.c,
 * svg_values.c, svg_shrink.c, svg_write.c): the tree of one figure and each step over it. */
#ifndef PLOT_SVG_IMPL_H
#define PLOT_SVG_IMPL_H

#include <stddef.h>
#include <stdio.h>

/* ---- svg_tree.c: an arena (the tree of one figure, freed at once) and the tree ---- */

typedef struct rs_chunk {
  struct rs_chunk *next;
  size_t used, cap;
  max_align_t data[];
} rs_chunk;

typedef struct {
  rs_chunk *head;
  int oom;
} rs_arena;

#define RS_MAX_ATTRS 24
#define RS_MAX_DEPTH 256

typedef struct {
  const char *name, *val; /* NUL-terminated; the value as it will be written, unprefixed */
} rs_attr;

typedef struct rs_node {
  const char *name; /* NULL: text */
  const char *text; /* a text node's bytes (XML text, written as they are) */
  rs_attr a[RS_MAX_ATTRS];
  int na;
  struct rs_node *first, *last, *next;
} rs_node;

/* n bytes (aligned), a copy of s[0..n) NUL-terminated, a node zeroed: NULL (and a->oom) when
 * out of memory. rs_arena_free frees them all. */
void *rs_alloc(rs_arena *a, size_t n);
char *rs_strn(rs_arena *a, const char *s, size_t n);
rs_node *rs_new_node(rs_arena *ar);
void rs_arena_free(rs_arena *a);
/* n as parent's last child. */
void rs_append(rs_node *parent, rs_node *n);
/* a is b (a may be NULL); c is XML white space; n's attribute name (NULL: none); n without it;
 * name in list (NULL ends it). */
int rs_is(const char *a, const char *b);
int rs_is_space(char c);
const char *rs_get(const rs_node *n, const char *name);
void rs_drop_attr(rs_node *n, const char *name);
int rs_in_list(const char *name, const char *const *list);

/* ---- svg_read.c: the allowlist ---- */

/* Parses the first <svg> element of svg[0..len) into root's children. Returns 0, or -1 out of
 * memory. */
int rs_parse(rs_arena *ar, rs_node *root, const char *svg, size_t len);

/* ---- svg_values.c ---- */

/* The value of attribute name of element elem as it will be written (without the id prefix):
 * colours, coordinates and decimals made smaller. NULL when out of memory. */
const char *rs_small_value(rs_arena *ar, const char *elem, const char *name, const char *v,
                           size_t vlen);
/* A plain decimal number at p (-?digits[.digits]; start: the value it is in), its length in
 * *n; 0 when there is none or it is part of a longer token (an exponent, a name). */
int rs_plain_number(const char *p, const char *start, size_t *n);

/* ---- svg_shrink.c ---- */

/* The tree made smaller, drawing the same. Returns 0, or -1 out of memory. */
int rs_shrink(rs_arena *ar, rs_node *root);

/* ---- svg_write.c ---- */

/* Writes n, its ids and references prefixed with prefix (skip_id: without its id, to compare
 * patterns). */
void rs_write_node(FILE *out, const rs_node *n, const char *prefix, int skip_id);

#endif
