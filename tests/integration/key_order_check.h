#pragma once

// Helpers of the order/key_order.h proofs against the live server: values go into a table with
// the column under test, come back through a SELECT, are written as JSON the way the tools write
// them (ndjson::Writer), and the server's verdicts (<, =) on pairs of rows are compared with
// memcmp of their sort keys.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "order/key_order.h"
#include "mysql/connection.h"

namespace cdc::test::key_order {

using cdc::order::KeyColumnOrder;

// One database per process: CTest runs the cases side by side.
extern const std::string kDatabase;
constexpr std::size_t kRows = 300;  // 90,000 ordered pairs per column definition

cdc::mysql::Connection connect();
cdc::mysql::QueryResult query(cdc::mysql::Connection& connection, const std::string& sql);
std::string hex(std::string_view bytes);

// How a selected value becomes the JSON text the tools write for it.
enum class Json { number, string, timestamp, base64 };

std::string to_json(std::string_view selected, Json json);

// One column definition under test. literals are SQL expressions for INSERT.
struct Column {
  std::string definition;  // "varchar(20) COLLATE utf8mb4_bin"
  std::string key_type;    // COLUMN_TYPE, as cdc-plan writes it
  std::uint32_t collation_id;
  Json json;
};

struct Outcome {
  std::size_t pairs = 0;
  std::size_t equal_pairs = 0;
  std::size_t distinct_values = 0;
};

// Fills the table, reads it back, and checks every ordered pair. `columns` > 1 compares rows
// (v1, v2, ...) with the row constructor, as the chunk ranges do.
Outcome check_columns(cdc::mysql::Connection& connection, const std::vector<Column>& columns,
                      const std::vector<std::vector<std::string>>& literal_rows);
Outcome check_column(cdc::mysql::Connection& connection, const Column& column,
                     const std::vector<std::string>& literals);
// A whole character repertoire at once: `fill` (INSERT's SELECT of rows (i, v)) is sorted by
// sort key and the server compares each row with its neighbour; returns the number of rows.
std::size_t check_sorted_neighbours(cdc::mysql::Connection& connection, const Column& column, const std::string& fill);

std::vector<std::string> generate(std::size_t count, const std::vector<std::string>& fixed,
                                  const std::function<std::string()>& random);
void report(std::string_view what, const Outcome& outcome);

// Random text made of `pieces`, up to max_length of them.
std::string random_text(std::mt19937_64& rng, const std::vector<std::string>& pieces, std::size_t max_length);
std::string text_literal(std::string_view utf8);  // _utf8mb4 X'...'

// Pieces that stress the collations: both cases, spaces at the ends, accents, ß, CJK, emoji,
// digits and characters around the space.
extern const std::vector<std::string> kUnicodePieces;
std::vector<std::string> without_supplementary(std::vector<std::string> pieces);
std::vector<std::string> latin1_pieces();
std::vector<std::string> ascii_pieces();
// kRows literals: fixed edge cases, the pieces alone, then random text of up to 6 pieces.
std::vector<std::string> text_values(std::uint64_t seed, const std::vector<std::string>& pieces);

}  // namespace cdc::test::key_order
