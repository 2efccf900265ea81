/* fused-diag's host arithmetic (kernels/attention/fused_diag/diag_band.h) and options, no GPU needed:
 *  - the band: which (query block, key block) tiles are cached, in slot order;
 *  - the slots: each band tile written by exactly one forward CTA step and read by exactly one
 *    column-pass CTA step, at the same index, for the kernels' own loop bounds (causal and
 *    not, S not a multiple of the tile, and H != S / tile, where an index that mixed the head
 *    with the block index would line up only when H = S / 128);
 *  - cache_mib for given B, H, S, k, dtype;
 *  - the command line: fused-diag's options parse, land in the config line, and other systems
 *    refuse them.
 *   test_diag_band PATH/TO/attnvar */
#include "../check.h"
#include "fused_diag/diag_band.h"
#include "kvline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void test_counts(void) {
  for (long long k = 0; k <= 40; k++)
    for (long long nqb = 0; nqb <= 40; nqb++) {
      long long brute = 0;
      for (long long qb = 0; qb < nqb; qb++)
        for (long long kb = 0; kb < nqb; kb++) brute += diag_in_band(qb, kb, k);
      CHECKF(diag_tiles_per_head(nqb, k) == brute, "nqb=%lld k=%lld: %lld != %lld", nqb, k,
             diag_tiles_per_head(nqb, k), brute);
      CHECK(diag_band_pairs(nqb, k, NULL, 0) == brute);
    }
  /* k = 1: the diagonal only; k >= nqb: the whole lower triangle */
  CHECK(diag_tiles_per_head(32, 1) == 32);
  CHECK(diag_tiles_per_head(32, 32) == 32 * 33 / 2);
  CHECK(diag_tiles_per_head(32, 1000) == 32 * 33 / 2);
  CHECK(diag_tiles_per_head(32, 0) == 0);
}

static void test_pairs_in_slot_order(void) {
  long long pairs[64][2];
  long long n = diag_band_pairs(5, 2, pairs, 64);
  const long long want[][2] = {{0, 0}, {1, 1}, {1, 0}, {2, 2}, {2, 1},
                               {3, 3}, {3, 2}, {4, 4}, {4, 3}};
  CHECK(n == 9);
  for (long long i = 0; i < n && i < 9; i++) {
    CHECKF(pairs[i][0] == want[i][0] && pairs[i][1] == want[i][1], "pair %lld: (%lld, %lld)", i,
           pairs[i][0], pairs[i][1]);
    CHECK(diag_slot(pairs[i][0], pairs[i][1], 2) == i);
    CHECK(diag_in_band(pairs[i][0], pairs[i][1], 2));
  }
  CHECK(!diag_in_band(2, 3, 2)); /* above the diagonal */
  CHECK(!diag_in_band(3, 1, 2)); /* too far left */
  CHECK(!diag_in_band(0, -1, 5));
  /* the buffer limit is respected, the count is not */
  CHECK(diag_band_pairs(5, 2, pairs, 3) == 9);
}

/* The kernels' loops over one (batch, head) with Lq = Lkv = S, tile T: the forward CTA of
 * query block qb visits key blocks 0 .. nblocks - 1 and stores the band's; the column-pass CTA
 * of key block kb visits query blocks qb0 .. nqb - 1 and reads the band's. Every slot of every
 * (b, h) must be written once and read once, by the same tile, and the global indices
 * (b * H + h) * tph + slot must cover [0, B * H * tph) exactly. */
static void simulate(int B, int H, int S, int T, int k, int causal) {
  const long long nqb = diag_blocks(S, T), nkb = diag_blocks(S, T);
  const long long tph = diag_tiles_per_head(nqb, k);
  const long long total = (long long)B * H * tph;
  const int offset = causal ? 0 : S; /* mask_offset for Lq = Lkv */
  int *written = calloc((size_t)(total ? total : 1), sizeof *written);
  int *read = calloc((size_t)(total ? total : 1), sizeof *read);
  long long *writer = calloc((size_t)(total ? total : 1), sizeof *writer);
  int bad = 0;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++) {
      const long long bh = (long long)b * H + h;
      for (long long qb = 0; qb < nqb; qb++) { /* P1 */
        long long last_row = (qb + 1) * T < S ? (qb + 1) * T - 1 : S - 1;
        long long kv_end = last_row + offset + 1 < S ? last_row + offset + 1 : S;
        long long nblocks = (kv_end + T - 1) / T;
        for (long long n = 0; n < nblocks; n++)
          if (diag_in_band(qb, n, k)) {
            long long idx = bh * tph + diag_slot(qb, n, k);
            if (idx < 0 || idx >= total) {
              bad++;
              continue;
            }
            written[idx]++;
            writer[idx] = qb * nkb + n;
          }
      }
      for (long long kb = 0; kb < nkb; kb++) { /* P4 */
        long long first_row = kb * T - offset > 0 ? kb * T - offset : 0;
        for (long long n = first_row / T; n < nqb; n++)
          if (diag_in_band(n, kb, k)) {
            long long idx = bh * tph + diag_slot(n, kb, k);
            if (idx < 0 || idx >= total) {
              bad++;
              continue;
            }
            read[idx]++;
            if (writer[idx] != n * nkb + kb) bad++;
          }
      }
    }
  for (long long i = 0; i < total; i++) bad += written[i] != 1 || read[i] != 1;
  CHECKF(bad == 0, "B=%d H=%d S=%d T=%d k=%d causal=%d: %d slots wrong", B, H, S, T, k, causal,
         bad);
  free(written);
  free(read);
  free(writer);
}

