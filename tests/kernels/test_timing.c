/* test_timing.c: the harness's timing rules that need no GPU: how many calls a timed run
 * holds (peer.py's rule: a run lasts at least 2 ms, at most 256 calls) and the result line's
 * timing= and calls_per_run= fields. */
#include "../check.h"
#include "harness.h"

#include <stdlib.h>

/* The result line hx_print_result_ok writes for st, read back from a temporary file. */
static void result_line(const hx_stats *st, char *line, size_t cap) {
  FILE *f = tmpfile();
  if (!f) {
    perror("tmpfile");
    exit(1);
  }
  hx_log_open(f);
  hx_print_result_ok(st, 10, 2, 1.0, 1 << 20);
  hx_log_open(NULL);
  rewind(f);
  if (!fgets(line, (int)cap, f)) line[0] = '\0';
  fclose(f);
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

int main(void) {
  test_calls_per_sample();
  test_result_fields();
  return check_report();
}
