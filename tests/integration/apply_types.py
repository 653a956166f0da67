#!/usr/bin/env python3
"""Every type of the type proof through cdc-apply, with the servers as the oracle (issue 32).

The tables of tests/integration/type_differential.py (every MariaDB column type, random and
edge values from its generators, text in every character set, a system-versioned table, a
sequence, a table with a long UNIQUE key) are made twice on the source: SRC with every value
the type proof writes (zero dates too), SRC_PG with those PostgreSQL can hold (cdc-apply(1),
PostgreSQL targets: no zero year, month or day). cdc-sync reads each: a snapshot
(initial_only), then inserts, updates (the key of some changed too) and deletes, then the
stream up to there, so that the input has r, c, u and d lines of every type. cdc-apply
--create-tables applies

  SRC into a MariaDB database of the same server, and SRC_PG into a PostgreSQL schema;
  SRC into PostgreSQL must stop with exit 65 naming a column of a zero date.

Then each target must equal its source row for row. Each server renders each value to a text,
nothing here writes an expected value: the source and the MariaDB target as the type proof
reads them (MariaDB's text protocol), the PostgreSQL target through the mapping of
cdc-apply(1): numeric's text, a real as the double it is, bit varying's digits as a number,
dates and timestamps (at UTC) by to_char, an interval as TIME's text, bytea as base64, inet by
host(), uuid's text. Floating-point texts are compared as the numbers they read as (MariaDB
writes 1e308, PostgreSQL 1e+308); everything else byte for byte.

The same tables and comparison serve tests/integration/fault_apply.sh, which carries them
through its faults: make-source makes them (the PostgreSQL-safe values) in a database that
exists, named with a prefix beside its tables, and writes the scripts of their random changes
(rows of every table inserted, updated, moved to other keys and deleted; NEXTVAL), which the
test runs during its faults; compare then compares a MariaDB target on a server of its own and
a PostgreSQL schema with them as above.

Usage: apply_types.py run --socket S --port P --password PW --tools DIR --work DIR --pg-conninfo C
         --pg-admin C --psql PATH [--seed N] [--rows 400]
       apply_types.py make-source --socket S --db DB --prefix P --seed N [--rows 60] [--parts 8]
         [--transactions 20] --out PATH        (writes PATH.1.sql to PATH.<parts>.sql)
       apply_types.py compare --socket S --db DB --prefix P --target-socket S --target-db DB
         --pg-admin C --psql PATH --pg-schema SCHEMA
run prints the seed; run and compare exit 0 when every value agrees, 1 with the first
disagreements.
"""
import argparse
import ipaddress
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import type_differential as td  # noqa: E402  the type proof's columns, values and server

SRC = "applytypes"
SRC_PG = "applytypes_pg"
COPY = "applytypes_copy"  # the MariaDB target's database
SESSION = "SET sql_mode = ''; SET time_zone = '+00:00';\n"

# The other tables of the proof, as columns the renderings below know.
SV = [td.Column("id", "INT", "integer"), td.Column("v", "VARCHAR(20)", "text"),
      td.Column("d", "DECIMAL(8,3)", "decimal", scale=3),
      td.Column("row_start", "TIMESTAMP(6)", "timestamp", fsp=6), td.Column("row_end", "TIMESTAMP(6)", "timestamp", fsp=6)]
HU = [td.Column("id", "INT", "integer"), td.Column("b", "TEXT", "text")]
SQ = [td.Column(name, "BIGINT", "integer") for name in
      ("next_not_cached_value", "minimum_value", "maximum_value", "start_value", "increment", "cache_size",
       "cycle_option", "cycle_count")]


def without_zero_dates(generate):
    """The generator's values without a zero year, month or day, which PostgreSQL cannot hold."""
    def regenerate(rng):
        while True:
            literal = generate(rng)
            date = re.search(r"(\d{4})-(\d\d)-(\d\d)", literal)
            if not date or not (date[1] == "0000" or date[2] == "00" or date[3] == "00"):
                return literal
    return regenerate


