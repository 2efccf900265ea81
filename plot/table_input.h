/* table_input: tables as the input of draw, table and report (`--table FILE`, in place of
 * `--logs DIR`), and merge's rule for combining tables.
 *
 * A table is what `repro-plot table` or `merge` writes (.csv, .json) or the tilebench seed's
 * result files (.json); pt_read_table reads it and refuses a malformed or cut one naming
 * path:line. Its rows then get what the log reader gives a log's row (rd_complete_row: the
 * figure's defaults, canonical names through the aliases), so a table of a log folder draws
 * what the folder draws. */
#ifndef PLOT_TABLE_INPUT_H
#define PLOT_TABLE_INPUT_H

#include <stddef.h>

#include "config.h"
#include "reader.h"
#include "table.h"

/* Room for ti_cell_name's text. */
#define TI_CELL_NAME (PT_MAXKEYS * 96 + 4 * PT_NAME + 32)

/* "experiment.device.workload.system@seqlen" (the table's key columns), and the other cell
 * keys in brackets when the row has any ("[dtype=fp16,m=1024]"). */
void ti_cell_name(const pt_row *r, char *buf, size_t cap);

/* merge's rule: adds src's rows (read from the table name) to dst; a cell dst has on the same
 * GPU in the same figure (pt_same_cell_gpu) is replaced by src's row, said on stderr as
 * "WHO: NAME replaces CELL on GPU, a row read before it". Rows of two GPUs are both kept.
 * Returns 0, or -1 out of memory. */
int ti_merge(pt_table *dst, const pt_table *src, const char *name, const char *who);

/* Reads the tables paths[0..n) as config c's input into t: each table's rows of c's figure
 * (a row without a figure counts as c's; rows of other figures are left out, with a note on
 * stderr), completed as a log's row (rd_complete_row; a row that cannot tell its cell is
 * skipped, an issue), merged in order (ti_merge: a later table's row of a cell on the same GPU
 * wins). A cell left with rows of several GPUs under one device is ERR, as two logs of one
 * cell are: the first row stays, naming them all, the others are skipped (issues). A number
 * the table reader drops is a warning issue naming path:line. Returns 0, or -1 when a table is
 * refused (said on stderr, naming path:line) or out of memory. */
int ti_read_tables(const pc_config *c, const char *const *paths, int n, pt_table *t, rd_issues *is);

#endif
