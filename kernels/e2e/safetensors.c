/* safetensors.c: header parser, Llama name mapping and weight loading (safetensors.h).
 * Assumes a little-endian host (x86-64, aarch64), as the format's data is little-endian. */
#include "safetensors.h"

#include "rng.h" /* rng_float_to_half: the one fp32 -> fp16 rounding of the kit */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ---- a small strict JSON reader ---------------------------------------------------------- */

typedef struct {
  const char *s;
  size_t len, pos;
  const char *src;
  char *err;
  size_t err_len;
} json_reader;

static int json_fail(json_reader *r, const char *expected) {
  int line = 1, col = 1;
  for (size_t i = 0; i < r->pos && i < r->len; i++) {
    if (r->s[i] == '\n')
      line++, col = 1;
    else
      col++;
  }
  snprintf(r->err, r->err_len, "%s: header line %d, column %d: expected %s", r->src, line, col,
           expected);
  return -1;
}

static void json_ws(json_reader *r) {
  while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' || r->s[r->pos] == '\n' ||
                             r->s[r->pos] == '\r'))
    r->pos++;
}

static int json_peek(json_reader *r) {
  json_ws(r);
  return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static int json_expect(json_reader *r, char c, const char *what) {
  if (json_peek(r) != c) return json_fail(r, what);
  r->pos++;
  return 0;
}

static int hex4(json_reader *r, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    if (r->pos >= r->len) return json_fail(r, "4 hex digits after \\u");
    char c = r->s[r->pos++];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else {
      r->pos--;
      return json_fail(r, "a hex digit in \\u escape");
    }
  }
  *out = v;
  return 0;
}

