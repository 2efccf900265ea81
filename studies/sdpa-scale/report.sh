#!/usr/bin/env bash
# The study's tables from its logs (README.md has the conventions):
#   ./report.sh [LOGDIR]        (default ./ae_logs when present, else ./backup_logs)
#   ./report.sh --markdown DEVICE [LOGDIR]   README.md's tables of the logs of DEVICE (h100, ...)
# 1. per configuration (workload, D, causal, dtype; the groups G of a GQA cell) and system:
#    status, ms, TFLOP/s (4*B*H*S^2*D over the query heads H, halved when causal), % of the
#    GPU's dense fp16/bf16 peak, us per (batch*head), peak MiB against the floor of Q, K, V and
#    O (K and V at H/G heads when the config line says kv_heads=), the cell's roofline minimum
#    time (max of FLOPs/peak, floor bytes/bandwidth)
# 2. the status document's tiers over SDPA: the TFLOP/s each would need against the peak
# --markdown prints instead, in Markdown (scripts/readme-tables.sh writes them into README.md):
# ms (TFLOP/s) per configuration and system with ours' % of peak and ours' speedup over SDPA
# cuDNN (its time / ours: > 1 where ours is faster, as every speedup of the kit); peak
# MiB against the floor; the tiers over the document's 12.27 ms and over this run's SDPA cuDNN.
# The GPU is told apart by the meta line: its name, and for an H100 the SM count (132 SXM,
# 114 PCIe). Logs from the CPU path (gpu=none) are listed, with no peak.
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
set -euo pipefail
markdown=
if [ "${1:-}" = --markdown ]; then
  markdown=${2:?--markdown needs a device (h100, h200, a100)}
  shift 2
fi
logs=${1:-}
if [ -z "$logs" ]; then
  if [ -e "$here/ae_logs" ]; then logs=$here/ae_logs; else logs=$here/backup_logs; fi
fi
exec python3 - "$root/scripts/peers" "$logs" "$markdown" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[1])
import kvlog

# name, dense fp16/bf16 tensor peak TFLOP/s (no sparsity), HBM TB/s
DEVICES = {"h100-sxm": ("H100 SXM", 989.4, 3.35), "h100-pcie": ("H100 PCIe", 756.0, 2.0),
           "h200": ("H200", 989.4, 4.8), "a100": ("A100", 312.0, 2.039)}
# the status document's tiers over its SDPA D=128 baseline (12.27 ms, causal fp16)
SEED_MS, TIERS = 12.27, (2, 3, 5, 13, 64)


def device_of(meta):
    gpu = meta.get("gpu", "none")
    if "H100" in gpu:
        sms = int(meta.get("sms", "0") or 0)
        if sms == 114 or "PCIe" in gpu:
            return "h100-pcie"
        return "h100-sxm" if sms in (0, 132) else None
    if "H200" in gpu:
        return "h200"
    if "A100" in gpu:
        return "a100"
    return None


def read(path):
    recs = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            try:
                tag, pairs = kvlog.parse(line.rstrip("\n"))
            except kvlog.ParseError:
                continue
            if tag == "check":
                recs.setdefault("checks", []).append(dict(pairs))
            else:
                recs[tag] = dict(pairs)  # the last result wins
    return recs


rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.log"))):
    r = read(path)
    cfg, res, meta = r.get("config", {}), r.get("result", {}), r.get("meta", {})
    if not cfg or not res:
        print("skipped %s: no config or result line" % path)
        continue
    b, h, s, d = (int(cfg.get(k, "0")) for k in ("batch", "heads", "seqlen", "dim"))
    kvh = int(cfg.get("kv_heads", h))  # GQA: H/G K/V heads (the line names it when G > 1)
    causal = cfg.get("causal", "1") == "1"
    elt = 2  # fp16 and bf16
    flops = 4.0 * b * h * s * s * d / (2 if causal else 1)  # per query head: GQA changes none
    floor_mib = 2.0 * b * s * (h + kvh) * d * elt / 2**20  # Q and O at H heads, K and V at H/G
    dev = device_of(meta)
    rows.append(dict(name=os.path.basename(path), system=cfg.get("system", "?"), d=d,
                     workload=cfg.get("workload", "attn"), groups=h // kvh if kvh else 1,
                     causal=int(causal), dtype=cfg.get("dtype", "?"), bh=b * h, flops=flops,
                     floor_mib=floor_mib, dev=dev, gpu=meta.get("gpu", "?"),
                     status=res.get("status", "?"), ms=float(res.get("avg_ms", "nan")),
                     peak=res.get("peak_mib"), reason=res.get("reason", ""),
                     checks=r.get("checks", []), shape="B%d H%d S%d" % (b, h, s)))

