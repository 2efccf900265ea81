/* logmeta: a log's meta, check and result records (see logmeta.h), read with kvline, the log
 * contract's one line parser. */
#include "logmeta.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kvline.h"

static void take(char *dst, size_t cap, const kv_record *rec, const char *key) {
  const char *v = kv_get(rec, key);
  if (v) pt_utf8_copy(dst, cap, v);
}

static void add_check(lm_meta *m, const kv_record *rec) {
  const char *ok = kv_get(rec, "ok");
  int pass = ok ? !strcmp(ok, "1") : -1; /* any value but 1 is a failure */
  m->ntotal++;
  m->npassed += pass == 1;
  m->nfailed += pass == 0;
  if (m->nchecks == LM_MAX_CHECKS) return;
  lm_check *c = &m->checks[m->nchecks++];
  take(c->output, sizeof c->output, rec, "output");
  take(c->rel_l2, sizeof c->rel_l2, rec, "rel_l2");
  c->ok = pass;
}

static void add_result(lm_meta *m, const kv_record *rec) {
  m->nresults++;
  if (m->nstatus == LM_MAX_STATUSES) return;
  take(m->status[m->nstatus], sizeof m->status[0], rec, "status");
  m->nstatus++;
}

static void take_meta(lm_meta *m, const kv_record *rec) {
  take(m->gpu, sizeof m->gpu, rec, "gpu");
  take(m->driver, sizeof m->driver, rec, "driver");
  take(m->cuda, sizeof m->cuda, rec, "cuda");
  take(m->commit, sizeof m->commit, rec, "commit");
  take(m->date, sizeof m->date, rec, "date");
  m->has_meta = 1;
}

void lm_parse(const char *buf, size_t len, lm_meta *m) {
  memset(m, 0, sizeof *m);
  kv_record rec = {0};
  const char *end = buf + len;
  for (const char *line = buf; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    size_t n = (size_t)((nl ? nl : end) - line);
    int meta = !m->has_meta && n > 5 && !strncmp(line, "meta ", 5);
    int check = n > 6 && !strncmp(line, "check ", 6);
    int result = n > 7 && !strncmp(line, "result ", 7);
    const char *err;
    if ((meta || check || result) && kv_parse(&rec, line, n, &err) == 0) {
      if (meta)
        take_meta(m, &rec);
      else if (check)
        add_check(m, &rec);
      else
        add_result(m, &rec);
    }
    line += n + 1;
  }
  kv_record_free(&rec);
}

int lm_read(const char *path, lm_meta *m) {
  size_t len = 0;
  char *buf = repro_slurp(path, REPRO_MAX_LOG_BYTES, &len, NULL, 0);
  if (!buf) {
    memset(m, 0, sizeof *m);
    return -1;
  }
  lm_parse(buf, len, m);
  free(buf);
  return 0;
}
