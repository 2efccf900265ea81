/* report: the HTML report of figures, tables and logs (see report.h): its options and the
 * page's order (the verdict, the summary, the logs' provenance, then each section).
 *
 * One code path with `repro-plot draw`: each section's logs become the tidy table (reader.c),
 * the figures' models are built from it (figure.c) and the counts, marks and geometric means
 * are the terminal tables' (tables.c), stale logs (plot: stale:) left out. The verdict holds
 * those models' ratios against the baselines beside the config's plot: claims:. The check and
 * meta records, which the table does not carry, are read from each row's own log with kvline,
 * the log contract's one line parser. Every text that comes from a log, a path or a config is
 * HTML-escaped; the figures are gnuplot's SVG, inlined through an allowlist of SVG elements and
 * attributes (no script, no event handler, no reference outside the figure) and made smaller
 * on the way (report_svg.c). The parts: report_parts.h. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "report_parts.h"
#include "report_svg.h"

/* ---- options ---- */

static void usage(void) {
  fputs("usage: repro-plot report [-o report.html] [--compare ROOT] [--paper ROOT] "
        "[--tolerance 0.10] [--latest]\n"
        "                         --config F (--logs DIR | --table FILE...) [--figures DIR] "
        "[--config ...]\n",
        stderr);
}

/* A section option (--logs, --table, --figures) sets the last --config's entry. */
static int set_section(rp_opts *o, const char *opt, const char *v) {
  if (!o->nsec) {
    fprintf(stderr, "repro-plot report: %s belongs to a --config given before it\n", opt);
    return -1;
  }
  rp_entry *e = &o->sec[o->nsec - 1];
  if (!strcmp(opt, "--table") && e->ntables == RP_MAX_TABLES) {
    fprintf(stderr, "repro-plot report: at most %d --table files a section\n", RP_MAX_TABLES);
    return -1;
  }
  if (!strcmp(opt, "--logs"))
    e->logs = v;
  else if (!strcmp(opt, "--table"))
    e->tables[e->ntables++] = v;
  else
    e->figures = v;
  return 0;
}

static int set_option(rp_opts *o, const char *opt, const char *v) {
  if (!strcmp(opt, "--config")) {
    if (o->nsec == RP_MAX_SECTIONS) {
      fprintf(stderr, "repro-plot report: at most %d sections\n", RP_MAX_SECTIONS);
      return -1;
    }
    o->sec[o->nsec++] = (rp_entry){.config = v};
  } else if (!strcmp(opt, "--logs") || !strcmp(opt, "--table") || !strcmp(opt, "--figures")) {
    return set_section(o, opt, v);
  } else if (!strcmp(opt, "-o")) {
    o->output = v;
  } else if (!strcmp(opt, "--compare")) {
    o->compare = v;
  } else if (!strcmp(opt, "--paper")) {
    o->paper = v;
  } else if (!strcmp(opt, "--tolerance") || !strcmp(opt, "--tol")) {
    char *end;
    o->tol = strtod(v, &end);
    if (*end || end == v || !(o->tol >= 0)) {
      fprintf(stderr, "repro-plot report: %s: expected a number >= 0, got \"%s\"\n", opt, v);
      return -1;
    }
  } else {
    fprintf(stderr, "repro-plot report: unknown option %s\n", opt);
    return -1;
  }
  return 0;
}

static int parse_args(int argc, char **argv, rp_opts *o) {
  memset(o, 0, sizeof *o);
  o->output = "report.html";
  o->tol = 0.10;
  for (int i = 1; i < argc;) {
    if (!strcmp(argv[i], "--latest")) {
      o->latest = 1;
      i++;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "repro-plot report: %s needs a value\n", argv[i]);
      return -1;
    }
    if (set_option(o, argv[i], argv[i + 1])) return -1;
    i += 2;
  }
  if (!o->nsec) {
    fprintf(stderr, "repro-plot report: give at least one --config F --logs DIR\n");
    return -1;
  }
  for (int s = 0; s < o->nsec; s++)
    if (!o->sec[s].logs == !o->sec[s].ntables) {
      fprintf(stderr, "repro-plot report: --config %s needs --logs DIR or --table FILE..., one\n",
              o->sec[s].config);
      return -1;
    }
  return 0;
}

