/* svg_shrink: a figure's tree made smaller without changing what it draws: definitions and ids
 * nothing references left out, a pattern that repeats an earlier one replaced by it, a group of
 * one element folded into it, neighbouring groups of the same attributes joined, a text's
 * translate() as its x and y. */
#include "svg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char **v;
  int n, cap;
} id_set;

static int id_has(const id_set *s, const char *id, size_t n) {
  for (int i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == n && !memcmp(s->v[i], id, n)) return 1;
  return 0;
}

static int id_add(rs_arena *ar, id_set *s, const char *id, size_t n) {
  if (!n || id_has(s, id, n)) return 0;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 32;
    const char **v = rs_alloc(ar, (size_t)cap * sizeof *v);
    if (!v) return -1;
    if (s->n) memcpy(v, s->v, (size_t)s->n * sizeof *v);
    s->v = v, s->cap = cap;
  }
  if (!(s->v[s->n] = rs_strn(ar, id, n))) return -1;
  s->n++;
  return 1;
}

/* Adds the ids n's attributes reference (href="#id", url(#id)) to s. Returns the number added,
 * or -1 out of memory. */
static int add_refs(rs_arena *ar, const rs_node *n, id_set *s) {
  int added = 0, rc;
  for (int i = 0; i < n->na; i++) {
    const char *v = n->a[i].val;
    if ((rs_is(n->a[i].name, "href") || rs_is(n->a[i].name, "xlink:href")) && v[0] == '#') {
      if ((rc = id_add(ar, s, v + 1, strlen(v + 1))) < 0) return -1;
      added += rc;
      continue;
    }
    for (const char *p = v; (p = strstr(p, "url(#"));) {
      p += 5;
      size_t k = strcspn(p, ")");
      if ((rc = id_add(ar, s, p, k)) < 0) return -1;
      added += rc;
    }
  }
  return added;
}

/* The references of n and of what it holds; a definition (a child of <defs>) counts only once
 * something drawn references it (live). */
static int walk_refs(rs_arena *ar, const rs_node *n, id_set *live, int in_defs) {
  int added = 0, rc;
  if (n->name) {
    if (in_defs) {
      const char *id = rs_get(n, "id");
      if (!id || !id_has(live, id, strlen(id))) return 0;
    }
    if ((rc = add_refs(ar, n, live)) < 0) return -1;
    added += rc;
  }
  for (const rs_node *c = n->first; c; c = c->next) {
    if ((rc = walk_refs(ar, c, live, rs_is(n->name, "defs"))) < 0) return -1;
    added += rc;
  }
  return added;
}

/* Drops the definitions nothing drawn references and the ids nothing references. */
static void drop_unreferenced(rs_node *n, const id_set *live) {
  rs_node **link = &n->first, *prev = NULL;
  for (rs_node *c = n->first; c; c = c->next) {
    const char *id = c->name ? rs_get(c, "id") : NULL;
    if (id && !id_has(live, id, strlen(id))) rs_drop_attr(c, "id"), id = NULL;
    if (rs_is(n->name, "defs") && !id) continue; /* a definition nothing uses */
    drop_unreferenced(c, live);
    *link = c, link = &c->next, prev = c;
  }
  *link = NULL;
  n->last = prev;
}

typedef struct {
  const char *id, *text; /* a kept pattern: its id, and its text without the id */
} pat_entry;

typedef struct {
  const char *from, *to; /* a copy's id, and the id of the pattern it repeats */
} pat_alias;

typedef struct {
  pat_entry *kept;
  int nkept, cap;
  pat_alias *map;
  int nmap, mapcap;
} pat_map;

static char *node_text(const rs_node *n) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  rs_write_node(f, n, "", 1);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int grow(rs_arena *ar, void **v, int n, int *cap, size_t size) {
  if (n < *cap) return 0;
  int c = *cap ? 2 * *cap : 16;
  void *w = rs_alloc(ar, (size_t)c * size);
  if (!w) return -1;
  if (n) memcpy(w, *v, (size_t)n * size);
  *v = w, *cap = c;
  return 0;
}

/* Collects the patterns of n's tree; a pattern that repeats a kept one is dropped from its parent
 * and mapped to that one's id. */
