/* config: loads the `plot:` section of experiment.yaml (see config.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
  const char *path;
  yaml_document_t *doc;
} ycx;

static int yerr(const ycx *y, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int yerr(const ycx *y, const yaml_node_t *n, const char *fmt, ...) {
  fprintf(stderr, "%s:%zu:%zu: ", y->path, n ? n->start_mark.line + 1 : 0,
          n ? n->start_mark.column + 1 : 0);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return -1;
}

static const char *scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_name(const ycx *y, const yaml_node_t *n, char *dst, const char *what) {
  const char *s = scalar(n);
  if (!s || !pt_valid_name(s))
    return yerr(y, n, "expected %s: a name of [A-Za-z0-9._-]+ shorter than %d characters", what,
                PT_NAME);
  strcpy(dst, s);
  return 0;
}

static int get_text(const ycx *y, const yaml_node_t *n, char *dst, size_t cap, const char *what) {
  const char *s = scalar(n);
  if (!s || strlen(s) >= cap)
    return yerr(y, n, "expected %s: a string shorter than %zu characters", what, cap);
  /* labels reach gnuplot scripts inside double quotes: keep them printable and quote-free */
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\'' || *p == '\\' || *p == '`')
      return yerr(y, n, "expected %s without quotes, apostrophes, backslashes, backticks or control characters",
                  what);
  strcpy(dst, s);
  return 0;
}

static int get_number(const ycx *y, const yaml_node_t *n, double *dst, const char *what) {
  const char *s = scalar(n);
  char *end;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (!s || !*s || *end || errno || v < 0) return yerr(y, n, "expected %s: a number >= 0", what);
  *dst = v;
  return 0;
}

static int get_int(const ycx *y, const yaml_node_t *n, int *dst, const char *what) {
  double v;
  if (get_number(y, n, &v, what)) return -1;
  if (v != (int)v || v > 1 << 24) return yerr(y, n, "expected %s: a whole number", what);
  *dst = (int)v;
  return 0;
}

static int get_bool(const ycx *y, const yaml_node_t *n, int *dst, const char *what) {
  const char *s = scalar(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) { *dst = 1; return 0; }
  if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) { *dst = 0; return 0; }
  return yerr(y, n, "expected %s: true or false", what);
}

static int get_color(const ycx *y, const yaml_node_t *n, unsigned *dst) {
  const char *s = scalar(n);
  char *end;
  if (!s || s[0] != '#' || strlen(s) != 7) return yerr(y, n, "expected color: \"#rrggbb\"");
  unsigned long v = strtoul(s + 1, &end, 16);
  if (*end) return yerr(y, n, "expected color: \"#rrggbb\"");
  *dst = (unsigned)v;
  return 0;
}

#define FOR_PAIRS(y, map, k, v)                                                             \
  for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                              \
       p_ < (map)->data.mapping.pairs.top &&                                                \
       ((k) = yaml_document_get_node((y)->doc, p_->key),                                    \
       (v) = yaml_document_get_node((y)->doc, p_->value), 1);                               \
       p_++)

#define FOR_ITEMS(y, seq, v)                                                                \
  for (yaml_node_item_t *i_ = (seq)->data.sequence.items.start;                             \
       i_ < (seq)->data.sequence.items.top && ((v) = yaml_document_get_node((y)->doc, *i_), 1); \
       i_++)

static int want(const ycx *y, const yaml_node_t *n, yaml_node_type_t t, const char *what) {
  if (n && n->type == t) return 0;
  return yerr(y, n, "expected %s: a %s", what,
              t == YAML_MAPPING_NODE ? "mapping" : t == YAML_SEQUENCE_NODE ? "list" : "scalar");
}

static int load_item(const ycx *y, const yaml_node_t *n, pc_item *it, int is_system) {
  if (want(y, n, YAML_MAPPING_NODE, "an item {name: ..., label: ...}")) return -1;
  memset(it, 0, sizeof *it);
  it->expected = 1;
  yaml_node_t *k, *v;
  FOR_PAIRS(y, n, k, v) {
    const char *key = scalar(k);
    int rc;
    if (!key) return yerr(y, k, "expected a key");
    if (!strcmp(key, "name")) rc = get_name(y, v, it->name, "name");
    else if (!strcmp(key, "label")) rc = get_text(y, v, it->label, sizeof it->label, "label");
    else if (!strcmp(key, "aliases")) {
      if (want(y, v, YAML_SEQUENCE_NODE, "aliases")) return -1;
      yaml_node_t *a;
      rc = 0;
      FOR_ITEMS(y, v, a) {
        if (it->naliases == PC_MAX_ALIASES) return yerr(y, a, "at most %d aliases", PC_MAX_ALIASES);
        if (get_name(y, a, it->aliases[it->naliases++], "alias")) return -1;
      }
    } else if (is_system && !strcmp(key, "ours")) rc = get_bool(y, v, &it->ours, "ours");
    else if (is_system && !strcmp(key, "expected")) rc = get_bool(y, v, &it->expected, "expected");
    else if (is_system && !strcmp(key, "color")) {
      rc = get_color(y, v, &it->color);
      it->has_color = 1;
    } else
      return yerr(y, k, "unknown key \"%s\"; expected name, label, aliases%s", key,
                  is_system ? ", ours, expected, color" : "");
    if (rc) return -1;
  }
  if (!it->name[0]) return yerr(y, n, "item without a name");
  if (!it->label[0]) snprintf(it->label, sizeof it->label, "%s", it->name);
  return 0;
}