def pg_expression(column):
    """PostgreSQL's text of the column's value, in the form MariaDB writes it, through the type
    cdc-apply(1) maps the column to."""
    name = f'"{column.name}"'
    kind, fsp = column.kind, column.meta.get("fsp", 0)

    def fraction(micros_text):  # ".ffff" of fsp digits
        return f" || '.' || left({micros_text}, {fsp})" if fsp else ""

    if kind == "float":
        return f"{name}::float8::text"
    if kind in ("date",):
        return f"to_char({name}, 'YYYY-MM-DD')"
    if kind in ("datetime", "timestamp"):
        moment = f"({name} AT TIME ZONE 'UTC')" if kind == "timestamp" else name
        return f"to_char({moment}, 'YYYY-MM-DD HH24:MI:SS')" + fraction(f"to_char({moment}, 'US')")
    if kind == "time":
        micros = f"abs(round(extract(epoch FROM {name}) * 1000000)::bigint)"
        hours = f"({micros} / 3600000000)"  # two digits at least (lpad would cut 838 to 83)
        return (f"CASE WHEN {name} < interval '0' THEN '-' ELSE '' END || CASE WHEN {hours} < 10 THEN '0' ELSE '' END"
                f" || {hours}::text"
                f" || ':' || lpad(({micros} / 60000000 % 60)::text, 2, '0')"
                f" || ':' || lpad(({micros} / 1000000 % 60)::text, 2, '0')" + fraction(f"lpad(({micros} % 1000000)::text, 6, '0')"))
    if kind in ("binary", "geometry"):
        return f"translate(encode({name}, 'base64'), E'\\n', '')"
    if column.definition in ("INET4", "INET6"):
        return f"host({name})"
    return f"{name}::text"


def mapped_type(column):
    """The PostgreSQL type cdc-apply(1)'s table (PostgreSQL targets) maps the column to, as
    format_type() writes it."""
    definition = column.definition.upper()
    size = re.search(r"\(([0-9,]+)\)", definition)
    size = size[1] if size else None
    kind, unsigned = column.kind, "UNSIGNED" in definition
    fsp = f"({column.meta['fsp']})" if column.meta.get("fsp") else ""
    if kind == "integer":
        bits = column.meta.get("bits", 32)
        return {8: "smallint", 16: "integer" if unsigned else "smallint", 24: "integer",
                32: "bigint" if unsigned else "integer", 64: "numeric(20,0)" if unsigned else "bigint"}[bits]
    if definition.startswith(("VARCHAR", "CHAR")):
        return f"character varying({size})"
    return {"decimal": f"numeric({size})", "float": "real", "double": "double precision", "bit": f"bit varying({size})",
            "year": "smallint", "date": "date", "time": f"interval{fsp}", "datetime": f"timestamp{fsp} without time zone",
            "timestamp": f"timestamp{fsp} with time zone", "enum": "text", "set": "text", "binary": "bytea",
            "geometry": "bytea"}.get(kind) or {"INET4": "inet", "INET6": "inet", "UUID": "uuid"}.get(definition, "text")


def canonical(column, text, side):
    """The text as compared: floating-point values as the double they read as, BIT's digits
    (PostgreSQL's bit varying) as their number, YEAR as its number."""
    if text is None:
        return None
    if column.kind in ("float", "double"):
        return repr(float(text))
    if column.kind == "bit" and side == "pg":
        if len(text) != column.meta["bits"]:
            return f"{text} (not {column.meta['bits']} digits)"
        return str(int(text, 2))
    if column.kind == "year":
        return str(int(text))
    if column.definition in ("INET4", "INET6"):
        # MariaDB shortens one group of zeros to ::, PostgreSQL (RFC 5952) does not: the address
        return str(ipaddress.ip_address(text))
    return text


class Postgres:
    def __init__(self, args):
        self.args = args

    def run(self, sql):
        done = subprocess.run([self.args.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", "\t", "-P",
                               "null=NULL", "-d", self.args.pg_admin], input=sql.encode(), capture_output=True)
        if done.returncode != 0:
            sys.exit(f"FAIL PostgreSQL refused: {done.stderr.decode(errors='replace').strip()[-2000:]}")
        return done.stdout.decode("utf-8")