/* ---- the document ---- */

/* The sections, each a link. */
static void put_toc(FILE *out, const rp_section *secs, int n) {
  fputs("<ul class=\"toc\">", out);
  for (int i = 0; i < n; i++) {
    fputs("<li><a href=\"#sec-", out);
    rp_esc(out, secs[i].cfg.figure);
    fputs("\">", out);
    rp_esc(out, secs[i].cfg.figure);
    fputs("</a>: ", out);
    rp_put_input(out, secs[i].e);
    fputs("</code></li>", out);
  }
  fputs("</ul>\n", out);
}

/* What the paper ms columns hold. */
static void put_paper_note(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  int npaper = 0;
  for (int i = 0; i < n; i++) npaper += secs[i].cfg.npaper > 0;
  if (o->paper) {
    fputs("<p>paper ms: the original artifact's logs under <code>", out);
    rp_esc(out, o->paper);
    fputs("/&lt;section&gt;</code>, matched cell by cell.</p>\n", out);
  } else if (npaper) {
    fputs("<p>paper ms: the paper's own times of ours, from the <code>plot: paper:</code> "
          "section of the config (the paper's GPU only); paper / ours: that time over this "
          "run's.</p>\n",
          out);
  }
}

static void put_intro(FILE *out) {
  fputs("<h1>Reproduction report: FlashTensor figures and studies</h1>\n<p>Drawn by "
        "<code>repro-plot report</code> from the tidy table of each section's logs: the verdict "
        "first, then the summary, the logs' provenance and each section's figures (click one to "
        "enlarge it) with the table of its cells (folded). Marks: NS = no log or not supported, "
        "OOM, TLE = timeout, ERR = failed; not run = no log of a cell nobody ran. Click a column "
        "head to sort.</p>\n",
        out);
}

static int put_document(FILE *out, const rp_opts *o, const rp_section *secs, int n) {
  fprintf(out,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<title>FlashTensor reproduction report</title><style>%s%s</style></head>\n<body>\n",
          rp_page_style, rs_style);
  put_intro(out);
  if (rp_put_verdict(out, secs, n)) return -1;
  put_toc(out, secs, n);
  put_paper_note(out, o, secs, n);
  if (rp_put_summary(out, secs, n)) return -1;
  rp_put_compare_table(out, o, secs, n);
  if (rp_put_provenance(out, secs, n)) return -1;
  int nfig = 0;
  for (int i = 0; i < n; i++)
    if (rp_put_section(out, o, &secs[i], &nfig)) return -1;
  fprintf(out, "<script>%s</script>\n</body></html>\n", rp_page_script);
  return 0;
}

/* Writes the report through a temporary of its own beside the output (fileio.h's afile), renamed
 * over it whole: a concurrent report to the same file never mixes with this one, and the
 * bytes counted are this report's. On an error the output keeps what it held. */
static int write_report(const rp_opts *o, const rp_section *secs) {
  afile a;
  char why[256];
  if (afile_open(&a, o->output, 0666, 0, why, sizeof why) != 0) {
    fprintf(stderr, "%s: report not written: %s\n", o->output, why);
    return 1;
  }
  if (put_document(a.f, o, secs, o->nsec) != 0) {
    afile_abort(&a);
    fprintf(stderr, "%s: report not written: out of memory (the file is as it was)\n", o->output);
    return 1;
  }
  long bytes = ftell(a.f);
  if (afile_commit(&a, why, sizeof why) != 0) {
    fprintf(stderr, "%s: report not written: %s (the file is as it was)\n", o->output, why);
    return 1;
  }
  printf("report written to %s (%ld bytes)\n", o->output, bytes);
  return 0;
}

int rp_main(int argc, char **argv) {
  rp_opts o;
  if (parse_args(argc, argv, &o)) {
    usage();
    return 2;
  }
  rp_section *secs = calloc(RP_MAX_SECTIONS, sizeof *secs);
  if (!secs) return 1;
  int rc = 0;
  for (int i = 0; i < o.nsec && !rc; i++)
    if (rp_load_section(&secs[i], &o.sec[i], &o)) rc = 1;
  if (!rc) rc = write_report(&o, secs);
  for (int i = 0; i < o.nsec; i++) rp_free_section(&secs[i]);
  free(secs);
  return rc;
}
