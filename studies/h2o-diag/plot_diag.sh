#!/usr/bin/env bash
# The study's own figures and table from a folder of logs (repro-plot draws the base
# comparison through ./plot.sh; its figure kinds, grid and sweep, have no stacked phases and
# no k axis yet, so these two figures are drawn here):
#   ./plot_diag.sh [LOGDIR] [--out DIR] [--no-render]
#   ./plot_diag.sh --markdown DEVICE [LOGDIR]    README.md's tables of DEVICE, writes nothing
# LOGDIR: ./ae_logs when it exists, else ./backup_logs. Writes to DIR (default ./figures):
#   h2o_diag.tsv              one row per log: the cell, status, total/p1/p4 ms, cache, checks
#   h2o_diag_k.DEVICE.dat     S=4096: P1 and P4 against k, fp32 and fp16 (+ base lines)
#   h2o_diag_k.gp -> .png/.svg/.pdf        total = P1 + P4 stacked against k, one panel per
#                                          cache dtype, lines for inductor, torch and k=0
#   h2o_diag_cache.gp -> .png/.svg/.pdf    cache MiB against k (S = 2048, 4096, 8192)
# and prints the table; `repro-plot render` draws the figures ($REPRO_PLOT_BIN, else the one
# scripts/build.sh --plot builds). --markdown prints instead, in Markdown, the tables README.md shows
# (scripts/readme-tables.sh writes them there): at S = 4096 total, P1 / P4 and cache MiB
# against k, and the totals against S for k = 0, 1, 4; times are each log's avg_ms and its
# phase lines' avg_ms. Log names: {experiment}.{device}.{system}.{seqlen}.k{K}.{dtype}.log
# (experiment.yaml). Exit 0 (1 when LOGDIR holds no log of this study, or of DEVICE).
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
set -euo pipefail
logs="" out=$here/figures render=1 markdown=""
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift ;;
    --no-render) render=0 ;;
    --markdown) markdown=${2:?--markdown needs a device}; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "plot_diag.sh: unknown option $1" >&2; exit 2 ;;
    *) logs=$1 ;;
  esac
  shift
done
if [ -z "$logs" ]; then
  if [ -e "$here/ae_logs" ]; then logs=$here/ae_logs; else logs=$here/backup_logs; fi
