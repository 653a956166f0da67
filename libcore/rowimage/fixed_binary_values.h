#pragma once

// MariaDB's fixed-size binary types, INET4, INET6 and UUID (column/column_type.h
// FixedBinaryType), as the server writes them: their text, the bytes a text stands for, and
// the server's order.
//
// The binary log holds a value's bytes in the order its text reads (plugin/type_uuid
// sql_type_uuid.h pack(): a UUID is logged unswapped, whatever its row storage), without the
// trailing 0x00 bytes it leaves out of every BINARY(n). The server's text, from
// plugin/type_inet sql_type_inet.cc Inet4/Inet6::to_string() and my_uuid2str(), checked value
// by value against MariaDB 10.11 (tests/integration/fixed_binary_types.sh):
//   INET4  "a.b.c.d", each byte in decimal.
//   INET6  eight groups of lower-case hex without leading zeros, the first of the longest runs
//          of zero groups written "::" even when the run is one group long ("1::2:3:4:5:6:7",
//          where RFC 5952 4.2.2 writes "1:0:2:3:4:5:6:7"); when that run starts the address,
//          "::a.b.c.d" if it is six groups long (IPv4-compatible: "::1.2.3.4", not "::1" or
//          "::100") and "::ffff:a.b.c.d" if it is five long and the sixth group is ffff
//          (IPv4-mapped).
//   UUID   the 16 bytes as 8-4-4-4-12 lower-case hex digits.
// The server orders INET4 and INET6 by their bytes, and a UUID by the bytes it keeps in the row
// (sql_type_uuid.h memory_to_record() of the UUID type 10.11 creates tables with): the groups
// reversed (node, clock sequence, version and time high, time middle, time low) when byte 6 is
// 0x01 to 0x5f and byte 8 has its top bit set (versions 1 to 5 of RFC 4122's variants, and
// version 0 but for a zero byte 6), the bytes as they are otherwise. A UUID column created by a
// server before the fix of MDEV-29959 (10.11.4 and older) reverses every UUID until an ALTER or
// REPAIR TABLE upgrades it: its order differs for UUIDs of other versions.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "column/column_type.h"
#include "ndjson/writer.h"
#include "util/byte_reader.h"

namespace cdc::rowimage {

// The bytes a value of the type takes: 4, 16, 16; 0 for none.
[[nodiscard]] constexpr std::size_t fixed_binary_size(FixedBinaryType type) noexcept {
  switch (type) {
    case FixedBinaryType::inet4: return 4;
    case FixedBinaryType::inet6:
    case FixedBinaryType::uuid: return 16;
    case FixedBinaryType::none: return 0;
  }
  return 0;
}

// The type an information_schema DATA_TYPE or COLUMN_TYPE names ("inet6", "UUID"); none for
// every other type.
[[nodiscard]] FixedBinaryType fixed_binary_type_named(std::string_view type) noexcept;

// What fixed_binary_text() writes into: the longest text is INET6's eight full groups (39).
using FixedBinaryText = std::array<char, 40>;
using FixedBinaryBytes = std::array<std::uint8_t, 16>;

// The server's text of a value from its bytes as the binary log holds them: at most the type's
// size of them, the trailing 0x00 bytes it left out taken as there. Empty when there are more
// bytes than the type has, or the type is none.
[[nodiscard]] std::string_view fixed_binary_text(FixedBinaryType type, std::span<const std::uint8_t> bytes,
                                                 FixedBinaryText& buffer) noexcept;

// A row image's value of a column of this type (its bytes after the length prefix), written as
// a JSON string of its text; a value longer than the type fails `in` at value_offset.
void write_fixed_binary(FixedBinaryType type, std::span<const std::uint8_t> bytes, std::uint64_t value_offset,
                        ByteReader& in, ndjson::Writer& out);

// The bytes of a text fixed_binary_text() writes, into the first fixed_binary_size(type) of
// `bytes`; false for any other text (another spelling of the same value included), so that two
// texts are the same value exactly when they are equal.
[[nodiscard]] bool parse_fixed_binary_text(FixedBinaryType type, std::string_view text,
                                           FixedBinaryBytes& bytes) noexcept;

// Rearranges a value's bytes (its first fixed_binary_size(type)) so that their byte order is the
// server's order of the values (see above): a UUID's into its row order, others unchanged.
void to_server_order(FixedBinaryType type, FixedBinaryBytes& bytes) noexcept;

}  // namespace cdc::rowimage
