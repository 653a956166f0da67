// output/mask: --mask rules parsed from text, Debezium's hash vectors (FORMATS §2.11), and the
// Masker on hand-written canonical lines: which columns a rule reaches, how each action rewrites
// a value, what it refuses, and that lines it does not touch pass without a copy.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/format.h"
#include "output/mask.h"

namespace {

using cdc::Errc;
using cdc::output::HashAlgorithm;
using cdc::output::MaskAction;
using cdc::output::Masker;
using cdc::output::MaskRule;
using cdc::output::parse_mask_rule;

std::vector<MaskRule> rules(std::initializer_list<std::string_view> texts) {
  std::vector<MaskRule> parsed;
  for (std::string_view text : texts) {
    auto rule = parse_mask_rule(text);
    REQUIRE_MESSAGE(rule.has_value(), std::string(text));
    parsed.push_back(std::move(*rule));
  }
  return parsed;
}

// shop.users: id INT key, email VARCHAR(16), name TEXT, size ENUM, age INT, note VARCHAR(40) NULL.
constexpr std::string_view kUsersTable =
    R"J({"op":"table","v":1,"db":"shop","table":"users","columns":[)J"
    R"J({"name":"id","type":"int(11)","nullable":false},)J"
    R"J({"name":"email","type":"varchar(16)","nullable":false,"charset":"utf8mb4","collation":"utf8mb4_general_ci"},)J"
    R"J({"name":"name","type":"text","nullable":false,"charset":"utf8mb4","collation":"utf8mb4_general_ci"},)J"
    R"J({"name":"size","type":"enum('s','m')","nullable":true,"charset":"utf8mb4","collation":"utf8mb4_general_ci","values":["s","m"]},)J"
    R"J({"name":"age","type":"int(11)","nullable":true},)J"
    R"J({"name":"note","type":"varchar(40)","nullable":true,"charset":"utf8mb4","collation":"utf8mb4_general_ci"}],)J"
    R"J("key":["id"],"pos":null,"ts_ms":1725523201000})J";

constexpr std::string_view kInsert =
    R"J({"op":"c","v":1,"db":"shop","table":"users","key":{"id":7},"before":null,)J"
    R"J("after":{"id":7,"email":"alice@example.com","name":"hello","size":"m","age":30,"note":null},)J"
    R"J("pos":{"file":"binlog.000042","offset":1520,"index":0,"gtid":null},"server_id":1,"thread":12,"ts_ms":1725523201000})J";

// Feeds the lines; returns what goes out (the line itself, or its rewrite).
std::vector<std::string> run(Masker& masker, std::initializer_list<std::string_view> lines) {
  std::vector<std::string> out;
  std::string rewritten;
  for (std::string_view line : lines) {
    auto changed = masker.mask(line, rewritten);
    REQUIRE_MESSAGE(changed.has_value(), changed.error().message);
    out.push_back(*changed ? rewritten : std::string(line));
  }
  return out;
}

// The error of the Masker's first line; fails the test when the line was accepted.
cdc::Error refusal(Masker& masker, std::string_view line) {
  std::string rewritten;
  auto result = masker.mask(line, rewritten);
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

std::string after_of(const std::string& line) {
  return std::string(cdc::ndjson::find_member(line, "\"after\"").value_or("absent"));
}

}  // namespace

TEST_CASE("parse_mask_rule reads the four actions and the three globs") {
  auto hash = parse_mask_rule("shop.users.email=hash:SHA-256:pe:p=per");
  REQUIRE(hash.has_value());
  CHECK(hash->database == "shop");
  CHECK(hash->table == "users");
  CHECK(hash->column == "email");
  CHECK(hash->action == MaskAction::hash);
  CHECK(hash->algorithm == HashAlgorithm::sha256);
  CHECK(hash->salt == "pe:p=per");  // everything after ALGO: is the salt

  auto md5 = parse_mask_rule("*.*.e?ail=hash:md5:");
  REQUIRE(md5.has_value());
  CHECK(md5->algorithm == HashAlgorithm::md5);  // Java takes digest names in any case
  CHECK(md5->salt.empty());

  auto redact = parse_mask_rule("shop.u*.note=redact:0");
  REQUIRE(redact.has_value());
  CHECK(redact->action == MaskAction::redact);
  CHECK(redact->length == 0);

  auto truncate = parse_mask_rule("shop\\.eu.users.name=truncate:3");
  REQUIRE(truncate.has_value());
  CHECK(truncate->database == "shop\\.eu");  // an escaped dot stays in the database's glob
  CHECK(truncate->length == 3);

  auto drop = parse_mask_rule("shop.users.age=drop");
  REQUIRE(drop.has_value());
  CHECK(drop->action == MaskAction::drop);
}

TEST_CASE("parse_mask_rule refuses malformed rules with the expected form") {
  struct Case {
    std::string_view text;
    std::string_view says;
  };
  const Case cases[] = {
      {"shop.users.email", "no '='"},
      {"shop.users=drop", "three parts"},
      {"a.b.c.d=drop", "three parts"},
      {"shop..email=drop", "empty part"},
      {"shop.users.email=hash:SHA-3:x", "unknown digest 'SHA-3'"},
      {"shop.users.email=hash:SHA-256", "hash:ALGO:SALT"},
      {"shop.users.email=redact:many", "whole number"},
      {"shop.users.email=truncate:0", "at least 1"},
      {"shop.users.email=drop:1", "unknown action 'drop:1'"},
      {"shop.users.email=blank", "unknown action 'blank'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto rule = parse_mask_rule(c.text);
    REQUIRE_FALSE(rule.has_value());
    CHECK(rule.error().code == Errc::usage);
    CHECK(rule.error().message.find(c.says) != std::string::npos);
    CHECK(rule.error().message.find("DB.TABLE.COL=ACTION") != std::string::npos);
  }
}

TEST_CASE("hash is Debezium's column.mask.hash.v2: FORMATS §2.11's vectors and every digest") {
  // salt "salt", value "hello" [D8]
  CHECK(mask_hash_hex(HashAlgorithm::sha256, "salt", "hello") ==
        "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a");
  CHECK(mask_hash_hex(HashAlgorithm::md5, "salt", "hello") == "06decc8b095724f80103712c235586be");
  // The others as Python's hashlib gives them for b"salt" + b"hello".
  CHECK(mask_hash_hex(HashAlgorithm::sha1, "salt", "hello") == "34cd57acc150672d09d0c5635c06d8c2f094a419");
  CHECK(mask_hash_hex(HashAlgorithm::sha384, "salt", "hello") ==
        "3867a02f9f0119f6796ffd21ce71d026579b0810796ee64b9e6376f9b4fda0f95f56d0c403df591cb83ef5703665d9ca");
  CHECK(mask_hash_hex(HashAlgorithm::sha512, "salt", "hello") ==
        "acc3054d59588aeff201e46474f717f84cf925e71123acb5ac83bd1b002c4345c266330d86e79e1dba142e51abfcde0bec4b363d39664d8"
        "83f08c33584ede7ba");
}

TEST_CASE("Masker: hash, redact and truncate rewrite string columns of the rows after the table line") {
  Masker masker(rules({"shop.users.name=hash:SHA-256:salt", "shop.users.email=hash:SHA-256:salt",
                       "shop.users.size=redact:3", "shop.users.note=truncate:2"}),
                false);
  const auto out = run(masker, {kUsersTable, kInsert});
  CHECK(out[0] == kUsersTable);  // no column dropped: the description stays as it is
  // name is TEXT (no length): the whole digest; email VARCHAR(16): cut to 16, as Debezium
  // cuts a hash to the column's length; NULL stays NULL.
  CHECK(after_of(out[1]) ==
        R"J({"id":7,"email":"109f0b7ded1d9414","name":"cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a",)J"
        R"J("size":"***","age":30,"note":null})J");
  // Everything else of the line is as it was.
  CHECK(out[1].substr(0, 60) == kInsert.substr(0, 60));
  CHECK(out[1].substr(out[1].find("\"pos\"")) == kInsert.substr(kInsert.find("\"pos\"")));
}

TEST_CASE("Masker: the value hashed is the text, JSON escapes resolved") {
  Masker masker(rules({"shop.users.name=hash:SHA-256:salt"}), false);
  const std::string update =
      R"J({"op":"u","v":1,"db":"shop","table":"users","key":{"id":7},)J"
      R"J("before":{"id":7,"email":"a","name":"é\"x\n","size":null,"age":null,"note":null},)J"
      R"J("after":{"id":7,"email":"a","name":"\ud83d\ude00","size":null,"age":null,"note":null},)J"
      R"J("pos":{"file":"b.1","offset":4,"index":0,"gtid":null},"ts_ms":0})J";
  const auto out = run(masker, {kUsersTable, update});
  CHECK(out[1].find(R"J("name":"c60ce9d53abfc19ab59f342b4ddf87cbbcefbea49f9ddd635771695043256945")J") !=
        std::string::npos);
  CHECK(out[1].find(R"J("name":"c7b1699dad3ed7ae5be74a059d4619f504f29f98159acb0568c9971b0bd99bd0")J") !=
        std::string::npos);
}