static void put_utf8(char *buf, size_t *n, unsigned cp) {
  if (cp < 0x80)
    buf[(*n)++] = (char)cp;
  else if (cp < 0x800) {
    buf[(*n)++] = (char)(0xc0 | (cp >> 6));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    buf[(*n)++] = (char)(0xe0 | (cp >> 12));
    buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else {
    buf[(*n)++] = (char)(0xf0 | (cp >> 18));
    buf[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
    buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  }
}

/* A string, unescaped into a new buffer (*out, caller frees); out may be NULL to skip. */
static int json_string(json_reader *r, char **out) {
  if (json_peek(r) != '"') return json_fail(r, "a string");
  r->pos++;
  /* the decoded string is never longer than the escaped one */
  size_t start = r->pos, n = 0;
  char *buf = malloc(r->len - start + 1);
  if (!buf) return json_fail(r, "memory for a string (out of memory)");
  for (;;) {
    if (r->pos >= r->len) {
      free(buf);
      r->pos = start - 1;
      return json_fail(r, "a closing '\"'");
    }
    unsigned char c = (unsigned char)r->s[r->pos++];
    if (c == '"') break;
    if (c < 0x20) {
      free(buf);
      r->pos--;
      return json_fail(r, "no control character in a string");
    }
    if (c != '\\') {
      buf[n++] = (char)c;
      continue;
    }
    if (r->pos >= r->len) {
      free(buf);
      return json_fail(r, "an escape after '\\'");
    }
    char e = r->s[r->pos++];
    unsigned cp;
    switch (e) {
    case '"':
    case '\\':
    case '/': buf[n++] = e; break;
    case 'b': buf[n++] = '\b'; break;
    case 'f': buf[n++] = '\f'; break;
    case 'n': buf[n++] = '\n'; break;
    case 'r': buf[n++] = '\r'; break;
    case 't': buf[n++] = '\t'; break;
    case 'u':
      if (hex4(r, &cp)) {
        free(buf);
        return -1;
      }
      if (cp >= 0xd800 && cp < 0xdc00) { /* high surrogate: a low one must follow */
        unsigned lo;
        if (r->pos + 1 >= r->len || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u') {
          free(buf);
          return json_fail(r, "a low surrogate \\uDC00-\\uDFFF");
        }
        r->pos += 2;
        if (hex4(r, &lo)) {
          free(buf);
          return -1;
        }
        if (lo < 0xdc00 || lo > 0xdfff) {
          free(buf);
          return json_fail(r, "a low surrogate");
        }
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      }
      put_utf8(buf, &n, cp);
      break;
    default:
      free(buf);
      r->pos--;
      return json_fail(r, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
    }
  }
  buf[n] = '\0';
  if (out)
    *out = buf;
  else
    free(buf);
  return 0;
}

/* A non-negative integer without sign, fraction or exponent (offsets and sizes). */
static int json_uint(json_reader *r, uint64_t *out) {
  int c = json_peek(r);
  if (c < '0' || c > '9') return json_fail(r, "a non-negative integer");
  uint64_t v = 0;
  size_t start = r->pos;
  while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') {
    unsigned d = (unsigned)(r->s[r->pos] - '0');
    if (v > (UINT64_MAX - d) / 10) {
      r->pos = start;
      return json_fail(r, "an integer below 2^64");
    }
    v = v * 10 + d;
    r->pos++;
  }
  if (r->pos - start > 1 && r->s[start] == '0') {
    r->pos = start;
    return json_fail(r, "no leading zero");
  }
  if (r->pos < r->len && (r->s[r->pos] == '.' || r->s[r->pos] == 'e' || r->s[r->pos] == 'E'))
    return json_fail(r, "an integer (no fraction or exponent)");
  *out = v;
  return 0;
}

static int json_skip_value(json_reader *r, int depth);

static int json_skip_number(json_reader *r) {
  size_t start = r->pos;
  if (r->s[r->pos] == '-') r->pos++;
  size_t digits = r->pos;
  while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
  if (r->pos == digits) return json_fail(r, "a digit");
  if (r->pos < r->len && r->s[r->pos] == '.') {
    size_t f = ++r->pos;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    if (r->pos == f) return json_fail(r, "a digit after '.'");
  }
  if (r->pos < r->len && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
    r->pos++;
    if (r->pos < r->len && (r->s[r->pos] == '+' || r->s[r->pos] == '-')) r->pos++;
    size_t e = r->pos;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    if (r->pos == e) return json_fail(r, "a digit in the exponent");
  }
  (void)start;
  return 0;
}

static int json_skip_value(json_reader *r, int depth) {
  if (depth > 64) return json_fail(r, "nesting below 64 levels");
  int c = json_peek(r);
  if (c == '"') return json_string(r, NULL);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    r->pos++;
    if (json_peek(r) == close) {
      r->pos++;
      return 0;
    }
    for (;;) {
      if (c == '{') {
        if (json_string(r, NULL) || json_expect(r, ':', "':'")) return -1;
      }
      if (json_skip_value(r, depth + 1)) return -1;
      int d = json_peek(r);
      r->pos++;
      if (d == close) return 0;
      if (d != ',') {
        r->pos--;
        return json_fail(r, c == '{' ? "',' or '}'" : "',' or ']'");
      }
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) return json_skip_number(r);
  static const char *const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if (r->len - r->pos >= n && memcmp(r->s + r->pos, words[i], n) == 0) {
      r->pos += n;
      return 0;
    }
  }
  return json_fail(r, "a JSON value");
}

/* An array of non-negative integers into v[0..max); *n gets the count. */
static int json_uint_array(json_reader *r, uint64_t *v, int max, int *n) {
  if (json_expect(r, '[', "'['")) return -1;
  *n = 0;
  if (json_peek(r) == ']') {
    r->pos++;
    return 0;
  }
  for (;;) {
    if (*n == max) return json_fail(r, "fewer array elements");
    if (json_uint(r, &v[(*n)++])) return -1;
    int d = json_peek(r);
    r->pos++;
    if (d == ']') return 0;
    if (d != ',') {
      r->pos--;
      return json_fail(r, "',' or ']'");
    }
  }
}

/* ---- the header ---------------------------------------------------------------------------- */

static const struct {
  const char *name;
  st_dtype dtype;
  int bytes;
} dtypes[] = {{"F16", ST_F16, 2},    {"BF16", ST_BF16, 2},     {"F32", ST_F32, 4},
              {"F64", ST_OTHER, 8},  {"I64", ST_OTHER, 8},     {"I32", ST_OTHER, 4},
              {"I16", ST_OTHER, 2},  {"I8", ST_OTHER, 1},      {"U8", ST_OTHER, 1},
              {"BOOL", ST_OTHER, 1}, {"F8_E4M3", ST_OTHER, 1}, {"F8_E5M2", ST_OTHER, 1}};

static int parse_tensor(json_reader *r, st_tensor *t, uint64_t data_size) {
  size_t obj_pos = r->pos;
  if (json_expect(r, '{', "'{' opening a tensor entry")) return -1;
  int have_dtype = 0, have_shape = 0, have_offsets = 0, dtype_bytes = 0;
  if (json_peek(r) == '}') return json_fail(r, "the keys dtype, shape and data_offsets");
  for (;;) {
    char *key = NULL;
    if (json_string(r, &key)) return -1;
    if (json_expect(r, ':', "':'")) {
      free(key);
      return -1;
    }
    size_t val_pos = r->pos;
    if (strcmp(key, "dtype") == 0) {
      char *dt = NULL;
      if (json_string(r, &dt)) {
        free(key);
        return -1;
      }
      int found = 0;
      for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dt, dtypes[i].name) == 0) {
          t->dtype = dtypes[i].dtype;
          dtype_bytes = dtypes[i].bytes;
          found = 1;
        }
      snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dt);
      free(dt);
      if (!found) {
        r->pos = val_pos;
        free(key);
        return json_fail(r, "a safetensors dtype (F16, BF16, F32, ...)");
      }
      have_dtype = 1;
    } else if (strcmp(key, "shape") == 0) {
      uint64_t dims[ST_MAX_DIMS];
      if (json_uint_array(r, dims, ST_MAX_DIMS, &t->ndim)) {
        free(key);
        return -1;
      }
      for (int i = 0; i < t->ndim; i++) t->shape[i] = (int64_t)dims[i];
      have_shape = 1;
    } else if (strcmp(key, "data_offsets") == 0) {
      uint64_t off[2];
      int n;
      if (json_uint_array(r, off, 2, &n)) {
        free(key);
        return -1;
      }
      if (n != 2) {
        r->pos = val_pos;
        free(key);
        return json_fail(r, "[begin, end]");
      }
      t->begin = off[0], t->end = off[1];
      have_offsets = 1;
    } else if (json_skip_value(r, 1)) {
      free(key);
      return -1;
    }
    free(key);
    int d = json_peek(r);
    r->pos++;
    if (d == '}') break;
    if (d != ',') {
      r->pos--;
      return json_fail(r, "',' or '}'");
    }
  }
  if (!(have_dtype && have_shape && have_offsets)) {
    r->pos = obj_pos;
    return json_fail(r, "a tensor entry with dtype, shape and data_offsets");
  }
  uint64_t elems = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] != 0 && elems > UINT64_MAX / (uint64_t)t->shape[i]) {
      r->pos = obj_pos;
      return json_fail(r, "a shape whose size fits 64 bits");
    }
    elems *= (uint64_t)t->shape[i];
  }
  if (t->begin > t->end || t->end > data_size) {
    r->pos = obj_pos;
    char what[160];
    snprintf(what, sizeof what, "data_offsets within the %llu data bytes (got [%llu, %llu])",
             (unsigned long long)data_size, (unsigned long long)t->begin,
             (unsigned long long)t->end);
    return json_fail(r, what);
  }
  if (t->end - t->begin != elems * (uint64_t)dtype_bytes) {
    r->pos = obj_pos;
    char what[160];
    snprintf(what, sizeof what, "%llu bytes for dtype %s and its shape (data_offsets span %llu)",
             (unsigned long long)(elems * (uint64_t)dtype_bytes), t->dtype_name,
             (unsigned long long)(t->end - t->begin));
    return json_fail(r, what);
  }
  return 0;
}

