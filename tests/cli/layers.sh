#!/usr/bin/env bash
# scripts/check_layers.sh: libcore's folders include each other one way (no cycle), and the
# check itself notices a cycle (a made-up tree where a/ and b/ include each other fails and
# names both).
set -uo pipefail
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

if ! bash "$source_dir/scripts/check_layers.sh" "$source_dir" >"$work/real.out" 2>"$work/real.err"; then
  failures=$((failures + 1))
  echo "FAIL libcore's folders have an include cycle:"
  cat "$work/real.err"
fi
grep -q "^  binlog -> util: " "$work/real.out" || {
  failures=$((failures + 1))
  echo "FAIL the edge list misses binlog -> util"
}

mkdir -p "$work/tree/libcore/a" "$work/tree/libcore/b" "$work/tree/libcore/c/sub"
printf '#include "b/b.h"\n' >"$work/tree/libcore/a/a.h"
printf '#include <vector>\n#include "c/c.h"\n' >"$work/tree/libcore/b/b.h"
printf '  #  include "a/a.h"\n' >"$work/tree/libcore/c/sub/c.cpp"
if bash "$source_dir/scripts/check_layers.sh" "$work/tree" >"$work/cycle.out" 2>"$work/cycle.err"; then
  failures=$((failures + 1))
  echo "FAIL a cycle a -> b -> c -> a passed"
fi
for folder in a b c; do
  grep -qx "  $folder" "$work/cycle.err" || {
    failures=$((failures + 1))
    echo "FAIL the cycle's message does not name $folder:"
    cat "$work/cycle.err"
  }
done

# No cycle, and the last include the check reads stays inside its own folder: the edge list
# is still printed and the check passes.
mkdir -p "$work/flat/libcore/d" "$work/flat/libcore/e"
printf '#include "e/e.h"\n#include "d/own.h"\n' >"$work/flat/libcore/d/d.h"
if ! bash "$source_dir/scripts/check_layers.sh" "$work/flat" >"$work/flat.out" 2>&1 ||
  ! grep -qx "  d -> e: 1" "$work/flat.out"; then
  failures=$((failures + 1))
  echo "FAIL a tree without a cycle (d -> e) did not pass with its edge listed:"
  cat "$work/flat.out"
fi

((failures == 0)) && echo "layers: ok"
((failures == 0))
