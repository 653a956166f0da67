# The fault-injection proof (issue 11), shared by the tests/integration/fault_*.sh scripts, one
# script per fault kind. Not a test itself: tests/CMakeLists.txt leaves it out of the fault_*.sh
# glob by name.
# Usage, after lib.sh, live_lib.sh and proof_lib.sh:   fault_main KIND
#
# For each seed of CDC_FAULT_SEEDS (default "1 2"), on fresh tables (db.t of a key shape that
# rotates with the seed, and db.marker) under a seeded random load (cdc-test-load), two runs:
#   sync   cdc-sync -j 2 --output FILE (a slow_reader run: stdout, read through a pipe)
#   tools  the tools by hand: cdc-plan; two workers running cdc-snapshot --output-dir one chunk
#          at a time; cdc-merge --span; cdc-stream --from --until --state --output (the
#          deltas); cdc-merge; then cdc-stream --from HIGH --state --output (the tail)
# while faults of KIND come at seeded random moments for as long as the load runs. Then one
# marker row is inserted, the stream must reach the server's position after it, and stops with
# SIGTERM (exit 0). A tool is run again only where the fault kind says a rerun is how it is
# used (tool_kill: after SIGKILL; disk_full: after its exit 74 once the space is back; by hand
# under server_kill and proxy: a tool whose first connection failed, exit 69, which the tools
# do not retry by design); any other exit is a failure of the tool, reported with its stderr.
# The verdict, per run:
#   - the snapshot and the stream replay strictly (cdc-test-replay) into an empty copy equal to
#     the source row for row;
#   - every stream output (cdc-sync's --output and its deltas; the deltas and the tail by hand)
#     holds every transaction between its start and its end exactly once: its commit GTIDs are
#     those of a fault-free cdc-stream over the same range, none twice, none missing (the
#     first lost or doubled GTID is named), and then its lines are that stream's, line for
#     line (span lines aside; the first differing line is shown);
#   - faults were injected: at least CDC_FAULT_MIN (default 20) across the script.
#
# Fault kinds (KIND):
#   dump_kill     KILL of a Binlog Dump thread, every 0.2-1 s
#   conn_kill     KILL of a connection of the cdc user that is not a binlog dump (the plan's and
#                 the snapshots' connections), every 0.1-0.4 s; such connections live only
#                 while the snapshot runs: 8000 rows in chunks of 40 make it last (the
#                 snapshot is fast: a chunk's watermarks cost a few milliseconds)
#   server_kill   the server killed with SIGKILL and started again on its datadir and port,
#                 every 0.4-1.2 s (the load reconnects: cdc-test-load --survive-disconnects)
#   flush_storm   2 to 10 FLUSH BINARY LOGS in a row, every 0.2-0.8 s
#   tool_kill     SIGKILL to a running tool (cdc-sync: its whole process group), every 0.5-1.5 s;
#                 the tool is run again as the same command
#   disk_full     the output's filesystem (a 128 MiB tmpfs holding the run's files, each run's
#                 removed after its checks) filled, held full 0.2-1 s, then freed, every
#                 0.2-0.8 s; a tool may exit 74 (anything else fails) and is run again once
#                 the space is back
#   slow_reader   the stream writes to a pipe whose reader stops for 2.5 s, longer than
#                 net_write_timeout (set to 1 s on the server), while 12 MB of rows go into
#                 db.bulk (streamed too: the pipe, the stream's buffers, then the socket
#                 buffers fill, and the server blocks on its write; 4 MB no longer did once the
#                 stream read on while its second thread waited on the pipe), every 0.1-0.5 s. A stream on a pipe
#                 saves its state after every transaction (two fsyncs): the load is held to 40
#                 transactions a second and runs twice as long, so that the stream keeps up
#   proxy         the tools connect through cdc-test-proxy, which cuts (RST or FIN) or stalls
#                 (1-4 s) a random connection every 0.3-1.2 s
#   composed      faults that coincide (issue 29), every 0.3-1 s one of: a Binlog Dump KILL; a
#                 KILL of another connection of cdc's; SIGKILL to a running tool; a Binlog Dump
#                 KILL and 0.1-1 s later, inside the stream's reconnect pause or just after it,
#                 SIGTERM or SIGKILL to a running tool (cdc-sync: its process group for SIGKILL,
#                 the leader for SIGTERM, which it passes on); FLUSH BINARY LOGS and SIGKILL at
#                 once; a server restart (SIGKILL), then SIGTERM to a tool while the tools
#                 reconnect; the output's filesystem full (a 128 MiB tmpfs, as disk_full) and a
#                 Binlog Dump KILL while it is, freed 0.2-1 s later; a stalled tool (SIGSTOP,
#                 cdc-sync's whole group) for 1.5-3 s while 12 MB are logged, past the server's
#                 net_write_timeout (1 s here), then SIGCONT, SIGTERM or SIGKILL; in the grow
#                 run, binlogs purged once the archive has them. A tool stopped by SIGTERM or
#                 SIGKILL is run again as the same command, one that exited 74 once there is
#                 room. Composed adds a third run per seed, grow: cdc-sync --output with
#                 --archive-source, tables added once its snapshot is merged (fault_by_grow)
#
# Tunables (the long version: scripts/fault-proof.sh): CDC_FAULT_SEEDS, CDC_FAULT_LOAD_SECONDS
# (default 8), CDC_FAULT_ROWS (2000), CDC_FAULT_CHUNK_SIZE (100), CDC_FAULT_MIN (20).

fault_seeds=${CDC_FAULT_SEEDS:-1 2}
fault_load_seconds=${CDC_FAULT_LOAD_SECONDS:-8}
fault_rows=${CDC_FAULT_ROWS:-2000}
fault_chunk_size=${CDC_FAULT_CHUNK_SIZE:-100}
fault_min=${CDC_FAULT_MIN:-20}
fault_proxy_tool="$tools_dir/../tests/tools/cdc-test-proxy"
plan_tool=$tools_dir/cdc-plan
snapshot_tool=$tools_dir/cdc-snapshot
merge_tool=$tools_dir/cdc-merge
sync_tool=$tools_dir/cdc-sync
export CDC_TOOLS_DIR=$tools_dir # cdc-sync runs the tools under test

fault_kind=
fault_port=         # the port the tools connect to (the proxy's for proxy, else the server's)
fault_fs=           # where a run's files go (a tmpfs for disk_full)
fault_mounted=false
fault_groups=()     # process groups started with setsid (killed whole on exit)
fault_total=0       # faults injected so far in this script
fault_log=          # this run's fault log
injector_pid=
proxy_pid=
fault_archive=      # the grow run's binlog archive (cdc-stream --archive), while it runs

