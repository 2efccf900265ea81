#!/usr/bin/env bash
# A full disk loses nothing: every log writer (attnvar, gemmbench, kronlayer, llama_e2e and the
# Python peers peer.py, gemm.py, kron.py) exits 1 naming the failed write when its log does not
# reach the disk, and a run whose folder is on a disk that fills up while a cell writes its
# result line has no good log for that cell: `repro-run status` lists it, `--resume` runs it
# again, the plotter marks it ERR. Needs root (it mounts small tmpfs folders): exit 77 without.
#   full_disk.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$runner")" && pwd)
page=4096
[ "$(id -u)" = 0 ] || skip "not root: mounting a tmpfs needs root"
for b in attnvar gemmbench kronlayer llama_e2e repro-plot; do
  [ -x "$bin/$b" ] || skip "$bin/$b is not built"
done
command -v python3 >/dev/null || skip "no python3 for the peers"
rm -rf "$work"; mkdir -p "$work/small" "$work/runfs"
work=$(cd "$work" && pwd)
trap 'umount "$work/small" 2>/dev/null; umount "$work/runfs" 2>/dev/null' EXIT
mount -t tmpfs -o size=256k tmpfs "$work/small" 2>/dev/null || skip "cannot mount a tmpfs"
mount -t tmpfs -o size=256k tmpfs "$work/runfs" 2>/dev/null || skip "cannot mount a tmpfs"
total_pages=$((256 * 1024 / page))
# shellcheck disable=SC2317 # called through check
ends_in_newline() { [ -s "$1" ] && [ -z "$(tail -c1 "$1")" ]; }
# shellcheck disable=SC2317 # called through check
not() { ! "$@"; }

# A stand-in torch that cannot be imported: the peers write a whole log (unsupported, exit 4)
# without PyTorch, on machines that have it too.
mkdir -p "$work/notorch/torch"
echo 'raise ImportError("stand-in torch of full_disk.sh: no torch here")' >"$work/notorch/torch/__init__.py"
export PYTHONPATH=$work/notorch
peers=$src/scripts/peers
# name|expected exit of a whole run|command (small CPU cells)
writers=(
  "attnvar|0|$bin/attnvar --workload h2o --system ref --device cpu --seqlen 128 --heads 2 --dim 32"
  "gemmbench|0|$bin/gemmbench --system ref --m 64 --n 64 --k 64 --device cpu"
  "kronlayer|0|$bin/kronlayer --device cpu --shape 4x8x8 check"
  "llama_e2e|0|$bin/llama_e2e --workload h2o --system ref --seqlen 64 --layers 1 --hidden 64 --heads 2 --mlp 64 --vocab 100 --warmup 0 --runs 1 --device cpu"
  "peer.py|4|python3 $peers/peer.py --system torch --workload h2o --seqlen 256"
  "gemm.py|4|python3 $peers/gemm.py --system pytorch --m 64 --n 64 --k 64"
  "kron.py|4|python3 $peers/kron.py --system torch-v2 --shape 4x8x8 --pass bwd"
)

# Where a log's last result line starts (byte offset) and how long it is: "OFFSET LENGTH".
result_at() {
  local off line
  off=$(grep -b '^result ' "$1" | tail -1 | cut -d: -f1)
  line=$(grep '^result ' "$1" | tail -1)
  echo "$off ${#line}"
}

# PAD bytes of comment lines that start like a log: "# repro-log 1", then "# pad ####...".
pad_text() { printf '# repro-log 1\n# pad '; head -c "$(($1 - 21))" /dev/zero | tr '\0' '#'; printf '\n'; }

