#pragma once

// One column's value in a row image: how many bytes it takes, and its JSON as cdc-ndjson(5)
// VALUES says, by the column's type (rowimage/scalar_values.h, temporal, JSON, text in its
// charset, ENUM and SET labels, MariaDB's INET4/INET6/UUID, VECTOR). row_image.h reads whole
// images with these.

#include <cstddef>
#include <string>
#include <string_view>

#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"

namespace cdc::rowimage {

// The name a column is written under: its real name from the optional metadata, else "@N"
// (1-based, as mysqlbinlog prints them) until the live stream fills names from the server.
std::string_view column_name(const binlog::TableMap& map, std::size_t index, std::string& scratch);

// Reads one value of `column` from `in` and writes it as JSON (null bitmap already checked).
void decode_value(ByteReader& in, const binlog::TableMap& map, std::size_t index, ndjson::Writer& out,
                  RowScratch& scratch);
// decode_value() with the column's charset already resolved (TablePlan::charset()).
void decode_value_as(ByteReader& in, const binlog::TableMap& map, std::size_t index, Charset charset,
                     ndjson::Writer& out, RowScratch& scratch);

// How many bytes the value of `column` takes at the front of `in`, without decoding it.
std::size_t value_size(const ByteReader& in, const Column& column);

}  // namespace cdc::rowimage
