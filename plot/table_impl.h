/* table_impl: what the table's files share (table.c, table_csv.c, table_json.c): how a text and
 * a number are written; not part of table.h. */
#ifndef PLOT_TABLE_IMPL_H
#define PLOT_TABLE_IMPL_H

#include <stdio.h>

#include "table.h"

#define PT_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD, for a byte that is no UTF-8 */

/* A byte below 0x20, or 0x7f: written as the text \xNN wherever a text is printed. */
int pt_is_control(unsigned char c);
/* v as pt_fmt_double writes it (the shortest text that reads back as v). */
void pt_put_double(FILE *out, double v);
/* 1 when r's scale is written after its case keys (it has one, and no case key is named so). */
int pt_extra_scale(const pt_row *r);

#endif
