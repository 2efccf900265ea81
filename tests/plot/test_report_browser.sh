#!/usr/bin/env bash
# The HTML report in a browser (headless Chromium): `./plot.sh ROOT --out DIR` draws Figures
# 12-14 from the shipped logs and writes DIR/report.html with the studies' sections; Chromium
# loads it from disk and its DOM must hold every figure the plots draw and every figure of a
# study's folder (h2o-diag's k sweep and cache, drawn by its own script), an inline <svg> each,
# as many table rows per section as `repro-plot table` gives, each table of cells folded (a
# closed details), the verdict as the first table, and no script but the report's own; at a
# 1280 px window, every details opened, the page is no wider than the window (wide tables
# scroll in their own box) and the verdict is on the first screen; the file is under 1 MB. The
# hostile fixtures (fixtures/report/, TEST FIXTURES) show their <script> as text.
# Screenshots go to WORK: report.png (the top of the page, 1200 px wide), first-screen.png (the
# first screen at 1280x900: the verdict), hostile.png.
#   test_report_browser.sh BUILD_DIR SOURCE_DIR WORK       exit 77 (skip) without chromium
# check() evals its first argument: the single quotes keep its expansions for eval, and the
# variables it reads look unused to shellcheck.
# shellcheck disable=SC2016,SC2034
set -u
build=$1; src=$2; work=$3
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium is not installed (scripts/install.sh --tests installs it)"
  exit 77
fi
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
bin=$build/bin/repro-plot
fx=$src/tests/plot/fixtures

# Chromium, headless, on a file of this machine; its own profile (tests may run in parallel).
browse() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size=1200,1800 "$@" 2> "$work/chromium.err"
}

# 1. ./plot.sh from the shipped logs writes the report beside the figures
t0=$(date +%s.%N)
REPRO_BUILD_DIR=$build "$src/plot.sh" "$src/backup_logs" --out "$work/figs" > "$work/plot.out" 2>&1
rc=$?
t1=$(date +%s.%N)
report=$work/figs/report.html
check '[ $rc -eq 0 ] && [ -s "$report" ]' "plot.sh writes report.html beside the figures ($(tail -2 "$work/plot.out"))"
size=$(wc -c < "$report")
check '[ "$size" -lt 1000000 ]' "the report is under 1 MB ($size bytes)"
echo "plot.sh ./backup_logs --out: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s, report $size bytes"

# what the DOM must hold: per section, the figures the plot draws (their .dat) and the rows of
# the tidy table
: > "$work/expect.txt"
for d in fig12 fig13 fig14 studies/h2o-diag studies/kron-layer studies/sdpa-scale studies/tilebench; do
  name=$(sed -n 's/^figure: *//p' "$src/$d/experiment.yaml")
  rows=$(($("$bin" table --config "$src/$d/experiment.yaml" --logs "$src/backup_logs/$name" 2>/dev/null | wc -l) - 1))
  "$bin" draw --config "$src/$d/experiment.yaml" --logs "$src/backup_logs/$name" --out "$work/dat/$name" \
    --no-render > /dev/null 2>&1
  figs=
  for dat in "$work/dat/$name"/*.dat; do figs="$figs $(basename "$dat" .dat)"; done
  # a study's folder's every figure: its own script's (h2o-diag's h2o_diag_k) too
  if [ "${d#studies/}" != "$d" ]; then
    for svgf in "$src/$d"/figures/*.svg; do
      f=$(basename "$svgf" .svg)
      case " $figs " in *" $f "*) ;; *) figs="$figs $f" ;; esac
    done
  fi
  echo "$name $rows $figs" >> "$work/expect.txt"
done
check 'grep -q "^h2o-diag .* h2o_diag_k" "$work/expect.txt"' "h2o-diag's k sweep is among the figures expected"

browse --dump-dom "file://$report" > "$work/dom.html"
check '[ -s "$work/dom.html" ]' "chromium dumps the DOM ($(tail -2 "$work/chromium.err"))"
browse --screenshot="$work/report.png" "file://$report" > /dev/null
check '[ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]' "a screenshot of the report ($work/report.png)"

# Reads a dumped DOM: per section its figures (and whether each holds an <svg>) and the body
# rows of its tables of logs; the elements by name, javascript: links, the text.
cat > "$work/dom.py" <<'PY'
import json, sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sec = None; self.fig = None; self.tidy = False; self.body = False
        self.figs = {}; self.rows = {}; self.tags = {}; self.text = []
        self.details = []; self.tables = []; self.unfolded = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if any((v or "").strip().lower().startswith("javascript:") for _, v in attrs):
            self.tags["javascript:"] = self.tags.get("javascript:", 0) + 1
        if tag == "section":
            self.sec = a.get("data-figure"); self.rows.setdefault(self.sec, 0)
        elif tag == "figure":
            self.fig = a.get("data-name"); self.figs.setdefault(self.sec, {})[self.fig] = False
        elif tag == "svg" and self.fig:
            self.figs[self.sec][self.fig] = True
        elif tag == "details":
            self.details.append("open" in a)
        elif tag == "table":
            self.tidy = "tidy" in a.get("class", "").split()
            self.tables.append(a.get("class", ""))
            # a table of cells is folded: inside a details, closed
            if self.tidy and (not self.details or any(self.details)):
                self.unfolded += 1
        elif tag == "tbody":
            self.body = self.tidy
        elif tag == "tr" and self.body and self.sec:
            self.rows[self.sec] += 1

    def handle_endtag(self, tag):
        if tag == "details" and self.details: self.details.pop()
        if tag == "figure": self.fig = None
        elif tag == "section": self.sec = None
        elif tag == "table": self.tidy = False
        elif tag == "tbody": self.body = False

    def handle_data(self, data):
        self.text.append(data)

d = Dom()
d.feed(open(sys.argv[1], encoding="utf-8").read())
print(json.dumps({"figs": d.figs, "rows": d.rows, "tags": d.tags, "tables": d.tables,
                  "unfolded": d.unfolded}))
open(sys.argv[2], "w", encoding="utf-8").write("".join(d.text))
PY
python3 "$work/dom.py" "$work/dom.html" "$work/dom.txt" > "$work/dom.json"
check '[ -s "$work/dom.json" ]' "the DOM parses"
q() { python3 -c "import json,sys; d=json.load(open('$work/dom.json')); print($1)"; }
check '[ "$(q "d[\"tags\"].get(\"script\", 0)")" = 1 ]' "one script element: the report's own"
check '[ "$(q "d[\"tables\"][0] if d[\"tables\"] else None")" = verdict ]' "the verdict is the first table ($(q "d['tables'][:1]"))"
ntidy=$(q "sum('tidy' in c.split() for c in d['tables'])")
check '[ "$ntidy" -gt 20 ] && [ "$(q "d[\"unfolded\"]")" = 0 ]' "every table of cells ($ntidy) is folded: in a details, closed ($(q "d['unfolded']") not)"

# At a 1280 px window: every details opened, the page no wider than the window (its
# scrollWidth), and the verdict table's top within the first screen. A copy of the report
# with a probe script at its end (the report's own bytes stay as they are).
probe='<script>document.querySelectorAll("details").forEach(function(e){e.open=true;});'
probe+='var v=document.querySelector("table.verdict"),t=v?Math.round(v.getBoundingClientRect().top):-1;'
probe+='document.body.setAttribute("data-probe","sw="+document.documentElement.scrollWidth+" verdict="+t);</script>'
sed "s#</body></html>#$probe</body></html>#" "$report" > "$work/probe.html"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$work/profile" --window-size=1280,900 --dump-dom "file://$work/probe.html" \
  2> "$work/chromium.err" > "$work/probe-dom.html"
got=$(grep -o 'data-probe="[^"]*"' "$work/probe-dom.html")
sw=$(printf '%s' "$got" | sed -n 's/.*sw=\([0-9]*\).*/\1/p')
top=$(printf '%s' "$got" | sed -n 's/.*verdict=\(-\{0,1\}[0-9]*\).*/\1/p')
check '[ -n "$sw" ] && [ "$sw" -le 1280 ]' "no element wider than a 1280 px window, every details open (document scrollWidth ${sw:-?})"
check '[ -n "$top" ] && [ "$top" -ge 0 ] && [ "$top" -lt 900 ]' "the verdict is on the first screen at 1280x900 (its top at ${top:-?} px)"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$work/profile" --window-size=1280,900 --screenshot="$work/first-screen.png" \
  "file://$report" > /dev/null 2>> "$work/chromium.err"
