#!/usr/bin/env bash
# The README's snapshot across hosts, run: GNU parallel --sshlogin deals the plan's chunk lines
# to two worker "hosts" (127.0.0.2 and 127.0.0.3, each with an sshd of its own: ssh_hosts_lib.sh),
# each worker runs cdc-snapshot --output-dir into a directory they share, and cdc-merge makes
# the snapshot. Checked: both hosts read chunks (the workers' SSH_CONNECTION names the address
# they were reached at), every chunk is in its own file once, and the merged snapshot has the
# rows of a run on one host. The hosts share this machine's files and tools: what crosses the
# network is the work and the connections to the server. cdc-sync --snapshot-command over the
# same hosts: sync_snapshot_command.sh.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/ssh_hosts_lib.sh"
ssh_hosts_require parallel
throwaway_start "$srv" || exit 1

root -e "CREATE DATABASE shop; USE shop;
         CREATE TABLE orders (id INT PRIMARY KEY, v INT, note VARCHAR(20));
         INSERT INTO orders SELECT seq, seq, CONCAT('n', seq) FROM seq_1_to_100000;
         CREATE TABLE items (sku VARCHAR(12) PRIMARY KEY, n INT);
         INSERT INTO items SELECT CONCAT('s', seq), seq FROM seq_1_to_20000" || exit 1
printf '[client]\nhost=127.0.0.1\nport=%s\nuser=cdc\npassword=%s\n' "$THROWAWAY_PORT" "$THROWAWAY_CDC_PASSWORD" \
  >"$work/cdc.cnf"
chmod 600 "$work/cdc.cnf"

ssh_hosts_start || exit 1

MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$tools_dir/cdc-plan" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc --tables 'shop.*' \
  --chunk-size 4000 >"$work/chunks.ndjson" || exit 1
chunks=$(wc -l <"$work/chunks.ndjson")
mkdir -p "$work/chunk_files"
# As the README runs it: one chunk line per job, two jobs per host at a time.
status=0
parallel --will-cite --pipe -N 1 -j 2 --sshlogin worker2,worker3 --ssh "$ssh_cmd" \
  "echo \"\$SSH_CONNECTION\" >>$work/reached; $tools_dir/cdc-snapshot --defaults-file $work/cdc.cnf --output-dir $work/chunk_files" \
  <"$work/chunks.ndjson" 2>"$work/parallel.err" || status=$?
assert "parallel --sshlogin deals $chunks chunks to the two workers (exit $status)" test "$status" == 0
reached=$(awk '{print $3}' "$work/reached" | sort | uniq -c | awk '{printf "%s: %s jobs; ", $2, $1}')
assert "worker 127.0.0.2 read chunks ($reached)" grep -q ' 127.0.0.2 ' "$work/reached"
assert "worker 127.0.0.3 read chunks" grep -q ' 127.0.0.3 ' "$work/reached"
assert "one job per chunk ($(wc -l <"$work/reached") jobs)" test "$(wc -l <"$work/reached")" == "$chunks"
assert "one file per chunk" test "$(find "$work/chunk_files" -name '*.ndjson' | wc -l)" == "$chunks"

# The merge, as on one host: the span, its deltas, the merged snapshot.
read -r from until < <("$tools_dir/cdc-merge" --span "$work"/chunk_files/*.ndjson)
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc --tables 'shop.*' --from "$from" \
  --until "$until" >"$work/deltas.ndjson" 2>/dev/null
expect "cdc-merge of the workers' chunks" 0 "$tools_dir/cdc-merge" "$work"/chunk_files/*.ndjson --deltas "$work/deltas.ndjson"
cp "$work/out" "$work/merged.ndjson"
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$tools_dir/cdc-snapshot" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$work/chunks.ndjson" \
  >"$work/one_host.ndjson"
rows() { jq -c 'select(.op=="r") | [.db, .table, .after]' "$1" | sort; }
assert "the merged snapshot has the rows of a run on one host ($(rows "$work/one_host.ndjson" | wc -l))" \
  cmp -s <(rows "$work/merged.ndjson") <(rows "$work/one_host.ndjson")
ssh_hosts_stop
bg_pids=()
finish
