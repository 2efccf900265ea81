/* test_e2e_safetensors: the safetensors header parser and the weight loader.
 *   - headers held in memory: a valid one (metadata, escapes, extra keys) parses to the right
 *     tensors; broken ones fail with "line L, column C: expected ..." naming what was wanted;
 *   - a tiny model written as a Llama checkpoint (HF names, q/k/v and gate/up split, layers in
 *     reverse order, the final norm as F32) and loaded by llama_e2e --device cpu --weights gives
 *     bit-identical final hidden states to the same weights drawn from the seed;
 *   - a checkpoint missing a tensor, or with a wrong shape, fails naming the tensor.
 * The files are written by this test into a temp dir (fixtures made here, not real weights).
 * Usage: test_e2e_safetensors path/to/llama_e2e */
#include "ref_model.h"
#include "rng.h"
#include "safetensors.h"

#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void expect_parse_error(const char *json, const char *want) {
  st_file f;
  char err[512] = "";
  int rc = st_parse_header("mem.safetensors", json, strlen(json), 64, &f, err, sizeof err);
  CHECKF(rc == -1, "accepted: %s", json);
  CHECKF(strstr(err, want) != NULL, "for %s: message '%s' lacks '%s'", json, err, want);
  CHECKF(strstr(err, "mem.safetensors: header line 1, column") != NULL ||
             strstr(want, "line") != NULL,
         "message names file, line and column: %s", err);
}

static void test_parser(void) {
  const char *ok_json =
      "{\"__metadata__\":{\"format\":\"pt\",\"n\":[1,2.5e3,{\"x\":null}]},"
      " \"a\\u00e9\\n\": "
      "{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12],\"extra\":true},\n"
      "\"b\":{\"shape\":[],\"dtype\":\"F32\",\"data_offsets\":[12,16]} }";
  st_file f;
  char err[512] = "";
  int rc = st_parse_header("mem", ok_json, strlen(ok_json), 16, &f, err, sizeof err);
  CHECKF(rc == 0, "%s", err);
  if (rc == 0) {
    CHECK(f.count == 2);
    CHECK(strcmp(f.tensors[0].name, "a\xc3\xa9\n") == 0);
    CHECK(f.tensors[0].dtype == ST_F16 && f.tensors[0].ndim == 2 && f.tensors[0].shape[1] == 3);
    CHECK(f.tensors[0].begin == 0 && f.tensors[0].end == 12);
    CHECK(f.tensors[1].dtype == ST_F32 && f.tensors[1].ndim == 0 && f.tensors[1].end == 16);
    st_free(&f);
  }
  expect_parse_error("[]", "'{' opening the header");
  expect_parse_error("{\"a\" {}}", "':'");
  expect_parse_error("{\"a\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,2]}}",
                     "a safetensors dtype");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[1]}}", "dtype, shape and data_offsets");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,6]}}",
                     "8 bytes for dtype F16");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[64],\"data_offsets\":[0,128]}}",
                     "within the 64 data bytes");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[-1],\"data_offsets\":[0,2]}}",
                     "a non-negative integer");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[01],\"data_offsets\":[0,2]}}",
                     "no leading zero");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}} x",
                     "the end of the header");
  expect_parse_error("{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}",
                     "',' or '}'");
  expect_parse_error("{\"a", "a closing '\"'");
  expect_parse_error("{\"a\\q\":1}", "one of \\\"");
  /* line and column are counted: the bad value sits on line 2, column 6 */
  expect_parse_error("{\"a\":\n{\"x\":@}}", "header line 2, column 6: expected a JSON value");
}

/* ---- writing a checkpoint ----------------------------------------------------------------- */

typedef struct {
  char name[96];
  int f32, ndim;
  long long shape[2];
  const double *src; /* row-major values (exact fp16 values) */
} out_tensor;

static int write_safetensors(const char *path, const out_tensor *t, int n) {
  char *json = malloc(1 << 20);
  size_t len = 0, off = 0;
  len += (size_t)sprintf(json + len, "{\"__metadata__\":{\"format\":\"pt\"}");
  for (int i = 0; i < n; i++) {
    size_t elems = (size_t)t[i].shape[0] * (size_t)(t[i].ndim == 2 ? t[i].shape[1] : 1);
    size_t bytes = elems * (t[i].f32 ? 4 : 2);
    if (t[i].ndim == 2)
      len += (size_t)sprintf(
          json + len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
          t[i].name, t[i].f32 ? "F32" : "F16", t[i].shape[0], t[i].shape[1], off, off + bytes);
    else
      len += (size_t)sprintf(
          json + len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
          t[i].name, t[i].f32 ? "F32" : "F16", t[i].shape[0], off, off + bytes);
    off += bytes;
  }
  len += (size_t)sprintf(json + len, "}");
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(json);
    return -1;
  }
  unsigned char size8[8];
  for (int i = 0; i < 8; i++) size8[i] = (unsigned char)((uint64_t)len >> (8 * i));
  fwrite(size8, 1, 8, f);
  fwrite(json, 1, len, f);
  for (int i = 0; i < n; i++) {
    size_t elems = (size_t)t[i].shape[0] * (size_t)(t[i].ndim == 2 ? t[i].shape[1] : 1);
    for (size_t e = 0; e < elems; e++) {
      if (t[i].f32) {
        float v = (float)t[i].src[e];
        fwrite(&v, 4, 1, f);
      } else {
        uint16_t h = rng_float_to_half((float)t[i].src[e]);
        fwrite(&h, 2, 1, f);
      }
    }
  }
  free(json);
  return fclose(f);
}

