#!/usr/bin/env python3
"""Prints the ratios studies/tilebench/README.md's H200 prose quotes, from a folder of logs.

    results/h200-one-commit/tilebench-ratios.py [LOGDIR]   (default: backup_logs/tilebench)

Reads the tidy table `repro-plot table` makes of LOGDIR's logs (build/bin/repro-plot, the
tilebench study's config), keeps the H200's ok rows, and prints per kind of cell the range and
geometric mean of one system's avg_ms over another's, then each backend's compile times. A
helper for the prose; the tables themselves are scripts/readme-tables.sh's.
"""
import collections
import csv
import io
import math
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tidy_rows(log_dir):
    plot = os.path.join(ROOT, "build", "bin", "repro-plot")
    config = os.path.join(ROOT, "studies", "tilebench", "experiment.yaml")
    out = subprocess.run([plot, "table", "--config", config, "--logs", log_dir],
                         check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def load(log_dir):
    """cells[(experiment, problem)][system] = avg_ms; compile_s[(experiment, system)] = [s]."""
    cells = collections.defaultdict(dict)
    compile_s = collections.defaultdict(list)
    for row in tidy_rows(log_dir):
        if row["device"] != "h200" or row["status"] != "ok":
            continue
        problem = dict(kv.split("=", 1) for kv in row["problem_size"].split())
        key = (row["experiment"], tuple(sorted(problem.items())))
        cells[key][row["system"]] = float(row["avg_ms"])
        if row["compilation_time"]:
            compile_s[(row["experiment"], row["system"])].append(float(row["compilation_time"]))
    return cells, compile_s


def ratios(cells, a, b, keep):
    return [x[a] / x[b] for (exp, prob), x in cells.items()
            if a in x and b in x and keep(exp, dict(prob))]


def show(label, values):
    if not values:
        print(f"{label}: -")
        return
    gm = math.exp(sum(map(math.log, values)) / len(values))
    print(f"{label}: {min(values):.3f}-{max(values):.3f} (n={len(values)}, geomean {gm:.3f})")


def main():
    if len(sys.argv) > 2:
        sys.exit(__doc__)
    log_dir = sys.argv[1] if len(sys.argv) == 2 else os.path.join(ROOT, "backup_logs", "tilebench")
    cells, compile_s = load(log_dir)

    def gemm16(e, p):
        return e == "gemm" and p.get("dtype") in ("bf16", "fp16")

    def big16(e, p):
        return gemm16(e, p) and p.get("m") != "1024"

    def mha(e, p):
        return e == "mha"

    def nsa_with(**want):
        return lambda e, p: e == "nsa" and all(p.get(k) == v for k, v in want.items())

    show("GEMM cutedsl / tilelang, 16-bit", ratios(cells, "cutedsl", "tilelang", gemm16))
    show("GEMM tilelang / pytorch, 4096 and 8192", ratios(cells, "tilelang", "pytorch", big16))
    show("GEMM wgmma / cublas, 4096 and 8192", ratios(cells, "wgmma", "cublas", big16))
    show("GEMM wgmma / tilelang, 16-bit", ratios(cells, "wgmma", "tilelang", gemm16))
    for a, b in [("cutedsl", "tilelang"), ("torch", "tilelang"), ("tilelang", "sdpa-cudnn"),
                 ("tilelang", "fused"), ("fused", "fa3")]:
        show(f"MHA {a} / {b}", ratios(cells, a, b, mha))
    d64_long = nsa_with(dim="64")
    groups = {
        "D32 G16": nsa_with(dim="32"),
        "D64 G1": nsa_with(dim="64", groups="1"),
        "D64 G4": nsa_with(dim="64", groups="4"),
        "D64 S256": nsa_with(dim="64", seqlen="256"),
        "D64 S>=512": lambda e, p: d64_long(e, p) and p.get("seqlen") != "256",
        "D64": d64_long,
        "all": nsa_with(),
    }
    for label, keep in groups.items():
        for a, b in [("fused", "tilelang"), ("cutedsl", "tilelang"), ("torch", "tilelang"),
                     ("torch", "cutedsl")]:
            show(f"NSA {label} {a} / {b}", ratios(cells, a, b, keep))
    for (kind, system), values in sorted(compile_s.items()):
        print(f"compile_s {kind} {system}: {min(values):.1f}-{max(values):.1f} (n={len(values)})")


if __name__ == "__main__":
    main()
