#!/usr/bin/env bash
# The parts of the command line every tool shares: --help and -? on stdout with exit 0,
# --version with the libraries it was built with, usage errors on stderr with exit 2; help or
# version on a full or closed stdout is an I/O error (74), on a reader that went away a normal
# end (0); an option file the tool cannot read is a usage error naming it.
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

for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream cdc-sync cdc-apply; do
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
  for flag in --help --version; do
    status=0
    "$bin" "$flag" >/dev/full 2>"$work/err" || status=$?
    check "$tool $flag on a full stdout exits 74" test "$status" = 74
    check "$tool $flag on a full stdout says so" grep -q "^$tool: error: cannot print the .*: stdout: write failed: No space left on device" "$work/err"
    status=0
    "$bin" "$flag" >&- 2>"$work/err" || status=$?
    check "$tool $flag on a closed stdout exits 74" test "$status" = 74
    check "$tool $flag on a closed stdout says so" grep -q "^$tool: error: cannot print the .*: stdout: write failed" "$work/err"
    # A reader that is gone before the first write (the pipe's only reader closed at once).
    rm -f "$work/fifo" && mkfifo "$work/fifo"
    { "$bin" "$flag" >"$work/fifo" 2>"$work/err"; echo $? >"$work/status"; } &
    exec {reader}<"$work/fifo"
    exec {reader}<&-
    wait $!
    check "$tool $flag to a reader that went away exits 0" test "$(<"$work/status")" = 0
    check "$tool $flag to a reader that went away keeps stderr empty" test ! -s "$work/err"
  done
  if [[ $tool != cdc-merge ]]; then
    # Option files the tool cannot read: the client library would skip them without a word
    # and the connection error would then be about a socket.
    mkdir -p "$work/cnf.d"
    printf '[client]\nuser = cdc\n' >"$work/cnf.d/my.cnf"
    status=0
    "$bin" --defaults-file "$work/cnf.d" >"$work/out" 2>"$work/err" || status=$?
    check "$tool --defaults-file DIRECTORY exits 2" test "$status" = 2
    check "$tool --defaults-file DIRECTORY names it" grep -q -- "--defaults-file: $work/cnf.d is a directory" "$work/err"
    chmod 000 "$work/cnf.d/my.cnf"
    as_other=()
    if ((EUID == 0)); then
      # root reads mode 000 files: run as nobody, who may reach the file but not read it.
      as_other=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
      chmod 711 "$work" "$work/cnf.d"
    fi
    status=0
    "${as_other[@]}" "$bin" --defaults-file "$work/cnf.d/my.cnf" >"$work/out" 2>"$work/err" || status=$?
    check "$tool --defaults-file UNREADABLE exits 2" test "$status" = 2
    check "$tool --defaults-file UNREADABLE names it" \
      grep -q -- "--defaults-file: cannot read $work/cnf.d/my.cnf: Permission denied" "$work/err"
    rm -rf "$work/cnf.d"

    "$bin" --help >"$work/out"
    for option in --host --port --user --password --socket --defaults-file --defaults-group --ssl-mode \
      --ssl-ca --ssl-cert --ssl-key --connect-timeout; do
      check "$tool --help lists $option" grep -q -- "$option" "$work/out"
    done
  fi
done
echo "$passes passed, $failures failed"
((failures == 0))