static int dedupe_patterns(rs_arena *ar, rs_node *n, pat_map *m) {
  rs_node **link = &n->first, *prev = NULL;
  for (rs_node *c = n->first; c; c = c->next) {
    const char *id = rs_is(c->name, "pattern") ? rs_get(c, "id") : NULL;
    if (id) {
      char *text = node_text(c);
      if (!text) return -1;
      int k = 0;
      while (k < m->nkept && strcmp(m->kept[k].text, text)) k++;
      if (k < m->nkept) {
        free(text);
        if (grow(ar, (void **)&m->map, m->nmap, &m->mapcap, sizeof *m->map)) return -1;
        m->map[m->nmap++] = (pat_alias){id, m->kept[k].id};
        continue; /* dropped */
      }
      if (grow(ar, (void **)&m->kept, m->nkept, &m->cap, sizeof *m->kept)) return free(text), -1;
      const char *copy = rs_strn(ar, text, strlen(text));
      free(text);
      if (!copy) return -1;
      m->kept[m->nkept++] = (pat_entry){id, copy};
    } else if (dedupe_patterns(ar, c, m)) {
      return -1;
    }
    *link = c, link = &c->next, prev = c;
  }
  *link = NULL;
  n->last = prev;
  return 0;
}

static const char *mapped(const pat_map *m, const char *id, size_t n) {
  for (int i = 0; i < m->nmap; i++)
    if (strlen(m->map[i].from) == n && !memcmp(m->map[i].from, id, n)) return m->map[i].to;
  return NULL;
}

/* Points the references to a dropped copy at the pattern it repeats. */
static int remap_refs(rs_arena *ar, rs_node *n, const pat_map *m) {
  for (int i = 0; n->name && i < n->na; i++) {
    const char *v = n->a[i].val, *to;
    if ((rs_is(n->a[i].name, "href") || rs_is(n->a[i].name, "xlink:href")) && v[0] == '#') {
      if ((to = mapped(m, v + 1, strlen(v + 1)))) {
        char *w = rs_alloc(ar, strlen(to) + 2);
        if (!w) return -1;
        sprintf(w, "#%s", to);
        n->a[i].val = w;
      }
      continue;
    }
    if (!strstr(v, "url(#")) continue;
    size_t cap = strlen(v) + 1;
    for (const char *p = v; (p = strstr(p, "url(#")); p += 5) {
      size_t k = strcspn(p + 5, ")");
      if ((to = mapped(m, p + 5, k))) cap += strlen(to);
    }
    char *w = rs_alloc(ar, cap), *o = w;
    if (!w) return -1;
    for (const char *p = v; *p;) {
      size_t k;
      if (!strncmp(p, "url(#", 5) && (to = mapped(m, p + 5, k = strcspn(p + 5, ")")))) {
        o += sprintf(o, "url(#%s", to);
        p += 5 + k;
      } else {
        *o++ = *p++;
      }
    }
    *o = '\0';
    n->a[i].val = w;
  }
  for (rs_node *c = n->first; c; c = c->next)
    if (remap_refs(ar, c, m)) return -1;
  return 0;
}

/* What a group may pass down to the one element it holds, or share with a neighbour: inherited
 * presentation attributes, and its transform. */
static const char *const movable[] = {"fill",
                                      "fill-opacity",
                                      "fill-rule",
                                      "stroke",
                                      "stroke-width",
                                      "stroke-linecap",
                                      "stroke-linejoin",
                                      "stroke-dasharray",
                                      "stroke-dashoffset",
                                      "stroke-opacity",
                                      "stroke-miterlimit",
                                      "color",
                                      "font-family",
                                      "font-size",
                                      "font-weight",
                                      "font-style",
                                      "text-anchor",
                                      "shape-rendering",
                                      "transform",
                                      NULL};
/* The elements a group's attributes may move onto. */
static const char *const foldable[] = {"g",       "path", "polygon", "polyline", "rect", "circle",
                                       "ellipse", "line", "text",    "use",      NULL};

static int only_movable(const rs_node *g) {
  for (int i = 0; i < g->na; i++)
    if (!rs_in_list(g->a[i].name, movable)) return 0;
  return 1;
}

static int same_attrs(const rs_node *a, const rs_node *b) {
  if (a->na != b->na) return 0;
  for (int i = 0; i < a->na; i++)
    if (!rs_is(a->a[i].name, b->a[i].name) || !rs_is(a->a[i].val, b->a[i].val)) return 0;
  return 1;
}

/* Group g of one element, folded into it: g's attributes it lacks, g's transform before its
 * own. Returns the element, g when it cannot be folded, NULL out of memory. */
