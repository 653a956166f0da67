# The composed fault kind's third run (fault_lib.sh, issue 29): cdc-sync adding tables, with
# --archive-source of an archive kept under the same faults. Sourced by fault_lib.sh; not a test.

# fault_by_grow SEED (composed): cdc-sync --output of db.t and db.marker, which once its
# snapshot is merged is stopped and run again with db.* (adding db.u, under a load of its own),
# as a user adds tables, with --archive-source of an archive that cdc-stream --archive keeps
# meanwhile (a tool of the run: the faults stop it too, and it is run again), while the
# faults purge the binlogs the archive has. The output's commits touch each table in commit
# order (db.u's from its snapshot's high on), each once, line for line; the snapshots and the
# output replay into copies equal to the sources.
_grow_tables=
_launch_grow() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_tool" $(fault_connection) --tables "$_grow_tables" --dir "$run_dir/sync" \
    --mode initial -j 2 --chunk-size "$fault_chunk_size" --no-progress --archive-source "$fault_archive" \
    --output "$_sync_out" >/dev/null 2>>"$run_err/cdc-sync.err" &
  keep_pid=$!
}
archiver_loop_pid=
# _fault_archiver_start DIR: cdc-stream --archive DIR --from now, run again whenever it ends
# until _fault_archiver_stop; an exit other than a stop's, a kill's or a lost first connection
# is written to $work/archiver.unexpected.
_fault_archiver_start() {
  fault_archive=$1
  rm -f "$work/archiver.stop"
  (
    while [[ ! -e $work/archiver.stop ]]; do
      MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" $(fault_connection) --archive "$fault_archive" --from now \
        2>>"$run_err/archiver.err" &
      pid=$!
      echo cdc-stream-archive >"$work/tools.d/$pid"
      status=0
      wait "$pid" || status=$?
      rm -f "$work/tools.d/$pid" "$work/termed.d/$pid"
      [[ -e $work/archiver.stop ]] && break
      case $status in
        0 | 69 | 137 | 143) ;;
        *) echo "cdc-stream --archive exited $status: $(tail -1 "$run_err/archiver.err")" >>"$work/archiver.unexpected" ;;
      esac
      fault_note "cdc-stream-archive exited $status: run again"
      sleep 0.2
    done
  ) &
  archiver_loop_pid=$!
}
_fault_archiver_stop() {
  : >"$work/archiver.stop"
  local file
  for file in "$work"/tools.d/*; do
    [[ -e $file && $(cat "$file" 2>/dev/null) == cdc-stream-archive ]] || continue
    kill -TERM "$(basename "$file")" 2>/dev/null
    kill -CONT "$(basename "$file")" 2>/dev/null
  done
  wait "$archiver_loop_pid" 2>/dev/null
  archiver_loop_pid=
}
fault_by_grow() {
  local seed=$1
  _fault_run_begin grow "$seed" || return 1
  # A bigger table than db.t, in more chunks: the purges come while they are read.
  proof_create int "$run_db.u" 3000 "$((seed + 7))" || return 1
  proof_load_bg int "$run_db.u" "$((seed + 7))" "$fault_load_seconds" --survive-disconnects 60
  _fault_archiver_start "$work/$run_db.archive"
  if ! wait_until 20 bash -c "ls -A '$fault_archive' 2>/dev/null | grep -q ."; then
    fail "cdc-stream --archive did not begin its archive: $(tail -3 "$run_err/archiver.err")"
    _fault_archiver_stop
    return 1
  fi
  _sync_out="$run_dir/out.ndjson"
  fault_injector_start "$seed" "$fault_load_seconds"
  _grow_tables="$run_db.t,$run_db.marker"
  keep_start cdc-sync _launch_grow
  local ok=true
  if keep_until 300 "its merged snapshot" test -e "$run_dir/sync/snapshot.ndjson"; then
    keep_stop
    fault_note "cdc-sync stopped (exit $keep_status) to add $run_db.u"
    _grow_tables="$run_db.*"
    keep_start cdc-sync _launch_grow
    # One purge while the new table's chunks are read, whatever the faults do: its deltas
    # begin in a purged binlog.
    if wait_until 30 bash -c "ls '$run_dir/sync/add.1/chunks' 2>/dev/null | grep -q ndjson"; then
      _fault_purge_archived || fault_note "(no purge while $run_db.u was read)"
    fi
    keep_while_busy || ok=false
  else
    ok=false
  fi
  while kill -0 "$load_pid" 2>/dev/null || kill -0 "$injector_pid" 2>/dev/null; do sleep 0.2; done
  _fault_run_end
  if ! $ok; then
    keep_stop
    _fault_archiver_stop
    fail "cdc-sync adding tables under $fault_kind: exit ${keep_failed:-(did not finish its snapshot)}"
    return 1
  fi
  if ! keep_until 300 "the added table's switch-over" test -e "$run_dir/sync/add.1/done"; then
    keep_stop
    _fault_archiver_stop
    fail "cdc-sync did not finish adding $run_db.u"
    return 1
  fi
  local until_pos
  until_pos=$(_fault_marker) || return 1
  if ! keep_until_text "$_sync_out" "\"position\":\"$until_pos\"" 120; then
    keep_stop
    _fault_archiver_stop
    fail "cdc-sync did not stream up to $until_pos"
    return 1
  fi
  keep_stop
  _fault_archiver_stop
  fault_expect_exit "cdc-sync (tables added) stops on SIGTERM after the faults" 0 "$keep_status"
  if [[ -s $work/archiver.unexpected ]]; then
    fail "the archiver: $(head -3 "$work/archiver.unexpected")"
    rm -f "$work/archiver.unexpected"
  fi
  local high added_high span_from span_until
  high=$(jq -r 'select(.op=="high").position' "$run_dir/sync/snapshot.ndjson")
  added_high=$(jq -r 'select(.op=="high").position' "$run_dir/sync/add.1/snapshot.ndjson")
  read -r span_from span_until <"$run_dir/sync/span"
  fault_check_once "cdc-sync's deltas" "$run_dir/sync/deltas.ndjson" "$span_from" "$span_until" "$run_db.t,$run_db.marker"
  read -r span_from span_until <"$run_dir/sync/add.1/span"
  fault_check_once "the added table's deltas" "$run_dir/sync/add.1/deltas.ndjson" "$span_from" "$span_until" "$run_db.u"
  local ref="$work/ref.grow.ndjson"
  if MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
      --from "$high" --until "$until_pos" --tables "$run_db.*" --archive-source "$fault_archive" >"$ref" 2>"$work/ref.err" &&
    python3 "$source_dir/tests/tools/check_tables_once.py" --output "$_sync_out" --reference "$ref" \
      --table "$run_db.t" --table "$run_db.marker" --table "$run_db.u@$added_high" >"$work/grow.check" 2>&1; then
    passes=$((passes + 1))
    echo "ok   cdc-sync --output, tables added: $(cat "$work/grow.check")"
  else
    fail "cdc-sync --output, tables added, from $high to $until_pos (the added table from $added_high):"
    sed 's/^/  /' "$work/grow.check" "$work/ref.err" 2>/dev/null | head -12
  fi
  fault_check_replay "cdc-sync's snapshots and --output" "$run_dir/sync/snapshot.ndjson" \
    "$run_dir/sync/add.1/snapshot.ndjson" "$_sync_out"
  proof_archive_source=$fault_archive
  fault_check_history "cdc-sync's chunks and merged snapshot" "$run_dir/sync/snapshot.ndjson" "$run_dir"/sync/chunks/*.ndjson
  fault_check_history "the added table's chunks and snapshot" "$run_dir/sync/add.1/snapshot.ndjson" \
    "$run_dir"/sync/add.1/chunks/*.ndjson
  proof_archive_source=
  local from_archive
  from_archive=$(grep -c 'from the archive' "$run_err/cdc-sync.err")
  echo "  $from_archive reads from the archive (cdc-sync's stderr), $(grep -c '^binlogs purged' "$fault_log") purges"
  fault_archive=
}
