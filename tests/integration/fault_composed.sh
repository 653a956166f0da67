#!/usr/bin/env bash
# The fault-injection proof (issues 11 and 29) for faults that coincide: a dropped dump
# connection and then, inside the reconnect pause or just after, SIGTERM or SIGKILL to a tool;
# a server restart and a stop while the tools reconnect; binlog rotations with a crash; each
# tool run again as the same command. cdc-sync -j 2 --output and the tools by hand run under it,
# with a seeded random load, for each seed of CDC_FAULT_SEEDS; the snapshot and the stream
# replay into a copy equal to the source, and every stream output holds every transaction
# exactly once (tests/integration/fault_lib.sh).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
source "$(dirname "$0")/fault_lib.sh"
fault_main composed
