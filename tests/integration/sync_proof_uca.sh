#!/usr/bin/env bash
# Issue 16's proof for a VARCHAR primary key under utf8mb4_uca1400_ai_ci, the order cdc-merge
# reproduces without the server (order/uca_table.h): keys of letters spelled in any case and
# accent ('a', 'A', 'á', 'Á'; ß and ss), updates that spell a key anew (from 'a' to 'Á': the
# same key to the collation, other bytes), inserts and key moves that meet an equal key (the
# load takes the duplicate-key error and tries another). Plan, snapshot, merge and stream under
# that load replay into an empty copy equal to the source byte for byte, by hand and with
# cdc-sync killed at a random moment (tests/integration/proof_flow.sh).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
source "$(dirname "$0")/proof_flow.sh"
proof_flow uca 41
