#!/usr/bin/env bash
# One colour per system, in every figure and study: every experiment.yaml with a plot: section
# (fig12-14, studies/*) drawn from its shipped logs (--no-render: the .gp and .dat only, no
# gnuplot needed); each .gp names its bars' systems and colours (grid, sweep: sysname and
# syscolor; comparison, speedup: legend_name and legend_color). Fails when one system has two
# colours anywhere, when two systems of one figure share a colour, when a drawn system has no
# row in common/registry.yaml's systems: (or is drawn with another label or colour than its
# row's), when two rows there share a colour, or when a plot: section still gives a label or a
# colour of its own. A .gp without sysname (repro-plot before the registry) is read by its
# labels, so the check still says what is wrong there.
#   test_colors.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
bin=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

n=0
for yaml in "$src"/fig1[234]/experiment.yaml "$src"/studies/*/experiment.yaml; do
  grep -q '^plot:' "$yaml" || continue
  name=$(basename "$(dirname "$yaml")")
  logs=$src/backup_logs/$name
  [ -d "$logs" ] || logs=$tmp/empty
  mkdir -p "$tmp/empty"
  if "$bin" draw --config "$yaml" --logs "$logs" --out "$tmp/out/$name" --no-render >"$tmp/$name.out" 2>&1; then
    n=$((n + 1))
  else
    fail=$((fail + 1)); echo "FAIL: $name: repro-plot draw failed: $(tail -2 "$tmp/$name.out")" >&2
  fi
done
check '[ "$n" -ge 7 ]' "every figure and study drawn (fig12-14 and 4 studies), $n were"

# one line per bar system of each figure: FIGURE<TAB>SYSTEM<TAB>COLOUR (SYSTEM: its name, or
# "label:" and its label when the .gp has no names)
for gp in "$tmp"/out/*/*.gp; do
  awk -v fig="${gp#"$tmp"/out/}" '
    function items(line, out,   s, n, i) { s = line; sub(/^[^[]*\[[0-9]*\] = \[/, "", s); sub(/\][ \t]*$/, "", s)
      n = split(s, out, substr(s, 1, 1) == "\"" ? "\", \"" : ", "); for (i = 1; i <= n; i++) gsub(/^"|"$/, "", out[i]); return n }
    /^array (sysname|legend_name)\[/ { nn = items($0, names) }
    /^array (syslabel|legend_text)\[/ { nl = items($0, labels); for (i = 1; i <= nl; i++) sub(/^\([A-Z]\) /, "", labels[i]) }
    /^array (syscolor|legend_color)\[/ { nc = items($0, colors) }
    END { for (i = 1; i <= nc; i++) printf "%s\t%s\t%06X\n", fig, (nn ? names[i] : "label:" labels[i]), colors[i] }
  ' "$gp"
done > "$tmp/colors.tsv"
check '[ -s "$tmp/colors.tsv" ]' "the .gp files name their systems' colours"

# a system with two colours (across all figures)
awk -F'\t' '{ k = $2 SUBSEP $3; if (!(k in seen)) { seen[k] = 1; n[$2]++; list[$2] = list[$2] " #" $3 " (" $1 ")" } }
  END { for (s in n) if (n[s] > 1) print s " has " n[s] " colours:" list[s] }' "$tmp/colors.tsv" > "$tmp/two"
check '[ ! -s "$tmp/two" ]' "one colour per system in every figure: $(head -4 "$tmp/two" | tr '\n' ';')"
# two systems of one figure with one colour
awk -F'\t' '{ k = $1 " " $3; if (k in s && s[k] != $2) printf "%s: %s and %s share #%s\n", $1, s[k], $2, $3; s[k] = $2 }' \
  "$tmp/colors.tsv" > "$tmp/share"
check '[ ! -s "$tmp/share" ]' "distinct systems in one figure have distinct colours: $(head -4 "$tmp/share" | tr '\n' ';')"

# the registry's systems: rows NAME: {label: "...", color: "#rrggbb", aliases: [...]}
pal=$src/common/registry.yaml
check '[ -f "$pal" ]' "common/registry.yaml exists (the one home of the systems' labels and colours)"
if [ -f "$pal" ]; then
  awk '/^[a-z]/ { sec = $1 } sec == "systems:" && /^  [A-Za-z0-9._-]+: *\{/ {
         name = $1; sub(/:$/, "", name); col = $0; sub(/.*color: *"#/, "", col); col = toupper(substr(col, 1, 6))
         lab = $0; sub(/.*label: *"?/, "", lab); sub(/"?, *color:.*/, "", lab)
         print name "\t" col "\t" lab; al = $0
         if (sub(/.*aliases: *\[/, "", al)) { sub(/\].*/, "", al); n = split(al, a, /, */); for (i = 1; i <= n; i++) print a[i] "\t" col "\t" lab } }' \
    "$pal" > "$tmp/palette.tsv"
  check '[ -s "$tmp/palette.tsv" ]' "common/registry.yaml's systems read"
  # rows (not aliases) sharing a colour: aliases are the same system
  awk '/^[a-z]/ { sec = $1 } sec == "systems:" && /^  [A-Za-z0-9._-]+: *\{/ { col = $0; sub(/.*color: *"#/, "", col); print toupper(substr(col, 1, 6)) }' "$pal" | sort | uniq -d > "$tmp/paldup"
  check '[ ! -s "$tmp/paldup" ]' "two systems of common/registry.yaml share a colour: $(tr '\n' ' ' < "$tmp/paldup")"
  # every drawn system (by name) has its row, and is drawn in the row's colour
  awk -F'\t' 'NR == FNR { col[$1] = $2; next } $2 !~ /^label:/ && !($2 in col) { print $1 ": " $2 " has no row in common/registry.yaml" }
    $2 !~ /^label:/ && ($2 in col) && col[$2] != $3 { print $1 ": " $2 " is #" $3 ", its row says #" col[$2] }' \
    "$tmp/palette.tsv" "$tmp/colors.tsv" > "$tmp/norow"
  check '[ ! -s "$tmp/norow" ]' "each drawn system has its row and its colour: $(head -4 "$tmp/norow" | tr '\n' ';')"
  check '! grep -q "^label:" <(cut -f2 "$tmp/colors.tsv")' "the .gp files name their systems (sysname, legend_name)"
  # every grid or sweep bar is labelled as its row says (one label per system everywhere)
  for gp in "$tmp"/out/*/*.gp; do
    awk -v fig="${gp#"$tmp"/out/}" '
      function items(line, out,   s, n, i) { s = line; sub(/^[^[]*\[[0-9]*\] = \[/, "", s); sub(/\][ \t]*$/, "", s)
        n = split(s, out, "\", \""); for (i = 1; i <= n; i++) gsub(/^"|"$/, "", out[i]); return n }
      /^array sysname\[/ { nn = items($0, names) } /^array syslabel\[/ { nl = items($0, labels) }
      END { for (i = 1; i <= nn && i <= nl; i++) printf "%s\t%s\t%s\n", fig, names[i], labels[i] }' "$gp"
  done > "$tmp/labels.tsv"
  awk -F'\t' 'NR == FNR { lab[$1] = $3; next } ($2 in lab) && lab[$2] != $3 { print $1 ": " $2 " is labelled \"" $3 "\", its row says \"" lab[$2] "\"" }' \
    "$tmp/palette.tsv" "$tmp/labels.tsv" > "$tmp/badlabel"
  check '[ -s "$tmp/labels.tsv" ] && [ ! -s "$tmp/badlabel" ]' "each drawn system has its row's label: $(head -4 "$tmp/badlabel" | tr '\n' ';')"
fi
# no plot: section gives a label or colour of its own (names only), and repro-plot refuses one
check '! grep -qE "^ +(- )?\{name: [^}]*[ {,](label|color|aliases):" "$src"/fig1[234]/experiment.yaml "$src"/studies/*/experiment.yaml' "no plot: row gives its own label, colour or aliases"
mkdir -p "$tmp/cfg"
sed -E 's/^  systems: \[torch, /  systems: [{name: torch, color: "#123456"}, /' \
  "$src/fig14/experiment.yaml" > "$tmp/cfg/experiment.yaml"
"$bin" draw --config "$tmp/cfg/experiment.yaml" --logs "$tmp/empty" --out "$tmp/cfgout" --no-render > "$tmp/cfg.out" 2>&1
check '[ $? -ne 0 ] && grep -q "experiment.yaml:[0-9]*:[0-9]*: systems: expected a name: .*common/registry.yaml" "$tmp/cfg.out"' "a plot: systems row with a colour is refused, naming common/registry.yaml"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