TEST_CASE("Masker: truncate counts characters, an escape or a multi-byte character being one") {
  Masker masker(rules({"shop.users.note=truncate:3"}), false);
  struct Case {
    std::string_view note;
    std::string_view kept;
  };
  const Case cases[] = {
      {R"J("abcdef")J", R"J("abc")J"},         {R"J("ab")J", R"J("ab")J"},
      {R"J("é日😀x")J", R"J("é日😀")J"},       {R"J("a\"\\\nb")J", R"J("a\"\\")J"},
      {R"J("\ud83d\ude00\u00e9zz")J", R"J("\ud83d\ude00\u00e9z")J"},
  };
  (void)run(masker, {kUsersTable});
  for (const Case& c : cases) {
    CAPTURE(c.note);
    const std::string line = std::string(R"J({"op":"r","v":1,"db":"shop","table":"users","key":{"id":1},"before":null,)J") +
                             R"J("after":{"id":1,"email":"e","name":"n","size":"s","age":1,"note":)J" +
                             std::string(c.note) + R"J(},"ts_ms":0})J";
    std::string rewritten;
    auto changed = masker.mask(line, rewritten);
    REQUIRE(changed.has_value());
    REQUIRE(*changed);
    CHECK(cdc::ndjson::find_member(after_of(rewritten), "\"note\"").value_or("") == c.kept);
  }
}

