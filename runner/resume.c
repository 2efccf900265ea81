/* resume: --resume and --rerun continue a run as it was made: its `select` records (the cells
 * it holds, widened by --widen, joined by the ad-hoc cells --only names), its case lists, --set
 * values, cluster file and executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* "--device D --only K=V ..." of a run's selection (caller frees). */
static char *describe_selection(const run *r) {
  sbuf b = {0};
  for (int i = 0; i < r->nselects; i++) {
    const selection *sel = &r->selects[i];
    if (i) sb_add(&b, "; or ");
    if (sel->device) sb_addf(&b, "--device %s", sel->device);
    for (int k = 0; k < sel->only.n; k++)
      sb_addf(&b, "%s--only %s", sel->device || k ? " " : "", sel->only.v[k]);
    for (int k = 0; k < sel->exclude.n; k++)
      sb_addf(&b, "%s--exclude %s", sel->device || sel->only.n || k ? " " : "", sel->exclude.v[k]);
    if (!sel->device && !sel->only.n && !sel->exclude.n) sb_add(&b, "every cell");
  }
  return sb_take(&b);
}

/* The filters of one `select` record (*f: caller frees each and the array): their number, or
 * -1 with *err. */
static int selection_filters(const selection *sel, filter **f, char **err) {
  int n = sel->only.n + sel->exclude.n, nf = 0;
  *f = xcalloc((size_t)(n ? n : 1), sizeof **f);
  for (int k = 0; k < sel->only.n; k++, nf++)
    if (filter_parse(sel->only.v[k], &(*f)[nf], err) != 0) goto fail;
  for (int k = 0; k < sel->exclude.n; k++, nf++)
    if (exclude_parse(sel->exclude.v[k], &(*f)[nf], err) != 0) goto fail;
  return nf;
fail:
  for (int k = 0; k < nf; k++) filter_free(&(*f)[k]);
  free(*f);
  *f = NULL;
  return -1;
}

/* The command line's selection as a `select` record of r; 0 or -1. */
int note_select(const options *o, run *r) {
  return run_note_select(r, o->device, &o->only_args, &o->exclude_args, &o->set_args, o->cases) == 0
             ? 0
             : -1;
}

/* A resume's --set, when given, must be the run's (its first select record's): a run's cells
 * all run with the same values. */
static int check_run_sets(const options *o, const run *r) {
  if (r->nselects == 0 || o->set_args.n == 0) return 0;
  const strvec *was = &r->selects[0].set;
  int same = was->n == o->set_args.n;
  for (int i = 0; same && i < was->n; i++) same = strcmp(was->v[i], o->set_args.v[i]) == 0;
  if (same) return 0;
  sbuf b = {0};
  for (int i = 0; i < was->n; i++) sb_addf(&b, " --set %s", was->v[i]);
  fprintf(stderr,
          "repro-run: run %s was made with%s: continue it without --set (it keeps its own) or "
          "start a new run\n",
          r->dir, was->n ? b.s : " no --set");
  sb_free(&b);
  return -1;
}

/* member[i] := 1 for each cell of cs that some select record of r holds. 0, or -1 with the
 * refusal printed when a record no longer fits the experiment file. */
static int run_members(const cellset *cs, const clusterfile *cluster, const run *r, char *member) {
  for (int i = 0; i < r->nselects; i++) {
    const selection *sel = &r->selects[i];
    filter *f = NULL;
    char *err = NULL;
    int nf = selection_filters(sel, &f, &err), bad = nf < 0;
    if (bad) nf = 0;
    cellset run_cs;
    if (!bad && expand(cs->file, cluster, f, nf, &run_cs, &err) == 0) {
      /* a record holds the ad-hoc cells its --only named, never those another record added */
      for (int k = 0; k < run_cs.ncells && k < cs->ncells; k++)
        if (run_cs.cells[k].sel == CELL_SELECTED &&
            (!sel->device ||
             strcmp(cell_value(&run_cs, &run_cs.cells[k], "device"), sel->device) == 0) &&
            filters_name_adhoc(&run_cs, &run_cs.cells[k], f, nf))
          member[k] = 1;
      cellset_free(&run_cs);
    } else {
      bad = 1;
    }
    for (int k = 0; k < nf; k++) filter_free(&f[k]);
    free(f);
    if (bad) {
      fprintf(stderr, "repro-run: the selection of run %s no longer fits %s: %s\n", r->dir,
              cs->file->path, err ? err : "?");
      free(err);
      return -1;
    }
  }
  return 0;
}

