#!/usr/bin/env bash
# cdc-snapshot runs as a Linux batch task unless told --scheduling normal: the policy of a
# cdc-snapshot waiting for its first chunk line, as chrt reads it, is SCHED_BATCH by default
# and what it was started with under --scheduling normal. No server: it connects at the first
# chunk.
set -uo pipefail
tools_dir=$1
failures=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Its stdin: a FIFO that this script holds open for writing and never writes.
mkfifo "$work/chunks"
exec 3<>"$work/chunks"
policy_of() {  # policy_of ARGS...: the scheduling policy of cdc-snapshot ARGS waiting on stdin
  local pid policy=""
  "$tools_dir/cdc-snapshot" "$@" <"$work/chunks" 2>/dev/null &
  pid=$!
  # It sets its policy before it reads its input: once it sleeps in cdc-snapshot, it is set.
  for _ in $(seq 100); do
    if [[ $(readlink "/proc/$pid/exe") == */cdc-snapshot && $(awk '{print $3}' "/proc/$pid/stat") == S ]]; then
      policy=$(chrt -p "$pid" 2>/dev/null | sed -n 's/.*current scheduling policy: //p')
      break
    fi
    sleep 0.05
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "$policy"
}
expect() {  # expect NAME WANT GOT
  if [[ $3 == "$2" ]]; then echo "ok   $1: $3"; else echo "FAIL $1: want $2, got '${3}'"; failures=$((failures + 1)); fi
}
expect "default" SCHED_BATCH "$(policy_of)"
expect "--scheduling batch" SCHED_BATCH "$(policy_of --scheduling batch)"
expect "--scheduling normal" SCHED_OTHER "$(policy_of --scheduling normal)"
exit $((failures > 0))
