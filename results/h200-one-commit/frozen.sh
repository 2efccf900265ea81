#!/usr/bin/env bash
# The one-commit H200 run's device step (README.md beside it): unpacks the frozen binaries
# (built at the run's commit from a clean tree, carried: .gt/frozen-bin.tar.xz, all of them, or
# .gt/frozen-bin-attn.tar.xz, what every target but fig12:e2e and kron-layer runs) into build/bin,
# names FlashTensor's module (build/flashtensor/site-cpython-312, carried), puts /tmp/site in
# reach where a wheel folder installed TVM or TileLang there, unpacks this folder's pack of each
# target given (packs/TARGET.tgz: runs/<time>/ and ae_logs) into the target's folder so that
# --resume continues it, then runs scripts/gpu-run.sh with the arguments.
#   bash results/h200-one-commit/frozen.sh [--budget S] [--resume [--widen]] [--only K=V]
#        [--exclude K=V] TARGET...      (gpu-run.sh's options)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
mkdir -p build/bin
unpacked=0
for pack in .gt/frozen-bin.tar.xz .gt/frozen-bin-attn.tar.xz; do
  [ -f "$pack" ] && tar xJf "$pack" -C build/bin && unpacked=1
done
[ "$unpacked" = 1 ] || { echo "frozen.sh: no .gt/frozen-bin*.tar.xz" >&2; exit 1; }
echo "binaries at $(cat build/bin/COMMIT)"
export REPRO_FLASHTENSOR_SITE=$root/build/flashtensor/site-cpython-312
if [ -d /tmp/site/tvm ]; then export REPRO_TVM_PATH=/tmp/site; echo "tvm in /tmp/site"; fi
if [ -d /tmp/site/tilelang ]; then export PYTHONPATH=/tmp/site; echo "tilelang in /tmp/site"; fi
skip=0
for arg in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case $arg in --budget|--only|--exclude) skip=1; continue ;; -*) continue ;; esac
  tag=${arg//[:@\/]/-} name=${arg%%[:@]*}
  [ -f "$here/packs/$tag.tgz" ] || continue
  if [ -d "$name" ]; then dir=$name; else dir=studies/$name; fi
  tar xzf "$here/packs/$tag.tgz" -C "$dir" && echo "unpacked packs/$tag.tgz into $dir"
done
scripts/gpu-run.sh "$@"