TEST_CASE("Masker: drop removes the column from the rows and from the table line") {
  Masker masker(rules({"shop.users.age=drop", "shop.users.n*=drop"}), false);
  const std::string partial =
      R"J({"op":"u","v":1,"db":"shop","table":"users","key":{"id":7},"before":{"id":7},"after":{"age":31},)J"
      R"J("partial":true,"pos":{"file":"b.1","offset":4,"index":0,"gtid":null},"ts_ms":0})J";
  const auto out = run(masker, {kUsersTable, kInsert, partial});
  CHECK(out[0].find("\"age\"") == std::string::npos);
  CHECK(out[0].find("\"name\":\"name\"") == std::string::npos);
  CHECK(out[0].find("\"note\"") == std::string::npos);
  CHECK(out[0].find(R"J({"name":"size","type":"enum('s','m')")J") != std::string::npos);
  CHECK(out[0].find(R"J("key":["id"],"pos":null,"ts_ms":1725523201000})J") != std::string::npos);
  CHECK(after_of(out[1]) == R"J({"id":7,"email":"alice@example.com","size":"m"})J");
  // A partial image (binlog_row_image=MINIMAL) left with nothing is an empty object.
  CHECK(after_of(out[2]) == "{}");
  CHECK(out[2].find(R"J("partial":true)J") != std::string::npos);
}