static void test_slots(void) {
  const int seqs[] = {1, 17, 100, 128, 257, 1000, 4096};
  const int ks[] = {1, 2, 4, 31, 100};
  for (size_t si = 0; si < sizeof seqs / sizeof *seqs; si++)
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
      for (int T = 64; T <= 128; T *= 2) {
        simulate(2, 3, seqs[si], T, ks[ki], 1); /* H = 3 != S / T */
        simulate(1, 1, seqs[si], T, ks[ki], 0);
      }
  simulate(1, 32, 4096, 128, 4, 1); /* the seed's shape, where H = S / 128 */
  simulate(1, 5, 4096, 128, 4, 1);  /* and one where it is not */
  simulate(2, 7, 1000, 64, 3, 1);
}

static void test_cache_bytes(void) {
  /* B=1 H=32 S=4096 T=128: k=1 caches the 32 diagonal tiles per head */
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 1, 4) == 1024ull * (128 * 128 * 4 + 128 * 4));
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 1, 2) == 1024ull * (128 * 128 * 2 + 128 * 4));
  /* k=31: 31*32/2 + 1*31 = 527 tiles per head */
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 31, 4) == 32ull * 527 * (65536 + 512));
  /* 64.5 MiB for k=1 fp32; 1062.2 MiB for k=31 fp32 */
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 1, 4) == 67633152ull);
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 31, 4) == 1113833472ull);
  /* S not a multiple of the tile: 1000 / 128 -> 8 query blocks; B=2 H=3 k=2: 15 tiles each */
  CHECK(diag_cache_bytes(2, 3, 1000, 128, 2, 2) == 6ull * 15 * (128 * 128 * 2 + 512));
  CHECK(diag_cache_bytes(1, 1, 1, 64, 4, 4) == 64ull * 64 * 4 + 256);
  CHECK(diag_cache_bytes(1, 32, 4096, 128, 0, 4) == 0);
}

/* ---- the command line ------------------------------------------------------------------ */
static const char *attnvar;

static int run(const char *args, char **out) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", attnvar, args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t len = 0;
  char *buf = NULL;
  FILE *mem = open_memstream(&buf, &len);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) fwrite(chunk, 1, n, mem);
  fclose(mem);
  int st = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The config line's value of key (static buffer), or "" when absent. */
static const char *config_value(const char *log, const char *key) {
  static char val[256];
  val[0] = '\0';
  const char *line = strstr(log, "\nconfig ");
  if (!line) return val;
  line++;
  size_t len = strcspn(line, "\n");
  kv_record rec;
  memset(&rec, 0, sizeof rec); /* kv_parse reuses the record's buffer */
  const char *err = NULL;
  const char *v = kv_parse(&rec, line, len, &err) == 0 ? kv_get(&rec, key) : NULL;
  if (v) snprintf(val, sizeof val, "%s", v);
  kv_record_free(&rec);
  return val;
}

static void test_cli(void) {
  char *out = NULL;
  int rc = run("--list-systems", &out);
  CHECK(rc == 0 && strstr(out, "fused-diag\tgpu\t") != NULL);
  free(out);
  /* CPU mode (the reference runs; the options are recorded) */
  rc = run("--workload h2o --system fused-diag --device cpu --seqlen 32 --heads 2 --dim 16 "
           "--diag-k 2 --cache-dtype fp16 --phase-times",
           &out);
  CHECKF(rc == 0, "rc=%d: %s", rc, out);
  CHECK_STR(config_value(out, "system"), "fused-diag");
  CHECK_STR(config_value(out, "diag_k"), "2");
  CHECK_STR(config_value(out, "cache_dtype"), "fp16");
  free(out);
  rc = run("--workload h2o --system fused-diag --device cpu --seqlen 32 --heads 2 --dim 16", &out);
  CHECK(rc == 0);
  CHECK_STR(config_value(out, "diag_k"), "0");
  CHECK_STR(config_value(out, "cache_dtype"), "fp32");
  free(out);
  /* other systems refuse the options, naming the one given */
  const char *refused[] = {"--system fused --diag-k 1", "--system unfused --phase-times",
                           "--system ref --cache-dtype fp16"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    char args[256];
    snprintf(args, sizeof args, "--workload h2o %s --device cpu --seqlen 8", refused[i]);
    rc = run(args, &out);
    CHECKF(rc == 2 && strstr(out, "is an option of --system fused-diag") != NULL, "%s: rc=%d %s",
           refused[i], rc, out);
    free(out);
  }
  /* bad values */
  const char *bad[] = {"--diag-k -1",       "--diag-k 65537", "--diag-k x",
                       "--cache-dtype fp8", "--cache-dtype",  "--diag-k"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[256];
    snprintf(args, sizeof args, "--workload h2o --system fused-diag --device cpu %s", bad[i]);
    rc = run(args, &out);
    CHECKF(rc == 2, "%s: rc=%d %s", bad[i], rc, out);
    free(out);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_diag_band PATH/TO/attnvar\n");
    return 2;
  }
  attnvar = argv[1];
  test_counts();
  test_pairs_in_slot_order();
  test_slots();
  test_cache_bytes();
  test_cli();
  return check_report();
}