void st_free(st_file *f) {
  for (int i = 0; i < f->count; i++) free(f->tensors[i].name);
  free(f->tensors);
  f->tensors = NULL;
  f->count = 0;
}

int st_parse_header(const char *src, const char *json, size_t len, uint64_t data_size, st_file *out,
                    char *err, size_t err_len) {
  json_reader r = {json, len, 0, src, err, err_len};
  memset(out, 0, sizeof *out);
  int cap = 0;
  if (json_expect(&r, '{', "'{' opening the header")) return -1;
  if (json_peek(&r) == '}')
    r.pos++;
  else
    for (;;) {
      char *name = NULL;
      if (json_string(&r, &name)) goto fail;
      if (json_expect(&r, ':', "':'")) {
        free(name);
        goto fail;
      }
      if (strcmp(name, "__metadata__") == 0) {
        free(name);
        if (json_skip_value(&r, 1)) goto fail;
      } else {
        if (out->count == cap) {
          int ncap = cap ? 2 * cap : 64;
          st_tensor *nt = realloc(out->tensors, (size_t)ncap * sizeof *nt);
          if (!nt) {
            free(name);
            json_fail(&r, "memory for the tensor table (out of memory)");
            goto fail;
          }
          out->tensors = nt;
          cap = ncap;
        }
        st_tensor *t = &out->tensors[out->count];
        memset(t, 0, sizeof *t);
        t->name = name;
        out->count++;
        if (parse_tensor(&r, t, data_size)) goto fail;
      }
      int d = json_peek(&r);
      r.pos++;
      if (d == '}') break;
      if (d != ',') {
        r.pos--;
        json_fail(&r, "',' or '}'");
        goto fail;
      }
    }
  json_ws(&r);
  if (r.pos != r.len) {
    json_fail(&r, "the end of the header");
    goto fail;
  }
  return 0;
fail:
  st_free(out);
  return -1;
}

