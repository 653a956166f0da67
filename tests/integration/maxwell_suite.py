#!/usr/bin/env python3
"""Maxwell's own JSON test files (tests/fixtures/maxwell, from zendesk/maxwell's
src/test/resources/sql/json) against cdc-stream --format maxwell (issue 30).

Each file is SQL statements, each optionally followed by `-> {expected row}` lines. For each
file this runs the statements on the server in one session, decodes what they wrote to the
binary log with `cdc-stream --file BINLOG --start-position POS --format maxwell`, and matches
the rows against the expected objects by Maxwell's own rules (MaxwellTestJSON.java):

  * a file is read as parseJSONTestFile reads it: blank lines skipped; a line starting with
    whitespace (and not `->`) continues the one before it; `-> {...}` starts an expected
    object, parsed as Jackson does with ALLOW_UNQUOTED_FIELD_NAMES;
  * ts, xid, xoffset and commit are removed from each output row (runJSONTest);
  * an expected object matches a row when the two are equal as Jackson's maps are: the same
    members, no more and no fewer (so "old" is compared whenever either side has it, and a
    null member is not an absent one), numbers equal as Jackson's Integer/Long/BigInteger and
    Double are (an integer is never equal to a fraction);
  * the server is set up as Maxwell's MysqlIsolatedServer boots its own
    (--character-set-server=utf8, --default-time-zone=+00:00, a `test` database), and a file
    runs with the options MaxwellIntegrationTest gives it (test_minimal with
    binlog_row_image=MINIMAL, test_row_query_log_is_on with output_row_query).

Maxwell's harness only asks that each expected object be somewhere in the output; this one is
stricter: the rows must be the expected objects, in order, with no other row (every
statement of these files that changes rows is followed by its expected rows).

Where MariaDB differs from the MySQL the files were written for, ADJUSTMENTS below says what
the comparison does instead and why; each is a property of the server (or of the file's
history in Maxwell), never of our output.

Usage: maxwell_suite.py --socket S --tools DIR --fixtures DIR --work DIR [FILE...]
Exit 0 when every file matches, 1 otherwise (a diff per failing file).
"""
import argparse
import json
import os
import re
import subprocess
import sys

# The files, with the options MaxwellIntegrationTest runs each with.
FILES = {
    "test_1j": {},
    "test_bignum": {},
    "test_blob": {},
    "test_case_insensitive": {},
    # Not one of issue 30's fifteen: Maxwell's current test of column case, run here to show
    # that the column names test_case_insensitive's adjustment folds are those Maxwell writes.
    "test_column_case": {},
    "test_charsets": {},
    "test_enum": {},
    "test_gis": {},
    "test_invalid_time": {},
    "test_json": {},
    "test_latin1": {},
    # testRunMinimalBinlog: `set global binlog_row_image='minimal'` and a new connection; the
    # file's session here is new, so the session variable is the same thing.
    "test_minimal": {"session": ["SET SESSION binlog_row_image = 'MINIMAL'"]},
    # testRowQueryLogEventsIsOn: outputConfig.includesRowQuery (output_row_query). MariaDB logs
    # the statement (ANNOTATE_ROWS) with binlog_annotate_row_events, on by default; Maxwell
    # sets binlog_rows_query_log_events only on MySQL.
    "test_row_query_log_is_on": {"stream": ["--include-query"],
                                 "session": ["SET SESSION binlog_annotate_row_events = ON"]},
    "test_set": {},
    "test_time": {},
    "test_zero_created_at": {},
}

