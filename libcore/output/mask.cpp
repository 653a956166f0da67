#include "output/mask.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "util/table_filter.h"
#include "util/text.h"

namespace cdc::output {

namespace {

constexpr std::string_view kRuleForm =
    "expected DB.TABLE.COL=ACTION, ACTION one of hash:ALGO:SALT (ALGO MD5, SHA-1, SHA-256, SHA-384 or SHA-512), "
    "redact:N, truncate:N, drop";

// The position of the first `c` in text that no `\` escapes, or npos.
std::size_t find_unescaped(std::string_view text, char c, std::size_t from = 0) noexcept {
  for (std::size_t at = from; at < text.size(); at += text[at] == '\\' && at + 1 < text.size() ? 2U : 1U)
    if (text[at] == c) return at;
  return std::string_view::npos;
}

bool has_wildcard(std::string_view glob) noexcept {
  return find_unescaped(glob, '*') != std::string_view::npos || find_unescaped(glob, '?') != std::string_view::npos;
}

std::optional<std::size_t> parse_count(std::string_view text) noexcept {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > 1'000'000) return std::nullopt;
  return value;
}

std::optional<HashAlgorithm> parse_algorithm(std::string_view name) noexcept {
  // Java's MessageDigest.getInstance takes the names in any case.
  if (iequals(name, "MD5")) return HashAlgorithm::md5;
  if (iequals(name, "SHA-1") || iequals(name, "SHA")) return HashAlgorithm::sha1;
  if (iequals(name, "SHA-256")) return HashAlgorithm::sha256;
  if (iequals(name, "SHA-384")) return HashAlgorithm::sha384;
  if (iequals(name, "SHA-512")) return HashAlgorithm::sha512;
  return std::nullopt;
}

const EVP_MD* evp_digest(HashAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case HashAlgorithm::md5: return EVP_md5();
    case HashAlgorithm::sha1: return EVP_sha1();
    case HashAlgorithm::sha256: return EVP_sha256();
    case HashAlgorithm::sha384: return EVP_sha384();
    case HashAlgorithm::sha512: return EVP_sha512();
  }
  return EVP_sha256();
}

// Appends the lowercase hex digest of salt || value, at most max_chars of it (0: all).
void append_hex_digest(EVP_MD_CTX* context, HashAlgorithm algorithm, std::string_view salt, std::string_view value,
                       std::size_t max_chars, std::string& out) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // These fail only when the allocator does, for digests OpenSSL always has.
  const bool ok = EVP_DigestInit_ex(context, evp_digest(algorithm), nullptr) == 1 &&
                  EVP_DigestUpdate(context, salt.data(), salt.size()) == 1 &&
                  EVP_DigestUpdate(context, value.data(), value.size()) == 1 &&
                  EVP_DigestFinal_ex(context, digest.data(), &size) == 1;
  if (!ok) throw std::bad_alloc();
  constexpr std::string_view kHex = "0123456789abcdef";
  const std::size_t chars = max_chars == 0 ? 2U * size : std::min<std::size_t>(max_chars, 2U * size);
  for (std::size_t i = 0; i < chars; ++i) {
    const unsigned byte = digest[i / 2];
    out.push_back(kHex[(i % 2 == 0 ? byte >> 4 : byte) & 0xFU]);
  }
}

// Debezium masks the columns whose JDBC type is a character type: CHAR, VARCHAR and the TEXT
// types, and ENUM and SET, which MySQL's driver reports as CHAR. The type is the table line's,
// information_schema's COLUMN_TYPE ("varchar(32)", "enum('a','b')"), or from a binary log alone
// the same without display details.
bool is_string_type(std::string_view type) noexcept {
  for (std::string_view name : {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}) {
    if (type.substr(0, name.size()) == name &&
        (type.size() == name.size() || type[name.size()] == '(' || type[name.size()] == ' '))
      return true;
  }
  return false;
}

// CHAR(n) and VARCHAR(n): n characters, which Debezium cuts hashes to; 0 for other types.
std::size_t character_length(std::string_view type) noexcept {
  for (std::string_view prefix : {"char(", "varchar("}) {
    if (type.substr(0, prefix.size()) != prefix) continue;
    const std::size_t close = type.find(')', prefix.size());
    if (close == std::string_view::npos) return 0;
    return parse_count(type.substr(prefix.size(), close - prefix.size())).value_or(0);
  }
  return 0;
}

