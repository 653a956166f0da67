#!/usr/bin/env bash
# The main job on the embedded default: starts a throwaway MariaDB in a temp directory
# (its own datadir, socket and port), loads scripts/sample/shop.sql, runs the tools on it
# and prints their NDJSON. The server is stopped and removed at the end, whatever happens.
set -euo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

cdc_install_packages
cdc_build "$CDC_ROOT/build" >/dev/null
tools="$CDC_ROOT/build/tools"

server_dir=$(mktemp -d "${TMPDIR:-/tmp}/cdc-demo-server.XXXXXX")
trap 'throwaway_stop "$server_dir/server"; rm -rf "$server_dir"' EXIT INT TERM
throwaway_start "$server_dir/server"
mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot <"$CDC_ROOT/scripts/sample/shop.sql"

connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)
export MYSQL_PWD=$THROWAWAY_CDC_PASSWORD

echo "# throwaway MariaDB on 127.0.0.1:$THROWAWAY_PORT with the sample schema 'shop'" >&2
echo "# \$ cdc-plan --check ${connection[*]}" >&2
status=0
"$tools/cdc-plan" --check "${connection[@]}" || status=$?
echo "# cdc-plan --check exited $status (0: the server is usable for CDC)" >&2

# The live stream: start at the server's end now, with a state file to resume from.
state="$server_dir/shop.state"
echo "# \$ cdc-stream ${connection[*]} --from now --until now --state shop.state --tables 'shop.*'" >&2
"$tools/cdc-stream" "${connection[@]}" --from now --until now --state "$state" --tables 'shop.*' || status=$?
# Some changes, then the same command again: it resumes from the state and prints just them.
mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot shop <<'SQL'
UPDATE orders SET status = 'shipped', tags = 'gift,express' WHERE id = 1;
DELETE FROM sessions WHERE token = UNHEX('FF');
INSERT INTO customers (email, name) VALUES ('linus@example.com', 'Linus');
ALTER TABLE customers ADD COLUMN vip BOOLEAN NOT NULL DEFAULT FALSE;
SQL
echo "# \$ cdc-stream ${connection[*]} --until now --state shop.state --tables 'shop.*'   (after four changes)" >&2
"$tools/cdc-stream" "${connection[@]}" --until now --state "$state" --tables 'shop.*' || status=$?
echo "# \$ cat shop.state" >&2
cat "$state" >&2
# The same binlog decoded offline, from the sample load on.
mapfile -t binlogs < <(ls "$server_dir/server/data"/binlog.[0-9]*)
echo "# \$ cdc-stream --file ${binlogs[*]##*/} --tables 'shop.*' | tail -3" >&2
"$tools/cdc-stream" --file "${binlogs[@]}" --tables 'shop.*' | tail -3 || status=$?
exit "$status"
