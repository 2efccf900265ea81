/* svg_read: the allowlist: a figure's SVG read into a tree, keeping only the elements gnuplot's
 * SVG terminal writes that a figure needs (anything else dropped with its content) and their
 * attributes but event handlers and references outside the figure; each value made smaller
 * (svg_values.c) on the way. */
#include "svg_impl.h"

#include <string.h>
#include <strings.h>

typedef struct {
  const char *name, *val;
  size_t nlen, vlen;
} raw_attr;

typedef struct {
  int end, empty; /* </name>, <name/> */
  const char *name;
  size_t nlen;
  raw_attr a[RS_MAX_ATTRS];
  int na;
} raw_tag;

/* The elements gnuplot's SVG terminal writes that a figure needs. Anything else (script,
 * foreignObject, title, desc, a, ...) is dropped with its content. */
static const char *const allowed[] = {
    "svg",     "g",       "path",        "polygon",  "polyline",       "rect", "circle",
    "ellipse", "line",    "text",        "tspan",    "defs",           "use",  "pattern",
    "filter",  "feFlood", "feComposite", "clipPath", "linearGradient", "stop", "marker",
    "symbol",  NULL};

static int raw_is(const char *s, size_t n, const char *name) {
  return n == strlen(name) && !memcmp(s, name, n);
}

static int allowed_tag(const raw_tag *t) {
  for (int i = 0; allowed[i]; i++)
    if (raw_is(t->name, t->nlen, allowed[i])) return 1;
  return 0;
}

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == ':' || c == '.';
}

/* One attribute at p: name, optional spaces, '=', optional spaces, a quoted value. Returns
 * the byte after it, or NULL when there is none. */
static const char *parse_attr(const char *p, const char *end, raw_attr *a) {
  a->name = p;
  while (p < end && is_name_char(*p)) p++;
  a->nlen = (size_t)(p - a->name);
  while (p < end && rs_is_space(*p)) p++;
  if (!a->nlen || p >= end || *p != '=') return NULL;
  for (p++; p < end && rs_is_space(*p);) p++;
  if (p >= end || (*p != '"' && *p != '\'')) return NULL;
  char q = *p++;
  a->val = p;
  while (p < end && *p != q) p++;
  if (p >= end) return NULL;
  a->vlen = (size_t)(p - a->val);
  return p + 1;
}

/* Parses the tag at p (p[0] == '<') up to its '>'. Returns the byte after it, or NULL when the
 * tag is malformed (the rest of the figure is dropped). */
static const char *parse_tag(const char *p, const char *end, raw_tag *t) {
  memset(t, 0, sizeof *t);
  p++;
  if (p < end && *p == '/') t->end = 1, p++;
  t->name = p;
  while (p < end && is_name_char(*p)) p++;
  t->nlen = (size_t)(p - t->name);
  if (!t->nlen) return NULL;
  for (;;) {
    while (p < end && rs_is_space(*p)) p++;
    if (p >= end) return NULL;
    if (*p == '>') return p + 1;
    if (*p == '/' && p + 1 < end && p[1] == '>') {
      t->empty = 1;
      return p + 2;
    }
    raw_attr a;
    if (!(p = parse_attr(p, end, &a))) return NULL;
    if (t->na < RS_MAX_ATTRS) t->a[t->na++] = a;
  }
}

/* The end of the element whose start tag ends at p (its content skipped). */
static const char *skip_element(const char *p, const char *end, const raw_tag *start) {
  int depth = 1;
  while (depth && (p = memchr(p, '<', (size_t)(end - p)))) {
    raw_tag t;
    const char *next = parse_tag(p, end, &t);
    if (!next) return end;
    if (t.nlen == start->nlen && !memcmp(t.name, start->name, t.nlen) && !t.empty)
      depth += t.end ? -1 : 1;
    p = next;
  }
  return p ? p : end;
}

/* The markup that is no element (comments, <?xml ...?>, <!DOCTYPE ...>): skipped. Returns the
 * byte after it, or NULL when p starts an element. */
