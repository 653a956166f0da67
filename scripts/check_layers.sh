#!/usr/bin/env bash
# Lists libcore's folder -> folder include edges (one "from -> to" a line, each with how many
# includes make it) and fails when two folders depend on each other, directly or through
# others: libcore's modules depend one way (STYLE: one-way dependencies inside libcore).
# A folder is the first path component under libcore/ (binlog/events counts as binlog).
#   scripts/check_layers.sh [SOURCE_DIR]     (default: the checkout this script is in)
set -euo pipefail
source_dir=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
libcore=$source_dir/libcore
[[ -d $libcore ]] || { echo "check_layers: no libcore/ under $source_dir; pass the source directory" >&2; exit 2; }

# Every quoted include that names a libcore folder, as "from to" pairs.
edges=$(cd "$libcore" && grep -rHoE --include="*.h" --include="*.cpp" "^[[:space:]]*#[[:space:]]*include \"[a-z_]+/" . |
  sed -E 's|^\./([^/]+)/[^:]*:[[:space:]]*#[[:space:]]*include "([^/]+)/$|\1 \2|' |
  while read -r from to; do
    if [[ $from != "$to" && -d $to ]]; then echo "$from $to"; fi
  done | sort | uniq -c | awk '{print $2, $3, $1}')

echo "folder include edges (from -> to: includes):"
awk '{printf "  %s -> %s: %s\n", $1, $2, $3}' <<<"$edges"

# A cycle exists when tsort cannot order the folders; it names the folders on it.
if ! cycle=$(awk '{print $1, $2}' <<<"$edges" | tsort 2>&1 >/dev/null) || [[ -n $cycle ]]; then
  echo "check_layers: libcore folders include each other (a dependency cycle):" >&2
  sed 's/^tsort: /  /' <<<"$cycle" >&2
  echo "check_layers: move what both need into a folder below them, so the includes go one way" >&2
  exit 1
fi
echo "no cycles"
