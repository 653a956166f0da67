#pragma once

// Canal's flat messages (canal.mq.flatMessage=true): cdc-formats(7), CANAL.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "util/result.h"

namespace cdc::output {

class Converter;
struct OutputOptions;

struct CanalOptions {
  // --format-option message=event|row: one flat message per rows event, as Canal sends them
  // (the rows of one event share data[] and old[]), or one per row. --key and --flink force row.
  enum class Message : std::uint8_t { event, row };
  Message message = Message::event;
};

// The --format-option names canal takes, for the list an unknown name is answered with.
[[nodiscard]] std::span<const std::string_view> canal_option_names() noexcept;
// Applies one --format-option NAME=VALUE; Errc::usage for an unknown name or a bad value.
[[nodiscard]] Result<void> apply_canal_option(CanalOptions& options, std::string_view name, std::string_view value);

[[nodiscard]] std::unique_ptr<Converter> make_canal_converter(const OutputOptions& options);

}  // namespace cdc::output
