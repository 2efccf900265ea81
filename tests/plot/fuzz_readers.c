/* Fuzz target for the log readers: any bytes must be parsed or reported, never crash, hang
 * or read out of bounds. Two builds of the same entry point:
 *   - libFuzzer (clang: cmake -DCMAKE_C_COMPILER=clang ...): fuzz_plot_readers_libfuzzer
 *     CORPUS_DIR -max_total_time=60
 *   - a standalone driver (any compiler, ASan/UBSan where available) that runs the corpus
 *     files, then a fixed number of seeded random mutations of them: this is what CTest
 *     runs on every build.  fuzz_plot_readers [--iterations N] FILE_OR_DIR... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"
#include "table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    if (rd_init()) abort();
    ready = 1;
  }
  /* an exact-size heap copy, so ASan sees any read past the end */
  char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  pt_row row;
  rd_issues is = {0};
  pt_row_init(&row);
  rd_parse_buffer(buf, size, "fuzz", &row, &is);
  char name[160];
  size_t n = size < sizeof name - 1 ? size : sizeof name - 1;
  memcpy(name, buf, n);
  name[n] = '\0';
  pt_row_init(&row);
  rd_match_name("{experiment}.{device}.{workload}.{system}.log", name, &row);
  pt_row_init(&row);
  rd_match_name("{device}.{system}.{seqlen}.log", name, &row);
  rd_issues_free(&is);
  free(buf);
  return 0;
}

#ifndef PLOT_LIBFUZZER
typedef struct {
  char *data;
  size_t len;
} input;

static input inputs[512];
static int ninputs;

static void add_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f || ninputs == 512) {
    if (f) fclose(f);
    return;
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (len < 0 || len > (1 << 20)) {
    fclose(f);
    return;
  }
  char *d = malloc((size_t)len + 1);
  if (d && fread(d, 1, (size_t)len, f) == (size_t)len) {
    inputs[ninputs].data = d;
    inputs[ninputs++].len = (size_t)len;
  } else {
    free(d);
  }
  fclose(f);
}

static void add_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    add_file(path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", path, de->d_name);
    add_path(full);
  }
  closedir(d);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Pieces that steer mutations towards the interesting parsers. */
static const char *tokens[] = {"] avg ",
                               " ms, min ",
                               " ms, max ",
                               " gflops/s",
                               " (10 runs, 4 warmups, profiled)",
                               "mib=",
                               "Total Activation Memory: ",
                               " bytes",
                               "\r",
                               "\n",
                               "result status=",
                               "ok",
                               " avg_ms=",
                               "\"",
                               "\\",
                               "# repro-log 1\n",
                               "nan",
                               "1e999",
                               "-",
                               "=",
                               "\0"};

static size_t mutate(char *out, size_t cap, const input *src) {
  size_t len = src->len < cap ? src->len : cap;
  memcpy(out, src->data, len);
  int edits = 1 + (int)(next() % 8);
  for (int e = 0; e < edits; e++) {
    size_t at = len ? next() % (len + 1) : 0;
    switch (next() % 4) {
    case 0:
      if (len) out[at % len] ^= (char)(1u << (next() % 8));
      break; /* flip a bit */
    case 1:
      if (len) { len = at; }
      break; /* truncate */
    case 2:
      if (at < len) {
        size_t k = next() % (len - at + 1);
        memmove(out + at, out + at + k, len - at - k);
        len -= k;
      }
      break;
    default: { /* insert a token */
      const char *t = tokens[next() % (sizeof tokens / sizeof *tokens)];
      size_t tl = strlen(t) ? strlen(t) : 1;
      if (len + tl > cap) break;
      memmove(out + at + tl, out + at, len - at);
      memcpy(out + at, t, tl);
      len += tl;
    }
    }
  }
  return len;
}

int main(int argc, char **argv) {
  long iterations = 20000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
      iterations = atol(argv[++i]);
    else
      add_path(argv[i]);
  }
  if (ninputs == 0) {
    fprintf(stderr, "fuzz: no corpus files given\n");
    return 2;
  }
  for (int i = 0; i < ninputs; i++)
    LLVMFuzzerTestOneInput((const uint8_t *)inputs[i].data, inputs[i].len);
  size_t cap = 1 << 16;
  char *buf = malloc(cap);
  for (long it = 0; it < iterations; it++) {
    size_t n = mutate(buf, cap, &inputs[next() % (uint64_t)ninputs]);
    LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
  }
  free(buf);
  for (int i = 0; i < ninputs; i++) free(inputs[i].data);
  rd_cleanup();
  printf("fuzz: %d corpus files and %ld mutations parsed without a crash\n", ninputs, iterations);
  printf("%ld passed, 0 failed\n", (long)ninputs + iterations);
  return 0;
}
#endif
