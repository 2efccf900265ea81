/* report_svg: a figure's SVG inlined into report.html (see report_svg.h). */
#include "report_svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- an arena: the tree of one figure, freed at once ---- */

typedef struct rs_chunk {
  struct rs_chunk *next;
  size_t used, cap;
  max_align_t data[];
} rs_chunk;

typedef struct {
  rs_chunk *head;
  int oom;
} rs_arena;

static void *ar_alloc(rs_arena *a, size_t n) {
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

static char *ar_strn(rs_arena *a, const char *s, size_t n) {
  char *d = ar_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static void ar_free(rs_arena *a) {
  while (a->head) {
    rs_chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

/* ---- the tree ---- */

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

static rs_node *new_node(rs_arena *ar) {
  rs_node *n = ar_alloc(ar, sizeof *n);
  if (n) memset(n, 0, sizeof *n);
  return n;
}

static void append(rs_node *parent, rs_node *n) {
  if (parent->last)
    parent->last->next = n;
  else
    parent->first = n;
  parent->last = n;
}

static int is(const char *a, const char *b) { return a && !strcmp(a, b); }

static const char *get(const rs_node *n, const char *name) {
  for (int i = 0; i < n->na; i++)
    if (is(n->a[i].name, name)) return n->a[i].val;
  return NULL;
}

static void drop_attr(rs_node *n, const char *name) {
  for (int i = 0; i < n->na; i++)
    if (is(n->a[i].name, name)) {
      memmove(&n->a[i], &n->a[i + 1], (size_t)(n->na - i - 1) * sizeof *n->a);
      n->na--;
      return;
    }
}

/* ---- reading a tag ---- */

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

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
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
  while (p < end && is_space(*p)) p++;
  if (!a->nlen || p >= end || *p != '=') return NULL;
  for (p++; p < end && is_space(*p);) p++;
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
    while (p < end && is_space(*p)) p++;
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

/* ---- attribute values: checked, then written smaller ---- */

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

static int in_list(const char *name, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (!strcmp(name, list[i])) return 1;
  return 0;
}

static const char *const color_attrs[] = {"fill",        "stroke",     "color",
                                          "flood-color", "stop-color", NULL};
/* Attributes of coordinates, whose numbers are rounded (coord_digits). */
static const char *const coord_attrs[] = {"d",  "points", "transform", "x",      "y",  "x1", "y1",
                                          "x2", "y2",     "width",     "height", "cx", "cy", "r",
                                          "rx", "ry",     "dx",        "dy",     NULL};

/* #rrggbb from gnuplot's rgb(  0, 114, 178), a #RRGGBB or black/white; as #rgb where each pair
 * repeats a digit. 0 when v is no such colour. */
static int color_hex(const char *v, char hex[8]) {
  int r, g, b, used = 0;
  unsigned u;
  if (!strcmp(v, "black"))
    r = g = b = 0;
  else if (!strcmp(v, "white"))
    r = g = b = 255;
  else if (sscanf(v, "rgb(%d ,%d ,%d )%n", &r, &g, &b, &used) == 3 && !v[used]) {
    if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255) return 0;
  } else if (v[0] == '#' && strlen(v) == 7 && strspn(v + 1, "0123456789abcdefABCDEF") == 6 &&
             sscanf(v + 1, "%x", &u) == 1) {
    r = (int)(u >> 16), g = (int)(u >> 8 & 255), b = (int)(u & 255);
  } else {
    return 0;
  }
  if (r % 17 == 0 && g % 17 == 0 && b % 17 == 0)
    snprintf(hex, 8, "#%x%x%x", (unsigned)(r / 17) & 15, (unsigned)(g / 17) & 15,
             (unsigned)(b / 17) & 15);
  else
    snprintf(hex, 8, "#%02x%02x%02x", (unsigned)r & 255, (unsigned)g & 255, (unsigned)b & 255);
  return 1;
}

/* A number in hundredths, rounded as coordinates are: to 0.1 from 1 on, else to 0.01. */
static long long hundredths(double v) {
  return fabs(v) >= 1 ? llround(v * 10) * 10 : llround(v * 100);
}

/* Writes h hundredths as a decimal without trailing zeros ("-8.6", "3", "0.05"). */
static void put_hundredths(char **o, long long h) {
  if (h < 0) *(*o)++ = '-';
  unsigned long long a = h < 0 ? (unsigned long long)-(h + 1) + 1 : (unsigned long long)h;
  *o += sprintf(*o, "%llu", a / 100);
  unsigned f = (unsigned)(a % 100);
  if (f) *o += f % 10 ? sprintf(*o, ".%02u", f) : sprintf(*o, ".%u", f / 10);
}

/* A plain decimal number at p (-?digits[.digits]), its length in *n; 0 when there is none or it
 * is part of a longer token (an exponent, a name). */
static int plain_number(const char *p, const char *start, size_t *n) {
  if (p > start && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.' || p[-1] == '_' ||
                    p[-1] == '#' || p[-1] == '-'))
    return 0;
  const char *q = p + (*p == '-');
  if (*q < '0' || *q > '9') return 0;
  while (*q >= '0' && *q <= '9') q++;
  if (*q == '.' && q[1] >= '0' && q[1] <= '9')
    for (q++; *q >= '0' && *q <= '9';) q++;
  if (*q == 'e' || *q == 'E' || *q == '.' || *q == '_') return 0;
  if (!(fabs(strtod(p, NULL)) < 1e12)) return 0; /* kept as written: no coordinate */
  *n = (size_t)(q - p);
  return 1;
}

/* v with every plain number rounded as coordinates are (into o, which holds 2 * strlen(v) + 8). */
static void round_numbers(const char *v, char *o) {
  const char *p = v;
  size_t n;
  while (*p) {
    if ((*p == '-' || (*p >= '0' && *p <= '9')) && plain_number(p, v, &n)) {
      put_hundredths(&o, hundredths(strtod(p, NULL)));
      p += n;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
}

/* Reads "x,y" or "x y" pairs and M/L/Z commands; the path of only these as h/v steps where a
 * segment is axis-parallel (into o). 0 when the value holds anything else (then it is only
 * rounded). polygon: v is a polygon's points, written as a closed path. */
static int compact_path(const char *v, char *o, int polygon) {
  long long cx = 0, cy = 0, sx = 0, sy = 0;
  int have = 0, segs = 0; /* segments of the subpath */
  char *back = NULL;      /* where the last segment starts when it ends at the subpath's start */
  char cmd = polygon ? 'M' : 0;
  const char *p = v;
  for (;;) {
    while (is_space(*p) || *p == ',') p++;
    if (!*p) break;
    if (!polygon && (*p == 'M' || *p == 'L' || *p == 'Z' || *p == 'z')) {
      cmd = *p++;
      if (cmd == 'Z' || cmd == 'z') {
        if (back && segs > 2) o = back; /* z draws the line back to the start itself */
        *o++ = 'z';
        cx = sx, cy = sy;
        cmd = 0, back = NULL, segs = 0;
      }
      continue;
    }
    size_t n;
    if (!cmd || !plain_number(p, v, &n)) return 0;
    long long x = hundredths(strtod(p, NULL));
    p += n;
    while (is_space(*p) || *p == ',') p++;
    if (!plain_number(p, v, &n)) return 0;
    long long y = hundredths(strtod(p, NULL));
    p += n;
    char *seg = o;
    if (cmd == 'M') {
      *o++ = 'M';
      put_hundredths(&o, x);
      *o++ = ',';
      put_hundredths(&o, y);
      sx = x, sy = y, segs = 0;
      cmd = 'L'; /* pairs after a move are lines */
    } else if (have && x == cx) {
      *o++ = 'v';
      put_hundredths(&o, y - cy);
    } else if (have && y == cy) {
      *o++ = 'h';
      put_hundredths(&o, x - cx);
    } else {
      *o++ = 'L';
      put_hundredths(&o, x);
      *o++ = ',';
      put_hundredths(&o, y);
    }
    if (seg != o && *seg != 'M') segs++;
    back = *seg != 'M' && x == sx && y == sy ? seg : NULL;
    cx = x, cy = y, have = 1;
  }
  if (!have) return 0;
  if (polygon) {
    if (back && segs > 2) o = back;
    *o++ = 'z';
  }
  *o = '\0';
  return 1;
}

/* A decimal number's length without its trailing zeros ("1.00" -> "1", "0.50" -> "0.5"), or n
 * when v is no plain decimal. */
static size_t trim_decimal(const char *v, size_t n) {
  size_t i = v[0] == '-', dot = 0;
  for (; i < n; i++)
    if (v[i] == '.' && !dot)
      dot = i;
    else if (v[i] < '0' || v[i] > '9')
      return n;
  if (!dot) return n;
  while (n > dot + 1 && v[n - 1] == '0') n--;
  return v[n - 1] == '.' ? n - 1 : n;
}

/* The value of attribute name of element elem as it will be written (without the id prefix):
 * colours, coordinates and decimals made smaller. NULL when out of memory. */
static const char *small_value(rs_arena *ar, const char *elem, const char *name, const char *v,
                               size_t vlen) {
  char *raw = ar_strn(ar, v, vlen);
  if (!raw) return NULL;
  char hex[8];
  if (in_list(name, color_attrs) && color_hex(raw, hex)) return ar_strn(ar, hex, strlen(hex));
  if (!in_list(name, coord_attrs)) {
    raw[trim_decimal(raw, vlen)] = '\0';
    return raw;
  }
  char *o = ar_alloc(ar, 2 * vlen + 8);
  if (!o) return NULL;
  if (!(is(name, "d") && compact_path(raw, o, 0)) &&
      !(is(name, "points") && is(elem, "polygon") && compact_path(raw, o, 1)))
    round_numbers(raw, o);
  return o;
}

/* ---- reading the figure into a tree ---- */

/* The element of tag t, its attributes checked and made smaller (a polygon becomes a path). */
static rs_node *element(rs_arena *ar, const raw_tag *t) {
  rs_node *n = new_node(ar);
  if (!n || !(n->name = ar_strn(ar, t->name, t->nlen))) return NULL;
  for (int i = 0; i < t->na; i++) {
    const raw_attr *a = &t->a[i];
    const char *v = a->val;
    size_t vlen = a->vlen;
    while (vlen && is_space(v[vlen - 1])) vlen--;
    while (vlen && is_space(v[0])) v++, vlen--;
    if (!attr_safe(a->name, a->nlen, v, vlen)) continue;
    if (memchr(v, '"', vlen) && memchr(v, '\'', vlen)) continue;
    rs_attr *d = &n->a[n->na];
    if (!(d->name = ar_strn(ar, a->name, a->nlen))) return NULL;
    if (get(n, d->name)) continue; /* a key twice: the first counts */
    if (!(d->val = small_value(ar, n->name, d->name, v, vlen))) return NULL;
    n->na++;
  }
  for (int i = 0; is(n->name, "polygon") && i < n->na; i++)
    if (is(n->a[i].name, "points") && n->a[i].val[0] == 'M') { /* compact_path made it a path */
      n->name = "path";
      n->a[i].name = "d";
    }
  return n;
}

/* Parses the first <svg> element of svg[0..len) into root's children. Returns 0, or -1 out of
 * memory. */
static int parse(rs_arena *ar, rs_node *root, const char *svg, size_t len) {
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
      while (k < q && is_space(*k)) k++;
      /* white space between tags is dropped, but inside a text */
      if (top != root && (k < q || is(top->name, "text") || is(top->name, "tspan"))) {
        rs_node *n = new_node(ar);
        if (!n || !(n->text = ar_strn(ar, p, (size_t)(q - p)))) return -1;
        append(top, n);
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
      append(top, n);
      if (!t.empty) {
        if (depth == RS_MAX_DEPTH) break;
        stack[depth++] = n;
      }
      p = next;
    }
  }
  return 0;
}

/* ---- the ids the figure references ---- */

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
    const char **v = ar_alloc(ar, (size_t)cap * sizeof *v);
    if (!v) return -1;
    if (s->n) memcpy(v, s->v, (size_t)s->n * sizeof *v);
    s->v = v, s->cap = cap;
  }
  if (!(s->v[s->n] = ar_strn(ar, id, n))) return -1;
  s->n++;
  return 1;
}

/* Adds the ids n's attributes reference (href="#id", url(#id)) to s. Returns the number added,
 * or -1 out of memory. */
static int add_refs(rs_arena *ar, const rs_node *n, id_set *s) {
  int added = 0, rc;
  for (int i = 0; i < n->na; i++) {
    const char *v = n->a[i].val;
    if ((is(n->a[i].name, "href") || is(n->a[i].name, "xlink:href")) && v[0] == '#') {
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
      const char *id = get(n, "id");
      if (!id || !id_has(live, id, strlen(id))) return 0;
    }
    if ((rc = add_refs(ar, n, live)) < 0) return -1;
    added += rc;
  }
  for (const rs_node *c = n->first; c; c = c->next) {
    if ((rc = walk_refs(ar, c, live, is(n->name, "defs"))) < 0) return -1;
    added += rc;
  }
  return added;
}

/* Drops the definitions nothing drawn references and the ids nothing references. */
static void drop_unreferenced(rs_node *n, const id_set *live) {
  rs_node **link = &n->first, *prev = NULL;
  for (rs_node *c = n->first; c; c = c->next) {
    const char *id = c->name ? get(c, "id") : NULL;
    if (id && !id_has(live, id, strlen(id))) drop_attr(c, "id"), id = NULL;
    if (is(n->name, "defs") && !id) continue; /* a definition nothing uses */
    drop_unreferenced(c, live);
    *link = c, link = &c->next, prev = c;
  }
  *link = NULL;
  n->last = prev;
}

/* ---- patterns that repeat an earlier one ---- */

static void write_node(FILE *out, const rs_node *n, const char *prefix, int skip_id);

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
  write_node(f, n, "", 1);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int grow(rs_arena *ar, void **v, int n, int *cap, size_t size) {
  if (n < *cap) return 0;
  int c = *cap ? 2 * *cap : 16;
  void *w = ar_alloc(ar, (size_t)c * size);
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
    const char *id = is(c->name, "pattern") ? get(c, "id") : NULL;
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
      const char *copy = ar_strn(ar, text, strlen(text));
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
    if ((is(n->a[i].name, "href") || is(n->a[i].name, "xlink:href")) && v[0] == '#') {
      if ((to = mapped(m, v + 1, strlen(v + 1)))) {
        char *w = ar_alloc(ar, strlen(to) + 2);
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
    char *w = ar_alloc(ar, cap), *o = w;
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

/* ---- groups folded and joined ---- */

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
    if (!in_list(g->a[i].name, movable)) return 0;
  return 1;
}

static int same_attrs(const rs_node *a, const rs_node *b) {
  if (a->na != b->na) return 0;
  for (int i = 0; i < a->na; i++)
    if (!is(a->a[i].name, b->a[i].name) || !is(a->a[i].val, b->a[i].val)) return 0;
  return 1;
}

/* Group g of one element, folded into it: g's attributes it lacks, g's transform before its
 * own. Returns the element, g when it cannot be folded, NULL out of memory. */
static rs_node *fold(rs_arena *ar, rs_node *g) {
  rs_node *c = g->first;
  if (!is(g->name, "g") || !c || c->next || !c->name || !in_list(c->name, foldable) ||
      !only_movable(g) || c->na + g->na > RS_MAX_ATTRS)
    return g;
  for (int i = 0; i < g->na; i++) {
    const char *name = g->a[i].name, *own = get(c, name);
    if (is(name, "transform") && own) {
      char *t = ar_alloc(ar, strlen(g->a[i].val) + strlen(own) + 2);
      if (!t) return NULL;
      sprintf(t, "%s %s", g->a[i].val, own);
      for (int k = 0; k < c->na; k++)
        if (is(c->a[k].name, "transform")) c->a[k].val = t;
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
    if ((is(c->name, "g") || is(c->name, "defs")) && !c->first) continue;
    rs_node *prev = n->last;
    if (prev && is(prev->name, "g") && is(c->name, "g") && only_movable(c) && same_attrs(prev, c)) {
      prev->last->next = c->first;
      prev->last = c->last;
      continue;
    }
    append(n, c);
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
    if (c->name && (get(c, "x") || get(c, "y") || get(c, "dx") || get(c, "dy") || places(c)))
      return 1;
  return 0;
}

/* A text's transform translate(x,y) as its x and y. */
static int text_xy(rs_arena *ar, rs_node *n) {
  for (rs_node *c = n->first; c; c = c->next)
    if (c->name && text_xy(ar, c)) return -1;
  const char *t = is(n->name, "text") ? get(n, "transform") : NULL;
  size_t a, b;
  if (!t || strncmp(t, "translate(", 10) || get(n, "x") || get(n, "y") || places(n) ||
      n->na + 1 > RS_MAX_ATTRS || !plain_number(t + 10, t, &a) || t[10 + a] != ',' ||
      !plain_number(t + 11 + a, t, &b) || strcmp(t + 11 + a + b, ")"))
    return 0;
  const char *x = ar_strn(ar, t + 10, a), *y = ar_strn(ar, t + 11 + a, b);
  if (!x || !y) return -1;
  drop_attr(n, "transform");
  n->a[n->na++] = (rs_attr){"x", x};
  n->a[n->na++] = (rs_attr){"y", y};
  return 0;
}

/* ---- writing ---- */

/* Attribute sets gnuplot repeats, each written as a class (rs_style has their rules). An
 * element takes every class whose attributes it has, none of them taken by an earlier one. */
typedef struct {
  const char *cls;
  const char *attr[4][2]; /* name, value; NULL ends the set */
} rs_class;

static const rs_class classes[] = {
    {"q",
     {{"fill", "none"},
      {"stroke", "currentColor"},
      {"stroke-linecap", "butt"},
      {"stroke-linejoin", "miter"}}},
    {"t", {{"stroke", "none"}, {"fill", "#000"}, {"font-family", "DejaVu Sans"}}},
    {"b", {{"stroke", "none"}, {"shape-rendering", "crispEdges"}}},
    {"o", {{"fill", "none"}, {"stroke-linecap", "butt"}, {"stroke-linejoin", "miter"}}},
    {"gd", {{"stroke", "#ddd"}, {"stroke-dasharray", "2,4"}}},
    {"k", {{"stroke", "#000"}}},
    {"cg", {{"color", "gray"}}},
    {"c", {{"color", "#000"}}},
    {"w1", {{"stroke-width", "1"}}},
    {"w5", {{"stroke-width", "0.5"}}},
    {"w2", {{"stroke-width", "2"}}},
    {"f8", {{"font-size", "8"}}},
    {"f9", {{"font-size", "9.33"}}},
    {"fa", {{"font-size", "10.67"}}},
    {"as", {{"text-anchor", "start"}}},
    {"am", {{"text-anchor", "middle"}}},
    {"ae", {{"text-anchor", "end"}}},
};
#define N_CLASSES (int)(sizeof classes / sizeof *classes)

const char rs_style[] =
    ".fig svg .q{fill:none;stroke:currentColor;stroke-linecap:butt;stroke-linejoin:miter}"
    ".fig svg .t{stroke:none;fill:#000;font-family:'DejaVu Sans'}"
    ".fig svg .b{stroke:none;shape-rendering:crispEdges}"
    ".fig svg .o{fill:none;stroke-linecap:butt;stroke-linejoin:miter}"
    ".fig svg .gd{stroke:#ddd;stroke-dasharray:2,4}.fig svg .k{stroke:#000}"
    ".fig svg .cg{color:gray}"
    ".fig svg .c{color:#000}.fig svg .w1{stroke-width:1px}.fig svg .w5{stroke-width:.5px}"
    ".fig svg .w2{stroke-width:2px}.fig svg .f8{font-size:8px}.fig svg .f9{font-size:9.33px}"
    ".fig svg .fa{font-size:10.67px}.fig svg .as{text-anchor:start}"
    ".fig svg .am{text-anchor:middle}.fig svg .ae{text-anchor:end}";

/* Which of n's attributes its classes take (bit i: attribute i); the classes into cls. */
static unsigned take_classes(const rs_node *n, char *cls, size_t cap) {
  unsigned taken = 0;
  size_t len = 0;
  cls[0] = '\0';
  for (int k = 0; k < N_CLASSES; k++) {
    unsigned bits = 0;
    int want = 0, have = 0;
    for (; want < 4 && classes[k].attr[want][0]; want++)
      for (int i = 0; i < n->na; i++)
        if (is(n->a[i].name, classes[k].attr[want][0]) &&
            is(n->a[i].val, classes[k].attr[want][1]) && !(taken & 1u << i))
          bits |= 1u << i, have++;
    if (have != want) continue;
    taken |= bits;
    len += (size_t)snprintf(cls + len, cap - len, "%s%s", len ? " " : "", classes[k].cls);
  }
  return taken;
}

/* An attribute's value, its ids and references to ids prefixed. */
static void put_value(FILE *out, const char *name, const char *v, const char *prefix) {
  if (is(name, "id")) {
    fprintf(out, "%s%s", prefix, v);
  } else if ((is(name, "href") || is(name, "xlink:href")) && v[0] == '#') {
    fprintf(out, "#%s%s", prefix, v + 1);
  } else {
    for (const char *p = v; *p; p++) {
      if (!strncmp(p, "url(#", 5)) {
        fprintf(out, "url(#%s", prefix);
        p += 4;
      } else {
        fputc(*p, out);
      }
    }
  }
}

static void put_attr(FILE *out, const char *name, const char *v, const char *prefix) {
  char q = strchr(v, '"') ? '\'' : '"';
  fprintf(out, " %s=%c", name, q);
  put_value(out, name, v, prefix);
  fputc(q, out);
}

/* Writes n (skip_id: without its id, to compare patterns). */
static void write_node(FILE *out, const rs_node *n, const char *prefix, int skip_id) {
  if (!n->name) {
    fputs(n->text, out);
    return;
  }
  char cls[64];
  unsigned taken = take_classes(n, cls, sizeof cls);
  const char *own = get(n, "class");
  fprintf(out, "<%s", n->name);
  if (cls[0] || own) {
    fputs(" class=\"", out);
    if (cls[0]) fputs(cls, out);
    if (own) {
      if (cls[0]) fputc(' ', out);
      put_value(out, "class", own, prefix);
    }
    fputc('"', out);
  }
  for (int i = 0; i < n->na; i++)
    if (!(taken & 1u << i) && !is(n->a[i].name, "class") && !(skip_id && is(n->a[i].name, "id")))
      put_attr(out, n->a[i].name, n->a[i].val, prefix);
  if (!n->first) {
    fputs("/>", out);
    return;
  }
  fputc('>', out);
  for (const rs_node *c = n->first; c; c = c->next) write_node(out, c, prefix, 0);
  fprintf(out, "</%s>", n->name);
}

int rs_inline(FILE *out, const char *svg, size_t len, const char *prefix) {
  rs_arena ar = {0};
  rs_node *root = new_node(&ar);
  int rc = -1;
  if (!root || parse(&ar, root, svg, len) || ar.oom) goto done;
  /* what is drawn references ids; a definition it references may reference more */
  id_set live = {0};
  int added;
  do added = walk_refs(&ar, root, &live, 0);
  while (added > 0);
  if (added < 0) goto done;
  drop_unreferenced(root, &live);
  pat_map m = {0};
  if (dedupe_patterns(&ar, root, &m) || remap_refs(&ar, root, &m)) goto done;
  if (fold_tree(&ar, root) || text_xy(&ar, root) || ar.oom) goto done;
  for (const rs_node *c = root->first; c; c = c->next) write_node(out, c, prefix, 0);
  rc = 0;
done:
  ar_free(&ar);
  return rc;
}
