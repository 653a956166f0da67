#include "output/format.h"

#include <fmt/format.h>

namespace cdc::output {

namespace {

std::string joined(std::initializer_list<std::string_view> names) {
  std::string text;
  for (const std::string_view name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

}  // namespace

std::optional<Format> format_named(std::string_view name) noexcept {
  if (name == "ndjson") return Format::ndjson;
  if (name == "debezium") return Format::debezium;
  if (name == "canal") return Format::canal;
  if (name == "maxwell") return Format::maxwell;
  return std::nullopt;
}

std::string_view format_name(Format format) noexcept {
  switch (format) {
    case Format::ndjson: return "ndjson";
    case Format::debezium: return "debezium";
    case Format::canal: return "canal";
    case Format::maxwell: return "maxwell";
  }
  return "ndjson";
}

Result<std::size_t> option_choice(std::string_view name, std::string_view value,
                                  std::initializer_list<std::string_view> choices) {
  std::size_t index = 0;
  for (const std::string_view choice : choices) {
    if (choice == value) return index;
    ++index;
  }
  return fail(Errc::usage,
              fmt::format("--format-option {}={}: '{}' is not one of {}", name, value, value, joined(choices)));
}

Result<bool> option_flag(std::string_view name, std::string_view value) {
  auto index = option_choice(name, value, {"false", "true"});
  if (!index) return fail(index.error());
  return *index == 1;
}

Unexpected unknown_format_option(std::string_view name, Format format, std::initializer_list<std::string_view> known) {
  return fail(Errc::usage, fmt::format("--format-option {}: not an option of --format {} (its options: {})", name,
                                       format_name(format), joined(known)));
}

Result<void> set_format_option(OutputOptions& options, std::string_view name_value) {
  const std::size_t equals = name_value.find('=');
  if (equals == std::string_view::npos || equals == 0)
    return fail(Errc::usage, fmt::format("--format-option {}: give NAME=VALUE, e.g. schemas.enable=true", name_value));
  const std::string_view name = name_value.substr(0, equals);
  const std::string_view value = name_value.substr(equals + 1);
  switch (options.format) {
    case Format::debezium: return set_debezium_option(options.debezium, name, value);
    case Format::canal: return apply_canal_option(options.canal, name, value);
    case Format::maxwell: return apply_maxwell_option(options.maxwell, name, value);
    case Format::ndjson: break;
  }
  return fail(Errc::usage, fmt::format("--format-option {}: --format {} takes no options", name_value,
                                       format_name(options.format)));
}

}  // namespace cdc::output
