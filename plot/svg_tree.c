/* svg_tree: the tree one figure's SVG is read into (svg_impl.h), its nodes and strings in an
 * arena freed at once; a node's attributes looked up and dropped. */
#include "svg_impl.h"

#include <stdlib.h>
#include <string.h>

void *rs_alloc(rs_arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (!a->head || a->head->cap - a->head->used < n) {
    size_t cap = n > ((size_t)1 << 16) ? n : (size_t)1 << 16;
    rs_chunk *c = malloc(sizeof *c + cap);
    if (!c) {
      a->oom = 1;
      return NULL;
    }
    *c = (rs_chunk){.next = a->head, .cap = cap};
    a->head = c;
  }
  void *p = (char *)a->head->data + a->head->used;
  a->head->used += n;
  return p;
}

char *rs_strn(rs_arena *a, const char *s, size_t n) {
  char *d = rs_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void rs_arena_free(rs_arena *a) {
  while (a->head) {
    rs_chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

rs_node *rs_new_node(rs_arena *ar) {
  rs_node *n = rs_alloc(ar, sizeof *n);
  if (n) memset(n, 0, sizeof *n);
  return n;
}

void rs_append(rs_node *parent, rs_node *n) {
  if (parent->last)
    parent->last->next = n;
  else
    parent->first = n;
  parent->last = n;
}

int rs_is(const char *a, const char *b) { return a && !strcmp(a, b); }

int rs_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const char *rs_get(const rs_node *n, const char *name) {
  for (int i = 0; i < n->na; i++)
    if (rs_is(n->a[i].name, name)) return n->a[i].val;
  return NULL;
}

void rs_drop_attr(rs_node *n, const char *name) {
  for (int i = 0; i < n->na; i++)
    if (rs_is(n->a[i].name, name)) {
      memmove(&n->a[i], &n->a[i + 1], (size_t)(n->na - i - 1) * sizeof *n->a);
      n->na--;
      return;
    }
}

int rs_in_list(const char *name, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (!strcmp(name, list[i])) return 1;
  return 0;
}
