/* KEYS_SELECTED_BLOCKS (nsa): the block-list generator (kernels/attention/registry/selected_blocks.c) and the CPU
 * references of the selected-block attention (kernels/attention/ref), on fresh random inputs.
 *   - every list: T entries, the first min(T, c) distinct, ascending, in [0, c) with
 *     c = max(1, t / BS), the rest the sentinel ceil(S / BS), which is not a live block;
 *     lists are a function of the seed (same seed, same lists; another seed, other lists);
 *     the draws are spread over the candidates (every block and every pair turns up);
 *   - the attended-key count from the rule alone (sb_keys_of_query, the flop count) equals
 *     the count read off the generated lists;
 *   - ref (gather) and ref_online (a scan with a membership test) equal a third formulation
 *     written here: dense attention with a mask built from the lists;
 *   - a case by hand, and GQA: a K/V head reaches exactly the query heads of its group.
 * The seed comes from the clock unless REPRO_TEST_SEED is set; it is printed. */
#include "../check.h"
#include "cost.h"
#include "harness.h"
#include "ref/ref.h"
#include "rng.h"
#include "selected_blocks.h"
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* kv_heads: the K/V heads (attn_shape.kv_heads; attnvar's --groups is heads / kv_heads). */
static attn_shape nsa_shape(int batch, int heads, int kv_heads, int dim, int seqlen, int bs,
                            int sel, int causal, double scale) {
  attn_shape s = {batch,      heads,    dim, seqlen, seqlen, causal ? MASK_CAUSAL : MASK_NONE,
                  DTYPE_FP16, kv_heads, bs,  sel,    scale,  0};
  return s;
}

static int32_t *lists_of(const attn_shape *s, uint64_t seed) {
  int32_t *idx = hx_host_alloc(attn_input_elems(ATTN_IN_block_idx, s) * sizeof *idx, "lists");
  sb_generate(s, seed, idx);
  return idx;
}

/* The structure of every list, and the key count from the lists against the rule's. */
static void test_lists(const attn_shape *s, uint64_t seed) {
  const int Hkv = shape_kv_heads(s), T = s->selected_blocks, BS = s->block_size;
  const int nblocks = (s->kv_len + BS - 1) / BS;
  int32_t *idx = lists_of(s, seed);
  int bad_len = 0, bad_order = 0, bad_range = 0, bad_pad = 0, bad_count = 0;
  double pairs = 0;
  CHECKF(sb_block_count(s) == nblocks, "sb_block_count %d, want %d", sb_block_count(s), nblocks);
  CHECK(!sb_block_live(s, nblocks) && !sb_block_live(s, s->kv_len) && !sb_block_live(s, -1));
  CHECK(sb_block_live(s, 0) && sb_block_live(s, nblocks - 1));
  for (int b = 0; b < s->batch; b++)
    for (int t = 0; t < s->q_len; t++)
      for (int g = 0; g < Hkv; g++) {
        const int32_t *l = idx + (((size_t)b * s->q_len + t) * Hkv + g) * T;
        int c = t / BS > 1 ? t / BS : 1, n = T < c ? T : c, live = 0;
        for (int e = 0; e < T; e++) live += sb_block_live(s, l[e]);
        bad_len += live != n;
        for (int e = 0; e < n; e++) {
          bad_range += l[e] < 0 || l[e] >= c;
          bad_order += e > 0 && l[e] <= l[e - 1];
        }
        for (int e = n; e < T; e++) bad_pad += l[e] != nblocks;
        /* keys the list gives this query: in a live block, inside the keys, not masked */
        int keys = 0;
        for (int e = 0; e < T; e++)
          for (int j = l[e] * BS; sb_block_live(s, l[e]) && j < (l[e] + 1) * BS; j++)
            keys += j < s->kv_len && !causal_masked(s, t, j);
        bad_count += keys != sb_keys_of_query(s, t);
        pairs += (double)keys * (s->heads / Hkv);
      }
  CHECKF(bad_len == 0, "%d lists without min(T, candidates) live blocks", bad_len);
  CHECKF(bad_order == 0, "%d lists not strictly ascending", bad_order);
  CHECKF(bad_range == 0, "%d entries outside the candidates", bad_range);
  CHECKF(bad_pad == 0, "%d lists not padded with the sentinel %d", bad_pad, nblocks);
  CHECKF(bad_count == 0, "%d queries whose listed keys differ from sb_keys_of_query", bad_count);
  CHECKF(fabs(pairs - sb_attended_pairs(s)) < 0.5, "attended pairs %.0f, sb_attended_pairs %.0f",
         pairs, sb_attended_pairs(s));
  CHECKF(fabs(workload_gflop(WL_NSA, s) - 4.0 * s->dim * pairs / 1e9) < 1e-12,
         "nsa GFLOP %g, want 4 D pairs", workload_gflop(WL_NSA, s));
  CHECKF(workload_macs(WL_NSA, s) == s->dim * pairs, "nsa macs");

  /* the seed decides: the same seed gives the same lists, another seed other ones */
  int32_t *again = lists_of(s, seed), *other = lists_of(s, seed + 1);
  size_t n = attn_input_elems(ATTN_IN_block_idx, s);
  CHECK(memcmp(idx, again, n * sizeof *idx) == 0);
  int random_lists = s->q_len > 3 * BS && T < s->q_len / BS - 1; /* some lists have a choice */
  CHECKF(!random_lists || memcmp(idx, other, n * sizeof *idx) != 0,
         "seed %llu and %llu: same lists", (unsigned long long)seed, (unsigned long long)seed + 1);
  hx_host_free(other);
  hx_host_free(again);
  hx_host_free(idx);
}

/* The draws cover the candidates evenly: queries with 4 candidates choosing 2 see each of the
 * 6 pairs about equally often (a sampler that favoured low blocks, or always the same pair,
 * fails). */
static void test_spread(uint64_t seed) {
  attn_shape s = nsa_shape(8, 1, 1, 8, 80, 16, 2, 1, 0.0); /* t in [64, 80): c = 4 */
  int32_t *idx = lists_of(&s, seed);
  int count[4][4] = {{0}}, lists = 0;
  for (int b = 0; b < s.batch; b++)
    for (int t = 64; t < 80; t++) {
      const int32_t *l = idx + ((size_t)b * s.q_len + t) * 2;
      count[l[0]][l[1]]++;
      lists++;
    }
  int seen = 0, most = 0;
  for (int x = 0; x < 4; x++)
    for (int y = x + 1; y < 4; y++) {
      seen += count[x][y] > 0;
      most = count[x][y] > most ? count[x][y] : most;
    }
  /* 128 lists over 6 pairs: about 21 each; P(some pair > 50) is below 1e-8 */
  CHECKF(seen == 6 && most <= 50, "pairs of 4 candidates: %d of 6 seen, the most %d of %d", seen,
         most, lists);
  hx_host_free(idx);
}

/* A third formulation: per (b, h, t) a dense row of S scores, -inf where the key's block is
 * not in the list (or the causal mask hides it), softmax over the row, P V. */
static void dense_masked(const attn_shape *s, const ref_host_inputs *in, double *out) {
  const int Hkv = shape_kv_heads(s), T = s->selected_blocks, D = s->dim, S = s->kv_len;
  double *row = hx_host_alloc((size_t)S * sizeof *row, "dense row");
  for (int b = 0; b < s->batch; b++)
    for (int t = 0; t < s->q_len; t++)
      for (int h = 0; h < s->heads; h++) {
        const int g = h / (s->heads / Hkv);
        const int32_t *l = in->block_idx + (((size_t)b * s->q_len + t) * Hkv + g) * T;
        char *allowed = hx_host_alloc((size_t)S, "mask row");
        memset(allowed, 0, (size_t)S);
        for (int e = 0; e < T; e++)
          for (int j = 0; j < S; j++)
            if (j / s->block_size == l[e] && !causal_masked(s, t, j)) allowed[j] = 1;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < S; j++) {
          double dot = 0;
          for (int d = 0; d < D; d++)
            dot += (double)rng_half_to_float(
                       in->q[(((size_t)b * s->q_len + t) * s->heads + h) * D + d]) *
                   rng_half_to_float(in->k[(((size_t)b * S + j) * Hkv + g) * D + d]);
          row[j] = allowed[j] ? dot * shape_scale(s) : -INFINITY;
          mx = fmax(mx, row[j]);
        }
        for (int j = 0; j < S; j++) {
          row[j] = allowed[j] ? exp(row[j] - mx) : 0.0;
          sum += row[j];
        }
        double *o = out + (((size_t)b * s->q_len + t) * s->heads + h) * D;
        for (int d = 0; d < D; d++) {
          double acc = 0;
          for (int j = 0; j < S; j++)
            acc += row[j] * rng_half_to_float(in->v[(((size_t)b * S + j) * Hkv + g) * D + d]);
          o[d] = sum > 0 ? acc / sum : 0.0;
        }
        hx_host_free(allowed);
      }
  hx_host_free(row);
}

