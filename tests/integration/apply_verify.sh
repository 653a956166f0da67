#!/usr/bin/env bash
# cdc-apply --verify (issue 32): the copy compared with its source while changes flow.
# cdc-sync --output streams a.* (apply_lib.sh's tables and load) and cdc-apply --follow applies
# it into database b of the same server, while a throttled random load runs; then
#   --verify, run several times during the load, finds every chunk equal (no false differs);
#   rows changed, deleted and inserted behind cdc-apply's back, in the target and in the source
#   with sql_log_bin=0 (so the stream never carries them), are reported, every one and nothing
#   else, each with the side that has it, and exit 1;
#   --verify-max-keys caps the keys listed, not the count.
# A heartbeat table (left out of --verify) keeps the target's position moving once the load
# stops: the source's binlog also holds cdc-apply's own transactions (one server), which no
# commit line carries until the next selected change.
# CDC_VERIFY_SEED replays a run.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/apply_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (the load) is not installed" && exit 77; }
command -v jq >/dev/null || { echo "skipped: jq is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1
seed=${CDC_VERIFY_SEED:-$RANDOM}
echo "     seed $seed (CDC_VERIFY_SEED=$seed replays it)"

apply_source_schema
root -e "CREATE TABLE a.hb (id INT PRIMARY KEY, n BIGINT NOT NULL)" || exit 1
apply_write_load
python3 "$work/load.py" "$seed" 0 0 1 >"$work/initial.sql" && root <"$work/initial.sql" >/dev/null ||
  fail "the initial load"
python3 "$work/load.py" "$seed" 1 600 1 >"$work/load.sql"

# The stream, and the apply following it.
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir "$sync_bin" -h 127.0.0.1 \
  -P "$THROWAWAY_PORT" -u cdc --tables 'a.*' --dir "$work/dir" --chunk-size 50 --output "$work/stream.ndjson" \
  >/dev/null 2>"$work/sync.err" &
bg_pids+=($!)
# The merged snapshot is whole at its high line; the stream file comes after it.
streaming() {
  [[ -f $work/stream.ndjson ]] && tail -n 1 "$work/dir/snapshot.ndjson" 2>/dev/null | grep -q '"op":"high"'
}
wait_until 60 streaming || { fail "cdc-sync did not start streaming: $(tail -3 "$work/sync.err")" && finish; }
"$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database b --create-tables --follow "$work/dir/snapshot.ndjson" \
  "$work/stream.ndjson" >/dev/null 2>"$work/apply.err" &
follower=$!
bg_pids+=("$follower")
# The heartbeat: one change a tenth of a second, for as long as the test runs.
(for ((n = 1; ; n++)); do root -e "REPLACE INTO a.hb VALUES (1, $n)" 2>/dev/null; sleep 0.1; done) &
bg_pids+=($!)
applied_hb() { [[ $(root -N -e "SELECT COUNT(*) FROM b.hb" 2>/dev/null) == 1 ]]; }
wait_until 60 applied_hb || { fail "cdc-apply did not apply the stream: $(tail -3 "$work/apply.err")" && finish; }

# The source's connection options in a file of their own, as a user keeps them.
cat >"$work/source.cnf" <<CNF
[client]
host=127.0.0.1
port=$THROWAWAY_PORT
user=cdc
password=$THROWAWAY_CDC_PASSWORD
CNF
verify() {
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database b --verify --source-defaults-file "$work/source.cnf" \
    --tables 'a.*' --exclude a.hb --chunk-size 50 --verify-wait 20 "$@"
}

# The load, about 40 transactions a second, while --verify runs again and again.
python3 -c '
import sys, time
for line in open(sys.argv[1]):
    sys.stdout.write(line)
    if line.startswith("COMMIT"):
        sys.stdout.flush()
        time.sleep(0.025)
' "$work/load.sql" | root >/dev/null 2>"$work/load.err" &
loader=$!
bg_pids+=("$loader")
runs=0 chunks=0 not_equal=0
while kill -0 "$loader" 2>/dev/null && ((runs < 4)); do
  status=0
  verify >"$work/verify.$runs.ndjson" 2>"$work/verify.$runs.err" || status=$?
  assert "--verify during the load (run $((runs + 1))): exit 0, got $status" test "$status" == 0 ||
    { jq -c 'select(.status != "equal")' "$work/verify.$runs.ndjson" | head -5; tail -2 "$work/verify.$runs.err"; }
  chunks=$((chunks + $(jq -s '[.[] | select(.op == "verify")] | length' "$work/verify.$runs.ndjson")))
  not_equal=$((not_equal + $(jq -s '[.[] | select(.op == "verify" and .status != "equal")] | length' \
    "$work/verify.$runs.ndjson")))
  runs=$((runs + 1))
done
echo "     $runs runs during the load, $chunks chunks compared, $not_equal not equal;" \
  "rounds of rows: $(cat "$work"/verify.*.ndjson | jq -s '[.[] | select(.op == "verify") | .rounds] | add')"
assert "--verify ran at least twice during the load" test "$runs" -ge 2
assert "every chunk compared during the load was equal" test "$not_equal" == 0
wait "$loader" || fail "the load: $(head -c 300 "$work/load.err")"

# After the load: still equal.
expect "--verify after the load: exit 0" 0 verify
assert "  a verify line per chunk, all equal, then the summary" \
  test "$(jq -r 'select(.op == "verify_summary") | "\(.chunks == .equal) \(.differs) \(.unsettled)"' "$work/out")" \
  == "true 0 0"

# Behind cdc-apply's back: in the target (b), and in the source (a) without the binlog.
# Expected keys: "table key source target", one a line.
pick() { root -N -e "SELECT id FROM a.t ORDER BY RAND($seed) LIMIT $1, $2" | paste -sd,; }
target_updated=$(pick 0 3) target_deleted=$(pick 3 2) source_updated=$(pick 5 2) source_deleted=$(pick 7 1)
root <<SQL || fail "the changes behind its back"
UPDATE b.t SET vc = 'changed behind its back' WHERE id IN ($target_updated);
DELETE FROM b.t WHERE id IN ($target_deleted);
INSERT INTO b.t (id, vc) VALUES (900001, 'only in the target'), (900002, NULL);
UPDATE b.c SET v = CONCAT(IFNULL(v, ''), '!') ORDER BY k1, k2 LIMIT 1;
INSERT INTO b.k VALUES (NULL, 'zz', NULL);
SET SESSION sql_log_bin = 0;
UPDATE a.t SET de = IFNULL(de, 0) + 1 WHERE id IN ($source_updated);
DELETE FROM a.t WHERE id IN ($source_deleted);
INSERT INTO a.t (id, vc) VALUES (800001, 'only in the source');
SQL
c_key=$(root -N -e "SELECT JSON_OBJECT('k1', k1, 'k2', k2) FROM b.c WHERE v LIKE '%!' ORDER BY k1, k2 LIMIT 1")
{
  for id in ${target_updated//,/ } ${source_updated//,/ }; do echo "t {\"id\":$id} true true"; done
  for id in ${target_deleted//,/ }; do echo "t {\"id\":$id} true false"; done
  for id in ${source_deleted//,/ }; do echo "t {\"id\":$id} false true"; done
  echo 't {"id":900001} false true'
  echo 't {"id":900002} false true'
  echo 't {"id":800001} true false'
  echo "c $(jq -c . <<<"$c_key") true true"
  echo 'k {"v":null,"w":"zz","f":null} false true'
} | sort >"$work/expected_keys"

expect "--verify after the changes behind its back: exit 1 (differs)" 1 verify --verify-max-keys 1000
jq -r 'select(.op == "verify" and .status == "differs") | .table as $t | .keys[] |
  "\($t) \(.key | tojson) \(.source) \(.target)"' "$work/out" | sort >"$work/found_keys"
assert "  it reports exactly the rows changed behind its back ($(wc -l <"$work/expected_keys")), each with its side" \
  diff "$work/expected_keys" "$work/found_keys" || diff "$work/expected_keys" "$work/found_keys" | head -20
assert "  no chunk unsettled, and the summary counts the keys" \
  test "$(jq -r 'select(.op == "verify_summary") | "\(.unsettled) \(.keys_total)"' "$work/out")" \
  == "0 $(wc -l <"$work/expected_keys")"
assert "  the other chunks are equal" \
  test "$(jq -s '[.[] | select(.op == "verify" and .status == "equal")] | length' "$work/out")" -gt 0
echo "     $(tail -1 "$work/err")"
differing=$(jq 'select(.op == "verify_summary") | .differs' "$work/out")

expect "--verify-max-keys 1: exit 1" 1 verify --verify-max-keys 1
assert "  at most one key listed per chunk, all counted" \
  test "$(jq -s '[.[] | select(.op == "verify" and .status == "differs") | (.keys | length) <= 1] | all' \
    "$work/out") $(jq 'select(.op == "verify_summary") | .keys_total' "$work/out")" \
  == "true $(wc -l <"$work/expected_keys")"

# cdc-apply stopped while the source goes on (the heartbeat): a chunk that differs cannot be
# told from one the target is behind on, so it is unsettled (exit 75), not differs; the equal
# ones are equal; and only the first waits --verify-wait.
kill -TERM "$follower" && wait "$follower"
started=$SECONDS
expect "cdc-apply stopped: exit 75 (unsettled)" 75 verify --verify-wait 3
# (Not necessarily the same $differing chunks: cdc-plan splits the tables again, and the rows
# changed behind cdc-apply's back may move a chunk's bounds, so a changed row may fall in
# another chunk, or two in one.)
unsettled_summary=$(jq -r 'select(.op == "verify_summary") | "\(.unsettled) \(.differs) \(.chunks - .equal)"' "$work/out")
assert "  the chunks that differ ($differing before) are unsettled, none differs, the others equal ($unsettled_summary)" \
  test "$(awk '{ print ($1 > 0 && $2 == 0 && $1 == $3) }' <<<"$unsettled_summary")" == 1
assert "  the reason names the positions" \
  grep -q '"reason":"the target did not apply the source.s position 0-' "$work/out"
assert "  one wait of --verify-wait, not one per chunk ($((SECONDS - started)) s)" test $((SECONDS - started)) -lt 9

# The stream, the apply and the heartbeat end by SIGTERM (the apply and cdc-sync save where
# they are), quietly.
for pid in "${bg_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
for pid in "${bg_pids[@]}"; do wait "$pid" 2>/dev/null; done
bg_pids=()
finish
