/* check.h: the tiny assertion counter the kernels tests share. Each test ends with
 * "N passed, N failed" and exits non-zero on any failure. */
#ifndef TESTS_KERNELS_CHECK_H
#define TESTS_KERNELS_CHECK_H
#include <stdio.h>

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
static inline int check_report(void) {
  printf("%d passed, %d failed\n", check_count - check_failures, check_failures);
  return check_failures != 0;
}
#endif
