/* config_impl: what the loaders' files share (config.c, config_experiment.c, config_matrix.c,
 * config_cluster.c); not part of the runner's interface (config.h). */
#ifndef RUNNER_CONFIG_IMPL_H
#define RUNNER_CONFIG_IMPL_H

#include "config.h"

/* ---- config.c ---- */

/* y_error of "<before><value quoted><after>": newlines and control bytes escaped. */
int cfg_error_q(ydoc_err *err, const ynode *at, const char *before, const char *value,
                const char *after);
/* An integer in [min, max] under `key`: the message names the key and quotes what was found. */
int cfg_key_int(ydoc_err *err, const ynode *n, const char *key, long min, long max, long *out);
/* [a-z_][a-z0-9_]*: a variable, axis or case key name. */
int cfg_is_ident(const char *s);
/* name: scalar mapping of variables (params, defaults, vars) into out (later ones win). */
int cfg_load_params(ydoc_err *err, const ynode *map, const char *what, paramlist *out);
/* A string or a list of strings (names, none twice). */
int cfg_load_names(ydoc_err *err, const ynode *n, const char *what, strvec *out);
/* Reads a whole file for a loader; -1 with *err when it cannot. */
int cfg_read_input(const char *path, char **data, size_t *len, char **err);

/* ---- config_matrix.c ---- */

/* axes: device and system required, integer axes may declare a range; device, workload and
 * system written `all` take the names m registers. */
int cfg_load_axes(ydoc_err *err, const ynode *map, const xm_model *m, experiment *e);
/* cases: a list, or named lists of which sel (NULL: 'default') is taken; *named set when the
 * lists are named; a list --cases names that e lacks leaves it without cells (*pending). */
int cfg_load_cases(ydoc_err *err, const ynode *n, const char *sel, experiment *e, int *named,
                   ydoc_err *pending);
/* exclude: items of key: value(s), each key an axis or a case key (after the cases). */
int cfg_load_exclusions(ydoc_err *err, const ynode *seq, experiment *e);
/* Frees what the three loaders above gave e. */
void cfg_free_matrix(experiment *e);

#endif