/* A selected cell outside the run is a cell of the listed values (OUTSIDE_LISTED), an ad-hoc
 * cell whose values this command line's --only names (OUTSIDE_NAMED), or one whose ad-hoc value
 * only another select record of the run named (OUTSIDE_OTHER: no record holds it and nobody
 * asks for it now). */
enum { OUTSIDE_LISTED, OUTSIDE_NAMED, OUTSIDE_OTHER };
static int outside_kind(const options *o, const cellset *cs, const cell *c) {
  if (experiment_adhoc_axis(&cs->file->exps[c->exp], c->vals) < 0) return OUTSIDE_LISTED;
  return filters_name_adhoc(cs, c, o->filters, o->nfilters) ? OUTSIDE_NAMED : OUTSIDE_OTHER;
}

/* The selected cells of cs that are not members, counted by their outside_kind. */
static void count_outside(const options *o, const cellset *cs, const char *member, int n[3]) {
  n[0] = n[1] = n[2] = 0;
  for (int i = 0; i < cs->ncells; i++)
    if (cs->cells[i].sel == CELL_SELECTED && !member[i]) n[outside_kind(o, cs, &cs->cells[i])]++;
}

/* --resume/--rerun keep to the cells of the run (its `select` records): cells of the command
 * line outside it are left out, or added to the run with --widen. The ad-hoc cells the command
 * line names join it without --widen (no record of the run can have meant them) when nothing
 * else it selects lies outside. */
int apply_run_selection(const options *o, cellset *cs, const clusterfile *cluster, run *r) {
  for (int i = 0; i < r->nselects; i++) {
    const char *was = r->selects[i].cases ? r->selects[i].cases : "default";
    if (strcmp(was, o->cases ? o->cases : "default") != 0) {
      fprintf(stderr, "repro-run: run %s was made with --cases %s: continue it with --cases %s\n",
              r->dir, was, was);
      return -1;
    }
  }
  if (check_run_sets(o, r) != 0) return -1;
  if (o->widen) return note_select(o, r);
  if (r->nselects == 0) return 0; /* a run from before runs remembered their selection */
  char *member = xcalloc((size_t)(cs->ncells ? cs->ncells : 1), 1);
  int n[3], left = 0;
  if (run_members(cs, cluster, r, member) != 0) {
    free(member);
    return -1;
  }
  count_outside(o, cs, member, n);
  int joins = n[OUTSIDE_NAMED] && !n[OUTSIDE_LISTED];
  if (joins)
    fprintf(stderr,
            "repro-run: %d ad-hoc cells (a value --only names outside its axis's list) join run "
            "%s: its select records keep them for --resume\n",
            n[OUTSIDE_NAMED], r->dir);
  for (int i = 0; i < cs->ncells; i++) {
    cell *c = &cs->cells[i];
    if (c->sel != CELL_SELECTED) continue;
    if (member[i] || (joins && outside_kind(o, cs, c) == OUTSIDE_NAMED))
      left++;
    else
      c->sel = CELL_FILTERED;
  }
  free(member);
  if (joins) return note_select(o, r);
  int outside = n[OUTSIDE_LISTED] + n[OUTSIDE_NAMED], asked = o->nfilters > 0 || o->device;
  if (outside && asked) {
    char *what = describe_selection(r);
    fprintf(stderr,
            "repro-run: %d of the cells you selected are not part of run %s (made with %s)%s; "
            "to add them to the run, repeat the command with --widen\n",
            outside, r->dir, what, left ? ": left out" : "");
    free(what);
    if (!left) return -1;
  }
  return 0;
}

