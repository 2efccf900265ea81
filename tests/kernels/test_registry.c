/* The workload and system registries are complete: every registry workload is consistent
 * (its features have the outputs they write) and has a CPU reference, a GPU reference and
 * every GPU system (with CUDA in the build); the names are unique; the command lines list
 * exactly the registry; every input of inputs.def has a way to be drawn on the host and the
 * device, and the host draws exactly the inputs each workload has. The checks are shown to
 * fail on broken rows. No GPU needed: only host-side support functions run.
 *   test_registry PATH/TO/attnvar */
#include "../check.h"
#include "attn_system.h"
#include "ref/ref.h"
#include "rng.h"
#ifdef REPRO_HAVE_CUDA
#include "gpuref/gpuref.h"
#endif

#include <stdlib.h>
#include <string.h>

static void test_rows(void) {
  for (int w = 0; w < WL_COUNT; w++) {
    const workload_info *row = &workload_table[w];
    const char *problem = workload_row_problem(row);
    CHECKF(problem == NULL, "%s: %s", row->name, problem ? problem : "");
    CHECKF(workload_find(row->name) == w, "%s: name not unique", row->name);
    CHECKF(ref_has_workload(row), "%s: no CPU reference for its features", row->name);
#ifdef REPRO_HAVE_CUDA
    CHECKF(gpuref_has_workload(row), "%s: no GPU reference for its features", row->name);
#endif
  }
}