static int load_list(const ycx *y, const yaml_node_t *n, pc_item *items, int *count,
                     int is_system, const char *what) {
  if (want(y, n, YAML_SEQUENCE_NODE, what)) return -1;
  yaml_node_t *v;
  FOR_ITEMS(y, n, v) {
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

static int load_figure(const ycx *y, const yaml_node_t *n, pc_figure *f) {
  if (want(y, n, YAML_MAPPING_NODE, "a figure {name: ..., kind: grid|sweep, ...}")) return -1;
  memset(f, 0, sizeof *f);
  yaml_node_t *k, *v;
  int have_kind = 0;
  FOR_PAIRS(y, n, k, v) {
    const char *key = scalar(k);
    int rc = 0;
    if (!key) return yerr(y, k, "expected a key");
    if (!strcmp(key, "name")) rc = get_name(y, v, f->name, "figure name");
    else if (!strcmp(key, "kind")) {
      const char *s = scalar(v);
      if (s && !strcmp(s, "grid")) f->kind = FIG_GRID;
      else if (s && !strcmp(s, "sweep")) f->kind = FIG_SWEEP;
      else return yerr(y, v, "expected kind: grid or sweep");
      have_kind = 1;
    } else if (!strcmp(key, "experiment")) rc = get_name(y, v, f->experiment, "experiment");
    else if (!strcmp(key, "workload")) rc = get_name(y, v, f->workload, "workload");
    else if (!strcmp(key, "title")) rc = get_text(y, v, f->title, sizeof f->title, "title");
    else if (!strcmp(key, "ylabel")) rc = get_text(y, v, f->ylabel, sizeof f->ylabel, "ylabel");
    else if (!strcmp(key, "ymax")) rc = get_number(y, v, &f->ymax, "ymax");
    else if (!strcmp(key, "ytics")) rc = get_number(y, v, &f->ytics, "ytics");
    else if (!strcmp(key, "seqlens")) {
      if (want(y, v, YAML_SEQUENCE_NODE, "seqlens")) return -1;
      yaml_node_t *s;
      FOR_ITEMS(y, v, s) {
        if (f->nseqlens == PC_MAX_SEQLENS) return yerr(y, s, "at most %d seqlens", PC_MAX_SEQLENS);
        if (get_int(y, s, &f->seqlens[f->nseqlens++], "seqlen")) return -1;
      }
    } else
      return yerr(y, k, "unknown key \"%s\"; expected name, kind, experiment, workload, title, "
                  "ylabel, ymax, ytics, seqlens", key);
    if (rc) return -1;
  }
  if (!f->name[0] || !have_kind) return yerr(y, n, "a figure needs name and kind");
  if (f->kind == FIG_SWEEP && (!f->nseqlens || !f->workload[0]))
    return yerr(y, n, "a sweep figure needs workload and seqlens");
  return 0;
}

static int load_defaults(const ycx *y, const yaml_node_t *n, pc_config *c) {
  if (want(y, n, YAML_MAPPING_NODE, "defaults")) return -1;
  yaml_node_t *k, *v;
  FOR_PAIRS(y, n, k, v) {
    const char *key = scalar(k);
    int rc;
    if (!key) return yerr(y, k, "expected a key");
    if (!strcmp(key, "experiment")) rc = get_name(y, v, c->default_experiment, "experiment");
    else if (!strcmp(key, "workload")) rc = get_name(y, v, c->default_workload, "workload");
    else if (!strcmp(key, "seqlen")) rc = get_int(y, v, &c->default_seqlen, "seqlen");
    else return yerr(y, k, "unknown key \"%s\"; expected experiment, workload, seqlen", key);
    if (rc) return -1;
  }
  return 0;
}

static int load_plot(const ycx *y, const yaml_node_t *n, pc_config *c) {
  if (want(y, n, YAML_MAPPING_NODE, "plot")) return -1;
  yaml_node_t *k, *v;
  FOR_PAIRS(y, n, k, v) {
    const char *key = scalar(k);
    int rc;
    if (!key) return yerr(y, k, "expected a key");
    if (!strcmp(key, "figure")) rc = get_name(y, v, c->figure, "figure");
    else if (!strcmp(key, "log_name")) rc = get_text(y, v, c->log_name, sizeof c->log_name, "log_name");
    else if (!strcmp(key, "defaults")) rc = load_defaults(y, v, c);
    else if (!strcmp(key, "devices")) rc = load_list(y, v, c->devices, &c->ndevices, 0, "devices");
    else if (!strcmp(key, "workloads")) rc = load_list(y, v, c->workloads, &c->nworkloads, 0, "workloads");
    else if (!strcmp(key, "systems")) rc = load_list(y, v, c->systems, &c->nsystems, 1, "systems");
    else if (!strcmp(key, "figures")) {
      if (want(y, v, YAML_SEQUENCE_NODE, "figures")) return -1;
      yaml_node_t *f;
      rc = 0;
      FOR_ITEMS(y, v, f) {
        if (c->nfigures == PC_MAX_FIGURES) return yerr(y, f, "at most %d figures", PC_MAX_FIGURES);
        if (load_figure(y, f, &c->figures[c->nfigures++])) return -1;
      }
    } else
      return yerr(y, k, "unknown key \"%s\" in plot; expected figure, log_name, defaults, "
                  "devices, workloads, systems, figures", key);
    if (rc) return -1;
  }
  if (!c->log_name[0]) return yerr(y, n, "plot needs log_name");
  if (!c->ndevices || !c->nsystems || !c->nfigures)
    return yerr(y, n, "plot needs devices, systems and figures");
  if (!strstr(c->log_name, "{device}"))
    return yerr(y, n, "log_name must contain {device}");
  return 0;
}

/* Default figure name: the folder holding the YAML (fig12/experiment.yaml -> fig12). */
static void default_figure_name(const char *path, char *dst) {
  char tmp[PT_PATH];
  snprintf(tmp, sizeof tmp, "%s", path);
  char *slash = strrchr(tmp, '/');
  if (!slash) { strcpy(tmp, "."); slash = NULL; }
  else *slash = '\0';
  const char *base = strrchr(tmp, '/');
  base = base ? base + 1 : tmp;
  if (!strcmp(base, ".") || !pt_valid_name(base)) base = "figure";
  snprintf(dst, PT_NAME, "%s", base);
}

int pc_load(const char *path, pc_config *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  FILE *in = fopen(path, "rb");
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
    return -1;
  }
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, in);
  int rc = -1;
  if (!yaml_parser_load(&parser, &doc)) {
    fprintf(stderr, "%s:%zu:%zu: YAML error: %s\n", path, parser.problem_mark.line + 1,
            parser.problem_mark.column + 1, parser.problem ? parser.problem : "?");
    goto out_parser;
  }
  ycx y = {path, &doc};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    yerr(&y, root, "expected a mapping at the top with a plot: key");
    goto out_doc;
  }
  yaml_node_t *k, *v, *plot = NULL;
  FOR_PAIRS(&y, root, k, v) {
    const char *key = scalar(k);
    if (key && !strcmp(key, "plot")) plot = v;
  }
  if (!plot) {
    yerr(&y, root, "no top-level plot: section");
    goto out_doc;
  }
  if (load_plot(&y, plot, c)) goto out_doc;
  if (!c->figure[0]) default_figure_name(path, c->figure);
  rc = 0;