bool names_match(const MaskRule& rule, std::string_view database, std::string_view table, std::string_view column) {
  return glob_match(rule.database, database) && glob_match(rule.table, table) && glob_match(rule.column, column);
}

bool applies_to(const MaskRule& rule, std::string_view type) {
  return rule.action == MaskAction::drop || is_string_type(type);
}

std::string unescaped(std::string_view quoted) {
  std::string text;
  if (!ndjson::append_unescaped(quoted, text)) return std::string(quoted);
  return text;
}

Unexpected corrupt(std::string_view what, std::string_view line) {
  return fail(Errc::corrupt_input, fmt::format("--mask: {}: {:.200}", what, line));
}

// Calls each(element_text) for the elements of the JSON array `array`; false when it does not scan.
template <typename Each>
bool for_each_element(std::string_view array, Each&& each) {
  std::size_t pos = 1;
  if (array.empty() || array.front() != '[') return false;
  for (;;) {
    while (pos < array.size() && (array[pos] == ' ' || array[pos] == ',')) ++pos;
    if (pos >= array.size()) return false;
    if (array[pos] == ']') return true;
    const std::size_t start = pos;
    if (!ndjson::skip_json_value(array, pos)) return false;
    each(array.substr(start, pos - start));
  }
}

}  // namespace

Result<MaskRule> parse_mask_rule(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return fail(Errc::usage, fmt::format("--mask '{}': {}; {}", text, why, kRuleForm));
  };
  const std::size_t equals = find_unescaped(text, '=');
  if (equals == std::string_view::npos) return bad("no '='");
  MaskRule rule;
  rule.text = std::string(text);
  const std::string_view pattern = text.substr(0, equals);
  const std::size_t first_dot = find_unescaped(pattern, '.');
  const std::size_t second_dot =
      first_dot == std::string_view::npos ? first_dot : find_unescaped(pattern, '.', first_dot + 1);
  if (second_dot == std::string_view::npos || find_unescaped(pattern, '.', second_dot + 1) != std::string_view::npos)
    return bad("the column needs three parts DB.TABLE.COL (a dot inside a name is written \\.)");
  rule.database = std::string(pattern.substr(0, first_dot));
  rule.table = std::string(pattern.substr(first_dot + 1, second_dot - first_dot - 1));
  rule.column = std::string(pattern.substr(second_dot + 1));
  if (rule.database.empty() || rule.table.empty() || rule.column.empty()) return bad("an empty part in DB.TABLE.COL");

  const std::string_view action = text.substr(equals + 1);
  const std::size_t colon = action.find(':');
  const std::string_view name = action.substr(0, colon);
  const std::string_view argument = colon == std::string_view::npos ? std::string_view() : action.substr(colon + 1);
  if (name == "drop" && colon == std::string_view::npos) {
    rule.action = MaskAction::drop;
  } else if ((name == "redact" || name == "truncate") && colon != std::string_view::npos) {
    rule.action = name == "redact" ? MaskAction::redact : MaskAction::truncate;
    const auto count = parse_count(argument);
    if (!count) return bad(fmt::format("{}:N needs a whole number N up to 1000000", name));
    if (*count == 0 && rule.action == MaskAction::truncate) return bad("truncate:N needs N of at least 1");
    rule.length = *count;
  } else if (name == "hash" && colon != std::string_view::npos) {
    rule.action = MaskAction::hash;
    const std::size_t salt_colon = argument.find(':');
    if (salt_colon == std::string_view::npos) return bad("hash needs hash:ALGO:SALT");
    const auto algorithm = parse_algorithm(argument.substr(0, salt_colon));
    if (!algorithm) return bad(fmt::format("unknown digest '{}'", argument.substr(0, salt_colon)));
    rule.algorithm = *algorithm;
    rule.salt = std::string(argument.substr(salt_colon + 1));
  } else {
    return bad(fmt::format("unknown action '{}'", action));
  }
  return rule;
}