def hexed(expression):
    return f"encode(convert_to({expression}, 'UTF8'), 'hex')"


def fields_of(line):
    return [None if field == "NULL" else bytes.fromhex(field).decode("utf-8") for field in line.split("\t")]


def maria_rows(server, db, table, cols, extra=""):
    """The rows as sorted tuples of canonical texts, as MariaDB writes them (td.Column.select)."""
    out = server.run(f"SELECT {', '.join(c.select() for c in cols)} FROM {db}.{table} {extra};\n",
                     "SET time_zone = '+00:00';")
    return sorted((tuple(canonical(c, v, "maria") for c, v in zip(cols, fields_of(line)))
                   for line in out.splitlines()), key=repr)


def pg_rows(pg, schema, table, cols):
    out = pg.run(f"SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1;\n"
                 f"SELECT {', '.join(hexed(pg_expression(c)) for c in cols)} FROM \"{schema}\".\"{table}\";\n")
    return sorted((tuple(canonical(c, v, "pg") for c, v in zip(cols, fields_of(line)))
                   for line in out.splitlines()), key=repr)


class Compare:
    def __init__(self):
        self.failures = []
        self.values = 0
        self.non_null = 0

    def tables(self, label, cols, source, target):
        """source and target: sorted row tuples; rows matched by their first column (the key)
        where it is one, else as a multiset."""
        self.values += sum(len(row) for row in source)
        self.non_null += sum(value is not None for row in source for value in row)
        by_key = len({row[0] for row in source}) == len(source) and len({row[0] for row in target}) == len(target)
        if not by_key:
            if source != target:
                missing = [row for row in source if row not in target][:3]
                extra = [row for row in target if row not in source][:3]
                self.failures.append(f"{label}: the rows differ as a multiset ({len(source)} in the source, {len(target)} "
                                     f"in the target); only in the source: {missing}; only in the target: {extra}")
            return
        src, dst = {row[0]: row for row in source}, {row[0]: row for row in target}
        if src.keys() != dst.keys():
            self.failures.append(f"{label}: keys only in the source {sorted(src.keys() - dst.keys(), key=repr)[:5]}, "
                                 f"only in the target {sorted(dst.keys() - src.keys(), key=repr)[:5]}")
        for key in sorted(src.keys() & dst.keys(), key=repr):
            for column, want, got in zip(cols, src[key], dst[key]):
                if want != got:
                    self.failures.append(f"{label} id={key} column {column.name} ({column.definition}): the source has "
                                         f"{want!r}, the target {got!r}")


def tool(args, name, *arguments, expect=0, failures=None):
    """The tool's standard error; exit 1 when its exit status is another than expect, or, with
    failures, that added to them and None returned."""
    env = dict(os.environ, MYSQL_PWD=args.password, CDC_TOOLS_DIR=args.tools)
    done = subprocess.run([os.path.join(args.tools, name), *arguments], env=env, capture_output=True, timeout=300)
    if done.returncode != expect:
        if failures is not None:
            failures.append(f"{name} {' '.join(arguments)}: exit {done.returncode}, expected {expect}: "
                            f"{done.stderr.decode(errors='replace').strip()[-2000:]}")
            return None
        sys.exit(f"FAIL {name} {' '.join(arguments)}: exit {done.returncode}, expected {expect}: "
                 f"{done.stderr.decode(errors='replace').strip()[-2000:]}")
    return done.stderr.decode(errors="replace")


def names(db, prefix=None):
    """The proof's tables in db, as SQL names: t, its keyless copy k, sv, hu and the sequence
    sq, each named prefix + t and so on with a prefix."""
    return {table: f"{db}.{prefix or ''}{table}" for table in ("t", "k", "sv", "hu", "sq")}