fi
if [ -n "$markdown" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  tsv=$tmp/h2o_diag.tsv
else
  # every file is made in a private folder beside the outputs, then renamed into DIR: a reader
  # (or a second plot_diag.sh) never sees half a file
  mkdir -p "$out"
  final=$out
  stage=$(mktemp -d "$final/.plot_diag.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  out=$stage
  tsv=$out/h2o_diag.tsv
fi
# Moves the files made so far into DIR (each one rename) and makes DIR the outputs' folder.
publish() {
  local f
  for f in "$stage"/* "$stage"/.[!.]*; do [ -e "$f" ] && mv -f "$f" "$final/"; done
  rm -rf "$stage"
  out=$final tsv=$final/h2o_diag.tsv
}

# One row per log. Values are read from the kvline records (config, phase, check, the last
# result); none of the keys read here is ever quoted by the writers.
shopt -s nullglob
files=("$logs"/{base,diag,scale}.*.log)
if [ ${#files[@]} -eq 0 ]; then
  echo "plot_diag.sh: no log of this study in $logs" >&2
  exit 1
fi
awk -v OFS='\t' '
  function val(line, key,   n, i, f, a) {
    n = split(line, a, " ")
    for (i = 2; i <= n; i++) { f = a[i]; if (index(f, key "=") == 1) return substr(f, length(key) + 2) }
    return ""
  }
  function flush() {
    if (file == "") return
    nf = split(base, part, ".")
    print part[1], part[2], part[3], part[4], substr(part[5], 2), part[6], (status == "" ? "none" : status), \
          (total == "" ? "-" : total), (p1 == "" ? "-" : p1), (p4 == "" ? "-" : p4), \
          (mib == "" ? "-" : mib), (tiles == "" ? "-" : tiles), bad, (impl == "" ? "-" : impl)
  }
  BEGIN { print "experiment", "device", "system", "seqlen", "diag_k", "cache_dtype", "status", "total_ms", "p1_ms", "p4_ms", "cache_mib", "cached_tiles", "checks_failed", "impl" }
  FNR == 1 { flush(); file = FILENAME; base = FILENAME; sub(/.*\//, "", base); sub(/\.log$/, "", base)
             status = total = p1 = p4 = mib = tiles = impl = ""; bad = 0 }
  /^config / { mib = val($0, "cache_mib"); tiles = val($0, "cached_tiles"); impl = val($0, "impl") }
  /^phase / { if (val($0, "name") == "p1") p1 = val($0, "avg_ms"); if (val($0, "name") == "p4") p4 = val($0, "avg_ms") }
  /^check / { if (val($0, "ok") != "1") bad++ }
  /^result / { status = val($0, "status"); total = val($0, "avg_ms") }
  END { flush() }
' "${files[@]}" | sort -t$'\t' -k2,2 -k1,1 -k4,4n -k6,6 -k5,5n >"$tsv"

# README.md's tables of one device: a cell is its avg_ms (3 decimals), or its status when not
# ok, or - without a log; "vs k = 0" is the total against k = 0 of the same cache dtype and S.
if [ -n "$markdown" ]; then
  awk -F'\t' -v dev="$markdown" '
    NR == 1 || $2 != dev || $3 != "ours" || ($1 != "diag" && $1 != "scale") { next }
    { key = $4 SUBSEP $5 SUBSEP $6; st[key] = $7; tot[key] = $8; p1[key] = $9; p4[key] = $10
      mib[key] = $11; seen[$4] = 1; if ($1 == "diag" && $4 == 4096) { ks[$5 + 0] = 1; diag = 1 } }
    function cell(s, k, c) { key = s SUBSEP k SUBSEP c
      return !(key in st) ? "-" : st[key] != "ok" ? st[key] : sprintf("%.3f", tot[key]) }
    function rel(s, k, c,   a, b) { a = s SUBSEP k SUBSEP c; b = s SUBSEP 0 SUBSEP c
      if (k == 0 || st[a] != "ok" || st[b] != "ok") return ""
      return sprintf("%+.1f %%", 100 * (tot[a] / tot[b] - 1)) }
    function pad(t) { return t == "" ? " " : " " t " " }
    function phases(s, k, c) { key = s SUBSEP k SUBSEP c
      return st[key] != "ok" || p1[key] == "-" ? "-" : sprintf("%.3f / %.3f", p1[key], p4[key]) }
    function mibs(s, k,   a, b) { a = s SUBSEP k SUBSEP "fp32"; b = s SUBSEP k SUBSEP "fp16"
      if (k == 0) return "0"
      return (st[a] == "ok" ? sprintf("%.1f", mib[a]) : "-") " / " (st[b] == "ok" ? sprintf("%.1f", mib[b]) : "-") }
    END {
      if (!diag) { print "plot_diag.sh: no diag log of " dev > "/dev/stderr"; exit 1 }
      n = 0; for (k in ks) kl[++n] = k + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (kl[j] < kl[i]) { t = kl[i]; kl[i] = kl[j]; kl[j] = t }
      printf "*h2o-diag, %s: B=1 H=32 S=4096 D=128, ms (avg_ms; P1 / P4: the phase lines)*\n\n| S = 4096 |", toupper(dev)
      for (i = 1; i <= n; i++) printf " k = %d |", kl[i]
      printf "\n|---|"; for (i = 1; i <= n; i++) printf "---:|"; printf "\n"
      split("fp32 fp16", cs, " ")
      for (c = 1; c <= 2; c++) {
        printf "| %s cache: total |", cs[c]; for (i = 1; i <= n; i++) printf " %s |", cell(4096, kl[i], cs[c]); printf "\n"
        printf "| %s: vs k = 0 |", cs[c]; for (i = 1; i <= n; i++) printf "%s|", pad(rel(4096, kl[i], cs[c])); printf "\n"
        printf "| %s: P1 / P4 |", cs[c]; for (i = 1; i <= n; i++) printf " %s |", phases(4096, kl[i], cs[c]); printf "\n"
      }
      printf "| cache MiB (fp32 / fp16) |"; for (i = 1; i <= n; i++) printf " %s |", mibs(4096, kl[i]); printf "\n"
      m = 0; for (s in seen) sl[++m] = s + 0
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (sl[j] < sl[i]) { t = sl[i]; sl[i] = sl[j]; sl[j] = t }
      printf "\n*h2o-diag, %s: against S, ms (avg_ms)*\n\n", toupper(dev)
      print "| S | k | fp32 cache: total | vs k = 0 | fp16 cache: total | vs k = 0 |"
      print "|---:|---:|---:|---:|---:|---:|"
      split("0 1 4", kk, " ")
      for (i = 1; i <= m; i++) for (j = 1; j <= 3; j++)
        printf "| %d | %d | %s |%s| %s |%s|\n", sl[i], kk[j], cell(sl[i], kk[j], "fp32"), pad(rel(sl[i], kk[j], "fp32")), cell(sl[i], kk[j], "fp16"), pad(rel(sl[i], kk[j], "fp16"))
    }' "$tsv"
  exit
fi
column -t -s$'\t' "$tsv"

# The k figure's data per device: k, then P1 P4 total for fp32 and fp16 (S = 4096, diag; k=0
# from diag too), then the base lines (inductor, torch, k=0) as constant columns.
devices=$(awk -F'\t' 'NR > 1 && $1 == "diag" && $7 == "ok" { print $2 }' "$tsv" | sort -u)
[ -n "$devices" ] || { publish; echo "plot_diag.sh: no ok diag cell: no figure drawn"; exit 0; }
for dev in $devices; do
  awk -F'\t' -v dev="$dev" '
    NR == 1 { next }
    $2 != dev || $7 != "ok" { next }
    $1 == "base" && $3 == "inductor" { ind = $8 }
    $1 == "base" && $3 == "torch" { tor = $8 }
    $1 == "diag" && $4 == 4096 { k[$5] = 1; p1[$5, $6] = $9; p4[$5, $6] = $10; tot[$5, $6] = $8 }
    END {
      print "# k p1_fp32 p4_fp32 total_fp32 p1_fp16 p4_fp16 total_fp16 inductor torch k0"
      k0 = tot[0, "fp32"] != "" ? tot[0, "fp32"] : tot[0, "fp16"]
      n = 0; for (x in k) ks[++n] = x + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ks[j] < ks[i]) { t = ks[i]; ks[i] = ks[j]; ks[j] = t }
      for (i = 1; i <= n; i++) { x = ks[i]
        printf "%d %s %s %s %s %s %s %s %s %s\n", x, d(p1[x, "fp32"]), d(p4[x, "fp32"]), d(tot[x, "fp32"]), \
               d(p1[x, "fp16"]), d(p4[x, "fp16"]), d(tot[x, "fp16"]), d(ind), d(tor), d(k0) }
    }
    function d(v) { return v == "" || v == "-" ? "NaN" : v }
  ' "$tsv" >"$out/h2o_diag_k.$dev.dat"
  # the panel constants (gnuplot `load`s them): highest bar, the three reference lines
  awk '!/^#/ { for (i = 4; i <= 7; i += 3) if ($i != "NaN" && $i > top) top = $i; ind = $8; tor = $9; k0 = $10 }
       END { printf "top = %s; ind = %s; tor = %s; k0 = %s\n", top + 0, ind, tor, k0 }' \
    "$out/h2o_diag_k.$dev.dat" >"$out/h2o_diag_k.$dev.vars"
done
# the cache size depends on the shape and k only: one row per (S, k, dtype), the first device's
awk -F'\t' 'NR > 1 && ($1 == "diag" || $1 == "scale") && $7 == "ok" && $11 != "-" { print $2, $4, $5, $6, $11 }' "$tsv" \
  | sort -k1,1 -k2,2n -k4,4 -k3,3n | awk '!seen[$2 " " $3 " " $4]++' >"$out/h2o_diag_cache.dat"

# The systems' colours have one home, common/registry.yaml (a row `  NAME: {label: ..., color: "#RRGGBB"...}`):
# the lines of inductor, torch and fused-k0, and ours (fused-diag, the bars: P1 solid, P4 hatched).
color_of() { # SYSTEM
  local c
  c=$(awk -v name="$1" '$1 == name ":" && match($0, /color: *"#[0-9A-Fa-f]+"/) {
        c = substr($0, RSTART, RLENGTH); sub(/^color: *"/, "", c); sub(/"$/, "", c); print c; exit }' \
    "$root/common/registry.yaml")
  [ -n "$c" ] || { echo "plot_diag.sh: no colour of $1 in $root/common/registry.yaml" >&2; exit 1; }
  printf '%s' "$c"
}
colors="c_ind = \"$(color_of inductor)\"; c_tor = \"$(color_of torch)\"; c_k0 = \"$(color_of fused-k0)\"; c_ours = \"$(color_of ours)\""
gp=$out/h2o_diag_k.gp
{
  echo "# total = P1 + P4 against k at S = 4096 (plot_diag.sh); one panel per cache dtype"
  echo "devices = \"${devices//$'\n'/ }\""
  echo "# the colours of common/registry.yaml"
  echo "$colors"
  cat <<'EOF'
do for [fmt in "png svg pdf"] {
  if (fmt eq "pdf") { set terminal pdfcairo noenhanced color size 9, 3.2 * words(devices) font "Helvetica,9" }
  if (fmt eq "png") { set terminal pngcairo noenhanced color size 1350, 480 * words(devices) font "Helvetica,10" }
  if (fmt eq "svg") { set terminal svg noenhanced size 1350, 480 * words(devices) font "Helvetica,10" background "white" }
  set output "h2o_diag_k.".fmt
  set multiplot layout words(devices), 2
  do for [dev in devices] {
    f = "h2o_diag_k.".dev.".dat"
    load "h2o_diag_k.".dev.".vars"
    top = (ind == ind && ind > top) ? ind : top
    set yrange [0:top * 1.2]
    set style data histograms
    set style histogram rowstacked
    set style fill solid 0.8 border -1
    set boxwidth 0.7
    set key top left
    set ylabel "time (ms)"
    set xlabel "k (key blocks cached per query block)"
    set grid ytics
    do for [c in "fp32 fp16"] {
      p = (c eq "fp32") ? 2 : 5
      torlab = (tor == tor) ? sprintf("PyTorch %.2f ms%s", tor, tor > top * 1.2 ? " (off scale)" : "") : "PyTorch: no log"
      set title dev." h2o B=1 H=32 S=4096 D=128, cache ".c
      plot f using p:xtic(1) title "P1 (forward + cache writes)" lc rgb c_ours fs solid 0.8, \
           "" using (column(p + 1)) title "P4 (column pass)" lc rgb c_ours fs pattern 4 border -1, \
           "" using ($0):(ind) with lines dt 2 lw 2 lc rgb c_ind title sprintf("Inductor %.3f ms", ind), \
           "" using ($0):(tor) with lines dt 3 lw 2 lc rgb c_tor title torlab, \
           "" using ($0):(k0) with lines dt 1 lw 2 lc rgb c_k0 title sprintf("k=0 (fused) %.3f ms", k0)
    }
  }
  unset multiplot
}
EOF
} >"$gp"
cat >"$out/h2o_diag_cache.gp" <<'EOF'
# cache MiB against k (plot_diag.sh): B=1, H=32, D=128; one line per S and dtype (the size depends on the shape and k only)
do for [fmt in "png svg pdf"] {
  if (fmt eq "pdf") { set terminal pdfcairo noenhanced color size 6, 4 font "Helvetica,9" }
  if (fmt eq "png") { set terminal pngcairo noenhanced color size 900, 600 font "Helvetica,10" }
  if (fmt eq "svg") { set terminal svg noenhanced size 900, 600 font "Helvetica,10" background "white" }
  set output "h2o_diag_cache.".fmt
  set logscale y 2
  set xlabel "k (key blocks cached per query block)"
  set ylabel "cache (MiB)"
  set key top left
  set grid
  set title "fused-diag cache size (tiles + row maxima); L2 of an H100: 50 MB"
  plot for [s in "2048 4096 8192"] for [c in "fp32 fp16"] \
    sprintf("< awk '$2 == %s && $4 == \"%s\" && $3 > 0' h2o_diag_cache.dat", s, c) \
    using 3:5 with linespoints title sprintf("S=%s %s", s, c), \
    (50e6 / 1048576) with lines dt 2 lc rgb "black" title "50 MB"
}
EOF
publish
if [ "$render" = 1 ]; then
  if command -v gnuplot >/dev/null; then
    # repro-plot renders them as it renders its own figures: outputs checked, each gnuplot's
    # messages in NAME.gnuplot.log, the PDFs' date SOURCE_DATE_EPOCH or the epoch (the same
    # logs give the same bytes)
    plot_bin=${REPRO_PLOT_BIN:-$("$root/scripts/build.sh" --plot)}
    if "$plot_bin" render "$out" h2o_diag_k h2o_diag_cache; then
      echo "plot_diag.sh: figures in $out (h2o_diag_k, h2o_diag_cache)"
    else
      echo "plot_diag.sh: rendering failed (messages above)" >&2
    fi
  else
    echo "plot_diag.sh: gnuplot not found: data and scripts in $out, not drawn" >&2
  fi
fi
