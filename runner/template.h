/* template: where values become shell text.
 *
 * A template is text with {name} placeholders (name: [a-z_][a-z0-9_]*); "{{" and "}}" stand
 * for literal braces. Rendering for the shell quotes every substituted value that is not made
 * only of characters that mean nothing to a shell; rendering a name (a log file name) requires
 * every value and the result to be names. The template text itself is trusted: it comes from
 * the experiment file's command templates, like the cluster file's setup lines. */
#ifndef RUNNER_TEMPLATE_H
#define RUNNER_TEMPLATE_H

#include "util.h"

/* Longest value a template may substitute (keeps command lines far below ARG_MAX). */
#define TPL_MAX_VALUE 1024

/* [A-Za-z0-9._-]+, not starting with '.', at most 200 bytes: safe as a file name and as a
 * shell word. */
int tpl_is_name(const char *s);
/* A value that needs no quoting in a POSIX shell word: [A-Za-z0-9._/:+,@%-]+ */
int tpl_is_shell_safe(const char *s);
/* Why a value may not be substituted at all (control characters, too long), or NULL. */
const char *tpl_value_problem(const char *s);

/* Appends s to out as one shell word: unchanged when safe, else single-quoted. */
void tpl_shell_quote(sbuf *out, const char *s);

/* Calls fn for every placeholder name of tpl in order. Returns 0, or -1 with *err pointing at
 * a static message and *err_off at the byte offset of the bad brace. */
typedef int (*tpl_name_fn)(void *ctx, const char *name, size_t len);
int tpl_scan(const char *tpl, tpl_name_fn fn, void *ctx, const char **err, size_t *err_off);

typedef const char *(*tpl_lookup_fn)(void *ctx, const char *name);
typedef enum { TPL_SHELL, TPL_NAME } tpl_mode;
/* Renders tpl into out. Returns 0, or -1 with *err set (owned by the caller, free it). */
int tpl_render(const char *tpl, tpl_mode mode, tpl_lookup_fn lookup, void *ctx, sbuf *out,
               char **err);

#endif
