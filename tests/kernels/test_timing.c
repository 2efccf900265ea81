/* test_timing.c: the harness's timing rules that need no GPU: how many calls a timed run
 * holds (peer.py's rule: a run lasts at least 2 ms, at most 256 calls) and the result line's
 * timing=, calls_per_run= and samples_ms= fields, and its times' digits. */
#include "../check.h"
#include "harness.h"
#include "kvline.h"
#include "logverdict.h"

#include <math.h>
#include <stdlib.h>

/* The result line hx_print_result_ok writes for st and the runs' samples (NULL: none), read
 * back from a temporary file. */
static void result_line_of(const hx_stats *st, const float *samples, int runs, char *line,
                           size_t cap) {
  FILE *f = tmpfile();
  if (!f) {
    perror("tmpfile");
    exit(1);
  }
  hx_log_open(f);
  hx_print_result_ok(st, samples, runs, 2, 1.0, 1 << 20);
  hx_log_open(NULL);
  rewind(f);
  if (!fgets(line, (int)cap, f)) line[0] = '\0';
  fclose(f);
}

static void result_line(const hx_stats *st, char *line, size_t cap) {
  result_line_of(st, NULL, 10, line, cap);
}

static void test_calls_per_sample(void) {
  CHECK(hx_calls_per_sample(2.0) == 1);
  CHECK(hx_calls_per_sample(25.0) == 1);
  CHECK(hx_calls_per_sample(1.0) == 3); /* 2/1 + 1: the run is 3 ms, not 2 */
  CHECK(hx_calls_per_sample(0.5) == 5);
  CHECK(hx_calls_per_sample(0.0058) == HX_MAX_CALLS_PER_SAMPLE);
  CHECK(hx_calls_per_sample(0.0) == HX_MAX_CALLS_PER_SAMPLE);
  CHECK(hx_calls_per_sample(-1.0) == HX_MAX_CALLS_PER_SAMPLE);
  CHECK(hx_calls_per_sample(0.0 / 0.0) == 1);
  for (double ms = 0.001; ms < 4; ms *= 1.7) { /* every run lasts 2 ms unless capped */
    int calls = hx_calls_per_sample(ms);
    CHECKF(calls >= 1 && calls <= HX_MAX_CALLS_PER_SAMPLE, "%g ms: %d calls", ms, calls);
    CHECKF(calls == HX_MAX_CALLS_PER_SAMPLE || calls * ms >= HX_SAMPLE_MS, "%g ms: %d calls", ms,
           calls);
  }
}

static void test_result_fields(void) {
  char line[512];
  hx_stats st = hx_stats_of((const float[]){0.5f, 0.25f, 1.0f}, 3, (hx_timing){HX_TIMING_GRAPH, 8});
  CHECK(st.median_ms == 0.5 && st.min_ms == 0.25 && st.max_ms == 1.0);
  result_line(&st, line, sizeof line);
  CHECKF(strstr(line, " timing=graph calls_per_run=8\n") != NULL, "%s", line);

  st.timing = (hx_timing){HX_TIMING_EVENTS, 1};
  result_line(&st, line, sizeof line);
  CHECKF(strstr(line, " timing=events\n") != NULL, "%s", line);
  CHECKF(strstr(line, "calls_per_run") == NULL, "%s", line);

  st.timing = (hx_timing){HX_TIMING_LOOP, 40};
  result_line(&st, line, sizeof line);
  CHECKF(strstr(line, " timing=loop calls_per_run=40\n") != NULL, "%s", line);

  st.timing = (hx_timing){HX_TIMING_UNSAID, 0};
  result_line(&st, line, sizeof line);
  CHECKF(strstr(line, "timing=") == NULL, "%s", line);
  CHECK_STR(hx_timing_name(HX_TIMING_WALL), "wall");
}

/* samples_ms= lists each run's time in the order the runs ran, last on the line; a run of
 * more than HX_MAX_LISTED_SAMPLES lists none. */
