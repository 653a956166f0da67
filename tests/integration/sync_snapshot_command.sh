#!/usr/bin/env bash
# cdc-sync --snapshot-command (issue 15): the chunk workers handed to a command of the user's,
# against a throwaway MariaDB of its own and the two SSH "hosts" of ssh_hosts_lib.sh:
#   ssh       -j 2 and 'ssh worker$(({index} + 2)) "... {cdc-snapshot} {args}"': one cdc-snapshot
#             --shard per host, reading the connection from the option file cdc-sync was given
#             (no password crosses ssh or any command line), into a --dir whose path has a space
#             (quoted through both shells); the snapshot equals a local run's and the table, row
#             for row, and both hosts did work;
#   missing   a command that exits 0 having published only some chunks: exit 1, the missing
#             chunks named, nothing merged; the rerun with a working command reads only those
#             and completes; a command that published every chunk and then failed is not run
#             again by the rerun;
#   kill -9   of cdc-sync while its workers run: they go on in their own process groups and
#             hold the --dir's lock (a rerun meanwhile: exit 2); the rerun after them finds
#             every chunk and merges; SIGTERM instead stops every process of the commands;
#   retry     a command that exits 69 is run again, as a local worker is;
#   failed    a command that fails otherwise (ssh that cannot connect, 255) stops cdc-sync
#             with its status, the command named;
#   kubectl   the cdc-sync Deployment of examples/kubernetes/sync-workers.yaml, its arguments
#             read from the YAML (Debian's python3-yaml) with /work and the option file moved
#             into the test's directory, --mode initial_only added, and a kubectl on PATH whose
#             exec runs the command here: each worker pod of the StatefulSet gets its shard,
#             and the snapshot is the tables'.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/ssh_hosts_lib.sh"
ssh_hosts_require
require_live_mode
throwaway_start "$srv" || exit 1
sync_bin="$tools_dir/cdc-sync"

root -e "CREATE DATABASE shop; USE shop;
         CREATE TABLE orders (id INT PRIMARY KEY, v INT, note VARCHAR(20));
         INSERT INTO orders SELECT seq, seq * 7 % 101, CONCAT('n', seq) FROM seq_1_to_20000;
         CREATE TABLE items (sku VARCHAR(12) PRIMARY KEY, n INT);
         INSERT INTO items SELECT CONCAT('s', seq), seq FROM seq_1_to_3000;
         ANALYZE TABLE orders, items" >/dev/null || exit 1
# The workers' credentials: an option file on the (shared) disk, as a real worker host has one.
printf '[client]\nhost=127.0.0.1\nport=%s\nuser=cdc\npassword=%s\n' "$THROWAWAY_PORT" "$THROWAWAY_CDC_PASSWORD" \
  >"$work/cdc.cnf"
chmod 600 "$work/cdc.cnf"
ssh_hosts_start || exit 1

# sync ARGS...: cdc-sync with the option file and nothing in MYSQL_PWD (a hang fails as 124).
sync() {
  env -u MYSQL_PWD CDC_TOOLS_DIR="$tools_dir" timeout -k 5 120 \
    "$sync_bin" --defaults-file="$work/cdc.cnf" --tables 'shop.*' --mode initial_only --chunk-size 1000 "$@"
}
# rows FILE: the r lines as db, table and row, sorted.
rows() { jq -c 'select(.op == "r") | [.db, .table, .after]' "$1" | sort; }
# table_rows: the source tables as rows prints them.
table_rows() {
  {
    root -N -B -e 'SELECT id, v, note FROM shop.orders' |
      jq -R -c 'split("\t") | ["shop", "orders", {id: (.[0] | tonumber), v: (.[1] | tonumber), note: .[2]}]'
    root -N -B -e 'SELECT sku, n FROM shop.items' |
      jq -R -c 'split("\t") | ["shop", "items", {sku: .[0], n: (.[1] | tonumber)}]'
  } | sort
}
table_rows >"$work/table.rows"

# ---- local workers: the reference ---------------------------------------------------------------
expect "local -j 2: exit 0" 0 sync --dir "$work/local.sync" -j 2
cp "$work/out" "$work/local.ndjson"
rows "$work/local.ndjson" >"$work/local.rows"
same_file "local -j 2: the tables' rows ($(wc -l <"$work/table.rows"))" "$work/table.rows" "$work/local.rows"
chunks=$(grep -c . "$work/local.sync/plan.ndjson")