TEST_CASE("Masker: drop reaches json_diffs, the other actions leave JSON columns alone") {
  constexpr std::string_view table =
      R"J({"op":"table","v":1,"db":"shop","table":"docs","columns":[{"name":"id","type":"int","nullable":false},)J"
      R"J({"name":"doc","type":"json","nullable":true},{"name":"extra","type":"json","nullable":true}],"key":["id"],"pos":null,"ts_ms":0})J";
  Masker masker(rules({"shop.docs.doc=drop", "shop.docs.*=redact:4"}), false);
  const std::string update =
      R"J({"op":"u","v":1,"db":"shop","table":"docs","key":{"id":1},"before":{"id":1},"after":{"id":1},)J"
      R"J("json_diffs":{"doc":[{"op":"remove","path":"$.a"}],"extra":[{"op":"remove","path":"$.b"}]},"partial":true,)J"
      R"J("pos":{"file":"b.1","offset":4,"index":0,"gtid":null},"ts_ms":0})J";
  const auto out = run(masker, {table, update});
  CHECK(std::string(cdc::ndjson::find_member(out[1], "\"json_diffs\"").value_or("")) ==
        R"J({"extra":[{"op":"remove","path":"$.b"}]})J");
}

TEST_CASE("Masker: a rule on a key column is refused at the table line unless --mask-keys") {
  SUBCASE("refused") {
    Masker masker(rules({"shop.users.id=drop"}), false);
    const cdc::Error error = refusal(masker, kUsersTable);
    CHECK(error.code == Errc::config);
    CHECK(error.message.find("key column shop.users.id") != std::string::npos);
    CHECK(error.message.find("--mask-keys") != std::string::npos);
  }
  SUBCASE("a wildcard over a non-string key column masks the strings only, and is no key change") {
    Masker masker(rules({"shop.users.*=redact:1"}), false);
    const auto out = run(masker, {kUsersTable, kInsert});
    // redact hides a NULL too, as Debezium's column.mask.with.N.chars does.
    CHECK(after_of(out[1]) == R"J({"id":7,"email":"*","name":"*","size":"*","age":30,"note":"*"})J");
  }
  SUBCASE("allowed: the key member is masked like the images, an emptied key is null") {
    Masker masker(rules({"shop.users.id=drop"}), true);
    const auto out = run(masker, {kUsersTable, kInsert});
    CHECK(out[0].find(R"J("key":null)J") != std::string::npos);
    CHECK(out[1].find(R"J("key":null,"before":null,"after":{"email":)J") != std::string::npos);
  }
}

TEST_CASE("Masker: a non-string column named outright is refused for hash, redact and truncate") {
  Masker masker(rules({"shop.users.age=hash:MD5:s"}), false);
  const cdc::Error error = refusal(masker, kUsersTable);
  CHECK(error.code == Errc::config);
  CHECK(error.message.find("shop.users.age is int(11), not a string column") != std::string::npos);
}

TEST_CASE("Masker: of the rules that match a column, the first that acts on its type wins") {
  // age is INT: the wildcard redact passes over it, the drop after it takes it.
  Masker masker(rules({"shop.users.*=redact:2", "shop.users.age=drop", "shop.users.email=drop"}), false);
  const auto out = run(masker, {kUsersTable, kInsert});
  CHECK(after_of(out[1]) == R"J({"id":7,"email":"**","name":"**","size":"**","note":"**"})J");
  const auto parsed = rules({"shop.users.*=redact:2", "shop.users.age=drop"});
  CHECK(cdc::output::mask_rule_for(parsed, "shop", "users", "age", "int(11)") == &parsed[1]);
  CHECK(cdc::output::mask_rule_for(parsed, "shop", "users", "email", "varchar(16)") == &parsed[0]);
  CHECK(cdc::output::mask_rule_for(parsed, "shop", "orders", "email", "varchar(16)") == nullptr);
}

