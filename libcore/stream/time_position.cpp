#include "stream/time_position.h"

#include <fmt/format.h>

#include <chrono>

#include "binlog/decoder.h"
#include "binlog/event_header.h"
#include "stream/change_pipeline.h"
#include "stream/change_writer.h"
#include "stream/start_position.h"
#include "util/byte_reader.h"

namespace cdc::stream {

namespace {

using gtid::Position;

struct EventPlace {
  binlog::EventHeader header;
  bool artificial = false;  // made up by the dump (its first ROTATE), not in the file
  std::uint64_t offset = 0;
};

Result<EventPlace> place_of(std::span<const std::uint8_t> bytes, std::string_view source) {
  if (bytes.size() < binlog::kEventHeaderSize)
    return fail(Errc::corrupt_input, fmt::format("{}: a {}-byte event in the binlog stream", source, bytes.size()));
  ByteReader reader(bytes, 0);
  EventPlace place;
  place.header = binlog::read_event_header(reader);
  place.artificial = (place.header.flags & binlog::kFlagArtificial) != 0 || place.header.next_position == 0;
  place.offset = place.artificial || place.header.next_position < bytes.size() ? 0
                                                                                : place.header.next_position - bytes.size();
  return place;
}

bool is_heartbeat(const binlog::EventHeader& header) {
  return header.type() == binlog::EventType::heartbeat || header.type() == binlog::EventType::heartbeat_v2;
}

// A dump of one server file from its start that stops at the binlog's end.
Result<replication::BinlogClient> dump_from_start(const mysql::ConnectionOptions& options, const std::string& file) {
  mysql::ConnectionOptions dump_options = options;
  dump_options.read_timeout_seconds = 30;  // the bytes are there already: a silence is a fault
  auto client = replication::BinlogClient::open(dump_options);
  if (!client) return fail(std::move(client).error());
  Position start;
  start.kind = Position::Kind::file;
  start.file = gtid::FilePosition{file, 4};
  if (auto started = client->start_dump(start, replication::default_server_id(), std::chrono::seconds(1),
                                        replication::DumpEnd::stop);
      !started)
    return fail(std::move(started).error());
  return client;
}

// The opening of one of the server's files.
Result<FileOpening> server_file_opening(const mysql::ConnectionOptions& options, const std::string& file) {
  auto client = dump_from_start(options, file);
  if (!client) return fail(std::move(client).error());
  FileOpeningReader reader;
  for (;;) {
    auto bytes = client->next_event();
    if (!bytes) return fail(std::move(bytes).error());
    if (bytes->empty()) break;
    auto done = reader.add(*bytes);
    if (!done) return fail(std::move(done).error());
    if (*done) break;
  }
  if (!reader.has_time())
    return fail(Errc::server, fmt::format("{}: the first events of {} carry no timestamp", client->connection().endpoint(),
                                          file));
  return reader.opening();
}

// "binlog.000001" is the first file a server writes after its binlog is created (or reset).
bool first_ever(const std::string& file) {
  const std::size_t dot = file.rfind('.');
  return dot != std::string::npos && file.find_first_not_of('0', dot + 1) == file.size() - 1 && file.back() == '1';
}

// Reads `file` and the files after it with a silent pipeline up to the first transaction
// committed at or after `time`.
Result<TimeStart> scan_for_time(const mysql::ConnectionOptions& options, const std::string& file, UtcTime time) {
  auto client = dump_from_start(options, file);
  if (!client) return fail(std::move(client).error());
  const std::string endpoint = client->connection().endpoint();
  binlog::Decoder decoder(endpoint);
  if (client->server().checksums) decoder.expect_checksums(binlog::ChecksumAlgorithm::crc32);
  auto everything = TableFilter::parse("");
  if (!everything) return fail(std::move(everything).error());
  ChangeWriter nowhere(-1, "(nothing: reading for --from)");
  ChangePipeline pipeline(std::move(*everything), nowhere, decoder, [](std::string_view) {}, true);
  pipeline.set_silent(true);
  pipeline.start_file(file);
  std::optional<TimeStart> found;
  pipeline.set_transaction_gate([&](const TransactionStart& start) {
    if (start.committed < time) return true;
    found = TimeStart{pipeline.tracker().position_at(start.offset), gtid::FilePosition{std::string(start.file), start.offset},
                      start.committed};
    return false;
  });
  gtid::FilePosition boundary{file, 4};
  for (;;) {
    auto bytes = client->next_event();
    if (!bytes) return fail(std::move(bytes).error());
    if (bytes->empty()) break;
    auto place = place_of(*bytes, endpoint);
    if (!place) return fail(std::move(place).error());
    if (is_heartbeat(place->header)) continue;
    auto event = decoder.decode(*bytes, place->offset);
    if (!event) return fail(std::move(event).error());
    if (const auto* rotate = std::get_if<binlog::RotateEvent>(&event->body)) {
      pipeline.start_file(rotate->next_file);
      decoder.forget_tables();
      continue;
    }
    auto step = pipeline.handle(*event, place->header.next_position);
    if (!step) return fail(std::move(step).error());
    if (step->stopped_before_transaction) return std::move(*found);
    if (!place->artificial && !pipeline.tracker().in_transaction())
      boundary = gtid::FilePosition{pipeline.file(), place->header.next_position};
  }
  // Nothing committed at or after the time yet: the end, where the next transaction begins.
  return TimeStart{pipeline.tracker().position_at(boundary.offset), boundary, std::nullopt};
}

}  // namespace

Result<bool> FileOpeningReader::add(std::span<const std::uint8_t> event) {
  auto place = place_of(event, "binlog");
  if (!place) return fail(std::move(place).error());
  const binlog::EventHeader& header = place->header;
  if (is_heartbeat(header) || (place->artificial && header.type() == binlog::EventType::rotate)) return false;
  ++events_;
  if (opening_.opened.micros == 0 && header.timestamp != 0) opening_.opened = UtcTime::from_seconds(header.timestamp);
  if (header.type() == binlog::EventType::format_description) return false;
  // The first event after the format description: the GTID state the file starts from, when
  // the server writes one. Counts are at the body's start in both (after the common header).
  ByteReader body(event.subspan(binlog::kEventHeaderSize));
  if (header.type() == binlog::EventType::mariadb_gtid_list && body.remaining() >= 4)
    opening_.history = (body.u32() & 0x0fffffffU) != 0;  // the top bits are flags
  else if (header.type() == binlog::EventType::previous_gtids && body.remaining() >= 8)
    opening_.history = body.u64() != 0;  // the number of server uuids in the set
  return has_time() || events_ > 8;
}

Result<std::size_t> file_for_time(std::size_t count, UtcTime time,
                                  const std::function<Result<FileOpening>(std::size_t)>& opening) {
  std::size_t low = 0;
  std::size_t high = count;  // the answer is in [low, high): the last opened before `time`
  std::size_t answer = 0;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    auto opened = opening(middle);
    if (!opened) return fail(std::move(opened).error());
    if (opened->opened < time) {
      answer = middle;
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return answer;
}

Result<TimeStart> locate_time(const mysql::ConnectionOptions& options, replication::BinlogClient& client,
                              UtcTime time) {
  auto files = client.binlog_files();
  if (!files) return fail(std::move(files).error());
  if (files->empty()) return fail(Errc::config, fmt::format("{}: SHOW BINARY LOGS is empty", client.connection().endpoint()));
  std::optional<FileOpening> oldest;
  auto index = file_for_time(files->size(), time, [&](std::size_t i) -> Result<FileOpening> {
    auto opened = server_file_opening(options, (*files)[i].name);
    if (opened && i == 0) oldest = *opened;
    return opened;
  });
  if (!index) return fail(std::move(index).error());
  if (*index == 0) {
    if (!oldest) {
      auto opened = server_file_opening(options, files->front().name);
      if (!opened) return fail(std::move(opened).error());
      oldest = *opened;
    }
    // The oldest binlog opened after the time: what was committed in between is gone, unless
    // nothing was ever logged before that file.
    const bool history = oldest->history.value_or(!first_ever(files->front().name));
    if (time < oldest->opened && history)
      return fail(purged_binlog(fmt::format("--from {}", format_time(time)),
                                fmt::format("{}, opened at {}", files->front().name, format_time(oldest->opened))));
  }
  return scan_for_time(options, (*files)[*index].name, time);
}

std::string describe_time_start(std::string_view option, UtcTime time, const TimeStart& start) {
  if (!start.committed)
    return fmt::format("{} {}: nothing committed at or after it yet; starting at the binlog's end, {}:{} ({})", option,
                       format_time(time), start.at.file, start.at.offset, start.position.to_string());
  return fmt::format("{} {}: the first transaction committed at or after it is at {}:{} (committed {}); starting "
                     "from {}",
                     option, format_time(time), start.at.file, start.at.offset, format_time(*start.committed),
                     start.position.to_string());
}

}  // namespace cdc::stream
