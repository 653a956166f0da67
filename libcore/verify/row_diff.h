#pragma once

// The rows of one chunk on both sides, each as its key and its hash (digest_sql.h), compared
// in the key's order: which keys one side lacks, and which rows differ. Pure: the rows come
// from the servers (mariadb_sides.h), the comparison needs none.
//
// Keys are compared by their sort keys (order/key_order.h): bytes whose order is the server's
// order under the key columns' collations, equal exactly when the server finds the keys
// equal. So 'a' on one side and 'A' on the other are one key under a case-insensitive
// collation, whose rows differ; both sides are sorted here, whatever order the servers sent.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace cdc::verify {

struct RowHash {
  std::string sort_key;  // how the key orders (order::append_row_sort_key)
  std::string key_json;  // the key as the verify line writes it: {"id":5}
  std::string hash;      // 32 hex digits
  std::vector<std::string> values;  // the key's values as the server sent them, to ask for the row again
};

struct KeyDifference {
  std::string sort_key;
  std::string key_json;
  bool in_source = false;
  bool in_target = false;  // both: the row differs
  std::vector<std::string> values;
};

// Sorts both by sort key (then hash, for the duplicate rows of a table without a key, whose
// key is the whole row) and returns the differences in key order.
[[nodiscard]] std::vector<KeyDifference> diff_rows(std::vector<RowHash>& source, std::vector<RowHash>& target);

// The sort keys of the rows that changed between two reads of the same side.
[[nodiscard]] std::unordered_set<std::string> changed_keys(std::vector<RowHash>& before, std::vector<RowHash>& after);

// The differences of `first` whose key is also among `second`'s: the rows of the target that
// differ from both reads of the source (a row equal to either one is what the source held at
// that read).
[[nodiscard]] std::vector<KeyDifference> in_both(std::vector<KeyDifference> first,
                                                 const std::vector<KeyDifference>& second);

// Keeps the rows whose key is one of the differences' (a later read narrowed to them).
void keep_keys(std::vector<RowHash>& rows, const std::vector<KeyDifference>& differences);

// Whether none of the differences is of a row that changed on the source between its two
// reads, so the target, read between them, was compared with rows that held all along.
[[nodiscard]] bool all_settled(const std::vector<KeyDifference>& differences,
                               const std::unordered_set<std::string>& changed);

}  // namespace cdc::verify
