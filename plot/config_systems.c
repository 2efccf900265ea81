/* config_systems: the palette, plot/systems.yaml: one row per system, its colour the same in
 * every figure and study; each plot system takes its row's colour (pc_palette_path finds the
 * file). */
#include "config_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PC_MAX_PALETTE 64

#ifdef PLOT_TEMPLATE_DIR
#define PC_PALETTE_BUILT PLOT_TEMPLATE_DIR "/../systems.yaml"
#else
#define PC_PALETTE_BUILT "plot/systems.yaml"
#endif

/* Colours of the systems without a row in the palette (a test's stand-ins): greys and muted
 * tones the palette does not use, taken in order, skipping any another system of the plot has. */
static const unsigned fallback_colors[] = {0x4D4D4D, 0xB3B3B3, 0x7A7A7A, 0xD9D9D9, 0x2F4F4F,
                                           0x8FBC8F, 0xBC8F8F, 0xDAA520, 0x6B8E23, 0x708090,
                                           0xA0522D, 0x4682B4, 0xD2B48C, 0x9ACD32, 0x800000};

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The palette for the experiment file at config: the plot/systems.yaml of the repository that
 * holds it (the nearest folder above with .repro-root), else the one beside the templates
 * repro-plot was built with. 0 with its path, or -1 when there is none. */
int pc_palette_path(const char *config, char *out, size_t cap) {
  char *real = realpath(config, NULL);
  if (real) {
    for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
      *slash = '\0';
      char mark[PT_PATH];
      snprintf(mark, sizeof mark, "%s/.repro-root", real);
      if (access(mark, F_OK) != 0) continue;
      snprintf(out, cap, "%s/plot/systems.yaml", real);
      if (file_exists(out)) {
        free(real);
        return 0;
      }
      break;
    }
    free(real);
  }
  snprintf(out, cap, "%s", PC_PALETTE_BUILT);
  return file_exists(out) ? 0 : -1;
}

/* One row NAME: {color: "#rrggbb", aliases: [...]}; no name or colour of an earlier row. */
static int load_palette_row(ycx *y, const ynode *k, const ynode *v, pc_item *pal, int n) {
  pc_item *it = &pal[n];
  memset(it, 0, sizeof *it);
  if (pcy_name(y, k, it->name, "a system name")) return -1;
  if (pcy_want(y, v, Y_MAP, "a palette row {color: \"#rrggbb\", aliases: [...]}")) return -1;
  const ynode *ck, *cv;
  FOR_PAIRS(v, ck, cv) {
    if (!strcmp(ck->str, "color")) {
      if (pcy_color(y, cv, &it->color)) return -1;
      it->has_color = 1;
    } else if (!strcmp(ck->str, "aliases")) {
      if (pcy_want(y, cv, Y_SEQ, "aliases")) return -1;
      const ynode *a;
      FOR_ITEMS(cv, a) {
        if (it->naliases == PC_MAX_ALIASES) return yerr(y, a, "at most %d aliases", PC_MAX_ALIASES);
        if (pcy_name(y, a, it->aliases[it->naliases++], "alias")) return -1;
      }
    } else
      return yerr(y, ck, "unknown key \"%s\"; expected color, aliases", ck->str);
  }
  if (!it->has_color) return yerr(y, v, "system %s: expected its color: \"#rrggbb\"", it->name);
  int dup = pc_find(pal, n, it->name);
  for (int a = 0; a < it->naliases && dup < 0; a++) dup = pc_find(pal, n, it->aliases[a]);
  if (dup >= 0)
    return yerr(y, k, "system %s is listed twice (as a name or alias; first as %s)", it->name,
                pal[dup].name);
  for (int i = 0; i < n; i++)
    if (pal[i].color == it->color)
      return yerr(y, v, "%s has %s's colour #%06X: two systems never share one", it->name,
                  pal[i].name, it->color);
  return 0;
}

/* Reads the palette at path into pal. Returns the rows, or -1 (the error in y). */
static int load_palette(ycx *y, const char *path, pc_item *pal) {
  ydoc_err err = {0};
  ynode *root = y_load_file(path, &err);
  int n = -1;
  if (!root) {
    y->err.msg = err.msg;
    return -1;
  }
  const ynode *sys = y_get(root, "systems");
  if (pcy_want(y, sys ? sys : root, Y_MAP, "systems: {NAME: {color: \"#rrggbb\"}, ...}")) goto out;
  n = 0;
  const ynode *k, *v;
  FOR_PAIRS(sys, k, v) {
    if (n == PC_MAX_PALETTE) {
      yerr(y, k, "at most %d systems", PC_MAX_PALETTE);
      n = -1;
      goto out;
    }
    if (load_palette_row(y, k, v, pal, n)) {
      n = -1;
      goto out;
    }
    n++;
  }
out:
  y_free(root);
  return n;
}

/* Gives every plot system its colour: the palette's row of its name, else of one of its
 * aliases, else the next fallback colour no other system of the plot has. */
static void color_systems(pc_config *c, const pc_item *pal, int npal) {
  for (int s = 0; s < c->nsystems; s++) {
    pc_item *it = &c->systems[s];
    int p = pc_find(pal, npal, it->name);
    for (int a = 0; a < it->naliases && p < 0; a++) p = pc_find(pal, npal, it->aliases[a]);
    it->has_color = it->palette = p >= 0;
    if (p >= 0) it->color = pal[p].color;
  }
  size_t next = 0, nfb = sizeof fallback_colors / sizeof *fallback_colors;
  for (int s = 0; s < c->nsystems; s++) {
    pc_item *it = &c->systems[s];
    if (it->has_color) continue;
    for (; next < nfb; next++) { /* a colour no system of the plot has yet */
      int taken = 0;
      for (int o = 0; o < c->nsystems && !taken; o++)
        taken = c->systems[o].has_color && c->systems[o].color == fallback_colors[next];
      if (!taken) break;
    }
    it->color = fallback_colors[next < nfb ? next : (size_t)s % nfb];
    it->has_color = 1;
    next++;
  }
}

/* The systems' colours: their rows in the palette of the experiment file at path. */
int pcy_colors(ycx *y, const char *path, pc_config *c) {
  pc_item pal[PC_MAX_PALETTE];
  int npal = 0;
  if (pc_palette_path(path, c->palette, sizeof c->palette) == 0)
    npal = load_palette(y, c->palette, pal);
  else
    c->palette[0] = '\0';
  if (npal < 0) return -1;
  color_systems(c, pal, npal);
  return 0;
}