const MaskRule* mask_rule_for(std::span<const MaskRule> rules, std::string_view database, std::string_view table,
                              std::string_view column, std::string_view type) {
  for (const MaskRule& rule : rules)
    if (names_match(rule, database, table, column) && applies_to(rule, type)) return &rule;
  return nullptr;
}

std::string mask_hash_hex(HashAlgorithm algorithm, std::string_view salt, std::string_view value) {
  std::string hex;
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  if (context == nullptr) throw std::bad_alloc();
  append_hex_digest(context, algorithm, salt, value, 0, hex);
  EVP_MD_CTX_free(context);
  return hex;
}

struct Masker::Digest {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  Digest() {
    if (context == nullptr) throw std::bad_alloc();
  }
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;
  ~Digest() { EVP_MD_CTX_free(context); }
};

Masker::Masker(std::vector<MaskRule> rules, bool mask_keys)
    : rules_(std::move(rules)), mask_keys_(mask_keys), digest_(std::make_unique<Digest>()) {}

Masker::~Masker() = default;

bool Masker::any_rule_matches(std::string_view database, std::string_view table) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const MaskRule& rule) {
    return glob_match(rule.database, database) && glob_match(rule.table, table);
  });
}

Result<bool> Masker::mask(std::string_view line, std::string& rewritten) {
  ndjson::MemberScanner scanner(line);
  std::string_view key;
  std::string_view op;
  if (!scanner.next(key, op) || key != "\"op\"") return false;  // not a cdc line: passed on as it is
  if (op == "\"table\"") return describe_table(line, rewritten);
  if (op != "\"r\"" && op != "\"c\"" && op != "\"u\"" && op != "\"d\"") return false;

  std::string_view database;
  std::string_view table;
  std::string_view value;
  while ((database.empty() || table.empty()) && scanner.next(key, value)) {
    if (key == "\"db\"") database = value;
    if (key == "\"table\"") table = value;
  }
  if (database.empty() || table.empty()) return corrupt("a row line without db and table", line);
  lookup_.assign(database).append(table);
  if (const auto found = plans_.find(lookup_); found != plans_.end()) {
    if (found->second.columns.empty()) return false;
    return mask_row(line, found->second, rewritten);
  }
  const std::string database_name = unescaped(database);
  const std::string table_name = unescaped(table);
  if (any_rule_matches(database_name, table_name))
    return fail(Errc::corrupt_input,
                fmt::format("--mask: no table line for {}.{} before its first change: the input is not a whole cdc "
                            "output (masking needs the table lines that describe the columns)",
                            database_name, table_name));
  plans_.emplace(lookup_, TablePlan{});
  return false;
}

