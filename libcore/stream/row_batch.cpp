#include "stream/row_batch.h"

#include <charconv>
#include <span>

namespace cdc::stream {

namespace {

std::string_view in(std::string_view bytes, Span span) { return bytes.substr(span.begin, span.end - span.begin); }

std::span<const output::ImageValue> image_values(const RowBatch& batch, std::string_view text, Span range,
                                                 std::vector<output::ImageValue>& values) {
  values.clear();
  for (std::size_t i = range.begin; i < range.end; ++i) {
    const rowimage::WrittenValue& value = batch.values[i];
    values.push_back({value.column, text.substr(value.from, value.size)});
  }
  return values;
}

}  // namespace

output::RowLine row_line(const RowBatch& batch, std::string_view text, const RowMark& mark,
                         RowLineScratch& scratch) {
  const std::string_view aux = batch.aux;
  const EventText& event = batch.events[mark.event];
  output::RowLine row;
  row.line = in(text, mark.line);
  row.op = mark.op;
  row.db = in(aux, event.db);
  row.table = in(aux, event.table);
  row.key = in(text, mark.key);
  row.before = in(text, mark.before);
  row.after = in(text, mark.after);
  row.before_key = in(aux, mark.before_key);
  row.values_known = mark.values_known;
  if (mark.values_known) {
    row.before_values = image_values(batch, text, mark.before_values, scratch.before_values);
    row.after_values = image_values(batch, text, mark.after_values, scratch.after_values);
  }
  row.pos = in(text, mark.pos);
  row.query = in(text, mark.query);
  row.file = in(aux, event.file);
  row.offset = in(aux, event.offset);
  const auto index_end = std::to_chars(scratch.index.data(), scratch.index.data() + scratch.index.size(), mark.index).ptr;
  row.index = std::string_view(scratch.index.data(), static_cast<std::size_t>(index_end - scratch.index.data()));
  row.gtid = in(aux, event.gtid);
  row.server_id = in(aux, event.server_id);
  row.thread = in(aux, event.thread);
  row.ts_ms = in(aux, event.ts_ms);
  row.partial = mark.partial;
  row.values.db = in(aux, event.db_name);
  row.values.table = in(aux, event.table_name);
  row.values.file = in(aux, event.file_name);
  row.values.gtid = in(aux, event.gtid_value);
  row.values.offset = event.offset_value;
  row.values.index = mark.index;
  row.values.server_id = event.server_id_value;
  row.values.thread = event.thread_value;
  row.values.ts_ms = event.ts_ms_value;
  return row;
}

}  // namespace cdc::stream
