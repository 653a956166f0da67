#pragma once

// The spill runs of merge/effects.h: EffectStore's entries written sorted to a temporary file
// (through zstd) when they pass the memory limit, read back, and merged with each other and
// with what is still in memory, in key order, a later source winning for the same key.
//
// A run's records: varint key size, key bytes (the 4-byte big-endian group, then the identity),
// kind byte, varint zigzag count, varint stored size, stored bytes, varint image size, and when
// it is not 0: varint head size, varint image offset. A line whose image is in the mapped deltas
// is stored as its head and tail only (runs are a fifth of the size); the image is copied once,
// when the run is read back.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "merge/effects.h"
#include "merge/temp_dir.h"
#include "util/result.h"

namespace cdc::merge {

// A key's group: its first 4 bytes, big-endian, so that keys sort by group first.
void put_group(std::string& key, std::uint32_t group);
[[nodiscard]] std::uint32_t get_group(std::string_view key);

// Appends one record. stored: the line, or with image_size > 0 its head (head_size bytes) and
// tail around the image at image_offset of the mapped deltas.
void append_run_record(std::string& plain, std::string_view key, EffectKind kind, std::int64_t count,
                       std::string_view stored, std::size_t head_size = 0, std::uint64_t image_offset = 0,
                       std::size_t image_size = 0);

// Writes a run: fill(plain) appends records to plain and returns false when there are no more.
[[nodiscard]] Result<void> write_run(const TempDir::File& file, const std::function<bool(std::string&)>& fill);

// A source reading one run through small buffers; source: the mapped deltas its images are in
// (nullptr: none).
[[nodiscard]] EffectSource run_source(const TempDir::File& file, const char* source, std::size_t source_size);

// The sources merged in key order; for the same key a later source's entry is combined over an
// earlier one's (counts add up, otherwise the later state wins). Started: current() is the first.
[[nodiscard]] Result<std::unique_ptr<EffectCursor>> merge_sources(std::vector<EffectSource> sources);

}  // namespace cdc::merge
