/* check.h: the tiny assertion counter the C tests share. Each test ends with
 * "N passed, N failed" (check_report) and exits non-zero on any failure. */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;
#define CHECK(cond) CHECKF(cond, "%s", "")
#define CHECKF(cond, ...)                                                      \
  do {                                                                         \
    check_count++;                                                             \
    if (!(cond)) {                                                             \
      check_failures++;                                                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)
/* Two strings equal (NULL never equals anything). */
#define CHECK_STR(a, b)                                                                            \
  do {                                                                                             \
    const char *check_a_ = (a), *check_b_ = (b);                                                   \
    check_count++;                                                                                 \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                               \
      check_failures++;                                                                            \
      fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, check_a_ ? check_a_ : "(null)", \
              check_b_ ? check_b_ : "(null)");                                                     \
    }                                                                                              \
  } while (0)
/* Relative L2 distance ||got - want|| / ||want|| (absolute when want is all zero); NaN
 * anywhere makes it NaN, so both `< tol` and `> tol` assertions fail on it. */
static inline double check_rel_l2(const double *got, const double *want, size_t n) {
  double d2 = 0, w2 = 0;
  for (size_t i = 0; i < n; i++) {
    d2 += (got[i] - want[i]) * (got[i] - want[i]);
    w2 += want[i] * want[i];
  }
  return w2 > 0 ? sqrt(d2 / w2) : sqrt(d2);
}
static inline int check_report(void) {
  printf("%d passed, %d failed\n", check_count - check_failures, check_failures);
  return check_failures != 0;
}
#endif
