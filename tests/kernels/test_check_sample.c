/* A check of sampled (batch, K/V head) groups (kernels/attention/check/check_sample.c): the
 * groups drawn, and for every workload of the registry (GQA, both masks, nsa's block lists)
 * the CPU reference of the compact cell built from the groups' slices against the slices of
 * the full cell's reference, on fresh random inputs (REPRO_TEST_SEED replays a seed). A slice
 * that cut the wrong rows, heads or columns of any input or output would make them differ. */
#include "../check.h"
#include "check/check_sample.h"
#include "harness.h"
#include "ref/ref.h"
#include "workload.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

/* The field of input id in h. */
static void **host_field(ref_host_inputs *h, attn_input_id id) {
  switch (id) {
#define ATTN_INPUT(name, ...) \
  case ATTN_IN_##name:        \
    return (void **)&h->name;
#include "inputs.def"
#undef ATTN_INPUT
  default: return NULL;
  }
}

/* The groups' slices of every input of the full cell (a shared one: the full cell's buffer). */
static void compact_inputs(const attn_sample *smp, const attn_shape *s, ref_host_inputs *full,
                           ref_host_inputs *c, void **owned) {
  memset(c, 0, sizeof *c);
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) {
    void *src = *host_field(full, (attn_input_id)id);
    owned[id] = NULL;
    if (!src) continue;
    attn_slice sl = attn_input_slice((attn_input_id)id, s);
    if (sl.shared) {
      *host_field(c, (attn_input_id)id) = src;
      continue;
    }
    size_t es = attn_input_table[id].elem_bytes;
    owned[id] = malloc(attn_slice_elems(sl) * es * (size_t)smp->n);
    attn_sample_gather(smp, sl, es, src, owned[id], attn_copy2d_host, NULL);
    *host_field(c, (attn_input_id)id) = owned[id];
  }
}

/* One output of the full cell, sliced, against the compact cell's: the same doubles. */
static void check_output(const char *what, const attn_sample *smp, attn_slice sl, size_t es,
                         const void *full, const void *compact, const char *wl) {
  if (!full) return;
  size_t n = attn_slice_elems(sl) * (size_t)smp->n;
  void *cut = malloc(n * es);
  attn_sample_gather(smp, sl, es, full, cut, attn_copy2d_host, NULL);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double a = es == 1 ? ((const uint8_t *)cut)[i] : ((const double *)cut)[i];
    double b = es == 1 ? ((const uint8_t *)compact)[i] : ((const double *)compact)[i];
    double e = fabs(a - b) / (1 + fabs(b));
    worst = e > worst || a != a ? (a != a ? INFINITY : e) : worst;
  }
  CHECKF(worst <= 1e-12,
         "%s %s: the compact cell's reference differs from the full cell's on "
         "the sampled groups by %.3e",
         wl, what, worst);
  free(cut);
}

static void check_workload(workload_id wl, const attn_shape *s, int n, uint64_t seed) {
  const char *name = workload_table[wl].name;
  ref_host_inputs hin, cin;
  void *owned[ATTN_INPUT_COUNT];
  ref_inputs_generate(wl, s, seed, &hin);
  ref_inputs in = ref_inputs_of(&hin);
  ref_outputs full, cmp;
  ref_outputs_alloc(wl, s, &full);
  ref_run(wl, s, &in, &full);
  attn_sample smp;
  attn_sample_draw(s, n, seed, &smp);
  CHECKF(smp.n == n, "%s: %d groups drawn, want %d", name, smp.n, n);
  attn_shape cs = attn_sample_shape(s, &smp);
  compact_inputs(&smp, s, &hin, &cin, owned);
  ref_inputs cinv = ref_inputs_of(&cin);
  ref_outputs_alloc(wl, &cs, &cmp);
  ref_run(wl, &cs, &cinv, &cmp);
  attn_slice so = attn_out_slice(s), sc = attn_score_slice(s);
  check_output("out", &smp, so, 8, full.out, cmp.out, name);
  check_output("score", &smp, sc, 8, full.score, cmp.score, name);
  check_output("score2", &smp, sc, 8, full.score2, cmp.score2, name);
  check_output("flags", &smp, sc, 1, full.flags, cmp.flags, name);
  check_output("corm_margin", &smp, sc, 8, full.corm_margin, cmp.corm_margin, name);
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) free(owned[id]);
  attn_sample_free(&smp);
  ref_outputs_free(&cmp);
  ref_outputs_free(&full);
  ref_inputs_free(&hin);
}

/* n distinct groups in ascending order, inside the cell; none drawn when n covers them all. */
static void test_draw(uint64_t seed) {
  attn_shape s = {3, 8, 16, 20, 20, MASK_CAUSAL, DTYPE_FP16, 4, 0, 0, 0.0, 0};
  for (int n = 1; n < 12; n++) {
    attn_sample smp;
    attn_sample_draw(&s, n, seed + (uint64_t)n, &smp);
    int ok = smp.n == n && smp.total == 12;
    for (int k = 0; k < smp.n && ok; k++)
      ok = smp.group[k] >= 0 && smp.group[k] < 12 && (k == 0 || smp.group[k] > smp.group[k - 1]);
    CHECKF(ok, "draw n=%d: n=%d total=%d", n, smp.n, smp.total);
    attn_sample_free(&smp);
  }
  attn_sample all;
  attn_sample_draw(&s, 12, seed, &all);
  CHECK(all.n == 0 && all.group == NULL);
  attn_sample_draw(&s, 0, seed, &all);
  CHECK(all.n == 0);
  attn_sample a, b;
  attn_sample_draw(&s, 5, seed, &a);
  attn_sample_draw(&s, 5, seed, &b);
  CHECK(memcmp(a.group, b.group, 5 * sizeof *a.group) == 0); /* the seed decides */
  attn_sample_free(&a);
  attn_sample_free(&b);
}

int main(void) {
  const char *env = getenv("REPRO_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("seed %" PRIu64 " (REPRO_TEST_SEED replays it)\n", seed);
  test_draw(seed);
  /* B 3, H 6 in 3 K/V heads (G 2), odd lengths, both masks; nsa with its blocks */
  attn_shape dense = {3, 6, 16, 37, 37, MASK_CAUSAL, DTYPE_FP16, 3, 0, 0, 0.0, 0};
  attn_shape nsa = {2, 4, 16, 64, 64, MASK_CAUSAL, DTYPE_FP16, 2, 16, 2, 0.0, 0};
  for (int mask = 0; mask < 2; mask++)
    for (int w = 0; w < WL_COUNT; w++) {
      int sel = workload_selected_blocks((workload_id)w);
      attn_shape s = sel ? nsa : dense;
      s.mask = mask ? MASK_NONE : MASK_CAUSAL;
      check_workload((workload_id)w, &s, sel ? 3 : 4, seed + (uint64_t)w);
    }
  return check_report();
}
