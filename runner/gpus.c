#include "gpus.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void push_gpu(gpu_list *l, const gpu_info *g) {
  l->gpus = xrealloc(l->gpus, (size_t)(l->n + 1) * sizeof *l->gpus);
  l->gpus[l->n++] = *g;
}

/* Copies the field [s, e) with its surrounding blanks trimmed. */
static void copy_trimmed(char *dst, size_t cap, const char *s, const char *e) {
  while (s < e && isspace((unsigned char)*s)) s++;
  while (e > s && isspace((unsigned char)e[-1])) e--;
  size_t n = (size_t)(e - s);
  if (n >= cap) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* A GPU names itself by index (digits) or UUID (GPU-/MIG- then hex digits and dashes). */
static int valid_gpu_id(const char *s) {
  if (all_digits(s)) return strlen(s) < 8;
  if (strncmp(s, "GPU-", 4) != 0 && strncmp(s, "MIG-", 4) != 0) return 0;
  size_t n = strlen(s);
  if (n < 5 || n >= sizeof(((gpu_info *)0)->uuid)) return 0;
  for (const char *p = s + 4; *p; p++)
    if (!isxdigit((unsigned char)*p) && *p != '-' && *p != '/') return 0;
  return 1;
}

void gpus_parse_smi(const char *text, gpu_list *out) {
  const char *line = text;
  while (line && *line) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    const char *c1 = memchr(line, ',', (size_t)(end - line));
    const char *c2 = c1 ? memchr(c1 + 1, ',', (size_t)(end - c1 - 1)) : NULL;
    if (c2) {
      gpu_info g = {0};
      copy_trimmed(g.index, sizeof g.index, line, c1);
      copy_trimmed(g.uuid, sizeof g.uuid, c1 + 1, c2);
      copy_trimmed(g.name, sizeof g.name, c2 + 1, end);
      if (all_digits(g.index) && valid_gpu_id(g.uuid)) push_gpu(out, &g);
    }
    line = *end ? end + 1 : NULL;
  }
}

/* nvidia-smi's rows, or an empty list when it is not on PATH or fails. */
static void smi_rows(gpu_list *out) {
  FILE *p = popen("nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader 2>/dev/null", "r");
  if (!p) return;
  sbuf text = {0};
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0 && text.len < (1u << 20))
    sb_addn(&text, buf, got);
  int rc = pclose(p);
  if (rc == 0 && text.s) gpus_parse_smi(text.s, out);
  sb_free(&text);
}

/* The row of rows that id names: an index, a full UUID or a UUID's prefix (as CUDA accepts). */
static const gpu_info *find_gpu(const gpu_list *rows, const char *id) {
  for (int i = 0; i < rows->n; i++) {
    const gpu_info *g = &rows->gpus[i];
    if (all_digits(id) ? strcmp(g->index, id) == 0 : strncmp(g->uuid, id, strlen(id)) == 0)
      return g;
  }
  return NULL;
}

/* Splits a comma-separated list of GPU ids (empty entries dropped) and resolves each against
 * rows; an id absent from rows is kept as it is when rows is empty (no nvidia-smi). */
static int resolve_ids(const char *csv, const gpu_list *rows, const char *what, gpu_list *out,
                       char **err) {
  char *copy = xstrdup(csv), *save = NULL;
  int rc = 0;
  for (char *id = strtok_r(copy, ",", &save); id && rc == 0; id = strtok_r(NULL, ",", &save)) {
    char trimmed[128];
    copy_trimmed(trimmed, sizeof trimmed, id, id + strlen(id));
    if (!trimmed[0]) continue;
    const gpu_info *g = valid_gpu_id(trimmed) ? find_gpu(rows, trimmed) : NULL;
    if (g) {
      push_gpu(out, g);
    } else if (rows->n == 0 && valid_gpu_id(trimmed)) {
      gpu_info raw = {0};
      if (all_digits(trimmed))
        copy_trimmed(raw.index, sizeof raw.index, trimmed, trimmed + strlen(trimmed));
      else
        copy_trimmed(raw.uuid, sizeof raw.uuid, trimmed, trimmed + strlen(trimmed));
      push_gpu(out, &raw);
    } else {
      char *q = quote_value(trimmed);
      *err = xasprintf("%s names GPU %s, which is not %s", what, q,
                       valid_gpu_id(trimmed) ? "among this machine's (nvidia-smi -L)"
                                             : "an index or a GPU-/MIG- UUID");
      free(q);
      rc = -1;
    }
  }
  free(copy);
  return rc;
}

int gpus_visible(gpu_list *out, char **err) {
  memset(out, 0, sizeof *out);
  gpu_list rows = {0};
  smi_rows(&rows);
  const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
  if (!cvd) {
    *out = rows;
    return 0;
  }
  int rc = resolve_ids(cvd, &rows, "CUDA_VISIBLE_DEVICES", out, err);
  gpus_free(&rows);
  if (rc != 0) gpus_free(out);
  return rc;
}

static int one_model(const gpu_list *l, char **err) {
  for (int i = 1; i < l->n; i++) {
    if (!l->gpus[0].name[0] || !l->gpus[i].name[0]) continue;
    if (strcmp(l->gpus[0].name, l->gpus[i].name) != 0) {
      *err = xasprintf("GPUs %s (%s) and %s (%s) are different models, but one run times one "
                       "device: pick GPUs of one model with --gpus LIST",
                       l->gpus[0].index, l->gpus[0].name, l->gpus[i].index, l->gpus[i].name);
      return -1;
    }
  }
  return 0;
}

int gpus_select(gpu_list *list, const char *spec, char **err) {
  if (!spec || strcmp(spec, "all") == 0) return one_model(list, err);
  if (all_digits(spec)) {
    long want = strtol(spec, NULL, 10);
    if (want < 1 || want > list->n) {
      *err = xasprintf("--gpus %s: this machine offers %d GPU(s)%s", spec, list->n,
                       list->n ? "" : " (none in CUDA_VISIBLE_DEVICES or nvidia-smi -L)");
      return -1;
    }
    list->n = (int)want;
    return one_model(list, err);
  }
  if (!strchr(spec, ',') && !valid_gpu_id(spec)) {
    char *q = quote_value(spec);
    *err = xasprintf("--gpus %s: expected all, a count, or a comma-separated list of GPU "
                     "indices or UUIDs (\"1,\" is GPU 1 alone)",
                     q);
    free(q);
    return -1;
  }
  gpu_list picked = {0};
  char *why = NULL;
  if (resolve_ids(spec, list, "--gpus", &picked, &why) != 0 || picked.n == 0) {
    *err = why ? xasprintf("%s", why) : xasprintf("--gpus %s names no GPU", spec);
    free(why);
    gpus_free(&picked);
    return -1;
  }
  for (int i = 0; i < picked.n; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(gpu_pin_value(&picked.gpus[i]), gpu_pin_value(&picked.gpus[j])) == 0) {
        *err = xasprintf("--gpus %s names GPU %s twice", spec, gpu_pin_value(&picked.gpus[i]));
        gpus_free(&picked);
        return -1;
      }
  gpus_free(list);
  *list = picked;
  return one_model(list, err);
}

const char *gpu_pin_value(const gpu_info *g) { return g->uuid[0] ? g->uuid : g->index; }

void gpus_free(gpu_list *list) {
  free(list->gpus);
  list->gpus = NULL;
  list->n = 0;
}