/* The executor a --resume/--rerun continues with: --local/--slurm when given, else the one the
 * run last submitted with (a run made with --local stays local under a Slurm cluster file),
 * else `kind`, the cluster file's or the machine's. */
executor_kind resumed_executor(const options *o, const run *r, executor_kind kind) {
  if (o->executor != EXEC_AUTO) return o->executor;
  for (int i = r->nsubs - 1; i >= 0; i--) {
    const char *ex = r->subs[i].executor;
    if (!ex) continue;
    executor_kind was = strcmp(ex, "local") == 0 ? EXEC_LOCAL : EXEC_SLURM;
    if (was != kind)
      fprintf(stderr,
              "repro-run: run %s was made with the %s executor: continuing with it (%s "
              "picks the other)\n",
              r->dir, ex, was == EXEC_LOCAL ? "--slurm" : "--local");
    return was;
  }
  return kind;
}

/* The run's --set values (its first select record's) into o->sets; -1 when one is not
 * NAME=VALUE (an edited journal). */
static int recorded_sets(options *o, const strvec *set) {
  for (int i = 0; i < set->n; i++) {
    char *err = NULL;
    if (set_parse(set->v[i], &o->sets, &o->set_store, &err) != 0) {
      fprintf(stderr, "repro-run: the run's select record: %s\n", err);
      free(err);
      return -1;
    }
  }
  return 0;
}

/* --resume/--rerun continue the run as it was made: without --cases in its own case lists
 * and without --set with its own --set values (its first select record), so run_single.sh needs no --cases for a run made with one, and
 * with its own cluster file (the run record's; "" when it had none), its records' --only in
 * o->run_only (their ad-hoc values). Sets *cases and *cluster
 * (caller frees; NULL: nothing to take); -1 when the run cannot be read. */
int run_recorded(options *o, char **cases, char **cluster) {
  *cases = *cluster = NULL;
  if (!(o->resume || o->rerun) || o->dry_run) return 0;
  char *abs = path_absolute(o->file), *dir = path_dirname(abs), *cur = NULL;
  run r;
  int rc = run_locate(o->run_dir, dir, &cur);
  if (rc == 0 && cur && (rc = run_open(&r, cur, RUN_READ)) == 0) {
    if (!o->cases && r.nselects > 0 && r.selects[0].cases) *cases = xstrdup(r.selects[0].cases);
    if (!o->set_args.n && r.nselects > 0 && recorded_sets(o, &r.selects[0].set) != 0) rc = -1;
    for (int i = 0; i < r.nselects; i++)
      for (int k = 0; k < r.selects[i].only.n; k++) sv_push(&o->run_only, r.selects[i].only.v[k]);
    *cluster = xstrdup(r.cluster ? r.cluster : "");
    run_close(&r);
  }
  free(cur);
  free(dir);
  free(abs);
  return rc;
}

/* The cluster file of a resume or rerun: -c when given (said when it is not the run's), else
 * the run's own (recorded; "" for none), not $REPRO_CLUSTER. -1 when the run's is no file. */
int use_run_cluster(options *o, const char *recorded) {
  if (o->cluster_given) {
    char *given = path_absolute(o->cluster);
    if (strcmp(given, recorded) != 0)
      fprintf(stderr, "repro-run: -c %s overrides the run's cluster file %s\n", o->cluster,
              recorded[0] ? recorded : "(none)");
    free(given);
    return 0;
  }
  struct stat st;
  if (recorded[0] && (stat(recorded, &st) != 0 || !S_ISREG(st.st_mode))) {
    fprintf(stderr,
            "repro-run: the run's cluster file %s (its manifest's run record) is not a readable "
            "file: pass -c FILE to continue the run with another\n",
            recorded);
    return -1;
  }
  if (o->cluster && strcmp(o->cluster, recorded) != 0)
    fprintf(stderr,
            "repro-run: continuing with the run's cluster file %s, not $REPRO_CLUSTER (%s); -c "
            "FILE overrides it\n",
            recorded[0] ? recorded : "(none)", o->cluster);
  o->cluster = recorded[0] ? recorded : NULL;
  return 0;
}