def make_tables(server, rng, db, cols, rows, prefix=None):
    """The tables and their first rows (rows in t, a quarter as many in k): a new database db,
    or, with a prefix, the tables beside those db has."""
    p, n = prefix or "", names(db, prefix)
    # k: t without its key, whose updates and deletes find their row by every column's value
    server.run(td.schema_sql(cols, db, prefix) + f"CREATE TABLE {n['k']} LIKE {n['t']}; ALTER TABLE {n['k']} DROP PRIMARY KEY;\n")
    ids = list(range(1, rows + 1))
    keyless = list(range(1, rows // 4 + 1))
    server.run("".join(td.insert_sql(p + "t", cols, rng, ids[i:i + 10], db) for i in range(0, len(ids), 10)) +
               "".join(td.insert_sql(p + "k", cols, rng, keyless[i:i + 10], db) for i in range(0, len(keyless), 10)), SESSION)
    server.run(f"INSERT INTO {n['sv']} (id, v, d) VALUES (1, 'one', 1.5), (2, 'two', -2.25), (3, NULL, NULL), (4, 'four', 4);\n"
               f"UPDATE {n['sv']} SET v = 'uno' WHERE id = 1;\n"
               f"INSERT INTO {n['hu']} VALUES (1, 'one'), (2, REPEAT('long ', 200)), (3, NULL);\n"
               f"SELECT NEXTVAL({n['sq']}); SELECT NEXTVAL({n['sq']});\n", SESSION)


def first_changes(rng, db, cols, rows):
    """The SQL of the changes the run makes once the snapshot is read, to the tables make_tables
    made with as many rows: inserts, updates and deletes of every table, keys moved."""
    added = list(range(rows + 1, rows + rows // 2 + 1))
    changes = "".join(td.insert_sql("t", cols, rng, added[i:i + 10], db) for i in range(0, len(added), 10))
    ids = list(range(1, rows + 1))
    keyless = list(range(1, rows // 4 + 1))
    every = ids + added
    changes += "".join(td.update_sql("t", cols, rng, key, db) for key in every if rng.random() < 0.6)
    moved = [key for key in every if rng.random() < 0.05]
    changes += "".join(f"UPDATE {db}.t SET id = id + 100000 WHERE id = {key};\n" for key in moved)
    gone = [key for key in every if key not in moved and rng.random() < 0.2]
    changes += f"DELETE FROM {db}.t WHERE id IN ({', '.join(map(str, gone or [0]))});\n"
    added = list(range(rows // 4 + 1, rows // 3 + 1))
    changes += "".join(td.insert_sql("k", cols, rng, added[i:i + 10], db) for i in range(0, len(added), 10))
    changes += "".join(td.update_sql("k", cols, rng, key, db) for key in keyless + added if rng.random() < 0.6)
    gone = [key for key in keyless + added if rng.random() < 0.2]
    changes += f"DELETE FROM {db}.k WHERE id IN ({', '.join(map(str, gone or [0]))});\n"
    changes += (f"UPDATE {db}.sv SET v = 'uno!', d = d * 2 WHERE id = 1;\nUPDATE {db}.sv SET v = 'tres' WHERE id = 3;\n"
                f"DELETE FROM {db}.sv WHERE id = 2;\nINSERT INTO {db}.sv VALUES (5, 'five', 5.5);\n"
                f"UPDATE {db}.hu SET b = 'uno' WHERE id = 1;\nDELETE FROM {db}.hu WHERE id = 3;\n"
                f"INSERT INTO {db}.hu VALUES (4, REPEAT('other ', 100));\n" +
                "".join(f"SELECT NEXTVAL({db}.sq);\n" for _ in range(3)))
    return changes


def random_changes(rng, db, cols, rows, parts, transactions, prefix=None):
    """parts scripts (SESSION first) of transactions transactions each, of 1 to 4 statements over
    the tables make_tables made with as many rows, run one after the other: rows of t inserted,
    updated (every column a new random value or NULL), moved to another key and deleted, of k
    (found by every column) inserted, updated and deleted, one change of sv (whose history
    grows) or hu; NEXTVAL of the sequence between some. Which keys exist is followed, so that
    each statement finds its row."""
    p, n = prefix or "", names(db, prefix)
    live = {"t": list(range(1, rows + 1)), "k": list(range(1, rows // 4 + 1)), "sv": [1, 2, 3, 4], "hu": [1, 2, 3]}
    last = {"t": 100000, "k": 100000, "sv": 4, "hu": 3}

    def fresh(table):
        last[table] += 1
        live[table].append(last[table])
        return last[table]

    def taken(table):  # a key that exists, no longer in live
        return live[table].pop(rng.randrange(len(live[table])))

    def hu_text(key):  # unique: the key is in it
        return "NULL" if rng.random() < 0.1 else f"'row {key} {'ab' * rng.randint(0, 400)}'"

    def statement(versioned):
        r = rng.random()
        table = "t" if r < 0.6 else "k" if r < 0.83 else "hu" if versioned or r < 0.91 else "sv"
        r = rng.random()
        if table in ("t", "k"):
            if r < 0.3 or len(live[table]) < 3:
                return td.insert_sql(p + table, cols, rng, [fresh(table) for _ in range(rng.randint(1, 3))], db)
            if r < 0.75:
                return td.update_sql(p + table, cols, rng, rng.choice(live[table]), db)
            if r < 0.85 and table == "t":
                old = taken("t")
                return f"UPDATE {n['t']} SET id = {fresh('t')} WHERE id = {old};\n"
            return f"DELETE FROM {n[table]} WHERE id = {taken(table)};\n"
        if table == "hu":
            if r < 0.4 or len(live["hu"]) < 2:
                key = fresh("hu")
                return f"INSERT INTO {n['hu']} VALUES ({key}, {hu_text(key)});\n"
            if r < 0.8:
                key = rng.choice(live["hu"])
                return f"UPDATE {n['hu']} SET b = {hu_text(key)} WHERE id = {key};\n"
            return f"DELETE FROM {n['hu']} WHERE id = {taken('hu')};\n"
        # sv: one change a transaction (its history rows carry the transaction's time)
        v = "NULL" if rng.random() < 0.2 else f"'v{rng.randint(0, 10 ** 6)}'"
        d = "NULL" if rng.random() < 0.2 else f"{rng.randint(-99999999, 99999999) / 1000:.3f}"
        if r < 0.3 or len(live["sv"]) < 2:
            return f"INSERT INTO {n['sv']} VALUES ({fresh('sv')}, {v}, {d});\n"
        if r < 0.8:
            return f"UPDATE {n['sv']} SET v = {v}, d = {d} WHERE id = {rng.choice(live['sv'])};\n"
        return f"DELETE FROM {n['sv']} WHERE id = {taken('sv')};\n"

    scripts = []
    for _ in range(parts):
        script = [SESSION]
        for _ in range(transactions):
            body = []
            for _ in range(rng.randint(1, 4)):
                body.append(statement(any(f" {n['sv']} " in s for s in body)))
            script.append("BEGIN;\n" + "".join(body) + "COMMIT;\n")
            if rng.random() < 0.2:
                script.append(f"SELECT NEXTVAL({n['sq']});\n")
        scripts.append("".join(script))
    return scripts


def proof_tables(value_cols):
    """The proof's tables as compared: (name, columns, what the source's SELECT adds)."""
    return [("t", value_cols, ""), ("k", value_cols, ""), ("sv", SV, "FOR SYSTEM_TIME ALL"), ("hu", HU, ""),
            ("sq", SQ, "")]


def compare_mariadb(compare, source, db, target, target_db, cols, prefix=None):
    """Each table of db (named with prefix) against the one of target_db on the target server."""
    for table, tcols, extra in proof_tables(cols):
        name = (prefix or "") + table
        compare.tables(f"MariaDB {table}", tcols, maria_rows(source, db, name, tcols, extra),
                       maria_rows(target, target_db, name, tcols))


def compare_postgres(compare, source, db, pg, schema, cols, prefix=None):
    """Each table of db (named with prefix) against the one of the PostgreSQL schema, whose
    columns of t and k must have the types cdc-apply(1) maps them to."""
    for table in ("t", "k"):
        name = (prefix or "") + table
        types = dict(line.split("\t") for line in pg.run(
            f"SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '\"{schema}\".\"{name}\"'::regclass"
            " AND attnum > 0 AND NOT attisdropped;").splitlines())
        for column in cols:
            if types.get(column.name) != mapped_type(column):
                compare.failures.append(f"PostgreSQL {table} column {column.name} ({column.definition}): created as "
                                        f"{types.get(column.name)}, cdc-apply(1) maps it to {mapped_type(column)}")
    for table, tcols, extra in proof_tables(cols):
        name = (prefix or "") + table
        compare.tables(f"PostgreSQL {table}", tcols, maria_rows(source, db, name, tcols, extra),
                       pg_rows(pg, schema, name, tcols))


def report(compare, cols, charsets, started):
    """The count of values compared, then the failures; 0 when there are none, else 1."""
    print(f"{compare.values} values compared ({compare.non_null} not NULL): {len(cols)} columns of t, {len(charsets)} character sets, "
          f"in {time.monotonic() - started:.1f}s")
    if compare.failures:
        print(f"FAIL {len(compare.failures)} values differ; the first ones:")
        kinds = {}
        for failure in compare.failures:
            kind = re.sub(r" id=\S+", "", failure.split(": the source")[0])
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind, count in sorted(kinds.items()):
            print(f"  {count:5d} {kind}")
        for failure in compare.failures[:60]:
            print("  " + (failure if len(failure) < 900 else failure[:300] + " ... " + failure[-500:]))
        return 1
    return 0


def proof_columns(charsets, pools, pg_safe):
    """The columns of t; with pg_safe, their generators write no zero date."""
    cols = td.columns(charsets, pools)
    if pg_safe:
        for column in cols:
            if column.kind in ("date", "datetime", "timestamp") and column.generate:
                column.generate = without_zero_dates(column.generate)
    return cols


def run(args):
    """The proof of its own (apply_types.sh): above."""
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    print(f"seed {seed} (CDC_TYPE_SEED={seed} replays this run)", flush=True)
    rng = random.Random(seed)
    started = time.monotonic()
    server = td.Server(args)
    pg = Postgres(args)
    charsets, pools = td.character_pools(server)
    cols = {SRC: proof_columns(charsets, pools, False), SRC_PG: proof_columns(charsets, pools, True)}

    connection = ["-h", "127.0.0.1", "-P", args.port, "-u", "cdc"]
    inputs = {}
    for db in (SRC, SRC_PG):
        make_tables(server, rng, db, cols[db], args.rows)
        changes = first_changes(rng, db, cols[db], args.rows)
        directory = os.path.join(args.work, "sync-" + db)
        # the snapshot, then the changes, then the stream from the snapshot's position up to them
        tool(args, "cdc-sync", *connection, "--tables", f"{db}.*", "--dir", directory, "--mode", "initial_only",
             "--chunk-size", "17", "--output", os.path.join(args.work, db + ".snapshot-out"))
        server.run(changes, SESSION)
        until = server.run("SELECT @@gtid_binlog_pos;").strip()
        stream = os.path.join(args.work, db + ".stream.ndjson")
        tool(args, "cdc-sync", *connection, "--tables", f"{db}.*", "--dir", directory, "--chunk-size", "17",
             "--output", stream, "--until", until)
        inputs[db] = [os.path.join(directory, "snapshot.ndjson"), stream]
        ops = {}
        for line in open(stream, encoding="utf-8"):
            op = re.match(r'\{"op":"(\w+)"', line)
            ops[op[1]] = ops.get(op[1], 0) + 1
        snapshot_rows = sum(1 for line in open(inputs[db][0], encoding="utf-8") if line.startswith('{"op":"r"'))
        print(f"{db}: {snapshot_rows} snapshot rows, stream {', '.join(f'{n} {op}' for op, n in sorted(ops.items()))}",
              flush=True)
        if not all(ops.get(op) for op in "cud"):
            sys.exit(f"FAIL the stream of {db} lacks c, u or d lines: {ops}")

    compare = Compare()
    # MariaDB: the whole proof, into another database of the same server; PostgreSQL: what it
    # can hold. Target transactions of one source transaction, a few, or all.
    targets = {"MariaDB": ["-S", args.socket, "-u", "root", "--database", COPY, *inputs[SRC]],
               "PostgreSQL": ["--postgres", args.pg_conninfo, "--database", SRC_PG, *inputs[SRC_PG]]}
    applied = {}
    for name, arguments in targets.items():
        batch = str(rng.choice([1, 7, 5000]))
        print(f"cdc-apply into {name} --batch-rows {batch}", flush=True)
        applied[name] = tool(args, "cdc-apply", "--create-tables", "--batch-rows", batch, *arguments,
                             failures=compare.failures) is not None
        again = tool(args, "cdc-apply", *arguments, failures=compare.failures)
        if again is not None and "applied 0 transactions (0 rows)" not in again:
            compare.failures.append(f"cdc-apply into {name} run again applies something: {again[-300:]}")
    # A zero date into PostgreSQL stops the run, naming the column.
    err = tool(args, "cdc-apply", "--postgres", args.pg_conninfo, "--database", "zero_dates", "--create-tables",
               *inputs[SRC], expect=65)
    if not re.search(r'column "\w+" \((date|datetime|timestamp)(\(\d\))?\): "[0-9: .-]+Z?" has a zero year, month or day',
                     err):
        compare.failures.append(f"cdc-apply into PostgreSQL of zero dates: exit 65 but not naming a date column: {err[-500:]}")
    print(f"applied in {time.monotonic() - started:.1f}s since the start", flush=True)

    if applied["MariaDB"]:
        compare_mariadb(compare, server, SRC, server, COPY, cols[SRC])
    if applied["PostgreSQL"]:
        compare_postgres(compare, server, SRC_PG, pg, SRC_PG, cols[SRC_PG])
    return report(compare, cols[SRC], charsets, started)


def make_source(args):
    """make-source (fault_apply.sh): the tables with values both targets can hold, prefixed in a
    database that exists, and the scripts of the changes that follow, PREFIX.1.sql and on."""
    rng = random.Random(args.seed)
    server = td.Server(args)
    charsets, pools = td.character_pools(server)
    cols = proof_columns(charsets, pools, True)
    make_tables(server, rng, args.db, cols, args.rows, args.prefix)
    scripts = random_changes(rng, args.db, cols, args.rows, args.parts, args.transactions, args.prefix)
    for part, script in enumerate(scripts, 1):
        with open(f"{args.out}.{part}.sql", "w", encoding="utf-8") as out:
            out.write(script)
    print(f"{args.db}.{args.prefix}t: {len(cols)} columns, {len(charsets)} character sets, {args.rows} rows; "
          f"{args.parts * args.transactions} transactions to come", flush=True)
    return 0


def compare_targets(args):
    """compare (fault_apply.sh): the tables make-source made against a MariaDB target on a server
    of its own and a PostgreSQL one."""
    started = time.monotonic()
    server = td.Server(args)
    charsets, pools = td.character_pools(server)
    cols = proof_columns(charsets, pools, True)
    compare = Compare()
    compare_mariadb(compare, server, args.db, td.Server(argparse.Namespace(socket=args.target_socket)),
                    args.target_db, cols, args.prefix)
    compare_postgres(compare, server, args.db, Postgres(args), args.pg_schema, cols, args.prefix)
    return report(compare, cols, charsets, started)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    proof = commands.add_parser("run", help="the proof of its own: make, read, apply, compare")
    for name in ("socket", "port", "password", "tools", "work", "pg-conninfo", "pg-admin", "psql"):
        proof.add_argument("--" + name, required=True)
    proof.add_argument("--seed", type=int, default=None)
    proof.add_argument("--rows", type=int, default=400)
    source = commands.add_parser("make-source", help="the tables and the scripts of their changes")
    compare = commands.add_parser("compare", help="the targets against the tables make-source made")
    for sub in (source, compare):
        sub.add_argument("--socket", required=True)
        sub.add_argument("--db", required=True)
        sub.add_argument("--prefix", required=True)
    source.add_argument("--seed", type=int, required=True)
    source.add_argument("--rows", type=int, default=60)
    source.add_argument("--parts", type=int, default=8)
    source.add_argument("--transactions", type=int, default=20)
    source.add_argument("--out", required=True)
    for name in ("target-socket", "target-db", "pg-admin", "psql", "pg-schema"):
        compare.add_argument("--" + name, required=True)
    args = parser.parse_args()
    return {"run": run, "make-source": make_source, "compare": compare_targets}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
