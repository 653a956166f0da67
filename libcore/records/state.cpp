#include "records/state.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/writer.h"
#include "records/kinds.h"

namespace cdc::records {

std::string format_state(const StreamState& state) {
  ndjson::Writer out;
  out.begin_object();
  out.key(field::v);
  out.integer(kVersion);
  out.key(field::position);
  out.string(state.position);
  out.key(field::file);
  out.string(state.file);
  out.key(field::offset);
  out.unsigned_integer(state.offset);
  out.key(field::gtid);
  out.string(state.gtid);
  if (state.output_bytes) {
    out.key(field::output_bytes);
    out.unsigned_integer(*state.output_bytes);
  }
  if (!state.span.empty()) {
    out.key(field::span);
    out.string(state.span);
  }
  out.key(field::server);
  out.string(state.server);
  if (state.server_id) {
    out.key(field::server_id);
    out.unsigned_integer(*state.server_id);
  }
  out.key(field::saved_at);
  out.string(state.saved_at);
  out.end_object();
  out.end_record();
  return std::string(out.buffered());
}

Result<StreamState> parse_state(std::string_view text, std::string_view name) {
  const auto bad = [&](std::string_view why) {
    return fail(Errc::corrupt_input, fmt::format("{}: not a cdc-stream state file ({}); it is left as it is: fix or "
                                                 "remove it, or give another --state",
                                                 name, why));
  };
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::object object;
  if (parser.parse(padded).get_object().get(object) != simdjson::SUCCESS) return bad("not a JSON object");
  StreamState state;
  std::int64_t version = 0;
  if (object[field::v].get_int64().get(version) != simdjson::SUCCESS || version != 1) return bad("\"v\" is not 1");
  std::string_view value;
  if (object[field::position].get_string().get(value) != simdjson::SUCCESS || value.empty())
    return bad("no \"position\"");
  state.position = std::string(value);
  if (object[field::file].get_string().get(value) == simdjson::SUCCESS) state.file = std::string(value);
  std::uint64_t number = 0;
  if (object[field::offset].get_uint64().get(number) == simdjson::SUCCESS) state.offset = number;
  if (object[field::gtid].get_string().get(value) == simdjson::SUCCESS) state.gtid = std::string(value);
  if (object[field::server].get_string().get(value) == simdjson::SUCCESS) state.server = std::string(value);
  if (object[field::saved_at].get_string().get(value) == simdjson::SUCCESS) state.saved_at = std::string(value);
  if (object[field::span].get_string().get(value) == simdjson::SUCCESS) {
    if (value != "open" && value != "closed") return bad("\"span\" is neither \"open\" nor \"closed\"");
    state.span = std::string(value);
  }
  if (object[field::server_id].get_uint64().get(number) == simdjson::SUCCESS) {
    if (number == 0 || number > 0xFFFFFFFFU) return bad("\"server_id\" is not a server id");
    state.server_id = static_cast<std::uint32_t>(number);
  }
  auto output = object[field::output_bytes];
  if (output.error() == simdjson::SUCCESS) {
    if (output.get_uint64().get(number) != simdjson::SUCCESS) return bad("\"output_bytes\" is not a number");
    state.output_bytes = number;
  }
  return state;
}

}  // namespace cdc::records
