#!/usr/bin/env bash
# Every kind of line and every top-level field the tools write is documented in
# man/cdc-ndjson.5 (issue 12: one contract, one place). What the tools write is collected
# without a server:
#   - cdc-stream --file on the fixture binlogs of ../shared/fixtures (when present) and on the
#     binlogs of tests/fuzz/corpus/binlog_file_fuzz;
#   - cdc-merge on each tests/fuzz/corpus/merge_input_fuzz case (chunk outputs, ---, deltas),
#     and those inputs themselves, which cdc-snapshot and cdc-stream --until wrote;
#   - the chunk lines, stream lines and state files kept as fuzz seeds, which cdc-plan,
#     cdc-stream and cdc-stream --state wrote;
#   - the golden CLI cases' stdin and expected.stdout;
#   - the "op" values and the written keys that libcore's writers name in their source, and
#     those libcore/records/kinds.h lists when it exists, for the kinds only a live server makes.
# The page documents a kind with a literal display of its shape, {"op":"KIND",...} (the state
# file: {"v":...} under STATE FILE), and a field by "FIELD": in its kind's display and by
# a .Cm FIELD in the text. Each observed kind and each top-level key of its lines must be
# documented so; each op value and key in libcore's writers must appear in some display.
# Usage: ndjson_documented.sh TOOLS_DIR SOURCE_DIR
set -euo pipefail
tools_dir=$1
source_dir=$2
page="$source_dir/man/cdc-ndjson.5"
corpus="$source_dir/tests/fuzz/corpus"
command -v jq >/dev/null || { echo "jq is not installed: skipped" && exit 77; }
[[ -f $page ]] || { echo "FAIL: $page is missing" && exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lines="$work/lines.ndjson"
: >"$lines"

# --- What the tools write -------------------------------------------------------------------
binlogs=("$corpus"/binlog_file_fuzz/*)
if [[ -d $source_dir/../shared/fixtures/binlog ]]; then
  mapfile -t -O "${#binlogs[@]}" binlogs < <(find "$source_dir/../shared/fixtures/binlog" -type f ! -name '*.md' | sort)
fi
for binlog in "${binlogs[@]}"; do
  # Cut and corrupt seeds end with an error after their lines: the lines count.
  "$tools_dir/cdc-stream" --file "$binlog" >>"$lines" 2>/dev/null || true
done
merges=0
for case_file in "$corpus"/merge_input_fuzz/*; do
  name=$(basename "$case_file")
  awk -v chunks="$work/$name.chunks" -v deltas="$work/$name.deltas" \
    '/^---$/ { split_seen = 1; next } { print > (split_seen ? deltas : chunks) }' "$case_file"
  touch "$work/$name.deltas"
  cat "$work/$name.chunks" "$work/$name.deltas" >>"$lines"
  if "$tools_dir/cdc-merge" "$work/$name.chunks" --deltas "$work/$name.deltas" >"$work/$name.out" 2>/dev/null; then
    cat "$work/$name.out" >>"$lines"
    merges=$((merges + 1))
  fi
done
cat "$corpus"/snapshot_chunk_fuzz/* "$corpus"/ndjson_reader_fuzz/* "$corpus"/gtid_fuzz/state_* >>"$lines"
for file in "$source_dir"/tests/cli/cases/*/{stdin,expected.stdout}; do
  [[ -f $file ]] && cat "$file" >>"$lines"
done

# kind<TAB>key for every top-level key of every JSON object line: the kind is its op, or
# "state file" for an object without op that has a position (cdc-stream's --state file).
jq -R -r 'fromjson? | select(type == "object")
  | (if has("op") then .op elif has("position") then "state file" else empty end) as $kind
  | keys_unsorted[] | "\($kind)\t\(.)"' "$lines" | sort -u >"$work/observed"
if ((merges == 0)) || ! grep -q $'^commit\t' "$work/observed" || ! grep -q $'^state file\t' "$work/observed"; then
  echo "FAIL: too little was collected to check (merges run: $merges); are the tools built?"
  exit 1
fi

# The kinds and keys libcore's writers name: `field("op", "KIND")` or `"op":"KIND"` in code,
# and the keys of field()/field_null()/key() calls. The JSON diff operations of
# rowimage/json_diff.* are values inside json_diffs, not kinds of line; libcore/output/ writes
# the other formats (cdc-formats(7)), not these lines.
grep -rhE --include='*.cpp' --include='*.h' -v '^[[:space:]]*//' "$source_dir/libcore" \
  --exclude='json_diff.*' --exclude-dir=output | grep -oE 'field\("op", "[a-z_]+"|"op":"[a-z_]+"' |
  sed -E 's/.*"([a-z_]+)"$/\1/' | sort -u >"$work/source_ops"
grep -rhE --include='*.cpp' -v '^[[:space:]]*//' "$source_dir/libcore" --exclude-dir=output |
  grep -oE '\.(field|field_null|key)\("[a-z_0-9]+"' | sed -E 's/.*\("//; s/"$//' | sort -u >"$work/source_keys"
# libcore/records/kinds.h, where it exists, lists every op value and member name as constants
# in `namespace op {...}` and `namespace field {...}`: all of them count.
kinds_header="$source_dir/libcore/records/kinds.h"
if [[ -f $kinds_header ]]; then
  for list in op field; do
    awk -v list="$list" '$0 ~ "^namespace " list " \\{" { on = 1; next } /^\}/ { on = 0 } on' "$kinds_header" |
      grep -oE '= "[a-z_0-9]+";' | sed -E 's/^= "//; s/";$//' >"$work/records_$list" || true
    if [[ ! -s $work/records_$list ]]; then
      echo "FAIL: found no constants in namespace $list of libcore/records/kinds.h: update this test to its form"
      exit 1
    fi
  done
  sort -u "$work/source_ops" "$work/records_op" -o "$work/source_ops"
  sort -u "$work/source_keys" "$work/records_field" -o "$work/source_keys"
fi

# --- What the page documents ----------------------------------------------------------------
# kind<TAB>key for each "key": of each {"op":...} shape in a literal display; a shape runs from
# its {"op": line to the next one or the display's end.
awk '
  /^\.Sh / { section = substr($0, 5) }
  /^\.Bd -literal/ { literal = 1; kinds = ""; next }
  /^\.Ed/ { literal = 0; next }
  !literal { next }
  /^[[:space:]]*\{"op":/ {
    ops = $0
    sub(/^[[:space:]]*\{"op":/, "", ops)
    match(ops, /^"[a-z_]+"(\|"[a-z_]+")*/)
    ops = substr(ops, 1, RLENGTH)
    gsub(/"/, "", ops)
    kinds = ops
  }
  /^[[:space:]]*\{"v":/ && section == "STATE FILE" { kinds = "state file" }
  kinds != "" {
    n = split(kinds, kind, "|")
    rest = $0
    while (match(rest, /"[a-z_0-9]+":/)) {
      key = substr(rest, RSTART + 1, RLENGTH - 3)
      for (i = 1; i <= n; i++) printf "%s\t%s\n", kind[i], key
      rest = substr(rest, RSTART + RLENGTH)
    }
  }' "$page" | sort -u >"$work/documented"
cut -f1 "$work/documented" | sort -u >"$work/documented_kinds"
# Every word of a .Cm macro line: the fields the text describes.
grep -E '^\.(It )?Cm ' "$page" | tr ' ' '\n' | grep -E '^[a-z_0-9]+$' | sort -u >"$work/described"
# Every "key": of every literal display, whatever its kind.
grep -oE '"[a-z_0-9]+":' "$page" | tr -d '":' | sort -u >"$work/displayed"

# --- The check ------------------------------------------------------------------------------
failures=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
while IFS= read -r kind; do
  grep -qxF -- "$kind" "$work/documented_kinds" ||
    fail "the tools write \"$kind\" lines, and man/cdc-ndjson.5 has no display of their shape ({\"op\":\"$kind\",...})"
done < <(cut -f1 "$work/observed" | sort -u)
while IFS=$'\t' read -r kind key; do
  grep -qxF -- "$kind" "$work/documented_kinds" || continue # reported above
  grep -qxF -- "$kind"$'\t'"$key" "$work/documented" ||
    fail "\"$kind\" lines have the key \"$key\", which its display in man/cdc-ndjson.5 lacks"
  grep -qxF -- "$key" "$work/described" ||
    fail "the key \"$key\" of \"$kind\" lines is not described (no .Cm $key) in man/cdc-ndjson.5"
done <"$work/observed"
while IFS= read -r kind; do
  grep -qxF -- "$kind" "$work/documented_kinds" ||
    fail "libcore writes op \"$kind\", and man/cdc-ndjson.5 has no display of its shape ({\"op\":\"$kind\",...})"
done <"$work/source_ops"
while IFS= read -r key; do
  grep -qxF -- "$key" "$work/displayed" ||
    fail "libcore writes the key \"$key\", which no display in man/cdc-ndjson.5 shows"
done <"$work/source_keys"

kinds=$(cut -f1 "$work/observed" | sort -u | wc -l)
echo "checked $(wc -l <"$lines") lines ($kinds kinds, $(wc -l <"$work/observed") kind/key pairs)," \
  "$(wc -l <"$work/source_ops") op values and $(wc -l <"$work/source_keys") keys named in libcore"
((failures == 0)) || { echo "ndjson_documented: $failures failure(s)" && exit 1; }
echo "ndjson_documented: every kind and key written is documented in man/cdc-ndjson.5"
