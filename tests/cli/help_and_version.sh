#!/usr/bin/env bash
# The parts of the command line every tool shares: --help and -? on stdout with exit 0,
# --version with the libraries it was built with, usage errors on stderr with exit 2.
set -uo pipefail
tools_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
check() {
  local name=$1
  shift
  if "$@"; then
    passes=$((passes + 1))
  else
    failures=$((failures + 1))
    echo "FAIL $name"
  fi
}

for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream; do
  bin="$tools_dir/$tool"
  for flag in --help '-?'; do
    status=0
    "$bin" "$flag" >"$work/out" 2>"$work/err" || status=$?
    check "$tool $flag exits 0" test "$status" = 0
    check "$tool $flag prints usage on stdout" grep -q "^Usage: $tool" "$work/out"
    check "$tool $flag prints examples" grep -q "^Examples:" "$work/out"
    check "$tool $flag keeps stderr empty" test ! -s "$work/err"
  done
  status=0
  "$bin" --version >"$work/out" 2>"$work/err" || status=$?
  check "$tool --version exits 0" test "$status" = 0
  check "$tool --version names itself" grep -q "^$tool [0-9]\+\.[0-9]\+\.[0-9]\+$" "$work/out"
  for library in "MariaDB Connector/C [0-9]" "simdjson [0-9]" "zstd [0-9]" "fmt [0-9]" "CLI11 [0-9]"; do
    check "$tool --version names $library" grep -q "$library" "$work/out"
  done
  status=0
  "$bin" --no-such-option >"$work/out" 2>"$work/err" || status=$?
  check "$tool usage error exits 2" test "$status" = 2
  check "$tool usage error keeps stdout empty" test ! -s "$work/out"
  check "$tool usage error points to --help" grep -q "Try '$tool --help'" "$work/err"
  if [[ $tool != cdc-merge ]]; then
    "$bin" --help >"$work/out"
    for option in --host --port --user --password --socket --defaults-file --defaults-group --ssl-mode \
      --ssl-ca --ssl-cert --ssl-key --connect-timeout; do
      check "$tool --help lists $option" grep -q -- "$option" "$work/out"
    done
  fi
done
echo "$passes passed, $failures failed"
((failures == 0))
