#pragma once

// Binlog bytes for the archive's tests (archive_test.cpp, archive_source_test.cpp): events as a
// MariaDB 10.11 with binlog_checksum=CRC32 writes them, CRC32 included, and a temporary
// directory.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "binlog/checksum.h"
#include "unit_support.h"

namespace cdc::test_archive {

using Bytes = std::vector<std::uint8_t>;

using unit_test::TempDir;

inline void put(Bytes& out, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<std::uint8_t>((value >> (8 * i)) & 0xff));
}

constexpr std::uint16_t kInUse = 0x0001;
constexpr std::uint16_t kArtificial = 0x0020;
constexpr std::uint32_t kServerId = 1;

// One event as a server writes it: the v4 header, the body, and the CRC32 over both (with
// LOG_EVENT_BINLOG_IN_USE_F clear, as the server computes it for a format description).
inline Bytes event(std::uint8_t type, std::uint32_t log_pos, const Bytes& body, std::uint16_t flags = 0,
                   std::uint32_t timestamp = 1700000000) {
  Bytes out;
  put(out, timestamp, 4);
  out.push_back(type);
  put(out, kServerId, 4);
  put(out, 19 + body.size() + 4, 4);  // event_size
  put(out, log_pos, 4);
  put(out, static_cast<std::uint16_t>(flags & ~kInUse), 2);
  out.insert(out.end(), body.begin(), body.end());
  put(out, cdc::binlog::crc32_of(out), 4);
  out[17] = static_cast<std::uint8_t>(out[17] | (flags & kInUse));
  return out;
}

// FORMAT_DESCRIPTION_EVENT of a MariaDB 10.11 with binlog_checksum=CRC32.
inline Bytes format_description(std::uint32_t log_pos, std::uint16_t flags = 0) {
  Bytes body;
  put(body, 4, 2);  // binlog_version
  std::string version = "10.11.6-MariaDB-log";
  version.resize(50, '\0');
  body.insert(body.end(), version.begin(), version.end());  // server_version
  put(body, 0, 4);    // create_timestamp
  body.push_back(19);  // header_length
  for (int type = 1; type <= 47; ++type) body.push_back(type == 2 ? 13 : (type == 4 ? 8 : 0));  // post-header lengths
  body.push_back(1);  // checksum algorithm: CRC32
  return event(15, log_pos, body, flags);
}

inline Bytes rotate(std::uint32_t log_pos, const std::string& next, std::uint64_t position, std::uint16_t flags) {
  Bytes body;
  put(body, position, 8);
  body.insert(body.end(), next.begin(), next.end());
  return event(4, log_pos, body, flags, flags & kArtificial ? 0 : 1700000100);
}
inline Bytes fake_rotate(const std::string& file, std::uint64_t position) { return rotate(0, file, position, kArtificial); }

// A QUERY_EVENT-sized stand-in: the archive never looks into bodies.
inline Bytes query(std::uint32_t log_pos, std::size_t body_size, std::uint8_t fill = 0x51) {
  return event(2, log_pos, Bytes(body_size, fill));
}

inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out = {0xfe, 0x62, 0x69, 0x6e};
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

inline Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
inline void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
inline bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }


// MariaDB's GTID_EVENT of a transaction (no FL_STANDALONE) and GTID_LIST_EVENT.
inline Bytes mariadb_gtid(std::uint32_t log_pos, std::uint32_t domain, std::uint64_t seq_no) {
  Bytes body;
  put(body, seq_no, 8);
  put(body, domain, 4);
  body.push_back(0x04);  // flags: FL_TRANSACTIONAL
  body.resize(body.size() + 6, 0);
  return event(162, log_pos, body);
}
inline Bytes mariadb_gtid_list(std::uint32_t log_pos, std::initializer_list<std::uint64_t> seq_nos_of_domain_0) {
  Bytes body;
  put(body, seq_nos_of_domain_0.size(), 4);
  for (const std::uint64_t seq_no : seq_nos_of_domain_0) {
    put(body, 0, 4);          // domain
    put(body, kServerId, 4);  // server
    put(body, seq_no, 8);
  }
  return event(163, log_pos, body);
}
inline Bytes xid(std::uint32_t log_pos, std::uint64_t id) {
  Bytes body;
  put(body, id, 8);
  return event(16, log_pos, body);
}

// A file built event by event, each event's log_pos set from where it lands.
struct FileBuilder {
  Bytes bytes;
  FileBuilder() {
    for (const int byte : {0xfe, 0x62, 0x69, 0x6e}) bytes.push_back(static_cast<std::uint8_t>(byte));
  }
  template <typename Make>
  std::uint64_t add(Make make) {  // make(log_pos) -> Bytes; returns the event's offset
    const std::uint64_t offset = bytes.size();
    const Bytes sized = make(0);
    const Bytes placed = make(static_cast<std::uint32_t>(offset + sized.size()));
    bytes.insert(bytes.end(), placed.begin(), placed.end());
    return offset;
  }
};

}  // namespace cdc::test_archive