static void test_result_samples(void) {
  static char line[16384];
  const float ms[] = {0.5f, 0.25f, 1.0f};
  hx_stats st = hx_stats_of(ms, 3, (hx_timing){HX_TIMING_EVENTS, 1});
  result_line_of(&st, ms, 3, line, sizeof line);
  CHECKF(strstr(line, " runs=3 ") != NULL, "%s", line);
  CHECKF(strstr(line, " timing=events samples_ms=0.5,0.25,1\n") != NULL, "%s", line);

  enum { MANY = HX_MAX_LISTED_SAMPLES + 1 };
  static float many[MANY];
  for (int i = 0; i < MANY; i++) many[i] = 1.0f + (float)i / MANY;
  st = hx_stats_of(many, HX_MAX_LISTED_SAMPLES, st.timing);
  result_line_of(&st, many, HX_MAX_LISTED_SAMPLES, line, sizeof line);
  const char *listed = strstr(line, "samples_ms=");
  int commas = 0;
  for (const char *p = listed; p && *p; p++) commas += *p == ',';
  CHECKF(listed && commas == HX_MAX_LISTED_SAMPLES - 1, "%d commas", commas);
  result_line_of(&st, many, MANY, line, sizeof line);
  CHECKF(strstr(line, "samples_ms") == NULL, "%.200s", line);
}

/* The significant digits of a logged number: the digits of its mantissa, leading zeros not
 * counted ("0.000032" and "3.2e-05": 2; "0.0000": 0). */
static int significant_digits(const char *v) {
  int n = 0, lead = 1;
  for (; *v && *v != 'e' && *v != 'E'; v++) {
    if (*v < '0' || *v > '9') continue;
    if (*v != '0') lead = 0;
    if (!lead) n++;
  }
  return n;
}

/* A microsecond cell: 3.2e-5 ms (32 ns) is written with at least 2 significant digits in each
 * time field (avg_ms .. max_ms, samples_ms), never 0.0000, and the kvline reader and the
 * plotter's decimal parser (lv_parse_decimal) read it back as that number; 6 digits kept. */
static void test_result_microseconds(void) {
  char line[512];
  const float ms[] = {3.2e-5f, 3.2e-5f};
  hx_stats st = hx_stats_of(ms, 2, (hx_timing){HX_TIMING_GRAPH, 256});
  result_line_of(&st, ms, 2, line, sizeof line);
  kv_record rec = {0};
  const char *err = NULL;
  CHECKF(kv_parse(&rec, line, strcspn(line, "\n"), &err) == 0, "%s: %s", line, err ? err : "");
  const char *keys[] = {"avg_ms", "median_ms", "min_ms", "max_ms", "samples_ms"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    const char *v = kv_get(&rec, keys[i]);
    CHECKF(v != NULL, "%s missing: %s", keys[i], line);
    if (!v) continue;
    size_t len = strcspn(v, ","); /* samples_ms: its first */
    CHECKF(significant_digits(v) >= 2, "%s=%s: fewer than 2 significant digits", keys[i], v);
    double back = 0;
    CHECKF(lv_parse_decimal(v, len, &back) == 0, "%s=%s is not read back", keys[i], v);
    CHECKF(fabs(back - 3.2e-5) <= 3.2e-5 * 1e-5, "%s=%s read back as %g, want 3.2e-05", keys[i], v,
           back);
  }
  kv_record_free(&rec);
  const float wide[] = {1.234567f};
  st = hx_stats_of(wide, 1, st.timing);
  result_line_of(&st, NULL, 1, line, sizeof line);
  CHECKF(strstr(line, " avg_ms=1.23457 ") != NULL, "%s", line);
}

int main(void) {
  test_calls_per_sample();
  test_result_fields();
  test_result_samples();
  test_result_microseconds();
  return check_report();
}
