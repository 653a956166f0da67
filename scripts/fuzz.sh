#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for a bounded time, seeded with the binlog
# fixtures (../shared/fixtures, when present) and the seeds committed in tests/fuzz/corpus.
# A crash fails the run and leaves the input in build-fuzz/crashes/.
#
#   scripts/fuzz.sh                 every target for 60 s
#   scripts/fuzz.sh --seconds 20    shorter (CI)
#   scripts/fuzz.sh binlog_file_fuzz --seconds 600
set -euo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
CDC_PACKAGES+=(clang libclang-rt-14-dev)

seconds=60
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift ;;
    -*) echo "scripts/fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done

cdc_install_packages
build="$CDC_ROOT/build-fuzz"
CXX=clang++ cdc_build "$build" -DCMAKE_CXX_COMPILER=clang++ -DCDC_FUZZ=ON -DCDC_BUILD_TESTS=OFF >/dev/null
if ((${#targets[@]} == 0)); then
  for source in "$CDC_ROOT"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi

fixtures="$CDC_ROOT/../shared/fixtures/binlog"
mkdir -p "$build/crashes"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in "${targets[@]}"; do
  corpus="$work/$target"
  mkdir -p "$corpus"
  if [[ -d $CDC_ROOT/tests/fuzz/corpus/$target ]]; then cp -r "$CDC_ROOT/tests/fuzz/corpus/$target/." "$corpus/"; fi
  if [[ $target == binlog_file_fuzz && -d $fixtures ]]; then
    find "$fixtures" -type f ! -name '*.md' ! -name '*.gz' -size -200k -exec cp {} "$corpus/" \; 2>/dev/null || true
  fi
  echo "scripts/fuzz.sh: $target for ${seconds}s ($(find "$corpus" -type f | wc -l) seeds)"
  if ! "$build/tests/fuzz/$target" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -max_len=262144 -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" >"$work/$target.log" 2>&1; then
    echo "scripts/fuzz.sh: $target FAILED; input saved under $build/crashes/; last lines:" >&2
    tail -40 "$work/$target.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log" | tr '\n' ' '
    echo
  fi
done
exit "$status"