static const char *skip_markup(const char *p, const char *end) {
  if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
    const char *c = strstr(p, "-->");
    return c ? c + 3 : end;
  }
  if (end - p >= 2 && (p[1] == '?' || p[1] == '!')) {
    const char *c = memchr(p, '>', (size_t)(end - p));
    return c ? c + 1 : end;
  }
  return NULL;
}

/* 1 when the attribute may be kept: no event handler, and every reference (href, url())
 * points into the figure itself. */
static int attr_safe(const char *name, size_t nlen, const char *v, size_t vlen) {
  if (nlen > 2 && !strncasecmp(name, "on", 2)) return 0;
  if (raw_is(name, nlen, "href") || raw_is(name, nlen, "xlink:href"))
    return vlen > 1 && v[0] == '#';
  for (const char *p = v; p + 4 <= v + vlen; p++)
    if (!strncasecmp(p, "url(", 4) && (p + 4 == v + vlen || p[4] != '#')) return 0;
  return 1;
}

/* The element of tag t, its attributes checked and made smaller (a polygon becomes a path). */
static rs_node *element(rs_arena *ar, const raw_tag *t) {
  rs_node *n = rs_new_node(ar);
  if (!n || !(n->name = rs_strn(ar, t->name, t->nlen))) return NULL;
  for (int i = 0; i < t->na; i++) {
    const raw_attr *a = &t->a[i];
    const char *v = a->val;
    size_t vlen = a->vlen;
    while (vlen && rs_is_space(v[vlen - 1])) vlen--;
    while (vlen && rs_is_space(v[0])) v++, vlen--;
    if (!attr_safe(a->name, a->nlen, v, vlen)) continue;
    if (memchr(v, '"', vlen) && memchr(v, '\'', vlen)) continue;
    rs_attr *d = &n->a[n->na];
    if (!(d->name = rs_strn(ar, a->name, a->nlen))) return NULL;
    if (rs_get(n, d->name)) continue; /* a key twice: the first counts */
    if (!(d->val = rs_small_value(ar, n->name, d->name, v, vlen))) return NULL;
    n->na++;
  }
  for (int i = 0; rs_is(n->name, "polygon") && i < n->na; i++)
    if (rs_is(n->a[i].name, "points") && n->a[i].val[0] == 'M') { /* compact_path made it a path */
      n->name = "path";
      n->a[i].name = "d";
    }
  return n;
}

/* Parses the first <svg> element of svg[0..len) into root's children. Returns 0, or -1 out of
 * memory. */
int rs_parse(rs_arena *ar, rs_node *root, const char *svg, size_t len) {
  const char *end = svg + len, *p = strstr(svg, "<svg");
  rs_node *stack[RS_MAX_DEPTH];
  int depth = 0;
  stack[depth++] = root;
  while (p && p < end && depth > 0) {
    const char *next;
    raw_tag t;
    rs_node *top = stack[depth - 1];
    if (*p != '<') {
      const char *q = memchr(p, '<', (size_t)(end - p)), *k = p;
      if (!q) q = end;
      while (k < q && rs_is_space(*k)) k++;
      /* white space between tags is dropped, but inside a text */
      if (top != root && (k < q || rs_is(top->name, "text") || rs_is(top->name, "tspan"))) {
        rs_node *n = rs_new_node(ar);
        if (!n || !(n->text = rs_strn(ar, p, (size_t)(q - p)))) return -1;
        rs_append(top, n);
      }
      p = q;
    } else if ((next = skip_markup(p, end))) {
      p = next;
    } else if (!(next = parse_tag(p, end, &t))) {
      break;
    } else if (!allowed_tag(&t)) {
      p = t.end || t.empty ? next : skip_element(next, end, &t);
    } else if (t.end) {
      int k = depth - 1;
      while (k > 0 && !raw_is(t.name, t.nlen, stack[k]->name)) k--;
      if (k > 0) depth = k;
      if (depth == 1 && root->first) break; /* the figure's <svg> is closed */
      p = next;
    } else {
      if (top == root && root->first) break;
      rs_node *n = element(ar, &t);
      if (!n) return -1;
      rs_append(top, n);
      if (!t.empty) {
        if (depth == RS_MAX_DEPTH) break;
        stack[depth++] = n;
      }
      p = next;
    }
  }
  return 0;
}
