#!/usr/bin/env python3
"""log_table.py LOG...: one row per peer log (gpu_check.sh's summary), from the LAST record of
each tag. Columns: the cell (experiment, seqlen, workload, system), status, avg ms, GFLOP/s,
peak MiB, compile s, the worst check (largest rel_l2, and whether every check passed), reason.
A file that is not a well-formed log becomes a row with status=badlog and the parse error.
Exit status 1 when some row is neither ok nor unsupported."""
import os
import sys

import kvlog

COLUMNS = ("exp", "seqlen", "workload", "system", "status", "avg_ms", "gflops_s", "peak_mib",
           "compile_s", "check", "reason")


def worst_check(path):
    """'ok rel=...' / 'FAIL rel=...' over every check line, or '-' when there is none."""
    worst, all_ok, seen = 0.0, True, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            if not text.startswith("check "):
                continue
            _, pairs = kvlog.parse(text)
            d = dict(pairs)
            seen = True
            all_ok &= d.get("ok") == "1"
            try:
                worst = max(worst, float(d.get("rel_l2", "nan")))
            except ValueError:
                all_ok = False
    if not seen:
        return "-"
    return "%s rel=%.1e" % ("ok" if all_ok else "FAIL", worst)


def row(path):
    try:
        rec = kvlog.read_log(path)
        cfg, res = rec.get("config", {}), rec.get("result", {})
        cells = {
            "exp": cfg.get("experiment", "kernel"), "seqlen": cfg.get("seqlen", "?"),
            "workload": cfg.get("workload", "?"), "system": cfg.get("system", "?"),
            "status": res.get("status", "noresult"), "check": worst_check(path),
        }
        for key in ("avg_ms", "gflops_s", "peak_mib", "compile_s"):
            cells[key] = res.get(key, "-")
        cells["reason"] = res.get("reason", "")[:70]
    except (OSError, kvlog.ParseError) as e:
        cells = {c: "?" for c in COLUMNS}
        cells.update(status="badlog", reason=str(e)[:70], workload=os.path.basename(path))
    return cells


def main(paths):
    rows = [row(p) for p in sorted(paths)]
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in COLUMNS).rstrip())
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in COLUMNS).rstrip())
    bad = [r for r in rows if r["status"] not in ("ok", "unsupported")
           or r["check"].startswith("FAIL")]
    print("%d logs: %d ok, %d unsupported, %d other" % (
        len(rows), sum(r["status"] == "ok" for r in rows),
        sum(r["status"] == "unsupported" for r in rows), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
