#!/usr/bin/env bash
# The fault-injection proof (issue 11) for one fault kind: a TCP proxy between the tools and the server (cdc-test-proxy) cuts (RST, FIN) or stalls connections.
# cdc-sync -j 2 --output and the tools by hand run under it, with a seeded random load, for each
# seed of CDC_FAULT_SEEDS; the snapshot and the stream replay into a copy equal to the source,
# and every stream output holds every transaction exactly once (tests/integration/fault_lib.sh).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
source "$(dirname "$0")/fault_lib.sh"
fault_main proxy