/* Every GPU system of the registry runs every workload at a plain shape (host-side check). */
static void test_systems_cover_workloads(void) {
  attn_shape dense = {1, 2, 64, 128, 128, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  /* selected-block workloads: GQA (2 query heads share one K/V head), 32-key blocks, 4 a list */
  attn_shape blocks = {1, 2, 64, 128, 128, MASK_CAUSAL, DTYPE_FP16, 1, 32, 4, 0.0, 0};
  int gpu_systems = 0;
  for (int i = 0; i < system_count; i++) {
    const system_entry *e = &system_table[i];
    CHECKF(system_find(e->name) == i, "system %s: name not unique", e->name);
    if (e->on_cpu) continue;
    CHECKF(e->check_against == NULL || system_find(e->check_against) >= 0,
           "system %s: check_against %s is not a system", e->name, e->check_against);
#ifdef REPRO_HAVE_CUDA
    CHECKF(e->gpu != NULL, "system %s has no implementation", e->name);
    if (!e->gpu) continue;
    if (e->peer) continue; /* test_peers_say_why */
    gpu_systems++;
    for (int w = 0; w < WL_COUNT; w++) {
      char why[256] = "";
      const attn_shape *shape = workload_selected_blocks((workload_id)w) ? &blocks : &dense;
      int rc = e->gpu->supports(NULL, (workload_id)w, shape, why, sizeof why);
      CHECKF(rc == HX_OK, "system %s lacks workload %s: %s", e->name, workload_table[w].name, why);
    }
#endif
  }
#ifdef REPRO_HAVE_CUDA
  CHECKF(gpu_systems >= 2, "only %d GPU systems registered", gpu_systems);
#else
  (void)gpu_systems;
  (void)dense;
  (void)blocks;
  printf("# built without CUDA: GPU systems and the GPU reference not checked\n");
#endif
}

/* bf16 (--dtype) runs on every GPU system and workload but fused-diag's cache kernels (h2o,
 * roco, snapkv: fp16 only), which must refuse it with the reason rather than read bf16 as
 * fp16. */
static void test_systems_cover_bf16(void) {
#ifdef REPRO_HAVE_CUDA
  attn_shape dense = {1, 2, 64, 128, 128, MASK_CAUSAL, DTYPE_BF16, ATTN_DENSE};
  attn_shape blocks = {1, 2, 64, 128, 128, MASK_CAUSAL, DTYPE_BF16, 1, 32, 4, 0.0, 0};
  int refused = 0;
  for (int i = 0; i < system_count; i++) {
    const system_entry *e = &system_table[i];
    if (e->on_cpu || !e->gpu || e->peer) continue;
    for (int w = 0; w < WL_COUNT; w++) {
      char why[256] = "";
      const attn_shape *shape = workload_selected_blocks((workload_id)w) ? &blocks : &dense;
      int rc = e->gpu->supports(NULL, (workload_id)w, shape, why, sizeof why);
      const column_kind col = workload_table[w].column; /* fused-diag's wl_cacheable */
      const int cached =
          strcmp(e->name, "fused-diag") == 0 && (col == COL_SUM || col == COL_SUM_SQ);
      if (cached) {
        refused++;
        CHECKF(rc == HX_UNSUPPORTED && strstr(why, "fp16 only"),
               "fused-diag %s in bf16: expected unsupported (fp16 only), got rc %d: %s",
               workload_table[w].name, rc, why);
      } else {
        CHECKF(rc == HX_OK, "system %s lacks bf16 for %s: %s", e->name, workload_table[w].name,
               why);
      }
    }
  }
  CHECKF(refused == 3, "fused-diag's cached workloads: %d, expected h2o, roco, snapkv", refused);
#endif
}

#ifdef REPRO_HAVE_CUDA
/* What each peer computes (its project's forward), and whether its kernels are in this build. */
typedef struct {
  const char *name;
  int built;          /* its kernels compiled in (REPRO_HAVE_<PEER>) */
  const char *option; /* the CMake option its refusal names when they are not */
  int softcap;        /* it computes the logits soft-cap (gemma2) besides the plain softmax */
  int dims[4];        /* it serves head dims 64, 96, 128, 256 (1) or refuses them (0) */
  int d80, d160;      /* it serves head dim 80 (fa3: on its hdim-96 kernel), 160 (fa3's 192: no) */
} peer_expect;

static const peer_expect peer_expectations[] = {
#ifdef REPRO_HAVE_FA3
    {"fa3", 1, "REPRO_FA3_DIR", 1, {1, 1, 1, 1}, 1, 0},
#else
    {"fa3", 0, "REPRO_FA3_DIR", 1, {0}, 0, 0},
#endif
#ifdef REPRO_HAVE_FA2
    {"fa2", 1, "REPRO_FA2_DIR", 1, {1, 1, 1, 1}, 0, 0},
#else
    {"fa2", 0, "REPRO_FA2_DIR", 1, {0}, 0, 0},
#endif
#ifdef REPRO_HAVE_FLASHINFER
    /* FlashInfer's sm_90 prefill has no head dim 96 */
    {"flashinfer", 1, "REPRO_FLASHINFER_DIR", 1, {1, 0, 1, 1}, 0, 0},
#else
    {"flashinfer", 0, "REPRO_FLASHINFER_DIR", 1, {0}, 0, 0},
#endif
};

static const peer_expect *peer_expected(const char *name) {
  for (size_t i = 0; i < sizeof peer_expectations / sizeof *peer_expectations; i++)
    if (strcmp(peer_expectations[i].name, name) == 0) return &peer_expectations[i];
  return NULL;
}
#endif

/* A peer (another project's kernels: fa3, fa2) serves the cells it computes and refuses every
 * other one with a reason, never silently: without its kernels in the build every cell is
 * refused and the reason says how to build them; with them its workloads run (fp16 and bf16,
 * causal or not) and the workloads it does not compute are refused. */
static void test_peers_say_why(void) {
#ifdef REPRO_HAVE_CUDA
  int peers = 0;
  for (int i = 0; i < system_count; i++) {
    const system_entry *e = &system_table[i];
    if (!e->peer) continue;
    peers++;
    const peer_expect *want = peer_expected(e->name);
    CHECKF(want != NULL, "peer %s: not in this test's peer_expectations", e->name);
    CHECKF(!e->on_cpu && e->gpu, "peer %s: a GPU system without an implementation", e->name);
    if (!e->gpu || !want) continue;
    for (int w = 0; w < WL_COUNT; w++) {
      const workload_info *row = &workload_table[w];
      const int computed =
          (row->logits == LOGITS_SCALED || (want->softcap && row->logits == LOGITS_SOFTCAP)) &&
          row->keys == KEYS_DENSE && row->column == COL_NONE;
      for (int variant = 0; variant < 4; variant++) {
        attn_shape sh = {2,
                         4,
                         variant & 1 ? 128 : 64,
                         256,
                         256,
                         variant & 2 ? MASK_NONE : MASK_CAUSAL,
                         variant & 1 ? DTYPE_BF16 : DTYPE_FP16,
                         ATTN_DENSE};
        char why[256] = "";
        const int rc = e->gpu->supports(NULL, (workload_id)w, &sh, why, sizeof why);
        if (!want->built)
          CHECKF(rc != HX_OK && strstr(why, want->option),
                 "peer %s built without its kernels: %s must be refused naming %s: %s", e->name,
                 row->name, want->option, why);
        const int serves = want->built && computed;
        CHECKF(serves ? rc == HX_OK : rc == HX_UNSUPPORTED && why[0] != '\0',
               "peer %s, %s (variant %d): rc %d, reason '%s'", e->name, row->name, variant, rc,
               why);
      }
    }
  }
  CHECKF(peers >= 3, "peers registered: %d (fa3, fa2 and flashinfer expected)", peers);
#endif
}

/* A built peer serves the head dims of real models its kernels have (64, 96, 128, 256: fa3 and
 * fa2 all four, flashinfer all but 96) and GQA (K/V heads dividing H), for attn (and gemma2 where
 * it has the soft-cap), and refuses the other head dims with a reason: fa3 rounds D up as
 * FlashAttention-3 does (80 runs on its hdim-96 kernel, 160 would need the unbuilt 192 one), fa2
 * and flashinfer run a kernel's own head dim only. */
static void test_peer_dims_and_gqa(void) {
#ifdef REPRO_HAVE_CUDA
  static const int dims[4] = {64, 96, 128, 256};
  for (int i = 0; i < system_count; i++) {
    const system_entry *e = &system_table[i];
    const peer_expect *want = e->peer ? peer_expected(e->name) : NULL;
    if (!e->gpu || !want || !want->built) continue;
    const int wls[2] = {workload_find("attn"), workload_find("gemma2")};
    for (int w = 0; w < (want->softcap ? 2 : 1); w++) {
      if (wls[w] < 0) continue;
      for (int d = 0; d < 6; d++) {
        const int D = d < 4 ? dims[d] : d == 4 ? 80 : 160;
        const int served = d < 4 ? want->dims[d] : d == 4 ? want->d80 : want->d160;
        /* MHA (8 K/V heads), then GQA (2 K/V heads, 4 query heads each) */
        for (int kv = 8; kv >= 1; kv /= 4) {
          attn_shape sh = {2, 8, D, 1024, 1024, MASK_CAUSAL, DTYPE_BF16, kv, 0, 0, 0.0, 0};
          char why[256] = "";
          const int rc = e->gpu->supports(NULL, (workload_id)wls[w], &sh, why, sizeof why);
          CHECKF(served ? rc == HX_OK : rc == HX_UNSUPPORTED && strstr(why, "head dim"),
                 "peer %s, %s, D=%d, %d K/V heads: rc %d, reason '%s'", e->name,
                 workload_table[wls[w]].name, D, kv, rc, why);
        }
      }
      /* K/V heads that do not divide H are refused with the reason */
      attn_shape odd = {2, 8, 128, 1024, 1024, MASK_NONE, DTYPE_FP16, 3, 0, 0, 0.0, 0};
      char why[256] = "";
      CHECKF(e->gpu->supports(NULL, (workload_id)wls[w], &odd, why, sizeof why) == HX_UNSUPPORTED &&
                 strstr(why, "K/V heads"),
             "peer %s: 8 query heads on 3 K/V heads: reason '%s'", e->name, why);
    }
  }
#endif
}

/* The checks above can fail: broken rows are caught. */
static void test_broken_rows_are_caught(void) {
  workload_info bad = workload_table[0];
  bad.column = (column_kind)99;
  CHECK(workload_row_problem(&bad) != NULL);
  CHECK(!ref_has_workload(&bad));
#ifdef REPRO_HAVE_CUDA
  CHECK(!gpuref_has_workload(&bad));
#endif
  bad = workload_table[0];
  bad.logits = (logits_kind)42;
  CHECK(workload_row_problem(&bad) != NULL);
  CHECK(!ref_has_workload(&bad));
  bad = workload_table[0];
  bad.column = COL_SUM_SQ; /* without score outputs */
  CHECK(workload_row_problem(&bad) != NULL);
  bad = workload_table[0];
  bad.select = SEL_TOPK; /* nothing to select by */
  CHECK(workload_row_problem(&bad) != NULL);
  bad = workload_table[0];
  bad.keys = (keys_kind)7;
  CHECK(workload_row_problem(&bad) != NULL);
  CHECK(!ref_has_workload(&bad));
  /* selected blocks come with P V alone: no column statistic, no e2e selection */
  bad = workload_table[WL_H2O];
  bad.keys = KEYS_SELECTED_BLOCKS;
  CHECK(workload_row_problem(&bad) != NULL);
  bad = workload_table[WL_ATTN];
  bad.keys = KEYS_SELECTED_BLOCKS;
  CHECK(workload_row_problem(&bad) == NULL);
  bad.logits = LOGITS_SOFTCAP;
  CHECK(workload_row_problem(&bad) != NULL);
  /* an implementation that lacks a feature says so for the rows that use it */
  for (int w = 0; w < WL_COUNT; w++) {
    const workload_info *row = &workload_table[w];
    unsigned without_own_column = ~0u & ~FEATURE_BIT(row->column);
    unsigned without_own_keys = ~0u & ~FEATURE_BIT(row->keys);
    CHECKF(!workload_features_within(row, ~0u, ~0u, without_own_column), "%s", row->name);
    CHECKF(!workload_features_within(row, ~0u, without_own_keys, ~0u), "%s", row->name);
    CHECKF(workload_features_within(row, FEATURE_BIT(row->logits), FEATURE_BIT(row->keys),
                                    FEATURE_BIT(row->column)),
           "%s", row->name);
  }
  bad = workload_table[0];
  bad.tol_rel_l2 = 0;
  CHECK(workload_row_problem(&bad) != NULL);
}

/* A row of inputs.def as the checks below see it: its fill column spelled out. */
typedef struct {
  const char *name;
  attn_elem elem;
  uint32_t stream;                /* FILL_NORMAL's, 0 for FILL_GEN */
  const char *host_gen, *dev_gen; /* FILL_GEN's generators as written ("NULL": none) */
  int host;
} input_row;

static const input_row input_rows[ATTN_INPUT_COUNT] = {
#define FILL_NORMAL(stream)                                    stream, NULL, NULL
#define FILL_GEN(host_fn, dev_fn)                              0, #host_fn, #dev_fn
#define ATTN_INPUT(name, elem, elems, needed, host, fill, ...) {#name, elem, fill, host},
#include "inputs.def"
#undef ATTN_INPUT
#undef FILL_GEN
#undef FILL_NORMAL
};

/* NULL when the row can be drawn wherever it is read, else why not. */
static const char *input_row_problem(const input_row *r) {
  if (r->stream) {
    if (r->elem != ELEM_DTYPE) return "FILL_NORMAL draws the cell's 16-bit type only";
    if (r->stream >= RNG_STREAM_USER) return "FILL_NORMAL's stream is one of other binaries";
    return NULL;
  }
  if (!r->host_gen || !r->dev_gen) return "neither FILL_NORMAL nor FILL_GEN";
  int host_gen = strcmp(r->host_gen, "NULL") != 0, dev_gen = strcmp(r->dev_gen, "NULL") != 0;
  if (r->host && !host_gen) return "the CPU references read it but the host cannot draw it";
  if (!dev_gen && !host_gen) return "no generator: the device has nothing to copy";
  return NULL;
}

/* Every input has a way to be drawn, a unique name and stream, and at least one workload; the
 * host draws exactly the inputs of each workload that the CPU references read. */
static void test_inputs(void) {
  attn_shape dense = {2, 3, 16, 40, 40, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  attn_shape blocks = {2, 4, 16, 64, 64, MASK_CAUSAL, DTYPE_FP16, 2, 16, 3, 0.0, 0};
  for (int id = 0; id < ATTN_INPUT_COUNT; id++) {
    const input_row *r = &input_rows[id];
    const char *problem = input_row_problem(r);
    CHECKF(problem == NULL, "input %s: %s", r->name, problem ? problem : "");
    CHECK_STR(attn_input_table[id].name, r->name);
    for (int o = 0; o < id; o++) {
      CHECKF(strcmp(input_rows[o].name, r->name) != 0, "input %s: name not unique", r->name);
      CHECKF(!r->stream || input_rows[o].stream != r->stream, "inputs %s and %s share a stream",
             input_rows[o].name, r->name);
    }
    int users = 0;
    for (int w = 0; w < WL_COUNT; w++)
      users += attn_input_needed((attn_input_id)id, (workload_id)w);
    CHECKF(users > 0, "input %s: no workload has it", r->name);
  }
  CHECK(attn_input_common(ATTN_IN_q) && attn_input_common(ATTN_IN_k) &&
        attn_input_common(ATTN_IN_v));
  CHECK(!attn_input_common(ATTN_IN_exp_rand) && workload_needs_exp_rand(WL_KF));
  for (int w = 0; w < WL_COUNT; w++) {
    const attn_shape *s = workload_selected_blocks((workload_id)w) ? &blocks : &dense;
    ref_host_inputs h;
    ref_inputs_generate((workload_id)w, s, 5, &h);
    for (int id = 0; id < ATTN_INPUT_COUNT; id++) {
      int want = attn_input_needed((attn_input_id)id, (workload_id)w) && attn_input_table[id].host;
      CHECKF((ref_host_input(&h, (attn_input_id)id) != NULL) == want, "%s: input %s %s",
             workload_table[w].name, input_rows[id].name, want ? "missing" : "drawn needlessly");
      CHECKF(!want || attn_input_elems((attn_input_id)id, s) > 0, "%s: input %s is empty",
             workload_table[w].name, input_rows[id].name);
    }
    ref_inputs_free(&h);
  }
  /* the checks can fail */
  input_row bad = {"x", ELEM_F32, RNG_STREAM_Q, NULL, NULL, 1};
  CHECK(input_row_problem(&bad) != NULL);
  bad = (input_row){"x", ELEM_I32, 0, "NULL", "gpuref_fill_x", 1};
  CHECK(input_row_problem(&bad) != NULL);
  bad.host = 0; /* read by GPU code alone, drawn on the device */
  CHECK(input_row_problem(&bad) == NULL);
  bad.dev_gen = "NULL";
  CHECK(input_row_problem(&bad) != NULL);
}

/* `attnvar --list-workloads` prints the registry, in order, and nothing else. */
static void test_list_matches(const char *attnvar) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' --list-workloads", attnvar);
  FILE *p = popen(cmd, "r");
  CHECKF(p != NULL, "cannot run %s", cmd);
  if (!p) return;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, p)) {
    line[strcspn(line, "\n")] = '\0';
    CHECKF(n < WL_COUNT && strcmp(line, workload_table[n].name) == 0,
           "--list-workloads line %d: '%s'", n + 1, line);
    n++;
  }
  CHECKF(pclose(p) == 0, "%s failed", cmd);
  CHECKF(n == WL_COUNT, "--list-workloads printed %d names, the registry has %d", n, WL_COUNT);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_registry PATH/TO/attnvar\n");
    return 2;
  }
  test_rows();
  test_systems_cover_workloads();
  test_systems_cover_bf16();
  test_peers_say_why();
  test_peer_dims_and_gqa();
  test_broken_rows_are_caught();
  test_inputs();
  test_list_matches(argv[1]);
  return check_report();
}