check '[ "$(head -c 8 "$work/first-screen.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]' "a screenshot of the first screen ($work/first-screen.png)"
while read -r name rows figs; do
  got=$(q "d['rows'].get('$name', -1)")
  check '[ "$got" = "$rows" ]' "$name: $got table rows in the DOM, $rows in the tidy table"
  for f in $figs; do
    check '[ "$(q "d[\"figs\"].get(\"$name\", {}).get(\"$f\")")" = True ]' "$name: figure $f is in the DOM with its svg"
  done
done < "$work/expect.txt"

# 2. the hostile fixtures: their <script> and <img> are text
h=$work/hostile.html
"$bin" report -o "$h" --config "$src/fig12/experiment.yaml" --logs "$fx/report/fig12" \
  --figures "$fx/report/svg" > /dev/null 2>&1
check '[ $? -eq 0 ]' "report of the hostile fixtures"
browse --dump-dom "file://$h" > "$work/hostile-dom.html"
python3 "$work/dom.py" "$work/hostile-dom.html" "$work/hostile.txt" > "$work/hostile.json"
qh() { python3 -c "import json,sys; d=json.load(open('$work/hostile.json')); print($1)"; }
check '[ "$(qh "d[\"tags\"].get(\"script\", 0)")" = 1 ] && [ "$(qh "d[\"tags\"].get(\"img\", 0)")" = 0 ]' "no script or img element from the logs or the figure"
check '[ "$(qh "d[\"tags\"].get(\"foreignobject\", 0) + d[\"tags\"].get(\"javascript:\", 0)")" = 0 ]' "no foreignObject or javascript: link from the figure"
# the page's text (not its markup) holds the fixtures' markup
text() { grep -qF -- "$1" "$work/hostile.txt" && echo 1 || echo 0; }
reason=$(text $'check failed: <script>alert(\'reason\')</script> & \'quotes\' "dq"')
check '[ "$reason" = 1 ]' "the reason's <script> is text"
gpu=$(text $'<script>alert(\'gpu\')</script>') commit=$(text '"><img src=x onerror=alert(1)>')
check '[ "$gpu$commit" = 11 ]' "the GPU's and the commit's markup is text"
kept=$(text '<script>kept as text') gone=$(text 'inline script')
check '[ "$kept$gone" = 10 ]' "the figure's text stays, its script is gone"
browse --screenshot="$work/hostile.png" "file://$h" > /dev/null
check '[ -s "$work/hostile.png" ]' "a screenshot of the hostile report ($work/hostile.png)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
