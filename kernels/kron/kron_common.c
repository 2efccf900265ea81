/* kron_common.c: shapes, names, inputs, profile steps and the Chrome trace writer. */
#include "kron.h"

#include "harness.h"
#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const kron_version_names[KRON_NVER] = {"v1", "v2", "v3"};
const char *const kron_pass_names[2] = {"fwd", "bwd"};
const char *const kron_mode_names[3] = {"check", "profile", "bench"};
const char *const kron_fuse_names[3] = {"auto", "on", "off"};
const char *const kron_tc_names[2] = {"auto", "off"};
const char *const kron_route_names[3] = {"auto", "stages", "gemm"};

int kron_shape_init(kron_shape *s, long long batch, int m, const int *f, char *why,
                    size_t why_len) {
  memset(s, 0, sizeof *s);
  if (m < 1 || m > KRON_MAX_FACTORS) {
    snprintf(why, why_len, "expected 1 to %d factors, got %d", KRON_MAX_FACTORS, m);
    return -1;
  }
  if (batch < 1 || batch > KRON_MAX_BATCH) {
    snprintf(why, why_len, "batch must be in [1, %ld], got %lld", KRON_MAX_BATCH, batch);
    return -1;
  }
  s->m = m;
  s->batch = batch;
  s->n = 1;
  for (int k = 0; k < m; k++) {
    if (f[k] < 1 || f[k] > KRON_MAX_FACTOR) {
      snprintf(why, why_len, "factor %d is %d; every factor must be in [1, %d]", k + 1, f[k],
               KRON_MAX_FACTOR);
      return -1;
    }
    s->f[k] = f[k];
    s->aoff[k] = k ? s->aoff[k - 1] + (long long)f[k - 1] * f[k - 1] : 0;
    s->n *= f[k];
    if (s->n > (1LL << 40) || s->n * batch > (1LL << 40)) {
      snprintf(why, why_len, "B*N is beyond 2^40 elements: no memory holds it");
      return -1;
    }
  }
  s->aoff[m] = s->aoff[m - 1] + (long long)f[m - 1] * f[m - 1];
  return 0;
}

void kron_shape_name(const kron_shape *s, char *dst, size_t cap) {
  size_t len = (size_t)snprintf(dst, cap, "%lld", s->batch);
  for (int k = 0; k < s->m && len < cap; k++)
    len += (size_t)snprintf(dst + len, cap - len, "x%d", s->f[k]);
}

long long kron_prefix(const kron_shape *s, int k) {
  long long p = 1;
  for (int i = 0; i < k; i++) p *= s->f[i];
  return p;
}

long long kron_suffix(const kron_shape *s, int k) {
  long long q = 1;
  for (int i = k + 1; i < s->m; i++) q *= s->f[i];
  return q;
}

double kron_fwd_macs(const kron_shape *s) {
  double sumf = 0;
  for (int k = 0; k < s->m; k++) sumf += s->f[k];
  return (double)s->batch * (double)s->n * sumf;
}

enum {
  STREAM_X = RNG_STREAM_USER + 0,
  STREAM_GY = RNG_STREAM_USER + 1,
  STREAM_A = RNG_STREAM_USER + 2
};

void kron_fill_inputs(const kron_shape *s, uint64_t seed, float *x, float *A, float *gy) {
  long long bn = s->batch * s->n;
  for (long long e = 0; e < bn; e++) x[e] = rng_normal(seed, STREAM_X, (uint64_t)e);
  for (long long e = 0; gy && e < bn; e++) gy[e] = rng_normal(seed, STREAM_GY, (uint64_t)e);
  for (int k = 0; k < s->m; k++) {
    float scale = 1.0f / sqrtf((float)s->f[k]);
    long long ff = (long long)s->f[k] * s->f[k];
    for (long long e = 0; e < ff; e++)
      A[s->aoff[k] + e] = rng_normal(seed, STREAM_A + (uint32_t)k, (uint64_t)e) * scale;
  }
}

void kron_prof_add(kron_prof *p, const char *name, double start_us, double dur_us) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 64;
    kron_step *grown = realloc(p->steps, (size_t)cap * sizeof *grown);
    if (!grown) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory for profile steps");
    p->steps = grown;
    p->cap = cap;
  }
  kron_step *st = &p->steps[p->n++];
  snprintf(st->name, sizeof st->name, "%s", name);
  st->start_us = start_us;
  st->dur_us = dur_us;
}

void kron_prof_free(kron_prof *p) {
  free(p->steps);
  memset(p, 0, sizeof *p);
}

/* Step names are ours ([a-z0-9_.=\[\] ]); escape anyway so the JSON is always valid. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

int kron_prof_write_trace(const kron_prof *p, FILE *f, const char *process) {
  fputs("{\"traceEvents\":[\n", f);
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":");
  json_string(f, process);
  fputs("}}", f);
  for (int i = 0; i < p->n; i++) {
    const kron_step *st = &p->steps[i];
    fputs(",\n{\"name\":", f);
    json_string(f, st->name);
    fprintf(f, ",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f}",
            st->start_us, st->dur_us);
  }
  fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
  return ferror(f) ? -1 : 0;
}
