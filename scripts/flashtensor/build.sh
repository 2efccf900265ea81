#!/usr/bin/env bash
# Builds FlashTensor itself, the artifact's compiler (3rd/asuka of monellz/FlashTensor-AE), as a
# Python module linked statically against Debian 12's MLIR 19, for one or more Pythons.
#   REPRO_FLASHTENSOR_DIR=/src/FlashTensor-AE scripts/flashtensor/build.sh [--python PY]... [--out DIR] [--jobs N]
# The artifact's checkout is not changed: its 3rd/asuka and asuka_exp are copied to DIR/src and
# scripts/flashtensor/flashtensor.patch applied there. asuka's C++ is compiled once (CMake, Ninja,
# Release); its Python bindings (ffi/*.cpp) once per Python, against that Python's headers; each is
# linked into DIR/site-TAG/asuka/asuka_ffi<EXT_SUFFIX> with the MLIR and LLVM archives inside, so a
# machine without MLIR (the GPU machine) needs only glibc >= 2.36 and libstdc++ (GLIBCXX_3.4.30).
# DIR/site-TAG then holds what the peer imports (asuka, asuka_exp, FLASHTENSOR_SOURCE): put it on
# PYTHONPATH or name it in REPRO_FLASHTENSOR_SITE (scripts/peers/flashtensor_backend.py).
#   --python PY   an interpreter to build the module for (repeatable; default python3); TAG is its
#                 cache tag (cpython-311, cpython-312). Its headers come from its sysconfig.
#   --out DIR     default build/flashtensor (REPRO_BUILD_DIR/flashtensor)
#   --jobs N      default nproc
# Needs: scripts/install.sh --flashtensor (llvm-19-dev, libmlir-19-dev, mlir-19-tools, ninja-build,
# pybind11-dev, python3-dev). A rebuild compiles only what changed. REPRO_FLASHTENSOR_SOURCE
# names the source in the logs when the checkout has no .git (default: its git rev-parse HEAD).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pinned=47dc58711f27abd07a10f6297a31ecfba5b31108
llvm=${REPRO_LLVM_DIR:-/usr/lib/llvm-19}
out=${REPRO_BUILD_DIR:-$root/build}/flashtensor
jobs=$(nproc)
pythons=()

