#!/usr/bin/env bash
# bench/stream_live.sh — cdc-stream reading a live server, next to mariadb-binlog.
#
# Starts its own throwaway MariaDB (ROW format, FULL image and row metadata, CRC32; durability
# off: innodb_flush_log_at_trx_commit=0, sync_binlog=0, so that the disk's noise stays out of the
# figures) and measures, in one run, three things over loopback TCP:
#
# 1. Commit-to-line latency. A writer makes single-row autocommit INSERTs into bench.lat, one at
#    a time; the reader runs with its stdout on a pipe. Latency of row n = the moment the reader's
#    output holding row n was read from the pipe minus the moment the INSERT's OK packet arrived
#    (both on one monotonic clock in one Python process, which speaks the client protocol itself
#    so that "the COMMIT returned" is exact). The server wakes its binlog dump threads before it
#    acknowledges the commit, so a reader can print a row before the writer has the OK: values
#    below 0 happen. The time from sending the INSERT to the line is printed too, next to the
#    INSERT's own round trip. After each row the writer waits until the reader printed it, then
#    pauses (--pause-ms, ±50%), so each measurement is isolated.
#      A: mariadb-binlog --read-from-remote-server --stop-never -v --base64-output=decode-rows
#         --start-position=<end> <current binlog>  (row n is the line '###   @1=n')
#      B: cdc-stream --from now                     (row n is the c line with "after":{"n":n)
#    The tools take turns in 10 blocks each (A B B A A B ...), one reader running at a time, each
#    block started fresh, synchronised with sentinel rows and warmed up with 10 unmeasured rows.
# 2. Throughput. A binlog of --rows row changes (40% INSERTs, 40% UPDATEs, 20% DELETEs in
#    10,000-row transactions, into a table with INT, DECIMAL, DATETIME(6), VARCHAR, CHAR, TEXT
#    (a third NULL) and ENUM columns) is read whole over the replication protocol, > /dev/null:
#      A: mariadb-binlog -v --base64-output=decode-rows --read-from-remote-server FILES...
#      B: cdc-stream --from FIRST:4 --until now
#      C: mariadb-binlog --read-from-remote-server --raw FILES...  (the events' bytes copied into
#         files on tmpfs, nothing decoded: what the server's dump thread and the client library
#         cost alone, the floor under any reader of this protocol)
#    after an untimed sanity run of each that checks both printed every row change (cdc-stream:
#    exactly one c/u/d line per row change plus one commit line per transaction). Then
#    --rounds timed runs of each, alternating. Wall time from bash, peak RSS and CPU from GNU time.
# 3. Lag under load. cdc-stream reads from now while --clients clients insert single rows in
#    autocommit (a stored procedure loop: one transaction per row) as fast as they can for
#    --lag-seconds. Every second: the server's binlog end (SHOW MASTER STATUS), the position of
#    the last commit line cdc-stream printed, and the bytes between them; afterwards, for each
#    sample, how long cdc-stream took to print past the end sampled then ("catch-up"). It says
#    whether the lag grew (mean of the last 5 samples against the first 5) and checks that
#    cdc-stream printed one c line per inserted row.
#
# How to read the output: per-block and per-round lines on stderr as it goes, the lag series,
# then a summary table. Latency in microseconds; the ratios are mariadb-binlog / cdc-stream, so
# > 1 means cdc-stream is faster. The machine is shared and has few cores: it is a benchmark, not
# a test, with no thresholds; it fails only if a tool loses rows or the setup fails.
#
# Usage: bench/stream_live.sh [--rows N] [--commits N] [--rounds N] [--lag-seconds N]
#                             [--clients N] [--pause-ms N]
#   --rows N         row changes in the throughput binlog (default 1000000)
#   --commits N      measured single-row commits per tool for the latency (default 3000)
#   --rounds N       timed throughput runs of each tool; the median is reported (default 3)
#   --lag-seconds N  how long the writers run in the lag test (default 20)
#   --clients N      parallel writers in the lag test (default 4)
#   --pause-ms N     mean pause between latency measurements (default 5)
# Environment: CDC_TOOLS_DIR (where cdc-stream is; default build/tools of this clone, so build
# first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=1000000
commits=3000
rounds=3
lag_seconds=20
clients=4
pause_ms=5
txn_rows=10000
bench_args stream_live "--rows --commits --rounds --lag-seconds --clients --pause-ms" "" "$@"
bench_positive rows commits rounds lag_seconds clients pause_ms
((rows >= 10)) || bench_die "--rows must be at least 10"
((lag_seconds >= 2)) || bench_die "--lag-seconds must be at least 2"

