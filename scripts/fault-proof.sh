#!/usr/bin/env bash
# The long version of the fault-injection proof (issue 11): every fault kind of
# tests/integration/fault_lib.sh (tests/integration/fault_*.sh) for many seeds, each kind on its
# own throwaway MariaDB, two kinds at a time. CI runs the short version (two seeds) through
# scripts/test.sh --all (ctest label fault).
#
#   scripts/fault-proof.sh                      all kinds, seeds 1..10
#   scripts/fault-proof.sh --seeds 25           seeds 1..25
#   scripts/fault-proof.sh --kinds proxy,tool_kill --load-seconds 20
#   scripts/fault-proof.sh --jobs 1             one kind at a time
#
# Each kind's output goes to build/fault-proof/KIND.log; a summary line per kind at the end;
# exit 0 only when every kind passed. disk_full needs root (it mounts a tmpfs); it reports
# itself skipped otherwise.
set -uo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
CDC_PACKAGES+=("${CDC_TEST_PACKAGES[@]}")

seeds=10 kinds="" jobs=2 load_seconds=""
usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}
while (($#)); do
  case $1 in
    --seeds) seeds=${2:?--seeds wants a count}; shift ;;
    --kinds) kinds=${2:?--kinds wants a comma-separated list}; shift ;;
    --jobs) jobs=${2:?--jobs wants a count}; shift ;;
    --load-seconds) load_seconds=${2:?--load-seconds wants seconds}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "scripts/fault-proof.sh: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
  shift
done
[[ $seeds =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fault-proof.sh: --seeds wants a positive count, got '$seeds'" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fault-proof.sh: --jobs wants a positive count, got '$jobs'" >&2; exit 2; }

scripts=()
if [[ -z $kinds ]]; then
  for script in "$CDC_ROOT"/tests/integration/fault_*.sh; do
    [[ $(basename "$script") == fault_lib.sh ]] || scripts+=("$script")
  done
else
  IFS=, read -r -a wanted <<<"$kinds"
  for kind in "${wanted[@]}"; do
    script="$CDC_ROOT/tests/integration/fault_$kind.sh"
    [[ -f $script && $kind != lib ]] || { echo "scripts/fault-proof.sh: no fault kind '$kind' (tests/integration/fault_$kind.sh)" >&2; exit 2; }
    scripts+=("$script")
  done
fi

cdc_install_packages
cdc_build "$CDC_ROOT/build"
cmake --build "$CDC_ROOT/build" --target cdc-test-load cdc-test-replay cdc-test-proxy >/dev/null || exit 1

logs="$CDC_ROOT/build/fault-proof"
mkdir -p "$logs"
export CDC_FAULT_SEEDS
CDC_FAULT_SEEDS=$(seq -s ' ' 1 "$seeds")
# At least 20 faults per kind and seed pair, as in CI.
export CDC_FAULT_MIN=$((seeds * 10))
[[ -n $load_seconds ]] && export CDC_FAULT_LOAD_SECONDS=$load_seconds
# The crash-point exploration's random cdc-stream schedules: 30 s a seed (about 200 schedules),
# 5 minutes at the default 10 seeds, where CI gives them 45 s.
export CDC_CRASH_SECONDS=${CDC_CRASH_SECONDS:-$((seeds * 30))} CDC_CRASH_RANDOM=${CDC_CRASH_RANDOM:-100000}
# The scripts start their own servers; CDC_TEST_PORT only lifts lib.sh's skip rule.
export CDC_TEST_PORT=${CDC_TEST_PORT:-0}

started=$SECONDS
declare -A pid_of
running=0
for script in "${scripts[@]}"; do
  kind=$(basename "$script" .sh)
  while ((running >= jobs)); do
    wait -n
    running=$((running - 1))
  done
  echo "scripts/fault-proof.sh: $kind, seeds 1..$seeds -> $logs/$kind.log"
  bash "$script" "$CDC_ROOT/build/tools" "$CDC_ROOT" >"$logs/$kind.log" 2>&1 &
  pid_of[$kind]=$!
  running=$((running + 1))
done

status=0
for kind in "${!pid_of[@]}"; do
  result=0
  wait "${pid_of[$kind]}" || result=$?
  case $result in
    0) verdict=passed ;;
    77) verdict=skipped ;;
    *) verdict=FAILED; status=1 ;;
  esac
  echo "scripts/fault-proof.sh: $kind $verdict ($(tail -1 "$logs/$kind.log"))"
  [[ $verdict == FAILED ]] && grep '^FAIL' "$logs/$kind.log" | head -5 | sed 's/^/  /'
done
echo "scripts/fault-proof.sh: finished in $((SECONDS - started))s"
exit "$status"
