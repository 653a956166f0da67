#pragma once

// Per-character weights of the case-insensitive collations key_order.cpp reproduces, generated
// from a live MariaDB 10.11 by scripts/gen_collation_weights.sh (WEIGHT_STRING of every
// character) into collation_weights.cpp. Not copied from server sources.

#include <cstdint>

namespace cdc::order::detail {

// False when collation_weights.cpp holds no generated tables (then the collations below are
// Errc::unsupported).
[[nodiscard]] bool have_collation_weights() noexcept;

// utf8mb4_general_ci / utf8mb3_general_ci (and their _nopad_ variants): the 16-bit weight of a
// code point. Characters above the BMP weigh as U+FFFD, as MariaDB's utf8mb4_general_ci does.
[[nodiscard]] std::uint32_t general_ci_weight(std::uint32_t code_point) noexcept;

// latin1_swedish_ci (and latin1_swedish_nopad_ci): the weight of a latin1 byte.
[[nodiscard]] std::uint32_t latin1_swedish_ci_weight(std::uint8_t byte) noexcept;

}  // namespace cdc::order::detail
