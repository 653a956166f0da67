#!/usr/bin/env bash
# Issue 16's proof for a table without any key (planned as one chunk, merged as a multiset of
# whole rows, streamed with key null; with cdc-sync also split by a --chunk-key that no index
# starts with): plan, snapshot, merge and stream under a random load that
# also copies rows whole replay into an empty copy equal to the source, row for row and
# duplicate for duplicate, by hand and with cdc-sync killed at a random moment
# (tests/integration/proof_flow.sh), for two seeds.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
source "$(dirname "$0")/proof_flow.sh"
proof_flow keyless 31 32
