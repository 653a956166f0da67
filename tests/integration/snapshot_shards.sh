#!/usr/bin/env bash
# The Kubernetes example (examples/kubernetes/snapshot-indexed-job.yaml), pod by pod, on a
# throwaway server: its three Jobs' commands, read from the YAML (Debian's python3-yaml), run
# with /work and the credentials' option file moved into the test's directory. The Indexed
# Job's pods (--shard $(JOB_COMPLETION_INDEX)/COUNT) run four at a time, one of them killed
# with SIGKILL mid-chunk and started again with its index, as Kubernetes restarts a failed pod;
# a second pod of index 2 runs beside the first; a writer commits all along. Then: every chunk of the plan is in its own file, each pod read
# its share (every plan line N with N % COUNT = its index, from its --metrics file), and the
# merged snapshot replayed with the stream after it equals the source, row for row; a shard
# index at or past COUNT is a usage error.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
proof_require_tools
yaml="$source_dir/examples/kubernetes/snapshot-indexed-job.yaml"
export PATH="$tools_dir:$PATH"
throwaway_start "$srv" || exit 1

root -e "CREATE DATABASE shop; USE shop; CREATE TABLE shop.orders (id INT PRIMARY KEY, v INT, note VARCHAR(20));
         INSERT INTO shop.orders SELECT seq, seq, CONCAT('n', seq) FROM seq_1_to_200000;
         CREATE TABLE shop.items (sku VARCHAR(24) PRIMARY KEY, n INT);
         INSERT INTO shop.items SELECT CONCAT('s', seq), seq FROM seq_1_to_9000" || exit 1
mkdir -p "$work/work" "$work/etc"
printf '[client]\nhost=127.0.0.1\nport=%s\nuser=cdc\npassword=%s\n' "$THROWAWAY_PORT" "$THROWAWAY_CDC_PASSWORD" \
  >"$work/etc/cdc.cnf"
chmod 600 "$work/etc/cdc.cnf"