# Where MariaDB (or the file's place in Maxwell's history) differs from what the file expects.
# Each entry names the file, what the comparison does instead, and why; run
# `maxwell_suite.py --explain` to print them.
ADJUSTMENTS = {
    # MariaDB has no JSON type: JSON is an alias of LONGTEXT with a json_valid CHECK (SHOW
    # CREATE TABLE shows `longtext ... CHECK (json_valid(`j`))`), the binary log carries the
    # text as written, and a text column is a string in Maxwell's output (as in Maxwell reading
    # MariaDB). So the row has "j" as the string the statement wrote; the expected object's
    # MySQL JSON value is compared with that string parsed as JSON.
    "test_json": {"json_text_columns": {"j"}},
    # Maxwell stopped running this file in 2015 (commit 4bed230f0 removed testCaseSensitivity)
    # and since 2016 writes column names as they were created, not lower-cased (commit
    # bff85a839, Maxwell issue #362; its test_column_case expects "ID" and "bar_FIELD", and
    # runs here too). The file's lower-case names are compared with the row's case-folded.
    "test_case_insensitive": {"fold_column_case": True},
}

JSON_LINE = re.compile(r"^\s*->\s*\{.*")


def parse_test_file(path):
    """(statements, expected objects) as MaxwellTestJSON.parseJSONTestFile reads them, each
    expected object with the index of the statement it follows."""
    statements, expected = [], []
    buffer, buffer_is_json = None, False

    def flush():
        if buffer_is_json:
            expected.append((len(statements), loose_json(buffer)))
        else:
            statements.append(buffer)

    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if re.fullmatch(r"\s*", line):
                continue
            if buffer is not None:
                if re.match(r"^\s+", line) and not JSON_LINE.match(line):
                    buffer = buffer + " " + line.strip()
                    continue
                flush()
                buffer = None
            buffer_is_json = bool(JSON_LINE.match(line))
            buffer = re.sub(r"^\s*->\s*", "", line) if buffer_is_json else line
    if buffer is not None:
        flush()
    return statements, expected


