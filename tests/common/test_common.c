/* common/: file reading with a cap, writing a file whole (a unique temporary, one rename),
 * mkdir -p, names, string buffers, the YAML loader (duplicate keys in linear time, the
 * position of a byte that is no UTF-8).
 *   test_common WORK_DIR */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* The names in folder dir, sorted, space-separated (static). */
static const char *listing(const char *dir) {
  static char out[1024];
  char *names[64];
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && n < 64 && (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = xstrdup(e->d_name);
  if (d) closedir(d);
  for (int i = 1; i < n; i++) /* insertion sort: a handful of names */
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", names[i]);
    free(names[i]);
  }
  return out;
}

/* The file name part of a path. */
static const char *path_base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static void test_write_whole(const char *work) {
  char *dir = xasprintf("%s/whole", work), *path = xasprintf("%s/out.txt", dir);
  char why[256] = "";
  CHECK(mkdir_p(dir, 0755) == 0);
  /* two writers of one path: each has its own temporary; the last rename wins, whole */
  afile a, b;
  CHECK(afile_open(&a, path, 0644, 0, why, sizeof why) == 0);
  CHECK(afile_open(&b, path, 0644, 0, why, sizeof why) == 0);
  CHECK(strcmp(a.tmp, b.tmp) != 0 && strncmp(a.tmp, dir, strlen(dir)) == 0);
  CHECKF(strncmp(path_base_of(a.tmp), ".out.txt.", 9) == 0 && strlen(path_base_of(a.tmp)) == 15,
         "temporary %s", a.tmp);
  fputs("from a\n", a.f);
  fputs("from b, longer\n", b.f);
  CHECK(afile_commit(&b, why, sizeof why) == 0);
  size_t len = 0;
  char *got = repro_slurp(path, 100, &len, NULL, 0);
  CHECK(got && strcmp(got, "from b, longer\n") == 0);
  free(got);
  CHECK(afile_commit(&a, why, sizeof why) == 0);
  got = repro_slurp(path, 100, &len, NULL, 0);
  CHECK(got && strcmp(got, "from a\n") == 0);
  free(got);
  CHECK_STR(listing(dir), "out.txt");
  /* abort: the file as it was, no temporary */
  CHECK(afile_open(&a, path, 0644, 0, why, sizeof why) == 0);
  fputs("dropped", a.f);
  afile_abort(&a);
  got = repro_slurp(path, 100, &len, NULL, 0);
  CHECK(got && strcmp(got, "from a\n") == 0);
  free(got);
  CHECK_STR(listing(dir), "out.txt");
  /* a rename that fails (the path is a folder): -1 naming the step, the folder kept, no
   * temporary left */
  char *sub = xasprintf("%s/sub", dir);
  CHECK(mkdir_p(sub, 0755) == 0);
  CHECK(repro_write_file(sub, "x", 1, 0644, 0, why, sizeof why) == -1 && errno == EISDIR);
  CHECKF(strstr(why, "renaming it into place failed: Is a directory") != NULL, "%s", why);
  CHECK_STR(listing(dir), "out.txt sub");
  /* a link at the path is replaced, never written through */
  char *target = xasprintf("%s/target", dir), *link = xasprintf("%s/link", dir);
  write_text(target, "target\n");
  CHECK(symlink("target", link) == 0);
  CHECK(write_file_atomic(link, "new\n", 4) == 0);
  got = repro_slurp(target, 100, &len, NULL, 0);
  CHECK(got && strcmp(got, "target\n") == 0);
  free(got);
  struct stat st;
  CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
  /* a folder that cannot be written: the reason, nothing made */
  char *none = xasprintf("%s/no/such/dir/f", dir);
  CHECK(repro_write_file(none, "x", 1, 0644, 0, why, sizeof why) == -1 && errno == ENOENT);
  CHECKF(strstr(why, "cannot create a temporary file in its folder") != NULL, "%s", why);
  char *tmpl = repro_temp_template("a/b/name.html");
  CHECK_STR(tmpl, "a/b/.name.html.XXXXXX");
  free(tmpl);
  tmpl = repro_temp_template("plain");
  CHECK_STR(tmpl, ".plain.XXXXXX");
  free(tmpl);
  free(none);
  free(target);
  free(link);
  free(sub);
  free(dir);
  free(path);
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

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A mapping of n keys k0000000: 0 ... (dup >= 0: then key dup once more), in a string. */
static char *many_keys(int n, int dup) {
  sbuf b = {0};
  for (int i = 0; i < n; i++) sb_addf(&b, "k%07d: %d\n", i, i);
  if (dup >= 0) sb_addf(&b, "k%07d: again\n", dup);
  return sb_take(&b);
}

/* Duplicate keys are found in linear time: 200,000 keys in one mapping load well under the
 * guard (comparing each key with every earlier one took minutes; 20,000 keys took 2 s), a
 * duplicate after them is reported with both lines as for a small mapping, and a 700,000-key
 * file (13 MB, under the 16 MiB cap) loads whole. */
static void test_yaml_many_keys(const char *work) {
  char *text = many_keys(200000, -1);
  double t0 = seconds();
  ydoc_err err = {0};
  ynode *root = y_parse("big.yaml", text, strlen(text), &err);
  double dt = seconds() - t0;
  CHECKF(root && root->n == 200000 && !err.msg, "%s", err.msg ? err.msg : "");
  CHECKF(dt < 20, "200000 keys took %.1f s (the guard is 20 s)", dt);
  ynode *last = y_get(root, "k0199999");
  CHECK(last && strcmp(last->str, "199999") == 0 && last->line == 200000);
  y_free(root);
  free(text);
  text = many_keys(200000, 123456);
  t0 = seconds();
  root = y_parse("big.yaml", text, strlen(text), &err);
  dt = seconds() - t0;
  CHECK(!root && err.msg);
  CHECKF(err.msg && strstr(err.msg, "big.yaml:200001:1: duplicate key 'k0123456' (first at line "
                                    "123457)"),
         "%s", err.msg ? err.msg : "");
  CHECKF(dt < 20, "200000 keys and a duplicate took %.1f s (the guard is 20 s)", dt);
  free(err.msg);
  free(text);
  /* a duplicate among keys that share a hash bucket's neighbourhood: nested, short keys */
  const char *m = yaml_error("top:\n  a: 1\n  b: 2\n  c: {x: 1, y: 2, x: 3}\n");
  CHECK(m && strstr(m, "t.yaml:4:19: duplicate key 'x' (first at line 4)"));
  char *path = xasprintf("%s/700k.yaml", work);
  text = many_keys(700000, -1);
  write_text(path, text);
  free(text);
  err = (ydoc_err){0};
  t0 = seconds();
  root = y_load_file(path, &err);
  dt = seconds() - t0;
  CHECKF(root && root->n == 700000 && !err.msg, "%s", err.msg ? err.msg : "");
  CHECKF(dt < 60, "700000 keys took %.1f s (the guard is 60 s)", dt);
  printf("YAML mappings: 700000 keys (%.1f MB) in %.2f s\n", 700000 * 19 / 1e6, dt);
  y_free(root);
  free(err.msg);
  unlink(path);
  free(path);
}

/* A byte that is no UTF-8, or a control character, is reported where it is (libyaml's reader
 * gives its offset, not a mark). */
static void test_yaml_bad_bytes(void) {
  const char *ten = "a0: 0\na1: 1\na2: 2\na3: 3\na4: 4\na5: 5\na6: 6\na7: 7\na8: 8\na9: 9\n";
  char text[256];
  snprintf(text, sizeof text, "%skey: va\xffl\n", ten);
  const char *m = yaml_error(text);
  CHECKF(m && strstr(m, "t.yaml:11:8: YAML syntax error: invalid leading UTF-8 octet (byte 0xFF): "
                        "expected UTF-8 text"),
         "%s", m ? m : "(parsed)");
  snprintf(text, sizeof text, "%skey: \xc3\xa9t\xc3\xa9\x01\n", ten); /* columns count characters */
  m = yaml_error(text);
  CHECKF(
      m && strstr(m,
                  "t.yaml:11:9: YAML syntax error: control characters are not allowed (byte 0x01)"),
      "%s", m ? m : "(parsed)");
  snprintf(text, sizeof text, "a: 1\r\nb: 2\r\nc: \xfe\r\n"); /* CRLF line ends */
  m = yaml_error(text);
  CHECKF(m && strstr(m, "t.yaml:3:4: YAML syntax error: invalid leading UTF-8 octet (byte 0xFE)"),
         "%s", m ? m : "(parsed)");
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
  test_write_whole(work);
  test_mkdir_p(work);
  test_names_and_strings();
  test_yaml(work);
  test_yaml_many_keys(work);
  test_yaml_bad_bytes();
  return check_report();
}