# Kill what we started, unmount the tmpfs, then live_lib's cleanup (server, bg_pids, $work).
fault_cleanup() {
  local g
  for g in "${fault_groups[@]}"; do kill -9 -- "-$g" 2>/dev/null; done
  [[ -n $injector_pid ]] && kill -9 "$injector_pid" 2>/dev/null
  _fault_proxy_stop
  local pid
  for pid in "$work"/readers.d/*; do [[ -e $pid ]] && kill -9 "$(basename "$pid")" 2>/dev/null; done
  live_cleanup
  if $fault_mounted; then
    umount "$fault_fs" 2>/dev/null || umount -l "$fault_fs" 2>/dev/null
  fi
}
# CDC_KEEP_WORK=1 keeps the work directory, with the fault logs (lib.sh's remove_work).
trap 'exit_status=$?; fault_cleanup; remove_work' EXIT

fault_connection() { echo -h 127.0.0.1 -P "$fault_port" -u cdc; }
# fault_note TEXT: one line of the run's fault log (printed at the run's end).
fault_note() { echo "$*" >>"$fault_log"; }

# ---- the server: SIGKILL and start again (server_kill) ------------------------------------

fault_server_argv=()
_fault_server_restart() {
  local pid i
  pid=$(cat "$srv/launcher.pid")
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null # when it is our child: no "Killed" job report
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  "${fault_server_argv[@]}" >>"$srv/stdout.log" 2>&1 &
  echo $! >"$srv/launcher.pid"
  for ((i = 0; i < 600; i++)); do
    mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server did not start again: $(tail -5 "$srv/error.log")" >&2
  return 1
}

# ---- the injector --------------------------------------------------------------------------

# _fault_sleep_between LO_TENTHS HI_TENTHS: sleeps a seeded random time in [LO, HI] tenths.
_fault_sleep_between() { sleep "$(awk -v t=$(($1 + RANDOM % ($2 - $1 + 1))) 'BEGIN { printf "%.1f", t / 10 }')"; }

# _fault_pick WORDS...: one of them at random (seeded), on stdout.
_fault_pick() { (($#)) && { local all=("$@"); echo "${all[RANDOM % $#]}"; }; }

# _fault_once: one fault of $fault_kind; logs it; returns 1 when there was nothing to hit.
_fault_once() {
  local id ids target n i
  case $fault_kind in
    dump_kill)
      _fault_sleep_between 2 10
      mapfile -t ids < <(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'" 2>/dev/null)
      id=$(_fault_pick "${ids[@]}") || return 1
      root -e "KILL $id" 2>/dev/null || return 1
      fault_note "KILL of the Binlog Dump thread $id"
      ;;
    conn_kill)
      # Often: the snapshots these connections serve last a second or two on a fast machine,
      # and the proof needs its faults to land inside them (CI saw 17 of 20 at 0.1-0.4 s).
      sleep "$(awk -v t=$((3 + RANDOM % 13)) 'BEGIN { printf "%.2f", t / 100 }')"
      mapfile -t ids < <(root -N -e "SELECT CONCAT(ID, ' ', COMMAND, ' ', LEFT(IFNULL(INFO, ''), 60)) FROM information_schema.PROCESSLIST
        WHERE USER = 'cdc' AND COMMAND NOT LIKE 'Binlog Dump%'" 2>/dev/null)
      target=$(_fault_pick "${ids[@]}") || return 1
      root -e "KILL ${target%% *}" 2>/dev/null || return 1
      fault_note "KILL of connection $target"
      ;;
    server_kill)
      _fault_sleep_between 4 12
      _fault_server_restart || return 1
      fault_note "server killed with SIGKILL and started again"
      ;;
    flush_storm)
      _fault_sleep_between 2 8
      n=$((2 + RANDOM % 9))
      for ((i = 0; i < n; i++)); do root -e 'FLUSH BINARY LOGS' || return 1; done
      fault_note "FLUSH BINARY LOGS x $n"
      ;;
    tool_kill)
      # As often as the tools can take: two seeds of both flows gave 18-22 kills at 0.7-2 s,
      # around the 20 the proof asks for.
      _fault_sleep_between 5 15
      local running=("$work"/tools.d/*)
      [[ -e ${running[0]} ]] || return 1
      target=$(_fault_pick "${running[@]}")
      id=$(basename "$target")
      local what
      what=$(cat "$target" 2>/dev/null) || return 1
      if [[ $what == group* ]]; then
        kill -9 -- "-$id" 2>/dev/null || return 1
      else
        kill -9 "$id" 2>/dev/null || return 1
      fi
      fault_note "SIGKILL to $what (pid $id)"
      ;;
    disk_full)
      _fault_sleep_between 2 8
      dd if=/dev/zero of="$fault_fs/filler" bs=1M status=none 2>/dev/null
      local hold
      hold=$(awk -v t=$((2 + RANDOM % 9)) 'BEGIN { printf "%.1f", t / 10 }')
      sleep "$hold"
      rm -f "$fault_fs/filler"
      fault_note "filesystem full for ${hold}s"
      ;;
    slow_reader)
      _fault_sleep_between 1 5
      local readers=("$work"/readers.d/*)
      [[ -e ${readers[0]} ]] || return 1
      id=$(basename "$(_fault_pick "${readers[@]}")")
      kill -STOP "$id" 2>/dev/null || return 1
      local dumps_before dumps_after
      dumps_before=$(root -N -e "SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
      root -e "INSERT INTO \`$run_db\`.bulk (pad) SELECT REPEAT('f', 1000) FROM \`$run_db\`.seq_1_to_12000" 2>>"$work/injector.err"
      sleep 2.5
      dumps_after=$(root -N -e "SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
      kill -CONT "$id" 2>/dev/null
      fault_note "reader $id stopped for 2.5 s (dump threads before: $dumps_before, after: $dumps_after)"
      ;;
    proxy)
      sleep 1 # the proxy injects on its own
      return 1
      ;;
    composed)
      _fault_sleep_between 3 10
      case $((RANDOM % 10)) in
        0)
          mapfile -t ids < <(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'" 2>/dev/null)
          id=$(_fault_pick "${ids[@]}") || return 1
          root -e "KILL $id" 2>/dev/null || return 1
          fault_note "KILL of the Binlog Dump thread $id"
          ;;
        1)
          mapfile -t ids < <(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'cdc' AND COMMAND NOT LIKE 'Binlog Dump%'" 2>/dev/null)
          id=$(_fault_pick "${ids[@]}") || return 1
          root -e "KILL $id" 2>/dev/null || return 1
          fault_note "KILL of connection $id"
          ;;
        2) _fault_signal_tool KILL || return 1 ;;
        3 | 4)
          # The composition of issue 29: the stream loses its connection, and the stop comes
          # while it waits to reconnect (0.5 s, then 1 s, 2 s...) or just after.
          mapfile -t ids < <(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'" 2>/dev/null)
          id=$(_fault_pick "${ids[@]}") || return 1
          root -e "KILL $id" 2>/dev/null || return 1
          local pause
          pause=$(awk -v t=$((1 + RANDOM % 10)) 'BEGIN { printf "%.1f", t / 10 }')
          sleep "$pause"
          local signal=TERM
          ((RANDOM % 2)) && signal=KILL
          _fault_signal_tool "$signal" "after a KILL of the Binlog Dump thread $id and $pause s" || return 1
          ;;
        5)
          root -e 'FLUSH BINARY LOGS' 2>/dev/null || return 1
          _fault_signal_tool KILL "right after FLUSH BINARY LOGS" || fault_note "FLUSH BINARY LOGS"
          ;;
        7)
          $fault_mounted || return 1
          dd if=/dev/zero of="$fault_fs/filler" bs=1M status=none 2>/dev/null
          mapfile -t ids < <(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'" 2>/dev/null)
          id=$(_fault_pick "${ids[@]}") && root -e "KILL $id" 2>/dev/null
          local hold
          hold=$(awk -v t=$((2 + RANDOM % 9)) 'BEGIN { printf "%.1f", t / 10 }')
          sleep "$hold"
          rm -f "$fault_fs/filler"
          fault_note "filesystem full for ${hold}s, and a KILL of the Binlog Dump thread ${id:-(none)} while it was"
          ;;
        6)
          _fault_server_restart || return 1
          sleep "$(awk -v t=$((RANDOM % 8)) 'BEGIN { printf "%.1f", t / 10 }')"
          _fault_signal_tool TERM "while the tools reconnect after a server restart" ||
            fault_note "server killed with SIGKILL and started again"
          ;;
        8) _fault_stall_tool ;;
        9)
          # Where an archive keeps them (grow), the binlogs it has whole are purged: a tool
          # that resumes or reads its deltas from before then reads the archive.
          [[ -n $fault_archive ]] || return 1
          _fault_purge_archived
          ;;
      esac
      ;;
  esac
}

# _fault_signal_tool KILL|TERM [WHY]: the signal to a running tool (cdc-sync: its whole group for
# KILL, the leader for TERM, which it passes on to its tools). A tool the injector stopped with
# TERM is run again as the same command (termed.d): it ended early, on purpose.
_fault_signal_tool() {
  local signal=$1 why=${2:-}
  local running=("$work"/tools.d/*)
  [[ -e ${running[0]} ]] || return 1
  local target id what
  target=$(_fault_pick "${running[@]}")
  id=$(basename "$target")
  what=$(cat "$target" 2>/dev/null) || return 1
  [[ $signal == TERM ]] && : >"$work/termed.d/$id"
  if [[ $what == group* && $signal == KILL ]]; then
    kill -KILL -- "-$id" 2>/dev/null || return 1
  else
    kill "-$signal" "$id" 2>/dev/null || return 1
  fi
  fault_note "SIG$signal to $what (pid $id)${why:+ $why}"
}

# _fault_stall_tool: a running tool stalls (SIGSTOP; cdc-sync: its whole group), as in a paused
# VM or on a blocked disk, for 1.5-3 s while 12 MB go into the binlog (fault_bulk.bulk, which
# no run captures), longer than net_write_timeout (1 s on this server): the server gives up on
# a stalled dump. Then SIGCONT, or a stop at once: SIGTERM (delivered as it goes on) or SIGKILL.
_fault_stall_tool() {
  local running=("$work"/tools.d/*)
  [[ -e ${running[0]} ]] || return 1
  local target id what dest
  target=$(_fault_pick "${running[@]}")
  id=$(basename "$target")
  what=$(cat "$target" 2>/dev/null) || return 1
  dest=$id
  [[ $what == group* ]] && dest=-$id
  local dumps_before dumps_after stall
  dumps_before=$(root -N -e "SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
  kill -STOP -- "$dest" 2>/dev/null || return 1
  root -e "INSERT INTO fault_bulk.bulk (pad) SELECT REPEAT('s', 1000) FROM fault_bulk.seq_1_to_12000" 2>/dev/null
  stall=$(awk -v t=$((15 + RANDOM % 16)) 'BEGIN { printf "%.1f", t / 10 }')
  sleep "$stall"
  dumps_after=$(root -N -e "SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
  local then=SIGCONT
  case $((RANDOM % 3)) in
    1)
      then=SIGTERM
      : >"$work/termed.d/$id"
      kill -TERM "$id" 2>/dev/null
      ;;
    2)
      then=SIGKILL
      kill -KILL -- "$dest" 2>/dev/null
      ;;
  esac
  kill -CONT -- "$dest" 2>/dev/null
  fault_note "stall of $what (pid $id) for $stall s while 12 MB were logged (dump threads before: $dumps_before, after: $dumps_after), then $then"
}

# _fault_purge_archived: FLUSH BINARY LOGS, and once the archive has every file before the
# newest whole (the newest one begun), PURGE BINARY LOGS TO the newest.
_fault_purge_archived() {
  root -e 'FLUSH BINARY LOGS' 2>/dev/null || return 1
  local newest
  newest=$(root -N -e 'SHOW BINARY LOGS' | tail -1 | cut -f1)
  wait_until 20 test -e "$fault_archive/.$newest.partial" -o -e "$fault_archive/$newest" || return 1
  root -e "PURGE BINARY LOGS TO '$newest'" 2>/dev/null || return 1
  fault_note "binlogs purged up to $newest (the archive has them)"
}

# fault_injector_start SEED SECONDS: faults for SECONDS in the background (injector_pid).
fault_injector_start() {
  local seed=$1 seconds=$2
  (
    RANDOM=$seed
    end=$((SECONDS + seconds))
    while ((SECONDS < end)); do _fault_once; done
  ) 2>>"$work/injector.err" &
  injector_pid=$!
}
fault_injector_wait() {
  [[ -n $injector_pid ]] && wait "$injector_pid" 2>/dev/null
  injector_pid=
}

# ---- running the tools under faults ----------------------------------------------------------

# _fault_rerunnable STATUS PID: the status is how this fault kind ends a tool, and running the
# same command again is how a user recovers from it. Waits for the space to come back
# (disk_full). Under composed, a tool the injector stopped with SIGTERM (termed.d/PID) ended
# early whatever its status says: 0 (a clean stop), 143, 75.
_fault_rerunnable() {
  if [[ $fault_kind == composed && -e $work/termed.d/$2 ]]; then
    rm -f "$work/termed.d/$2"
    [[ $1 == 0 || $1 == 143 || $1 == 75 || $1 == 137 ]] && return 0
  fi
  case $fault_kind:$1 in
    tool_kill:137 | composed:137) return 0 ;;
    disk_full:74 | composed:74)
      wait_until 30 test ! -e "$fault_fs/filler"
      return 0
      ;;
  esac
  return 1
}

# _fault_first_connection_failed NAME STATUS [ERR_FILE]: a tool run by hand (not cdc-sync, which
# is to deal with its tools itself) exited 69 because its first connection failed or was lost
# during its start-up queries, which the tools do not retry by design ("exit 69: run again"),
# under server_kill or proxy. A connection lost while streaming is retried by the tool itself
# and ends in "gave up reconnecting", which does not count. ERR_FILE: its stderr (default
# $run_err/NAME.err).
_fault_first_connection_failed() {
  [[ $1 != cdc-sync && $2 == 69 && ($fault_kind == server_kill || $fault_kind == proxy || $fault_kind == composed) ]] || return 1
  local last
  last=$(tail -1 "${3:-$run_err/$1.err}")
  [[ $last == *': error: cannot connect to '* ]] && return 0
  [[ $last != *'gave up reconnecting'* ]] &&
    grep -q -E 'Lost connection|server has gone away|Connection was killed|Server shutdown in progress' <<<"$last"
}

# fault_run NAME [--stdout FILE] CMD...: runs CMD (as cdc, its stdout to FILE, written anew by
# each attempt, else the caller's; its stderr appended to $run_err/NAME.err), again after a
# rerunnable exit (at most 60 times), each attempt bounded to 120 s. Returns the last status;
# prints the failure with stderr.
fault_run() {
  local name=$1 out=
  shift
  if [[ $1 == --stdout ]]; then
    out=$2
    shift 2
  fi
  local attempt pid status
  # This attempt's stderr on its own (two snapshot workers share NAME), then added to NAME.err.
  local attempt_err="$run_err/$name.$BASHPID.attempt"
  for ((attempt = 1; attempt <= 60; attempt++)); do
    if [[ -n $out ]]; then
      MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$@" >"$out" 2>"$attempt_err" &
    else
      MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$@" 2>"$attempt_err" &
    fi
    pid=$!
    echo "$name" >"$work/tools.d/$pid"
    wait_exit "$pid" 120
    rm -f "$work/tools.d/$pid"
    cat "$attempt_err" >>"$run_err/$name.err"
    if [[ $status != still-running ]] && _fault_rerunnable "$status" "$pid"; then
      fault_note "$name exited $status: run again"
      continue
    fi
    [[ $status == 0 ]] && return 0
    # A tool's first connection is not retried (exit 69 "cannot connect to ...", as the man
    # pages say): by hand, with the server restarting or the proxy cutting the handshake, the
    # user runs the command again.
    if _fault_first_connection_failed "$name" "$status" "$attempt_err"; then
      fault_note "$name exited 69 on its first connection: run again"
      sleep 0.5
      continue
    fi
    echo "  $name failed: exit $status (attempt $attempt); its stderr ends:"
    tail -5 "$attempt_err" | sed 's/^/    /'
    [[ $status == still-running ]] && status=124
    return "$status"
  done
  echo "  $name: still failing after 60 attempts"
  return 1
}

# A long-running tool kept alive: keep_start NAME LAUNCHER (LAUNCHER starts it in the background
# with setsid and sets keep_pid); keep_check notices its end and starts it again after a
# rerunnable exit, else sets keep_failed to its status.
keep_name= keep_launcher= keep_pid= keep_failed= keep_status=
keep_start() {
  keep_name=$1 keep_launcher=$2 keep_failed=
  "$keep_launcher"
  fault_groups+=("$keep_pid")
  echo "group $keep_name" >"$work/tools.d/$keep_pid"
}
keep_check() {
  [[ -n $keep_failed || -z $keep_pid ]] && return 0
  kill -0 "$keep_pid" 2>/dev/null && return 0
  local status=0
  wait "$keep_pid" 2>/dev/null || status=$?
  rm -f "$work/tools.d/$keep_pid"
  kill -9 -- "-$keep_pid" 2>/dev/null # what is left of its group
  local keep_pid_was=$keep_pid
  keep_pid=
  if _fault_rerunnable "$status" "$keep_pid_was"; then
    fault_note "$keep_name exited $status: run again"
    keep_start "$keep_name" "$keep_launcher"
  elif _fault_first_connection_failed "$keep_name" "$status"; then
    fault_note "$keep_name exited 69 on its first connection: run again"
    sleep 0.5
    keep_start "$keep_name" "$keep_launcher"
  else
    keep_failed=$status
    echo "  $keep_name exited $status under the faults; its stderr ends:"
    tail -5 "$run_err/$keep_name.err" | sed 's/^/    /'
  fi
}
# keep_while_busy: keep_check until the load and the injector have ended (or the tool failed).
keep_while_busy() {
  while kill -0 "$load_pid" 2>/dev/null || kill -0 "$injector_pid" 2>/dev/null; do
    keep_check
    [[ -n $keep_failed ]] && return 1
    sleep 0.2
  done
  keep_check
  [[ -z $keep_failed ]]
}
# keep_until SECONDS WHAT CMD...: keep_check until CMD succeeds; WHAT names it in the failure.
keep_until() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 5; i++)); do
    "$@" 2>/dev/null && return 0
    keep_check
    [[ -n $keep_failed ]] && return 1
    sleep 0.2
  done
  echo "  $keep_name did not reach $what within $seconds s; its stderr ends:"
  tail -5 "$run_err/$keep_name.err" | sed 's/^/    /'
  return 1
}
# keep_until_text FILE TEXT SECONDS: keep_check until FILE holds TEXT.
keep_until_text() { keep_until "$3" "$2" grep -q -F -- "$2" "$1"; }
# keep_stop: SIGTERM to the tool, its exit status in keep_status (a hang: still-running).
keep_stop() {
  keep_check
  if [[ -z $keep_pid ]]; then
    keep_status=${keep_failed:-gone}
    return
  fi
  kill -TERM "$keep_pid"
  local status
  wait_exit "$keep_pid" 30
  keep_status=$status
  rm -f "$work/tools.d/$keep_pid"
  kill -9 -- "-$keep_pid" 2>/dev/null
  keep_pid=
}

# _fault_reader FILE: for slow_reader, a pipe whose reader (cat >FILE) the injector stops; its
# path on stdout. The reader's pid goes to readers.d.
_fault_reader() {
  local fifo="$work/pipe.$RANDOM$RANDOM"
  mkfifo "$fifo"
  cat "$fifo" >"$1" &
  : >"$work/readers.d/$!"
  bg_pids+=("$!")
  echo "$fifo"
}

# _fault_readers_drain: waits (10 s at most each) for the readers whose writer has ended to
# copy the rest of their pipe; kills one that does not.
_fault_readers_drain() {
  local file pid
  for file in "$work"/readers.d/*; do
    [[ -e $file ]] || continue
    pid=$(basename "$file")
    kill -CONT "$pid" 2>/dev/null
    wait_until 10 bash -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null
    rm -f "$file"
  done
}

# ---- the checks ------------------------------------------------------------------------------

# applied_lines FILE: the lines a consumer applies, as cdc-stream(1) tells it to: span lines
# aside, and a discard line (stdout, after a lost connection) drops the lines since the last
# commit line, which follow again in full. Table lines aside too: a stream that reconnects or
# restarts describes its tables again (cdc-ndjson(5), table).
applied_lines() {
  awk '/^\{"op":"span_/ || /^\{"op":"table",/ { next }
       /^\{"op":"discard",/ { n = 0; discards++; next }
       { held[++n] = $0 }
       /^\{"op":"commit",/ { for (i = 1; i <= n; i++) print held[i]; n = 0 }
       END { for (i = 1; i <= n; i++) print held[i] }' "$1"
}

# fault_check_once NAME FILE FROM UNTIL [TABLES]: FILE's commit GTIDs are exactly those of a
# fault-free cdc-stream --from FROM --until UNTIL over TABLES (default: the run's tables): same
# ones, same order, none twice. The run's archive (grow) gives what the server purged.
fault_check_once() {
  local name=$1 file=$2 from=$3 until=$4 tables=${5:-$run_db.*}
  local ref="$work/ref.$RANDOM.ndjson"
  # The check's own files go under $work: FILE may be on the tmpfs that disk_full fills.
  local got_base="$work/got.$RANDOM"
  if ! MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
      --from "$from" --until "$until" --tables "$tables" ${fault_archive:+--archive-source "$fault_archive"} \
      >"$ref" 2>"$work/ref.err"; then
    fail "$name: the fault-free reference stream failed: $(head -c 400 "$work/ref.err")"
    return
  fi
  commit_gtids "$ref" >"$ref.gtids"
  commit_gtids "$file" >"$got_base.gtids"
  local want got doubled missing extra
  want=$(wc -l <"$ref.gtids")
  got=$(wc -l <"$got_base.gtids")
  doubled=$(sort "$got_base.gtids" | uniq -d)
  missing=$(comm -23 <(sort -u "$ref.gtids") <(sort -u "$got_base.gtids"))
  extra=$(comm -13 <(sort -u "$ref.gtids") <(sort -u "$got_base.gtids"))
  if [[ -z $doubled && -z $missing && -z $extra ]] && cmp -s "$ref.gtids" "$got_base.gtids"; then
    # The same transactions: then the same lines too (a change line written twice inside one
    # transaction, or lost from it, shows here). Span and table lines aside: the fault-free run
    # has its own.
    grep -v -e '^{"op":"span_' -e '^{"op":"table",' "$ref" >"$ref.lines"
    applied_lines "$file" >"$got_base.lines"
    if cmp -s "$ref.lines" "$got_base.lines"; then
      passes=$((passes + 1))
      echo "ok   $name holds each of the $want transactions from $from to $until exactly once, line for line"
      return
    fi
    local at
    at=$(cmp "$ref.lines" "$got_base.lines" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p' | head -1)
    fail "$name: each transaction's commit line once, but the lines differ from the fault-free stream's at line ${at:-?} (span lines aside):"
    echo "  $(wc -l <"$got_base.lines") lines, expected $(wc -l <"$ref.lines")"
    if [[ -n $at ]]; then
      echo "  expected: $(sed -n "${at}p" "$ref.lines" | cut -c1-300)"
      echo "  got:      $(sed -n "${at}p" "$got_base.lines" | cut -c1-300)"
    fi
    return
  fi
  fail "$name: $got transactions, expected $want (from $from to $until)"
  if [[ -n $missing ]]; then
    local first
    first=$(head -1 <<<"$missing")
    echo "  $(wc -l <<<"$missing") lost, the first $first (line $(grep -n -m1 -F "\"gtid\":\"$first\"" "$ref" | cut -d: -f1) of the fault-free stream): $(grep -m1 -B1 -F "\"gtid\":\"$first\"" "$ref" | head -1 | cut -c1-300)"
  fi
  if [[ -n $doubled ]]; then
    local first lines
    first=$(head -1 <<<"$doubled")
    lines=$(grep -n -F "\"op\":\"commit\",\"v\":1,\"gtid\":\"$first\"" "$file" | cut -d: -f1 | tr '\n' ' ')
    echo "  $(wc -l <<<"$doubled") twice, the first $first (commit lines $lines of $file)"
  fi
  [[ -n $extra ]] && echo "  $(wc -l <<<"$extra") not in the range, the first $(head -1 <<<"$extra")"
  if [[ -z $missing && -z $doubled && -z $extra ]]; then
    echo "  the same transactions in another order: first difference $(diff "$ref.gtids" "$got_base.gtids" | head -3 | tr '\n' ' ')"
  fi
}

# fault_check_replay NAME FILES...: the files replay strictly into an empty copy equal to the
# source (db.t and db.marker).
fault_check_replay() {
  local name=$1
  shift
  local copy="copy_$run_db"
  if ! proof_replay "$copy" "$@" 2>"$work/replay.err"; then
    fail "$name: the replay stopped: $(head -c 600 "$work/replay.err")"
    return
  fi
  proof_compare "$run_db.t" "$copy"
  proof_compare "$run_db.marker" "$copy"
  [[ $fault_kind == slow_reader ]] && proof_compare "$run_db.bulk" "$copy"
  [[ $run_db == f_grow_* ]] && proof_compare "$run_db.u" "$copy"
  return 0
}

# fault_check_history NAME MERGED CHUNK_FILE...: proof_check_history from the run's start.
fault_check_history() {
  local name=$1
  shift
  proof_check_history "$name" "$run_start" "$run_db.*" "$@"
}

# fault_expect_exit NAME WANT GOT
fault_expect_exit() {
  if [[ $3 == "$2" ]]; then
    passes=$((passes + 1))
    echo "ok   $1 (exit $3)"
  else
    fail "$1: exit $3, expected $2"
  fi
}

# ---- one run ---------------------------------------------------------------------------------

run_db= run_dir= run_err= run_kind= run_seed= run_start=
# _fault_run_begin MODE SEED: fresh tables, the run's directories, the load, the proxy.
_fault_run_begin() {
  local mode=$1 seed=$2
  local kinds=(int composite varbinary)
  run_seed=$seed
  run_kind=${kinds[seed % 3]}
  run_db="f_${mode}_$seed"
  run_dir="$fault_fs/$run_db"
  run_err="$work/$run_db.err.d"
  fault_log="$work/$run_db.faults"
  mkdir -p "$run_dir" "$run_err"
  : >"$fault_log"
  echo "# $fault_kind, seed $seed, $mode: $run_kind key, $fault_rows rows, load ${fault_load_seconds}s"
  run_start=$(proof_binlog_now) || return 1
  proof_create "$run_kind" "$run_db.t" "$fault_rows" "$seed" || return 1
  root -e "CREATE TABLE \`$run_db\`.marker (id INT PRIMARY KEY)" || return 1
  if [[ $fault_kind == slow_reader ]]; then
    root -e "CREATE TABLE \`$run_db\`.bulk (id INT AUTO_INCREMENT PRIMARY KEY, pad VARCHAR(1000))" || return 1
  fi
  if [[ $fault_kind == proxy ]]; then
    _fault_proxy_stop # the previous run's
    rm -f "$work/proxy.port"
    "$fault_proxy_tool" --target-port "$THROWAWAY_PORT" --seed "$seed" --port-file "$work/proxy.port" \
      --min-interval 0.3 --max-interval 1.2 2>"$run_err/proxy.log" &
    proxy_pid=$!
    wait_until 10 test -s "$work/proxy.port" || { echo "  cdc-test-proxy did not start: $(cat "$run_err/proxy.log")"; return 1; }
    fault_port=$(<"$work/proxy.port")
  fi
  local extra=()
  [[ $fault_kind == server_kill || $fault_kind == composed ]] && extra=(--survive-disconnects 60)
  [[ $fault_kind == slow_reader ]] && extra=(--max-rate 40)
  proof_load_bg "$run_kind" "$run_db.t" "$seed" "$fault_load_seconds" "${extra[@]}"
}
# _fault_proxy_stop: ends the run's proxy (the tools are done with it).
_fault_proxy_stop() {
  [[ -n $proxy_pid ]] || return 0
  kill -TERM "$proxy_pid" 2>/dev/null
  wait "$proxy_pid" 2>/dev/null
  proxy_pid=
}
# _fault_run_end: ends the faults (the proxy goes on forwarding: SIGUSR1), waits for the load;
# the faults of the run on stdout.
_fault_run_end() {
  local n
  if [[ -n $proxy_pid ]]; then
    kill -USR1 "$proxy_pid" 2>/dev/null
    wait_until 5 grep -q 'no more faults' "$run_err/proxy.log"
    grep 'fault [0-9]*:' "$run_err/proxy.log" >>"$fault_log"
  fi
  fault_injector_wait
  proof_wait_load || { fail "the load failed"; }
  n=$(grep -c . "$fault_log")
  fault_total=$((fault_total + $(grep -v -c -e ': run again$' "$fault_log")))
  echo "  $n fault lines in this run:"
  sed 's/^/    /' "$fault_log" | head -40
  ((n > 40)) && echo "    ..."
}
# _fault_marker: one row in db.marker after the load; the server's position after it.
_fault_marker() {
  root -e "INSERT INTO \`$run_db\`.marker VALUES ($run_seed)" || return 1
  gtid_pos
}

# fault_by_sync SEED: cdc-sync -j 2 --output under the faults.
_sync_out=
_launch_sync() {
  local out_args=(--output "$_sync_out")
  if [[ $fault_kind == slow_reader ]]; then
    out_args=()
    local fifo
    fifo=$(_fault_reader "$_sync_out")
    MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_tool" $(fault_connection) --tables "$run_db.*" --dir "$run_dir/sync" --mode initial -j 2 \
      --chunk-size "$fault_chunk_size" --no-progress >"$fifo" 2>>"$run_err/cdc-sync.err" &
  else
    MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_tool" $(fault_connection) --tables "$run_db.*" --dir "$run_dir/sync" --mode initial -j 2 \
      --chunk-size "$fault_chunk_size" --no-progress "${out_args[@]}" >/dev/null 2>>"$run_err/cdc-sync.err" &
  fi
  keep_pid=$!
}
fault_by_sync() {
  local seed=$1
  _fault_run_begin sync "$seed" || return 1
  _sync_out="$run_dir/out.ndjson"
  fault_injector_start "$seed" "$fault_load_seconds"
  keep_start cdc-sync _launch_sync
  keep_while_busy
  _fault_run_end
  if [[ -n $keep_failed ]]; then
    fail "cdc-sync under $fault_kind exited $keep_failed"
    return 1
  fi
  # The marker only after H* is fixed (the merged snapshot is there): a snapshot the faults
  # slowed past the load would otherwise take the marker in, and the stream never shows it.
  if ! keep_until 300 "its merged snapshot" test -e "$run_dir/sync/snapshot.ndjson"; then
    keep_stop
    fail "cdc-sync did not finish its snapshot"
    return 1
  fi
  local until_pos
  until_pos=$(_fault_marker) || return 1
  if ! keep_until_text "$_sync_out" "\"position\":\"$until_pos\"" 120; then
    keep_stop
    fail "cdc-sync did not stream up to $until_pos"
    return 1
  fi
  keep_stop
  _fault_readers_drain
  fault_expect_exit "cdc-sync stops on SIGTERM after the faults" 0 "$keep_status"
  local high span_from span_until
  high=$(jq -r 'select(.op=="high").position' "$run_dir/sync/snapshot.ndjson")
  read -r span_from span_until <"$run_dir/sync/span"
  fault_check_once "cdc-sync's deltas" "$run_dir/sync/deltas.ndjson" "$span_from" "$span_until"
  if [[ $fault_kind == slow_reader ]]; then
    # stdout: the merged snapshot, then the stream from its high line on.
    awk 'streaming { print } /^\{"op":"high"/ { streaming = 1 }' "$_sync_out" >"$_sync_out.stream"
    fault_check_once "cdc-sync's stdout after the snapshot" "$_sync_out.stream" "$high" "$until_pos"
  else
    fault_check_once "cdc-sync --output" "$_sync_out" "$high" "$until_pos"
  fi
  if [[ $fault_kind == slow_reader ]]; then
    fault_check_replay "cdc-sync's stdout" "$_sync_out"
  else
    fault_check_replay "cdc-sync's snapshot and --output" "$run_dir/sync/snapshot.ndjson" "$_sync_out"
  fi
  fault_check_history "cdc-sync's chunks and merged snapshot" "$run_dir/sync/snapshot.ndjson" "$run_dir"/sync/chunks/*.ndjson
}

# fault_by_tools SEED: the four tools by hand under the faults.
_snapshot_worker() { # PLAN_PART: one chunk line at a time
  local line part="$1" k=0 status=0
  while IFS= read -r line; do
    [[ -n $line ]] || continue
    k=$((k + 1))
    printf '%s\n' "$line" >"$part.$k"
    fault_run cdc-snapshot "$snapshot_tool" $(fault_connection) --output-dir "$run_dir/chunks" "$part.$k" || return
    sleep "0.0$((RANDOM % 10 + 2))"
  done <"$part"
}
# _stream_to NAME FILE ARGS...: cdc-stream ARGS --state NAME.state, into FILE (--output, or
# stdout through a stoppable reader for slow_reader).
_stream_to() {
  local name=$1 file=$2
  shift 2
  if [[ $fault_kind == slow_reader ]]; then
    local fifo
    fifo=$(_fault_reader "$file")
    fault_run "$name" "$stream" $(fault_connection) --tables "$run_db.*" --state "$run_dir/$name.state" "$@" >"$fifo"
  else
    fault_run "$name" "$stream" $(fault_connection) --tables "$run_db.*" --state "$run_dir/$name.state" \
      --output "$file" "$@"
  fi
}
_tail_from=
_launch_tail() {
  local out_args=(--output "$run_dir/tail.ndjson") target=/dev/null
  if [[ $fault_kind == slow_reader ]]; then
    out_args=()
    target=$(_fault_reader "$run_dir/tail.ndjson")
  fi
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$stream" $(fault_connection) --tables "$run_db.*" --from "$_tail_from" --state "$run_dir/tail.state" \
    "${out_args[@]}" >"$target" 2>>"$run_err/cdc-stream-tail.err" &
  keep_pid=$!
}
fault_by_tools() {
  local seed=$1
  _fault_run_begin tools "$seed" || return 1
  mkdir -p "$run_dir/chunks"
  fault_injector_start "$seed" "$fault_load_seconds"
  local ok=true
  RANDOM=$seed
  if fault_run cdc-plan --stdout "$work/$run_db.plan.ndjson" "$plan_tool" $(fault_connection) --tables "$run_db.*" \
      --chunk-size "$fault_chunk_size"; then
    split -n r/2 "$work/$run_db.plan.ndjson" "$work/$run_db.plan.part."
    local p1 p2 s1=0 s2=0
    _snapshot_worker "$work/$run_db.plan.part.aa" &
    p1=$!
    _snapshot_worker "$work/$run_db.plan.part.ab" &
    p2=$!
    wait "$p1" || s1=$?
    wait "$p2" || s2=$?
    ((s1 == 0 && s2 == 0)) || ok=false
  else
    ok=false
  fi
  local span_from span_until high
  if $ok; then
    if fault_run cdc-merge-span --stdout "$work/$run_db.span" "$merge_tool" --span "$run_dir"/chunks/* &&
      read -r span_from span_until <"$work/$run_db.span" && [[ -n $span_until ]]; then
      echo "  $(wc -l <"$work/$run_db.plan.ndjson") chunks, span $span_from .. $span_until"
      _stream_to cdc-stream-deltas "$run_dir/deltas.ndjson" --from "$span_from" --until "$span_until" || ok=false
      _fault_readers_drain
    else
      echo "  cdc-merge --span failed"
      ok=false
    fi
  fi
  if $ok; then
    if fault_run cdc-merge --stdout "$run_dir/merged.ndjson" "$merge_tool" "$run_dir"/chunks/* \
      --deltas "$run_dir/deltas.ndjson"; then
      high=$(jq -r 'select(.op=="high").position' "$run_dir/merged.ndjson")
      _tail_from=$high
      keep_start cdc-stream-tail _launch_tail
      keep_while_busy || ok=false
    else
      ok=false
    fi
  fi
  # Stop the faults either way before the checks.
  while kill -0 "$load_pid" 2>/dev/null || kill -0 "$injector_pid" 2>/dev/null; do sleep 0.2; done
  _fault_run_end
  if ! $ok; then
    [[ -n $keep_pid ]] && keep_stop
    fail "the tools by hand under $fault_kind: a tool failed (above)"
    return 1
  fi
  local until_pos
  until_pos=$(_fault_marker) || return 1
  if ! keep_until_text "$run_dir/tail.ndjson" "\"position\":\"$until_pos\"" 120; then
    keep_stop
    fail "the tail stream did not reach $until_pos"
    return 1
  fi
  keep_stop
  _fault_readers_drain
  fault_expect_exit "the tail cdc-stream stops on SIGTERM after the faults" 0 "$keep_status"
  fault_check_once "the deltas (cdc-stream --until)" "$run_dir/deltas.ndjson" "$span_from" "$span_until"
  fault_check_once "the tail (cdc-stream from the merged high)" "$run_dir/tail.ndjson" "$high" "$until_pos"
  fault_check_replay "the merged snapshot and the tail" "$run_dir/merged.ndjson" "$run_dir/tail.ndjson"
  fault_check_history "the chunks and the merged snapshot" "$run_dir/merged.ndjson" "$run_dir"/chunks/*.ndjson
}

# The composed kind's third run, fault_by_grow: tests/integration/composed_grow_lib.sh.
source "$(dirname "${BASH_SOURCE[0]}")/composed_grow_lib.sh"

# ---- the test --------------------------------------------------------------------------------

# _fault_fs_release RUN: the small tmpfs of disk_full holds one run at a time; the run's files
# leave it (moved under $work when CDC_KEEP_WORK asks to keep them).
_fault_fs_release() {
  [[ $fault_kind == disk_full || $fault_kind == composed ]] || return 0
  if [[ -n ${CDC_KEEP_WORK:-} ]]; then
    mv "$fault_fs/$1" "$work/$1.files" 2>/dev/null
  fi
  rm -rf "${fault_fs:?}/$1"
}

# fault_main KIND: both runs for every seed under faults of KIND; the test's result.
fault_main() {
  fault_kind=$1
  # Bash reports each background job that a signal ended ("...: line N: PID Killed   CMD") on
  # its stderr when it reaps it, whatever `wait` is redirected to; the faults kill tools by the
  # dozen: keep those reports out, and everything else.
  exec 2> >(grep --line-buffered -v -E '^[^ ]+: line [0-9]+: +[0-9]+ Killed  ' >&2)
  proof_require_tools
  if [[ $fault_kind == proxy && ! -x $fault_proxy_tool ]]; then
    echo "FAIL the test tool $fault_proxy_tool is not built (target cdc-test-proxy)"
    exit 1
  fi
  mkdir -p "$work/tools.d" "$work/readers.d" "$work/termed.d"
  fault_fs="$work/fs"
  mkdir -p "$fault_fs"
  if [[ $fault_kind == disk_full ]]; then
    if ! mount -t tmpfs -o size=128m tmpfs "$fault_fs" 2>"$work/mount.err"; then
      echo "skipped: cannot mount a tmpfs for the full-filesystem faults (needs root): $(cat "$work/mount.err")"
      exit 77
    fi
    fault_mounted=true
  elif [[ $fault_kind == composed ]]; then
    # The full filesystem is one composition of several: without root it is left out.
    if mount -t tmpfs -o size=128m tmpfs "$fault_fs" 2>"$work/mount.err"; then
      fault_mounted=true
    else
      echo "  (no tmpfs for the full-filesystem composition: $(cat "$work/mount.err"))"
    fi
  fi
  local server_opts=()
  if [[ $fault_kind == conn_kill ]]; then
    fault_rows=${CDC_FAULT_ROWS:-8000}
    fault_chunk_size=${CDC_FAULT_CHUNK_SIZE:-40}
  fi
  if [[ $fault_kind == slow_reader ]]; then
    server_opts=(--net-write-timeout=1)
    fault_load_seconds=${CDC_FAULT_LOAD_SECONDS:-16}
  fi
  [[ $fault_kind == composed ]] && server_opts=(--net-write-timeout=1)
  throwaway_start "$srv" "${server_opts[@]}" || exit 1
  if [[ $fault_kind == composed ]]; then
    root -e 'CREATE DATABASE fault_bulk; CREATE TABLE fault_bulk.bulk (id INT AUTO_INCREMENT PRIMARY KEY, pad VARCHAR(1000))' || exit 1
  fi
  fault_port=$THROWAWAY_PORT
  # The server the faults kill is then no job of this shell's: no "Killed" report for it.
  [[ $fault_kind == server_kill || $fault_kind == composed ]] && disown -a
  mapfile -d '' -t fault_server_argv <"/proc/$(cat "$srv/launcher.pid")/cmdline"
  local seed started=$SECONDS
  local seeds=($fault_seeds) i
  local configured=${#seeds[@]}
  # Faults come at random moments while a flow runs, so a quick machine fits fewer in: up to 4
  # more seeds until fault_min is met, rather than a count that depends on the machine's speed.
  for i in 1 2 3 4; do seeds+=($((${seeds[-1]} + 1))); done
  for ((i = 0; i < ${#seeds[@]}; i++)); do
    ((i >= configured && fault_total >= fault_min)) && break
    seed=${seeds[i]}
    fault_by_sync "$seed" || echo "  (the sync run of seed $seed stopped early)"
    _fault_fs_release "f_sync_$seed"
    fault_by_tools "$seed" || echo "  (the tools run of seed $seed stopped early)"
    _fault_fs_release "f_tools_$seed"
    if [[ $fault_kind == composed ]]; then
      fault_by_grow "$seed" || echo "  (the grow run of seed $seed stopped early)"
      _fault_fs_release "f_grow_$seed"
    fi
  done
  # The faults had their effect: a full filesystem made a tool exit 74; a stopped reader made
  # the server drop the dump connection (another Binlog Dump thread, or none, afterwards).
  local effect
  case $fault_kind in
    disk_full)
      effect=$(cat "$work"/*.faults | grep -c 'exited 74: run again')
      assert "a full filesystem made a tool exit 74 ($effect times)" test "$effect" -gt 0
      ;;
    slow_reader)
      effect=$(cat "$work"/*.faults | grep 'dump threads before: [0-9]' | grep -v -c -E 'before: ([0-9,]+), after: \1\)')
      assert "a stopped reader made the server drop the dump connection ($effect times)" test "$effect" -gt 0
      ;;
    composed)
      # How many of each composition; the one issue 29 is about must be among them.
      local faults="$work/all.faults" kind count summary=
      cat "$work"/*.faults >"$faults"
      for kind in 'Binlog Dump KILL alone:^KILL of the Binlog Dump' 'connection KILL:^KILL of connection' \
        'SIGKILL alone:^SIGKILL to [^ ]+ [^ ]+ \(pid [0-9]+\)$' \
        'dump KILL then SIGTERM:^SIGTERM to .* after a KILL of the Binlog Dump' \
        'dump KILL then SIGKILL:^SIGKILL to .* after a KILL of the Binlog Dump' \
        'FLUSH BINARY LOGS then SIGKILL:right after FLUSH BINARY LOGS' \
        'server restart then SIGTERM:while the tools reconnect after a server restart' \
        'full filesystem and a dump KILL:^filesystem full for' 'exit 74 run again:exited 74: run again' \
        'stall then SIGCONT:^stall of .*then SIGCONT$' 'stall then a stop:^stall of .*then SIG(TERM|KILL)$' \
        'binlogs purged:^binlogs purged' \
        'tool run again:exited [0-9]+: run again'; do
        count=$(grep -c -E "${kind#*:}" "$faults")
        summary+="${summary:+, }${kind%%:*} $count"
      done
      echo "  faults of each composition: $summary"
      effect=$(grep '^stall of .*dump threads before: [0-9]' "$faults" | grep -v -c -E 'before: ([0-9,]+), after: \1\)')
      echo "  stalls in which the server dropped a stalled dump: $effect"
      effect=$(grep -c -E 'after a KILL of the Binlog Dump' "$faults")
      assert "a stop came inside a reconnect ($effect times)" test "$effect" -gt 0
      ;;
  esac
  if ((fault_total >= fault_min)); then
    passes=$((passes + 1))
    echo "ok   $fault_total faults of kind $fault_kind injected (at least $fault_min)"
  else
    fail "only $fault_total faults of kind $fault_kind injected, fewer than $fault_min"
  fi
  echo "  whole test: $((SECONDS - started)) s"
  finish
}
