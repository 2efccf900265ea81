#include "template.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"

static int is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

int tpl_is_name(const char *s) { return repro_is_name(s); }

int tpl_is_shell_safe(const char *s) {
  if (!*s) return 0; /* an empty value must be written '' to stay one word */
  for (; *s; s++)
    if (!is_name_char(*s) && !strchr("/:+,@%", *s)) return 0;
  return 1;
}

const char *tpl_value_problem(const char *s) {
  size_t n = 0;
  for (; *s; s++, n++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f) return "contains a control character (newline, tab, ...)";
  }
  if (n > TPL_MAX_VALUE) return "is longer than 1024 bytes";
  return NULL;
}

void tpl_shell_quote(sbuf *out, const char *s) {
  if (tpl_is_shell_safe(s)) {
    sb_add(out, s);
    return;
  }
  /* Inside single quotes nothing is special; a quote itself is closed, escaped, reopened. */
  sb_addc(out, '\'');
  for (; *s; s++) {
    if (*s == '\'')
      sb_add(out, "'\\''");
    else
      sb_addc(out, *s);
  }
  sb_addc(out, '\'');
}

static int is_ident_start(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

int tpl_scan(const char *tpl, tpl_name_fn fn, void *ctx, const char **err, size_t *err_off) {
  for (const char *p = tpl; *p; p++) {
    if (*p == '}') {
      if (p[1] == '}') {
        p++;
        continue;
      }
      *err = "a lone '}': write '}}' for a literal brace";
      *err_off = (size_t)(p - tpl);
      return -1;
    }
    if (*p != '{') continue;
    if (p[1] == '{') {
      p++;
      continue;
    }
    const char *name = p + 1, *q = name;
    if (!is_ident_start(*q)) {
      *err = "expected {name} with name [a-z_][a-z0-9_]* (write '{{' for a literal brace)";
      *err_off = (size_t)(p - tpl);
      return -1;
    }
    while (is_ident_char(*q)) q++;
    if (*q != '}') {
      *err = "unterminated placeholder: expected '}' after the name";
      *err_off = (size_t)(p - tpl);
      return -1;
    }
    if (fn && fn(ctx, name, (size_t)(q - name)) != 0) {
      *err = NULL; /* the callback reported it */
      *err_off = (size_t)(p - tpl);
      return -1;
    }
    p = q;
  }
  return 0;
}

int tpl_render(const char *tpl, tpl_mode mode, tpl_lookup_fn lookup, void *ctx, sbuf *out,
               char **err) {
  size_t start = out->len;
  for (const char *p = tpl; *p; p++) {
    if ((*p == '{' && p[1] == '{') || (*p == '}' && p[1] == '}')) {
      sb_addc(out, *p++);
      continue;
    }
    if (*p != '{') {
      sb_addc(out, *p);
      continue;
    }
    const char *name = p + 1, *q = name;
    while (is_ident_char(*q)) q++;
    if (*q != '}' || q == name) {
      *err = xasprintf("bad placeholder at offset %zu", (size_t)(p - tpl));
      return -1;
    }
    char key[64];
    size_t len = (size_t)(q - name);
    if (len >= sizeof key) {
      *err = xasprintf("placeholder name too long at offset %zu", (size_t)(p - tpl));
      return -1;
    }
    memcpy(key, name, len);
    key[len] = '\0';
    const char *val = lookup(ctx, key);
    if (!val) {
      *err = xasprintf("unknown placeholder {%s}", key);
      return -1;
    }
    const char *problem = tpl_value_problem(val);
    if (problem) {
      *err = xasprintf("value of {%s} %s", key, problem);
      return -1;
    }
    if (mode == TPL_NAME) {
      if (!tpl_is_name(val)) {
        char *q = quote_value(val);
        *err = xasprintf("value %s of {%s} is not a name ([A-Za-z0-9._-]+)", q, key);
        free(q);
        return -1;
      }
      sb_add(out, val);
    } else {
      tpl_shell_quote(out, val);
    }
    p = q;
  }
  const char *result = out->s ? out->s + start : ""; /* nothing appended: still NULL */
  if (mode == TPL_NAME && !tpl_is_name(result)) {
    char *q = quote_value(result);
    *err = xasprintf("%s is not a valid file name ([A-Za-z0-9._-]+, not starting with '.')", q);
    free(q);
    return -1;
  }
  return 0;
}