# job NAME: the Job's container command and arguments, one per line, with the volumes moved.
job() {
  /usr/bin/python3 - "$yaml" "$1" <<'EOF' | sed -e "s|/work|$work/work|g" -e "s|/etc/cdc/cdc.cnf|$work/etc/cdc.cnf|g"
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc["metadata"]["name"] == sys.argv[2]:
        container = doc["spec"]["template"]["spec"]["containers"][0]
        for word in container["command"] + container["args"]:
            print(word)
EOF
}
mapfile -t plan_job < <(job cdc-plan)
mapfile -t snapshot_job < <(job cdc-snapshot)
mapfile -t merge_job < <(job cdc-merge)
count=$(/usr/bin/python3 -c "
import sys, yaml
print([d for d in yaml.safe_load_all(open('$yaml')) if d['metadata']['name'] == 'cdc-snapshot'][0]['spec']['completions'])")
assert "the example parses: three Jobs, the snapshot's with --shard of its $count completions" \
  test "${#plan_job[@]}" -ge 3 -a "${#merge_job[@]}" -ge 3 -a "$count" -ge 2
assert "the snapshot pods' --shard names COUNT = completions" grep -q -x -- "--shard=\$(JOB_COMPLETION_INDEX)/$count" \
  <(printf '%s\n' "${snapshot_job[@]}")

# pod INDEX: the snapshot Job's container for one index, as Kubernetes expands $(VAR) in args.
# Its --metrics file (added for the test) tells what it read.
# Run it in the background (exec: $! is cdc-snapshot itself).
pod() { exec "${snapshot_job[@]/\$(JOB_COMPLETION_INDEX)/$1}" --metrics="$work/pod$1.prom"; }

expect "the plan Job" 0 "${plan_job[@]}"
chunks=$(wc -l <"$work/work/plan.ndjson")
assert "it planned more chunks ($chunks) than pods ($count)" test "$chunks" -gt "$count"

writer_pid=
(while :; do root -e "UPDATE shop.orders SET v = v + 1 WHERE id = $((RANDOM * 6 % 200000 + 1)); INSERT INTO shop.items VALUES (CONCAT('w', UUID_SHORT()), 1)" || exit; sleep 0.02; done) &
writer_pid=$!
bg_pids+=("$writer_pid")

# The pods, four at a time; index 1 is killed once mid-chunk and started again.
awk -v c="$count" 'NR % c == 2' "$work/work/plan.ndjson" | jq -r '"\(.db).\(.table).\(.index).ndjson.partial"' \
  >"$work/pod1.partials"
statuses=()
run_pods() {
  local index running=()
  for ((index = 0; index < count; index++)); do
    if ((index == 1)); then
      # Killed while it writes one of its chunks (a .partial file of its share is there).
      pod 1 2>"$work/pod1.first.err" &
      local victim=$! tries
      for ((tries = 0; tries < 2000; tries++)); do
        compgen -G "$work/work/chunks/*.partial" >/dev/null &&
          grep -q -x -F -f <(cd "$work/work/chunks" && ls -- *.partial 2>/dev/null) "$work/pod1.partials" && break
        sleep 0.005
      done
      kill -9 "$victim" 2>/dev/null
      wait "$victim" 2>/dev/null
      echo "  pod 1 killed while writing $(cd "$work/work/chunks" && ls -- *.partial 2>/dev/null | tr '\n' ' ')"
    fi
    pod "$index" 2>"$work/pod$index.err" &
    running+=($!)
    if ((index == 2)); then
      # A second pod with the same index at once, as when Kubernetes starts a replacement
      # before the old pod is gone: the two take turns per chunk, neither writes over the other.
      pod 2 2>"$work/pod2.twin.err" &
      twin=$!
    fi
    if ((${#running[@]} == 4)); then
      wait "${running[0]}"
      statuses+=($?)
      running=("${running[@]:1}")
    fi
  done
  for p in "${running[@]}" "$twin"; do
    wait "$p"
    statuses+=($?)
  done
}
twin=
run_pods
assert "every pod exited 0 (${statuses[*]})" test -z "$(printf '%s\n' "${statuses[@]}" | grep -v -x 0)"
files=$(find "$work/work/chunks" -name '*.ndjson' | wc -l)
assert "one file per chunk: $files for $chunks chunks" test "$files" == "$chunks"
assert "no partial file left" test -z "$(find "$work/work/chunks" -name '*.partial')"
# Each pod's share, from its --metrics file: the plan's lines N with N % COUNT = INDEX, all done.
shares_ok=0
for ((index = 0; index < count; index++)); do
  want=$(((chunks - index + count - 1) / count))
  got_total=$(metric_value "$work/pod$index.prom" cdc_snapshot_chunks)
  got_done=$(metric_value "$work/pod$index.prom" cdc_snapshot_chunks_done)
  if [[ $got_total == "$want" && $got_done == "$want" ]]; then
    shares_ok=$((shares_ok + 1))
  else
    echo "  pod $index: $got_done of $got_total chunks done, its share is $want"
  fi
done
assert "each pod read its share of the plan, every line N with N % $count = its index" test "$shares_ok" == "$count"

kill "$writer_pid" 2>/dev/null
wait "$writer_pid" 2>/dev/null
expect "the merge Job" 0 "${merge_job[@]}"
assert "the merged snapshot ends with its high line" bash -c "tail -1 '$work/work/snapshot.ndjson' | grep -q '\"op\":\"high\"'"

# The merged snapshot is the tables at its high line: replayed with the stream from there on,
# a copy of each equals the source row for row.
high=$(tail -1 "$work/work/snapshot.ndjson" | jq -r .position)
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD cdc-stream -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc --from "$high" --until now \
  --tables 'shop.*' >"$work/tail.ndjson" 2>/dev/null
echo "  $(grep -c '"op":"[cud]"' "$work/work/deltas.ndjson") changes merged, $(grep -c '"op":"[cud]"' "$work/tail.ndjson") after the high line"
if proof_replay copy "$work/work/snapshot.ndjson" "$work/tail.ndjson" >"$work/replay.out" 2>&1; then
  proof_compare shop.orders copy
  proof_compare shop.items copy
else
  fail "the replay of the merged snapshot and the stream: $(tail -3 "$work/replay.out")"
fi

expect "--shard $count/$count is a usage error" 2 cdc-snapshot --shard "$count/$count" "$work/work/plan.ndjson"
assert "that says how to write it" grep -q -F "INDEX/COUNT" "$work/err"
expect "--shard 1 is a usage error" 2 cdc-snapshot --shard 1 "$work/work/plan.ndjson"
finish
