/* report_svg: a figure's SVG inlined into report.html (see report_svg.h): read through the
 * allowlist into a tree (svg_read.c), made smaller (svg_shrink.c) and written (svg_write.c). */
#include "report_svg.h"

#include "svg_impl.h"

int rs_inline(FILE *out, const char *svg, size_t len, const char *prefix) {
  rs_arena ar = {0};
  rs_node *root = rs_new_node(&ar);
  int rc = -1;
  if (root && !rs_parse(&ar, root, svg, len) && !ar.oom && !rs_shrink(&ar, root) && !ar.oom) {
    for (const rs_node *c = root->first; c; c = c->next) rs_write_node(out, c, prefix, 0);
    rc = 0;
  }
  rs_arena_free(&ar);
  return rc;
}