int st_read_header(const char *path, st_file *out, char *err, size_t err_len) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  unsigned char size8[8];
  int rc = -1;
  char *json = NULL;
  if (fseeko(f, 0, SEEK_END) != 0) {
    snprintf(err, err_len, "%s: cannot seek: %s", path, strerror(errno));
    goto done;
  }
  off_t file_size = ftello(f);
  rewind(f);
  if (file_size < 8 || fread(size8, 1, 8, f) != 8) {
    snprintf(err, err_len, "%s: expected an 8-byte header size at offset 0 (file has %lld bytes)",
             path, (long long)file_size);
    goto done;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | size8[i];
  if (n == 0 || n > (100u << 20) || n > (uint64_t)file_size - 8) {
    snprintf(err, err_len,
             "%s: expected a header size of 1 byte to 100 MiB within the file's "
             "%lld bytes, got %llu",
             path, (long long)file_size, (unsigned long long)n);
    goto done;
  }
  json = malloc(n);
  if (!json) {
    snprintf(err, err_len, "%s: out of memory for a %llu-byte header", path, (unsigned long long)n);
    goto done;
  }
  if (fread(json, 1, n, f) != n) {
    snprintf(err, err_len, "%s: short read of the %llu-byte header", path, (unsigned long long)n);
    goto done;
  }
  rc = st_parse_header(path, json, n, (uint64_t)file_size - 8 - n, out, err, err_len);
  out->data_start = 8 + n;
done:
  free(json);
  fclose(f);
  return rc;
}

/* ---- Llama names -> model slots ------------------------------------------------------------ */