# --- 1. packages, tools, server -----------------------------------------------------------------
CDC_PACKAGES+=(python3)
bench_setup stream_live
bench_tools_dir cdc-stream
cdc_stream=$BENCH_TOOLS/cdc-stream
"$cdc_stream" --help | grep -- '--from' >/dev/null || bench_die "$cdc_stream has no live mode (no --from in its --help); rebuild it"
bench_mariadb_binlog
mariadb_binlog=$BENCH_MARIADB_BINLOG
work=$BENCH_WORK
bench_start_server
port=$BENCH_PORT
# The tools connect as cdc (replication grants only) over TCP; the harness (bench/stream_live.py)
# writes as bench.
conn=(--host=127.0.0.1 --port="$port" --user=cdc --password="$THROWAWAY_CDC_PASSWORD")
cdc_conn=("${BENCH_CDC_CONN[@]}")
bench_password=bench-writer-secret

# --- 2. the throughput binlog -------------------------------------------------------------------
insert_rows() {  # insert_rows FIRST LAST
  echo "INSERT INTO orders SELECT seq + $(($1 - 1)), FLOOR(RAND() * 1000000), ROUND(RAND() * 100000, 2),"
  echo "  TIMESTAMP'2024-01-01 00:00:00' + INTERVAL (seq * 7919) SECOND + INTERVAL seq MICROSECOND,"
  echo "  CONCAT('label-', seq + $(($1 - 1))), REPEAT(CHAR(97 + seq % 26), 60),"
  echo "  IF(seq % 3 = 0, NULL, CONCAT(MD5(seq), ' ', MD5(RAND()))), 1 + seq % 2 FROM seq_1_to_$(($2 - $1 + 1));"
}
update_rows() {  # update_rows FIRST LAST
  echo "UPDATE orders SET k = k + 1, amount = amount + 1.25, status = 'shipped', note = CONCAT('shipped ', id)"
  echo "  WHERE id BETWEEN $1 AND $2;"
}
bench_change_load "$rows" "$txn_rows" orders "id INT NOT NULL PRIMARY KEY, k INT NOT NULL, amount DECIMAL(12,2) NOT NULL,
  created DATETIME(6) NOT NULL, label VARCHAR(64) NOT NULL, pad CHAR(60) NOT NULL, note TEXT NULL,
  status ENUM('new','paid','shipped') NOT NULL, KEY k_1 (k)" insert_rows update_rows
# Every file but the one FLUSH BINARY LOGS opened holds the load.
bench_sql -e "SHOW BINARY LOGS" | awk '{ print $1, $2 }' | head -n -1 >"$work/binlogs.txt"
mapfile -t names < <(awk '{ print $1 }' "$work/binlogs.txt")
binlog_bytes=$(awk '{ s += $2 } END { print s }' "$work/binlogs.txt")

# --- 3. throughput over the replication protocol ------------------------------------------------
mb_read=("$mariadb_binlog" --no-defaults "${conn[@]}" --read-from-remote-server -v --base64-output=decode-rows "${names[@]}")
cdc_read=("$cdc_stream" "${cdc_conn[@]}" --from "${names[0]}:4" --until now)
raw_dir=$(mktemp -d "$( [[ -d /dev/shm ]] && echo /dev/shm || echo "$work")/cdc-bench-raw.XXXXXX")
trap 'rm -rf "$raw_dir"; _bench_cleanup' EXIT
raw_read=("$mariadb_binlog" --no-defaults "${conn[@]}" --read-from-remote-server --raw --result-file="$raw_dir/" "${names[@]}")
bench_log "throughput: sanity run of each on ${#names[@]} file(s), $binlog_bytes bytes"
if ! bench_check_decoded "$("${cdc_read[@]}" 2>>"$work/throughput.err" | bench_count_ops)" \
  "$("${mb_read[@]}" 2>>"$work/throughput.err" | bench_count_mb_rows)"; then
  tail -5 "$work/throughput.err" >&2
  exit 1