# ---- over ssh, one worker per host, into a --dir with a space --------------------------------
dir="$work/ssh sync"
# worker2 for {index} 0, worker3 for 1; the command for the remote shell in double quotes, so
# that its placeholders reach that shell quoted; SSH_CONNECTION says which host ran it.
ssh_worker="$ssh_cmd"' worker$(({index} + 2)) "echo \$SSH_CONNECTION {shard} >>'"$work/reached"'; {cdc-snapshot} {args}"'
expect "ssh -j 2: exit 0" 0 sync --dir "$dir" -j 2 --metrics "$work/sync.prom" --snapshot-command "$ssh_worker"
cp "$work/out" "$work/ssh.ndjson"
rows "$work/ssh.ndjson" >"$work/ssh.rows"
same_file "ssh -j 2: the rows of the local run" "$work/local.rows" "$work/ssh.rows"
same_file "ssh -j 2: the tables' rows" "$work/table.rows" "$work/ssh.rows"
reached=$(awk '{print $3 " " $5}' "$work/reached" | sort | tr '\n' ' ')
assert "ssh -j 2: worker2 read shard 0/2, worker3 shard 1/2 ($reached)" test "$reached" == "127.0.0.2 0/2 127.0.0.3 1/2 "
assert "ssh -j 2: every chunk published in '$dir/chunks' ($chunks)" \
  test "$(find "$dir/chunks" -name '*.ndjson' | wc -l)" == "$chunks"
assert "ssh -j 2: --metrics counts the chunk files the workers published" \
  grep -qx "cdc_sync_snapshot_chunks_done $chunks" "$work/sync.prom"
assert "ssh -j 2: no password on the workers' command lines" \
  bash -c "! grep -qF -- '$THROWAWAY_CDC_PASSWORD' '$work/reached' '$work/err'"

# ---- a command that leaves chunks out ---------------------------------------------------------
dir="$work/partial sync"
expect "only worker 0 reads: exit 1" 1 sync --dir "$dir" -j 2 \
  --snapshot-command 'if [ {index} = 0 ]; then exec {cdc-snapshot} {args}; fi'
published=$(find "$dir/chunks" -name '*.ndjson' | wc -l)
want_missing=$(jq -r 'select(.op == "chunk") | "\(.db).\(.table).\(.index).ndjson"' "$dir/plan.ndjson" |
  while read -r name; do [[ -e "$dir/chunks/$name" ]] || echo "$name"; done | head -1)
assert "only worker 0 reads: says how many chunks are missing ($((chunks - published)) of $chunks)" \
  grep -qF "the --snapshot-command exited 0, but $((chunks - published)) of the plan's $chunks chunks are not in $dir/chunks: $want_missing, " "$work/err"
assert "only worker 0 reads: nothing merged" test ! -e "$dir/span" -a ! -e "$dir/snapshot.ndjson"
assert "only worker 0 reads: no snapshot on stdout" test ! -s "$work/out"
first=$(find "$dir/chunks" -name '*.ndjson' | head -1)
inode=$(stat -c %i "$first")
expect "rerun with both workers: exit 0" 0 sync --dir "$dir" -j 2 --snapshot-command '{cdc-snapshot} {args}'
rows "$work/out" >"$work/partial.rows"
same_file "rerun with both workers: the tables' rows" "$work/table.rows" "$work/partial.rows"
assert "rerun with both workers: the chunks published before are kept, not read again" \
  test "$(stat -c %i "$first")" == "$inode"

# A command that published every chunk and then failed: the rerun finds them all and runs none.
dir="$work/published sync"
expect "a command that fails after publishing every chunk: its exit 3" 3 sync --dir "$dir" \
  --snapshot-command '{cdc-snapshot} {args} && exit 3'
expect "its rerun: exit 0" 0 sync --dir "$dir" --snapshot-command "touch '$work/ran'; {cdc-snapshot} {args}"
assert "its rerun: no command run" test ! -e "$work/ran"
rows "$work/out" >"$work/published.rows"
same_file "its rerun: the tables' rows" "$work/table.rows" "$work/published.rows"

# ---- kill -9 of cdc-sync while the workers run ---------------------------------------------------
dir="$work/killed sync"
(
  exec env -u MYSQL_PWD CDC_TOOLS_DIR="$tools_dir" "$sync_bin" --defaults-file="$work/cdc.cnf" --tables 'shop.*' \
    --mode initial_only --chunk-size 1000 --dir "$dir" -j 2 \
    --snapshot-command "echo {shard} >>'$work/killed'; sleep 1; {cdc-snapshot} {args}" >/dev/null 2>&1
) &
killed_pid=$!
bg_pids+=("$killed_pid")
# workers_started FILE: both workers have written their line.
workers_started() { [[ $(cat "$1" 2>/dev/null | wc -l) == 2 ]]; }
wait_until 10 workers_started "$work/killed"
{
  kill -9 "$killed_pid"
  wait "$killed_pid"
} 2>/dev/null
assert "kill -9 of cdc-sync: the workers hold the lock" bash -c '! flock -n "$1" true' _ "$dir/lock"
# A rerun right away (as systemd's Restart= does) waits for them (up to 10 s), then goes on.
expect "kill -9 of cdc-sync: a rerun while its workers run waits for them: exit 0" 0 sync --dir "$dir" -j 2 \
  --snapshot-command "touch '$work/ran_after_kill'; {cdc-snapshot} {args}"
assert "kill -9 of cdc-sync: the rerun said what it waits for" \
  grep -q "lock is held by another process (another cdc-sync, or a tool of one that was just killed" "$work/err"
assert "kill -9 of cdc-sync: both workers ran" test "$(sort "$work/killed" | tr '\n' ' ')" == "0/2 1/2 "
assert "kill -9 of cdc-sync: the rerun finds their chunks and runs no command" test ! -e "$work/ran_after_kill"
rows "$work/out" >"$work/killed.rows"
same_file "kill -9 of cdc-sync: the tables' rows" "$work/table.rows" "$work/killed.rows"

