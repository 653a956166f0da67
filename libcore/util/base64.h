#pragma once

// Base64 (RFC 4648, the standard alphabet) back to bytes: what cdc-ndjson(5) writes binary
// strings as (ndjson::Writer::string_base64 writes them).

#include <optional>
#include <string>
#include <string_view>

namespace cdc {

// The bytes, or nullopt for text that is not base64: a character outside the alphabet, data
// after '=', more than two '=', or a length no encoding gives. Padding may be left out.
[[nodiscard]] std::optional<std::string> decode_base64(std::string_view text);

}  // namespace cdc
