#!/usr/bin/env bash
# cdc-stream --from and --until TIME, live and with --file: the first transaction committed at
# or after the time, found by the binlog files' opening times and a read of one file.
#
# The server's own clock is set per statement (SET timestamp), so the test writes a history of
# two hours in 2031 in a second: 60 transactions a minute apart in two GTID domains, two of
# them sharing a second, with FLUSH BINARY LOGS between some (the new file opens at the
# session's time too). Every cut is checked against that history, transaction by transaction;
# the history itself against what mariadb-binlog prints of the server's files.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

base=1924992000  # 2031-01-01T00:00:00Z
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
root -e 'CREATE DATABASE h; CREATE TABLE h.t (id INT PRIMARY KEY, at BIGINT) ENGINE=InnoDB' || exit 1

# history: one "id time" line per transaction, in commit order.
sql=""
: >"$work/history"
for k in $(seq 1 60); do
  at=$((base + 60 * k))
  domain=$((k % 3 == 0 ? 1 : 0))
  sql+="SET gtid_domain_id=$domain; SET timestamp=$at; INSERT INTO h.t VALUES ($k, $at);"
  echo "$k $at" >>"$work/history"
  if ((k % 10 == 5)); then  # a second transaction in the same second
    sql+="INSERT INTO h.t VALUES ($((1000 + k)), $at);"
    echo "$((1000 + k)) $at" >>"$work/history"
  fi
  if ((k % 7 == 0)); then sql+="SET timestamp=$((at + 30)); FLUSH BINARY LOGS;"; fi
done
root -e "$sql" || exit 1
files=$(binlog_files | wc -l)
assert "the history spans $files binlog files (more than 8)" test "$files" -gt 8
end=$(gtid_pos)
assert "the history is in two GTID domains ($end)" grep -q , <<<"$end"

# The server's files say the same times: every GTID event of the history at its own second.
binlog_files | xargs mariadb-binlog --no-defaults 2>/dev/null |
  awk '/GTID [0-9]+-[0-9]+-[0-9]+/ && /^#31/ {print $1, $2}' >"$work/server_times"
assert "mariadb-binlog prints $(wc -l <"$work/history") GTID events of 2031" \
  test "$(wc -l <"$work/server_times")" == "$(wc -l <"$work/history")"
assert "and their times are the history's" \
  test "$(cut -d' ' -f2 "$work/history" | while read -r t; do date -u -d "@$t" +'#%y%m%d %-H:%M:%S'; done)" == \
  "$(cat "$work/server_times")"

# ids FILE: the inserted ids of an output, in order.
ids() { jq -r 'select(.op == "c") | .after.id' "$1" | tr '\n' ' '; }
# want FROM UNTIL: the history's ids committed in [FROM, UNTIL).
want() { awk -v from="$1" -v until="$2" '$2 >= from && $2 < until {printf "%s ", $1}' "$work/history"; }

check_from() {
  local label=$1 from=$2
  expect "live --from $label exits 0" 0 live --from "$(iso "$from")" --until "$end" --tables 'h.*'
  span_checked "$work/out"
  assert "live --from $label holds exactly the transactions committed at or after it" \
    test "$(ids "$work/out")" == "$(want "$from" 99999999999)"
  assert "live --from $label prints where it starts" grep -q -F "committed at or after it" "$work/err"
  expect "--file --from $label exits 0" 0 "$stream" --file $(binlog_files) --from "$(iso "$from")" --tables 'h.*'
  assert "--file --from $label holds the same" test "$(ids "$work/out")" == "$(want "$from" 99999999999)"
}
check_from "a transaction's second (it is included)" $((base + 60 * 20))
check_from "a second after a transaction (it is not)" $((base + 60 * 20 + 1))
check_from "the second of two transactions at once (both)" $((base + 60 * 25))
check_from "a rotation (file opened then)" $((base + 60 * 28 + 30))
check_from "the first transaction" $((base + 60))
check_from "the last transaction" $((base + 60 * 60))

# A multi-domain start: the position holds both domains, and resuming from it by GTID skips
# exactly the transactions before it in each.
from=$((base + 60 * 31))
live --from "$(iso "$from")" --until "$end" --tables 'h.*' >/dev/null 2>"$work/notice"
start=$(sed -n 's/.*; starting from \(.*\)$/\1/p' "$work/notice")
assert "--from $(iso "$from") resolves to a GTID position of both domains ($start)" grep -q '^0-1-[0-9]*,1-1-[0-9]*$' <<<"$start"
expect "streaming from that position exits 0" 0 live --from "$start" --until "$end" --tables 'h.*'
assert "and holds the transactions committed at or after the time" test "$(ids "$work/out")" == "$(want "$from" 99999999999)"

# --until: before the first transaction committed at or after it.
check_until() {
  local label=$1 from=$2 until=$3
  expect "live --from/--until $label exits 0" 0 live --from "$(iso "$from")" --until "$(iso "$until")" --tables 'h.*'
  span_checked "$work/out"
  assert "live $label holds the transactions committed in [from, until)" \
    test "$(ids "$work/out")" == "$(want "$from" "$until")"
  expect "--file $label exits 0" 0 "$stream" --file $(binlog_files) --from "$(iso "$from")" --until "$(iso "$until")" \
    --tables 'h.*'
  assert "--file $label holds the same" test "$(ids "$work/out")" == "$(want "$from" "$until")"
}
check_until "across three rotations" $((base + 60 * 10)) $((base + 60 * 33))
check_until "at one second (nothing)" $((base + 60 * 15)) $((base + 60 * 15))
check_until "around two transactions in one second" $((base + 60 * 44)) $((base + 60 * 45 + 1))

# A time after everything: the binlog's end, and an idle server stops --until once its clock
# is past the time.
expect "live --from a time after everything starts at the end" 0 live --from "$(iso $((base + 86400)))" --until "$end"
assert "and says nothing was committed then" grep -q "nothing committed at or after it yet" "$work/err"
soon=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
started=$SECONDS
expect "live --until $soon on an idle server stops by itself" 0 live --from "$end" --until "$soon"
assert "within a few seconds ($((SECONDS - started)) s)" test $((SECONDS - started)) -lt 15
span_checked "$work/out"

# Malformed times are usage errors; a time before a purged binlog is exit 5.
expect "a time without a zone is a usage error" 2 live --from 2031-01-01T00:00:00 --until now
assert "that names the zone forms" grep -q -F "2031-01-01T00:00:00Z" "$work/err"
expect "a time that does not exist is a usage error" 2 live --from 2031-02-30T00:00:00Z --until now
expect "--file with --from FILE:OFFSET is a usage error" 2 "$stream" --file $(binlog_files) --from binlog.000001:4
expect "--file with --from TIME and --start-position is a usage error" 2 \
  "$stream" --file $(binlog_files) --from "$(iso "$base")" --start-position 4
third=$(binlog_files | sed -n 3p)
root -e "PURGE BINARY LOGS TO '$(basename "$third")'" || exit 1
expect "live --from a time before the oldest binlog left exits 5" 5 live --from "$(iso $((base + 60)))" --until "$end"
assert "naming the oldest binlog and when it opened" grep -q -F "$(basename "$third"), opened at 2031-" "$work/err"
from=$((base + 60 * 40))
expect "live --from a time inside what is left exits 0" 0 live --from "$(iso "$from")" --until "$end" --tables 'h.*'
assert "with the transactions committed at or after it" test "$(ids "$work/out")" == "$(want "$from" 99999999999)"
finish