out_doc:
  yaml_document_delete(&doc);
out_parser:
  yaml_parser_delete(&parser);
  fclose(in);
  return rc;
}

int pc_find(const pc_item *items, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (!strcmp(items[i].name, name)) return i;
    for (int a = 0; a < items[i].naliases; a++)
      if (!strcmp(items[i].aliases[a], name)) return i;
  }
  return -1;
}

static const char *canon(void *ctx, rd_axis axis, const char *name) {
  const pc_config *c = ctx;
  const pc_item *items = NULL;
  int n = 0;
  switch (axis) {
  case AXIS_DEVICE: items = c->devices; n = c->ndevices; break;
  case AXIS_WORKLOAD: items = c->workloads; n = c->nworkloads; break;
  case AXIS_SYSTEM: items = c->systems; n = c->nsystems; break;
  case AXIS_EXPERIMENT: return name;
  }
  int i = pc_find(items, n, name);
  return i >= 0 ? items[i].name : name;
}

rd_opts pc_reader_opts(const pc_config *c) {
  rd_opts o = {
      .figure = c->figure,
      .log_name = c->log_name,
      .default_experiment = c->default_experiment[0] ? c->default_experiment : NULL,
      .default_workload = c->default_workload[0] ? c->default_workload : NULL,
      .default_seqlen = c->default_seqlen,
      .canon = canon,
      .canon_ctx = (void *)c,
  };
  return o;
}