static const struct {
  const char *suffix;
  int tensor, part; /* part: which stacked block of rows (q|k|v, gate|up) */
} layer_names[] = {
    {"input_layernorm.weight", DRAW_ATTN_NORM, 0},
    {"self_attn.q_proj.weight", DRAW_WQKV, 0},
    {"self_attn.k_proj.weight", DRAW_WQKV, 1},
    {"self_attn.v_proj.weight", DRAW_WQKV, 2},
    {"self_attn.o_proj.weight", DRAW_WO, 0},
    {"post_attention_layernorm.weight", DRAW_MLP_NORM, 0},
    {"mlp.gate_proj.weight", DRAW_WGU, 0},
    {"mlp.up_proj.weight", DRAW_WGU, 1},
    {"mlp.down_proj.weight", DRAW_WDOWN, 0},
};
#define LAYER_PARTS ((int)(sizeof layer_names / sizeof layer_names[0]))

int st_slot_of(const e2e_config *cfg, const char *name, st_slot *slot) {
  const int64_t h = cfg->hidden, f = cfg->mlp;
  memset(slot, 0, sizeof *slot);
  slot->layer = -1;
  if (strcmp(name, "model.embed_tokens.weight") == 0) {
    slot->tensor = DRAW_EMBED, slot->rows = cfg->vocab, slot->cols = h;
    return 0;
  }
  if (strcmp(name, "model.norm.weight") == 0) {
    slot->tensor = DRAW_FINAL_NORM, slot->rows = h;
    return 0;
  }
  if (strcmp(name, "lm_head.weight") == 0) return 1; /* the prefill ends at the final norm */
  int layer, used = 0;
  if (sscanf(name, "model.layers.%d.%n", &layer, &used) != 1 || used == 0 || layer < 0) return -1;
  const char *suffix = name + used;
  if (strcmp(suffix, "self_attn.rotary_emb.inv_freq") == 0) return 1; /* recomputed */
  if (layer >= cfg->layers) return 1; /* a deeper checkpoint run with fewer --layers */
  for (int i = 0; i < LAYER_PARTS; i++) {
    if (strcmp(suffix, layer_names[i].suffix) != 0) continue;
    slot->layer = layer;
    slot->tensor = layer_names[i].tensor;
    switch (slot->tensor) {
    case DRAW_ATTN_NORM:
    case DRAW_MLP_NORM: slot->rows = h; break;
    case DRAW_WQKV:
    case DRAW_WO: slot->rows = h, slot->cols = h; break;
    case DRAW_WGU: slot->rows = f, slot->cols = h; break;
    case DRAW_WDOWN: slot->rows = h, slot->cols = f; break;
    }
    slot->row0 = (int64_t)layer_names[i].part * slot->rows;
    return 0;
  }
  return -1;
}

/* Index of a slot among all weights that must be loaded (for the "every weight once" check). */
static int slot_index(const st_slot *s) {
  if (s->layer < 0) return s->tensor == DRAW_EMBED ? 0 : 1;
  int part = 0;
  for (int i = 0; i < LAYER_PARTS; i++)
    if (layer_names[i].tensor == s->tensor && (int64_t)layer_names[i].part * s->rows == s->row0)
      part = i;
  return 2 + s->layer * LAYER_PARTS + part;
}

