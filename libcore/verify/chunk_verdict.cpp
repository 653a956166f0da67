#include "verify/chunk_verdict.h"

#include <fmt/format.h>

#include "apply/applier.h"

namespace cdc::verify {

namespace {

Verdict decided(Status status, const DigestRead& source, const DigestRead& target) {
  Verdict verdict;
  verdict.status = status;
  verdict.rows_source = source.digest.rows;
  verdict.rows_target = target.digest.rows;
  verdict.source_position = source.position.to_string();
  verdict.target_position = target.position.to_string();
  return verdict;
}

// The target's position once it includes `position`: now, or after waiting. nullopt: it did
// not get there in time.
Result<std::optional<gtid::Position>> applied_past(TargetSide& target, const gtid::Position& held,
                                                   const gtid::Position& position) {
  auto applied = apply::already_applied(held, position);
  if (!applied) return fail(applied.error());
  if (*applied) return std::optional<gtid::Position>(held);
  return target.wait_for(position);
}

// `rows_source`, `rows_target`: the digests' counts, which the line reports however it ends.
Verdict not_reached(const gtid::Position& source, const gtid::Position& target, std::uint64_t rows_source,
                    std::uint64_t rows_target) {
  Verdict verdict;
  verdict.status = Status::unsettled;
  verdict.rows_source = rows_source;
  verdict.rows_target = rows_target;
  verdict.source_position = source.to_string();
  verdict.target_position = target.to_string();
  verdict.reason = fmt::format("the target did not apply the source's position {} in time (--verify-wait); it "
                               "holds {}: cdc-apply is not running or lags, or the source's last transactions "
                               "were to tables the stream does not select (a heartbeat table among them helps)",
                               verdict.source_position, verdict.target_position);
  return verdict;
}

}  // namespace

std::string_view status_name(Status status) noexcept {
  switch (status) {
    case Status::equal: return "equal";
    case Status::differs: return "differs";
    case Status::unsettled: return "unsettled";
  }
  return "unsettled";
}

Result<Verdict> verify_chunk(const records::Chunk& chunk, Side& source, TargetSide& target,
                             const VerdictOptions& options) {
  // 1 and 2: the digests, before and once the target applied the source's position.
  auto source_digest = source.digest(chunk);
  if (!source_digest) return fail(source_digest.error());
  auto target_digest = target.digest(chunk);
  if (!target_digest) return fail(target_digest.error());
  if (source_digest->digest == target_digest->digest) return decided(Status::equal, *source_digest, *target_digest);
  auto reached = applied_past(target, target_digest->position, source_digest->position);
  if (!reached) return fail(reached.error());
  if (!*reached)
    return not_reached(source_digest->position, target_digest->position, source_digest->digest.rows,
                       target_digest->digest.rows);
  if ((*reached)->to_string() != target_digest->position.to_string()) {  // it waited: read again
    target_digest = target.digest(chunk);
    if (!target_digest) return fail(target_digest.error());
    if (source_digest->digest == target_digest->digest) return decided(Status::equal, *source_digest, *target_digest);
  }

  // 3: rows, between two reads of the source.
  std::vector<KeyDifference> only;  // empty: every row of the chunk
  auto first = source.rows(chunk, only);
  if (!first) return fail(first.error());
  RowsRead before = std::move(*first);
  Verdict verdict;
  bool settled_before = false;  // the last round's differing rows all held still
  for (unsigned round = 1; round <= options.rounds; ++round) {
    auto waited = target.wait_for(before.position);
    if (!waited) return fail(waited.error());
    if (!*waited)
      return not_reached(before.position, target_digest->position, source_digest->digest.rows,
                         target_digest->digest.rows);
    auto target_rows = target.rows(chunk, only);
    if (!target_rows) return fail(target_rows.error());
    auto after = source.rows(chunk, only);
    if (!after) return fail(after.error());
    if (!only.empty()) {
      keep_keys(target_rows->rows, only);
      keep_keys(after->rows, only);
    }
    verdict = Verdict{};
    verdict.rounds = round;
    verdict.rows_source = source_digest->digest.rows;
    verdict.rows_target = target_digest->digest.rows;
    verdict.source_position = before.position.to_string();
    verdict.target_position = target_rows->position.to_string();
    // The view of the target's rows holds its own position: it must include S1 as the wait
    // said, unless the position table went back (another applier, a restore).
    auto past = apply::already_applied(target_rows->position, before.position);
    if (!past) return fail(past.error());
    // A row of the target equal to the source's at S1 or at S2 is what the source held then
    // (S1 <= T <= S2): a change in flight, or none. Only rows that differ from both count;
    // under load most rows in flight at S1 have arrived by T and are equal at S2.
    std::vector<KeyDifference> differences =
        in_both(diff_rows(before.rows, target_rows->rows), diff_rows(after->rows, target_rows->rows));
    if (differences.empty()) {
      verdict.status = Status::equal;
      return verdict;
    }
    // Two rounds in a row: a row changed and changed back on the source between S1 and S2
    // looks still, and so does an equal row of a table without a key added and another
    // taken away; that the same happens again to the same row in the next round is unlikely.
    const bool settled = *past && all_settled(differences, changed_keys(before.rows, after->rows));
    if (settled && settled_before) {
      verdict.status = Status::differs;
      verdict.keys = std::move(differences);
      return verdict;
    }
    settled_before = settled;
    // Again from S2, for the rows that differed: the others were equal at S1 and T.
    only = differences.size() <= options.narrow_at_most ? std::move(differences) : std::vector<KeyDifference>{};
    before = std::move(*after);
    if (!only.empty()) keep_keys(before.rows, only);
  }
  verdict.status = Status::unsettled;
  verdict.keys.clear();
  verdict.reason = fmt::format("its differing rows changed on the source during each of {} comparisons "
                               "(--verify-rounds)",
                               options.rounds);
  return verdict;
}

}  // namespace cdc::verify
