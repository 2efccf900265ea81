/* Fuzz target for the runner's YAML loaders: any bytes, as an experiment file (then its ranged
 * axes' bounds added as ad-hoc values, the matrix expanded and every command rendered) and as
 * a cluster file, must give a result or a clean error, never a crash, a leak or unbounded work.
 * Built two ways: with clang -fsanitize=fuzzer (libFuzzer supplies main) when clang exists,
 * and always as a replay driver that runs files given on the command line (the seed corpus
 * in CI). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "expand.h"
#include "util.h"

/* Matrices the fuzzer builds can be huge on purpose; the loader allows 10M cells, more than
 * a fuzzing iteration should spend. */
static int small_enough(const expfile *f) {
  long total = 0;
  for (int e = 0; e < f->nexps; e++) {
    long n = 1;
    for (int a = 0; a < f->exps[e].naxes; a++) {
      n *= f->exps[e].axes[a].values.n;
      if (n > 5000) return 0;
    }
    total += n;
  }
  return total <= 5000;
}

/* Each ranged axis takes its bounds as ad-hoc values, as an --only naming them would add. */
static void add_range_bounds(expfile *f) {
  for (int e = 0; e < f->nexps; e++)
    for (int a = 0; a < f->exps[e].naxes; a++) {
      const axis *ax = &f->exps[e].axes[a];
      if (!ax->ranged) continue;
      char lo[32], hi[32];
      snprintf(lo, sizeof lo, "%ld", ax->lo);
      snprintf(hi, sizeof hi, "%ld", ax->hi);
      expfile_add_value(f, ax->name, lo);
      expfile_add_value(f, ax->name, hi);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *err = NULL;
  expfile f;
  if (expfile_load_buffer("fuzz.yaml", (const char *)data, size, &f, &err) == 0) {
    cellset cs;
    add_range_bounds(&f);
    if (small_enough(&f) && expand(&f, NULL, NULL, 0, &cs, &err) == 0) {
      runtime_vars rt = {.bin = "/b", .root = "/r", .run_dir = "/x"};
      sbuf cmd = {0};
      for (int i = 0; i < cs.ncells; i++) {
        cell_env env = {&cs, &cs.cells[i], NULL, &rt};
        sb_clear(&cmd);
        if (cell_command(&env, &cmd, &err) != 0) {
          free(err);
          err = NULL;
        }
      }
      sb_free(&cmd);
      cellset_free(&cs);
    }
    free(err);
    err = NULL;
    expfile_free(&f);
  } else {
    free(err);
    err = NULL;
  }
  clusterfile c;
  if (cluster_load_buffer("fuzz.yaml", (const char *)data, size, &c, &err) == 0)
    cluster_free(&c);
  else
    free(err);
  return 0;
}

#ifndef REPRO_LIBFUZZER
int main(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    char *data;
    size_t len;
    if (read_file(argv[i], &data, &len) != 0) {
      fprintf(stderr, "fuzz_yaml: cannot read %s\n", argv[i]);
      printf("%d passed, 1 failed\n", files);
      return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)data, len);
    free(data);
    files++;
  }
  /* reaching here without a crash (or, under ASan, a report) is the check */
  printf("%d passed, 0 failed\n", files);
  return 0;
}
#endif