MD_SYSTEMS = [("fused", "fused (ours)"), ("sdpa-cudnn", "SDPA cuDNN"),
              ("sdpa-compiled", "SDPA compiled"), ("flex", "FlexAttention"),
              ("sdpa-flash", "SDPA flash"), ("sdpa-efficient", "SDPA efficient"),
              ("unfused", "unfused (ours)"), ("fa3", "FlashAttention-3"),
              ("fa2", "FlashAttention-2"), ("flashinfer", "FlashInfer")]


def config_of(r):
    """A cell's configuration: (workload, D, causal, dtype, G); the system completes its key."""
    return (r["workload"], r["d"], r["causal"], r["dtype"], r["groups"])


def config_order(c):
    """attn first, then D descending, causal before full, fp16 before bf16, MHA before GQA."""
    return (c[0] != "attn", c[0], -c[1], -c[2], c[3] != "fp16", c[4])


def config_label(c):
    """D128 causal fp16; the workload in front when it is not attn, G behind when above 1."""
    return "%sD%d %s %s%s" % ("" if c[0] == "attn" else c[0] + " ", c[1],
                              "causal" if c[2] else "full", c[3], " G%d" % c[4] if c[4] > 1 else "")


def markdown(dev_name):
    """README.md's tables of the logs named .DEV. (exit 1 without any)."""
    mine = [r for r in rows if r["name"].split(".")[1:2] == [dev_name]]
    if not mine:
        sys.exit("report.sh: no log of %s in %s" % (dev_name, sys.argv[2]))
    kinds = {r["dev"] for r in mine}
    if len(kinds) != 1 or None in kinds:
        sys.exit("report.sh: the %s logs are not of one known GPU: %s" % (dev_name, sorted(
            {r["gpu"] for r in mine})))
    gname, peak, _ = DEVICES[kinds.pop()]
    cells = {config_of(r) + (r["system"],): r for r in mine}
    systems = [(s, lab) for s, lab in MD_SYSTEMS if any(k[-1] == s for k in cells)]
    configs = sorted({k[:-1] for k in cells}, key=config_order)
    label = config_label
    tflops = lambda r: r["flops"] / (r["ms"] / 1e3) / 1e12
    head = lambda cols: "| config | %s |\n|---|%s" % (" | ".join(cols), "---:|" * len(cols))

    print("*sdpa-scale, %s (%s): ms (TFLOP/s), %% of the dense peak %.1f TFLOP/s; avg_ms of "
          "each log*\n" % (dev_name.upper(), gname, peak))
    print(head([lab for _, lab in systems] + ["ours, % of peak",
                                               "speedup over SDPA cuDNN (its time / ours)"]))
    for c in configs:
        out = []
        for s, _ in systems:
            r = cells.get(c + (s,))
            out.append("-" if r is None else r["status"] if r["status"] != "ok" else
                       "%.2f (%.0f)" % (r["ms"], tflops(r)))
        f, cu = cells.get(c + ("fused",)), cells.get(c + ("sdpa-cudnn",))
        ok = lambda r: r is not None and r["status"] == "ok"
        out.append("%.1f %%" % (100 * tflops(f) / peak) if ok(f) else "-")
        out.append("%.2fx" % (cu["ms"] / f["ms"]) if ok(f) and ok(cu) else "-")
        print("| %s | %s |" % (label(c), " | ".join(out)))

    print("\n*sdpa-scale, %s: peak MiB (x the Q+K+V+O floor)*\n" % dev_name.upper())
    print(head(["floor"] + [lab for s, lab in systems]))
    for c in configs:
        out = ["%.0f" % next(r["floor_mib"] for k, r in cells.items() if k[:-1] == c)]
        for s, _ in systems:
            r = cells.get(c + (s,))
            out.append("-" if r is None else r["status"] if r["status"] != "ok" else
                       "%.0f (%.2fx)" % (float(r["peak"]), float(r["peak"]) / r["floor_mib"])
                       if r["peak"] else "n/a")
        print("| %s | %s |" % (label(c), " | ".join(out)))

    f128 = 4.0 * 16 * 96 * 4096**2 * 128 / 2
    cu = cells.get(("attn", 128, 1, "fp16", 1, "sdpa-cudnn"))
    bases = [("the document's SDPA, %.2f ms" % SEED_MS, SEED_MS)]
    if cu is not None and cu["status"] == "ok":
        bases.append(("this run's SDPA cuDNN, %.2f ms" % cu["ms"], cu["ms"]))
    print("\n*sdpa-scale, %s: the status document's tiers at D128 causal fp16; needed TFLOP/s "
          "count causal FLOPs (%.2f TFLOP), against the dense peak %.1f*\n" % (
              dev_name.upper(), f128 / 1e12, peak))
    cols = []
    for name, _ in bases:
        cols += ["over %s: ms" % name, "needs TFLOP/s", "% of peak"]
    print("| tier | %s |\n|---|%s" % (" | ".join(cols), "---:|" * len(cols)))
    for i, t in enumerate(TIERS):
        out = []
        for _, ms in bases:
            need = f128 / (ms / t / 1e3) / 1e12
            out += ["%.3f" % (ms / t), "{:,.0f}".format(need), "{:,.0f} %".format(100 * need / peak)]
        print("| %d (%dx) | %s |" % (i + 1, t, " | ".join(out)))


