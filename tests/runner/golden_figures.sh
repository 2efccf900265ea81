#!/usr/bin/env bash
# The dry-run output of fig12, fig13 and fig14 must not change when their experiment files
# or the runner are reshaped: for both shipped cluster files, `repro-run --dry-run` of each
# figure (cells printed as log<TAB>command, and every array script) is compared byte for
# byte with tests/runner/golden/<fig>/<cluster>/.
#   golden_figures.sh REPRO_RUN WORK_DIR [--update]   (--update rewrites the golden files)
# The figure folders are copied under WORK_DIR, which is marked as a repository root so that
# {root} is WORK_DIR. Normalised, because they differ from run to run: WORK_DIR (@WORK@), the
# runner's own path (@RUNNER@) and the run folder's UTC time (dry-run-@TIME@). Nothing else.
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2 update=${3:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
golden=$src/tests/runner/golden
rm -rf "$work"; mkdir -p "$work"
work=$(cd "$work" && pwd -P)
runner_abs=$(cd "$(dirname "$runner")" && pwd -P)/$(basename "$runner")
touch "$work/.repro-root"
normalise() {
  sed -e "s|$runner_abs|@RUNNER@|g" -e "s|$work|@WORK@|g" \
      -e 's/dry-run-[0-9]\{8\}T[0-9]\{6\}Z/dry-run-@TIME@/g' "$1"
}
for f in fig12 fig13 fig14; do
  mkdir -p "$work/$f"
  cp "$src/$f/experiment.yaml" "$work/$f/"
  for c in generic local-test; do
    out=$work/out/$f/$c
    mkdir -p "$out"
    rm -rf "$work/$f/runs"
    (cd "$work/$f" && env -u REPRO_PYTHON -u REPRO_CLUSTER "$runner_abs" run experiment.yaml --dry-run \
        -c "$src/clusters/$c.yaml" --bin /opt/kit/bin --python /usr/bin/python3 >"$out/cells.txt" 2>"$out/err.txt")
    check_eq "$f/$c dry-run exit" "$?" 0
    normalise "$out/cells.txt" >"$out/cells.norm"
    mv "$out/cells.norm" "$out/cells.txt"
    rm "$out/err.txt"
    for s in "$work/$f"/runs/dry-run-*/jobs/*.sbatch; do
      normalise "$s" >"$out/$(basename "$s")"
    done
    check "$f/$c wrote array scripts" test "$(count_paths "$out"/*.sbatch)" -gt 0
    if [ "$update" = --update ]; then
      rm -rf "${golden:?}/$f/$c"; mkdir -p "$golden/$f/$c"; cp "$out"/* "$golden/$f/$c/"
      continue
    fi
    check "$f/$c same files as golden" diff <(ls "$golden/$f/$c") <(ls "$out")
    for g in "$golden/$f/$c"/*; do
      check "$f/$c/$(basename "$g") byte-identical" cmp "$g" "$out/$(basename "$g")"
    done
  done
done
finish