die() { echo "flashtensor/build.sh: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --python) pythons+=("${2:?--python needs an interpreter}"); shift ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "flashtensor/build.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs: expected a positive number, got '$jobs'"
[ ${#pythons[@]} -gt 0 ] || pythons=(python3)

src=${REPRO_FLASHTENSOR_DIR:-}
[ -n "$src" ] || die "REPRO_FLASHTENSOR_DIR is not set: a checkout of https://github.com/monellz/FlashTensor-AE at $pinned (scripts/flashtensor/README.md)"
{ [ -f "$src/3rd/asuka/CMakeLists.txt" ] && [ -d "$src/asuka_exp" ]; } ||
  die "$src: no 3rd/asuka/CMakeLists.txt or asuka_exp/: not a FlashTensor-AE checkout"
[ -f "$llvm/lib/cmake/mlir/MLIRConfig.cmake" ] ||
  die "no MLIR at $llvm (MLIRConfig.cmake): scripts/install.sh --flashtensor installs Debian's MLIR 19"
for tool in cmake ninja g++ git; do
  command -v "$tool" >/dev/null || die "$tool not found: scripts/install.sh --flashtensor"
done

source_id=${REPRO_FLASHTENSOR_SOURCE:-$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)}
[ "$source_id" = "$pinned" ] || [ -n "${REPRO_FLASHTENSOR_SOURCE:-}" ] ||
  die "$src is at $source_id, the patch is for $pinned (git -C $src checkout $pinned; or set REPRO_FLASHTENSOR_SOURCE to build another)"
patch=$here/flashtensor.patch
patch_id=$(sha256sum "$patch" | cut -c1-12)

# git apply ARGS... of the patch in folder DIR (the copy). The ceiling keeps git from taking an
# enclosing repository (this kit's) for the copy's: there git apply would skip every path outside
# the current folder, without a word.
patch_in() {
  local dir=$1
  shift
  (cd "$dir" && GIT_CEILING_DIRECTORIES=$out git apply "$@" "$patch")
}

# The patched copy: made again when the source or the patch changed or the copy is not patched,
# else kept (Ninja rebuilds what changed).
stage() {
  local stamp="source=$source_id patch=$patch_id"
  if [ -f "$out/src/STAMP" ] && [ "$(cat "$out/src/STAMP")" = "$stamp" ] &&
    patch_in "$out/src" --reverse --check 2>/dev/null; then
    return 0
  fi
  echo "flashtensor/build.sh: copying $src (3rd/asuka, asuka_exp) to $out/src and applying $(basename "$patch")"
  rm -rf "$out/src.new"
  mkdir -p "$out/src.new/3rd"
  cp -a "$src/3rd/asuka" "$out/src.new/3rd/asuka"
  cp -a "$src/asuka_exp" "$out/src.new/asuka_exp"
  rm -rf "$out/src.new/3rd/asuka/build"
  { patch_in "$out/src.new" --whitespace=nowarn && patch_in "$out/src.new" --reverse --check; } ||
    die "$(basename "$patch") does not apply to $src (is it $pinned, unmodified?)"
  echo "$stamp" > "$out/src.new/STAMP"
  rm -rf "$out/src"
  mv "$out/src.new" "$out/src"
}

# asuka's C++ (the dialects, passes, Triton translation) as object files; bin/ (its command-line
# tools) is not needed.
compile_library() {
  cmake -S "$out/src/3rd/asuka" -B "$out/obj" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DPython3_EXECUTABLE="$(command -v "${pythons[0]}")" >"$out/cmake.log" 2>&1 ||
    { tail -n 30 "$out/cmake.log" >&2; die "cmake failed (whole log: $out/cmake.log)"; }
  mapfile -t objects < <(ninja -C "$out/obj" -t targets all | sed -n 's/^\(lib\/[^:]*\.o\): .*/\1/p')
  [ ${#objects[@]} -gt 0 ] || die "no object files of asuka's lib/ among the Ninja targets"
  echo "flashtensor/build.sh: compiling ${#objects[@]} C++ files of asuka (-j$jobs)"
  ninja -C "$out/obj" -j "$jobs" "${objects[@]}"
  printf '%s\n' "${objects[@]/#/$out/obj/}" > "$out/obj/library-objects.txt"
}

# The bindings for one Python: ffi/*.cpp compiled with the command CMake wrote for them, that
# Python's include folder in place of the configured one's, then one shared object with every
# MLIR/LLVM archive it uses inside and only PyInit_asuka_ffi exported.
build_module() {
  local py=$1 tag include ext site objdir pybind
  tag=$("$py" -c 'import sys; print(sys.implementation.cache_tag)') || die "$py does not run"
  include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  ext=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  [ -f "$include/Python.h" ] || die "$py: no Python.h in $include (Debian: python3-dev)"
  objdir=$out/ffi-$tag
  site=$out/site-$tag
  mkdir -p "$objdir"
  echo "flashtensor/build.sh: bindings for $tag ($py, $include)"
  # pybind11's headers: that Python's own pybind11 where it has one (Debian 12's 2.10 predates
  # Python 3.12), else the system's (pybind11-dev)
  pybind=$("$py" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || true)
  "$py" - "$out/obj/compile_commands.json" "$include" "$pybind" "$objdir" > "$objdir/compile.sh" <<'EOF'
import json, os, shlex, sys
commands, include, pybind, objdir = sys.argv[1:]
for entry in json.load(open(commands)):
    if os.sep + "ffi" + os.sep not in entry["file"]:
        continue
    words, kept = shlex.split(entry["command"]), []
    while words:
        w = words.pop(0)
        if w in ("-isystem", "-I") and words and "/include/python3" in words[0]:
            words.pop(0)  # the configured Python's headers
        elif w.startswith("-I") and "/include/python3" in w:
            pass
        elif w in ("-flto", "-fno-fat-lto-objects"):
            pass  # the module is linked by hand, without LTO
        elif w == "-o":
            words.pop(0)
            kept += ["-o", os.path.join(objdir, os.path.basename(entry["file"]) + ".o")]
        else:
            kept.append(w)
    kept[1:1] = ["-isystem", include] + (["-isystem", pybind] if pybind else [])
    print("cd %s && %s" % (shlex.quote(entry["directory"]), " ".join(map(shlex.quote, kept))))
EOF
  [ -s "$objdir/compile.sh" ] || die "no ffi/*.cpp in $out/obj/compile_commands.json"
  xargs -P "$jobs" -I{} bash -c {} < "$objdir/compile.sh"
  cat > "$objdir/exports.map" <<'EOF'
{ global: PyInit_asuka_ffi; local: *; };
EOF
  rm -rf "$site"
  mkdir -p "$site"
  cp -a "$out/src/3rd/asuka/python/asuka" "$site/asuka"
  cp -a "$out/src/asuka_exp" "$site/asuka_exp"
  mapfile -t library < "$out/obj/library-objects.txt"
  g++ -shared -o "$site/asuka/asuka_ffi$ext" "$objdir"/*.o "${library[@]}" \
    -Wl,--start-group "$llvm"/lib/libMLIR*.a "$llvm"/lib/libLLVM*.a -Wl,--end-group \
    -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,--version-script="$objdir/exports.map" \
    -Wl,--as-needed -lz -lzstd -ltinfo -lpthread -ldl -lm ||
    die "linking asuka_ffi$ext failed"
  strip --strip-unneeded "$site/asuka/asuka_ffi$ext"
  printf 'flashtensor_source=%s\nflashtensor_patch=%s\nmlir=%s\n' "$source_id" "$patch_id" \
    "$("$llvm/bin/llvm-config" --version 2>/dev/null || echo unknown)" > "$site/FLASHTENSOR_SOURCE"
  echo "flashtensor/build.sh: $site/asuka/asuka_ffi$ext ($(du -h "$site/asuka/asuka_ffi$ext" | cut -f1))"
}

mkdir -p "$out"
stage
compile_library
for py in "${pythons[@]}"; do build_module "$py"; done
echo "flashtensor/build.sh: done; PYTHONPATH=$out/site-TAG or REPRO_FLASHTENSOR_SITE=$out/site-TAG"
