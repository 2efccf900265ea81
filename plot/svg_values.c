/* svg_values: an attribute's value as it will be written, smaller and drawing the same:
 * colours as #rgb or #rrggbb, coordinates to 0.1 units (0.01 below 10), a path of absolute
 * moves and lines (and a polygon) as h and v steps where it can, decimals without trailing
 * zeros. */
#include "svg_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const color_attrs[] = {"fill",        "stroke",     "color",
                                          "flood-color", "stop-color", NULL};
/* Attributes of coordinates, whose numbers are rounded (coord_digits). */
static const char *const coord_attrs[] = {"d",  "points", "transform", "x",      "y",  "x1", "y1",
                                          "x2", "y2",     "width",     "height", "cx", "cy", "r",
                                          "rx", "ry",     "dx",        "dy",     NULL};

/* #rrggbb from gnuplot's rgb(  0, 114, 178), a #RRGGBB or black/white; as #rgb where each pair
 * repeats a digit. 0 when v is no such colour. */
static int color_hex(const char *v, char hex[8]) {
  int r, g, b, used = 0;
  unsigned u;
  if (!strcmp(v, "black"))
    r = g = b = 0;
  else if (!strcmp(v, "white"))
    r = g = b = 255;
  else if (sscanf(v, "rgb(%d ,%d ,%d )%n", &r, &g, &b, &used) == 3 && !v[used]) {
    if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255) return 0;
  } else if (v[0] == '#' && strlen(v) == 7 && strspn(v + 1, "0123456789abcdefABCDEF") == 6 &&
             sscanf(v + 1, "%x", &u) == 1) {
    r = (int)(u >> 16), g = (int)(u >> 8 & 255), b = (int)(u & 255);
  } else {
    return 0;
  }
  if (r % 17 == 0 && g % 17 == 0 && b % 17 == 0)
    snprintf(hex, 8, "#%x%x%x", (unsigned)(r / 17) & 15, (unsigned)(g / 17) & 15,
             (unsigned)(b / 17) & 15);
  else
    snprintf(hex, 8, "#%02x%02x%02x", (unsigned)r & 255, (unsigned)g & 255, (unsigned)b & 255);
  return 1;
}

/* A number in hundredths, rounded as coordinates are: to 0.1 from 1 on, else to 0.01. */
static long long hundredths(double v) {
  return fabs(v) >= 1 ? llround(v * 10) * 10 : llround(v * 100);
}

/* Writes h hundredths as a decimal without trailing zeros ("-8.6", "3", "0.05"). */
static void put_hundredths(char **o, long long h) {
  if (h < 0) *(*o)++ = '-';
  unsigned long long a = h < 0 ? (unsigned long long)-(h + 1) + 1 : (unsigned long long)h;
  *o += sprintf(*o, "%llu", a / 100);
  unsigned f = (unsigned)(a % 100);
  if (f) *o += f % 10 ? sprintf(*o, ".%02u", f) : sprintf(*o, ".%u", f / 10);
}

/* A plain decimal number at p (-?digits[.digits]), its length in *n; 0 when there is none or it
 * is part of a longer token (an exponent, a name). */
int rs_plain_number(const char *p, const char *start, size_t *n) {
  if (p > start && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.' || p[-1] == '_' ||
                    p[-1] == '#' || p[-1] == '-'))
    return 0;
  const char *q = p + (*p == '-');
  if (*q < '0' || *q > '9') return 0;
  while (*q >= '0' && *q <= '9') q++;
  if (*q == '.' && q[1] >= '0' && q[1] <= '9')
    for (q++; *q >= '0' && *q <= '9';) q++;
  if (*q == 'e' || *q == 'E' || *q == '.' || *q == '_') return 0;
  if (!(fabs(strtod(p, NULL)) < 1e12)) return 0; /* kept as written: no coordinate */
  *n = (size_t)(q - p);
  return 1;
}

