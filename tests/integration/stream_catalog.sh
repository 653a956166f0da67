#!/usr/bin/env bash
# cdc-stream against a server that logs binlog_row_metadata=MINIMAL: column names, ENUM/SET
# labels, signedness and the key come from information_schema (with a warning), are read
# again after a DDL on a captured table, and rows from before a DDL that no longer fit the
# table are written with positional names and a warning rather than mislabelled.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
throwaway_start "$srv" --binlog-row-metadata=MINIMAL --server-id=9 || exit 1

root <<'SQL' || exit 1
CREATE DATABASE c;
CREATE TABLE c.items (
  id INT UNSIGNED NOT NULL,
  sku VARCHAR(8) CHARACTER SET latin1 NOT NULL,
  size ENUM('S','M','L') NOT NULL,
  flags SET('new','sale') NOT NULL,
  qty TINYINT NOT NULL,
  PRIMARY KEY (sku, id)
);
SQL
start=$(gtid_pos)
root -e "INSERT INTO c.items VALUES (4294967295, 'Zü', 'M', 'new,sale', -3)" || exit 1

expect "MINIMAL metadata: the stream runs" 0 live --from "$start" --until now
assert "the insert has names, labels, signedness and the key from the catalog" grep -q -F \
  '"key":{"sku":"Zü","id":4294967295},"before":null,"after":{"id":4294967295,"sku":"Zü","size":"M","flags":"new,sale","qty":-3}' \
  "$work/out"
assert "stderr warns that names come from the catalog" grep -q "binlog_row_metadata=MINIMAL: column names.*come from the catalog as it is now" "$work/err"

# A DDL on the captured table: the next rows carry the new column, read again.
after_insert=$(gtid_pos)
root -e "ALTER TABLE c.items ADD COLUMN note VARCHAR(10) NULL; INSERT INTO c.items VALUES (1, 'A', 'S', '', 1, 'hi')" || exit 1
expect "after a DDL: the stream runs" 0 live --from "$after_insert" --until now
assert "the ddl line is there" grep -q '"op":"ddl".*ADD COLUMN note' "$work/out"
assert "rows after the DDL carry the new column" grep -q -F \
  '"after":{"id":1,"sku":"A","size":"S","flags":"","qty":1,"note":"hi"}' "$work/out"

# History from before the DDL no longer fits the table: positional names and a warning.
expect "history before the DDL: the stream runs" 0 live --from "$start" --until now
assert "the old row is written with positional names" grep -q -F '"after":{"@1":4294967295' "$work/out"
assert "stderr says why" grep -q "do not match the table's current definition" "$work/err"
assert "stderr says the metadata is read again after the DDL" grep -q "read again from information_schema" "$work/err"

finish
