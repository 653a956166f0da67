#!/usr/bin/env python3
"""Crash-point exploration of cdc-stream's checkpoints (issue 29), in the manner of
FoundationDB's simulation tests: the history is fixed (binlog transactions already written
between two positions), the faults are named steps of the run (CDC_FAULT_PLAN, see
libcore/util/fault_plan.h), so a schedule is a list of plans, one per run, and replays exactly.

Each schedule: run cdc-stream --from P0 --until P1 --state S --output O with the first plan,
then the same command with the next plan, and so on, then once more without faults; the
output must hold every transaction of the reference run once, in order, with the same lines,
one span around them, and every run must end with an exit status the man page documents for
its fault (0, or killed).

  exhaustive   every single fault at every step a clean run passes (kill, term at each event,
               write, commit, save; drop at each event; tear at each write), then each dropped
               connection combined with a stop in every step of the reconnect that follows
               (term and kill at the reconnect, in the pause, at the new connection, at the
               first events after it), and a crash that comes back to crash again;
  random N     N random schedules of 1-3 runs with 1-3 faults each, from --seed (printed; a
               failing schedule prints the seed and plans that replay it alone);
  --stdout     the same on standard output (StdoutExplorer): each run's output read as a
               consumer reads it, with the repeats cdc-stream(1) allows and no other;
  --sync       cdc-sync's state machine (SyncExplorer): every step of cdc-sync and of the tools
               it runs, in the initial flow and when tables are added;
  --snapshot   cdc-snapshot --output-dir (SnapshotExplorer): every chunk, batch of rows and
               write, with lost connections while a chunk is read again.

Exit 0 when every schedule held; prints 'N passed, N failed' and how many faults of each
kind were injected.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter

KILLED = -9


class Explorer:
    def __init__(self, args):
        self.args = args
        self.work = args.work
        self.env = dict(os.environ)
        self.env["MYSQL_PWD"] = args.password
        # Reconnect pauses at a tenth of their length, in as many steps (libcore/util/fault_plan.h).
        self.env["CDC_FAULT_TIME_SCALE"] = "10"
        self.env.pop("CDC_FAULT_PLAN", None)
        self.env.pop("CDC_FAULT_TRACE", None)
        self.injected = Counter()
        self.passed = 0
        self.failed = 0
        self.failures = []

    # ---- the server -------------------------------------------------------------------------

    def sql(self, text):
        out = subprocess.run(["mariadb", "--no-defaults", "-S", self.args.socket, "-uroot", "-N", "-B"],
                             input=text, check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def write_history(self, transactions, seed):
        """Transactions of every shape between two positions; returns (P0, P1)."""
        rng = random.Random(seed)
        db = self.args.database
        self.sql(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}; "
                 f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB; "
                 f"CREATE TABLE {db}.other (id INT PRIMARY KEY) ENGINE=InnoDB")
        start = self.sql("SELECT @@gtid_binlog_pos")
        statements = []
        next_id = 1
        live = []
        for n in range(transactions):
            shape = rng.choice(["insert", "insert", "multi", "update", "delete", "other", "mixed", "move",
                                "big", "rollback"]) if n > 2 else "multi"
            if shape in ("update", "delete", "move") and not live:
                shape = "insert"
            if transactions > 100 and n in (40, 90):
                # Past the writer's 256 KiB flush threshold: lines of the transaction go out
                # before its commit, so that a lost connection inside it writes a discard line.
                shape = "huge"
            if shape == "insert":
                statements.append(f"INSERT INTO {db}.t VALUES ({next_id}, 'i{n}')")
                live.append(next_id)
                next_id += 1
            elif shape == "multi":
                rows = ",".join(f"({next_id + k}, 'm{n}.{k}')" for k in range(5))
                statements.append(f"INSERT INTO {db}.t VALUES {rows}")
                live.extend(range(next_id, next_id + 5))
                next_id += 5
            elif shape == "big":
                rows = ",".join(f"({next_id + k}, '{'b' * 30}{k}')" for k in range(300))
                statements.append(f"INSERT INTO {db}.t VALUES {rows}")
                live.extend(range(next_id, next_id + 300))
                next_id += 300
            elif shape == "huge":
                rows = ",".join(f"({next_id + k}, '{'h' * 30}{k}')" for k in range(8000))
                statements.append(f"INSERT INTO {db}.t VALUES {rows}")
                live.extend(range(next_id, next_id + 8000))
                next_id += 8000
            elif shape == "update":
                key = rng.choice(live)
                statements.append(f"UPDATE {db}.t SET v = 'u{n}' WHERE id = {key}")
            elif shape == "delete":
                key = live.pop(rng.randrange(len(live)))
                statements.append(f"DELETE FROM {db}.t WHERE id = {key}")
            elif shape == "move":
                key = live.pop(rng.randrange(len(live)))
                statements.append(f"UPDATE {db}.t SET id = {next_id} WHERE id = {key}")
                live.append(next_id)
                next_id += 1
            elif shape == "other":
                statements.append(f"INSERT INTO {db}.other VALUES ({n})")
            elif shape == "mixed":
                statements.append(f"BEGIN; INSERT INTO {db}.other VALUES ({n}); "
                                  f"INSERT INTO {db}.t VALUES ({next_id}, 'x{n}'); COMMIT")
                live.append(next_id)
                next_id += 1
            elif shape == "rollback":
                statements.append(f"BEGIN; INSERT INTO {db}.t VALUES ({next_id}, 'r{n}'); ROLLBACK")
                next_id += 1
        self.sql(";\n".join(statements))
        return start, self.sql("SELECT @@gtid_binlog_pos")

    # ---- one run ----------------------------------------------------------------------------

    def command(self, paths, start, until):
        return [self.args.stream, "-h", "127.0.0.1", "-P", str(self.args.port), "-u", "cdc", "--from", start,
                "--until", until, "--state", paths["state"], "--output", paths["output"],
                "--tables", f"{self.args.database}.t", "--heartbeat", "1"]

    def run(self, paths, start, until, plan=None, trace=None):
        env = dict(self.env)
        if plan:
            env["CDC_FAULT_PLAN"] = plan
        if trace:
            env["CDC_FAULT_TRACE"] = trace
        with open(paths["err"], "a") as err, self.stdout_for(paths) as out:
            err.write(f"--- run plan={plan or '-'}\n")
            err.flush()
            try:
                done = subprocess.run(self.command(paths, start, until), env=env, stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=err, timeout=60)
                return done.returncode
            except subprocess.TimeoutExpired:
                return "timeout"

    def stdout_for(self, paths):
        """Where a run's standard output goes (StdoutExplorer: a file per run)."""
        return open(os.devnull, "wb")

    def reference_transactions(self, paths):
        """The transactions of a clean run (reference_run)."""
        return self.transactions(paths["output"])[1]

    def fresh(self, name):
        folder = os.path.join(self.work, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        return {"state": os.path.join(folder, "s.state"), "output": os.path.join(folder, "o.ndjson"),
                "err": os.path.join(folder, "err"), "dir": folder}

    # ---- what a run wrote -------------------------------------------------------------------

    @staticmethod
    def transactions(path):
        """The output as (spans, transactions): each transaction its GTID and its lines (table
        lines left out: a resumed run describes each table again before its first change)."""
        spans = []
        result = []
        pending = []
        with open(path, "rb") as lines:
            for raw in lines:
                if not raw.endswith(b"\n"):
                    raise ValueError(f"a torn last line: {raw[:80]!r}")
                line = json.loads(raw)
                op = line.get("op")
                if op == "table":
                    continue
                if op in ("span_start", "span_end"):
                    if pending:
                        raise ValueError(f"{op} inside a transaction")
                    spans.append(op)
                elif op == "discard":
                    raise ValueError("a discard line in --output (it is cut back instead)")
                elif op == "commit":
                    result.append((line["gtid"], line["position"], tuple(pending)))
                    pending = []
                else:
                    pending.append(raw)
        if pending:
            raise ValueError(f"{len(pending)} lines after the last commit")
        return spans, result

    # ---- a schedule -------------------------------------------------------------------------

    def schedule(self, name, plans, start, until, reference):
        """Runs each plan in turn, then a clean run; judges what they left (verdict)."""
        paths = self.fresh("schedule")
        self.before_runs(paths)
        statuses = []
        for plan in plans:
            for step in plan.split(","):
                self.injected[step.rsplit("=", 1)[1] + " at " + step.split(":")[0]] += 1
            statuses.append(self.run(paths, start, until, plan))
        problem = self.after_faults(paths)
        statuses.append(self.run(paths, start, until))
        problem = problem or self.verdict(paths, plans, statuses, reference)
        if problem:
            self.failed += 1
            kept = os.path.join(self.work, f"failed-{self.failed}")
            shutil.copytree(paths["dir"], kept)
            self.failures.append(f"{name}: {problem}; statuses {statuses}; replay: CDC_FAULT_PLAN per run {plans} "
                                 f"(kept in {kept})")
            print(f"FAIL {name}: {problem}\n  statuses {statuses}; plans, one per run, then a clean run: {plans}\n"
                  f"  kept: {kept}", flush=True)
        else:
            self.passed += 1
        return problem is None

    def before_runs(self, paths):
        """What a schedule starts from besides empty files (SyncExplorer: a synced --dir)."""

    def after_faults(self, paths):
        """A problem seen right after the faulted runs, before the clean one; None when none."""
        return None

    def verdict(self, paths, plans, statuses, reference):
        """The problem with what the runs left, or None: every transaction once, in order."""
        if statuses[-1] != 0:
            return f"the clean run after the faults exited {statuses[-1]}"
        for plan, status in zip(plans, statuses):
            if status not in (0, KILLED):
                return f"the run with {plan} exited {status}"
        try:
            spans, got = self.transactions(paths["output"])
        except (ValueError, json.JSONDecodeError) as error:
            return f"the output does not read back: {error}"
        if spans != ["span_start", "span_end"]:
            return f"span lines {spans}, expected one span_start and one span_end"
        if got != reference:
            return describe_difference(reference, got)
        return None

    def reference_run(self, name, start, until):
        """A clean run into fresh files, listing its steps: (paths, counts per step), or None
        (counted as a failure) when it fails."""
        paths = self.fresh("reference-" + name.replace(" ", "-"))
        self.before_runs(paths)
        trace = os.path.join(paths["dir"], "trace")
        status = self.run(paths, start, until, trace=trace)
        if status != 0:
            self.failed += 1
            self.failures.append(f"the clean {name} run exited {status}; see {paths['err']}")
            print(f"FAIL the clean {name} run exited {status}; see {paths['err']}", flush=True)
            return None
        return paths, trace_counts(trace)

class StdoutExplorer(Explorer):
    """cdc-stream --state on standard output (no --output), which it cannot take back: each
    run's output is a file of its own, read as a consumer reads the concatenation, by the
    rules of cdc-stream(1), Repeats after a restart: a discard line drops the lines since the
    last commit line; a transaction is applied at its commit line, unless its GTID is one
    already applied (a repeat). The applied transactions must be the reference's, in order,
    and the repeats only what the man page allows: none after a clean stop (exit 0), after a
    kill at most the transaction in flight (the last one applied, repeated first); a line cut
    short only at the end of a killed run."""

    def __init__(self, args):
        super().__init__(args)
        self.repeats = 0  # transactions in flight repeated after a kill, as allowed
        self.discards = 0  # discard lines read

    def command(self, paths, start, until):
        argv = super().command(paths, start, until)
        at = argv.index("--output")
        del argv[at:at + 2]
        return argv

    def fresh(self, name):
        paths = super().fresh(name)
        paths["runs"] = []
        return paths

    def stdout_for(self, paths):
        path = os.path.join(paths["dir"], f"stdout.{len(paths['runs']) + 1}")
        paths["runs"].append(path)
        return open(path, "wb")

    def reference_transactions(self, paths):
        return self.transactions(paths["runs"][0])[1]

    def verdict(self, paths, plans, statuses, reference):
        if statuses[-1] != 0:
            return f"the clean run after the faults exited {statuses[-1]}"
        for plan, status in zip(plans, statuses):
            if status not in (0, KILLED):
                return f"the run with {plan} exited {status}"
        order = {gtid: index for index, (gtid, _, _) in enumerate(reference)}
        applied = []
        # The status of the last run that wrote a commit line: a kill there leaves its
        # transaction in flight to the next run that writes one (a run between that stopped
        # before writing any repeats nothing, and so does not count).
        last_writer = None
        for run, path in enumerate(paths["runs"]):
            with open(path, "rb") as text:
                lines = text.read().split(b"\n")
            if lines.pop() and statuses[run] != KILLED:
                return f"run {run + 1} (exit {statuses[run]}) ends inside a line"
            before = len(applied)
            pending = []
            wrote = False
            for raw in lines:
                try:
                    line = json.loads(raw)
                except json.JSONDecodeError as error:
                    return f"run {run + 1}: a line that is not JSON ({error}): {raw[:80]!r}"
                op = line.get("op")
                if op in ("table", "span_start", "span_end"):
                    continue
                if op == "discard":
                    pending = []
                    self.discards += 1
                    continue
                if op != "commit":
                    pending.append(raw + b"\n")
                    continue
                index = order.get(line.get("gtid"))
                got = (line.get("gtid"), line.get("position"), tuple(pending))
                pending = []
                first_in_run = not wrote
                wrote = True
                if index is None:
                    return f"run {run + 1}: commit {got[0]} is not one of the reference's"
                if index == len(applied):
                    if got != reference[index]:
                        return describe_difference([reference[index]], [got])
                    applied.append(got)
                elif index > len(applied):
                    return f"run {run + 1}: {reference[len(applied)][0]} lost, it went on with {got[0]}"
                else:  # a repeat: only first in a run, only the one in flight, only after a kill
                    if last_writer is None or not first_in_run or len(applied) != before:
                        return f"run {run + 1}: {got[0]} repeated after other lines of the run"
                    if last_writer != KILLED:
                        return f"run {run + 1} repeats {got[0]} after a clean stop (exit {last_writer})"
                    if index != before - 1:
                        return f"run {run + 1} repeats {got[0]}, more than the transaction in flight"
                    if got != reference[index]:
                        return f"run {run + 1} repeats {got[0]} with other lines"
                    self.repeats += 1
            if wrote:
                last_writer = statuses[run]
        if applied != reference:
            return describe_difference(reference, applied)
        return None


class SyncExplorer(Explorer):
    """The same for cdc-sync's state machine: every step of cdc-sync itself (each state file
    written, each tool started, each write) and of the tools it runs (cdc-plan, the cdc-snapshot
    workers, cdc-merge, cdc-stream), on a table that does not change while the schedules run,
    so that every run takes the same steps. The merged snapshot must hold the table's rows as
    the clean run's does, and the stream its one span."""

    def __init__(self, args):
        super().__init__(args)
        self.env["CDC_TOOLS_DIR"] = os.path.dirname(args.sync)
        self.db = args.database + "_sync"
        self.tables = f"{self.db}.t"
        self.snapshot = "snapshot.ndjson"  # the merged snapshot checked, in --dir
        self.template = None  # a --dir and --output each schedule starts from (the add-tables flow)

    def write_tables(self):
        self.sql(f"DROP DATABASE IF EXISTS {self.db}; CREATE DATABASE {self.db}; USE {self.db}; "
                 f"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB; "
                 f"INSERT INTO t SELECT seq, CONCAT('row ', seq) FROM seq_1_to_300; "
                 f"CREATE TABLE t2 (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB; "
                 f"INSERT INTO t2 SELECT seq, CONCAT('new ', seq) FROM seq_1_to_120")
        return self.sql("SELECT @@gtid_binlog_pos")

    def command(self, paths, start, until):
        return [self.args.sync, "-h", "127.0.0.1", "-P", str(self.args.port), "-u", "cdc",
                "--tables", self.tables, "--dir", paths["state"], "--output", paths["output"],
                "-j", "2", "--chunk-size", "40", "--until", until, "--no-progress"]

    def snapshot_rows(self, folder):
        # Each row as read: its "ts_ms" is when its chunk was read, which differs from run to run.
        rows = []
        with open(os.path.join(folder, "s.state", self.snapshot), "rb") as lines:
            for line in lines:
                if not line.startswith((b'{"op":"table"', b'{"op":"high"')):
                    row = json.loads(line)
                    row.pop("ts_ms", None)
                    rows.append(row)
        return rows

    def after_faults(self, paths):
        orphans = outliving(paths["dir"])
        return f"a tool outlived the cdc-sync that ran it: {orphans[0][:200]}" if orphans else None

    def verdict(self, paths, plans, statuses, reference):
        if statuses[-1] != 0:
            return f"the clean run after the faults exited {statuses[-1]}"
        if "timeout" in statuses:
            return "a run with faults hung (60 s)"
        try:
            rows = self.snapshot_rows(paths["dir"])
            spans, got = self.transactions(paths["output"])
            first_rows = self.snapshot_rows_of(paths["dir"], "snapshot.ndjson") if self.template else None
        except (OSError, ValueError, json.JSONDecodeError) as error:
            return f"the outputs do not read back: {error}"
        if rows != reference:
            same = " (the same count, other lines)" if len(rows) == len(reference) else ""
            return f"the merged snapshot has {len(rows)} row lines, the clean run's {len(reference)}{same}"
        if spans != ["span_start", "span_end"] or got:
            return f"the stream has spans {spans} and {len(got)} transactions, expected one empty span"
        if self.template and first_rows != self.first_rows:
            return "the first snapshot changed"
        return None

    def fresh(self, name):
        paths = super().fresh(name)
        paths["state"] = os.path.join(paths["dir"], "s.state")  # the --dir
        return paths

    def before_runs(self, paths):
        if self.template:
            shutil.copytree(self.template["state"], paths["state"])
            shutil.copy(self.template["output"], paths["output"])

    def snapshot_rows_of(self, folder, name):
        kept = self.snapshot
        self.snapshot = name
        try:
            return self.snapshot_rows(folder)
        finally:
            self.snapshot = kept


def explore_sync(args, started):
    explorer = SyncExplorer(args)
    until = explorer.write_tables()
    for flow in ("initial", "add-tables"):
        if flow == "add-tables":
            # The directory and output of a clean initial sync of t, then the same command with
            # t2 added: the add-tables flow reads t2 into DIR/add.1 while t's stream goes on.
            base = explorer.fresh("sync-initial")
            if explorer.run(base, until, until) != 0:
                print(f"FAIL the clean initial cdc-sync exited non-zero; see {base['err']}")
                break
            explorer.template = base
            explorer.first_rows = explorer.snapshot_rows(base["dir"])
            explorer.tables = f"{explorer.db}.t,{explorer.db}.t2"
            explorer.snapshot = "add.1/snapshot.ndjson"
        if not explore_sync_flow(explorer, flow, until, started):
            break
    return explorer


def explore_sync_flow(explorer, flow, until, started):
    clean = explorer.reference_run(f"cdc-sync {flow}", until, until)
    if not clean:
        return False
    reference_paths, counts = clean
    reference = explorer.snapshot_rows(reference_paths["dir"])
    steps = {point: n for point, n in counts.items() if "@" in point}
    print(f"cdc-sync, {flow}: {len(reference)} rows; a clean run passes {dict(sorted(steps.items()))}", flush=True)
    schedules = []
    for point, n in sorted(steps.items()):
        program, _, name = point.partition("@")
        for k in range(1, n + 1):
            for action in ("kill", "tear") if name == "write" else ("kill", "term"):
                schedules.append([f"{point}:{k}={action}"])
    # A crash, and the rerun crashes too: each cdc-sync step followed by a crash in each program.
    for k in range(1, steps.get("cdc-sync@sync.saved", 0) + 1):
        for then in ("cdc-sync@sync.tool:2=kill", "cdc-snapshot@write:1=kill", "cdc-merge@write:3=kill",
                     "cdc-stream@state.saved:1=kill", "cdc-sync@sync.save:1=term"):
            schedules.append([f"cdc-sync@sync.saved:{k}=kill", then])
    before = explorer.failed
    for plans in schedules:
        explorer.schedule(f"cdc-sync {flow} {plans}", plans, until, until, reference)
    print(f"cdc-sync, {flow}: {len(schedules)} schedules, {explorer.failed - before} failed "
          f"({time.monotonic() - started:.0f} s so far)", flush=True)
    return True


class SnapshotExplorer(Explorer):
    """cdc-snapshot --output-dir over a plan of a table that does not change: a crash, a stop
    or a lost connection before each chunk, at each batch of rows and each write, then the same
    command again; every chunk file must hold the clean run's rows, and nothing else be left."""

    def __init__(self, args):
        super().__init__(args)
        self.db = args.database + "_snap"
        self.plan = os.path.join(self.work, "snapshot.plan.ndjson")

    def write_plan(self):
        self.sql(f"DROP DATABASE IF EXISTS {self.db}; CREATE DATABASE {self.db}; USE {self.db}; "
                 f"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB; "
                 f"INSERT INTO t SELECT seq, REPEAT(CHAR(65 + seq % 26), 150) FROM seq_1_to_6000")
        plan_tool = os.path.join(os.path.dirname(self.args.snapshot), "cdc-plan")
        with open(self.plan, "w") as out:
            subprocess.run([plan_tool, "-h", "127.0.0.1", "-P", str(self.args.port), "-u", "cdc", "--tables",
                            f"{self.db}.t", "--chunk-size", "500"], env=self.env, stdout=out, check=True)

    def command(self, paths, start, until):
        return [self.args.snapshot, "-h", "127.0.0.1", "-P", str(self.args.port), "-u", "cdc", "--output-dir",
                paths["state"], self.plan]

    def fresh(self, name):
        paths = super().fresh(name)
        paths["state"] = os.path.join(paths["dir"], "chunks")
        os.makedirs(paths["state"])
        return paths

    @staticmethod
    def chunks(folder):
        found = {}
        for name in sorted(os.listdir(folder)):
            rows = []
            with open(os.path.join(folder, name), "rb") as lines:
                for line in lines:
                    if line.startswith((b'{"op":"r"', b'{"op":"c"')):
                        row = json.loads(line)
                        row.pop("ts_ms", None)
                        rows.append(row)
            found[name] = rows
        return found

    def verdict(self, paths, plans, statuses, reference):
        if statuses[-1] != 0:
            return f"the clean run after the faults exited {statuses[-1]}"
        if any(status not in (0, KILLED, -15, 75, 143) for status in statuses):
            return f"a run with faults exited {statuses}"
        got = self.chunks(paths["state"])
        if sorted(got) != sorted(reference):
            return f"the chunk files are {sorted(set(got) ^ set(reference))[:4]} apart from the clean run's"
        for chunk, rows in reference.items():
            if got[chunk] != rows:
                return f"{chunk} has {len(got[chunk])} rows, the clean run's {len(rows)}"
        return None


def explore_snapshot(args, started):
    explorer = SnapshotExplorer(args)
    explorer.write_plan()
    clean = explorer.reference_run("cdc-snapshot", "", "")
    if not clean:
        return explorer
    reference_paths, counts = clean
    reference = explorer.chunks(reference_paths["state"])
    steps = {point: n for point, n in counts.items() if "@" in point}
    print(f"cdc-snapshot: {len(reference)} chunks; a clean run passes {dict(sorted(steps.items()))}", flush=True)
    schedules = []
    for point, n in sorted(steps.items()):
        name = point.partition("@")[2]
        actions = {"write": ("kill", "tear"), "snapshot.chunk": ("kill", "term", "drop"),
                   "snapshot.rows": ("kill", "term", "drop")}.get(name, ("kill", "term"))
        for k in range(1, n + 1):
            for action in actions:
                schedules.append([f"{point}:{k}={action}"])
    # A lost connection, and then a stop or a crash while the chunk is read again.
    for k in range(1, steps.get("cdc-snapshot@snapshot.rows", 0) + 1):
        for then in (f"snapshot.rows:{k + 1}=kill", f"snapshot.rows:{k + 1}=term", "snapshot.chunk:2=drop",
                     f"snapshot.rows:{k + 2}=drop", f"write:{k + 2}=tear"):
            schedules.append([f"cdc-snapshot@snapshot.rows:{k}=drop,cdc-snapshot@{then}"])
    before = explorer.failed
    for plans in schedules:
        explorer.schedule(f"cdc-snapshot {plans}", plans, "", "", reference)
    print(f"cdc-snapshot: {len(schedules)} schedules, {explorer.failed - before} failed "
          f"({time.monotonic() - started:.0f} s so far)", flush=True)
    return explorer


def outliving(folder):
    """The processes still running with FOLDER in their command line (killed, and listed): a
    tool that cdc-sync started must end with it, however cdc-sync ends."""
    found = []
    time.sleep(0.05)  # a tool that got its SIGTERM a moment ago is still saving its state
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as text:
                command = text.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if folder in command and int(pid) != os.getpid():
            found.append(command)
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass
    return found


def describe_difference(reference, got):
    want = [gtid for gtid, _, _ in reference]
    have = [gtid for gtid, _, _ in got]
    missing = [g for g in want if g not in have]
    doubled = [g for g, n in Counter(have).items() if n > 1]
    if missing or doubled:
        return (f"{len(missing)} transaction(s) lost (first {missing[:3]}), {len(doubled)} doubled "
                f"(first {doubled[:3]}); {len(have)} written, {len(want)} expected")
    for index, (a, b) in enumerate(zip(reference, got)):
        if a != b:
            return f"transaction {index} ({a[0]}) differs: expected {a[1]} with {len(a[2])} lines, got {b[1]} with {len(b[2])}"
    return f"{len(have)} transactions in another order"


def trace_counts(path):
    counts = Counter()
    with open(path) as lines:
        for line in lines:
            # "PROGRAM@POINT N": each process counts its own passes; a plan's N is per process.
            point, _, n = line.rpartition(" ")
            for key in (point, point.partition("@")[2]):  # also the point in any program
                counts[key] = max(counts[key], int(n))
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stream", help="cdc-stream to explore (exhaustive, then --random schedules)")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--password", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--database", default="crashpts")
    parser.add_argument("--transactions", type=int, default=12, help="the short history, explored exhaustively")
    parser.add_argument("--long-transactions", type=int, default=150, help="the history of the random schedules")
    parser.add_argument("--random", type=int, default=60, help="random schedules over the long history")
    parser.add_argument("--seed", type=int, default=None, help="the first random schedule's seed")
    parser.add_argument("--budget", type=float, default=0, help="stop the random schedules after this many seconds")
    parser.add_argument("--skip-exhaustive", action="store_true")
    parser.add_argument("--stdout", action="store_true", help="cdc-stream on standard output, not --output")
    parser.add_argument("--sync", help="cdc-sync to explore too (the tools it runs are beside it)")
    parser.add_argument("--snapshot", help="cdc-snapshot to explore too (cdc-plan is beside it)")
    args = parser.parse_args()
    explorer = StdoutExplorer(args) if args.stdout else Explorer(args)
    started = time.monotonic()

    if args.stream and not args.skip_exhaustive:
        start, until = explorer.write_history(args.transactions, 1)
        clean = explorer.reference_run("cdc-stream short-history", start, until)
        if not clean:
            return 1
        reference_paths, counts = clean
        reference = explorer.reference_transactions(reference_paths)
        print(f"short history: {len(reference)} captured transactions between {start} and {until}; a clean run "
              f"passes {dict(sorted(counts.items()))}", flush=True)
        singles = []
        for point, actions in (("stream.event", ("kill", "term", "drop")), ("write", ("kill", "tear")),
                               ("stream.commit", ("kill", "term")), ("state.save", ("kill", "term")),
                               ("state.saved", ("kill", "term"))):
            for n in range(1, counts[point] + 1):
                for action in actions:
                    singles.append([f"{point}:{n}={action}"])
        # A dropped connection, then a stop or a crash in each step of the reconnect.
        composed = []
        for n in range(1, counts["stream.event"] + 1):
            drop = f"stream.event:{n}=drop"
            for then in ("stream.reconnect:1=term", "stream.reconnect:1=kill", "stream.pause:1=term",
                         "stream.pause:4=kill", "stream.connect:1=drop", f"stream.event:{n + 1}=term",
                         f"stream.event:{n + 3}=kill", f"stream.event:{n + 2}=drop"):
                composed.append([f"{drop},{then}"])
            # A crash, and the run after it crashes too: in its first events, or after a drop.
            composed.append([f"stream.event:{n}=kill", "stream.event:2=kill"])
            composed.append([f"stream.event:{n}=kill", "stream.event:3=drop,stream.reconnect:1=term"])
        for kind, schedules in (("single faults", singles), ("composed faults", composed)):
            before = explorer.failed
            for plans in schedules:
                explorer.schedule(f"{kind} {plans}", plans, start, until, reference)
            print(f"{kind}: {len(schedules)} schedules, {explorer.failed - before} failed "
                  f"({time.monotonic() - started:.0f} s so far)", flush=True)

    if args.stream and args.random > 0:
        start, until = explorer.write_history(args.long_transactions, 2)
        clean = explorer.reference_run("cdc-stream long-history", start, until)
        if not clean:
            return 1
        reference_paths, counts = clean
        reference = explorer.reference_transactions(reference_paths)
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
        print(f"long history: {len(reference)} captured transactions; random schedules from seed {seed}", flush=True)
        random_started = time.monotonic()
        done = 0
        for index in range(args.random):
            if args.budget and time.monotonic() - random_started > args.budget:
                break
            rng = random.Random(seed + index)
            plans = []
            for _ in range(rng.randint(1, 3)):
                steps = []
                for _ in range(rng.randint(1, 3)):
                    point = rng.choice(["stream.event", "stream.event", "stream.event", "write", "stream.commit",
                                        "state.save", "state.saved", "stream.reconnect", "stream.pause",
                                        "stream.connect"])
                    limit = max(1, counts.get(point, 0), 3 if point.startswith("stream.") else 1)
                    action = rng.choice({"stream.event": ["kill", "term", "drop", "drop"], "write": ["kill", "tear"],
                                         "stream.connect": ["drop", "kill"]}.get(point, ["kill", "term"]))
                    steps.append(f"{point}:{rng.randint(1, limit)}={action}")
                plans.append(",".join(steps))
            explorer.schedule(f"seed {seed + index}", plans, start, until, reference)
            done += 1
        print(f"random schedules: {done} run, from seed {seed} (replay one: --seed N --random 1)", flush=True)

    for tool, explore in ((args.sync, explore_sync), (args.snapshot, explore_snapshot)):
        if tool:
            other = explore(args, started)
            explorer.passed += other.passed
            explorer.failed += other.failed
            explorer.failures += other.failures
            explorer.injected.update(other.injected)

    if args.stdout:
        print(f"on standard output: {explorer.discards} discard lines read, {explorer.repeats} transactions in "
              f"flight repeated after a kill (allowed)")
    print("faults injected: " + ", ".join(f"{kind} {n}" for kind, n in sorted(explorer.injected.items())))
    for failure in explorer.failures[:20]:
        print(f"failed: {failure[:400]}")
    print(f"{explorer.passed} passed, {explorer.failed} failed")
    return 0 if explorer.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
