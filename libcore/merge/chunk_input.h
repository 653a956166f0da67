#pragma once

// The chunk outputs of cdc-snapshot as cdc-merge reads them (man/cdc-snapshot.1, STDOUT):
// per chunk an op:"low" line, its op:"r" lines, an op:"high" line; one input may hold many
// chunks. The first pass (scan_chunk_outputs) parses only the low and high lines; "r" lines
// are recognized by their prefix and skipped, and their byte range is remembered so the
// output pass can read each chunk's rows again, in any order.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "filter/evaluate.h"
#include "gtid/position.h"
#include "order/key_order.h"
#include "records/snapshot_lines.h"
#include "records/table_line.h"
#include "util/result.h"

namespace cdc::merge {

struct InputFile {
  std::string name;  // for messages: the operand, "stdin" for -
  int fd = -1;
};

// One chunk of the inputs: its low and high lines, and where its rows are.
struct ChunkInfo {
  std::size_t input = 0;  // index into the inputs
  records::Low opened;    // the low line
  records::High closed;   // the high line
  gtid::Position low;     // their watermarks' positions, parsed
  gtid::Position high;
  std::uint64_t low_line = 0;
  std::uint64_t rows_begin = 0;  // byte range of the "r" lines between low (and table) and high
  std::uint64_t rows_end = 0;
  std::uint64_t rows_first_line = 0;  // the line number at rows_begin
  // Its rows were not read by scan_chunk_outputs: its high line ends the input and says how
  // many bytes they take ("rows_bytes"), which is exactly the space between.
  bool rows_unread = false;
  // The chunk's table line (after its low line), "pos" null; nullopt in the output of a
  // cdc-snapshot that wrote none.
  std::optional<records::TableLine> described;

  [[nodiscard]] std::string describe() const { return opened.chunk.describe(); }  // "shop.orders chunk 3/12"
};

// Reads every input once, checking the structure (a low before rows, a table line right after
// it or none, a high for each low, no foreign lines); but not the rows of an input's last chunk
// whose high line says how many bytes they take (ChunkInfo::rows_unread: the output pass
// checks those). Errors are Errc::corrupt_input "<input>:<line>: ..." naming the fix.
// With threads > 1, the second half of the inputs is read on another thread.
[[nodiscard]] Result<std::vector<ChunkInfo>> scan_chunk_outputs(std::span<const InputFile> inputs,
                                                                unsigned threads = 1);

// One table being merged: its chunks and how to tell which chunk a row belongs to.
struct TableInfo {
  std::string db;
  std::string table;
  std::string quoted_db;     // as ndjson::Writer writes it, quotes included
  std::string quoted_table;
  std::string row_prefix;  // what each of its "r" lines starts with, up to the key (records::row_line_prefix)
  std::vector<std::string> key;
  std::vector<std::string> quoted_key;  // "\"id\"" per key column
  std::optional<std::vector<std::string>> identity;
  std::vector<std::string> quoted_identity;
  bool identity_is_key = false;  // identity == key, same order: the r line's key object is the identity
  // row_prefix and the start of a one-column key object ({"id":) when identity_is_key: the
  // bytes most rows start with before their integer key's digits (empty otherwise).
  std::string row_key_start;
  // Chunk ordering; empty when the key order is not reproduced but every chunk has the same
  // low watermark (then a change applies to all chunks of the table or to none).
  std::vector<cdc::order::KeyColumnOrder> order;
  bool ordered = false;
  // Indexes into the chunk list, sorted by range start when ordered.
  std::vector<std::size_t> chunks;
  std::vector<cdc::order::KeyRange> ranges;  // parallel to chunks
  gtid::Position min_low;        // the lowest low of the table's chunks
  bool same_lows = true;
  // Chunks read with --where: the filter each change's images go through (deltas.cpp), and the
  // columns it reads ("\"name\"" each, in BoundFilter::columns() order). Shared by the copies
  // of the TableInfo; used by the one thread that reads the deltas.
  std::shared_ptr<filter::BoundFilter> filter;
  std::vector<std::string> quoted_filter_columns;
};

// Groups the chunks by table and checks them: the same key, identity and count in every
// chunk of a table, no chunk twice, every chunk there unless subset. Key orders are built
// here: an order cdc-merge cannot reproduce is Errc::unsupported, unless all chunks of the
// table share one low watermark.
[[nodiscard]] Result<std::vector<TableInfo>> group_tables(std::span<const ChunkInfo> chunks,
                                                          std::span<const InputFile> inputs, bool subset);

// The chunk of table whose range holds the row with these key values (raw JSON), or nullopt.
// For an unordered table, the first chunk (all chunks share one low, see TableInfo). near: the
// range (index into table.ranges) found last, tried first, since changes come in runs of near
// keys; set to the one found.
[[nodiscard]] Result<std::optional<std::size_t>> find_chunk(const TableInfo& table,
                                                            std::span<const std::string_view> key_values,
                                                            std::string& scratch, std::size_t& near);

}  // namespace cdc::merge
