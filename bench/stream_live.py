#!/usr/bin/env python3
"""The timing side of bench/stream_live.sh: a minimal MySQL-protocol client (so that the moment
a COMMIT returns is known to the microsecond, without a driver), readers that timestamp each
chunk of a tool's stdout as it arrives, and the latency and lag measurements. All times come
from one monotonic clock (time.perf_counter_ns) in this one process. python3's standard
library only: no MySQL driver needed.

    python3 bench/stream_live.py latency|lag JOB

JOB is a JSON object: the server and account, the tools' argv, where to write the results
(bench/stream_live.sh builds it; see latency() and lag() for the fields)."""
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
