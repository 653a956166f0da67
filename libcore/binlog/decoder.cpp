#include "binlog/decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "binlog/checksum.h"
#include "binlog/compression.h"

namespace cdc::binlog {

namespace {

constexpr std::size_t kMaxInflatedEvent = std::size_t{1} << 30;

// Source of TableMap::generation. Process-wide rather than per Decoder, so that a map slot
// freed by one decoder and reused by another at the same address still gets a new value.
std::atomic<std::uint64_t> next_table_map_generation{1};

std::string type_label(std::uint8_t type_code) {
  const std::string_view name = event_type_name(type_code);
  return name.empty() ? fmt::format("event type {}", type_code) : std::string(name);
}

bool is_ignored(EventType type) {
  switch (type) {
    case EventType::intvar:
    case EventType::load:
    case EventType::slave:
    case EventType::create_file:
    case EventType::append_block:
    case EventType::exec_load:
    case EventType::delete_file:
    case EventType::new_load:
    case EventType::rand:
    case EventType::user_var:
    case EventType::begin_load_query:
    case EventType::execute_load_query:
    case EventType::ignorable:
    case EventType::transaction_context:
    case EventType::view_change:
    case EventType::xa_prepare:
    case EventType::heartbeat_v2:
      return true;
    default:
      return false;
  }
}

// Why a START_EVENT_V3 stops the decoding: it opens the binlogs of MySQL 3.23 (format
// version 1, a 13-byte common header) and 4.x (version 3, 19 bytes), whose events this
// decoder, written for version 4, would misread (a QUERY event's post-header differs). The
// event's body says which: the version, then the server's version in 50 bytes.
std::string old_binlog_reason(std::span<const std::uint8_t> event) {
  // A version 1 START event is 13 + 56 bytes; version 3 puts 6 more header bytes in front.
  const std::size_t header = event.size() >= 19 + 56 ? 19 : 13;
  std::string version = "before 4";
  std::string server;
  if (event.size() >= header + 2 + 50) {
    version = std::to_string(event[header] | (event[header + 1] << 8));
    const char* text = reinterpret_cast<const char*>(event.data() + header + 2);
    server.assign(text, std::find(text, text + 50, '\0'));
    for (char& c : server)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return fmt::format("a binlog of format version {}{}, from before MySQL 5.0; cdc reads format version 4 "
                     "(MySQL 5.0 and later, MariaDB): replay it into a newer server (mysqlbinlog FILE | mysql) "
                     "and read that server's binlog",
                     version, server.empty() ? "" : fmt::format(" written by MySQL {}", server));
}

}  // namespace

Decoder::Decoder(std::string source_name) : source_name_(std::move(source_name)) {
  // Until a format description arrives, assume a 5.0+ v4 binlog without checksums.
  format_.post_header_length[static_cast<std::size_t>(EventType::query)] = 13;
  format_.post_header_length[static_cast<std::size_t>(EventType::rotate)] = 8;
  format_.post_header_length[static_cast<std::size_t>(EventType::table_map)] = 8;
  for (auto type : {EventType::write_rows_v1, EventType::update_rows_v1, EventType::delete_rows_v1})
    format_.post_header_length[static_cast<std::size_t>(type)] = 8;
  for (auto type : {EventType::write_rows_v2, EventType::update_rows_v2, EventType::delete_rows_v2})
    format_.post_header_length[static_cast<std::size_t>(type)] = 10;
}

const TableMap* Decoder::table(std::uint64_t table_id) const noexcept {
  const auto found = tables_.find(table_id);
  return found == tables_.end() ? nullptr : &found->second;
}

TableMap* Decoder::table_for_update(std::uint64_t table_id) noexcept {
  const auto found = tables_.find(table_id);
  return found == tables_.end() ? nullptr : &found->second;
}

Error Decoder::error_at(std::uint64_t offset, std::uint8_t type_code, std::string_view what) const {
  return Error{Errc::corrupt_input, fmt::format("{}:{}: {}: {}", source_name_, offset, type_label(type_code), what)};
}

Result<Event> Decoder::decode(std::span<const std::uint8_t> event, std::uint64_t offset) {
  ByteReader in(event, offset);
  const EventHeader header = read_event_header(in);
  if (!in.ok())
    return fail(Error{Errc::corrupt_input, fmt::format("{}:{}: event header: {}", source_name_, offset, in.failure_text())});
  if (header.type() == EventType::start_v3) return fail(error_at(offset, header.type_code, old_binlog_reason(event)));
  if (header.event_size != event.size())
    return fail(error_at(offset, header.type_code,
                         fmt::format("header says {} bytes, the event has {}", header.event_size, event.size())));
  const bool is_format = header.type() == EventType::format_description;
  std::size_t body_size = event.size() - kEventHeaderSize;
  // The FDE decides its own checksum; every other event follows the last FDE.
  if (!is_format && format_.checksum == ChecksumAlgorithm::crc32) {
    if (body_size < kChecksumSize)
      return fail(error_at(offset, header.type_code, "too short to hold its CRC32 checksum"));
    if (!event_checksum_matches(event))
      return fail(error_at(offset, header.type_code,
                           "CRC32 checksum mismatch: the event is corrupt (the file was damaged, or is not a binlog "
                           "written with binlog_checksum=CRC32)"));
    body_size -= kChecksumSize;
  }
  ByteReader body = in.sub(body_size);
  return decode_body(header, body, event, offset);
}

Result<Event> Decoder::decode_inner(std::span<const std::uint8_t> event, std::uint64_t outer_offset) {
  ByteReader in(event, outer_offset);
  const EventHeader header = read_event_header(in);
  if (!in.ok() || header.event_size != event.size())
    return fail(error_at(outer_offset, static_cast<std::uint8_t>(EventType::transaction_payload),
                         "inner event header is inconsistent with its size"));
  ByteReader body = in.sub(event.size() - kEventHeaderSize);
  return decode_body(header, body, event, outer_offset);
}

Result<Event> Decoder::decode_body(const EventHeader& header, ByteReader& body, std::span<const std::uint8_t> whole,
                                   std::uint64_t offset) {
  Event out{header, offset, UnknownEvent{header.type_code, {}}};
  const EventType type = header.type();
  switch (type) {
    case EventType::format_description: {
      FormatDescription format = decode_format_description(body);
      if (!body.ok()) break;
      if (format.checksum == ChecksumAlgorithm::crc32 && !event_checksum_matches(whole))
        return fail(error_at(offset, header.type_code, "CRC32 checksum mismatch: the format description is corrupt"));
      format_ = std::move(format);
      have_format_ = true;
      tables_.clear();
      out.body = FormatDescriptionEvent{&format_};
      break;
    }
    case EventType::stop:
      out.body = StopEvent{};
      break;
    case EventType::rotate:
      out.body = decode_rotate(body, format_);
      break;
    case EventType::query:
      out.body = decode_query(body, format_);
      break;
    case EventType::mariadb_query_compressed: {
      QueryEvent query = decode_query(body, format_);
      if (!body.ok()) break;
      auto inflated = inflate_mariadb({reinterpret_cast<const std::uint8_t*>(query.sql.data()), query.sql.size()},
                                      inflated_, kMaxInflatedEvent);
      if (!inflated) return fail(error_at(offset, header.type_code, inflated.error().message));
      query.sql = {reinterpret_cast<const char*>(inflated_.data()), inflated_.size()};
      query.kind = classify_query(query.sql);
      out.body = query;
      break;
    }
    case EventType::xid:
      out.body = decode_xid(body);
      break;
    case EventType::table_map: {
      const std::uint64_t table_id = peek_table_id(body, format_, type);
      TableMap& map = tables_[table_id];
      const auto source = body.peek_rest();
      // Servers repeat the same map before every statement; skip decoding identical ones.
      if (map.source.size() != source.size() || !std::equal(source.begin(), source.end(), map.source.begin())) {
        decode_table_map(body, format_, map);
        if (!body.ok()) {
          tables_.erase(table_id);
          break;
        }
        map.source.assign(source.begin(), source.end());
        map.generation = next_table_map_generation.fetch_add(1, std::memory_order_relaxed);
      }
      out.body = TableMapEvent{&map};
      break;
    }
    case EventType::gtid:
      out.body = decode_mysql_gtid(body, false);
      break;
    case EventType::anonymous_gtid:
      out.body = decode_mysql_gtid(body, true);
      break;
    case EventType::gtid_tagged:
      out.body = decode_mysql_gtid_tagged(body);
      break;
    case EventType::previous_gtids:
      out.body = decode_previous_gtids(body);
      break;
    case EventType::mariadb_gtid:
      out.body = decode_mariadb_gtid(body);
      break;
    case EventType::mariadb_gtid_list:
      out.body = decode_mariadb_gtid_list(body);
      break;
    case EventType::mariadb_binlog_checkpoint:
      out.body = decode_binlog_checkpoint(body);
      break;
    case EventType::rows_query:
      out.body = decode_rows_query(body);
      break;
    case EventType::mariadb_annotate_rows:
      out.body = decode_annotate_rows(body);
      break;
    case EventType::incident:
      out.body = decode_incident(body);
      break;
    case EventType::heartbeat:
      out.body = decode_heartbeat(body);
      break;
    case EventType::transaction_payload:
      out.body = decode_transaction_payload(body);
      break;
    case EventType::mariadb_start_encryption:
      return fail(error_at(offset, header.type_code,
                           "the binlog is encrypted (encrypt_binlog=ON); read it through the server's replication "
                           "protocol instead of from the file"));
    default:
      // Types 20-22 were rows events only in 5.1.0-5.1.15 (post-header 6 or 8 bytes); a 5.2
      // development build used the same numbers for other events.
      if (is_rows_event(type) && !(static_cast<std::uint8_t>(type) >= 20 && static_cast<std::uint8_t>(type) <= 22 &&
                                   format_.post_header(type) != 6 && format_.post_header(type) != 8)) {
        RowsEvent rows = decode_rows(body, format_, type);
        if (!body.ok()) break;
        if (rows.compressed) {
          auto inflated = inflate_mariadb(rows.rows, inflated_, kMaxInflatedEvent);
          if (!inflated) return fail(error_at(offset, header.type_code, inflated.error().message));
          rows.rows = inflated_;
          rows.compressed = false;
        }
        out.body = rows;
      } else if (is_ignored(type)) {
        out.body = IgnoredEvent{header.type_code};
      } else {
        out.body = UnknownEvent{header.type_code, body.rest()};
      }
      break;
  }
  if (!body.ok()) return fail(error_at(offset, header.type_code, body.failure_text()));
  (void)have_format_;
  return out;
}

}  // namespace cdc::binlog
