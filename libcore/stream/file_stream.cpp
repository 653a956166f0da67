#include "stream/file_stream.h"

#include <fmt/format.h>

#include "binlog/decoder.h"
#include "binlog/file_reader.h"
#include "stream/change_pipeline.h"
#include "stream/change_writer.h"
#include "stream/side_connection.h"
#include "stream/time_position.h"

namespace cdc::stream {

namespace {

std::string base_name(const std::string& path) {
  if (path == "-") return "stdin";
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class FileRun {
 public:
  FileRun(const FileOptions& options, TableFilter filter, int out_fd, const std::function<void(std::string_view)>& warn,
          const std::function<void(std::string_view)>& notice, std::unique_ptr<output::Converter> converter)
      : options_(options),
        writer_(out_fd, "stdout"),
        warn_(warn),
        notice_(notice),
        pipeline_(std::move(filter), writer_, decoder_, warn, options.skip_unknown_events) {
    // Files are read once, with no reconnect to roll back: lines go out as they are converted.
    writer_.set_converter(std::move(converter), false);
    if (options_.output.include_query) writer_.include_queries();
    if (!options_.wheres.empty()) writer_.set_row_filters(options_.wheres);
    if (!options_.columns.empty()) writer_.set_column_choices(options_.columns);
    if (options_.rows_thread_min_bytes) {
      writer_.use_rows_thread(*options_.rows_thread_min_bytes);
      // Its counts are read at the end (run()).
      writer_.judge_rows_on_rows_thread(options_.judge_here_in_flight);
    }
    if (options_.from_time || options_.until_time)
      pipeline_.set_transaction_gate([this](const TransactionStart& start) { return pass_gate(start); });
    before_from_ = options_.from_time.has_value();
    if (options_.catalog) use_catalog(*options_.catalog);
  }

  Result<FileSummary> run() {
    bool stopped = false;
    auto first_file = first_file_for_from();
    if (!first_file) return fail(std::move(first_file).error());
    for (std::size_t i = *first_file; i < options_.files.size() && !stopped; ++i) {
      const bool first = i == 0;
      const bool last = i + 1 == options_.files.size();
      auto done = run_file(options_.files[i], first ? options_.start_position : std::nullopt,
                           last ? options_.stop_position : std::nullopt);
      if (!done) {
        (void)writer_.flush();
        return fail(std::move(done).error());
      }
      stopped = *done;  // stop position reached
    }
    if (auto finished = writer_.finish(); !finished) return fail(std::move(finished).error());
    pipeline_.warn_at_end();
    if (before_from_)
      notify(fmt::format("--from {}: nothing in the files was committed at or after it", format_time(*options_.from_time)));
    // What the rows thread judged under --where, and wrote, is known now that it is drained.
    const JudgedCounts judged = writer_.judged_counts();
    if (auto open = pipeline_.open_transaction(); open && !stopped) {
      open->rows += judged.open_rows;
      if (auto ended = end_inside_transaction(*open); !ended) return fail(std::move(ended).error());
    }
    const StreamSummary& summary = pipeline_.summary();
    return FileSummary{summary.events, summary.rows + judged.rows, summary.transactions + judged.transactions,
                       summary.skipped_events};
  }

 private:
  // --from TIME: the file it falls in (the last opened before it; cdc-stream(1), POSITIONS
  // BY TIME); the files before it are not read. Stdin cannot be searched.
  Result<std::size_t> first_file_for_from() const {
    if (!options_.from_time || options_.files.size() < 2) return 0;
    for (const auto& path : options_.files)
      if (path == "-") return 0;
    return file_for_time(options_.files.size(), *options_.from_time, [this](std::size_t i) -> Result<FileOpening> {
      auto reader = binlog::FileReader::open(options_.files[i]);
      if (!reader) return fail(std::move(reader).error());
      FileOpeningReader opening;
      for (;;) {
        auto raw = reader->next();
        if (!raw) return fail(std::move(raw).error());
        if (!*raw) break;
        auto done = opening.add((*raw)->bytes);
        if (!done) return fail(std::move(done).error().with_context(reader->name()));
        if (*done) break;
      }
      if (!opening.has_time())
        return fail(Errc::corrupt_input, fmt::format("{}: its first events carry no timestamp to search --from by",
                                                     reader->name()));
      return opening.opening();
    });
  }

  // --catalog: each map of a selected table is completed from information_schema as a live
  // stream completes it (live_stream.cpp), by what the map lacks rather than by the server's
  // setting, since files may come from several servers.
  void use_catalog(const mysql::ConnectionOptions& connection) {
    catalog_.emplace(connection, warn_);
    pipeline_.set_table_map_hook([this](binlog::TableMap& map) {
      if (map.has_column_names())
        catalog_->add_column_types(map);
      else
        catalog_->complete_from_catalog(map, pipeline_.file());
    });
    pipeline_.set_ddl_listener([this](std::string_view database, std::string_view sql) {
      // Maps from before a DDL must not be completed by the schema after it.
      decoder_.forget_tables();
      catalog_->forget_schema_of(database, sql, pipeline_.file(), false);
    });
  }

  // The transaction gate of --from and --until TIME.
  bool pass_gate(const TransactionStart& start) {
    if (options_.until_time && !(start.committed < *options_.until_time)) {
      notify(fmt::format("reached --until {}: the next transaction, at {}:{}, committed {}",
                         format_time(*options_.until_time), start.file, start.offset, format_time(start.committed)));
      return false;
    }
    if (before_from_ && !(start.committed < *options_.from_time)) {
      before_from_ = false;
      pipeline_.set_silent(false);
      notify(fmt::format("--from {}: the first transaction committed at or after it is at {}:{} (committed {})",
                         format_time(*options_.from_time), start.file, start.offset, format_time(start.committed)));
    }
    return true;
  }

  void notify(std::string_view message) const {
    if (notice_) notice_(message);
  }

  // Returns true when the stop position was reached.
  Result<bool> run_file(const std::string& path, std::optional<std::uint64_t> start, std::optional<std::uint64_t> stop) {
    auto reader = binlog::FileReader::open(path);
    if (!reader) return fail(std::move(reader).error());
    decoder_.set_source_name(reader->name());
    decoder_.forget_tables();
    // The rows thread takes the rows events of this file in place, in the reader's blocks.
    const ChangeWriter::InputScope input_scope(writer_, reader->block());
    pipeline_.start_file(base_name(path));
    // --start-position: the events before it are decoded without writing anything, so the
    // GTID state at the start position is complete (the file's PREVIOUS_GTIDS plus every
    // transaction up to there) and positions on the lines after it resume correctly.
    pipeline_.set_silent(before_from_ || (start.has_value() && *start > 4));
    for (;;) {
      auto raw = reader->next();
      if (!raw) return fail(std::move(raw).error());
      if (!*raw) break;
      const binlog::RawEvent event = **raw;
      const std::uint64_t end_offset = event.offset + event.bytes.size();
      if (start && event.offset < *start && end_offset > *start)
        return fail(Errc::usage, fmt::format("{}: start position {} is inside the event at {} ({} bytes): give the "
                                             "offset of an event, as mysqlbinlog prints them",
                                             reader->name(), *start, event.offset, event.bytes.size()));
      if (start && event.offset == *start) pipeline_.set_silent(before_from_);
      if (stop && event.offset >= *stop) return true;
      auto decoded = decoder_.decode(event.bytes, event.offset);
      if (!decoded) return fail(std::move(decoded).error());
      auto handled = pipeline_.handle(*decoded, end_offset);
      if (!handled) return fail(std::move(handled).error());
      if (handled->stopped_before_transaction) return true;
    }
    if (start && reader->position() < *start)
      return fail(Errc::usage, fmt::format("{}: start position {} is beyond the end of the file ({} bytes)",
                                           reader->name(), *start, reader->position()));
    pipeline_.set_silent(before_from_);
    last_file_ = reader->name();
    last_file_end_ = reader->position();
    last_file_in_use_ = reader->in_use();
    if (reader->torn_tail_bytes() > 0)
      warn_(fmt::format("{}:{}: the file ends inside an event ({} bytes); the server still had it open, so decoding "
                        "ends at the last whole event",
                        reader->name(), reader->position(), reader->torn_tail_bytes()));
    return false;
  }

  // The input ended after the start of a transaction and before its commit. Its lines are
  // out (a transaction is never held back whole: memory stays bounded) and have no commit
  // line. A file the server still writes (LOG_EVENT_BINLOG_IN_USE_F) is read up to where the
  // server is: a warning. A closed file never ends inside a transaction, so it was cut short:
  // with rows of that transaction in the output, an error (exit 65, as a cut inside an event
  // is), since they must not be applied; with none, a warning (a piece cut from a binlog).
  Result<void> end_inside_transaction(const OpenTransaction& open) const {
    const std::string transaction =
        open.gtid.empty() ? fmt::format("a transaction without a GTID (begun at {}:{})", open.file, open.offset)
                          : fmt::format("transaction {} (begun at {}:{})", open.gtid, open.file, open.offset);
    if (last_file_in_use_) {
      warn_(fmt::format("{}:{}: the file ends inside {}; the server still had the file open, so its {} row line(s) "
                        "above have no commit line: it had not committed when the file was read",
                        last_file_, last_file_end_, transaction, open.rows));
      return {};
    }
    if (open.rows == 0) {
      warn_(fmt::format("{}:{}: the file ends inside {}, yet the server had closed the file: it was cut short; "
                        "nothing of that transaction is in the output",
                        last_file_, last_file_end_, transaction));
      return {};
    }
    return fail(Errc::corrupt_input,
                fmt::format("{}:{}: the file ends inside {}, yet the server had closed the file: it was cut short; "
                            "the {} row line(s) of that transaction above have no commit line and must not be applied "
                            "({})",
                            last_file_, last_file_end_, transaction, open.rows,
                            open.file == pipeline_.file()
                                ? fmt::format("decode the whole file, or end before the transaction with "
                                              "--stop-position {}",
                                              open.offset)
                                : std::string("decode the whole file")));
  }

  const FileOptions& options_;
  std::string last_file_;
  std::uint64_t last_file_end_ = 0;
  bool last_file_in_use_ = false;
  ChangeWriter writer_;
  const std::function<void(std::string_view)>& warn_;
  const std::function<void(std::string_view)>& notice_;
  bool before_from_ = false;  // --from TIME: no transaction at or after it read yet
  binlog::Decoder decoder_;
  ChangePipeline pipeline_;
  std::optional<SideConnection> catalog_;  // --catalog
};

}  // namespace

Result<FileSummary> run_files(const FileOptions& options, int out_fd, const std::function<void(std::string_view)>& warn,
                              const std::function<void(std::string_view)>& notice) {
  if (options.files.empty()) return fail(Errc::usage, "no binlog files given");
  auto filter = TableFilter::parse(options.tables, options.exclude);
  if (!filter) return fail(std::move(filter).error());
  auto converter = output::make_converter(options.output);
  if (!converter) return fail(std::move(converter).error());
  FileRun run(options, std::move(*filter), out_fd, warn, notice, std::move(*converter));
  return run.run();
}

}  // namespace cdc::stream
