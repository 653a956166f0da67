#!/usr/bin/env bash
# --format debezium on every binlog cdc-stream --file decodes, without a server: the fuzz
# corpus of tests/fuzz/corpus/binlog_file_fuzz and, when present, the fixture binlogs of
# ../shared/fixtures (MySQL and MariaDB servers of several versions, every column type they
# log). Under the defaults, --flink, and schemas.enable with --key and --topic, each file
# converts (exit 0), every message is JSON, and there is a c/u/d event for each change line
# (more for a primary key change: a delete and a create).
# Usage: formats_corpus.sh TOOLS_DIR SOURCE_DIR
set -uo pipefail
tools_dir=$1
source_dir=$2
command -v jq >/dev/null || { echo "jq is not installed: skipped" && exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stream="$tools_dir/cdc-stream"
binlogs=("$source_dir"/tests/fuzz/corpus/binlog_file_fuzz/*)
if [[ -d $source_dir/../shared/fixtures/binlog ]]; then
  mapfile -t -O "${#binlogs[@]}" binlogs < <(find "$source_dir/../shared/fixtures/binlog" -type f ! -name '*.md' | sort)
fi
failures=0 files=0 changes=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
for binlog in "${binlogs[@]}"; do
  "$stream" --file "$binlog" >"$work/canonical" 2>/dev/null || continue  # cut and corrupt seeds
  want=$(grep -c '"op":"[cud]"' "$work/canonical")
  files=$((files + 1)) changes=$((changes + want))
  name=${binlog#"$source_dir"/}
  for mode in defaults flink schemas; do
    case $mode in
      defaults) args=() ;;
      flink) args=(--flink) ;;
      schemas) args=(--format-option schemas.enable=true --key --topic) ;;
    esac
    if ! "$stream" --file "$binlog" --format debezium "${args[@]}" >"$work/out" 2>"$work/err"; then
      fail "$name ($mode): exit $?: $(head -c 300 "$work/err")" && continue
    fi
    values="$work/out"
    if [[ $mode == schemas ]]; then
      cut -f3 "$work/out" | grep -v '^$' >"$work/values"
      cut -f2 "$work/out" | grep -v '^$' >"$work/keys"
      jq -e 'has("schema") and has("payload")' "$work/keys" >/dev/null ||
        fail "$name ($mode): a key that is not {schema, payload}"
      jq -c '.payload' "$work/values" >"$work/payloads" || { fail "$name ($mode): a value that is not JSON" && continue; }
      values="$work/payloads"
    fi
    jq -c . "$values" >/dev/null 2>&1 || { fail "$name ($mode): a line that is not JSON" && continue; }
    got=$(jq -r 'select(.op != null) | .op' "$values" | grep -c '^[cud]$')
    ((got >= want)) || fail "$name ($mode): $got c/u/d events for $want change lines"
  done
done
((files > 0)) || fail "no binlog decoded"
echo "$files binlogs, $changes change lines, three option sets each: $failures failure(s)"
((failures == 0))
