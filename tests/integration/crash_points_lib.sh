# Shared by tests/integration/fault_crash_points*.sh (not a test: the name keeps it out of the
# fault_*.sh glob): a throwaway server of the test's own, then crash_points.py with ARGS.
# Usage, after lib.sh and live_lib.sh:   crash_points ARGS...
crash_points() {
  require_live_mode
  # Each run's dump thread outlives it on the server by about a heartbeat (the server notices
  # the closed socket when it next writes): hundreds of short runs need more than 151.
  throwaway_start "$srv" --max-connections=2000 || exit 1
  python3 "$source_dir/tests/integration/crash_points.py" --socket "$THROWAWAY_SOCKET" --port "$THROWAWAY_PORT" \
    --password "$THROWAWAY_CDC_PASSWORD" --work "$work" "$@"
}
