#!/usr/bin/env python3
"""Checks that a stream output holds each transaction once, table by table.

Usage: check_tables_once.py --output FILE --reference FILE --table DB.T[@POSITION] ...

For an output whose table filter changed on the way (cdc-sync adding tables: the old tables'
changes up to the switch-over, the new tables' changes from their snapshot's high watermark H
on, then every table's), so that the whole output is in commit order table by table, not as
one stream. The reference is a fault-free cdc-stream over every table of the output, from the
output's start to its end.

For each --table, the output's transactions that touch the table are exactly the reference's
that do, in the same order and line for line; with @POSITION (a MariaDB GTID position, such as
the new tables' H) only the reference's transactions after POSITION. And no GTID is in the
output twice, nor a transaction that touches none of the tables.

Lines are grouped into transactions by their commit line; span and table lines are left out
(each run writes its own), and a discard line drops what came since the last commit line, as
a consumer does (cdc-stream(1)). Exit 0 when everything holds, 1 with the first difference per
table otherwise, 2 on bad input.
"""

import argparse
import json
import sys


def gtid_position(text):
    """{domain: seq_no} of a MariaDB GTID position such as "0-1-17,1-2-5"."""
    position = {}
    for part in filter(None, text.split(",")):
        domain, _server, seq = part.split("-")
        position[int(domain)] = int(seq)
    return position


def after(gtid, position):
    domain, _server, seq = gtid.split("-")
    return int(seq) > position.get(int(domain), -1)


def transactions(path):
    """[(gtid, [lines], {db.table})] in the order of the file's commit lines."""
    result, held, tables = [], [], set()
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith('{"op":"span_') or line.startswith('{"op":"table",'):
                continue
            if line.startswith('{"op":"discard",'):
                held, tables = [], set()
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                sys.exit(f"check_tables_once: {path}:{number}: not JSON: {error}")
            held.append(line)
            if "db" in record and "table" in record:
                tables.add(f'{record["db"]}.{record["table"]}')
            if record.get("op") == "commit":
                result.append((record.get("gtid", f"line {number}"), held, tables))
                held, tables = [], set()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--table", action="append", required=True, help="DB.T[@POSITION]")
    args = parser.parse_args()
    try:
        got = transactions(args.output)
        want = transactions(args.reference)
        wanted = []
        for spec in args.table:
            name, _, position = spec.partition("@")
            wanted.append((name, gtid_position(position) if position else None))
    except (OSError, ValueError) as error:
        print(f"check_tables_once: {error}", file=sys.stderr)
        return 2
    problems = []
    seen = {}
    for index, (gtid, _lines, _tables) in enumerate(got):
        if gtid in seen:
            problems.append(f"{gtid} is in the output twice (transactions {seen[gtid] + 1} and {index + 1})")
        seen.setdefault(gtid, index)
    names = {name for name, _ in wanted}
    for gtid, _lines, tables in got:
        if tables and not tables & names:
            problems.append(f"{gtid} touches none of the tables checked: {sorted(tables)}")
            break
    summary = []
    for name, position in wanted:
        mine = [(g, lines) for g, lines, tables in got if name in tables]
        theirs = [(g, lines) for g, lines, tables in want
                  if name in tables and (position is None or after(g, position))]
        for index in range(max(len(mine), len(theirs))):
            if index >= len(mine):
                problems.append(f"{name}: {len(theirs) - len(mine)} transactions lost, the first {theirs[index][0]}")
                break
            if index >= len(theirs):
                problems.append(f"{name}: {len(mine) - len(theirs)} transactions too many, the first {mine[index][0]}")
                break
            if mine[index][0] != theirs[index][0]:
                problems.append(f"{name}: transaction {index + 1} is {mine[index][0]}, expected {theirs[index][0]}")
                break
            if mine[index][1] != theirs[index][1]:
                first = next(i for i, (a, b) in enumerate(zip(mine[index][1] + [""], theirs[index][1] + [""])) if a != b)
                line_got = (mine[index][1] + ["(none)"])[first][:300]
                line_want = (theirs[index][1] + ["(none)"])[first][:300]
                problems.append(f"{name}: transaction {mine[index][0]} differs at its line {first + 1}:\n"
                                f"    expected: {line_want}\n    got:      {line_got}")
                break
        summary.append(f"{len(mine)} of {name}" + (f" after {args.table[len(summary)].partition('@')[2]}" if position else ""))
    if problems:
        print("\n".join(problems[:20]))
        return 1
    print(f"{len(got)} transactions, each once: " + ", ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