Result<bool> Masker::describe_table(std::string_view line, std::string& rewritten) {
  ndjson::MemberScanner scanner(line);
  std::string_view key;
  std::string_view value;
  std::string_view database;
  std::string_view table;
  std::string_view columns;
  std::string_view key_columns;
  while (scanner.next(key, value)) {
    if (key == "\"db\"") database = value;
    if (key == "\"table\"") table = value;
    if (key == "\"columns\"") columns = value;
    if (key == "\"key\"") key_columns = value;
  }
  if (scanner.failed() || database.empty() || table.empty() || columns.empty())
    return corrupt("a table line without db, table and columns", line);
  const std::string database_name = unescaped(database);
  const std::string table_name = unescaped(table);
  lookup_.assign(database).append(table);
  TablePlan plan;
  if (!any_rule_matches(database_name, table_name)) {
    plans_.insert_or_assign(lookup_, std::move(plan));
    return false;
  }

  std::vector<std::string_view> keys;
  if (key_columns.starts_with('[') && !for_each_element(key_columns, [&](std::string_view name) { keys.push_back(name); }))
    return corrupt("a table line whose key does not scan", line);
  bool drops = false;
  std::optional<Error> refused;
  const bool scanned = for_each_element(columns, [&](std::string_view column) {
    if (refused) return;
    const auto quoted_name = ndjson::find_member(column, "\"name\"");
    const auto quoted_type = ndjson::find_member(column, "\"type\"");
    if (!quoted_name || !quoted_type) return;
    const std::string name = unescaped(*quoted_name);
    const std::string type = unescaped(*quoted_type);
    const std::string where = fmt::format("{}.{}.{}", database_name, table_name, name);
    // As mask_rule_for, and on the way: a wildcard may sweep over columns of any type, as
    // Debezium's patterns do, but a non-string column named outright for hash, redact or
    // truncate is a mistake worth saying.
    const MaskRule* rule = nullptr;
    for (const MaskRule& candidate : rules_) {
      if (!names_match(candidate, database_name, table_name, name)) continue;
      if (applies_to(candidate, type)) {
        rule = &candidate;
        break;
      }
      if (!has_wildcard(candidate.column)) {
        refused = Error{Errc::config, fmt::format("--mask {}: {} is {}, not a string column: hash, redact and "
                                                  "truncate mask CHAR, VARCHAR, TEXT, ENUM and SET columns only, "
                                                  "as Debezium's do; use drop for it, or leave it out",
                                                  candidate.text, where, type)};
        return;
      }
    }
    if (rule == nullptr) return;
    if (!mask_keys_ && std::find(keys.begin(), keys.end(), *quoted_name) != keys.end()) {
      refused = Error{Errc::config, fmt::format("--mask {} would change key column {}: consumers tell rows apart "
                                                "by their key (Kafka keys, upserts); add --mask-keys to allow it, "
                                                "or narrow the pattern",
                                                rule->text, where)};
      return;
    }
    drops = drops || rule->action == MaskAction::drop;
    plan.columns.push_back(ColumnMask{std::string(*quoted_name), rule, character_length(type)});
  });
  if (!scanned) return corrupt("a table line whose columns do not scan", line);
  if (refused) return fail(std::move(*refused));
  const TablePlan& stored = plans_.insert_or_assign(lookup_, std::move(plan)).first->second;
  if (!drops) return false;

  // The dropped columns leave the description too, so that it matches the rows.
  const auto dropped = [&](std::string_view quoted_name) {
    return std::any_of(stored.columns.begin(), stored.columns.end(), [&](const ColumnMask& mask) {
      return mask.rule->action == MaskAction::drop && mask.quoted_name == quoted_name;
    });
  };
  const auto append_kept = [&](std::string_view array, auto&& name_of) {
    const std::size_t start = rewritten.size();
    rewritten.push_back('[');
    (void)for_each_element(array, [&](std::string_view element) {
      if (dropped(name_of(element))) return;
      if (rewritten.size() > start + 1) rewritten.push_back(',');
      rewritten.append(element);
    });
    rewritten.push_back(']');
    return rewritten.size() - start;
  };
  rewritten.clear();
  rewritten.push_back('{');
  ndjson::MemberScanner members(line);
  while (members.next(key, value)) {
    if (rewritten.size() > 1) rewritten.push_back(',');
    rewritten.append(key).push_back(':');
    if (key == "\"columns\"") {
      append_kept(value, [](std::string_view column) { return ndjson::find_member(column, "\"name\"").value_or(""); });
    } else if (key == "\"key\"" && value.starts_with('[')) {
      if (append_kept(value, [](std::string_view name) { return name; }) == 2) {
        rewritten.resize(rewritten.size() - 2);
        rewritten.append("null");  // every key column dropped: the rows have no key left
      }
    } else {
      rewritten.append(value);
    }
  }
  rewritten.push_back('}');
  return true;
}

Result<bool> Masker::mask_row(std::string_view line, const TablePlan& plan, std::string& rewritten) {
  rewritten.clear();
  rewritten.push_back('{');
  ndjson::MemberScanner members(line);
  std::string_view key;
  std::string_view value;
  while (members.next(key, value)) {
    if (rewritten.size() > 1) rewritten.push_back(',');
    rewritten.append(key).push_back(':');
    const bool image = key == "\"before\"" || key == "\"after\"" || key == "\"key\"" || key == "\"json_diffs\"";
    if (!image || !value.starts_with('{')) {
      rewritten.append(value);
      continue;
    }
    const ImagePart part = key == "\"key\"" ? ImagePart::key : key == "\"json_diffs\"" ? ImagePart::json_diffs
                                                                                       : ImagePart::row;
    if (!append_image(value, plan, part, rewritten)) return corrupt("a row image that does not scan", line);
  }
  if (members.failed()) return corrupt("a row line that does not scan", line);
  rewritten.push_back('}');
  return true;
}

