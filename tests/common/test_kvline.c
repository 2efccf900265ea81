/* Round trips and rejections of the log line format. */
#include "kvline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static void roundtrip(const char *val) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  fputs("meta", f);
  kv_put(f, "k", val);
  kv_put(f, "z", "tail");
  fclose(f);
  kv_record rec = {0};
  const char *err = NULL;
  CHECK(kv_parse(&rec, buf, n, &err) == 0);
  CHECK(strcmp(rec.tag, "meta") == 0);
  CHECK(rec.npairs == 2);
  CHECK(kv_get(&rec, "k") && strcmp(kv_get(&rec, "k"), val) == 0);
  CHECK(kv_get(&rec, "z") && strcmp(kv_get(&rec, "z"), "tail") == 0);
  kv_record_free(&rec);
  free(buf);
}

static void rejects(const char *line) {
  kv_record rec = {0};
  const char *err = NULL;
  CHECK(kv_parse(&rec, line, strlen(line), &err) == -1);
  CHECK(err != NULL);
  kv_record_free(&rec);
}

int main(void) {
  const char *vals[] = {"plain",
                        "",
                        "NVIDIA H100 80GB HBM3",
                        "a\"b",
                        "back\\slash",
                        "x=y",
                        "new\nline",
                        "#hash",
                        "tab\there",
                        "1.2997"};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) roundtrip(vals[i]);

  kv_record rec = {0};
  const char *err = NULL;
  const char *line = "result status=ok avg_ms=1.2997 min_ms=1.2891 runs=10\r\n";
  CHECK(kv_parse(&rec, line, strlen(line), &err) == 0);
  CHECK(strcmp(rec.tag, "result") == 0 && rec.npairs == 4);
  CHECK(strcmp(kv_get(&rec, "runs"), "10") == 0);
  CHECK(kv_get(&rec, "missing") == NULL);
  kv_record_free(&rec);

  rejects("");
  rejects("   ");
  rejects("key=value only");
  rejects("tag novalue");
  rejects("tag k=\"open");
  rejects("tag k=\"closed\"junk");
  rejects("tag =v");

  return check_report();
}
