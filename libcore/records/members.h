#pragma once

// What the codecs share: typed reads of one member of a record, and arrays of strings written.
// The reads give nullopt for a member that is missing or of another type; each codec words its
// own error, naming the member.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/writer.h"
#include "records/kinds.h"
#include "util/error.h"
#include "util/result.h"

namespace cdc::records {

[[nodiscard]] inline std::optional<std::string> string_member(simdjson::dom::object record, std::string_view name) {
  std::string_view value;
  if (record[name].get_string().get(value) != simdjson::SUCCESS) return std::nullopt;
  return std::string(value);
}

[[nodiscard]] inline std::optional<std::uint64_t> uint_member(simdjson::dom::object record, std::string_view name) {
  std::uint64_t value = 0;
  if (record[name].get_uint64().get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

// An array of strings; nullopt also when an element is not a string (*not_strings is then
// set, for the callers that word the two cases apart).
[[nodiscard]] inline std::optional<std::vector<std::string>> strings_member(simdjson::dom::object record,
                                                                            std::string_view name,
                                                                            bool* not_strings = nullptr) {
  simdjson::dom::array array;
  if (record[name].get_array().get(array) != simdjson::SUCCESS) return std::nullopt;
  std::vector<std::string> out;
  for (simdjson::dom::element item : array) {
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS) {
      if (not_strings != nullptr) *not_strings = true;
      return std::nullopt;
    }
    out.emplace_back(text);
  }
  return out;
}

// The same reads for members a line must have: Errc::corrupt_input naming the member otherwise.
[[nodiscard]] inline Unexpected corrupt_line(std::string message) {
  return fail(Errc::corrupt_input, std::move(message));
}

[[nodiscard]] inline Result<std::string> required_string(simdjson::dom::object record, std::string_view name) {
  auto value = string_member(record, name);
  if (!value) return corrupt_line(fmt::format("\"{}\" is missing or not a string", name));
  return std::move(*value);
}

[[nodiscard]] inline Result<std::uint64_t> required_uint(simdjson::dom::object record, std::string_view name) {
  const auto value = uint_member(record, name);
  if (!value) return corrupt_line(fmt::format("\"{}\" is missing or not a non-negative integer", name));
  return *value;
}

[[nodiscard]] inline Result<std::vector<std::string>> required_strings(simdjson::dom::object record,
                                                                       std::string_view name) {
  bool not_strings = false;
  auto values = strings_member(record, name, &not_strings);
  if (!values && not_strings) return corrupt_line(fmt::format("\"{}\" holds a value that is not a string", name));
  if (!values) return corrupt_line(fmt::format("\"{}\" is missing or not an array", name));
  return std::move(*values);
}

// A line of a newer shape than this build reads ("v" above kVersion) is refused rather than
// half understood. A line without "v" is taken as version 1. The readers check it on the lines
// that frame every file (chunk, low, high, span_start, span_end): a file a newer cdc wrote is
// refused at its first such line.
[[nodiscard]] inline Result<void> check_version(simdjson::dom::object record) {
  const auto member = record[field::v];
  if (member.error() == simdjson::NO_SUCH_FIELD) return {};
  std::uint64_t version = 0;
  if (member.get_uint64().get(version) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "\"v\" must be a whole number, the version of the line's shape");
  if (version > static_cast<std::uint64_t>(kVersion))
    return fail(Errc::corrupt_input,
                fmt::format("\"v\":{}: the line is of a newer shape than this cdc reads (version {}): read it with "
                            "the cdc version that wrote it, or newer (see cdc-ndjson(5), COMPATIBILITY)",
                            version, kVersion));
  return {};
}

// {"op":KIND,"v":1 -- how every line begins; the codec adds its members and calls end_line().
inline void begin_line(std::string_view kind, ndjson::Writer& out) {
  out.begin_object();
  out.field(field::op, kind);
  out.field(field::v, kVersion);
}

inline void end_line(ndjson::Writer& out) {
  out.end_object();
  out.end_record();
}

// "name":["a","b"]
template <typename Strings>
void write_strings(std::string_view name, const Strings& values, ndjson::Writer& out) {
  out.key(name);
  out.begin_array();
  for (const auto& value : values) out.string(value);
  out.end_array();
}

}  // namespace cdc::records
