// LiveRun's reading of positions the server purged from an archive (--archive-source, or the
// run's own --archive), through the same decoder, pipeline and checkpoints as a dump.

#include <fmt/format.h>

#include "binlog/event_header.h"
#include "stream/live_run.h"

namespace cdc::stream {

Result<std::optional<LiveOutcome>> LiveRun::replay_archive(const Error& purged) {
  const std::string before = checkpoint_.position().to_string();
  if (archive_)
    if (auto synced = archive_->sync(); !synced) return fail(std::move(synced).error());
  auto source = ArchiveSource::open(*source_dir_);
  if (!source) return fail(std::move(source).error());
  gtid::FilePosition end;
  auto outcome = replay_pass(*source, purged, std::nullopt, end);
  if (!outcome || *outcome) return outcome;
  if (pipeline_->tracker().in_transaction()) {
    const gtid::FilePosition boundary = last_boundary_;
    if (auto rolled_back = roll_back(fmt::format("the archive in {} ends inside this transaction, at {}:{}; it comes "
                                                 "again from the server",
                                                 source->dir(), end.file, end.offset));
        !rolled_back)
      return fail(std::move(rolled_back).error());
    if (checkpoint_.file_position() < boundary) {
      outcome = replay_pass(*source, purged, boundary, end);
      if (!outcome || *outcome) return outcome;
    }
  }
  // Without a pipeline, rolled back above and not read again: the checkpoint is where it was.
  if (pipeline_ && !pipeline_->tracker().in_transaction())
    if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
  const std::string after = checkpoint_.position().to_string();
  if (after == before)
    return fail(Error{Errc::purged, fmt::format("{}; the archive in {} ({}) holds nothing after it either",
                                                purged.message, source->dir(), source->range_text())});
  reporter_.notice(
      fmt::format("read the archive up to {}:{}; going on from the server at {}", end.file, end.offset, after));
  return std::optional<LiveOutcome>{};
}

Result<std::optional<LiveOutcome>> LiveRun::replay_pass(const ArchiveSource& source, const Error& purged,
                                                        const std::optional<gtid::FilePosition>& stop,
                                                        gtid::FilePosition& end) {
  const std::string from = checkpoint_.position().to_string();
  auto start = source.locate(checkpoint_.position());
  if (!start) return fail(std::move(start).error());
  if (!*start)
    return fail(Error{Errc::purged, fmt::format("{}; the archive in {} has {}, which does not go back to {} or "
                                                "holds nothing after it",
                                                purged.message, source.dir(), source.range_text(), from)});
  if (!stop)
    reporter_.notice(
        fmt::format("the server no longer has the binlog for {}; reading it from the archive in {} "
                    "({}) from {}:{}",
                    from, source.dir(), source.range_text(), (*start)->file, (*start)->offset));
  // As a new connection does, but from the start of the archived file, silently up to the
  // position: the file's header gives the GTID state.
  decoder_ = binlog::Decoder((*start)->file);
  pipeline_.emplace(filter_, writer_, decoder_, reporter_.warn, options_.skip_unknown_events);
  transactions_saved_ = 0;
  dirty_ = false;
  install_hooks();
  silent_until_.reset();
  pipeline_->start_file((*start)->file);
  if ((*start)->offset > binlog::kBinlogMagicSize) {
    silent_until_ = **start;
    pipeline_->set_silent(true);
  }
  last_boundary_ = checkpoint_.file_position();
  replaying_ = true;
  auto outcome = replay_files(source, (*start)->file, stop, end);
  replaying_ = false;
  if (!outcome || *outcome) return outcome;
  if (silent_until_)
    return fail(Error{Errc::purged, fmt::format("{}; the archive in {} ends at {}:{}, before it", purged.message,
                                                source.dir(), end.file, end.offset)});
  return outcome;
}

Result<std::optional<LiveOutcome>> LiveRun::replay_files(const ArchiveSource& source, const std::string& first,
                                                         const std::optional<gtid::FilePosition>& stop,
                                                         gtid::FilePosition& end) {
  for (const auto& file : source.files_from(first)) {
    if (stop && gtid::FilePosition{stop->file, 0} < gtid::FilePosition{file.name, 0}) break;
    auto reader = ArchiveSource::read(file, source.dir());
    if (!reader) return fail(std::move(reader).error());
    if (file.name != first) {
      // A file that ends without a ROTATE (a server restart) is followed all the same.
      pipeline_->start_file(file.name);
      decoder_.forget_tables();
    }
    decoder_.set_source_name(file.name);
    const ChangeWriter::InputScope input_scope(writer_, reader->block());
    end = gtid::FilePosition{file.name, binlog::kBinlogMagicSize};
    for (;;) {
      if (stop && stop->file == file.name && reader->position() >= stop->offset) return std::optional<LiveOutcome>{};
      auto next = reader->next();
      if (!next) return fail(std::move(next).error());
      if (!*next) break;
      if (auto opened = open_span_when_pending(); !opened) return fail(std::move(opened).error());
      auto outcome = handle_event((*next)->bytes);
      if (!outcome) return fail(std::move(outcome).error());
      if (*outcome) return outcome;
      end.offset = reader->position();
    }
  }
  return std::optional<LiveOutcome>{};
}

}  // namespace cdc::stream
