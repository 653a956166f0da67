#pragma once

// A server UUID: the source id of a MySQL GTID (@@server_uuid).

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "gtid/format.h"
#include "util/result.h"

namespace cdc::gtid {

struct Uuid {
  static constexpr std::size_t kByteLength = 16;  // Uuid::BYTE_LENGTH in libs/mysql/gtid/uuid.h
  static constexpr std::size_t kTextLength = 36;  // Uuid::TEXT_LENGTH

  std::array<std::uint8_t, kByteLength> bytes{};

  // The 36-character form 3e11fa47-71ca-11e1-9e33-c80aa9429562, hex digits in either case.
  // Only this form: MySQL's Uuid::parse also takes 32 bare hex digits and a {braced} form, but
  // its GTID-set parser (Tsid::from_cstring) always asks for exactly 36 characters, so a GTID
  // set never contains the other forms. Errors (Errc::usage) name the position inside the UUID.
  static Result<Uuid> parse(std::string_view text);

  // Lower case with dashes, as the server prints it.
  [[nodiscard]] std::string to_string() const;
  void append_to(std::string& out) const;

  // Byte order, which is also the order of the lower-case text; MySQL sorts its Tsid_map by
  // memcmp of these bytes, so sets print in this order.
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
  friend bool operator==(const Uuid&, const Uuid&) = default;
};

}  // namespace cdc::gtid

template <>
struct fmt::formatter<cdc::gtid::Uuid> : cdc::gtid::detail::ToStringFormatter {};
