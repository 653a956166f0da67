#!/usr/bin/env python3
"""Checks snapshot chunk outputs and a merged snapshot against the table's own history.

Usage: check_chunks.py --history FILE [--merged FILE] CHUNK_FILE...

FILE (--history) is cdc-stream's output for the chunks' tables from before they were created up
to at least the merged snapshot's high watermark (or the highest low of the chunks): every
change with whole row images, in commit order. The merged snapshot is checked for the tables
the chunks are of. Replaying it gives the table as it was after any
transaction, so each claim of the snapshot can be checked on its own:

  * every row of a chunk (its "r" lines) is the row the table held at the chunk's low
    watermark, value for value: a chunk read before its recorded low, or a row from another
    moment, shows here, in the chunk that has it;
  * the merged snapshot (--merged) holds exactly the table as it was at its high watermark.

So when a replay of snapshot + stream differs from the source, this says whether a chunk or
the merge made the difference. Positions must be MariaDB GTID positions (D-S-N[,...]), which
is what cdc-snapshot and cdc-merge write on a server with GTIDs. Exit 0 when everything
matches, 1 with one line per mismatch (at most 20) otherwise, 2 on bad input.
"""

import argparse
import json
import sys


def gtid_position(text, where):
    """{domain: seq_no} of a MariaDB GTID position such as "0-1-17,1-2-5"."""
    position = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        fields = part.split("-")
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            sys.exit(f"check_chunks: {where}: {text!r} is not a MariaDB GTID position")
        position[int(fields[0])] = int(fields[2])
    return position


def key_of(line):
    return json.dumps(line["key"], sort_keys=True, separators=(",", ":"))


class Claim:
    """Rows that some file says the table held at one position."""

    def __init__(self, name, table, position, rows, whole_table):
        self.name = name
        self.table = table  # (db, table)
        self.position = position  # {domain: seq}
        self.rows = rows  # key -> after image
        self.whole_table = whole_table  # the rows are all of the table (merged), not a range

    def includes(self, domain, seq):
        return seq <= self.position.get(domain, 0)


def read_chunk(path):
    """One chunk output: its low watermark and rows (a chunk read twice: the last reading)."""
    position, rows, table = None, {}, None
    with open(path, encoding="utf-8") as chunk:
        for number, text in enumerate(chunk, 1):
            line = json.loads(text)
            op = line.get("op")
            if op == "low":
                position = gtid_position(line["position"], f"{path}:{number}")
                table = (line["db"], line["table"])
                rows = {}
            elif op == "r":
                rows[key_of(line)] = line["after"]
    if position is None:
        sys.exit(f"check_chunks: {path}: no low line")
    return Claim(path, table, position, rows, False)


def read_merged(path, tables):
    """A merged snapshot: one whole-table claim for each of `tables`."""
    position, rows = None, {table: {} for table in tables}
    with open(path, encoding="utf-8") as merged:
        for number, text in enumerate(merged, 1):
            line = json.loads(text)
            op = line.get("op")
            if op == "r" and (line["db"], line["table"]) in rows:
                rows[(line["db"], line["table"])][key_of(line)] = line["after"]
            elif op == "high":
                position = gtid_position(line["position"], f"{path}:{number}")
    if position is None:
        sys.exit(f"check_chunks: {path}: no high line")
    return [Claim(f"{path} ({'.'.join(table)})", table, position, rows[table], True) for table in tables]


def short(value):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def check(claim, table, problems):
    """Compares a claim with `table`, the table's rows as of the claim's position."""
    for key, row in claim.rows.items():
        truth = table.get(key)
        if truth != row:
            problems.append(f"{claim.name}: key {key}: the file has {short(row)}, the table held "
                            f"{short(truth) if truth is not None else 'no such row'} at {claim.position}")
    if claim.whole_table:
        for key in table.keys() - claim.rows.keys():
            problems.append(f"{claim.name}: key {key}: missing, the table held {short(table[key])} at {claim.position}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", required=True)
    parser.add_argument("--merged")
    parser.add_argument("chunks", nargs="*")
    args = parser.parse_args()

    claims = [read_chunk(path) for path in args.chunks]
    tables = sorted({claim.table for claim in claims})
    if args.merged:
        claims += read_merged(args.merged, tables)

    state = {table: {} for table in tables}  # the tables as of the history read so far
    pending, problems = [], []
    unchecked = list(claims)
    with open(args.history, encoding="utf-8") as history:
        for number, text in enumerate(history, 1):
            line = json.loads(text)
            op = line.get("op")
            if op in ("c", "u", "d"):
                if (line["db"], line["table"]) not in state:
                    continue
                if line.get("partial"):
                    sys.exit(f"check_chunks: {args.history}:{number}: a partial row image; the history needs "
                             "binlog_row_image=FULL")
                pending.append(line)
            elif op == "commit":
                gtid = line.get("gtid")
                if not gtid:
                    sys.exit(f"check_chunks: {args.history}:{number}: a commit without a GTID")
                domain, _server, seq = (int(f) for f in gtid.split("-"))
                # Claims that do not include this transaction see the table as it is now.
                for claim in [c for c in unchecked if not c.includes(domain, seq)]:
                    check(claim, state[claim.table], problems)
                    unchecked.remove(claim)
                for change in pending:
                    rows = state[(change["db"], change["table"])]
                    if change["before"] is not None:
                        rows.pop(key_of_image(change, "before"), None)
                    if change["after"] is not None:
                        rows[key_of_image(change, "after")] = change["after"]
                pending.clear()
    for claim in unchecked:
        check(claim, state[claim.table], problems)
    for problem in problems[:20]:
        print(problem)
    if len(problems) > 20:
        print(f"... {len(problems) - 20} more")
    return 1 if problems else 0


def key_of_image(change, image):
    """The key of a row image: the change line's key names the columns; their values are taken
    from the image (an update that moves a row has the old key in before, the new in after)."""
    names = list(change["key"].keys()) if change.get("key") else None
    if not names:
        sys.exit("check_chunks: a change line without a key; the table needs a primary key")
    row = change[image]
    return json.dumps({name: row[name] for name in names}, sort_keys=True, separators=(",", ":"))


if __name__ == "__main__":
    sys.exit(main())
