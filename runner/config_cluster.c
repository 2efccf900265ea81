/* config_cluster: a cluster file becomes its devices (what a device label means under Slurm:
 * partition, gres, account, qos, mem, throttle, setup lines, vars) and its executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "template.h"

/* Values of #SBATCH options: no whitespace, nothing a shell or sbatch would split on. */
static int slurm_word(ydoc_err *err, const ynode *n, const char *what, const char **out) {
  if (n->type != Y_SCALAR || !*n->str)
    return y_error(err, n, "%s: expected a non-empty string", what);
  for (const char *p = n->str; *p; p++)
    if (!(tpl_is_shell_safe((char[]){*p, 0}) || *p == '=')) {
      char *q = quote_value(n->str), *c = quote_value((char[]){*p, 0});
      int rc =
          y_error(err, n, "%s: %s has character %s: expected [A-Za-z0-9._:,=+@%%/-]+", what, q, c);
      free(q);
      free(c);
      return rc;
    }
  *out = n->str;
  return 0;
}

static int load_device(ydoc_err *err, const ynode *k, const ynode *v, const ynode *root,
                       device_def *d) {
  static const char *const keys[] = {"partition",      "gres",          "account", "qos",  "mem",
                                     "max_concurrent", "cpus_per_task", "setup",   "vars", NULL};
  if (y_name(err, k, "device label", &d->name) != 0) return -1;
  d->at = k;
  if (y_expect(err, v, Y_MAP, "device") != 0) return -1;
  if (y_check_keys(err, v, keys, "a device") != 0) return -1;
  const ynode *n;
  if ((n = y_get(v, "partition")) && slurm_word(err, n, "partition", &d->partition) != 0) return -1;
  if ((n = y_get(v, "gres")) && slurm_word(err, n, "gres", &d->gres) != 0) return -1;
  if ((n = y_get(v, "account")) && slurm_word(err, n, "account", &d->account) != 0) return -1;
  if ((n = y_get(v, "qos")) && slurm_word(err, n, "qos", &d->qos) != 0) return -1;
  if ((n = y_get(v, "mem")) && slurm_word(err, n, "mem", &d->mem) != 0) return -1;
  if ((n = y_get(v, "max_concurrent")) &&
      cfg_key_int(err, n, "max_concurrent", 1, 100000, &d->max_concurrent) != 0)
    return -1;
  if ((n = y_get(v, "cpus_per_task")) &&
      cfg_key_int(err, n, "cpus_per_task", 1, 100000, &d->cpus_per_task) != 0)
    return -1;
  if ((n = y_get(v, "setup"))) {
    if (n->type == Y_SCALAR) {
      sv_push(&d->setup, n->str);
    } else if (n->type == Y_SEQ) {
      for (int i = 0; i < n->n; i++) {
        if (n->items[i]->type != Y_SCALAR)
          return y_error(err, n->items[i], "setup: expected a shell line");
        sv_push(&d->setup, n->items[i]->str);
      }
    } else {
      return y_error(err, n, "setup: expected a shell line or a list of lines");
    }
  }
  if ((n = y_get(root, "vars")) && cfg_load_params(err, n, "vars", &d->vars) != 0) return -1;
  if ((n = y_get(v, "vars")) && cfg_load_params(err, n, "vars", &d->vars) != 0) return -1;
  return 0;
}

int cluster_load_buffer(const char *path, const char *data, size_t len, clusterfile *c,
                        char **errmsg) {
  static const char *const keys[] = {"name", "executor", "vars", "devices", NULL};
  memset(c, 0, sizeof *c);
  ydoc_err err = {0};
  c->path = path_absolute(path);
  c->tree = y_parse(path, data, len, &err);
  if (!c->tree) goto fail;
  const ynode *root = c->tree, *n;
  if (y_check_keys(&err, root, keys, "the cluster file") != 0) goto fail;
  c->name = path_basename(c->path);
  if ((n = y_get(root, "name")) && y_name(&err, n, "name", &c->name) != 0) goto fail;
  if ((n = y_get(root, "executor"))) {
    if (n->type == Y_SCALAR && strcmp(n->str, "slurm") == 0)
      c->executor = EXEC_SLURM;
    else if (n->type == Y_SCALAR && strcmp(n->str, "local") == 0)
      c->executor = EXEC_LOCAL;
    else if (n->type == Y_SCALAR && strcmp(n->str, "auto") == 0)
      c->executor = EXEC_AUTO;
    else {
      y_error(&err, n, "executor: expected auto, slurm or local");
      goto fail;
    }
  }
  if ((n = y_get(root, "vars")) && y_expect(&err, n, Y_MAP, "vars") != 0) goto fail;
  const ynode *devs = y_get(root, "devices");
  if (!devs) {
    y_error(&err, root, "missing 'devices' (a mapping of device label to partition, gres, ...)");
    goto fail;
  }
  if (y_expect(&err, devs, Y_MAP, "devices") != 0) goto fail;
  c->devices = xcalloc((size_t)devs->n, sizeof *c->devices);
  for (int i = 0; i < devs->n; i++) {
    c->ndevices++;
    if (load_device(&err, devs->items[2 * i], devs->items[2 * i + 1], root, &c->devices[i]) != 0)
      goto fail;
  }
  return 0;
fail:
  *errmsg = err.msg ? err.msg : xasprintf("%s: invalid cluster file", path);
  cluster_free(c);
  return -1;
}

int cluster_load(const char *path, clusterfile *out, char **err) {
  char *data;
  size_t len;
  if (cfg_read_input(path, &data, &len, err) != 0) return -1;
  int rc = cluster_load_buffer(path, data, len, out, err);
  free(data);
  return rc;
}

void cluster_free(clusterfile *c) {
  for (int i = 0; i < c->ndevices; i++) {
    sv_free(&c->devices[i].setup);
    free(c->devices[i].vars.v);
  }
  free(c->devices);
  y_free(c->tree);
  free(c->path);
  memset(c, 0, sizeof *c);
}

const device_def *cluster_device(const clusterfile *c, const char *name) {
  for (int i = 0; i < c->ndevices; i++)
    if (strcmp(c->devices[i].name, name) == 0) return &c->devices[i];
  return NULL;
}
