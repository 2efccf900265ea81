# shellcheck shell=bash
# Sourced by tests/scripts/test_help.sh and test_plot_out.sh: a fresh clone of the tree.
#   fresh_clone SOURCE_DIR DEST   DEST gets SOURCE_DIR's tracked files as they are in its working
#                                 tree (links kept), no build folder; every file but .git and
#                                 build*/ where SOURCE_DIR is no git checkout (an archive)
fresh_clone() {
  mkdir -p "$2"
  if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$1" && git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
      tar -xf - -C "$2"
  else
    (cd "$1" && tar --exclude=./.git --exclude='./build*' -cf - .) | tar -xf - -C "$2"
  fi
}

# listing DIR: every path under DIR with its type, size and modification time, sorted (two
# listings differ when anything was written, added or removed); nothing when DIR is absent
listing() { [ ! -d "$1" ] || (cd "$1" && find . -printf '%p %y %s %T@\n' | LC_ALL=C sort); }
