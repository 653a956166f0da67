#include "snapshot/gtid_at_offset.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <optional>
#include <utility>
#include <system_error>

#include "binlog/decoder.h"
#include "binlog/event_header.h"
#include "mysql/sql_text.h"
#include "replication/binlog_client.h"
#include "util/byte_reader.h"

namespace cdc::snapshot {

namespace {

constexpr unsigned kErSpecificAccessDenied = 1227;  // "you need (at least one of) the REPLICATION SLAVE privilege"
constexpr unsigned kErAccessDenied = 1045;

}  // namespace

Result<std::string> GtidAtOffset::position(mysql::Connection& sql, const gtid::FilePosition& point) {
  if (known_ && known_->point == point) {
    last_source_ = Source::known;
    return known_->state.to_string();
  }
  if (known_ && !replication_refused_ && known_->point < point) {
    auto advanced = advance(*known_, point);
    if (advanced) {
      known_ = Known{point, std::move(*advanced)};
      last_source_ = Source::advanced;
      return known_->state.to_string();
    }
    if (advanced.error().code == Errc::unavailable) return fail(std::move(advanced).error());
    // Anything else (the file purged, a refused privilege): BINLOG_GTID_POS below.
  }
  auto asked = sql.query(fmt::format("SELECT BINLOG_GTID_POS({}, {})", mysql::text_literal(point.file), point.offset));
  if (!asked) return fail(std::move(asked).error());
  last_source_ = Source::asked;
  std::string text;
  if (!asked->rows.empty() && !asked->rows[0].empty() && asked->rows[0][0]) text = *asked->rows[0][0];
  auto parsed = gtid::MariadbGtidPos::parse(text);
  if (text.empty() || !parsed) {
    known_.reset();
    return text;
  }
  known_ = Known{point, std::move(*parsed)};
  return known_->state.to_string();
}

Result<void> GtidAtOffset::sample(mysql::Connection& sql) {
  if (std::exchange(sample_tried_, true)) return {};  // once a process: a server without GTIDs has none to give
  static const std::string statements[] = {"SHOW MASTER STATUS", "SELECT @@global.gtid_binlog_pos",
                                           "SHOW MASTER STATUS"};
  auto answers = sql.query_batch(statements);
  if (!answers) {
    if (answers.error().code == Errc::unavailable) return fail(std::move(answers).error());
    return {};  // e.g. no BINLOG MONITOR: BINLOG_GTID_POS then, as before
  }
  const auto point_of = [](const mysql::QueryResult& status) -> std::optional<gtid::FilePosition> {
    if (status.rows.empty() || status.rows[0].size() < 2 || !status.rows[0][0] || !status.rows[0][1])
      return std::nullopt;
    std::uint64_t offset = 0;
    const std::string& text = *status.rows[0][1];
    if (std::from_chars(text.data(), text.data() + text.size(), offset).ec != std::errc{}) return std::nullopt;
    return gtid::FilePosition{*status.rows[0][0], offset};
  };
  const auto before = point_of((*answers)[0]);
  const auto after = point_of((*answers)[2]);
  const auto& pos = (*answers)[1];
  if (!before || !after || !(*before == *after) || pos.rows.empty() || pos.rows[0].empty() || !pos.rows[0][0])
    return {};  // a transaction was written in between: nothing known
  auto state = gtid::MariadbGtidPos::parse(*pos.rows[0][0]);
  if (!state || state->empty()) return {};
  known_ = Known{*before, std::move(*state)};
  ++points_sampled_;
  return {};
}

Result<gtid::MariadbGtidPos> GtidAtOffset::advance(const Known& from, const gtid::FilePosition& to) {
  if (stream_ && stream_->at != from.point) stream_.reset();
  const bool kept = stream_.has_value();
  auto advanced = read_stream(from, to);
  if (!advanced && kept && advanced.error().code == Errc::unavailable) {
    // The kept connection was dropped while it waited: once more on a new one.
    stream_.reset();
    advanced = read_stream(from, to);
  }
  if (!advanced) stream_.reset();
  return advanced;
}

Result<gtid::MariadbGtidPos> GtidAtOffset::read_stream(const Known& from, const gtid::FilePosition& to) {
  if (!stream_) {
    mysql::ConnectionOptions options = options_;
    // The events up to `to` are in the binlog already: a silence means something is wrong.
    options.read_timeout_seconds = 30;
    auto client = replication::BinlogClient::open(options);
    if (!client) {
      // The server's settings (binlog_format) or the login will not change between chunks.
      if (client.error().code == Errc::config) replication_refused_ = true;
      return fail(std::move(client).error());
    }
    gtid::Position start;
    start.kind = gtid::Position::Kind::file;
    start.file = from.point;
    if (auto started = client->start_dump(start, replication::default_server_id(), std::chrono::seconds(1));
        !started) {
      const unsigned number = client->connection().last_error_number();
      if (number == kErSpecificAccessDenied || number == kErAccessDenied) replication_refused_ = true;
      return fail(std::move(started).error());
    }
    binlog::Decoder decoder(client->connection().endpoint());
    if (client->server().checksums) decoder.expect_checksums(binlog::ChecksumAlgorithm::crc32);
    stream_.emplace(Stream{std::move(*client), std::move(decoder), from.point.file, from.point});
    ++streams_opened_;
  }
  replication::BinlogClient& client = stream_->client;
  binlog::Decoder& decoder = stream_->decoder;
  std::string& file = stream_->file;
  gtid::MariadbGtidPos state = from.state;
  for (;;) {
    auto bytes = client.next_event();
    if (!bytes) {
      const auto kind = client.classify_failure(bytes.error());
      if (kind == replication::DumpFailure::lost) return fail(Errc::unavailable, bytes.error().message);
      const unsigned number = client.connection().last_error_number();
      if (number == kErSpecificAccessDenied || number == kErAccessDenied) replication_refused_ = true;
      return fail(std::move(bytes).error());
    }
    if (bytes->size() < binlog::kEventHeaderSize)
      return fail(Errc::corrupt_input, fmt::format("a {}-byte event in the binlog stream", bytes->size()));
    ByteReader header_reader(*bytes, 0);
    const binlog::EventHeader header = binlog::read_event_header(header_reader);
    const bool artificial = (header.flags & binlog::kFlagArtificial) != 0 || header.next_position == 0;
    const binlog::EventType type = header.type();
    if (type == binlog::EventType::heartbeat || type == binlog::EventType::heartbeat_v2) {
      // The server had sent all it had when it wrote this. A kept stream may hold one from
      // before `to` was written (the pause between chunks); one from at or after `to`, with
      // `to` not reached, means the binlog has no event ending there.
      auto decoded = decoder.decode(*bytes, 0);
      const auto* beat = decoded ? std::get_if<binlog::HeartbeatEvent>(&decoded->body) : nullptr;
      if (beat == nullptr || !(gtid::FilePosition{std::string(beat->file), header.next_position} < to))
        return fail(Errc::internal, fmt::format("the binlog ended before {}:{}", to.file, to.offset));
      continue;
    }
    // The format description the server sends again from the file's start is before `from`.
    if (artificial || (file == from.point.file && header.next_position <= from.point.offset)) {
      if (type == binlog::EventType::format_description || type == binlog::EventType::rotate) {
        auto decoded = decoder.decode(*bytes, 0);
        if (!decoded) return fail(std::move(decoded).error());
        if (const auto* rotate = std::get_if<binlog::RotateEvent>(&decoded->body)) file = std::string(rotate->next_file);
      }
      continue;
    }
    // Only these are decoded: the rows in between are not looked at.
    std::string next_file;
    if (type == binlog::EventType::format_description || type == binlog::EventType::rotate ||
        type == binlog::EventType::mariadb_gtid || type == binlog::EventType::mariadb_gtid_list) {
      const std::uint64_t offset = header.next_position < bytes->size() ? 0 : header.next_position - bytes->size();
      auto decoded = decoder.decode(*bytes, offset);
      if (!decoded) return fail(std::move(decoded).error());
      if (const auto* rotate = std::get_if<binlog::RotateEvent>(&decoded->body)) {
        next_file = std::string(rotate->next_file);
      } else if (const auto* gtid = std::get_if<binlog::MariadbGtidEvent>(&decoded->body)) {
        state.advance(gtid::MariadbGtid{gtid->domain_id, header.server_id, gtid->seq_no});
      } else if (const auto* list = std::get_if<binlog::MariadbGtidListEvent>(&decoded->body)) {
        // A new file's list is the binlog state when it was opened, per domain the latest,
        // and it replaces what was counted before it, as BINLOG_GTID_POS starts from it. A
        // server killed while writing a transaction leaves its GTID event at the end of the
        // file without the rest; recovery does not count it, the next transaction gets its
        // number again, and only this list says so.
        state = list->state();
      }
    }
    const gtid::FilePosition reached{file, header.next_position};
    if (reached == to) {
      stream_->at = to;
      return state;
    }
    if (to < reached)
      return fail(Errc::internal, fmt::format("the binlog passed {}:{} without an event ending there (at {}:{})",
                                              to.file, to.offset, reached.file, reached.offset));
    if (!next_file.empty()) file = std::move(next_file);
  }
}

}  // namespace cdc::snapshot