/* ref, ref_online and the dense masked formulation agree. */
static void test_three_formulations(const attn_shape *s, uint64_t seed) {
  ref_host_inputs hin;
  ref_inputs_generate(WL_NSA, s, seed, &hin);
  CHECK(hin.block_idx != NULL && hin.exp_rand == NULL && hin.corm_mask == NULL);
  ref_inputs in = ref_inputs_of(&hin);
  ref_outputs gather, online;
  ref_outputs_alloc(WL_NSA, s, &gather);
  ref_outputs_alloc(WL_NSA, s, &online);
  ref_run(WL_NSA, s, &in, &gather);
  ref_online_run(WL_NSA, s, &in, &online);
  size_t nq = shape_q_elems(s);
  double *dense = hx_host_alloc(nq * sizeof *dense, "dense out");
  dense_masked(s, &hin, dense);
  double d1 = check_rel_l2(gather.out, dense, nq), d2 = check_rel_l2(online.out, dense, nq);
  CHECKF(d1 < 1e-12 && d2 < 1e-12,
         "S %d BS %d T %d Hkv %d causal %d: ref %g, ref_online %g off dense", s->q_len,
         s->block_size, s->selected_blocks, s->kv_heads, s->mask == MASK_CAUSAL, d1, d2);
  /* and it is not plain causal attention over every key (the selection matters) */
  attn_shape dense_shape = *s;
  dense_shape.kv_heads = 0;
  if (shape_kv_heads(s) == s->heads && s->scale == 0 && s->q_len > 2 * s->block_size) {
    ref_outputs full;
    ref_outputs_alloc(WL_ATTN, &dense_shape, &full);
    ref_inputs din = in;
    ref_run(WL_ATTN, &dense_shape, &din, &full);
    CHECKF(check_rel_l2(full.out, dense, nq) > 1e-3, "nsa equals dense attention");
    ref_outputs_free(&full);
  }
  hx_host_free(dense);
  ref_outputs_free(&online);
  ref_outputs_free(&gather);
  ref_inputs_free(&hin);
}

