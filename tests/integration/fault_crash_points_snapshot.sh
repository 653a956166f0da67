#!/usr/bin/env bash
# Issue 29's crash-point exploration of cdc-snapshot --output-dir (tests/integration/
# crash_points.py, SnapshotExplorer), on a table that does not change: a crash, a stop or a lost
# connection before each chunk and at each batch of rows, a torn write, and a lost connection
# followed by another fault while the chunk is read again; after each schedule the same command
# without faults: every chunk file must hold the clean run's rows.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/crash_points_lib.sh"
crash_points --snapshot "$tools_dir/cdc-snapshot"