# SIGTERM instead: it reaches every process of the commands (the sleep their shells wait for).
dir="$work/stopped sync"
(
  exec env -u MYSQL_PWD CDC_TOOLS_DIR="$tools_dir" "$sync_bin" --defaults-file="$work/cdc.cnf" --tables 'shop.*' \
    --mode initial_only --chunk-size 1000 --dir "$dir" -j 2 \
    --snapshot-command "echo {shard} >>'$work/stopped'; sleep 30; {cdc-snapshot} {args}" >/dev/null 2>&1
) &
stopped_pid=$!
bg_pids+=("$stopped_pid")
wait_until 10 workers_started "$work/stopped"
kill -TERM "$stopped_pid"
wait_exit "$stopped_pid" 5
assert "SIGTERM to cdc-sync while the workers run: exit 75 ($status)" test "$status" == 75
assert "SIGTERM to cdc-sync: no process of the commands holds the lock" flock -n "$dir/lock" true

# ---- exit 69 is run again; another failure stops cdc-sync ---------------------------------------
expect "a command that exits 69 once: exit 0" 0 sync --dir "$work/retry sync" \
  --snapshot-command "if [ ! -e '$work/failed' ]; then touch '$work/failed'; exit 69; fi; {cdc-snapshot} {args}"
assert "a command that exits 69 once: run again, with a notice" \
  grep -q "notice: the --snapshot-command exited 69 (server unavailable); running it again" "$work/err"
rows "$work/out" >"$work/retry.rows"
same_file "a command that exits 69 once: the tables' rows" "$work/table.rows" "$work/retry.rows"
expect "ssh to a port no sshd listens on: exit 255" 255 sync --dir "$work/failed sync" -j 2 \
  --snapshot-command "$ssh_cmd -o Port=1 "'worker$(({index} + 2)) {cdc-snapshot} {args}'
failed=$(sed -n 's/.*the --snapshot-command of worker \([01]\) exited.*/\1/p' "$work/err")
assert "ssh to a port no sshd listens on: the command named, as run (worker ${failed:-none})" grep -qF \
  "error: the --snapshot-command of worker $failed exited 255: $ssh_cmd -o Port=1 worker\$(($failed + 2)) $tools_dir/cdc-snapshot --defaults-file=$work/cdc.cnf --shard=$failed/2 " \
  "$work/err"

# ---- the Kubernetes example -----------------------------------------------------------------------
yaml="$source_dir/examples/kubernetes/sync-workers.yaml"
if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  mkdir -p "$work/k8s/work" "$work/k8s/etc" "$work/k8s/bin"
  cp "$work/cdc.cnf" "$work/k8s/etc/cdc.cnf"
  # kubectl exec POD -- COMMAND...: COMMAND run here, POD and its --shard noted.
  cat >"$work/k8s/bin/kubectl" <<EOF
#!/usr/bin/env bash
[[ \$1 == exec && \$3 == -- ]] || { echo "kubectl: not an exec: \$*" >&2; exit 2; }
pod=\$2
shift 3
echo "\$pod \$(printf '%s\n' "\$@" | grep -- '^--shard=')" >>"$work/k8s/pods"
exec "\$@"
EOF
  chmod +x "$work/k8s/bin/kubectl"
  # The StatefulSet's replicas, then the Deployment's command and arguments, the volumes moved.
  mapfile -t deployment < <(/usr/bin/python3 - "$yaml" <<'EOF' |
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc["kind"] == "StatefulSet":
        print(doc["spec"]["replicas"])
    if doc["kind"] == "Deployment":
        container = doc["spec"]["template"]["spec"]["containers"][0]
        for word in container["command"] + container["args"]:
            print(word)
EOF
    sed -e "s|/work|$work/k8s/work|g" -e "s|/etc/cdc/cdc.cnf|$work/k8s/etc/cdc.cnf|g")
  replicas=${deployment[0]}
  assert "the example parses: $replicas workers, cdc-sync -j $replicas" \
    grep -qx -- "-j$replicas" <(printf '%s\n' "${deployment[@]}")
  expect "the example's cdc-sync, initial_only: exit 0" 0 env -u MYSQL_PWD PATH="$work/k8s/bin:$tools_dir:$PATH" \
    timeout -k 5 120 "${deployment[@]:1}" --mode=initial_only --chunk-size=1000
  rows "$work/k8s/work/shop-changes.ndjson" >"$work/k8s.rows"
  same_file "the example's cdc-sync: the tables' rows" "$work/table.rows" "$work/k8s.rows"
  want_pods=$(for ((i = 0; i < replicas; i++)); do echo "cdc-worker-$i --shard=$i/$replicas"; done)
  assert "the example's cdc-sync: each worker pod got its shard" test "$(sort "$work/k8s/pods")" == "$want_pods"
else
  echo "skipped: the Kubernetes example (no python3-yaml)"
fi

ssh_hosts_stop
bg_pids=()
finish
