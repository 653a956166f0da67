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

Usage: apply_types.py --socket S --port P --password PW --tools DIR --work DIR --pg-conninfo C
       --pg-admin C --psql PATH [--seed N] [--rows 400]
Prints the seed; exit 0 when every value agrees, 1 with the first disagreements.
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


def make_source(server, rng, db, cols, rows):
    """The tables and their first rows; returns the SQL of the changes that follow the snapshot."""
    # k: t without its key, whose updates and deletes find their row by every column's value
    server.run(td.schema_sql(cols, db) + f"CREATE TABLE {db}.k LIKE {db}.t; ALTER TABLE {db}.k DROP PRIMARY KEY;\n")
    ids = list(range(1, rows + 1))
    keyless = list(range(1, rows // 4 + 1))
    server.run("".join(td.insert_sql("t", cols, rng, ids[i:i + 10], db) for i in range(0, len(ids), 10)) +
               "".join(td.insert_sql("k", cols, rng, keyless[i:i + 10], db) for i in range(0, len(keyless), 10)), SESSION)
    server.run(f"INSERT INTO {db}.sv (id, v, d) VALUES (1, 'one', 1.5), (2, 'two', -2.25), (3, NULL, NULL), (4, 'four', 4);\n"
               f"UPDATE {db}.sv SET v = 'uno' WHERE id = 1;\n"
               f"INSERT INTO {db}.hu VALUES (1, 'one'), (2, REPEAT('long ', 200)), (3, NULL);\n"
               f"SELECT NEXTVAL({db}.sq); SELECT NEXTVAL({db}.sq);\n", SESSION)
    added = list(range(rows + 1, rows + rows // 2 + 1))
    changes = "".join(td.insert_sql("t", cols, rng, added[i:i + 10], db) for i in range(0, len(added), 10))
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


def main():
    parser = argparse.ArgumentParser()
    for name in ("socket", "port", "password", "tools", "work", "pg-conninfo", "pg-admin", "psql"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rows", type=int, default=400)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    print(f"seed {seed} (CDC_TYPE_SEED={seed} replays this run)", flush=True)
    rng = random.Random(seed)
    started = time.monotonic()
    server = td.Server(args)
    pg = Postgres(args)
    charsets, pools = td.character_pools(server)
    cols = {SRC: td.columns(charsets, pools), SRC_PG: td.columns(charsets, pools)}
    for column in cols[SRC_PG]:
        if column.kind in ("date", "datetime", "timestamp") and column.generate:
            column.generate = without_zero_dates(column.generate)

    connection = ["-h", "127.0.0.1", "-P", args.port, "-u", "cdc"]
    inputs = {}
    for db in (SRC, SRC_PG):
        changes = make_source(server, rng, db, cols[db], args.rows)
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

    value_cols = cols[SRC]
    for table in ("t", "k"):
        types = dict(line.split("\t") for line in pg.run(
            f"SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '{SRC_PG}.{table}'::regclass"
            " AND attnum > 0 AND NOT attisdropped;").splitlines())
        for column in cols[SRC_PG]:
            if types.get(column.name) != mapped_type(column):
                compare.failures.append(f"PostgreSQL {table} column {column.name} ({column.definition}): created as "
                                        f"{types.get(column.name)}, cdc-apply(1) maps it to {mapped_type(column)}")
    for label, table, tcols, extra in [("t", "t", value_cols, ""), ("k", "k", value_cols, ""),
                                       ("sv", "sv", SV, "FOR SYSTEM_TIME ALL"),
                                       ("hu", "hu", HU, ""), ("sq", "sq", SQ, "")]:
        if applied["MariaDB"]:
            compare.tables(f"MariaDB {label}", tcols, maria_rows(server, SRC, table, tcols, extra),
                           maria_rows(server, COPY, table, tcols))
        pcols = cols[SRC_PG] if table in ("t", "k") else tcols
        if applied["PostgreSQL"]:
            compare.tables(f"PostgreSQL {label}", pcols, maria_rows(server, SRC_PG, table, pcols, extra),
                           pg_rows(pg, SRC_PG, table, pcols))

    print(f"{compare.values} values compared ({compare.non_null} not NULL): {len(value_cols)} columns of t, {len(charsets)} character sets, "
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


if __name__ == "__main__":
    sys.exit(main())
