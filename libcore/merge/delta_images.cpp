// The row images of the deltas' changes (merge/deltas_applier.h): each change of a merged table
// checked for its key and identity values, passed through the table's --where, and put in or
// removed from its chunk's group as EffectStore keeps them.
#include <fmt/format.h>

#include "merge/deltas_applier.h"

namespace cdc::merge::deltas_inside {

Result<void> Applier::apply_change(std::string_view op, std::string_view text, std::size_t table_index,
                                   const records::LinePos& pos, const records::LineEnd* end) {
  const TableInfo& table = context_.tables[table_index];
  // One scan of the line (merge/change_scan.h). Unchecked, it stops at "pos": the members
  // from there to the end were read by scan_line_pos, in their exact form (ts_ms is the last).
  const std::size_t stop = end != nullptr ? end->pos_member - 1 : text.size();
  ChangeScan scanned = scan_change(text, table, stop, end != nullptr, end != nullptr && end->strict_json, change_);
  if (scanned == ChangeScan::unproven) {
    if (auto record = parse(text); !record) return fail(record.error());
    scanned = scan_change(text, table, stop, false, false, change_);
  }
  if (scanned == ChangeScan::malformed_image) return fail(reader_.error_here("a row image is not a JSON object"));
  if (scanned == ChangeScan::malformed_line) return fail(reader_.error_here("not a JSON object"));
  const std::string_view before = change_.before;
  const std::string_view after = change_.after;
  const std::string_view ts_ms = end != nullptr ? end->ts_ms : change_.ts_ms;
  const std::optional<std::string_view> partial = change_.partial;
  if (partial == "true")
    return fail(reader_.error_here(fmt::format(
        "{}.{}: the change has a partial row image: cdc-merge needs full images (binlog_row_image=FULL)", table.db,
        table.table)));
  if (context_.high.kind != gtid::Position::Kind::file)
    if (auto set = gtids_.set(context_.high.kind, pos.gtid); !set)
      return fail(reader_.error_here(set.error().message));
  if (is_after(pos, gtids_, context_.high)) {
    ++summary_.changes_after_high;
    return {};
  }
  if (!is_after(pos, gtids_, table.min_low)) return {};
  if (ts_ms.empty()) return fail(reader_.error_here("a change without \"ts_ms\""));
  bool applied = false;
  if (op != records::op::insert) {
    // An update that keeps the row's key and identity values (most do) ends on the entry its
    // after side sets, present: its before side is only checked.
    const bool kept = op == records::op::update && table.identity && change_.before_values.key == change_.after_values.key &&
                      change_.before_values.identity == change_.after_values.identity;
    auto side = remove_side(before, table, pos, kept);
    if (!side) return fail(side.error());
    applied = applied || *side;
  }
  if (op != records::op::erase) {
    auto side = put_side(after, table, pos, ts_ms);
    if (!side) return fail(side.error());
    applied = applied || *side;
  }
  if (applied) ++summary_.changes_applied;
  return {};
}

Result<void> Applier::check_values(const ImageValues& values, std::string_view which, const TableInfo& table) {
  const auto missing = [&](const std::vector<std::string_view>& got, const std::vector<std::string>& names,
                           std::string_view role) -> Result<void> {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i].empty())
        return fail(reader_.error_here(fmt::format(
            "{}.{}: the {} image has no column \"{}\" ({}): cdc-merge needs full row images "
            "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)",
            table.db, table.table, which, names[i], role)));
    return {};
  };
  if (auto checked = missing(values.key, table.key, "a chunk key column"); !checked) return checked;
  if (table.identity)
    if (auto checked = missing(values.identity, *table.identity, "an identity column"); !checked) return checked;
  return {};
}

Result<std::optional<std::uint32_t>> Applier::group_for(const TableInfo& table, const ImageValues& values,
                                                        const records::LinePos& position) {
  auto chunk = find_chunk(table, values.key, sort_key_, near_chunk_);
  if (!chunk) return fail(reader_.error_here(chunk.error().message));
  if (!*chunk) return std::optional<std::uint32_t>{};
  if (!is_after(position, gtids_, context_.chunks[**chunk].low)) return std::optional<std::uint32_t>{};
  return std::optional<std::uint32_t>{context_.chunk_group[**chunk]};
}