if sys.argv[3]:
    markdown(sys.argv[3])
    sys.exit(0)
if not rows:
    print("no logs in %s" % sys.argv[2])
    sys.exit(0)
devs = sorted({r["dev"] or r["gpu"] for r in rows})
print("logs: %s; GPU(s): %s" % (sys.argv[2], ", ".join(
    DEVICES[d][0] if d in DEVICES else "%s (no peak in the table)" % d for d in devs)))
print("TFLOP/s = 4*B*H*S^2*D / time, halved when causal; %peak of the dense fp16/bf16 "
      "tensor peak; us/bh = ms*1000/(B*H); floor = Q+K+V+O (K, V at H/G heads); roofline = "
      "max(FLOPs/peak, floor bytes/HBM bandwidth)")
cfgname_of = lambda r: "%s %s" % (r["shape"], config_label(config_of(r)))
w = max([28] + [len(cfgname_of(r)) for r in rows])  # the config column: its longest name
hdr = "%-*s %-15s %-11s %9s %8s %6s %8s %9s %7s %9s  %s" % (
    w, "config", "system", "status", "ms", "TFLOP/s", "%peak", "us/bh", "peak_MiB", "xfloor",
    "roof_ms", "check / reason")
key = lambda r: (r["workload"] != "attn", r["workload"], -r["d"], -r["causal"], r["dtype"],
                 r["groups"], r["system"])
last = None
for r in sorted(rows, key=key):
    cfgname = cfgname_of(r)
    if cfgname != last:
        print("\n" + hdr if last is None else "")
        last = cfgname
    dv = DEVICES.get(r["dev"])
    roof = (max(r["flops"] / (dv[1] * 1e12), r["floor_mib"] * 2**20 / (dv[2] * 1e12)) * 1e3
            if dv else float("nan"))
    note = r["reason"][:60]
    if r["checks"]:
        worst = max(float(c.get("rel_l2", "nan")) for c in r["checks"])
        ok = all(c.get("ok") == "1" for c in r["checks"])
        npairs = len(r["checks"][0].get("pairs", "").split()) or r["bh"]
        note = "rel_l2 %.1e %s (%d of %d (b,h))" % (worst, "ok" if ok else "FAIL", npairs,
                                                     r["bh"])
    if r["status"] == "ok":
        tf = r["flops"] / (r["ms"] / 1e3) / 1e12
        pk = float(r["peak"]) if r["peak"] else float("nan")
        print("%-*s %-15s %-11s %9.3f %8.1f %6.1f %8.2f %9.0f %7.2f %9.3f  %s" % (
            w, cfgname, r["system"], "ok", r["ms"], tf, 100 * tf / dv[1] if dv else float("nan"),
            r["ms"] * 1e3 / r["bh"], pk, pk / r["floor_mib"], roof, note))
    else:
        print("%-*s %-15s %-11s %9s %8s %6s %8s %9s %7s %9.3f  %s" % (
            w, cfgname, r["system"], r["status"], "-", "-", "-", "-", "-", "-", roof, note))

# the tiers: the document's baseline, and the SDPA cells measured here at D=128 causal fp16
print("\nTiers over SDPA (the status document's: 2x, 3x, 5x, 13x, 64x); needed TFLOP/s counts "
      "causal FLOPs (half of 4*B*H*S^2*D)")
base = [("document SDPA 12.27 ms", SEED_MS)]
for r in sorted(rows, key=key):
    if (r["system"].startswith("sdpa") and r["status"] == "ok"
            and config_of(r) == ("attn", 128, 1, "fp16", 1)):
        base.append(("%s %.2f ms" % (r["system"], r["ms"]), r["ms"]))
f128 = 4.0 * 16 * 96 * 4096**2 * 128 / 2
peaks = [DEVICES[d] for d in devs if d in DEVICES] or [DEVICES["h100-sxm"]]
print("%-26s %5s %9s %10s  %s" % ("baseline", "tier", "ms", "TFLOP/s", " ".join(
    "vs %s %.0f" % (p[0], p[1]) for p in peaks)))
for name, ms in base:
    for t in TIERS:
        need = f128 / (ms / t / 1e3) / 1e12
        print("%-26s %4dx %9.3f %10.0f  %s" % (name, t, ms / t, need, " ".join(
            "%s (%.0f%%)" % ("exceeds" if need > p[1] else "below", 100 * need / p[1])
            for p in peaks)))
PY