TEST_CASE("Masker: lines it does not touch go out as they are, without a rewrite") {
  Masker masker(rules({"shop.users.email=redact:2"}), false);
  const std::string other_table =
      R"J({"op":"c","v":1,"db":"shop","table":"orders","key":{"id":1},"before":null,"after":{"id":1,"email":"x"},"ts_ms":0})J";
  const std::string commit = R"J({"op":"commit","v":1,"gtid":null,"pos":{"file":"b.1","offset":9},"ts_ms":0})J";
  std::string rewritten = "untouched";
  for (std::string_view line : {std::string_view(other_table), std::string_view(commit)}) {
    auto changed = masker.mask(line, rewritten);
    REQUIRE(changed.has_value());
    CHECK_FALSE(*changed);
  }
  CHECK(rewritten == "untouched");
}

TEST_CASE("Masker: a row of a masked table with no table line before it is refused") {
  Masker masker(rules({"shop.users.email=redact:2"}), false);
  const cdc::Error error = refusal(masker, kInsert);
  CHECK(error.code == Errc::corrupt_input);
  CHECK(error.message.find("no table line for shop.users before its first change") != std::string::npos);
}

TEST_CASE("Masker: a later table line (after a DDL) replaces the table's rules") {
  Masker masker(rules({"shop.users.no*=redact:1"}), false);
  const std::string_view note_text =
      R"J({"name":"note","type":"varchar(40)","nullable":true,"charset":"utf8mb4","collation":"utf8mb4_general_ci"})J";
  std::string altered(kUsersTable);  // ALTER TABLE users MODIFY note INT
  altered.replace(altered.find(note_text), note_text.size(), R"J({"name":"note","type":"int(11)","nullable":true})J");
  std::string row(kInsert);
  row.replace(row.find(R"J("note":null)J"), 11, R"J("note":"abc")J");
  std::string int_row(kInsert);
  int_row.replace(int_row.find(R"J("note":null)J"), 11, R"J("note":5)J");
  const auto out = run(masker, {kUsersTable, row, altered, int_row});
  CHECK(out[1].find(R"J("note":"*")J") != std::string::npos);
  CHECK(out[3] == int_row);  // no string column matches the rule any more
}

TEST_CASE("make_converter: --mask alone masks the canonical lines, with a format before the format") {
  cdc::output::OutputOptions options;
  options.masks = rules({"shop.users.email=hash:SHA-256:salt", "shop.users.age=drop"});
  const auto through = [&](cdc::output::Format format) {
    options.format = format;
    auto converter = cdc::output::make_converter(options);
    REQUIRE(converter.has_value());
    REQUIRE(*converter != nullptr);
    cdc::ndjson::Writer out;
    for (std::string_view line : {kUsersTable, kInsert}) {
      auto converted = (*converter)->convert(line, out);
      REQUIRE_MESSAGE(converted.has_value(), converted.error().message);
    }
    REQUIRE((*converter)->finish(out).has_value());
    return std::string(out.buffered());
  };
  // ndjson: the stage is the mask alone; the table line loses the dropped column.
  const std::string ndjson = through(cdc::output::Format::ndjson);
  CHECK(ndjson.find(R"J({"name":"age")J") == std::string::npos);
  CHECK(ndjson.find(R"J("after":{"id":7,"email":"109f0b7ded1d9414","name":"hello","size":"m","note":null})J") !=
        std::string::npos);
  CHECK(std::count(ndjson.begin(), ndjson.end(), '\n') == 2);
  // debezium: the masked values are what the format writes.
  const std::string debezium = through(cdc::output::Format::debezium);
  CHECK(debezium.find(R"J("after":{"id":7,"email":"109f0b7ded1d9414","name":"hello","size":"m","note":null})J") !=
        std::string::npos);
  CHECK(debezium.find("alice") == std::string::npos);
}

TEST_CASE("make_converter: --format ndjson without --mask is no stage at all") {
  auto converter = cdc::output::make_converter(cdc::output::OutputOptions{});
  REQUIRE(converter.has_value());
  CHECK(*converter == nullptr);
}
