#include "verify/row_diff.h"

#include <algorithm>

namespace cdc::verify {

namespace {

void sort_rows(std::vector<RowHash>& rows) {
  std::sort(rows.begin(), rows.end(), [](const RowHash& a, const RowHash& b) {
    if (a.sort_key != b.sort_key) return a.sort_key < b.sort_key;
    return a.hash < b.hash;
  });
}

}  // namespace

std::vector<KeyDifference> diff_rows(std::vector<RowHash>& source, std::vector<RowHash>& target) {
  sort_rows(source);
  sort_rows(target);
  std::vector<KeyDifference> out;
  std::size_t s = 0;
  std::size_t t = 0;
  // A merge of the two sorted lists: a key on one side only is missing on the other; a key on
  // both with another hash is a row that differs. Duplicates (a keyless table's equal rows)
  // pair off one by one, so a row held twice on one side and once on the other is one
  // difference.
  while (s < source.size() || t < target.size()) {
    const bool take_source = t == target.size() || (s < source.size() && source[s].sort_key < target[t].sort_key);
    const bool take_target = s == source.size() || (t < target.size() && target[t].sort_key < source[s].sort_key);
    if (take_source) {
      out.push_back({source[s].sort_key, source[s].key_json, true, false, source[s].values});
      ++s;
    } else if (take_target) {
      out.push_back({target[t].sort_key, target[t].key_json, false, true, target[t].values});
      ++t;
    } else {
      if (source[s].hash != target[t].hash)
        out.push_back({source[s].sort_key, source[s].key_json, true, true, source[s].values});
      ++s;
      ++t;
    }
  }
  return out;
}

std::unordered_set<std::string> changed_keys(std::vector<RowHash>& before, std::vector<RowHash>& after) {
  std::unordered_set<std::string> changed;
  for (const KeyDifference& difference : diff_rows(before, after)) changed.insert(difference.sort_key);
  return changed;
}

std::vector<KeyDifference> in_both(std::vector<KeyDifference> first, const std::vector<KeyDifference>& second) {
  std::unordered_set<std::string> keys;
  for (const KeyDifference& difference : second) keys.insert(difference.sort_key);
  std::erase_if(first, [&](const KeyDifference& difference) { return !keys.contains(difference.sort_key); });
  return first;
}

void keep_keys(std::vector<RowHash>& rows, const std::vector<KeyDifference>& differences) {
  std::unordered_set<std::string> kept;
  for (const KeyDifference& difference : differences) kept.insert(difference.sort_key);
  std::erase_if(rows, [&](const RowHash& row) { return !kept.contains(row.sort_key); });
}

bool all_settled(const std::vector<KeyDifference>& differences, const std::unordered_set<std::string>& changed) {
  return std::none_of(differences.begin(), differences.end(),
                      [&](const KeyDifference& difference) { return changed.contains(difference.sort_key); });
}

}  // namespace cdc::verify