fi
: >"$work/A.txt"
: >"$work/B.txt"
: >"$work/C.txt"
for ((round = 1; round <= rounds; round++)); do
  bench_time "$work/t" "${mb_read[@]}" >/dev/null 2>>"$work/throughput.err"
  cat "$work/t" >>"$work/A.txt"
  bench_time "$work/t" "${cdc_read[@]}" >/dev/null 2>>"$work/throughput.err"
  cat "$work/t" >>"$work/B.txt"
  bench_time "$work/t" "${raw_read[@]}" >/dev/null 2>>"$work/throughput.err"
  cat "$work/t" >>"$work/C.txt"
  raw_bytes=$(cat "$raw_dir"/* | wc -c)
  rm -f "$raw_dir"/*
  ((raw_bytes >= binlog_bytes)) || bench_die "mariadb-binlog --raw copied $raw_bytes bytes of $binlog_bytes"
  bench_log "throughput round $round/$rounds: mariadb-binlog $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "cdc-stream $(tail -1 "$work/B.txt" | cut -d' ' -f1) s, mariadb-binlog --raw $(tail -1 "$work/C.txt" | cut -d' ' -f1) s"
done
rmdir "$raw_dir"

# --- 4. commit-to-line latency ---------------------------------------------------------------------
bench_sql <<SQL
CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '$bench_password';
GRANT ALL ON bench.* TO 'bench'@'127.0.0.1';
GRANT BINLOG MONITOR ON *.* TO 'bench'@'127.0.0.1';
CREATE TABLE bench.lat (n INT NOT NULL PRIMARY KEY, created TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB;
CREATE TABLE bench.load_t (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, cid INT NOT NULL, i INT NOT NULL,
  amount DECIMAL(10,2) NULL, label VARCHAR(64) NULL, created DATETIME(6) NULL) ENGINE=InnoDB;
DELIMITER //
CREATE PROCEDURE bench.load_rows(IN client INT, IN secs INT)
BEGIN
  DECLARE stop_at DATETIME(6) DEFAULT SYSDATE(6) + INTERVAL secs SECOND;
  DECLARE i INT DEFAULT 0;
  WHILE SYSDATE(6) < stop_at DO
    SET i = i + 1;
    INSERT INTO bench.load_t (cid, i, amount, label, created)
      VALUES (client, i, i / 100, CONCAT('client ', client, ' row ', i), SYSDATE(6));
  END WHILE;
  SELECT i;
END//
DELIMITER ;
SQL
bench_log "latency: $commits single-row commits for each tool, in alternating blocks"
mb_live=("$mariadb_binlog" --no-defaults "${conn[@]}" --read-from-remote-server --stop-never -v
  --base64-output=decode-rows '--start-position={pos}' '{file}')
cdc_live=("$cdc_stream" "${cdc_conn[@]}" --from now)
python3 "$CDC_ROOT/bench/stream_live.py" latency "$(jq -n -c --arg port "$port" --arg pw "$bench_password" \
  --argjson commits "$commits" --argjson pause "$pause_ms" --arg work "$work" \
  --argjson mb "$(printf '%s\n' "${mb_live[@]}" | jq -R . | jq -s -c .)" \
  --argjson cdc "$(printf '%s\n' "${cdc_live[@]}" | jq -R . | jq -s -c .)" \
  '{host: "127.0.0.1", port: ($port | tonumber), user: "bench", password: $pw, commits: $commits,
    blocks: 10, warmup: 10, pause_ms: $pause,
    tools: {"mariadb-binlog": {format: "text", argv: $mb}, "cdc-stream": {format: "ndjson", argv: $cdc}},
    stderr: ($work + "/latency-%s.err"), samples: ($work + "/latency-%s.txt"), result: ($work + "/latency.txt")}')"

# --- 5. lag under load --------------------------------------------------------------------------
bench_log "lag: cdc-stream from now while $clients clients insert single rows for $lag_seconds s"
python3 "$CDC_ROOT/bench/stream_live.py" lag "$(jq -n -c --arg port "$port" --arg pw "$bench_password" --arg work "$work" \
  --argjson seconds "$lag_seconds" --argjson clients "$clients" \
  --argjson cdc "$(printf '%s\n' "${cdc_live[@]}" | jq -R . | jq -s -c .)" \
  --arg socket "$THROWAWAY_SOCKET" \
  '{host: "127.0.0.1", port: ($port | tonumber), user: "bench", password: $pw, seconds: $seconds,
    clients: $clients, argv: $cdc,
    writer: ["mariadb", "--no-defaults", ("--socket=" + $socket), "-uroot", "-N", "-B", "-e"],
    stderr: ($work + "/lag.err"), series: ($work + "/lag-series.txt"), result: ($work + "/lag.txt")}')"
echo >&2
cat "$work/lag-series.txt" >&2

# --- 6. summary ----------------------------------------------------------------------------------------
read -r a_med a_min a_cpu a_rss < <(bench_stats "$work/A.txt")
read -r b_med b_min b_cpu b_rss < <(bench_stats "$work/B.txt")
read -r raw_med raw_min raw_cpu raw_rss < <(bench_stats "$work/C.txt")
# name commits min p50 p99 max mean rss_kib sent_p50 sent_p99; insert commits min p50 p99 max
la=$(grep '^mariadb-binlog ' "$work/latency.txt" | cut -d' ' -f2-)
lb=$(grep '^cdc-stream ' "$work/latency.txt" | cut -d' ' -f2-)
lrtt=$(grep '^insert ' "$work/latency.txt" | cut -d' ' -f2-)
lag() { sed -n "s/^$1=//p" "$work/lag.txt"; }  # lag NAME: one figure of the lag test
mb_version=$("$mariadb_binlog" --no-defaults --version | head -1)
cdc_version=$("$cdc_stream" --version | head -1)
server_version=$(bench_sql -e "SELECT VERSION()")
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
awk -v bytes="$binlog_bytes" -v files="${#names[@]}" -v rows="$BENCH_ROW_CHANGES" -v txns="$BENCH_TXNS" -v rounds="$rounds" \
  -v a_med="$a_med" -v a_min="$a_min" -v a_rss="$a_rss" -v a_cpu="$a_cpu" \
  -v b_med="$b_med" -v b_min="$b_min" -v b_rss="$b_rss" -v b_cpu="$b_cpu" \
  -v raw_med="$raw_med" -v raw_min="$raw_min" -v raw_rss="$raw_rss" -v raw_cpu="$raw_cpu" \
  -v la="$la" -v lb="$lb" -v lrtt="$lrtt" -v pause="$pause_ms" \
  -v clients="$clients" -v lag_s="$(lag load_seconds)" -v inserted="$(lag inserted)" -v cdc_rows="$(lag cdc_rows)" \
  -v load_bytes="$(lag load_bytes)" -v samples="$(lag samples)" \
  -v first="$(lag behind_first)" -v last="$(lag behind_last)" -v bmax="$(lag behind_max)" \
  -v c_med="$(lag catchup_median_ms)" -v c_max="$(lag catchup_max_ms)" -v drain="$(lag drain_ms)" \
  -v lag_rss="$(lag rss_kib)" -v lag_cpu="$(lag cpu_s)" \
  -v mbv="$mb_version" -v cdcv="$cdc_version" -v srv="$server_version" -v cpu="$cpu_model" -v ncpu="$(nproc)" '
  function commas(x,   s, r, neg) { neg = x < 0; s = sprintf("%d", neg ? -x : x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return (neg ? "-" : "") s r }
  function lat(name, f,   v) {
    split(f, v, " ")
    printf "%-15s %8s %8.0f %8.0f %8.0f %9.0f %8.0f %13.1f\n", name, commas(v[1]), v[2], v[3], v[4], v[5], v[6], v[7] / 1024
  }
  function tp(name, med, min, rss, c) {
    printf "%-15s %9.3f %8.3f %12s %9.1f %14.1f %10.3f\n", name, med, min, commas(rows / med), bytes / 1e6 / med, rss / 1024, c
  }
  BEGIN {
    split(la, a, " "); split(lb, b, " ")
    printf "\nMariaDB %s over loopback TCP; %s; %s\n%s (%d CPUs)\n", srv, mbv, cdcv, cpu, ncpu
    printf "\n1. commit-to-line latency, microseconds (%s single-row autocommit INSERTs per tool, one at a time, ~%d ms apart)\n", commas(a[1]), pause
    printf "%-15s %8s %8s %8s %8s %9s %8s %13s\n", "tool", "commits", "min", "p50", "p99", "max", "mean", "peak RSS MiB"
    lat("mariadb-binlog", la)
    lat("cdc-stream", lb)
    printf "ratio (mariadb-binlog / cdc-stream): %.1fx p50, %.1fx p99\n", a[3] / b[3], a[4] / b[4]
    split(lrtt, r, " ")
    printf "from the INSERT sent instead, p50/p99: mariadb-binlog %.0f/%.0f, cdc-stream %.0f/%.0f (the INSERT round trip itself: %.0f/%.0f)\n",
      a[8], a[9], b[8], b[9], r[3], r[4]
    if (a[2] < 0 || b[2] < 0)
      print "(below 0: the server sent the row to the reader before the INSERT'"'"'s OK reached the writer)"
    printf "\n2. throughput over the replication protocol, whole binlog > /dev/null (%d alternating rounds each)\n", rounds
    printf "binlog: %d files, %.1f MB, %s row changes in %s transactions\n", files, bytes / 1e6, commas(rows), commas(txns)
    printf "%-15s %9s %8s %12s %9s %14s %10s\n", "tool", "median s", "min s", "rows/s", "MB/s", "peak RSS MiB", "median cpu s"
    tp("mariadb-binlog", a_med, a_min, a_rss, a_cpu)
    tp("cdc-stream", b_med, b_min, b_rss, b_cpu)
    tp("--raw (floor)", raw_med, raw_min, raw_rss, raw_cpu)
    printf "ratio (mariadb-binlog / cdc-stream): %.1fx median, %.1fx min\n", a_med / b_med, a_min / b_min
    printf "cdc-stream against the floor (mariadb-binlog --raw / cdc-stream): %.2fx median; the most any reader could\n", raw_med / b_med
    printf "reach against mariadb-binlog here (mariadb-binlog / --raw): %.1fx median\n", a_med / raw_med
    printf "\n3. cdc-stream lag under load: %d clients, single-row autocommit INSERTs for %.1f s\n", clients, lag_s
    printf "load: %s rows (%s rows/s), %.1f MB of binlog; cdc-stream printed %s of them (%s)\n", commas(inserted),
      commas(inserted / lag_s), load_bytes / 1e6, commas(cdc_rows), cdc_rows == inserted ? "all" : "MISSING ROWS"
    printf "bytes behind, %d samples: first 5 mean %s, last 5 mean %s, max %s -> %s\n", samples, commas(first), commas(last), commas(bmax),
      (last > 2 * first + 65536 ? "GROWING" : "not growing")
    printf "catch-up to the end sampled each second: median %s ms, max %s ms; drained %s ms after the writers stopped\n", c_med, c_max, drain
    printf "cdc-stream: %.2f CPU s over the run (%.0f%% of one core), peak RSS %.1f MiB\n", lag_cpu, 100 * lag_cpu / lag_s, lag_rss / 1024
  }'
if [[ $(lag cdc_rows) != "$(lag inserted)" ]]; then
  echo "stream_live: cdc-stream printed $(lag cdc_rows) rows of the $(lag inserted) the load inserted" >&2
  exit 1
fi
