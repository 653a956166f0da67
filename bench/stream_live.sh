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
source "$CDC_ROOT/scripts/lib/deps.sh"
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

rows=1000000
commits=3000
rounds=3
lag_seconds=20
clients=4
pause_ms=5
txn_rows=10000
usage() { sed -n '/^# Usage:/,/^# Runs as root/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
while (($# > 0)); do
  case $1 in
    --rows | --commits | --rounds | --lag-seconds | --clients | --pause-ms)
      [[ $# -ge 2 ]] || { echo "stream_live: $1 needs a number" >&2; exit 2; }
      name=${1#--}
      printf -v "${name//-/_}" '%s' "$2"
      shift 2 ;;
    --rows=* | --commits=* | --rounds=* | --lag-seconds=* | --clients=* | --pause-ms=*)
      name=${1%%=*}
      name=${name#--}
      printf -v "${name//-/_}" '%s' "${1#*=}"
      shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "stream_live: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for value in "$rows" "$commits" "$rounds" "$lag_seconds" "$clients" "$pause_ms"; do
  [[ $value =~ ^[1-9][0-9]*$ ]] || { echo "stream_live: '$value' is not a positive integer" >&2; exit 2; }
done
((rows >= 10)) || { echo "stream_live: --rows must be at least 10" >&2; exit 2; }
((lag_seconds >= 2)) || { echo "stream_live: --lag-seconds must be at least 2" >&2; exit 2; }

log() { echo "# $*" >&2; }

# --- 1. packages and tools --------------------------------------------------------------------
CDC_PACKAGES+=(time python3)
cdc_install_packages
tools_dir=${CDC_TOOLS_DIR:-$CDC_ROOT/build/tools}
cdc_stream="$tools_dir/cdc-stream"
[[ -x $cdc_stream ]] || {
  echo "stream_live: no $cdc_stream; build first (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release &&" \
    "cmake --build build -j) or set CDC_TOOLS_DIR" >&2
  exit 1
}
"$cdc_stream" --help | grep -q -- '--from' ||
  { echo "stream_live: $cdc_stream has no live mode (no --from in its --help); rebuild it" >&2; exit 1; }
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$tools_dir/../CMakeCache.txt" 2>/dev/null || true)
[[ -z $build_type || $build_type == Release ]] ||
  log "note: $cdc_stream is a ${build_type} build; figures for the README come from a Release build"
mariadb_binlog=$(command -v mariadb-binlog || command -v mysqlbinlog) ||
  { echo "stream_live: mariadb-binlog not found (package mariadb-client)" >&2; exit 1; }
gnu_time=/usr/bin/time

# --- 2. throwaway server ----------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-live.XXXXXX")
cleanup() {
  throwaway_stop "$work/server" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log "starting a throwaway MariaDB in $work/server"
throwaway_start "$work/server" --innodb-buffer-pool-size=1G --innodb-log-file-size=1G \
  --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 --innodb-doublewrite=0 --max-binlog-size=1G
port=$THROWAWAY_PORT
sql() { mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot -N -B "$@"; }
# The tools connect as cdc (replication grants only) over TCP; the harness writes as bench.
conn=(--host=127.0.0.1 --port="$port" --user=cdc --password="$THROWAWAY_CDC_PASSWORD")
cdc_conn=(-h 127.0.0.1 -P "$port" -u cdc --password="$THROWAWAY_CDC_PASSWORD")
bench_password=bench-writer-secret

# The timing side, in Python (python3's standard library only: no MySQL driver needed).
write_harness() {
  cat >"$work/live.py" <<'PY'
"""The timing side of bench/stream_live.sh: a minimal MySQL-protocol client (so that the moment
a COMMIT returns is known to the microsecond, without a driver), readers that timestamp each
chunk of a tool's stdout as it arrives, and the latency and lag measurements. All times come
from one monotonic clock (time.perf_counter_ns) in this one process."""
import hashlib
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

now_ns = time.perf_counter_ns


class MySQLError(Exception):
    pass


class Client:
    """Just enough of the client/server protocol: mysql_native_password login, COM_QUERY, OK,
    ERR and text result sets (with EOF packets, as CLIENT_DEPRECATE_EOF is not asked for)."""

    def __init__(self, host, port, user, password, unix_socket=None):
        if unix_socket:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(unix_socket)
        else:
            self.sock = socket.create_connection((host, port))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb", buffering=65536)
        self.seq = 0
        greeting = self._read_packet()
        if greeting[0] == 0xFF:
            raise MySQLError(greeting[3:].decode(errors="replace"))
        pos = greeting.index(b"\0", 1) + 1 + 4  # protocol, server version, connection id
        salt = greeting[pos:pos + 8]
        pos += 8 + 1 + 2 + 1 + 2 + 2  # salt 1, filler, capabilities, charset, status, capabilities
        salt_len = greeting[pos]
        pos += 1 + 10
        salt += greeting[pos:pos + max(13, salt_len - 8) - 1]
        caps = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000  # long password, 4.1, transactions, secure, plugin auth
        auth = self._scramble(password, salt)
        self._write_packet(struct.pack("<IIB", caps, 1 << 24, 33) + b"\0" * 23 + user.encode() + b"\0" +
                           bytes([len(auth)]) + auth + b"mysql_native_password\0")
        reply = self._read_packet()
        if reply[0] == 0xFE:  # auth switch request: plugin name, then new salt
            end = reply.index(b"\0", 1)
            if reply[1:end] != b"mysql_native_password":
                raise MySQLError("server asks for auth plugin %r" % reply[1:end])
            self._write_packet(self._scramble(password, reply[end + 1:end + 21]))
            reply = self._read_packet()
        if reply[0] != 0x00:
            raise MySQLError("login failed: " + reply[3:].decode(errors="replace"))

    @staticmethod
    def _scramble(password, salt):
        if not password:
            return b""
        h1 = hashlib.sha1(password.encode()).digest()
        h2 = hashlib.sha1(h1).digest()
        h3 = hashlib.sha1(salt + h2).digest()
        return bytes(a ^ b for a, b in zip(h1, h3))

    def _read_packet(self):
        payload = b""
        while True:
            header = self.rfile.read(4)
            if len(header) < 4:
                raise MySQLError("connection closed by the server")
            length = header[0] | header[1] << 8 | header[2] << 16
            self.seq = (header[3] + 1) & 0xFF
            payload += self.rfile.read(length)
            if length < 0xFFFFFF:
                return payload

    def _write_packet(self, payload):
        self.sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([self.seq]) + payload)
        self.seq = (self.seq + 1) & 0xFF

    @staticmethod
    def _lenenc(buf, pos):
        first = buf[pos]
        if first < 0xFB:
            return first, pos + 1
        if first == 0xFB:
            return None, pos + 1
        size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
        return int.from_bytes(buf[pos + 1:pos + 1 + size], "little"), pos + 1 + size

    def query(self, sql):
        """Runs one statement; returns the rows of a result set (lists of str/None) or []."""
        self.seq = 0
        self._write_packet(b"\x03" + sql.encode())
        first = self._read_packet()
        if first[0] == 0x00:
            return []
        if first[0] == 0xFF:
            raise MySQLError("%s: %s" % (sql[:60], first[9:].decode(errors="replace")))
        columns, _ = self._lenenc(first, 0)
        for _ in range(columns):
            self._read_packet()
        eof = self._read_packet()
        assert eof[0] == 0xFE
        rows = []
        while True:
            packet = self._read_packet()
            if packet[0] == 0xFE and len(packet) < 9:
                return rows
            if packet[0] == 0xFF:
                raise MySQLError(packet[9:].decode(errors="replace"))
            row, pos = [], 0
            for _ in range(columns):
                length, pos = self._lenenc(packet, pos)
                if length is None:
                    row.append(None)
                else:
                    row.append(packet[pos:pos + length].decode())
                    pos += length
            rows.append(row)

    def close(self):
        try:
            self.seq = 0
            self._write_packet(b"\x01")  # COM_QUIT
        except OSError:
            pass
        self.sock.close()


def proc_stats(pid):
    """(peak RSS KiB, user+sys CPU seconds) of a running process, from /proc."""
    rss = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    rss = int(line.split()[1])
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        cpu = 0.0
    return rss, cpu


class Reader:
    """Runs a reader command with its stdout on a pipe; a thread reads the pipe in chunks,
    stamps each chunk with the clock the moment os.read returns, and hands each chunk (with its
    stamp) to on_chunk. Complete lines only: a partial line waits for the rest."""

    def __init__(self, argv, stderr_path, on_chunk):
        self.stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr)
        self.on_chunk = on_chunk
        self.eof = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        fd = self.proc.stdout.fileno()
        rest = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            stamp = now_ns()
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                rest += chunk
                continue
            self.on_chunk(rest + chunk[:cut + 1], stamp)
            rest = chunk[cut + 1:]
        self.eof = True

    def stop(self):
        stats = proc_stats(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.thread.join(5)
        self.stderr.close()
        return stats


def percentile(sorted_values, p):
    """Nearest-rank percentile."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


# --- latency -------------------------------------------------------------------------------------

CDC_ROW = re.compile(rb'^\{"op":"c",.*"table":"lat",.*"after":\{"n":(\d+)', re.M)
MB_ROW = re.compile(rb"^###   @1=(\d+)$", re.M)


def latency(args):
    """Commit-to-line latency: one single-row autocommit INSERT at a time, INSERT returns ->
    t_commit[n]; the reader prints the row -> t_seen[n]. The tools take turns in blocks (A B B A
    A B ...) with only one reader running at a time, each block started fresh and warmed up."""
    db = Client(args["host"], args["port"], args["user"], args["password"])
    tools = args["tools"]  # name -> argv template ({file} {pos} {port} filled in)
    commits, blocks, warmup = args["commits"], args["blocks"], args["warmup"]
    per_block = -(-commits // blocks)
    pause = args["pause_ms"] / 1000.0
    lat = {name: [] for name in tools}  # commit returned -> row read from the reader's stdout
    sent = {name: [] for name in tools}  # INSERT sent -> row read
    rtt = []  # INSERT sent -> OK read
    rss = {name: 0 for name in tools}
    cpu = {name: 0.0 for name in tools}
    n = int(db.query("SELECT COALESCE(MAX(n), 0) FROM bench.lat")[0][0])
    names = list(tools)
    for block in range(blocks):
        order = names if block % 2 == 0 else names[::-1]
        for name in order:
            todo = min(per_block, commits - len(lat[name]))
            if todo <= 0:
                continue
            seen = {}
            cond = threading.Condition()
            pattern = CDC_ROW if tools[name]["format"] == "ndjson" else MB_ROW

            def on_chunk(data, stamp, seen=seen, cond=cond, pattern=pattern):
                found = pattern.findall(data)
                if found:
                    with cond:
                        for m in found:
                            seen.setdefault(int(m), stamp)
                        cond.notify_all()

            file, pos = db.query("SHOW MASTER STATUS")[0][:2]
            argv = [a.format(file=file, pos=pos) for a in tools[name]["argv"]]
            reader = Reader(argv, args["stderr"] % name, on_chunk)

            def wait_for(k, timeout):
                deadline = time.monotonic() + timeout
                with cond:
                    while k not in seen:
                        left = deadline - time.monotonic()
                        if left <= 0 or reader.eof:
                            return None
                        cond.wait(min(left, 0.1))
                    return seen[k]

            # Synchronise: a reader that starts at "now" sees only rows committed after it has
            # connected, so insert sentinels until one shows up.
            deadline = time.monotonic() + 60
            while True:
                n += 1
                db.query("INSERT INTO bench.lat (n) VALUES (%d)" % n)
                if wait_for(n, 0.5) is not None:
                    break
                if reader.eof or time.monotonic() > deadline:
                    reader.stop()
                    raise SystemExit("stream_live: %s printed no row within 60 s (or ended); see %s"
                                     % (name, args["stderr"] % name))
            for i in range(warmup + todo):
                n += 1
                t_send = now_ns()
                db.query("INSERT INTO bench.lat (n) VALUES (%d)" % n)
                t_commit = now_ns()
                t_seen = wait_for(n, 30)
                if t_seen is None:
                    reader.stop()
                    raise SystemExit("stream_live: %s did not print row %d within 30 s; see %s"
                                     % (name, n, args["stderr"] % name))
                if i >= warmup:
                    lat[name].append((t_seen - t_commit) / 1000.0)  # microseconds
                    sent[name].append((t_seen - t_send) / 1000.0)
                    rtt.append((t_commit - t_send) / 1000.0)
                time.sleep(pause * random.uniform(0.5, 1.5))
            r, c = reader.stop()
            rss[name] = max(rss[name], r)
            cpu[name] += c
            print("# latency block %d: %s, %d commits, median %.0f us" % (
                block + 1, name, todo, sorted(lat[name][-todo:])[todo // 2]), file=sys.stderr, flush=True)
    db.close()
    with open(args["result"], "w") as out:
        for name in names:
            values = sorted(lat[name])
            with open(args["samples"] % name, "w") as f:
                f.write("\n".join("%.1f" % v for v in lat[name]) + "\n")
            from_send = sorted(sent[name])
            out.write("%s %d %.1f %.1f %.1f %.1f %.1f %d %.1f %.1f\n" % (
                name, len(values), values[0], percentile(values, 50), percentile(values, 99),
                values[-1], sum(values) / len(values), rss[name], percentile(from_send, 50),
                percentile(from_send, 99)))
        rtt.sort()
        out.write("insert %d %.1f %.1f %.1f %.1f\n" % (
            len(rtt), rtt[0], percentile(rtt, 50), percentile(rtt, 99), rtt[-1]))


# --- lag under load ------------------------------------------------------------------------------

CDC_COMMIT_POS = re.compile(rb'\{"op":"commit",[^\n]*?"pos":\{"file":"([^"]+)","offset":(\d+)\}')


def binlog_key(name, offset):
    return int(name.rsplit(".", 1)[1]), offset


def lag(args):
    """cdc-stream reads from now while several clients insert at full speed; every second the
    server's binlog end and the position of the last line cdc-stream printed are sampled."""
    db = Client(args["host"], args["port"], args["user"], args["password"])
    state = {"pos": None, "lines": 0, "rows": 0, "bytes": 0}
    pending = []  # [sample index, binlog key] not reached yet
    reached = {}  # sample index -> time cdc-stream printed a line at or past that position
    lock = threading.Lock()

    def on_chunk(data, stamp):
        m = CDC_COMMIT_POS.match(data, data.rfind(b'{"op":"commit"'))
        with lock:
            state["lines"] += data.count(b"\n")
            state["rows"] += data.count(b'{"op":"c"')
            state["bytes"] += len(data)
            if m:
                state["pos"] = binlog_key(m.group(1).decode(), int(m.group(2)))
                while pending and pending[0][1] <= state["pos"]:
                    reached[pending.pop(0)[0]] = stamp

    reader = Reader(args["argv"], args["stderr"], on_chunk)
    deadline = time.monotonic() + 60
    while state["pos"] is None:
        db.query("INSERT INTO bench.load_t (cid, i) VALUES (0, 0)")
        time.sleep(0.2)
        if reader.eof or time.monotonic() > deadline:
            reader.stop()
            raise SystemExit("stream_live: cdc-stream printed nothing within 60 s; see " + args["stderr"])
    with lock:
        base_rows, base_lines = state["rows"], state["lines"]
    _, cpu0 = proc_stats(reader.proc.pid)

    def server_end():
        file, pos = db.query("SHOW MASTER STATUS")[0][:2]
        return binlog_key(file, int(pos))

    def bytes_between(a, b):
        """Binlog bytes from position a to position b (b later)."""
        if a[0] == b[0]:
            return b[1] - a[1]
        sizes = {binlog_key(r[0], 0)[0]: int(r[1]) for r in db.query("SHOW BINARY LOGS")}
        total = sizes.get(a[0], a[1]) - a[1] + b[1]
        for seq in range(a[0] + 1, b[0]):
            total += sizes.get(seq, 0)
        return total

    seconds, clients = args["seconds"], args["clients"]
    writers = [subprocess.Popen(args["writer"] + ["CALL bench.load_rows(%d, %d)" % (c + 1, seconds)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for c in range(clients)]
    start = server_end()
    t0 = now_ns()
    samples = []  # (t s, server key, cdc key, bytes behind, lines in the interval)
    last_lines = base_lines
    tick = time.monotonic()
    while any(w.poll() is None for w in writers):
        tick += 1.0
        time.sleep(max(0.0, tick - time.monotonic()))
        end = server_end()
        t = now_ns()
        with lock:
            cdc, lines = state["pos"], state["lines"]
            if cdc >= end:
                reached[len(samples)] = t
            else:
                pending.append((len(samples), end))
        samples.append(((t - t0) / 1e9, end, cdc, bytes_between(cdc, end) if cdc < end else 0, lines - last_lines, t))
        last_lines = lines
        if len(samples) > seconds + 120:
            break
    t_writers_done = now_ns()
    outputs = [w.communicate()[0].decode(errors="replace") for w in writers]
    failed = [o for w, o in zip(writers, outputs) if w.returncode != 0]
    if failed:
        reader.stop()
        raise SystemExit("stream_live: a load client failed: " + failed[0])
    final = server_end()
    with lock:
        if state["pos"] >= final:
            drained = now_ns()
        else:
            pending.append(("final", final))
            drained = None
    limit = time.monotonic() + 300
    while drained is None and time.monotonic() < limit and not reader.eof:
        time.sleep(0.01)
        with lock:
            drained = reached.get("final")
    rss, cpu1 = proc_stats(reader.proc.pid)
    time.sleep(0.2)
    with lock:
        got_rows = state["rows"] - base_rows
    reader.stop()
    inserted = int(db.query("SELECT COUNT(*) FROM bench.load_t WHERE cid > 0")[0][0])
    load_bytes = bytes_between(start, final)
    db.close()

    with open(args["series"], "w") as out:
        out.write("%6s %22s %22s %14s %12s %12s\n" % (
            "t s", "server binlog end", "cdc-stream last line", "bytes behind", "lines/s", "catch-up ms"))
        for i, (t, end, cdc, behind, lines, ts) in enumerate(samples):
            catch = reached.get(i)
            out.write("%6.1f %22s %22s %14d %12d %12s\n" % (
                t, "%06d:%d" % end, "%06d:%d" % cdc, behind, lines,
                "%.1f" % ((catch - ts) / 1e6) if catch is not None else "never"))
    behind = [s[3] for s in samples]
    catch = [(reached[i] - samples[i][5]) / 1e6 for i in range(len(samples)) if i in reached]
    k = min(5, len(samples) // 2) or 1
    first, last = sum(behind[:k]) / k, sum(behind[-k:]) / k
    with open(args["result"], "w") as out:
        out.write("samples=%d\nload_seconds=%.1f\n" % (len(samples), (t_writers_done - t0) / 1e9))
        out.write("inserted=%d\ncdc_rows=%d\n" % (inserted, got_rows))
        out.write("behind_first=%.0f\nbehind_last=%.0f\nbehind_max=%d\n" % (first, last, max(behind or [0])))
        out.write("catchup_median_ms=%.1f\ncatchup_max_ms=%.1f\n" % (
            sorted(catch)[len(catch) // 2] if catch else float("nan"), max(catch) if catch else float("nan")))
        out.write("drain_ms=%s\n" % ("%.1f" % ((drained - t_writers_done) / 1e6) if drained else "never"))
        out.write("rss_kib=%d\ncpu_s=%.2f\n" % (rss, cpu1 - cpu0))
        out.write("load_bytes=%d\n" % load_bytes)


if __name__ == "__main__":
    job = json.loads(sys.argv[2])
    {"latency": latency, "lag": lag}[sys.argv[1]](job)
PY
}

# --- 3. the throughput binlog -------------------------------------------------------------------
inserts=$((rows * 2 / 5))
updates=$((rows * 2 / 5))
deletes=$((rows - inserts - updates))
{
  # The schema stays out of the binlog (sql_log_bin=0) and RESET MASTER drops the accounts
  # throwaway_start made: the first binlog files hold just the row changes and their commits.
  echo "RESET MASTER;"
  echo "SET SESSION sql_log_bin = 0;"
  echo "CREATE DATABASE bench;"
  echo "CREATE TABLE bench.orders (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, amount DECIMAL(12,2) NOT NULL,"
  echo "  created DATETIME(6) NOT NULL, label VARCHAR(64) NOT NULL, pad CHAR(60) NOT NULL, note TEXT NULL,"
  echo "  status ENUM('new','paid','shipped') NOT NULL, KEY k_1 (k)) ENGINE=InnoDB;"
  echo "SET SESSION sql_log_bin = 1;"
  echo "USE bench;"
  echo "SET @ins = 0, @upd = 0, @del = 0, @txns = 0;"
  for ((first = 1; first <= inserts; first += txn_rows)); do
    n=$((inserts - first + 1 < txn_rows ? inserts - first + 1 : txn_rows))
    echo "START TRANSACTION;"
    echo "INSERT INTO orders SELECT seq + $((first - 1)), FLOOR(RAND() * 1000000), ROUND(RAND() * 100000, 2),"
    echo "  TIMESTAMP'2024-01-01 00:00:00' + INTERVAL (seq * 7919) SECOND + INTERVAL seq MICROSECOND,"
    echo "  CONCAT('label-', seq + $((first - 1))), REPEAT(CHAR(97 + seq % 26), 60),"
    echo "  IF(seq % 3 = 0, NULL, CONCAT(MD5(seq), ' ', MD5(RAND()))), 1 + seq % 2 FROM seq_1_to_$n;"
    echo "SET @ins = @ins + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  for ((first = 1; first <= updates; first += txn_rows)); do
    last=$((first + txn_rows - 1 < updates ? first + txn_rows - 1 : updates))
    echo "START TRANSACTION;"
    echo "UPDATE orders SET k = k + 1, amount = amount + 1.25, status = 'shipped', note = CONCAT('shipped ', id)"
    echo "  WHERE id BETWEEN $first AND $last;"
    echo "SET @upd = @upd + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  for ((first = 1; first <= deletes; first += txn_rows)); do
    last=$((first + txn_rows - 1 < deletes ? first + txn_rows - 1 : deletes))
    echo "START TRANSACTION;"
    echo "DELETE FROM orders WHERE id BETWEEN $first AND $last;"
    echo "SET @del = @del + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  echo "FLUSH BINARY LOGS;"
  echo "SELECT @ins, @upd, @del, @txns;"
} >"$work/load.sql"
log "generating $rows row changes ($inserts inserts, $updates updates, $deletes deletes; $txn_rows rows a transaction)"
started=$SECONDS
sql <"$work/load.sql" >"$work/load.out"
read -r sql_ins sql_upd sql_del sql_txns <"$work/load.out"
sql_rows=$((sql_ins + sql_upd + sql_del))
log "generated in $((SECONDS - started)) s: SQL changed $sql_ins + $sql_upd + $sql_del rows in $sql_txns transactions"
if ((sql_ins != inserts || sql_upd != updates || sql_del != deletes)); then
  echo "stream_live: SQL changed $sql_ins/$sql_upd/$sql_del rows, wanted $inserts/$updates/$deletes" >&2
  exit 1
fi
# Every file but the one FLUSH BINARY LOGS opened holds the load.
sql -e "SHOW BINARY LOGS" | awk '{ print $1, $2 }' | head -n -1 >"$work/binlogs.txt"
mapfile -t names < <(awk '{ print $1 }' "$work/binlogs.txt")
binlog_bytes=$(awk '{ s += $2 } END { print s }' "$work/binlogs.txt")

# --- 4. throughput over the replication protocol ------------------------------------------------
mb_read=("$mariadb_binlog" --no-defaults "${conn[@]}" --read-from-remote-server -v --base64-output=decode-rows "${names[@]}")
cdc_read=("$cdc_stream" "${cdc_conn[@]}" --from "${names[0]}:4" --until now)
log "throughput: sanity run of each on ${#names[@]} file(s), $binlog_bytes bytes"
"${cdc_read[@]}" 2>>"$work/throughput.err" |
  awk -F'"' '$2 != "op" { bad++; next } { n[$4]++ } END { print n["c"]+0, n["u"]+0, n["d"]+0, n["commit"]+0, NR, bad+0 }' \
    >"$work/cdc-counts.txt"
read -r cdc_c cdc_u cdc_d cdc_commits cdc_lines cdc_bad <"$work/cdc-counts.txt"
mb_rows=$("${mb_read[@]}" 2>>"$work/throughput.err" | grep -c -E '^### (INSERT INTO|UPDATE|DELETE FROM) ' || true)
log "cdc-stream: $cdc_c c, $cdc_u u, $cdc_d d, $cdc_commits commit lines of $cdc_lines; mariadb-binlog: $mb_rows row changes"
expected_lines=$((sql_rows + sql_txns))
if ((cdc_c != sql_ins || cdc_u != sql_upd || cdc_d != sql_del || cdc_commits != sql_txns ||
  cdc_lines != expected_lines || cdc_bad != 0 || mb_rows != sql_rows)); then
  echo "stream_live: SANITY CHECK FAILED: wanted $sql_ins c + $sql_upd u + $sql_del d + $sql_txns commit" \
    "= $expected_lines lines and $sql_rows rows from mariadb-binlog; got $cdc_c c + $cdc_u u + $cdc_d d +" \
    "$cdc_commits commit, $cdc_lines lines ($cdc_bad without an op), and $mb_rows from mariadb-binlog" >&2
  tail -5 "$work/throughput.err" >&2
  exit 1
fi
timed() {  # timed RESULTS_FILE command...: appends "wall_s rss_kib user_s sys_s"
  local results=$1
  shift
  local start end
  start=$EPOCHREALTIME
  "$gnu_time" -f '%M %U %S' -o "$work/time.out" "$@" >/dev/null 2>>"$work/throughput.err"
  end=$EPOCHREALTIME
  echo "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }') $(tail -1 "$work/time.out")" >>"$results"
}
: >"$work/A.txt"
: >"$work/B.txt"
for ((round = 1; round <= rounds; round++)); do
  timed "$work/A.txt" "${mb_read[@]}"
  timed "$work/B.txt" "${cdc_read[@]}"
  log "throughput round $round/$rounds: mariadb-binlog $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "cdc-stream $(tail -1 "$work/B.txt" | cut -d' ' -f1) s"
done

# --- 5. commit-to-line latency ---------------------------------------------------------------------
sql <<SQL
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
write_harness  # $work/live.py
log "latency: $commits single-row commits for each tool, in alternating blocks"
mb_live=("$mariadb_binlog" --no-defaults "${conn[@]}" --read-from-remote-server --stop-never -v
  --base64-output=decode-rows '--start-position={pos}' '{file}')
cdc_live=("$cdc_stream" "${cdc_conn[@]}" --from now)
python3 "$work/live.py" latency "$(jq -n -c --arg port "$port" --arg pw "$bench_password" \
  --argjson commits "$commits" --argjson pause "$pause_ms" --arg work "$work" \
  --argjson mb "$(printf '%s\n' "${mb_live[@]}" | jq -R . | jq -s -c .)" \
  --argjson cdc "$(printf '%s\n' "${cdc_live[@]}" | jq -R . | jq -s -c .)" \
  '{host: "127.0.0.1", port: ($port | tonumber), user: "bench", password: $pw, commits: $commits,
    blocks: 10, warmup: 10, pause_ms: $pause,
    tools: {"mariadb-binlog": {format: "text", argv: $mb}, "cdc-stream": {format: "ndjson", argv: $cdc}},
    stderr: ($work + "/latency-%s.err"), samples: ($work + "/latency-%s.txt"), result: ($work + "/latency.txt")}')"

# --- 6. lag under load --------------------------------------------------------------------------
log "lag: cdc-stream from now while $clients clients insert single rows for $lag_seconds s"
python3 "$work/live.py" lag "$(jq -n -c --arg port "$port" --arg pw "$bench_password" --arg work "$work" \
  --argjson seconds "$lag_seconds" --argjson clients "$clients" \
  --argjson cdc "$(printf '%s\n' "${cdc_live[@]}" | jq -R . | jq -s -c .)" \
  --arg socket "$THROWAWAY_SOCKET" \
  '{host: "127.0.0.1", port: ($port | tonumber), user: "bench", password: $pw, seconds: $seconds,
    clients: $clients, argv: $cdc,
    writer: ["mariadb", "--no-defaults", ("--socket=" + $socket), "-uroot", "-N", "-B", "-e"],
    stderr: ($work + "/lag.err"), series: ($work + "/lag-series.txt"), result: ($work + "/lag.txt")}')"
echo >&2
cat "$work/lag-series.txt" >&2

# --- 7. summary ----------------------------------------------------------------------------------------
# median (and min) of sorted numbers, one a line
median='{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1] }'
stats() {  # stats RESULTS_FILE: "median_wall min_wall max_rss_kib median_cpu"
  local wall cpu rss
  wall=$(cut -d" " -f1 "$1" | sort -g | awk "$median")
  cpu=$(awk "{ print \$3 + \$4 }" "$1" | sort -g | awk "$median")
  rss=$(cut -d" " -f2 "$1" | sort -g | tail -1)
  echo "${wall% *} ${wall#* } $rss ${cpu% *}"
}
read -r a_med a_min a_rss a_cpu < <(stats "$work/A.txt")
read -r b_med b_min b_rss b_cpu < <(stats "$work/B.txt")
# name commits min p50 p99 max mean rss_kib sent_p50 sent_p99; insert commits min p50 p99 max
la=$(grep '^mariadb-binlog ' "$work/latency.txt" | cut -d' ' -f2-)
lb=$(grep '^cdc-stream ' "$work/latency.txt" | cut -d' ' -f2-)
lrtt=$(grep '^insert ' "$work/latency.txt" | cut -d' ' -f2-)
lag() { sed -n "s/^$1=//p" "$work/lag.txt"; }  # lag NAME: one figure of the lag test
mb_version=$("$mariadb_binlog" --no-defaults --version | head -1)
cdc_version=$("$cdc_stream" --version | head -1)
server_version=$(sql -e "SELECT VERSION()")
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
awk -v bytes="$binlog_bytes" -v files="${#names[@]}" -v rows="$sql_rows" -v txns="$sql_txns" -v rounds="$rounds" \
  -v a_med="$a_med" -v a_min="$a_min" -v a_rss="$a_rss" -v a_cpu="$a_cpu" \
  -v b_med="$b_med" -v b_min="$b_min" -v b_rss="$b_rss" -v b_cpu="$b_cpu" \
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
    printf "ratio (mariadb-binlog / cdc-stream): %.1fx median, %.1fx min\n", a_med / b_med, a_min / b_min
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
