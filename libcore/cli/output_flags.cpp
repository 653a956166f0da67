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

Result<output::OutputOptions> OutputFlags::options() const {
  output::OutputOptions options;
  options.format = output::format_named(format_).value_or(output::Format::ndjson);
  options.kafka_key = key_;
  options.topic_field = topic_;
  options.flink = flink_;
  options.mask_keys = mask_keys_;
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
  return args;
}

}  // namespace cdc::cli
