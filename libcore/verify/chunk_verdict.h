#pragma once

// One chunk compared while changes flow (cdc-apply(1), VERIFY). Both reads of a side are in a
// read view that also gives the position it reflects: the source's binlog position read inside
// the view (at or after it: every transaction the view sees is in it), the target's position
// table read in the view of its rows. A difference is only reported when it cannot come from
// changes in flight:
//
//  1. The digests (digest_sql.h) of the source at S and of the target at T: equal, the chunk
//     is equal (the target holds what the source held at S).
//  2. Otherwise, the target waits until it has applied S (--verify-wait), and is read again:
//     equal is equal.
//  3. Otherwise, rows: the source's (key, hash) at S1, the target's at T >= S1 once it applied
//     S1, the source's again at S2 (after T was read, so S1 <= T <= S2). A target row equal
//     to the source's at S1 or at S2 is what the source held then: equal. A row that differs
//     from both, and is the same on the source at S1 and S2, held still on the source while
//     the target was read: the target differs from what it applied. When every such row
//     held still in two rounds in a row (see the .cpp for why two), the chunk differs, with
//     those keys; when some row changed on the source meanwhile, the round is repeated from
//     S2 for the rows that differed only (the others were equal), up to --verify-rounds, and
//     a chunk whose differing rows never hold still is "unsettled", not "differs".
//     Narrowing matters under load: a row in flight in one round is rarely in flight again
//     in the next, while the chunk as a whole often is.
//
// A source row changed and changed back between S1 and S2, in two rounds in a row, would look
// still; its difference would be reported although the target may only be behind. The next
// run tells.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gtid/position.h"
#include "records/chunk.h"
#include "util/result.h"
#include "verify/row_diff.h"

namespace cdc::verify {

struct Digest {
  std::uint64_t rows = 0;
  std::string high;  // SUM of the row hashes' first 64 bits, as the server prints it
  std::string low;   // and of their last 64
  bool operator==(const Digest&) const = default;
};

struct DigestRead {
  Digest digest;
  gtid::Position position;
};

struct RowsRead {
  std::vector<RowHash> rows;
  gtid::Position position;
};

// A chunk's reads on one server: each in a read view of its own, with its position.
class Side {
 public:
  Side() = default;
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
  virtual ~Side() = default;
  [[nodiscard]] virtual Result<DigestRead> digest(const records::Chunk& chunk) = 0;
  // only: the keys to read again (empty: every row of the chunk). A side may read more rows
  // than asked for (a table without a key: all); the comparison keeps the ones asked for.
  [[nodiscard]] virtual Result<RowsRead> rows(const records::Chunk& chunk, std::span<const KeyDifference> only) = 0;
};

class TargetSide : public Side {
 public:
  // Waits until the target has applied position (its position table includes it), for up to
  // the wait the side was made with. nullopt when it did not; else the position it holds.
  [[nodiscard]] virtual Result<std::optional<gtid::Position>> wait_for(const gtid::Position& position) = 0;
};

enum class Status { equal, differs, unsettled };
[[nodiscard]] std::string_view status_name(Status status) noexcept;

struct Verdict {
  Status status = Status::equal;
  std::uint64_t rows_source = 0;  // the chunk's rows, as the digests counted them
  std::uint64_t rows_target = 0;
  std::string source_position;
  std::string target_position;
  unsigned rounds = 0;                  // comparisons of rows made (0: the digests decided)
  std::vector<KeyDifference> keys;      // differs: every differing key, in key order
  std::string reason;                   // unsettled: why
};

struct VerdictOptions {
  unsigned rounds = 5;  // row comparisons before a chunk that keeps changing is unsettled (at least 2)
  // More differing rows than this are read again as the whole chunk, not key by key.
  std::size_t narrow_at_most = 1000;
};

[[nodiscard]] Result<Verdict> verify_chunk(const records::Chunk& chunk, Side& source, TargetSide& target,
                                           const VerdictOptions& options);

}  // namespace cdc::verify
