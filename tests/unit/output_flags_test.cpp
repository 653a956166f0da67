// cli/output_flags: the output stage's flags as cdc-stream, cdc-merge and cdc-sync read them,
// and as cdc-sync passes them on to cdc-stream.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/output_flags.h"

namespace {

struct Parsed {
  cdc::Result<cdc::output::OutputOptions> options;
  std::vector<std::string> arguments;
};

Parsed parse(std::vector<std::string> args) {
  CLI::App app("test");
  cdc::cli::OutputFlags flags;
  flags.add_to(app);
  flags.add_include_query_to(app);
  std::vector<const char*> argv{"tool"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return {flags.options(), flags.arguments()};
}

}  // namespace

TEST_CASE("output flags: the options, and the same flags again for a child") {
  const Parsed parsed = parse({"--format", "debezium", "--format-option", "schemas.enable=true", "--format-option",
                               "topic.prefix=shop", "--key", "--topic", "--flink"});
  REQUIRE(parsed.options);
  const cdc::output::OutputOptions& options = *parsed.options;
  CHECK(options.format == cdc::output::Format::debezium);
  CHECK(options.debezium.schemas_enable);
  CHECK(options.debezium.topic_prefix == "shop");
  CHECK(options.kafka_key);
  CHECK(options.topic_field);
  CHECK(options.flink);
  CHECK(parsed.arguments == std::vector<std::string>{"--format=debezium", "--format-option=schemas.enable=true",
                                                     "--format-option=topic.prefix=shop", "--key", "--topic",
                                                     "--flink"});
  // What a child parses from them is the same.
  const Parsed again = parse(parsed.arguments);
  REQUIRE(again.options);
  CHECK(again.arguments == parsed.arguments);
}

TEST_CASE("output flags: the default is ndjson, the Kafka flags need a format") {
  const Parsed plain = parse({});
  REQUIRE(plain.options);
  CHECK(plain.options->format == cdc::output::Format::ndjson);
  CHECK(plain.arguments.empty());
  const Parsed key = parse({"--key"});
  REQUIRE(!key.options);
  CHECK(key.options.error().code == cdc::Errc::usage);
  const Parsed option = parse({"--format-option", "schemas.enable=true"});
  REQUIRE(!option.options);
  CHECK(option.options.error().message == "--format-option schemas.enable=true: --format ndjson takes no options");
  CHECK_THROWS(parse({"--format", "avro"}));
}

TEST_CASE("output flags: --include-query goes to the child, and not with --mask") {
  for (const char* format : {"ndjson", "maxwell"}) {
    CAPTURE(format);
    const Parsed parsed = parse({"--format", format, "--include-query"});
    REQUIRE(parsed.options);
    CHECK(parsed.options->include_query);
    CHECK(parsed.arguments.back() == "--include-query");
    const Parsed again = parse(parsed.arguments);
    REQUIRE(again.options);
    CHECK(again.options->include_query);
  }
  CHECK_FALSE(parse({}).options->include_query);
  // A statement holds the values a mask hides: refused, whichever comes first.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--include-query", "--mask", "shop.users.email=redact:4"},
        std::vector<std::string>{"--format", "debezium", "--mask", "*.*.card=hash:SHA-256:salt", "--include-query"}}) {
    const Parsed parsed = parse(args);
    REQUIRE_FALSE(parsed.options);
    CHECK(parsed.options.error().code == cdc::Errc::usage);
    CHECK(parsed.options.error().message.find("--include-query writes each change's SQL statement") == 0);
  }
}
