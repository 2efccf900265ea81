/* svg_write: a figure's tree written as SVG text: every id and reference to one prefixed (so
 * that figures do not share ids), attribute sets gnuplot repeats as classes (rs_style holds
 * their rules). */
#include "svg_impl.h"

#include <string.h>

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
        if (rs_is(n->a[i].name, classes[k].attr[want][0]) &&
            rs_is(n->a[i].val, classes[k].attr[want][1]) && !(taken & 1u << i))
          bits |= 1u << i, have++;
    if (have != want) continue;
    taken |= bits;
    len += (size_t)snprintf(cls + len, cap - len, "%s%s", len ? " " : "", classes[k].cls);
  }
  return taken;
}

/* An attribute's value, its ids and references to ids prefixed. */
static void put_value(FILE *out, const char *name, const char *v, const char *prefix) {
  if (rs_is(name, "id")) {
    fprintf(out, "%s%s", prefix, v);
  } else if ((rs_is(name, "href") || rs_is(name, "xlink:href")) && v[0] == '#') {
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
void rs_write_node(FILE *out, const rs_node *n, const char *prefix, int skip_id) {
  if (!n->name) {
    fputs(n->text, out);
    return;
  }
  char cls[64];
  unsigned taken = take_classes(n, cls, sizeof cls);
  const char *own = rs_get(n, "class");
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
    if (!(taken & 1u << i) && !rs_is(n->a[i].name, "class") &&
        !(skip_id && rs_is(n->a[i].name, "id")))
      put_attr(out, n->a[i].name, n->a[i].val, prefix);
  if (!n->first) {
    fputs("/>", out);
    return;
  }
  fputc('>', out);
  for (const rs_node *c = n->first; c; c = c->next) rs_write_node(out, c, prefix, 0);
  fprintf(out, "</%s>", n->name);
}
