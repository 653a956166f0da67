#pragma once

// Maxwell's JSON rows: cdc-formats(7), MAXWELL.

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "util/result.h"

namespace cdc::output {

class Converter;
struct OutputOptions;

// Maxwell's own config names (--format-option NAME=true|false) and defaults.
struct MaxwellOptions {
  bool output_binlog_position = false;      // "position":"file:offset"
  bool output_gtid_position = false;        // "gtid"
  bool output_xoffset = false;              // "xoffset" on every row of a transaction but the last
  bool output_commit_info = true;           // "xid", and "commit":true on the last row
  bool output_server_id = false;            // "server_id"
  bool output_thread_id = false;            // "thread_id"
  bool output_primary_keys = false;         // "primary_key": the key values
  bool output_primary_key_columns = false;  // "primary_key_columns": the key names
  bool output_nulls = true;                 // columns whose value is NULL are written as null
  bool output_null_zerodates = false;       // zero dates as null
  bool output_ddl = false;                  // DDL as table-create/table-alter/... messages
  // Not an option: a transaction's rows wait for its commit line (which gives every row its
  // xid), in memory up to this many bytes, past it in an unlinked temporary file. Tests lower it.
  std::size_t spill_threshold_bytes = std::size_t{4} << 20;
};

[[nodiscard]] std::span<const std::string_view> maxwell_option_names() noexcept;
[[nodiscard]] Result<void> apply_maxwell_option(MaxwellOptions& options, std::string_view name, std::string_view value);

[[nodiscard]] std::unique_ptr<Converter> make_maxwell_converter(const OutputOptions& options);

}  // namespace cdc::output
