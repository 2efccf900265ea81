#include "names.h"

static int is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

int repro_is_name(const char *s) {
  int n = 0;
  if (!*s || *s == '.') return 0;
  for (; *s; s++, n++)
    if (!is_name_char(*s) || n >= REPRO_NAME_MAX) return 0;
  return 1;
}
