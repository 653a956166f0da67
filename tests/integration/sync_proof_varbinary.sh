#!/usr/bin/env bash
# Issue 6's proof for a table with a VARBINARY(16) primary key of random bytes: plan, snapshot, merge and
# stream under a random load replay into an empty copy equal to the source, by hand and with
# cdc-sync killed at a random moment (tests/integration/proof_flow.sh), for two seeds.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
source "$(dirname "$0")/proof_flow.sh"
proof_flow varbinary 31 32
