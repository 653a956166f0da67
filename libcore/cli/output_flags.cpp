#include "cli/output_flags.h"

#include <fmt/format.h>

namespace cdc::cli {

void OutputFlags::add_to(CLI::App& app) {
  const std::string group = "Output format (cdc-formats(7))";
  app.add_option("--format", format_,
                 "ndjson (default): cdc's own lines; debezium, canal, maxwell: the messages those tools write")
      ->check(CLI::IsMember({"ndjson", "debezium", "canal", "maxwell"}))
      ->group(group);
  app.add_option("--format-option", format_options_,
                 "NAME=VALUE under the original tool's property name, e.g. schemas.enable=true; repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE")
      ->group(group);
  app.add_flag("--key", key_, "Each message as KEY<TAB>VALUE, a tombstone as KEY<TAB> (kcat -P -K '\\t' -Z)")
      ->group(group);
  app.add_flag("--topic", topic_, "Each message preceded by its topic and a TAB, for a splitter to one kcat per topic")
      ->group(group);
  app.add_flag("--flink", flink_,
               "The value encodings Flink's debezium-json, canal-json and maxwell-json decoders read for every type")
      ->group(group);
  app.add_option("--mask", masks_,
                 "DB.TABLE.COL=hash:ALGO:SALT|redact:N|truncate:N|drop (* and ? in each part); repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("RULE")
      ->group(group);
  app.add_flag("--mask-keys", mask_keys_, "Allow --mask on a key column (by default a masked key is refused)")
      ->group(group);
}

void OutputFlags::add_include_query_to(CLI::App& app) {
  app.add_flag("--include-query", include_query_,
               "Each change line carries the SQL statement that made it (\"query\"; the server must log it: "
               "binlog_annotate_row_events on MariaDB, binlog_rows_query_log_events on MySQL); not with --mask")
      ->group("Output format (cdc-formats(7))");
}

Result<output::OutputOptions> OutputFlags::options() const {
  output::OutputOptions options;
  options.format = output::format_named(format_).value_or(output::Format::ndjson);
  options.kafka_key = key_;
  options.topic_field = topic_;
  options.flink = flink_;
  options.mask_keys = mask_keys_;
  options.include_query = include_query_;
  // A statement holds the very values a mask hides (an INSERT's VALUES, an UPDATE's SET and
  // WHERE), and SQL text cannot be masked value by value: the two together would leak what
  // --mask promises to hide.
  if (include_query_ && !masks_.empty())
    return fail(Errc::usage, "--include-query writes each change's SQL statement, which holds the values --mask "
                             "hides (VALUES, SET, WHERE): give one of them, not both");
  if (options.format == output::Format::ndjson && (key_ || topic_ || flink_))
    return fail(Errc::usage, "--key, --topic and --flink go with --format debezium, canal or maxwell");
  for (const std::string& option : format_options_)
    if (auto set = output::set_format_option(options, option); !set) return fail(set.error());
  for (const std::string& mask : masks_) {
    auto rule = output::parse_mask_rule(mask);
    if (!rule) return fail(std::move(rule).error());
    options.masks.push_back(std::move(*rule));
  }
  return options;
}

std::vector<std::string> OutputFlags::arguments() const {
  std::vector<std::string> args;  // nothing for the defaults: a child's command line as before
  if (format_ != "ndjson") args.push_back("--format=" + format_);
  for (const std::string& option : format_options_) args.push_back("--format-option=" + option);
  if (key_) args.emplace_back("--key");
  if (topic_) args.emplace_back("--topic");
  if (flink_) args.emplace_back("--flink");
  for (const std::string& mask : masks_) args.push_back("--mask=" + mask);
  if (mask_keys_) args.emplace_back("--mask-keys");
  if (include_query_) args.emplace_back("--include-query");
  return args;
}

}  // namespace cdc::cli
