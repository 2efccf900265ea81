#!/usr/bin/env python3
"""Prints the ratios studies/tilebench/README.md's H200 prose quotes, from a folder of logs.

    results/h200-one-commit/tilebench-ratios.py backup_logs/tilebench [COMMIT]

Reads each *.h200.*.log's avg_ms (ok cells only; with COMMIT, that commit's logs only) and
compile_s, and prints per kind of cell the range of one system's time over another's and the
compile times per backend. A helper for the prose; the tables themselves are
scripts/readme-tables.sh's.
"""
import collections
import glob
import math
import os
import re
import sys


def load(folder, want):
    cells = collections.defaultdict(dict)
    compile_s = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "*.h200.*.log")):
        text = open(path).read()
        commit = re.search(r"commit=(\S+)", text)
        if want and (not commit or commit.group(1) != want):
            continue
        name = os.path.basename(path)[:-4].split(".")
        system, cell = name[-1], ".".join(name[:-1])
        comp = re.search(r"compile_s=([0-9.]+)", text)
        if comp:
            compile_s[(name[0], system)].append(float(comp.group(1)))
        ok = re.search(r"result status=ok .*?avg_ms=([0-9.e+-]+)", text)
        if ok:
            cells[cell][system] = float(ok.group(1))
    return cells, compile_s


def ratios(cells, a, b, keep):
    return [x[a] / x[b] for c, x in cells.items() if a in x and b in x and keep(c)]


def show(label, values):
    if not values:
        print(f"{label}: -")
        return
    gm = math.exp(sum(map(math.log, values)) / len(values))
    print(f"{label}: {min(values):.3f}-{max(values):.3f} (n={len(values)}, geomean {gm:.3f})")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cells, compile_s = load(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
    gemm16 = lambda c: c.startswith("gemm") and ("bf16" in c or "fp16" in c)
    big16 = lambda c: gemm16(c) and "1024x" not in c
    mha = lambda c: c.startswith("mha")
    nsa = lambda c: c.startswith("nsa")
    groups = {
        "D32 G16": lambda c: nsa(c) and ".d32." in c,
        "D64 G1": lambda c: nsa(c) and ".d64." in c and ".g1." in c,
        "D64 G4": lambda c: nsa(c) and ".d64." in c and ".g4." in c,
        "D64 S256": lambda c: nsa(c) and ".d64." in c and ".s256." in c,
        "D64 S>=512": lambda c: nsa(c) and ".d64." in c and ".s256." not in c,
        "D64": lambda c: nsa(c) and ".d64." in c,
        "all": nsa,
    }
    show("GEMM cutedsl / tilelang, 16-bit", ratios(cells, "cutedsl", "tilelang", gemm16))
    show("GEMM tilelang / pytorch, 4096 and 8192", ratios(cells, "tilelang", "pytorch", big16))
    show("GEMM wgmma / cublas, 4096 and 8192", ratios(cells, "wgmma", "cublas", big16))
    show("GEMM wgmma / tilelang, 16-bit", ratios(cells, "wgmma", "tilelang", gemm16))
    for a, b in [("cutedsl", "tilelang"), ("torch", "tilelang"), ("tilelang", "sdpa-cudnn"),
                 ("tilelang", "fused"), ("fused", "fa3")]:
        show(f"MHA {a} / {b}", ratios(cells, a, b, mha))
    for label, keep in groups.items():
        for a, b in [("fused", "tilelang"), ("cutedsl", "tilelang"), ("torch", "tilelang"),
                     ("torch", "cutedsl")]:
            show(f"NSA {label} {a} / {b}", ratios(cells, a, b, keep))
    for (kind, system), values in sorted(compile_s.items()):
        print(f"compile_s {kind} {system}: {min(values):.1f}-{max(values):.1f} (n={len(values)})")


if __name__ == "__main__":
    main()