#define TINY                                                                                     \
  "--layers 2 --hidden 256 --heads 4 --mlp 688 --vocab 1000 --seqlen 64 --keep 16 --keep-std 8 " \
  "--corm-cap 16"

static int run(const char *bin, const char *args, const char *err_file) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "'%s' --workload h2o --system ref --runs 1 --warmup 0 --no-check " TINY
           " %s >/dev/null 2>%s",
           bin, args, err_file);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int same_file(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb) same = 0;
    if (ca == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static int file_has(const char *path, const char *needle) {
  FILE *f = fopen(path, "rb");
  static char buf[1 << 14];
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = '\0';
  return strstr(buf, needle) != NULL;
}

static void test_round_trip(const char *bin) {
  e2e_config c;
  e2e_config_default(&c);
  c.layers = 2, c.hidden = 256, c.heads = 4, c.head_dim = 64, c.mlp = 688, c.vocab = 1000,
  c.seqlen = 64;
  c.workload = WL_H2O, c.keep = 16, c.keep_std = 8, c.corm_cap = 16;
  e2e_ref_model m;
  e2e_ref_model_alloc(&m, &c);
  e2e_ref_model_draw(&m);
  const long long h = c.hidden, f = c.mlp;
  out_tensor t[2 + 9 * 2];
  int n = 0;
  t[n++] = (out_tensor){"model.norm.weight", 1, 1, {h, 0}, m.final_norm};
  for (int l = c.layers - 1; l >= 0; l--) { /* reverse order: the loader must not care */
    const e2e_ref_layer *w = &m.layer[l];
    struct {
      const char *suffix;
      long long r, cols;
      const double *src;
    } parts[] = {{"input_layernorm.weight", h, 0, w->attn_norm},
                 {"self_attn.q_proj.weight", h, h, w->wqkv},
                 {"self_attn.k_proj.weight", h, h, w->wqkv + h * h},
                 {"self_attn.v_proj.weight", h, h, w->wqkv + 2 * h * h},
                 {"self_attn.o_proj.weight", h, h, w->wo},
                 {"post_attention_layernorm.weight", h, 0, w->mlp_norm},
                 {"mlp.gate_proj.weight", f, h, w->wgu},
                 {"mlp.up_proj.weight", f, h, w->wgu + f * h},
                 {"mlp.down_proj.weight", h, f, w->wdown}};
    for (int p = 0; p < 9; p++) {
      out_tensor *o = &t[n++];
      snprintf(o->name, sizeof o->name, "model.layers.%d.%s", l, parts[p].suffix);
      o->f32 = 0, o->ndim = parts[p].cols ? 2 : 1;
      o->shape[0] = parts[p].r, o->shape[1] = parts[p].cols;
      o->src = parts[p].src;
    }
  }
  t[n++] = (out_tensor){"model.embed_tokens.weight", 0, 2, {c.vocab, h}, m.embed};

  char dir[] = "/tmp/e2e_stXXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char ckpt[256], a[256], b[256], errf[256], args[1024];
  snprintf(ckpt, sizeof ckpt, "%s/model.safetensors", dir);
  snprintf(a, sizeof a, "%s/drawn.f32", dir);
  snprintf(b, sizeof b, "%s/loaded.f32", dir);
  snprintf(errf, sizeof errf, "%s/stderr", dir);
  CHECK(write_safetensors(ckpt, t, n) == 0);
  snprintf(args, sizeof args, "--dump %s", a);
  CHECK(run(bin, args, errf) == 0);
  snprintf(args, sizeof args, "--weights %s --dump %s", ckpt, b);
  int rc = run(bin, args, errf);
  CHECKF(rc == 0, "loading the checkpoint: exit %d", rc);
  CHECKF(same_file(a, b), "hidden states from the loaded checkpoint differ from the drawn weights");

  /* missing tensor: drop the up projection of layer 1 (entry 1 + 7) */
  out_tensor saved = t[8];
  memmove(&t[8], &t[9], (size_t)(n - 9) * sizeof *t);
  CHECK(write_safetensors(ckpt, t, n - 1) == 0);
  snprintf(args, sizeof args, "--weights %s", ckpt);
  CHECK(run(bin, args, errf) == 1);
  CHECKF(file_has(errf, "model.layers.1.mlp.up_proj.weight missing"), "missing tensor not named");
  memmove(&t[9], &t[8], (size_t)(n - 9) * sizeof *t);
  t[8] = saved;
  /* wrong shape: the final norm one element short */
  t[0].shape[0] = h - 1;
  CHECK(write_safetensors(ckpt, t, n) == 0);
  CHECK(run(bin, args, errf) == 1);
  CHECKF(file_has(errf, "model.norm.weight: expected shape [256]"), "wrong shape not named");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  e2e_ref_model_free(&m);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/llama_e2e\n", argv[0]);
    return 2;
  }
  test_parser();
  test_round_trip(argv[1]);
  return check_report();
}
