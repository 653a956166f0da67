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
// The same into out (cleared first), whose capacity a caller decoding value after value reuses;
// false, with out unspecified, for text that is not base64.
[[nodiscard]] bool decode_base64_into(std::string_view text, std::string& out);

}  // namespace cdc
