#pragma once

// Rows held until a later line says how to finish them (Maxwell's rows wait for their
// transaction's commit line, which gives every row its xid): in memory up to a threshold,
// then appended to an unlinked temporary file under $TMPDIR, so a transaction of any size
// holds only the threshold in memory. Each row is two pieces, written out later with
// something between them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::output {

class SpillBuffer {
 public:
  explicit SpillBuffer(std::size_t threshold_bytes) : threshold_(threshold_bytes) {}
  SpillBuffer(const SpillBuffer&) = delete;
  SpillBuffer& operator=(const SpillBuffer&) = delete;
  ~SpillBuffer();

  [[nodiscard]] Result<void> add(std::string_view head, std::string_view tail);
  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  // Whether rows went to the temporary file (for tests).
  [[nodiscard]] bool spilled() const noexcept { return file_bytes_ > 0; }
  // each(head, tail, index) for every row in the order added, then clear().
  using Each = std::function<void(std::string_view head, std::string_view tail, std::size_t index)>;
  [[nodiscard]] Result<void> drain(const Each& each);
  // Forgets every row (the file is truncated, and kept for the next spill).
  void clear() noexcept;

 private:
  [[nodiscard]] Result<void> spill();
  // Calls each for the whole records at the start of bytes; returns how many bytes they took.
  std::size_t each_record(std::string_view bytes, const Each& each, std::size_t& index) const;

  std::size_t threshold_;
  std::string memory_;  // records: head length, tail length (4 bytes each, native order), head, tail
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::size_t rows_ = 0;
  std::string read_;  // reused when reading the file back
};

}  // namespace cdc::output
