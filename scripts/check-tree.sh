#!/usr/bin/env bash
# Fails when the repository tracks something that is not source: an
# executable binary (ELF, Mach-O, PE, or any file with the executable bit
# that is not a script starting with #!) or a file larger than 1 MB.
# Test data that must be larger is named in scripts/large-files.txt, one
# path per line. Run from anywhere inside the work tree; `make check` runs it.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
limit=$((1024 * 1024))
allowed=()
[ -f scripts/large-files.txt ] && mapfile -t allowed < <(grep -v '^\s*\(#\|$\)' scripts/large-files.txt)

bad=0
while IFS= read -r -d '' entry; do
  mode=${entry%% *}
  path=${entry#*$'\t'}
  [ -f "$path" ] || continue # deleted in the work tree, not yet committed
  magic=$(head -c 4 "$path" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
  7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | cafebabe | 4d5a*)
    echo "check-tree: $path is an executable binary; build outputs belong in bin/ (ignored)" >&2
    bad=1
    ;;
  esac
  if [ "$mode" = 100755 ] && [ "$(head -c 2 "$path")" != '#!' ]; then
    echo "check-tree: $path is executable but not a script (no #! line)" >&2
    bad=1
  fi
  size=$(stat -c %s "$path")
  if [ "$size" -gt "$limit" ]; then
    listed=""
    for a in "${allowed[@]}"; do [ "$a" = "$path" ] && listed=1; done
    if [ -z "$listed" ]; then
      echo "check-tree: $path is $size bytes (over 1 MB); list it in scripts/large-files.txt if it is test data" >&2
      bad=1
    fi
  fi
done < <(git ls-files -s -z | sed -z 's/^\([0-9]*\) [0-9a-f]* [0-9]*/\1 /')
exit $bad
