/* test_timing.c: the harness's timing rules that need no GPU: how many calls a timed run
 * holds (peer.py's rule: a run lasts at least 2 ms, at most 256 calls) and the result line's
 * timing=, calls_per_run= and samples_ms= fields. */
#include "../check.h"
#include "harness.h"

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
  CHECKF(strstr(line, " timing=events samples_ms=0.5000,0.2500,1.0000\n") != NULL, "%s", line);

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

int main(void) {
  test_calls_per_sample();
  test_result_fields();
  test_result_samples();
  return check_report();
}
