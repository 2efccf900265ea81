/* common/: file reading with a cap, mkdir -p, names, string buffers, the YAML loader.
 *   test_common WORK_DIR */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exitcode.h"
#include "fileio.h"
#include "names.h"
#include "strbuf.h"
#include "yamlnode.h"

#include "../check.h"

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static void test_slurp(const char *work) {
  char *path = xasprintf("%s/ten.txt", work), why[128] = "";
  write_text(path, "0123456789");
  size_t len = 0;
  char *data = repro_slurp(path, 100, &len, why, sizeof why);
  CHECK(data && len == 10 && strcmp(data, "0123456789") == 0);
  free(data);
  data = repro_slurp(path, 10, &len, why, sizeof why); /* exactly the cap: fine */
  CHECK(data != NULL);
  free(data);
  data = repro_slurp(path, 9, &len, why, sizeof why);
  CHECK(!data && errno == EFBIG && strstr(why, "larger than 9 bytes"));
  char *missing = xasprintf("%s/none.txt", work);
  CHECK(!repro_slurp(missing, 100, &len, why, sizeof why) && errno == ENOENT);
  CHECK(strstr(why, "No such file") != NULL);
  CHECK(!repro_slurp(work, 100, &len, why, sizeof why) && strcmp(why, "not a regular file") == 0);
  char *empty = xasprintf("%s/empty.txt", work);
  write_text(empty, "");
  data = repro_slurp(empty, 100, &len, NULL, 0);
  CHECK(data && len == 0 && data[0] == '\0');
  free(data);
  free(path);
  free(missing);
  free(empty);
}

static void test_mkdir_p(const char *work) {
  char *deep = xasprintf("%s/a/b/c", work), *file = xasprintf("%s/plain", work);
  struct stat st;
  CHECK(mkdir_p(deep, 0755) == 0 && stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(mkdir_p(deep, 0755) == 0); /* exists: fine */
  write_text(file, "x");
  char *under = xasprintf("%s/sub", file);
  CHECK(mkdir_p(under, 0755) == -1 && errno == ENOTDIR);
  free(deep);
  free(file);
  free(under);
}

static void test_names_and_strings(void) {
  CHECK(repro_is_name("kernel.h100.h2o.fused.log"));
  CHECK(!repro_is_name(".hidden") && !repro_is_name("") && !repro_is_name("a b") &&
        !repro_is_name("a/b"));
  char long_name[REPRO_NAME_MAX + 2];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  CHECK(!repro_is_name(long_name));
  long_name[REPRO_NAME_MAX] = '\0';
  CHECK(repro_is_name(long_name));
  sbuf b = {0};
  sb_add(&b, "a");
  sb_addf(&b, "%d-%s", 42, "z");
  sb_addc(&b, '!');
  char *s = sb_take(&b);
  CHECK(strcmp(s, "a42-z!") == 0 && b.s == NULL);
  free(s);
  strvec v = {0};
  sv_push(&v, "x");
  sv_push(&v, "y");
  CHECK(sv_find(&v, "y") == 1 && sv_find(&v, "z") == -1);
  sv_free(&v);
  CHECK(REPRO_EXIT_OK == 0 && REPRO_EXIT_ERROR == 1 && REPRO_EXIT_USAGE == 2 &&
        REPRO_EXIT_OOM == 3 && REPRO_EXIT_UNSUPPORTED == 4 && REPRO_EXIT_CHECK_FAILED == 5);
}

/* Parses text; returns the error message (static copy) or NULL when it parsed. */
static const char *yaml_error(const char *text) {
  static char msg[512];
  ydoc_err err = {0};
  ynode *root = y_parse("t.yaml", text, strlen(text), &err);
  y_free(root);
  if (!err.msg) return NULL;
  snprintf(msg, sizeof msg, "%s", err.msg);
  free(err.msg);
  return msg;
}

static void test_yaml(const char *work) {
  const char *m;
  CHECK(yaml_error("a: 1\nb: [x, y]\n") == NULL);
  m = yaml_error("a: 1\nb: 2\na: 3\n");
  CHECK(m && strstr(m, "t.yaml:3:1: duplicate key 'a' (first at line 1)"));
  m = yaml_error("a: &x 1\nb: *x\n");
  CHECK(m && strstr(m, "t.yaml:1:4: anchors (&name) are not supported"));
  m = yaml_error("- 1\n");
  CHECK(m && strstr(m, "t.yaml:1:1: expected a mapping at the top of the file"));
  m = yaml_error("a: [1\n");
  CHECK(m && strstr(m, "YAML syntax error"));
  ydoc_err err = {0};
  char *path = xasprintf("%s/e.yaml", work);
  write_text(path, "systems:\n  fused: {command: x}\n");
  ynode *root = y_load_file(path, &err);
  CHECK(root && !err.msg);
  ynode *fused = y_get(y_get(root, "systems"), "fused");
  CHECK(fused && fused->type == Y_MAP && fused->line == 2 && fused->col == 10);
  static const char *const keys[] = {"command", NULL};
  CHECK(y_check_keys(&err, fused, keys, "a system") == 0);
  static const char *const none[] = {"absent", NULL};
  CHECK(y_check_keys(&err, fused, none, "a system") == -1);
  CHECK(err.msg &&
        strstr(err.msg, "e.yaml:2:11: unknown key 'command' in a system: expected one of absent"));
  free(err.msg);
  y_free(root);
  err = (ydoc_err){0};
  char *missing = xasprintf("%s/none.yaml", work);
  CHECK(y_load_file(missing, &err) == NULL);
  CHECK(err.msg && strstr(err.msg, "none.yaml: cannot read: No such file"));
  free(err.msg);
  free(missing);
  free(path);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_common WORK_DIR\n");
    return 2;
  }
  const char *work = argv[1];
  char *cmd = xasprintf("rm -rf '%s'", work);
  if (system(cmd) != 0) return 1;
  free(cmd);
  if (mkdir_p(work, 0755) != 0) {
    perror(work);
    return 1;
  }
  test_slurp(work);
  test_mkdir_p(work);
  test_names_and_strings();
  test_yaml(work);
  return check_report();
}