void Applier::identity_text(const TableInfo& table, const ImageValues& values, std::string_view image) {
  identity_.clear();
  if (!table.identity)
    identity_.append(image);
  else
    append_object(table.quoted_identity, values.identity, identity_);
}

Result<bool> Applier::kept_by_filter(const TableInfo& table, const ImageValues& values, std::string_view which) {
  if (!table.filter) return true;
  for (std::size_t i = 0; i < values.filtered.size(); ++i)
    if (values.filtered[i].empty())
      return fail(reader_.error_here(fmt::format(
          "{}.{}: the {} image has no column {} (a column of --where '{}'): cdc-merge needs full row images "
          "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)",
          table.db, table.table, which, table.quoted_filter_columns[i], *context_.chunks[table.chunks.front()].opened.where)));
  auto truth = table.filter->evaluate(values.filtered);
  if (!truth) return fail(reader_.error_here(fmt::format("{}.{}: {}", table.db, table.table, truth.error().message)));
  return *truth == filter::Truth::is_true;
}

Result<bool> Applier::remove_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                                  bool checked_only) {
  if (image.empty() || image.front() != '{')
    return fail(reader_.error_here("the before image is missing or not an object"));
  if (auto got = check_values(change_.before_values, "before", table); !got) return fail(got.error());
  if (checked_only) return false;
  auto group = group_for(table, change_.before_values, position);
  if (!group) return fail(group.error());
  if (!*group) return false;
  identity_text(table, change_.before_values, image);
  if (table.identity) {
    if (auto set = effects_.set_absent(**group, identity_); !set) return fail(set.error());
  } else {
    // A row counted only when the filter kept it: one it did not was never in the chunk.
    auto kept = kept_by_filter(table, change_.before_values, "before");
    if (!kept) return fail(kept.error());
    if (!*kept) return false;
    if (auto set = effects_.add_count(**group, identity_, -1, {}); !set) return fail(set.error());
  }
  return true;
}

Result<bool> Applier::put_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                               std::string_view ts_ms) {
  if (image.empty() || image.front() != '{')
    return fail(reader_.error_here("the after image is missing or not an object"));
  if (auto got = check_values(change_.after_values, "after", table); !got) return fail(got.error());
  auto group = group_for(table, change_.after_values, position);
  if (!group) return fail(group.error());
  if (!*group) return false;
  identity_text(table, change_.after_values, image);
  auto kept = kept_by_filter(table, change_.after_values, "after");
  if (!kept) return fail(kept.error());
  if (!*kept) {
    // The row leaves the filter (or never entered it): absent, as the filtered SELECT at H*
    // would not return it; a keyless table's row is simply not counted.
    if (!table.identity) return false;
    if (auto set = effects_.set_absent(**group, identity_); !set) return fail(set.error());
    return true;
  }
  // The row as cdc-snapshot would have written it.
  line_.clear();
  line_.append(table.row_prefix);
  if (table.quoted_key.empty())
    line_.append("null");  // a table read whole, as cdc-snapshot writes its rows
  else
    append_object(table.quoted_key, change_.after_values.key, line_);
  line_.append(records::kRowBeforeAfter);
  if (table.identity) {
    // The image, most of the line, is read back from the mapped deltas when they are a file.
    const std::uint64_t image_offset =
        reader_.line_offset() + static_cast<std::uint64_t>(image.data() - reader_.line().data());
    if (effects_.has_source(image_offset, image.size())) {
      tail_.assign(records::comma_key::ts_ms).append(ts_ms).append("}\n");
      if (auto set = effects_.set_present_split(**group, identity_, line_, image_offset, image.size(), tail_); !set)
        return fail(set.error());
      return true;
    }
  }
  line_.append(image);
  line_.append(records::comma_key::ts_ms).append(ts_ms).append("}\n");
  if (table.identity) {
    if (auto set = effects_.set_present(**group, identity_, line_); !set) return fail(set.error());
  } else if (auto set = effects_.add_count(**group, identity_, 1, line_); !set) {
    return fail(set.error());
  }
  return true;
}

}  // namespace cdc::merge::deltas_inside