bool Masker::append_image(std::string_view image, const TablePlan& plan, ImagePart part, std::string& out) {
  const std::size_t start = out.size();
  out.push_back('{');
  bool dropped_any = false;
  ndjson::MemberScanner members(image);
  std::string_view name;
  std::string_view value;
  while (members.next(name, value)) {
    const auto mask = std::find_if(plan.columns.begin(), plan.columns.end(),
                                   [&](const ColumnMask& candidate) { return candidate.quoted_name == name; });
    if (mask != plan.columns.end() && mask->rule->action == MaskAction::drop) {
      dropped_any = true;
      continue;
    }
    if (out.size() > start + 1) out.push_back(',');
    out.append(name).push_back(':');
    // json_diffs holds JSON columns only, which no string rule masks: only drop reaches it.
    if (mask == plan.columns.end() || part == ImagePart::json_diffs) {
      out.append(value);
    } else if (!append_masked_value(value, *mask, out)) {
      return false;
    }
  }
  if (members.failed()) return false;
  if (part == ImagePart::key && dropped_any && out.size() == start + 1) {
    out.resize(start);
    out.append("null");  // every key column dropped (--mask-keys)
    return true;
  }
  out.push_back('}');
  return true;
}

bool Masker::append_masked_value(std::string_view value, const ColumnMask& mask, std::string& out) {
  // Debezium hands NULL to its mask converters too: column.mask.with.N.chars writes the '*'s
  // for it (so NULL-ness does not show), the hash and the truncation keep it NULL.
  if (value == "null" && mask.rule->action != MaskAction::redact) {
    out.append(value);
    return true;
  }
  // Text values are JSON strings; ENUM and SET columns read without their labels (the
  // fallback of cdc-ndjson(5)) are numbers, masked as their digits.
  const bool quoted = value.starts_with('"');
  const MaskRule& rule = *mask.rule;
  out.push_back('"');
  switch (rule.action) {
    case MaskAction::redact: out.append(rule.length, '*'); break;
    case MaskAction::truncate:
      if (quoted) {
        const std::string_view body = value.substr(1, value.size() - 2);
        out.append(body.substr(0, ndjson::escaped_prefix_length(body, rule.length)));
      } else {
        out.append(value.substr(0, rule.length));
      }
      break;
    case MaskAction::hash:
      scratch_.clear();
      if (quoted) {
        if (!ndjson::append_unescaped(value, scratch_)) return false;
      } else {
        scratch_.assign(value);
      }
      append_hex_digest(digest_->context, rule.algorithm, rule.salt, scratch_, mask.char_length, out);
      break;
    case MaskAction::drop: break;  // handled by the caller
  }
  out.push_back('"');
  return true;
}

namespace {

class MaskingConverter final : public Converter {
 public:
  MaskingConverter(std::vector<MaskRule> rules, bool mask_keys, std::unique_ptr<Converter> format)
      : masker_(std::move(rules), mask_keys), format_(std::move(format)) {}

  Result<void> convert(std::string_view line, ndjson::Writer& out) override {
    auto changed = masker_.mask(line, rewritten_);
    if (!changed) return fail(std::move(changed).error());
    const std::string_view masked = *changed ? std::string_view(rewritten_) : line;
    if (format_) return format_->convert(masked, out);
    out.raw_value(masked);
    out.end_record();
    return {};
  }
  Result<void> finish(ndjson::Writer& out) override { return format_ ? format_->finish(out) : Result<void>(); }
  void drop_held() noexcept override {
    if (format_) format_->drop_held();
  }

 private:
  Masker masker_;
  std::unique_ptr<Converter> format_;
  std::string rewritten_;
};

}  // namespace

std::unique_ptr<Converter> make_masking_converter(std::vector<MaskRule> rules, bool mask_keys,
                                                  std::unique_ptr<Converter> format) {
  return std::make_unique<MaskingConverter>(std::move(rules), mask_keys, std::move(format));
}

}  // namespace cdc::output
