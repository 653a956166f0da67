#pragma once

// What the MySQL GTID set tests share (gtid_set_test.cpp: text, algebra; gtid_set_binary_test.cpp:
// the binary form): sets from text, hand-built bytes, and random sets with an independent model
// (the set of (uuid index, tag index, number) they hold).

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"
#include "gtid/uuid.h"
#include "gtid_string_makers.h"
#include "util/byte_reader.h"

namespace gtid_test {

using cdc::ByteReader;
using cdc::Errc;
using cdc::gtid::Gtid;
using cdc::gtid::Interval;
using cdc::gtid::kMaxGno;
using cdc::gtid::MariadbGtid;
using cdc::gtid::MariadbGtidPos;
using cdc::gtid::MysqlGtidSet;
using cdc::gtid::Uuid;

inline const std::string U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
inline const std::string U2 = "4f8ca9d0-1234-11ee-8000-000000000001";
inline const std::string U3 = "a1b2c3d4-0000-4000-8000-0000000000ff";

inline Uuid uuid(const std::string& text) {
  auto parsed = Uuid::parse(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

inline MysqlGtidSet set_of(const std::string& text) {
  auto parsed = MysqlGtidSet::parse(text);
  if (!parsed) FAIL_CHECK(parsed.error().message);
  REQUIRE(parsed.has_value());
  return *parsed;
}

inline std::string bytes(std::initializer_list<unsigned> values) {
  std::string out;
  for (const unsigned v : values) out.push_back(static_cast<char>(v));
  return out;
}

inline std::string u64_le(std::uint64_t value) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out;
}

inline std::string uuid_bytes(const std::string& text) {
  const Uuid u = uuid(text);
  return std::string(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size());
}

inline std::string hex_to_bytes(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

inline std::string encoded(const MysqlGtidSet& set) {
  std::string out;
  set.encode(out);
  return out;
}

inline cdc::Result<MysqlGtidSet> decode(const std::string& data) {
  ByteReader reader(data);
  return MysqlGtidSet::decode(reader);
}

// ---------------------------------------------------------------------------------------
// Random sets with an independent model: the set of (uuid index, tag index, number).

inline const std::vector<std::string> kRandomUuids = {U1, U2, U3};
inline const std::vector<Uuid> kRandomUuidValues = {*Uuid::parse(U1), *Uuid::parse(U2), *Uuid::parse(U3)};
inline const std::vector<std::string> kRandomTags = {"", "alpha", "b_2"};
using Model = std::set<std::tuple<std::size_t, std::size_t, std::uint64_t>>;

inline std::uint64_t pick(std::mt19937_64& rng, std::uint64_t low, std::uint64_t high) {
  return std::uniform_int_distribution<std::uint64_t>(low, high)(rng);
}

// Small numbers (1..kSmallMax), so the model can enumerate every member.
inline constexpr std::uint64_t kSmallMax = 40;

inline MysqlGtidSet random_small_set(std::mt19937_64& rng, Model& model) {
  MysqlGtidSet set;
  const std::uint64_t count = pick(rng, 0, 6);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t u = static_cast<std::size_t>(pick(rng, 0, kRandomUuids.size() - 1));
    const std::size_t t = static_cast<std::size_t>(pick(rng, 0, kRandomTags.size() - 1));
    const std::uint64_t start = pick(rng, 1, kSmallMax);
    const std::uint64_t end = std::min(kSmallMax, start + pick(rng, 0, 8));
    REQUIRE(set.add(kRandomUuidValues[u], kRandomTags[t], start, end).has_value());
    for (std::uint64_t n = start; n <= end; ++n) model.emplace(u, t, n);
  }
  return set;
}

// Anywhere in 1..kMaxGno, including the very end.
inline MysqlGtidSet random_wide_set(std::mt19937_64& rng) {
  MysqlGtidSet set;
  const std::uint64_t count = pick(rng, 0, 8);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t u = static_cast<std::size_t>(pick(rng, 0, kRandomUuids.size() - 1));
    const std::size_t t = static_cast<std::size_t>(pick(rng, 0, kRandomTags.size() - 1));
    std::uint64_t start = 0;
    switch (pick(rng, 0, 2)) {
      case 0: start = pick(rng, 1, 30); break;
      case 1: start = pick(rng, kMaxGno - 30, kMaxGno); break;
      default: start = pick(rng, 1, kMaxGno); break;
    }
    const std::uint64_t length = pick(rng, 0, 1) == 0 ? pick(rng, 0, 5) : pick(rng, 0, std::uint64_t{1} << 40);
    const std::uint64_t end = length > kMaxGno - start ? kMaxGno : start + length;
    REQUIRE(set.add(kRandomUuidValues[u], kRandomTags[t], start, end).has_value());
  }
  return set;
}

inline void check_matches_model(const MysqlGtidSet& set, const Model& model) {
  for (std::size_t u = 0; u < kRandomUuids.size(); ++u) {
    for (std::size_t t = 0; t < kRandomTags.size(); ++t) {
      for (std::uint64_t n = 1; n <= kSmallMax + 1; ++n) {
        const Gtid gtid{kRandomUuidValues[u], kRandomTags[t], n};
        const bool expected = model.count({u, t, n}) != 0;
        if (set.contains(gtid) != expected) {
          FAIL_CHECK(fmt::format("{} in {}: expected {}", gtid, set, expected));
          return;
        }
      }
    }
  }
}

}  // namespace gtid_test
