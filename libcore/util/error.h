#pragma once

#include <string>
#include <utility>

namespace cdc {

// Categories, not individual errors: each maps to one exit code (util/exit_code.h).
enum class Errc {
  usage,          // the user asked for something malformed or contradictory
  io,             // reading or writing a file, pipe or terminal failed
  corrupt_input,  // bytes we were given do not decode (binlog event, NDJSON line)
  server,         // the server answered, but with an error or an unusable setting
  unavailable,    // the server could not be reached or refused our credentials
  config,         // the server runs, but its configuration misses a prerequisite
  interrupted,    // stopped by a signal after the state was saved
  purged,         // the server no longer has the binlog a stream needs
  unsupported,    // a feature this version does not have yet
  internal,       // a bug in cdc itself
};

struct Error {
  Errc code;
  std::string message;

  // Prefixes context on the way up: "binlog.000042:1234: " + "need 5 bytes, have 3".
  [[nodiscard]] Error with_context(std::string_view context) const {
    std::string text;
    text.reserve(context.size() + 2 + message.size());
    text.append(context).append(": ").append(message);
    return Error{code, std::move(text)};
  }
};

}  // namespace cdc
