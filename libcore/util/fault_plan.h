#pragma once

#include <cstdint>
#include <string_view>

namespace cdc::fault {

// Deterministic fault injection for the crash-point exploration (tests/integration/
// crash_points.py): a test names the steps at which a tool must fail, and the same plan
// fails it at the same steps on every run, so a failing schedule replays.
//
//   CDC_FAULT_PLAN="[PROGRAM@]POINT:N=ACTION[,...]"
//
// makes the Nth pass (from 1) of this process through POINT do ACTION; with PROGRAM@ only in
// processes of that name (cdc-sync passes the plan on to the tools it runs, each counting its
// own passes):
//   kill   SIGKILL to the process itself: a crash, a host that loses power;
//   term   SIGTERM to the process itself: an operator's stop, systemd's, at exactly that step;
//   drop   the caller loses its connection there, as if the network had dropped it;
//   tear   at a write: half of the bytes are written, then SIGKILL (a torn line).
// CDC_FAULT_TRACE=FILE appends "PROGRAM@POINT N" for every pass, so that a test learns how many
// steps a run has before it plans faults at each of them.
//
// The points (cdc-stream(1) FAULTS names them for the tests; users never set these):
//   stream.connect    a connection to the server is about to be opened (the first and each reconnect)
//   stream.event      an event was received, before it is handled
//   stream.reconnect  a lost connection was rolled back to the checkpoint, before the pause
//   stream.pause      each 50 ms tick of a reconnect pause
//   stream.commit     a checkpoint is about to be taken: the output flushed, the state not yet saved
//   state.save        the new state is written and synced beside the old one, not yet renamed over it
//   state.saved       the new state is in place
//   write             a write to a file or pipe, before it (tear: half of it)
//   sync.save         cdc-sync: a file of its state directory is written and synced, not yet renamed
//   sync.saved        cdc-sync: it is in place
//   sync.tool         cdc-sync: a tool is about to be started
//   snapshot.chunk    cdc-snapshot: a try at a chunk begins (drop: its connection is lost there)
//   snapshot.rows     cdc-snapshot: a batch of a chunk's rows is about to be written (drop: the
//                     connection is lost with the chunk half read)
// Without CDC_FAULT_PLAN and CDC_FAULT_TRACE a point costs one load of a flag.

enum class Action : std::uint8_t { none, drop, tear };

// Counts a pass through `point` and carries out kill and term itself; returns drop or tear for
// the caller to carry out, or none.
[[nodiscard]] Action at(std::string_view point) noexcept;

// Whether any plan or trace is set (read once, at the first call).
[[nodiscard]] bool enabled() noexcept;

// CDC_FAULT_TIME_SCALE=N (with a plan or trace): pauses (a reconnect's back-off, a snapshot's
// wait before it reads a chunk again) last 1/N of
// their time, in as many steps, so that an exploration of thousands of schedules does not
// spend its time waiting. 1 otherwise.
[[nodiscard]] unsigned time_scale() noexcept;

}  // namespace cdc::fault