/* By hand: D = 1, S = 6, BS = 2, T = 2, q = k = 1 (equal logits, so P is uniform over the
 * attended keys), v = 1, 3, 5, 7, 9, 11. Candidates: t = 0..3 block 0, t = 4, 5 blocks 0, 1
 * (c = 2, both taken). Causal: t = 0 sees key 0 -> 1; t = 1..3 keys 0, 1 -> 2 (not their
 * own block's keys 2, 3); t = 4, 5 keys 0..3 -> 4. Without the mask t = 0 sees keys 0, 1 -> 2. */
static void test_by_hand(void) {
  for (int causal = 1; causal >= 0; causal--) {
    attn_shape s = nsa_shape(1, 1, 1, 1, 6, 2, 2, causal, 0.5);
    uint16_t one = rng_float_to_half(1.0f), q[6], k[6], v[6];
    for (int i = 0; i < 6; i++) q[i] = k[i] = one, v[i] = rng_float_to_half(1.0f + 2.0f * i);
    int32_t idx[12];
    sb_generate(&s, 7, idx);
    const int32_t want_idx[12] = {0, 3, 0, 3, 0, 3, 0, 3, 0, 1, 0, 1}; /* sentinel ceil(6/2) */
    CHECK(memcmp(idx, want_idx, sizeof idx) == 0);
    ref_inputs in = {.q = q, .k = k, .v = v, .block_idx = idx};
    ref_outputs o, o2;
    ref_outputs_alloc(WL_NSA, &s, &o);
    ref_outputs_alloc(WL_NSA, &s, &o2);
    ref_run(WL_NSA, &s, &in, &o);
    ref_online_run(WL_NSA, &s, &in, &o2);
    const double want[6] = {causal ? 1 : 2, 2, 2, 2, 4, 4};
    for (int t = 0; t < 6; t++)
      CHECKF(fabs(o.out[t] - want[t]) < 1e-12 && fabs(o2.out[t] - want[t]) < 1e-12,
             "causal %d row %d: ref %g online %g want %g", causal, t, o.out[t], o2.out[t], want[t]);
    /* gflop: 4 D (1 + 2 + 2 + 2 + 4 + 4) causal, 4 D (2 + 2 + 2 + 2 + 4 + 4) without */
    CHECKF(fabs(workload_gflop(WL_NSA, &s) * 1e9 - 4.0 * (causal ? 15 : 16)) < 1e-9, "gflop %g",
           workload_gflop(WL_NSA, &s));
    ref_outputs_free(&o2);
    ref_outputs_free(&o);
  }
}

