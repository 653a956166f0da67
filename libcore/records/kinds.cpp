#include "records/kinds.h"

#include <array>

namespace cdc::records {

namespace {

using F = std::string_view;

constexpr std::array<F, 16> kChunkFields{"op", "v", "db", "table", "key", "key_types", "start", "end", "index",
                                         "count", "columns", "columns[].name", "columns[].type",
                                         "columns[].collation_id", "identity", "rows_estimate"};
constexpr std::array<F, 8> kCheckFields{"op", "v", "name", "status", "value", "want", "message", "fix"};
constexpr std::array<F, 6> kCheckSummaryFields{"op", "v", "flavor", "usable", "failed", "warnings"};
constexpr std::array<F, 17> kTableFields{"op", "v", "db", "table", "columns", "columns[].name", "columns[].type",
                                         "columns[].nullable", "columns[].charset", "columns[].collation",
                                         "columns[].values", "key", "pos", "pos.file", "pos.offset", "pos.gtid",
                                         "ts_ms"};
constexpr std::array<F, 16> kLowFields{"op", "v", "db", "table", "index", "count", "position", "file", "offset",
                                       "key", "key_types", "key_collations", "start", "end", "identity", "ts_ms"};
constexpr std::array<F, 8> kRowFields{"op", "v", "db", "table", "key", "before", "after", "ts_ms"};
constexpr std::array<F, 12> kHighFields{"op", "v", "db", "table", "index", "count", "position", "file", "offset",
                                        "rows", "rows_bytes", "ts_ms"};
constexpr std::array<F, 8> kSnapshotDiscardFields{"op", "v", "db", "table", "index", "count", "reason", "ts_ms"};
constexpr std::array<F, 8> kMergedHighFields{"op", "v", "position", "file", "offset", "chunks", "rows", "ts_ms"};
constexpr std::array<F, 18> kChangeFields{"op",        "v",        "db",        "table",  "key",      "before",
                                          "after",     "json_diffs", "partial", "query",  "pos",      "pos.file",
                                          "pos.offset", "pos.index", "pos.gtid", "server_id", "thread", "ts_ms"};
constexpr std::array<F, 10> kDdlFields{"op", "v", "db", "sql", "pos", "pos.file", "pos.offset", "pos.index",
                                       "pos.gtid", "ts_ms"};
constexpr std::array<F, 10> kCommitFields{"op", "v", "gtid", "pos", "pos.file", "pos.offset", "position", "rows",
                                          "xid", "ts_ms"};
constexpr std::array<F, 9> kIncidentFields{"op", "v", "message", "pos", "pos.file", "pos.offset", "pos.index",
                                           "pos.gtid", "ts_ms"};
constexpr std::array<F, 3> kSpanStartFields{"op", "v", "position"};
constexpr std::array<F, 7> kSpanEndFields{"op", "v", "position", "pos", "pos.file", "pos.offset", "until"};
constexpr std::array<F, 8> kStreamDiscardFields{"op", "v", "gtid", "pos", "pos.file", "pos.offset", "reason",
                                                "ts_ms"};
constexpr std::array<F, 20> kVerifyFields{"op", "v", "db", "table", "index", "count", "start", "end", "status",
                                          "rows_source", "rows_target", "source_position", "target_position",
                                          "rounds", "keys", "keys[].key", "keys[].source", "keys[].target",
                                          "keys_total", "reason"};
constexpr std::array<F, 9> kVerifySummaryFields{"op",      "v",         "tables",     "chunks",    "equal",
                                                 "differs", "unsettled", "keys_total", "seconds"};
constexpr std::array<F, 10> kStateFields{"v", "position", "file", "offset", "gtid", "output_bytes", "span", "server",
                                         "server_id", "saved_at"};

constexpr std::array<KindInfo, 21> kKinds{{
    {Kind::chunk, "chunk", op::chunk, "cdc-plan", kChunkFields},
    {Kind::check, "check", op::check, "cdc-plan", kCheckFields},
    {Kind::check_summary, "check_summary", op::check_summary, "cdc-plan", kCheckSummaryFields},
    {Kind::table, "table", op::table, "cdc-stream, cdc-snapshot, cdc-merge", kTableFields},
    {Kind::low, "low", op::low, "cdc-snapshot", kLowFields},
    {Kind::row, "r", op::row, "cdc-snapshot", kRowFields},
    {Kind::high, "cdc-snapshot high", op::high, "cdc-snapshot", kHighFields},
    {Kind::snapshot_discard, "cdc-snapshot discard", op::discard, "cdc-snapshot", kSnapshotDiscardFields},
    {Kind::merged_high, "cdc-merge high", op::high, "cdc-merge", kMergedHighFields},
    {Kind::insert, "c", op::insert, "cdc-stream", kChangeFields},
    {Kind::update, "u", op::update, "cdc-stream", kChangeFields},
    {Kind::erase, "d", op::erase, "cdc-stream", kChangeFields},
    {Kind::ddl, "ddl", op::ddl, "cdc-stream", kDdlFields},
    {Kind::commit, "commit", op::commit, "cdc-stream", kCommitFields},
    {Kind::incident, "incident", op::incident, "cdc-stream", kIncidentFields},
    {Kind::span_start, "span_start", op::span_start, "cdc-stream", kSpanStartFields},
    {Kind::span_end, "span_end", op::span_end, "cdc-stream", kSpanEndFields},
    {Kind::stream_discard, "cdc-stream discard", op::discard, "cdc-stream", kStreamDiscardFields},
    {Kind::verify, "verify", op::verify, "cdc-apply --verify", kVerifyFields},
    {Kind::verify_summary, "verify_summary", op::verify_summary, "cdc-apply --verify", kVerifySummaryFields},
    {Kind::stream_state, "cdc-stream state file", "", "cdc-stream", kStateFields},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kKinds.size(); ++i)
    if (static_cast<std::size_t>(kKinds[i].kind) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kKinds must list every Kind once, in the enum's order");
static_assert(kKinds.size() == static_cast<std::size_t>(Kind::stream_state) + 1, "a Kind is missing from kKinds");

}  // namespace

std::span<const KindInfo> all_kinds() noexcept { return kKinds; }

const KindInfo& kind_info(Kind kind) noexcept { return kKinds[static_cast<std::size_t>(kind)]; }

}  // namespace cdc::records