static int load_one(FILE *f, const char *path, const st_file *sf, const st_tensor *t,
                    const st_slot *slot, st_put_fn put, void *user, char *err, size_t err_len) {
  int64_t want[2] = {slot->rows, slot->cols};
  int want_ndim = slot->cols ? 2 : 1;
  int same = t->ndim == want_ndim;
  for (int i = 0; same && i < want_ndim; i++) same = t->shape[i] == want[i];
  if (!same) {
    char got[128] = "", expect[64] = "";
    size_t used = 0;
    for (int i = 0; i < t->ndim && used < sizeof got; i++)
      used += (size_t)snprintf(got + used, sizeof got - used, "%s%lld", i ? ", " : "",
                               (long long)t->shape[i]);
    if (want_ndim == 2)
      snprintf(expect, sizeof expect, "%lld, %lld", (long long)want[0], (long long)want[1]);
    else
      snprintf(expect, sizeof expect, "%lld", (long long)want[0]);
    snprintf(err, err_len, "%s: tensor %s: expected shape [%s] for this configuration, got [%s]",
             path, t->name, expect, got);
    return -1;
  }
  if (t->dtype == ST_OTHER) {
    snprintf(err, err_len, "%s: tensor %s: expected dtype F16, BF16 or F32, got %s", path, t->name,
             t->dtype_name);
    return -1;
  }
  size_t n = (size_t)slot->rows * (size_t)(slot->cols ? slot->cols : 1);
  size_t bytes = (size_t)(t->end - t->begin);
  void *raw = malloc(bytes);
  uint16_t *half = t->dtype == ST_F16 ? raw : malloc(n * 2);
  int rc = -1;
  if (!raw || !half) {
    snprintf(err, err_len, "%s: tensor %s: out of host memory (%zu bytes)", path, t->name, bytes);
    goto done;
  }
  if (fseeko(f, (off_t)(sf->data_start + t->begin), SEEK_SET) != 0 ||
      fread(raw, 1, bytes, f) != bytes) {
    snprintf(err, err_len, "%s: tensor %s: short read of %zu bytes at offset %llu", path, t->name,
             bytes, (unsigned long long)(sf->data_start + t->begin));
    goto done;
  }
  if (t->dtype == ST_BF16) {
    const uint16_t *b = raw;
    for (size_t i = 0; i < n; i++) {
      union {
        uint32_t u;
        float f;
      } v = {.u = (uint32_t)b[i] << 16};
      half[i] = rng_float_to_half(v.f);
    }
  } else if (t->dtype == ST_F32) {
    const float *x = raw;
    for (size_t i = 0; i < n; i++) half[i] = rng_float_to_half(x[i]);
  }
  rc = put(user, slot, half, n);
  if (rc) snprintf(err, err_len, "%s: tensor %s: could not store it", path, t->name);
done:
  if (half != raw) free(half);
  free(raw);
  return rc;
}

int st_load_weights(const e2e_config *cfg, const char *paths, st_put_fn put, void *user, char *err,
                    size_t err_len) {
  int total = 2 + cfg->layers * LAYER_PARTS, rc = -1;
  char *list = strdup(paths);
  unsigned char *seen = calloc((size_t)total, 1);
  if (!list || !seen) {
    snprintf(err, err_len, "out of host memory");
    goto done;
  }
  for (char *save = NULL, *path = strtok_r(list, ",", &save); path;
       path = strtok_r(NULL, ",", &save)) {
    st_file sf;
    if (st_read_header(path, &sf, err, err_len)) goto done;
    FILE *f = fopen(path, "rb");
    if (!f) {
      snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
      st_free(&sf);
      goto done;
    }
    int bad = 0, ignored = 0;
    for (int i = 0; i < sf.count && !bad; i++) {
      st_slot slot;
      int kind = st_slot_of(cfg, sf.tensors[i].name, &slot);
      if (kind == 1) continue;
      if (kind < 0) {
        if (ignored++ < 5)
          fprintf(stderr, "llama_e2e: %s: ignoring tensor %s (not a Llama weight)\n", path,
                  sf.tensors[i].name);
        continue;
      }
      int k = slot_index(&slot);
      if (seen[k]) {
        snprintf(err, err_len, "%s: tensor %s: given twice", path, sf.tensors[i].name);
        bad = 1;
        break;
      }
      seen[k] = 1;
      bad = load_one(f, path, &sf, &sf.tensors[i], &slot, put, user, err, err_len) != 0;
    }
    fclose(f);
    st_free(&sf);
    if (bad) goto done;
  }
  for (int k = 0; k < total; k++) {
    if (seen[k]) continue;
    if (k < 2)
      snprintf(err, err_len, "%s: tensor %s missing", paths,
               k == 0 ? "model.embed_tokens.weight" : "model.norm.weight");
    else
      snprintf(err, err_len, "%s: tensor model.layers.%d.%s missing", paths, (k - 2) / LAYER_PARTS,
               layer_names[(k - 2) % LAYER_PARTS].suffix);
    goto done;
  }
  rc = 0;
done:
  free(seen);
  free(list);
  return rc;
}