# Fills the small tmpfs but for FREE pages.
fill_small() {
  rm -f "$work/small"/*
  dd if=/dev/zero of="$work/small/fill" bs=$page count=$((total_pages - $1)) 2>/dev/null
}

# One writer's run whose output went nowhere: exit 1 and the message naming stdout.
check_failed_write() {  # check_failed_write NAME WHAT RC ERRFILE
  check_eq "$1 $2: exit" "$3" 1
  check "$1 $2: says the log's write failed" \
    grep -q "^$1: writing the log to stdout failed: No space left on device" "$4"
}

# 1. every writer: a whole log normally; exit 1 with the message to /dev/full, to a file on a
#    full disk, and when the disk fills up in the middle of its result line
for w in "${writers[@]}"; do
  IFS='|' read -r name want cmd <<<"$w"
  read -ra argv <<<"$cmd"
  "${argv[@]}" >"$work/$name.log" 2>"$work/$name.err"
  check_eq "$name: exit of a whole run" "$?" "$want"
  check "$name: its log ends in a newline" ends_in_newline "$work/$name.log"

  "${argv[@]}" >/dev/full 2>"$work/$name.full.err"
  check_failed_write "$name" "to /dev/full" "$?" "$work/$name.full.err"

  fill_small 0
  "${argv[@]}" >"$work/small/$name.log" 2>"$work/$name.empty.err"
  check_failed_write "$name" "to a full tmpfs" "$?" "$work/$name.empty.err"

  # the page boundary halfway into the result line: the log holds its first half, no newline
  read -r off len <<<"$(result_at "$work/$name.log")"
  cross=$((off + len / 2))
  pages=$(((cross + 64 + page - 1) / page))
  pad=$((pages * page - cross))
  fill_small "$pages"
  (pad_text "$pad"; exec "${argv[@]}") >"$work/small/$name.log" 2>"$work/$name.cut.err"
  check_failed_write "$name" "with the disk full mid result line" "$?" "$work/$name.cut.err"
  check_eq "$name: the cut log fills its pages" "$(stat -c %s "$work/small/$name.log")" $((pages * page))
  check "$name: the cut log's last line has no newline" not ends_in_newline "$work/small/$name.log"
done

# 2. a run whose folder is on a disk that fills up while its cell writes: the cell's program
#    pads its log so that the log's first page ends in its result line's first number
#    ("result status=ok avg_ms=1", a line that parses), fills the disk, then runs attnvar
#    (once: the marker file says the disk was filled)
read -r off len <<<"$(result_at "$work/attnvar.log")"
line=$(grep '^result ' "$work/attnvar.log" | tail -1)
before=${line%%avg_ms=*}
pad=$((page - off - ${#before} - 8)) # the page ends after "avg_ms=" and one digit
cat >"$work/fill_then.sh" <<'EOF'
#!/usr/bin/env bash
# fill_then.sh FS PAD MARK COUNT CMD...: the cell's program for full_disk.sh
fs=$1 pad=$2 mark=$3 count=$4
shift 4
echo "$$" >>"$count"
if [ ! -e "$mark" ]; then
  touch "$mark"
  printf '# repro-log 1\n# pad '; head -c "$((pad - 21))" /dev/zero | tr '\0' '#'; printf '\n'
  dd if=/dev/zero of="$fs/fill" bs=4096 2>/dev/null
fi
exec "$@"
EOF
chmod +x "$work/fill_then.sh"
fig=$work/runfs/fig
mkdir -p "$fig"
cat >"$fig/experiment.yaml" <<EOF
# full_disk.sh's matrix: one attnvar CPU cell whose log the disk cuts
figure: fullfig
defaults: {wrapper: "$work/fill_then.sh", fs: "$work/runfs", pad: "$pad", mark: "$work/filled", count: "$work/count"}
systems:
  ref: {command: "{wrapper} {fs} {pad} {mark} {count} {bin}/attnvar --workload {workload} --system ref --device cpu --seqlen 128 --heads 2 --dim 32", ours: true}
experiments:
  kernel:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 60
    axes: {device: [h100], workload: [h2o], system: [ref]}
plot:
  devices: [h100]
  workloads: [h2o]
  figures: [{name: fullfig_kernel, kind: grid, experiment: kernel, ylabel: "Time (ms)"}]
EOF
cd "$fig" || exit 1
cell=kernel.h100.h2o.ref.log
"$runner" run experiment.yaml --local --device h100 -q >"$work/run.out" 2>&1
check_eq "run with the disk filling up: exit (a failed cell)" "$?" 1
check "the disk was filled" test -e "$work/filled"
run=$(current_run)
check "the cut log is in logs/" test -f "$run/logs/$cell"
check "the log ends in its cut result line" grep -q '^result status=ok avg_ms=[0-9]$' "$run/logs/$cell"
check "its last line (the result line) has no newline" not ends_in_newline "$run/logs/$cell"

# status, still on the full disk: the cell has no good log
"$runner" status "$run" >"$work/status1.out" 2>&1
check_eq "status: exit (cells without a good log)" "$?" 1
check "status: 1 cell without a good log" grep -q "^1 cells without a good log" "$work/status1.out"
check "status: the cell named as cut" grep -Eq "^  cut +.*$cell: .*is cut" "$work/status1.out"

# the plotter marks it ERR
rm -f "$work/runfs/fill"
"$bin/repro-plot" table --config experiment.yaml --logs "$run/logs" --format csv -o "$work/table.csv" 2>"$work/plot.err"
check "plot: the cell is ERR" grep -q "h2o,ref,.*error" "$work/table.csv"
check "plot: the cut line named" grep -q "last line is cut" "$work/plot.err"

# --resume runs it again (with room now) and keeps the cut log in attempts/
"$runner" run experiment.yaml --local --device h100 --resume >"$work/resume.out" 2>&1
check_eq "resume exit" "$?" 0
check "resume: the cell runs again" grep -q "1 cells to run" "$work/resume.out"
check_eq "the cell ran twice" "$(wc -l <"$work/count")" 2
check_eq "resumed log ok" "$(last_result "$run/logs/$cell" status)" ok
check "the cut log kept in attempts/" test -f "$run/attempts/$cell.1"
"$runner" status "$run" >"$work/status2.out" 2>&1
check_eq "status after the resume: exit" "$?" 0
check "status after the resume: every log good" grep -q "^0 cells without a good log" "$work/status2.out"
cd "$work" || exit 1
finish
