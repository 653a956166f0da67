#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer (into build-sanitize/, which scripts/test.sh --sanitize shares),
# and runs each for a bounded time, seeded with
# the seeds committed in tests/fuzz/corpus/<target>/ (see its README.md) and, for the binlog
# target, the fixture binlogs of ../shared/fixtures when present. A crash, hang, leak or
# sanitizer report fails the run and leaves the input in build-sanitize/crashes/.
#
#   scripts/fuzz.sh                              every target for 60 s
#   scripts/fuzz.sh --seconds 20                 every target for 20 s (what CI runs)
#   scripts/fuzz.sh gtid --seconds 600           one target (gtid or gtid_fuzz); several may be named
#   scripts/fuzz.sh gtid --runs 10000000         one target until 10 million executions (instead
#                                                of a time limit)
#   scripts/fuzz.sh --corpus-dir ~/cdc-fuzz gtid --seconds 3600
#                                                a long run that keeps what it finds: the grown
#                                                corpus stays in ~/cdc-fuzz/<target>/ (outside the
#                                                repository) and the next run starts from it
#   nohup nice -n 19 scripts/fuzz.sh --corpus-dir ~/cdc-fuzz binlog_file --seconds 3600 >fuzz.log 2>&1 &
#                                                an hour in the background, at low priority
#
# Targets: binlog_file, filter_expression, gtid, json_binary, merge_input, ndjson_reader, row_value,
# output_convert, snapshot_chunk. Without --corpus-dir the grown corpus is thrown away at the end. The
# committed seeds stay small: fold new finds in with libFuzzer's merge, which keeps only inputs
# that add coverage, e.g.
#   build-sanitize/tests/fuzz/gtid_fuzz -merge=1 tests/fuzz/corpus/gtid_fuzz ~/cdc-fuzz/gtid_fuzz
# A crashing input, once fixed (with a unit test in tests/unit), goes into
# tests/fuzz/corpus/<target>/ as a regression_* seed.
set -euo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
CDC_PACKAGES+=("${CDC_SANITIZE_PACKAGES[@]}")

seconds=60
runs=""
corpus_dir=""
targets=()
usage_error() {
  echo "scripts/fuzz.sh: $1; usage: scripts/fuzz.sh [--seconds N] [--runs N] [--corpus-dir DIR] [TARGET...]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --seconds | --runs | --corpus-dir)
      (($# >= 2)) || usage_error "$1 needs a value"
      case $1 in
        --seconds) seconds=$2 ;;
        --runs) runs=$2 ;;
        --corpus-dir) corpus_dir=$2 ;;
      esac
      shift
      ;;
    -*) usage_error "unknown option '$1'" ;;
    *) targets+=("${1%_fuzz}_fuzz") ;;
  esac
  shift
done
[[ $seconds =~ ^[0-9]+$ ]] || usage_error "--seconds takes a number of seconds, not '$seconds'"
[[ -z $runs || $runs =~ ^[0-9]+$ ]] || usage_error "--runs takes a number of executions, not '$runs'"
for target in "${targets[@]}"; do
  [[ -f $CDC_ROOT/tests/fuzz/$target.cpp ]] ||
    usage_error "no target '${target%_fuzz}' (tests/fuzz/$target.cpp); the targets: $(cd "$CDC_ROOT/tests/fuzz" && ls -- *_fuzz.cpp | sed 's/_fuzz.cpp//' | paste -sd ' ')"
done

cdc_install_packages
if ((${#targets[@]} == 0)); then
  for source in "$CDC_ROOT"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi
# scripts/test.sh --sanitize's build directory: after it (CI), the targets are built already.
build="${CDC_BUILD_DIR:-$CDC_ROOT/build-sanitize}"
cdc_build_targets "$build" "${targets[@]}" -- "${CDC_SANITIZE_CMAKE_ARGS[@]}" >/dev/null

fixtures="$CDC_ROOT/../shared/fixtures/binlog"
mkdir -p "$build/crashes"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
limits=(-max_total_time="$seconds")
[[ -n $runs ]] && limits=(-runs="$runs")
if [[ -n $corpus_dir ]]; then
  mkdir -p "$corpus_dir"
  corpus_dir=$(cd "$corpus_dir" && pwd)
fi
status=0
for target in "${targets[@]}"; do
  # The first directory receives what the run finds; the seeds are only read.
  corpus="${corpus_dir:-$work}/$target"
  mkdir -p "$corpus"
  seeds=()
  [[ -d $CDC_ROOT/tests/fuzz/corpus/$target ]] && seeds+=("$CDC_ROOT/tests/fuzz/corpus/$target")
  if [[ $target == binlog_file_fuzz && -d $fixtures ]]; then
    # Named after their path: many fixtures share a file name (log.bin, binlog.000001).
    mkdir -p "$work/fixtures"
    while IFS= read -r -d '' fixture; do
      relative=${fixture#"$fixtures"/}
      cp "$fixture" "$work/fixtures/${relative//\//_}"
    done < <(find "$fixtures" -type f ! -name '*.md' ! -name '*.gz' -size -200k -print0)
    seeds+=("$work/fixtures")
  fi
  echo "scripts/fuzz.sh: $target for $([[ -n $runs ]] && echo "$runs executions" || echo "${seconds}s"), grown corpus in $corpus"
  if ! "$build/tests/fuzz/$target" "$corpus" "${seeds[@]}" "${limits[@]}" -rss_limit_mb=2048 -timeout=10 \
      -max_len=262144 -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" >"$work/$target.log" 2>&1; then
    echo "scripts/fuzz.sh: $target FAILED; input saved under $build/crashes/; last lines:" >&2
    tail -40 "$work/$target.log" >&2
    status=1
  else
    grep -E "stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$work/$target.log" | tr '\n' ' '
    echo
  fi
done
exit "$status"
