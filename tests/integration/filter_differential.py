#!/usr/bin/env python3
"""The --where evaluator (libcore/filter) against the server (issue 31): random rows of every
type class --where compares, random expressions over them; for each expression the rows the
server's `SELECT id ... WHERE EXPR` returns must be the rows the evaluator (cdc-test-where, on
cdc-snapshot's NDJSON of the same table) finds TRUE, and the server must return the same rows
for the SQL the filter writes back (filter::to_sql, what cdc-snapshot will send). Then the rows
are deleted, and for a sample of the expressions `cdc-stream --file --where` over the binlog must
write a "c" line for each row the server matched and a "d" line for each too (cdc-stream judges
the binlog's row images, some values from their bytes rather than their text). No expected
value is written by hand: the server decides.

Usage: filter_differential.py --socket S --port P --password PW --tools DIR --test-tools DIR
       --work DIR [--seed N] [--rows 80] [--expressions 3000] [--streamed 200]
Prints the seed; exit 0 when every expression agrees, 1 with the first disagreements (the
expression, the rows only one side has, with their values).
"""
import argparse
import json
import os
import random
import subprocess
import sys

DB = "wherediff"

COLUMNS = [
    # name, type, value pool (SQL literals), literal pool for expressions (our subset's text)
    ("i", "INT", ["0", "1", "-1", "7", "100", "-2147483648", "2147483647"],
     ["0", "1", "-1", "7", "6.5", "7.0", "-0.5", "100", "2147483647", "99999999999999999999", "-3"]),
    ("u", "BIGINT UNSIGNED", ["0", "1", "9223372036854775808", "18446744073709551615", "42"],
     ["0", "1", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551615", "42.5", "41.99"]),
    ("ti", "TINYINT", ["-128", "0", "127", "5"], ["-128", "0", "127", "5", "1000", "-1000", "4.9"]),
    # Every integer width, signed and unsigned: cdc-stream compares them from the binlog's
    # bytes (a MEDIUMINT's three, sign-extended), cdc-snapshot's lines from their text.
    ("tu", "TINYINT UNSIGNED", ["0", "255", "128", "127"], ["0", "255", "128", "127", "-1", "256", "127.5"]),
    ("sm", "SMALLINT", ["-32768", "32767", "-1", "0", "300"], ["-32768", "32767", "-1", "0", "300", "-32769", "299.9"]),
    ("mi", "MEDIUMINT", ["-8388608", "8388607", "-1", "0", "65536"],
     ["-8388608", "8388607", "-1", "0", "65536", "8388608", "-8388609", "-0.5"]),
    ("mu", "MEDIUMINT UNSIGNED", ["0", "16777215", "8388608", "8388607"],
     ["0", "16777215", "8388608", "8388607", "-1", "16777216"]),
    ("iu", "INT UNSIGNED", ["0", "4294967295", "2147483648", "2147483647"],
     ["0", "4294967295", "2147483648", "2147483647", "-5", "4294967296", "2147483647.5"]),
    ("bi", "BIGINT", ["-9223372036854775808", "9223372036854775807", "-1", "0"],
     ["-9223372036854775808", "9223372036854775807", "-1", "0", "9223372036854775808", "-9223372036854775809"]),
    ("d", "DECIMAL(10,3)", ["0", "-0.001", "12.5", "12.500", "9999999.999", "-9999999.999", "3.141"],
     ["0", "-0.001", "12.5", "12.50", "12.5001", "9999999.999", "10000000", "3", "3.1415", "-0.0005"]),
    ("f", "FLOAT", ["0.1", "1.5", "-2.25", "1e-5", "3.4e38", "0", "100"],
     ["0.1", "1.5", "-2.25", "0.00001", "0", "100", "1.50", "-3"]),
    ("g", "DOUBLE", ["0.1", "1e300", "-1e-300", "2.5", "0", "-7"],
     ["0.1", "2.5", "0", "-7", "2.50000000000001", "0.0000001"]),
    ("s_ci", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", None, None),
    ("s_bin", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", None, None),
    ("s_uca", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", None, None),
    ("s_l1", "VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci", None, None),
    ("c", "CHAR(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", None, None),
    ("b", "VARBINARY(8)", ["X''", "X'00'", "X'0001'", "'abc'", "'ABC'", "X'616200'", "'a'"],
     ["''", "'\\0'", "'\\0\x01'", "'abc'", "'ABC'", "'ab\\0'", "'a'", "'ab'"]),
    ("bf", "BINARY(3)", ["X'000000'", "'ab'", "'abc'", "X'610000'"],
     ["'ab'", "'ab\\0'", "'abc'", "'a'", "'a\\0\\0'", "''"]),
    ("dt", "DATETIME(3)", ["'2024-01-01 00:00:00'", "'2024-02-29 10:00:00.250'", "'1000-01-01 00:00:00'",
                           "'9999-12-31 23:59:59.999'", "'2024-02-29 00:00:00'"],
     ["'2024-01-01'", "'2024-02-29 10:00:00.25'", "'2024-02-29'", "'2024-02-29 10:00:00.2501'",
      "'9999-12-31 23:59:59.999'", "'1000-01-01 00:00:00.000'", "'2024-02-29 10:00:00'"]),
    ("da", "DATE", ["'2024-01-01'", "'2024-02-29'", "'1999-12-31'", "'1000-01-01'"],
     ["'2024-01-01'", "'2024-02-29'", "'1999-12-31'", "'2024-02-29 00:00:00'", "'2024-02-28 23:59:59'"]),
    ("ts", "TIMESTAMP(6) NULL", ["'2024-01-01 00:00:00'", "'2038-01-19 03:14:07.999999'", "'1970-01-01 00:00:01'",
                                 "'2024-02-29 10:00:00.5'"],
     ["'2024-01-01'", "'2024-01-01 00:00:00'", "'2038-01-19 03:14:07.999999'", "'1970-01-01 00:00:01'",
      "'2024-02-29 10:00:00.5'", "'2024-02-29 10:00:00.499999'"]),
    ("tm", "TIME(2)", ["'-838:59:59'", "'00:00:00'", "'12:30:00.5'", "'838:59:59'", "'-00:00:01'", "'100:00:00'"],
     ["'-838:59:59'", "'00:00:00'", "'12:30:00.5'", "'12:30:00.50'", "'838:59:59'", "'-00:00:01'", "'99:59:59.99'"]),
    ("y", "YEAR", ["1901", "2155", "2024", "0"], ["1901", "2155", "2024", "0", "2000", "1999.5"]),
    ("ip4", "INET4", ["'0.0.0.0'", "'10.0.0.1'", "'255.255.255.255'", "'10.0.0.10'"],
     ["'0.0.0.0'", "'10.0.0.1'", "'255.255.255.255'", "'10.0.0.2'", "'9.255.255.255'"]),
    ("ip6", "INET6", ["'::'", "'::1'", "'2001:db8::1'", "'::ffff:10.0.0.1'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"],
     ["'::'", "'::1'", "'2001:db8::1'", "'2001:db8::2'", "'::ffff:10.0.0.1'", "'fe80::1'"]),
    ("uid", "UUID", ["'00000000-0000-0000-0000-000000000000'", "'123e4567-e89b-12d3-a456-426614174000'",
                     "'123e4567-e89b-42d3-a456-426614174000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
                     "'01890a5d-ac96-774b-bcce-b302099a8057'"],
     ["'00000000-0000-0000-0000-000000000000'", "'123e4567-e89b-12d3-a456-426614174000'",
      "'223e4567-e89b-12d3-a456-426614174000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
      "'01890a5d-ac96-774b-bcce-b302099a8057'", "'123e4567-e89b-42d3-a456-426614174001'"]),
    ("e", "ENUM('small','Medium','large') CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
     ["'small'", "'Medium'", "'large'"], ["'small'", "'medium'", "'MEDIUM'", "'large '", "'m'", "'zz'"]),
    ("st", "SET('a','b','c') CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", ["''", "'a'", "'a,b'", "'c'", "'a,b,c'"],
     ["''", "'a'", "'A,B'", "'c'", "'a,b,c'", "'b'"]),
]

# Words whose order and equality differ by collation: case, accents, trailing spaces, ß,
# ligatures, the empty string.
WORDS = ["abc", "ABC", "Abc ", "àbc", "a", "b", "", "Ärger", "arger", "straße", "strasse", "zz", "a b", "Zebra",
         "ábc", "abc  ", "ǅ", "dž", "ÿ", "y"]
LATIN1_WORDS = ["abc", "ABC", "Abc ", "àbc", "a", "b", "", "Ärger", "arger", "zz", "a b", "Zebra", "ábc", "ÿ", "y",
                "æ", "AE", "Ø", "o"]


def sql_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def pools(name):
    for column, _type, values, literals in COLUMNS:
        if column == name:
            if values is None:
                words = LATIN1_WORDS if name == "s_l1" else WORDS
                if name == "c":
                    words = [w for w in words if len(w) <= 6]
                return [sql_string(w) for w in words], [sql_string(w) for w in words] + ["'abc '", "'ARGER'"]
            return values, literals
    raise KeyError(name)


def run_sql(args, script):
    done = subprocess.run(["mariadb", "--no-defaults", "-S", args.socket, "-uroot", "-N", "-B", "--default-character-set=utf8mb4"],
                          input=script.encode(), capture_output=True)
    if done.returncode != 0:
        sys.exit(f"filter_differential: SQL failed: {done.stderr.decode(errors='replace')[:600]}")
    return done.stdout.decode().splitlines()


def make_table(args, rng):
    columns = ", ".join(f"`{name}` {sql_type}" for name, sql_type, _, _ in COLUMNS)
    rows = []
    for row_id in range(1, args.rows + 1):
        values = []
        for name, _type, _, _ in COLUMNS:
            pool, _ = pools(name)
            values.append("NULL" if rng.random() < 0.15 else rng.choice(pool))
        rows.append(f"({row_id}, {', '.join(values)})")
    run_sql(args, f"SET time_zone = '+00:00'; DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB}; "
                  f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, {columns}); "
                  f"INSERT INTO {DB}.t VALUES {', '.join(rows)};")


def expression(rng, depth=0):
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        op = rng.choice(["AND", "OR"])
        return f"({expression(rng, depth + 1)} {op} {expression(rng, depth + 1)})"
    if depth < 3 and roll < 0.38:
        return f"NOT {expression(rng, depth + 1)}"
    name = rng.choice([c[0] for c in COLUMNS])
    _, literals = pools(name)
    lit = lambda: "NULL" if rng.random() < 0.04 else rng.choice(literals)  # noqa: E731
    form = rng.random()
    if form < 0.45:
        return f"{name} {rng.choice(['=', '<>', '!=', '<', '<=', '>', '>='])} {lit()}"
    if form < 0.55:
        return f"{lit()} {rng.choice(['=', '<', '>=', '<>'])} {name}"
    if form < 0.7:
        low, high = sorted([lit(), lit()]) if rng.random() < 0.5 else (lit(), lit())
        return f"{name} {'NOT ' if rng.random() < 0.3 else ''}BETWEEN {low} AND {high}"
    if form < 0.88:
        members = ", ".join(lit() for _ in range(rng.randint(1, 4)))
        return f"{name} {'NOT ' if rng.random() < 0.3 else ''}IN ({members})"
    return f"{name} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"


def server_matches(args, expressions):
    script = ["SET time_zone = '+00:00';"]
    for text in expressions:
        script.append(f"SELECT IFNULL(GROUP_CONCAT(id ORDER BY id SEPARATOR ' '), '') FROM {DB}.t WHERE {text};")
    lines = run_sql(args, "\n".join(script))
    if len(lines) != len(expressions):
        sys.exit(f"filter_differential: {len(lines)} answers from the server for {len(expressions)} queries")
    return [set(line.split()) for line in lines]


def stream_matches(args, texts, connection, env):
    """For each expression, the ids of the "c" lines and of the "d" lines cdc-stream --file
    --where writes for the table's inserts and deletes, from the server's binlog files."""
    lines = run_sql(args, "DELETE FROM wherediff.t; FLUSH BINARY LOGS; SELECT @@log_bin_basename; SHOW BINARY LOGS;")
    directory = os.path.dirname(lines[0])
    files = [os.path.join(directory, line.split("\t")[0]) for line in lines[1:]]
    answers = []
    for text in texts:
        # The catalog: the binlog alone does not tell INET4 and INET6 from BINARY(4) and BINARY(16).
        done = subprocess.run([os.path.join(args.tools, "cdc-stream"), "--file", *files, "--catalog", *connection,
                               "--tables", f"{DB}.t", "--where", f"{DB}.t:{text}"], capture_output=True, env=env)
        if done.returncode != 0:
            sys.exit(f"filter_differential: cdc-stream --where '{text}' failed: {done.stderr.decode(errors='replace')[:600]}")
        inserted, deleted = set(), set()
        for line in done.stdout.decode().splitlines():
            record = json.loads(line)
            if record.get("op") == "c":
                inserted.add(str(record["after"]["id"]))
            elif record.get("op") == "d":
                deleted.add(str(record["before"]["id"]))
        answers.append((inserted, deleted))
    return answers


def main():
    parser = argparse.ArgumentParser()
    for name in ("--socket", "--password", "--tools", "--test-tools", "--work"):
        parser.add_argument(name, required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rows", type=int, default=80)
    parser.add_argument("--expressions", type=int, default=3000)
    parser.add_argument("--streamed", type=int, default=200)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"seed {seed} (--seed {seed} replays it)", flush=True)
    rng = random.Random(seed)
    make_table(args, rng)

    env = dict(os.environ, MYSQL_PWD=args.password)
    connection = ["-h", "127.0.0.1", "-P", str(args.port), "-u", "cdc"]
    plan = os.path.join(args.work, "where.plan.ndjson")
    rows = os.path.join(args.work, "where.rows.ndjson")
    with open(plan, "wb") as out:
        subprocess.run([os.path.join(args.tools, "cdc-plan"), *connection, "--tables", f"{DB}.t", "--chunk-size",
                        "1000000"], env=env, stdout=out, check=True)
    with open(rows, "wb") as out:
        subprocess.run([os.path.join(args.tools, "cdc-snapshot"), *connection, plan], env=env, stdout=out, check=True)

    texts = [expression(rng) for _ in range(args.expressions)]
    expressions_file = os.path.join(args.work, "where.expressions")
    with open(expressions_file, "w") as out:
        out.write("\n".join(texts) + "\n")
    done = subprocess.run([os.path.join(args.test_tools, "cdc-test-where"), "--rows", rows, "--expressions",
                           expressions_file], capture_output=True, check=True)
    answers = done.stdout.decode().splitlines()
    ours, sqls, refused = [], [], []
    for line in answers:
        if line.startswith("MATCH"):
            ours.append(set(line.split()[1:]))
        elif line.startswith("SQL "):
            sqls.append(line[4:])
        elif line.startswith("ERROR "):
            ours.append(None)
            sqls.append(None)
            refused.append(line[6:])
    if len(ours) != len(texts):
        sys.exit(f"filter_differential: {len(ours)} verdicts for {len(texts)} expressions")
    if refused:
        print(f"FAIL the evaluator refused {len(refused)} expression(s) of the subset, the first: {refused[0]}")
        return 1
    server = server_matches(args, texts)
    server_sql = server_matches(args, sqls)

    by_id = {}
    with open(rows) as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("op") == "r":
                by_id[str(record["after"]["id"])] = record["after"]
    failures = 0
    for text, sql, mine, theirs, theirs_sql in zip(texts, sqls, ours, server, server_sql):
        if theirs_sql != theirs:
            failures += 1
            if failures <= 10:
                print(f"FAIL the server reads to_sql otherwise than the text:\n  text {text}\n  sql  {sql}\n"
                      f"  rows only for the text {sorted(theirs - theirs_sql)}, only for the sql {sorted(theirs_sql - theirs)}")
        if mine != theirs:
            failures += 1
            if failures <= 10:
                print(f"FAIL {text}")
                for row_id in sorted(theirs - mine, key=int)[:3]:
                    print(f"  the server matches id {row_id}, the evaluator does not: {json.dumps(by_id.get(row_id))}")
                for row_id in sorted(mine - theirs, key=int)[:3]:
                    print(f"  the evaluator matches id {row_id}, the server does not: {json.dumps(by_id.get(row_id))}")
    matched = sum(len(s) for s in server)
    print(f"{len(texts)} expressions over {args.rows} rows ({matched} matches in all): "
          f"{len(texts) - failures} agree with the server, {failures} do not")

    streamed = min(args.streamed, len(texts))
    stream_failures = 0
    for text, theirs, (inserted, deleted) in zip(texts, server, stream_matches(args, texts[:streamed], connection, env)):
        for what, mine in (("inserts (c)", inserted), ("deletes (d)", deleted)):
            if mine != theirs:
                stream_failures += 1
                if stream_failures <= 10:
                    print(f"FAIL cdc-stream --where {text}: its {what}")
                    for row_id in sorted(theirs - mine, key=int)[:3]:
                        print(f"  the server matches id {row_id}, cdc-stream does not: {json.dumps(by_id.get(row_id))}")
                    for row_id in sorted(mine - theirs, key=int)[:3]:
                        print(f"  cdc-stream matches id {row_id}, the server does not: {json.dumps(by_id.get(row_id))}")
    print(f"cdc-stream --file --where on {streamed} of them: {streamed * 2 - stream_failures} of {streamed * 2} "
          f"inserts and deletes agree with the server")
    return 0 if failures == 0 and stream_failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