static rs_node *fold(rs_arena *ar, rs_node *g) {
  rs_node *c = g->first;
  if (!rs_is(g->name, "g") || !c || c->next || !c->name || !rs_in_list(c->name, foldable) ||
      !only_movable(g) || c->na + g->na > RS_MAX_ATTRS)
    return g;
  for (int i = 0; i < g->na; i++) {
    const char *name = g->a[i].name, *own = rs_get(c, name);
    if (rs_is(name, "transform") && own) {
      char *t = rs_alloc(ar, strlen(g->a[i].val) + strlen(own) + 2);
      if (!t) return NULL;
      sprintf(t, "%s %s", g->a[i].val, own);
      for (int k = 0; k < c->na; k++)
        if (rs_is(c->a[k].name, "transform")) c->a[k].val = t;
    } else if (!own) {
      c->a[c->na++] = g->a[i];
    }
  }
  return c;
}

/* n's children with the neighbouring groups of the same attributes joined, and empty groups
 * and definitions dropped. */
static void join_groups(rs_node *n) {
  rs_node *kids = n->first;
  n->first = n->last = NULL;
  for (rs_node *c = kids, *next; c; c = next) {
    next = c->next;
    c->next = NULL;
    if ((rs_is(c->name, "g") || rs_is(c->name, "defs")) && !c->first) continue;
    rs_node *prev = n->last;
    if (prev && rs_is(prev->name, "g") && rs_is(c->name, "g") && only_movable(c) &&
        same_attrs(prev, c)) {
      prev->last->next = c->first;
      prev->last = c->last;
      continue;
    }
    rs_append(n, c);
  }
}

/* n's tree made smaller, children first: neighbouring groups joined, then each group of one
 * element folded into it, then joined again (folding can make neighbours alike). */
static int fold_tree(rs_arena *ar, rs_node *n) {
  for (rs_node *c = n->first; c; c = c->next)
    if (c->name && fold_tree(ar, c)) return -1;
  join_groups(n);
  for (rs_node **link = &n->first, *c; (c = *link); link = &(*link)->next) {
    rs_node *f = fold(ar, c);
    if (!f) return -1;
    if (f == c) continue;
    f->next = c->next;
    *link = f;
    if (n->last == c) n->last = f;
  }
  join_groups(n);
  return 0;
}

/* 1 when n or what it holds places itself (x, y, dx, dy): a text holding one keeps its
 * translate(). */
static int places(const rs_node *n) {
  for (const rs_node *c = n->first; c; c = c->next)
    if (c->name &&
        (rs_get(c, "x") || rs_get(c, "y") || rs_get(c, "dx") || rs_get(c, "dy") || places(c)))
      return 1;
  return 0;
}

/* A text's transform translate(x,y) as its x and y. */
static int text_xy(rs_arena *ar, rs_node *n) {
  for (rs_node *c = n->first; c; c = c->next)
    if (c->name && text_xy(ar, c)) return -1;
  const char *t = rs_is(n->name, "text") ? rs_get(n, "transform") : NULL;
  size_t a, b;
  if (!t || strncmp(t, "translate(", 10) || rs_get(n, "x") || rs_get(n, "y") || places(n) ||
      n->na + 1 > RS_MAX_ATTRS || !rs_plain_number(t + 10, t, &a) || t[10 + a] != ',' ||
      !rs_plain_number(t + 11 + a, t, &b) || strcmp(t + 11 + a + b, ")"))
    return 0;
  const char *x = rs_strn(ar, t + 10, a), *y = rs_strn(ar, t + 11 + a, b);
  if (!x || !y) return -1;
  rs_drop_attr(n, "transform");
  n->a[n->na++] = (rs_attr){"x", x};
  n->a[n->na++] = (rs_attr){"y", y};
  return 0;
}

int rs_shrink(rs_arena *ar, rs_node *root) {
  /* what is drawn references ids; a definition it references may reference more */
  id_set live = {0};
  int added;
  do added = walk_refs(ar, root, &live, 0);
  while (added > 0);
  if (added < 0) return -1;
  drop_unreferenced(root, &live);
  pat_map m = {0};
  if (dedupe_patterns(ar, root, &m) || remap_refs(ar, root, &m)) return -1;
  return fold_tree(ar, root) || text_xy(ar, root) ? -1 : 0;
}
