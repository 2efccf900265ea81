#!/usr/bin/env python3
"""Packs cached wheels into numbered folders small enough to ride beside the working tree.

A device call carries the working tree (every tracked file) and the paths named in carry, 64 MiB
in all. shared/gpu-wheels/fetch.sh packs its folders at 60 MB, which no longer fit beside this
repository's tree; this script packs the same wheels (fetch.sh's download caches, DEST/.cache)
again, into DEST/1, DEST/2, ... of at most LIMIT bytes, cutting a larger wheel into parts that
shared/gpu-wheels/install.sh joins, with a copy of that install.sh in each folder. The default
LIMIT is what the tree leaves free, less 4 MiB (room for the tree to grow).

  scripts/recut-wheels.py [--limit BYTES] DEST CACHE...
  e.g. scripts/recut-wheels.py .gt/tvm .gw-tvm/.cache .gw-tvm-xgb/.cache
then on the GPU machine, one call per folder, back to back (/tmp lasts while it stays warm):
  bash .gt/tvm/1/install.sh .gt/tvm/1      (carry [".gt/tvm/1"]), ... 2, 3, ...
"""
import argparse
import os
import shutil
import subprocess
import sys

CARRY_BYTES = 64 * 2**20
MARGIN_BYTES = 4 * 2**20
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INSTALL_SH = os.path.join(ROOT, "..", "shared", "gpu-wheels", "install.sh")


def tree_bytes():
    """The size of every tracked file of the working tree, as the device tool carries it."""
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.split(b"\0")
    return sum(os.path.getsize(os.path.join(ROOT, n.decode()))
               for n in names if n and os.path.isfile(os.path.join(ROOT, n.decode())))


def pieces_of(caches, limit):
    """(size, path, wheel name, offset, part index or None) for every wheel of the caches."""
    pieces = []
    for cache in caches:
        for name in sorted(os.listdir(cache)):
            if not name.endswith(".whl"):
                continue
            path = os.path.join(cache, name)
            size = os.path.getsize(path)
            if size <= limit:
                pieces.append((size, path, name, 0, None))
                continue
            for part, offset in enumerate(range(0, size, limit)):
                pieces.append((min(limit, size - offset), path, name, offset, part))
    return pieces


def first_fit(pieces, limit):
    """The pieces in bins of at most limit bytes, largest first (fetch.sh's packing)."""
    bins = []
    for piece in sorted(pieces, reverse=True):
        fits = [b for b in bins if sum(p[0] for p in b) + piece[0] <= limit]
        if fits:
            fits[0].append(piece)
        else:
            bins.append([piece])
    return bins


def write_bins(dest, bins):
    for number, pieces in enumerate(bins, 1):
        folder = os.path.join(dest, str(number))
        if os.path.exists(folder):
            sys.exit("recut-wheels.py: %s exists; give a new DEST" % folder)
        os.makedirs(folder)
        for size, path, name, offset, part in pieces:
            with open(path, "rb") as src:
                src.seek(offset)
                data = src.read(size)
            target = name if part is None else "%s.part%d" % (name, part)
            with open(os.path.join(folder, target), "wb") as out:
                out.write(data)
        shutil.copy(INSTALL_SH, folder)
        total = sum(p[0] for p in pieces)
        print("%s: %.1f MB, %s" % (folder, total / 1e6, ", ".join(
            p[2] if p[4] is None else "%s.part%d" % (p[2], p[4]) for p in pieces)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="bytes per folder")
    parser.add_argument("dest")
    parser.add_argument("caches", nargs="+")
    args = parser.parse_args()
    limit = args.limit or CARRY_BYTES - tree_bytes() - MARGIN_BYTES
    if limit < 2**20:
        sys.exit("recut-wheels.py: a folder of %d bytes is too small to carry" % limit)
    if not os.path.isfile(INSTALL_SH):
        sys.exit("recut-wheels.py: %s is missing (../shared beside the repository)" % INSTALL_SH)
    for cache in args.caches:
        if not os.path.isdir(cache):
            sys.exit("recut-wheels.py: %s: not a folder of wheels" % cache)
    print("recut-wheels.py: folders of at most %.1f MB" % (limit / 1e6))
    write_bins(args.dest, first_fit(pieces_of(args.caches, limit), limit))


if __name__ == "__main__":
    main()
