/* config: a loaded plot: section looked up (see config.h): an item by its name or an alias,
 * an experiment's log name template, an x: label of a row's keys, and the reader's options
 * (names made canonical through the aliases); loading it is config_load.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int pc_find(const pc_item *items, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (!strcmp(items[i].name, name)) return i;
    for (int a = 0; a < items[i].naliases; a++)
      if (!strcmp(items[i].aliases[a], name)) return i;
  }
  return -1;
}

const char *pc_log_name(const pc_config *c, const char *exp) {
  for (int i = 0; i < c->nlog_names; i++)
    if (!strcmp(c->log_exps[i], exp)) return c->log_names[i];
  return c->log_name;
}

int pc_render_x(const char *tmpl, const pt_row *r, char *out, size_t cap) {
  size_t n = 0;
  for (const char *t = tmpl; *t;) {
    const char *close = *t == '{' ? strchr(t, '}') : NULL;
    if (!close) { /* config_figures.c checked the placeholders: a '{' here always closes */
      if (n + 1 < cap) out[n++] = *t;
      t++;
      continue;
    }
    char key[PT_KEY];
    snprintf(key, sizeof key, "%.*s", (int)(close - t - 1), t + 1);
    const char *v = pt_key_value(r, key);
    if (!v) return -1;
    int w = snprintf(out + n, cap - n, "%s", v);
    n = w < 0 || (size_t)w >= cap - n ? cap - 1 : n + (size_t)w;
    t = close + 1;
  }
  out[n < cap ? n : cap - 1] = '\0';
  return 0;
}

static const char *canon(void *ctx, rd_axis axis, const char *name) {
  const pc_config *c = ctx;
  const pc_item *items = NULL;
  int n = 0;
  switch (axis) {
  case AXIS_DEVICE:
    items = c->devices;
    n = c->ndevices;
    break;
  case AXIS_WORKLOAD:
    items = c->workloads;
    n = c->nworkloads;
    break;
  case AXIS_SYSTEM:
    items = c->systems;
    n = c->nsystems;
    break;
  case AXIS_EXPERIMENT: return name;
  }
  int i = pc_find(items, n, name);
  return i >= 0 ? items[i].name : name;
}

rd_opts pc_reader_opts(const pc_config *c) {
  rd_opts o = {
      .figure = c->figure,
      .log_name = c->log_name,
      .nlog_names = c->nlog_names,
      .default_experiment = c->default_experiment[0] ? c->default_experiment : NULL,
      .default_workload = c->default_workload[0] ? c->default_workload : NULL,
      .default_keys = c->default_keys,
      .ndefault_keys = c->ndefault_keys,
      .canon = canon,
      .canon_ctx = (void *)c,
  };
  for (int i = 0; i < c->nlog_names; i++) {
    o.log_names[i] = c->log_names[i];
    o.log_experiments[i] = c->log_exps[i];
  }
  return o;
}

int pc_read_logs(const pc_config *c, const char *dir, int latest, pt_table *t, rd_issues *is) {
  struct stat st;
  if (stat(dir, &st) != 0) return 0;
  rd_opts o = pc_reader_opts(c);
  o.latest = latest;
  if (rd_read_path(&o, dir, t, is) < 0) {
    fprintf(stderr, "%s: cannot read: %s\n", dir, strerror(errno));
    return -1;
  }
  return 1;
}