def loose_json(text):
    """JSON with unquoted member names (Jackson's ALLOW_UNQUOTED_FIELD_NAMES): the names are
    quoted outside strings, then the text is parsed as JSON."""
    out, i, in_string = [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif c.isalpha() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            word = text[i:j]
            rest = text[j:].lstrip()
            out.append(f'"{word}"' if rest.startswith(":") else word)
            i = j
            continue
        else:
            out.append(c)
        i += 1
    return json.loads("".join(out))


def same(a, b):
    """Equality of two parsed JSON values as Jackson's maps compare them: an integer is never
    equal to a fraction, nor a boolean to a number."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    return a == b


def adjusted_row(row, adjustment):
    """The output row as the comparison sees it under the file's adjustment."""
    images = [name for name in ("data", "old") if isinstance(row.get(name), dict)]
    for name in images:
        image = row[name]
        if adjustment.get("fold_column_case"):
            image = {column.lower(): value for column, value in image.items()}
        for column in adjustment.get("json_text_columns", ()):
            if isinstance(image.get(column), str):
                try:
                    image = dict(image, **{column: json.loads(image[column])})
                except ValueError:
                    pass  # not JSON text: compared as it is, and fails
        row = dict(row, **{name: image})
    return row


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def mariadb(args, *extra):
    return ["mariadb", "--no-defaults", "-S", args.socket, "-uroot", "--default-character-set=utf8mb4", *extra]


def query(args, sql):
    done = run(mariadb(args, "-N", "-B", "-e", sql))
    if done.returncode != 0:
        raise RuntimeError(f"{sql}: {done.stderr.strip()}")
    return done.stdout.strip()


def statement_line(statement):
    """A statement as one client line: its trailing semicolons dropped (the server drops them
    from the text it logs as well), ended by one."""
    return statement.rstrip().rstrip(";").rstrip() + ";"


def run_file(args, name, options, adjustment):
    """Runs one file; returns a list of failure messages (empty: the file matches)."""
    statements, expected = parse_test_file(os.path.join(args.fixtures, name))
    binlog_file, position = query(args, "SHOW MASTER STATUS").split("\t")[:2]
    binlog_dir = os.path.dirname(query(args, "SELECT @@log_bin_basename"))

    # One session for the file, as Maxwell's executeList uses one connection: `use db` and
    # session settings carry from one statement to the next. A line starting with `#` is a
    # comment (the client leaves it out, as the server would ignore it). --comments keeps
    # the comments in the statements, which the server logs and output_row_query writes.
    session = [statement_line(s) for s in options.get("session", [])]
    script = session + [statement_line(s) for s in statements if not s.lstrip().startswith("#")]
    with open(os.path.join(args.work, name + ".sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")
    done = run(mariadb(args, "--comments", "--batch"), input="\n".join(script) + "\n")
    if done.returncode != 0:
        return [f"the statements failed on the server: {done.stderr.strip()}"]

    # The file the statements began in, and any after it, should a statement have rotated the log.
    binlogs = [os.path.join(binlog_dir, line.split("\t")[0]) for line in query(args, "SHOW BINARY LOGS").splitlines()
               if line.split("\t")[0] >= binlog_file]
    command = [os.path.join(args.tools, "cdc-stream"), "--file", *binlogs, "--start-position", position,
               "--format", "maxwell", *options.get("stream", [])]
    streamed = run(command)
    with open(os.path.join(args.work, name + ".maxwell.json"), "w", encoding="utf-8") as f:
        f.write(streamed.stdout)
    if streamed.returncode != 0:
        return [f"{' '.join(command)}: exit {streamed.returncode}: {streamed.stderr.strip()[:600]}"]

    rows = []
    for line in streamed.stdout.splitlines():
        row = json.loads(line)
        for ignored in ("ts", "xid", "xoffset", "commit"):
            row.pop(ignored, None)
        rows.append(row)

    failures = []
    at = 0
    for statement_index, want in expected:
        after = statements[statement_index - 1] if statement_index > 0 else "(start)"
        found = next((i for i in range(at, len(rows)) if same(want, adjusted_row(rows[i], adjustment))), None)
        if found is None:
            nearest = rows[at] if at < len(rows) else None
            failures.append("expected after `" + after.strip()[:120] + "`:\n      " + canonical(want) +
                            "\n    not found; the next row is:\n      " +
                            (canonical(nearest) if nearest is not None else "(none)") +
                            ("\n    " + "\n    ".join(differences(want, adjusted_row(nearest, adjustment)))
                             if nearest is not None else ""))
            continue
        for extra in rows[at:found]:
            failures.append("a row no expected object asks for: " + canonical(extra))
        at = found + 1
    for extra in rows[at:]:
        failures.append("a row no expected object asks for: " + canonical(extra))
    return failures


def canonical(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def differences(want, got, path=""):
    """Member-by-member differences between an expected object and a row."""
    if isinstance(want, dict) and isinstance(got, dict):
        lines = []
        for key in sorted(set(want) | set(got)):
            where = f"{path}.{key}" if path else key
            if key not in got:
                lines.append(f"{where}: expected {canonical(want[key])}, absent")
            elif key not in want:
                lines.append(f"{where}: not expected, got {canonical(got[key])}")
            else:
                lines.extend(differences(want[key], got[key], where))
        return lines
    if same(want, got):
        return []
    return [f"{path}: expected {canonical(want)}, got {canonical(got)}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--socket")
    parser.add_argument("--tools")
    parser.add_argument("--fixtures")
    parser.add_argument("--work")
    parser.add_argument("--explain", action="store_true", help="print the adjustments and exit")
    parser.add_argument("files", nargs="*", help="run only these files")
    args = parser.parse_args()
    if args.explain:
        for name, adjustment in ADJUSTMENTS.items():
            print(name, {k: sorted(v) if isinstance(v, set) else v for k, v in adjustment.items()})
        return 0
    query(args, "CREATE DATABASE IF NOT EXISTS test")  # as MysqlIsolatedServer.boot does
    names = args.files or list(FILES)
    failed = 0
    for name in names:
        failures = run_file(args, name, FILES.get(name, {}), ADJUSTMENTS.get(name, {}))
        if failures:
            failed += 1
            print(f"FAIL {name}")
            for failure in failures:
                print("  " + failure)
        else:
            print(f"ok   {name}")
    print(f"{len(names) - failed} of {len(names)} Maxwell files match")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
