/* logdate: when a log was written, for --latest: its meta date= (UTC, as the harness writes
 * it) parsed, else its file's modification time; and the date as messages print it. */
#define _GNU_SOURCE /* timegm, gmtime_r */
#include "reader_parts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The value of the n decimal digits at s, or -1 when they are not all digits. */
static int digits_at(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* meta date= as the harness writes it (2026-11-22T00:01:46Z, UTC) in seconds since 1970, or
 * NAN when it is not that. */
double rd_parse_date(const char *s) {
  if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s[19] != 'Z')
    return NAN;
  int y = digits_at(s, 4), mo = digits_at(s + 5, 2), d = digits_at(s + 8, 2),
      h = digits_at(s + 11, 2), mi = digits_at(s + 14, 2), sec = digits_at(s + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      sec < 0 || sec > 60)
    return NAN;
  struct tm tm = {.tm_year = y - 1900,
                  .tm_mon = mo - 1,
                  .tm_mday = d,
                  .tm_hour = h,
                  .tm_min = mi,
                  .tm_sec = sec};
  return (double)timegm(&tm);
}

rd_log_date rd_log_date_of(double meta_date, const struct stat *st) {
  rd_log_date d;
  d.from_meta = !isnan(meta_date);
  d.when = d.from_meta ? meta_date : (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec * 1e-9;
  return d;
}

/* "2026-03-01T12:00:00Z", with ", file time" when the log had no meta date. */
void rd_fmt_date(const rd_log_date *d, char *buf, size_t cap) {
  time_t t = (time_t)d->when;
  struct tm tm;
  if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, cap, "?");
  if (!d->from_meta) snprintf(buf + strlen(buf), cap - strlen(buf), ", file time");
}
