/* kvline_tool: common/kvline from the command line, so the Python log writer of the peers
 * (scripts/peers/kvlog.py) can be checked against the C one byte for byte.
 *
 *   kvline_tool write TAG KEY HEXVALUE [KEY HEXVALUE ...]   one record via kv_put
 *   kvline_tool parse < lines                                per line: "ok TAG KEY=HEX ..."
 *                                                            or "err MESSAGE"
 * Values travel as hex so that any byte (quotes, newlines, spaces) crosses the pipe intact. */
#include "kvline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode hex into a new NUL-terminated string; NULL on bad hex (odd length, non-hex digit). */
static char *unhex(const char *hex) {
  size_t n = strlen(hex);
  if (n % 2) return NULL;
  char *out = malloc(n / 2 + 1);
  if (!out) return NULL;
  for (size_t i = 0; i < n / 2; i++) {
    int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      free(out);
      return NULL;
    }
    out[i] = (char)(hi * 16 + lo);
  }
  out[n / 2] = '\0';
  return out;
}

static void put_hex(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) printf("%02x", *p);
}

static int do_write(int argc, char **argv) {
  if (argc < 1 || (argc - 1) % 2) {
    fprintf(stderr, "kvline_tool write: expected TAG then KEY HEXVALUE pairs\n");
    return 2;
  }
  fputs(argv[0], stdout);
  for (int i = 1; i + 1 < argc; i += 2) {
    char *val = unhex(argv[i + 1]);
    if (!val) {
      fprintf(stderr, "kvline_tool write: argument %d: bad hex value '%s'\n", i + 2, argv[i + 1]);
      return 2;
    }
    kv_put(stdout, argv[i], val);
    free(val);
  }
  fputc('\n', stdout);
  return 0;
}

static int do_parse(void) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  kv_record rec = {0};
  while ((len = getline(&line, &cap, stdin)) != -1) {
    const char *err = NULL;
    if (kv_parse(&rec, line, (size_t)len, &err) != 0) {
      printf("err %s\n", err);
      continue;
    }
    printf("ok %s", rec.tag);
    for (int i = 0; i < rec.npairs; i++) {
      printf(" %s=", rec.pairs[i].key);
      put_hex(rec.pairs[i].val);
    }
    putchar('\n');
  }
  free(line);
  kv_record_free(&rec);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "write") == 0) return do_write(argc - 2, argv + 2);
  if (argc == 2 && strcmp(argv[1], "parse") == 0) return do_parse();
  fprintf(stderr, "usage: kvline_tool write TAG KEY HEXVALUE ... | kvline_tool parse < lines\n");
  return 2;
}
