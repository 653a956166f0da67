#pragma once

// The snapshot steps of man cdc-sync's flow on one state directory: the plan's chunks read by
// -j cdc-snapshot processes (or by --snapshot-command, sync/snapshot_command.h), their span,
// the deltas, the merge and the snapshot out. DIR for the first snapshot; DIR/add.N for the
// tables an addition brings (sync/add_flow.h). Each step leaves its file in the directory
// (sync/state_dir.h), so that sync/resume.h and sync/add_resume.h can tell what is done.

#include <string>
#include <string_view>
#include <utility>

#include "sync/runner.h"
#include "sync/state_dir.h"

namespace cdc::sync {

class SnapshotSteps {
 public:
  // filter: the tables of the deltas. addition: the snapshot of an addition's new tables,
  // whose deltas are read while the stream of the other tables runs (Runner::streaming's
  // beside_stream), and whose chunk reads count as the add_snapshot phase in --metrics.
  SnapshotSteps(Runner& runner, const SyncState& dir, TableSelection filter, bool addition)
      : runner_(runner), dir_(dir), filter_(std::move(filter)), addition_(addition) {}

  // cdc-plan over these tables, with the run's --chunk-size and these --chunk-key values, into
  // DIR/name, whole.
  Stop plan(const TableSelection& tables, const std::vector<std::string>& chunk_keys, std::string_view name);
  Stop read_chunks();
  Stop span();
  Stop read_deltas();
  // deltas_rejected: how often cdc-merge's check refused the deltas in this run.
  Stop merge(int& deltas_rejected);
  // The whole snapshot to stdout (output ""), or copied to output whole; converted with
  // --format.
  Stop emit(const std::string& output);

  // The position of snapshot.ndjson's high line.
  [[nodiscard]] std::pair<std::string, Stop> read_high();
  // The lowest low watermark, once the span is known ("" before).
  [[nodiscard]] std::string lowest_low() const;

 private:
  void count_chunks();
  void remove_parts();
  int read_chunks_once(std::uint64_t total);
  int start_local_workers(std::uint64_t total);
  int start_command_workers(std::uint64_t total, std::vector<std::string>& commands);
  int start_worker(ChildSpec spec, bool own_process_group);
  // The chunk files of the plan's chunks that are not in DIR/chunks.
  [[nodiscard]] Result<std::vector<std::string>> missing_chunks() const;
  [[nodiscard]] std::vector<std::string> merge_inputs(std::vector<std::string> argv) const;
  bool deltas_pass_check();
  [[nodiscard]] std::string first_line_of(std::string_view name) const;
  void copy_to_stderr(std::string_view name);
  [[nodiscard]] Result<void> copy_snapshot(int in, std::string_view source, int out, std::string_view out_name) const;

  Runner& runner_;
  const SyncState& dir_;
  TableSelection filter_;
  bool addition_;
};

}  // namespace cdc::sync
