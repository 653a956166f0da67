#!/usr/bin/env bash
# The throwaway-server library stops what it starts: given the server's directory or its
# parent, throwaway_stop leaves no mariadbd behind.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_mariadb.sh"

for how in "server directory" "parent directory"; do
  parent="$work/$RANDOM"
  throwaway_start "$parent/server" || exit 1
  pid=$(cat "$parent/server/launcher.pid")
  assert "$how: the server runs" kill -0 "$pid"
  if [[ $how == "server directory" ]]; then throwaway_stop "$parent/server"; else throwaway_stop "$parent"; fi
  assert "$how: the server is gone" bash -c "! kill -0 $pid 2>/dev/null"
  assert "$how: its files are gone" test ! -e "$parent/server"
done
finish