/* v with every plain number rounded as coordinates are (into o, which holds 2 * strlen(v) + 8). */
static void round_numbers(const char *v, char *o) {
  const char *p = v;
  size_t n;
  while (*p) {
    if ((*p == '-' || (*p >= '0' && *p <= '9')) && rs_plain_number(p, v, &n)) {
      put_hundredths(&o, hundredths(strtod(p, NULL)));
      p += n;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
}

/* Reads "x,y" or "x y" pairs and M/L/Z commands; the path of only these as h/v steps where a
 * segment is axis-parallel (into o). 0 when the value holds anything else (then it is only
 * rounded). polygon: v is a polygon's points, written as a closed path. */
static int compact_path(const char *v, char *o, int polygon) {
  long long cx = 0, cy = 0, sx = 0, sy = 0;
  int have = 0, segs = 0; /* segments of the subpath */
  char *back = NULL;      /* where the last segment starts when it ends at the subpath's start */
  char cmd = polygon ? 'M' : 0;
  const char *p = v;
  for (;;) {
    while (rs_is_space(*p) || *p == ',') p++;
    if (!*p) break;
    if (!polygon && (*p == 'M' || *p == 'L' || *p == 'Z' || *p == 'z')) {
      cmd = *p++;
      if (cmd == 'Z' || cmd == 'z') {
        if (back && segs > 2) o = back; /* z draws the line back to the start itself */
        *o++ = 'z';
        cx = sx, cy = sy;
        cmd = 0, back = NULL, segs = 0;
      }
      continue;
    }
    size_t n;
    if (!cmd || !rs_plain_number(p, v, &n)) return 0;
    long long x = hundredths(strtod(p, NULL));
    p += n;
    while (rs_is_space(*p) || *p == ',') p++;
    if (!rs_plain_number(p, v, &n)) return 0;
    long long y = hundredths(strtod(p, NULL));
    p += n;
    char *seg = o;
    if (cmd == 'M') {
      *o++ = 'M';
      put_hundredths(&o, x);
      *o++ = ',';
      put_hundredths(&o, y);
      sx = x, sy = y, segs = 0;
      cmd = 'L'; /* pairs after a move are lines */
    } else if (have && x == cx) {
      *o++ = 'v';
      put_hundredths(&o, y - cy);
    } else if (have && y == cy) {
      *o++ = 'h';
      put_hundredths(&o, x - cx);
    } else {
      *o++ = 'L';
      put_hundredths(&o, x);
      *o++ = ',';
      put_hundredths(&o, y);
    }
    if (seg != o && *seg != 'M') segs++;
    back = *seg != 'M' && x == sx && y == sy ? seg : NULL;
    cx = x, cy = y, have = 1;
  }
  if (!have) return 0;
  if (polygon) {
    if (back && segs > 2) o = back;
    *o++ = 'z';
  }
  *o = '\0';
  return 1;
}

/* A decimal number's length without its trailing zeros ("1.00" -> "1", "0.50" -> "0.5"), or n
 * when v is no plain decimal. */
static size_t trim_decimal(const char *v, size_t n) {
  size_t i = v[0] == '-', dot = 0;
  for (; i < n; i++)
    if (v[i] == '.' && !dot)
      dot = i;
    else if (v[i] < '0' || v[i] > '9')
      return n;
  if (!dot) return n;
  while (n > dot + 1 && v[n - 1] == '0') n--;
  return v[n - 1] == '.' ? n - 1 : n;
}

/* The value of attribute name of element elem as it will be written (without the id prefix):
 * colours, coordinates and decimals made smaller. NULL when out of memory. */
const char *rs_small_value(rs_arena *ar, const char *elem, const char *name, const char *v,
                           size_t vlen) {
  char *raw = rs_strn(ar, v, vlen);
  if (!raw) return NULL;
  char hex[8];
  if (rs_in_list(name, color_attrs) && color_hex(raw, hex)) return rs_strn(ar, hex, strlen(hex));
  if (!rs_in_list(name, coord_attrs)) {
    raw[trim_decimal(raw, vlen)] = '\0';
    return raw;
  }
  char *o = rs_alloc(ar, 2 * vlen + 8);
  if (!o) return NULL;
  if (!(rs_is(name, "d") && compact_path(raw, o, 0)) &&
      !(rs_is(name, "points") && rs_is(elem, "polygon") && compact_path(raw, o, 1)))
    round_numbers(raw, o);
  return o;
}