/* GQA: changing K/V head g moves exactly the query heads g * H/Hkv .. (g + 1) * H/Hkv - 1. */
static void test_kv_heads(uint64_t seed) {
  attn_shape s = nsa_shape(2, 8, 2, 16, 70, 8, 3, 1, 0.0);
  ref_host_inputs hin;
  ref_inputs_generate(WL_NSA, &s, seed, &hin);
  ref_inputs in = ref_inputs_of(&hin);
  ref_outputs a, b;
  ref_outputs_alloc(WL_NSA, &s, &a);
  ref_outputs_alloc(WL_NSA, &s, &b);
  ref_run(WL_NSA, &s, &in, &a);
  for (size_t e = 0; e < shape_kv_elems(&s); e++) /* flip K/V head 1's signs */
    if ((e / s.dim) % 2 == 1) hin.k[e] ^= 0x8000, hin.v[e] ^= 0x8000;
  ref_run(WL_NSA, &s, &in, &b);
  int wrong = 0;
  for (size_t row = 0; row < (size_t)s.batch * s.q_len * s.heads; row++) {
    int h = (int)(row % s.heads), moved = 0;
    for (int d = 0; d < s.dim; d++) moved |= a.out[row * s.dim + d] != b.out[row * s.dim + d];
    wrong += moved != (h >= 4);
  }
  CHECKF(wrong == 0, "%d query rows moved (or not) against their group", wrong);
  ref_outputs_free(&b);
  ref_outputs_free(&a);
  ref_inputs_free(&hin);
}

int main(void) {
  const char *env = getenv("REPRO_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("seed %llu (set REPRO_TEST_SEED to replay)\n", (unsigned long long)seed);
  /* B, H, Hkv, D, S, BS, T, causal, scale: S not a multiple of BS, T above the candidates, one
   * query head per K/V head and all sharing one, the study's scale */
  const attn_shape shapes[] = {
      nsa_shape(2, 4, 4, 8, 100, 8, 3, 1, 0.1),   nsa_shape(1, 4, 1, 16, 77, 16, 2, 1, 0.0),
      nsa_shape(2, 6, 2, 8, 64, 4, 20, 1, 0.0),   nsa_shape(1, 2, 1, 8, 129, 32, 1, 0, 0.3),
      nsa_shape(1, 3, 3, 4, 1, 16, 4, 1, 0.0),    nsa_shape(1, 2, 2, 8, 40, 64, 2, 0, 0.0),
      nsa_shape(2, 16, 16, 32, 96, 8, 2, 1, 0.1), nsa_shape(1, 2, 2, 8, 60, 8, 2, 1, 0.0)};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    test_lists(&shapes[i], seed + i);
    test_three_formulations(&shapes[i], seed + i);
  }
  test_spread(seed);
  test_by_hand();
  test_kv_heads(seed);
  return check_report();
}
