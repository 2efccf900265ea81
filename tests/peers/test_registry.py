#!/usr/bin/env python3
"""Tests of the workload registry as the peers read it (scripts/peers/registry.py); plain
python3, no torch:

  - registry.py reads kernels/attention/registry/workloads.def: every row, names in the order of
    the C enum (the WORKLOAD() rows as a plain regex reads them), outputs and tolerances as written;
    with --attnvar / --llama-e2e, also the names the binaries print for --list-workloads
    (that part is skipped, and says so, when a binary is absent or lacks the option);
  - every registry row has a PyTorch formulation of each of its features
    (workloads.formulation_missing); synthetic rows with an unknown feature or an
    inconsistent combination must be reported, and a new combination of known features not;
  - malformed .def files raise RegistryError naming file:line and what was expected, through
    registry.load and through the CLI (`registry.py names` exit 1) and peer.py (exit 1);
  - peer.py's --workload choices follow the registry ($REPRO_WORKLOADS_DEF), and
    `systems.py names` is the list peer.py accepts for --system.

    test_registry.py --peers-dir scripts/peers --def kernels/attention/registry/workloads.def
                     [--attnvar build/bin/attnvar] [--llama-e2e build/bin/llama_e2e]
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from tally import Tally

tally = Tally()
check = tally.check


def regex_rows(path):
    """(id, name) of every WORKLOAD( row as a plain regex sees it, in file order."""
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^\s*WORKLOAD\(\s*(\w+)\s*,\s*"([^"]*)"', f.read(), re.M)


def binary_names(path, what):
    """The names `path --list-workloads` prints, or None (and a note) when it cannot say."""
    if not path:
        return None
    if not os.access(path, os.X_OK):
        print("SKIP: %s %s is not built: its --list-workloads is not compared" % (what, path))
        return None
    res = subprocess.run([path, "--list-workloads"], capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        print("SKIP: %s --list-workloads exits %d (option not supported?): %s"
              % (what, res.returncode, res.stderr.strip()[-200:]))
        return None
    return tuple(res.stdout.split())


def test_def_file(def_path, attnvar, llama_e2e):
    rows = registry.load(def_path)
    want = regex_rows(def_path)
    check([(r.id, r.name) for r in rows] == want,
          "registry rows %s != the file's WORKLOAD rows %s" % ([(r.id, r.name) for r in rows],
                                                                want))
    check(registry.names(def_path) == tuple(n for _, n in want), "registry.names() order")
    for row in rows:
        check(row.outputs[0] == "out" and len(set(row.outputs)) == len(row.outputs),
              "%s: outputs %s" % (row.name, row.outputs))
        check(row.tol_rel_l2 > 0 and row.tol_max_abs > 0, "%s: tolerances" % row.name)
        check(row.where.startswith(def_path + ":"), "%s: where %r" % (row.name, row.where))
    # the row's text, reparsed by hand, gives the same fields (a second reading of the file)
    with open(def_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for row in rows:
        text = lines[int(row.where.rsplit(":", 1)[1]) - 1]
        args = [a.strip() for a in text[text.index("(") + 1:text.rindex(")")].split(",")]
        want_fields = [row.id, '"%s"' % row.name, row.logits, row.keys,
                       row.column, str(row.pool), row.select] + \
            ["NULL" if v is None else '"%s"' % v for v in (row.score, row.score2, row.flags)]
        check(args[:10] == want_fields, "%s: fields %s, the line says %s"
              % (row.name, want_fields, args[:10]))
        check([float(a) for a in args[10:]] == [row.tol_rel_l2, row.tol_max_abs],
              "%s: tolerances %s vs %s" % (row.name, args[10:], (row.tol_rel_l2,
                                                                  row.tol_max_abs)))
    for path, what in ((attnvar, "attnvar"), (llama_e2e, "llama_e2e")):
        got = binary_names(path, what)
        if got is not None:
            check(got == registry.names(def_path), "%s --list-workloads %s != registry %s"
                  % (what, got, registry.names(def_path)))
    # the CLI prints the same names, one per line
    res = subprocess.run([sys.executable, REGISTRY_PY, "--def", def_path, "names"],
                         capture_output=True, text=True)
    check(res.returncode == 0 and tuple(res.stdout.split("\n")[:-1]) == registry.names(def_path),
          "registry.py names: exit %d, %r" % (res.returncode, res.stdout))
    res = subprocess.run([sys.executable, REGISTRY_PY, "--def", def_path, "show"],
                         capture_output=True, text=True)
    check(res.returncode == 0
          and all(r.name in res.stdout and r.logits in res.stdout for r in rows),
          "registry.py show: exit %d, %r" % (res.returncode, res.stdout[:200]))


# ---- formulations ---------------------------------------------------------------------------

def unformulated(rows):
    """The reasons of the rows that lack a PyTorch formulation of some feature."""
    return [r for r in (wl.formulation_missing(row) for row in rows) if r is not None]


def synthetic(**fields):
    """A row like h2o's with some fields replaced."""
    base = dict(id="X", name="x", logits="LOGITS_SCALED", keys="KEYS_DENSE",
                column="COL_SUM", pool=0,
                select="SEL_TOPK", score="x_score", score2=None, flags=None, tol_rel_l2=5e-3,
                tol_max_abs=1e-2, where="synthetic:1")
    base.update(fields)
    return registry.Workload(**base)


# (fields, words the reason must contain)
LACKING = [
    (dict(column="COL_MEDIAN"), ["workload x", "column COL_MEDIAN", "no PyTorch formulation"]),
    (dict(logits="LOGITS_ALIBI"), ["workload x", "logits LOGITS_ALIBI", "no PyTorch formulation"]),
    (dict(keys="KEYS_SLIDING"), ["workload x", "keys KEYS_SLIDING", "no PyTorch formulation"]),
    (dict(keys="KEYS_SELECTED_BLOCKS"), ["workload x", "KEYS_SELECTED_BLOCKS", "COL_NONE"]),
    (dict(select="SEL_RANDOM"), ["workload x", "select SEL_RANDOM", "no PyTorch formulation"]),
    (dict(pool=4), ["workload x", "pool 4", "odd"]),
    (dict(column="COL_NONE", score=None, select="SEL_NONE", pool=3), ["pool 3", "score"]),
    (dict(column="COL_SUM_SQ"), ["column COL_SUM_SQ", "out+score+score2"]),
    (dict(select="SEL_FLAGS"), ["select SEL_FLAGS", "flags"]),
    (dict(column="COL_ANY_GE_MASK", score=None, flags="x_flags", select="SEL_TOPK"),
     ["select SEL_TOPK", "score"]),
]
# new combinations of known features: no Python change needed
COMBINED = [
    dict(logits="LOGITS_SOFTCAP", column="COL_SUM_SQ", score2="x_sq", pool=3,
         select="SEL_TOPK_STD"),
    dict(logits="LOGITS_SOFTCAP", column="COL_KEYFORMER", pool=7),
    dict(column="COL_ANY_GE_MASK", score=None, flags="x_flags", select="SEL_FLAGS",
         logits="LOGITS_SOFTCAP"),
    dict(column="COL_NONE", score=None, select="SEL_NONE"),
    dict(column="COL_NONE", score=None, select="SEL_NONE", keys="KEYS_SELECTED_BLOCKS"),
]


def test_formulations(def_path):
    reasons = unformulated(registry.load(def_path))
    check(reasons == [], "registry rows without a PyTorch formulation: %s" % reasons)
    for fields, words in LACKING:
        reasons = unformulated([synthetic(**fields)])
        check(len(reasons) == 1 and all(w in reasons[0] for w in words),
              "synthetic row %s: reasons %s, want one naming %s" % (fields, reasons, words))
    for fields in COMBINED:
        reasons = unformulated([synthetic(**fields)])
        check(reasons == [], "new combination %s reported as %s" % (fields, reasons))


# ---- malformed files ------------------------------------------------------------------------

GOOD_ROW = ('WORKLOAD(H2O, "h2o", LOGITS_SCALED, KEYS_DENSE, COL_SUM, 0, SEL_TOPK, '
            '"h2o_score", NULL, NULL, 5e-3, 1e-2)')
# (text of line 4, words the error must contain besides file:4)
MALFORMED = [
    ('WORKLOAD(H2O, "h2o", LOGITS_SCALED, KEYS_DENSE, COL_SUM, 0, SEL_TOPK, "h2o_score", '
     'NULL, 5e-3, 1e-2)', ["expected 12 arguments", "got 11"]),
    (GOOD_ROW.replace("KEYS_DENSE", "DENSE"), ["argument keys", "KEYS_* feature"]),
    (GOOD_ROW.replace("COL_SUM", "COLUMN_SUM"), ["argument column", "COL_* feature",
                                                 "COLUMN_SUM"]),
    (GOOD_ROW.replace("LOGITS_SCALED", "SCALED"), ["argument logits", "LOGITS_* feature"]),
    (GOOD_ROW.replace("SEL_TOPK", "TOPK"), ["argument select", "SEL_* feature"]),
    (GOOD_ROW.replace(", 0,", ", -1,"), ["argument pool", "non-negative integer"]),
    (GOOD_ROW.replace(", 0,", ", five,"), ["argument pool", "non-negative integer"]),
    (GOOD_ROW.replace("5e-3", "0"), ["argument tol_rel_l2", "positive number"]),
    (GOOD_ROW.replace("1e-2", "big"), ["argument tol_max_abs", "positive number"]),
    (GOOD_ROW.replace('"h2o",', "h2o,", 1), ["argument name", "string literal"]),
    (GOOD_ROW.replace('"h2o_score"', "h2o_score"), ["argument score", "NULL or"]),
    (GOOD_ROW[:-1], ["expected a row WORKLOAD("]),
    ("WORKLOAD(H2O, \"h2o\"", ["expected a row WORKLOAD("]),
    ("int x = 1;", ["expected a row WORKLOAD(", "int x"]),
    (GOOD_ROW.replace("5e-3,", "5e-3,,"), ["argument"]),
    (GOOD_ROW.replace('"h2o",', '"attn",', 1), ["name 'attn' already used", ":3"]),
    (GOOD_ROW.replace("H2O,", "ATTN,", 1), ["id 'ATTN' already used", ":3"]),
    (GOOD_ROW.replace('"h2o_score"', '"out"'), ["output name 'out'", "attention output"]),
    ("/* a comment that never ends", ["comment", "never closed"]),
]
HEADER = ("/* test registry\n * line 2 */\n"
          'WORKLOAD(ATTN, "attn", LOGITS_SCALED, KEYS_DENSE, COL_NONE, 0, SEL_NONE, NULL, '
          'NULL, NULL, 5e-3, 1e-2)\n')


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def expect_error(path, line, words, what):
    try:
        registry.load(path)
    except registry.RegistryError as e:
        msg = str(e)
        check(msg.startswith("%s:%d: " % (path, line)),
              "%s: error does not start with %s:%d: %r" % (what, path, line, msg))
        for w in words:
            check(w in msg, "%s: error does not say %r: %r" % (what, w, msg))
        return msg
    check(False, "%s: accepted" % what)
    return None


def test_malformed(directory):
    good = write(directory, "good.def", HEADER + "  " + GOOD_ROW + "  // trailing comment\n"
                 "#define UNUSED 1\n\n")
    try:
        check(registry.load(good)[1].name == "h2o", "a well-formed file with comments")
    except registry.RegistryError as e:
        check(False, "well-formed file rejected: %s" % e)
    for n, (text, words) in enumerate(MALFORMED):
        path = write(directory, "bad%d.def" % n, HEADER + text + "\n" + GOOD_ROW.replace(
            "H2O", "LAST").replace('"h2o', '"last') + "\n")
        expect_error(path, 4, words, "malformed line %r" % text)
    empty = write(directory, "empty.def", "/* nothing */\n")
    try:
        registry.load(empty)
        check(False, "a file without rows accepted")
    except registry.RegistryError as e:
        check(str(e).startswith(empty + ":") and "no WORKLOAD" in str(e), "empty file: %s" % e)
    missing = os.path.join(directory, "absent.def")
    try:
        registry.load(missing)
        check(False, "a missing file accepted")
    except registry.RegistryError as e:
        check(str(e).startswith(missing + ":") and "cannot read" in str(e), "missing: %s" % e)
    # the CLI and peer.py report the same error, exit 1, nothing on stdout
    bad = os.path.join(directory, "bad1.def")
    res = subprocess.run([sys.executable, REGISTRY_PY, "--def", bad, "names"],
                         capture_output=True, text=True)
    check(res.returncode == 1 and res.stdout == "" and "%s:4:" % bad in res.stderr,
          "registry.py names on a malformed file: exit %d, stdout %r, stderr %r"
          % (res.returncode, res.stdout, res.stderr))
    res = run_peer(["--system", "torch", "--workload", "attn"], bad)
    check(res.returncode == 1 and res.stdout == "" and "%s:4:" % bad in res.stderr,
          "peer.py with a malformed registry: exit %d, stdout %r, stderr %r"
          % (res.returncode, res.stdout, res.stderr[-300:]))


def run_peer(args, def_path):
    env = dict(os.environ, REPRO_WORKLOADS_DEF=def_path)
    return subprocess.run([sys.executable, os.path.join(PEERS, "peer.py")] + args,
                          capture_output=True, text=True, env=env, timeout=120)


def test_cli_follows_registry(directory, def_path):
    with open(def_path, encoding="utf-8") as f:
        text = f.read()
    extra = write(directory, "extra.def", text + GOOD_ROW.replace("H2O", "MINE").replace(
        '"h2o', '"mine') + "\n")
    res = run_peer(["--help"], extra)
    check(res.returncode == 0 and "mine" in res.stdout, "peer.py --help with an extra row: %r"
          % res.stdout[:300])
    res = run_peer(["--system", "torch", "--workload", "mine", "--bogus"], def_path)
    check(res.returncode == 2 and "--workload" in res.stderr and "'mine'" in res.stderr,
          "peer.py accepts a workload that is not in the registry: %r" % res.stderr[-300:])
    res = subprocess.run([sys.executable, os.path.join(PEERS, "systems.py"), "names"],
                         capture_output=True, text=True)
    names = res.stdout.split()
    check(res.returncode == 0 and names, "systems.py names: exit %d %r" % (res.returncode,
                                                                           res.stdout))
    for system in names:
        res = run_peer(["--system", system, "--workload", "attn", "--seqlen", "0"], def_path)
        check(res.returncode == 2 and "--seqlen" in res.stderr,
              "peer.py --system %s not accepted as a choice: %r" % (system, res.stderr[-200:]))
    res = run_peer(["--system", "nonesuch", "--workload", "attn"], def_path)
    check(res.returncode == 2 and all(s in res.stderr for s in names),
          "peer.py --system choices are not systems.py's: %r" % res.stderr[-300:])


def main():
    global registry, wl, REGISTRY_PY, PEERS
    p = argparse.ArgumentParser()
    p.add_argument("--peers-dir", required=True)
    p.add_argument("--def", dest="def_path", required=True)
    p.add_argument("--attnvar")
    p.add_argument("--llama-e2e")
    a = p.parse_args()
    PEERS = os.path.abspath(a.peers_dir)
    REGISTRY_PY = os.path.join(PEERS, "registry.py")
    def_path = os.path.abspath(a.def_path)
    os.environ["REPRO_WORKLOADS_DEF"] = def_path  # before registry is imported
    sys.path.insert(0, PEERS)
    import registry as registry_module
    import workloads as wl_module
    registry, wl = registry_module, wl_module

    test_def_file(def_path, a.attnvar, a.llama_e2e)
    test_formulations(def_path)
    with tempfile.TemporaryDirectory() as directory:
        test_malformed(directory)
        test_cli_follows_registry(directory, def_path)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
