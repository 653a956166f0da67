#pragma once

// Column masking: --mask DB.TABLE.COL=hash:ALGO:SALT|redact:N|truncate:N|drop (cdc-formats(7),
// MASKING). Applied inside the output stage to the canonical lines, before any format, so a
// masked value is the same in every format and in the snapshot (cdc-merge, cdc-sync) as in the
// stream (cdc-stream): one Masker per output sees the "table" lines that describe each table
// and rewrites the key, before and after members of the rows that follow.
//
// As Debezium's column.mask.* and column.exclude.list, whose behaviour users know:
// - hash:ALGO:SALT is column.mask.hash.v2.ALGO.with.salt.SALT: the lowercase hex digest of the
//   salt's bytes followed by the value's UTF-8 bytes, cut to the column's character length
//   when it has one (CHAR(n), VARCHAR(n)). ALGO is a Java MessageDigest name: MD5, SHA-1,
//   SHA-256, SHA-384, SHA-512 (any case).
// - redact:N is column.mask.with.N.chars: N '*' (N = 0: "").
// - truncate:N is column.truncate.to.N.chars: at most N characters. Debezium counts UTF-16
//   units (Java's substring); cdc counts characters (code points), so a character outside
//   the BMP (an emoji) counts once here and twice there, and is never cut in half.
// - drop is column.exclude.list: the column leaves key, before, after (json_diffs too) and
//   the table line.
// hash, redact and truncate act on string columns only (CHAR, VARCHAR, the TEXT types, ENUM,
// SET), as Debezium's do; a rule whose column part is a plain name (no wildcard) that meets a
// column of another type is refused. redact writes its '*'s for a NULL too (Debezium does);
// hash and truncate keep NULL. A rule that would change a key column is refused unless
// --mask-keys. Of the rules that match a column, the first that acts on its type wins.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/result.h"

namespace cdc::output {

class Converter;

enum class MaskAction : std::uint8_t { hash, redact, truncate, drop };
enum class HashAlgorithm : std::uint8_t { md5, sha1, sha256, sha384, sha512 };

struct MaskRule {
  std::string text;  // as given, for messages: "shop.users.email=hash:SHA-256:pepper"
  // The three globs of DB.TABLE.COL (`*`, `?`, and `\` escaping the next character, e.g. a
  // dot inside a name), matched case-sensitively against the names (util/table_filter.h).
  std::string database;
  std::string table;
  std::string column;
  MaskAction action = MaskAction::drop;
  HashAlgorithm algorithm = HashAlgorithm::sha256;
  std::string salt;        // hash
  std::size_t length = 0;  // redact: how many '*'; truncate: the characters kept (> 0)
};

// One --mask value. Errc::usage naming the option, the text and the expected form.
[[nodiscard]] Result<MaskRule> parse_mask_rule(std::string_view text);

// The rule that masks column `column` of database.table, whose type is `type` as the table line
// writes it ("varchar(32)"): the first that matches the names and acts on that type (drop on
// any, the others on string columns); nullptr for none. For a format that marks masked columns
// in its schemas (Debezium's masked=true, truncateLength=N).
[[nodiscard]] const MaskRule* mask_rule_for(std::span<const MaskRule> rules, std::string_view database,
                                            std::string_view table, std::string_view column, std::string_view type);

// The digest of salt || value as lowercase hex (not cut): what hash:ALGO:SALT writes for a
// column without a length.
[[nodiscard]] std::string mask_hash_hex(HashAlgorithm algorithm, std::string_view salt, std::string_view value);

class Masker {
 public:
  Masker(std::vector<MaskRule> rules, bool mask_keys);
  Masker(const Masker&) = delete;
  Masker& operator=(const Masker&) = delete;
  ~Masker();

  // One canonical line, without its newline. Returns false when the line goes out as it is
  // (most lines: tables without a matching rule, control lines), true when `rewritten` holds
  // the line to write instead (also without its newline). A "table" line sets up the table's
  // rules: Errc::config when a rule would mask a key column without --mask-keys, or names a
  // non-string column for hash, redact or truncate. Errc::corrupt_input for a row of a table a
  // rule matches that no table line described before it, or a line that does not scan.
  [[nodiscard]] Result<bool> mask(std::string_view line, std::string& rewritten);

 private:
  struct ColumnMask {
    std::string quoted_name;  // the column's name as a JSON string, as the lines write it
    const MaskRule* rule = nullptr;
    std::size_t char_length = 0;  // CHAR(n)/VARCHAR(n): hashes are cut to n; 0 for none
  };
  struct TablePlan {
    std::vector<ColumnMask> columns;  // the masked columns; empty: the table's rows pass as they are
  };

  enum class ImagePart : std::uint8_t { key, row, json_diffs };

  [[nodiscard]] Result<bool> describe_table(std::string_view line, std::string& rewritten);
  [[nodiscard]] Result<bool> mask_row(std::string_view line, const TablePlan& plan, std::string& rewritten);
  // Append the object `image` (the value) with the plan applied; false when it does not scan.
  [[nodiscard]] bool append_image(std::string_view image, const TablePlan& plan, ImagePart part, std::string& out);
  [[nodiscard]] bool append_masked_value(std::string_view value, const ColumnMask& mask, std::string& out);
  [[nodiscard]] bool any_rule_matches(std::string_view database, std::string_view table) const;

  std::vector<MaskRule> rules_;
  bool mask_keys_;
  // By the db and table members' raw JSON text side by side ("\"shop\"\"users\""): a row
  // finds its table's plan without decoding or allocating.
  std::unordered_map<std::string, TablePlan> plans_;
  std::string lookup_;   // reused for the map lookup's key
  std::string scratch_;  // reused: a value's unescaped text
  struct Digest;
  std::unique_ptr<Digest> digest_;  // OpenSSL's context, reused for every hash
};

// The output stage's masking step: each canonical line through a Masker, then to `format` (the
// format's converter; nullptr for --format ndjson, where the masked lines go out as they are).
[[nodiscard]] std::unique_ptr<Converter> make_masking_converter(std::vector<MaskRule> rules, bool mask_keys,
                                                                std::unique_ptr<Converter> format);

}  // namespace cdc::output
