#pragma once

// Rows held until a later line says how to finish them (Maxwell's rows wait for their
// transaction's commit line, which gives every row its xid): in memory up to a threshold,
// then appended to an unlinked temporary file under $TMPDIR, so a transaction of any size
// holds only the threshold in memory. Each row is two pieces, written out later with
// something between them.

#include <cstddef>
#include <cstdint>
#include <cstring>
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
  template <typename Each>
  [[nodiscard]] Result<void> drain(Each&& each) {
    std::size_t index = 0;
    if (file_bytes_ > 0) {
      if (auto rewound = rewind(); !rewound) return rewound;
      for (;;) {
        auto more = read_more();
        if (!more) return fail(std::move(more).error());
        if (!*more) break;
        // A record cut by the chunk's end stays for the next chunk.
        read_.erase(0, each_record(read_, each, index));
      }
    }
    each_record(memory_, each, index);
    clear();
    return {};
  }
  // Forgets every row (the file is truncated, and kept for the next spill).
  void clear() noexcept;

 private:
  [[nodiscard]] Result<void> spill();
  [[nodiscard]] Result<void> rewind();
  // Appends the next chunk of the file to read_; false once the whole file was read.
  [[nodiscard]] Result<bool> read_more();
  // Calls each for the whole records at the start of bytes; returns how many bytes they took.
  template <typename Each>
  static std::size_t each_record(std::string_view bytes, Each& each, std::size_t& index) {
    std::size_t at = 0;
    while (bytes.size() - at >= 2 * kLengthBytes) {
      const std::size_t head = read_length(bytes.data() + at);
      const std::size_t tail = read_length(bytes.data() + at + kLengthBytes);
      if (bytes.size() - at - 2 * kLengthBytes < head + tail) break;
      const std::size_t start = at + 2 * kLengthBytes;
      each(bytes.substr(start, head), bytes.substr(start + head, tail), index++);
      at = start + head + tail;
    }
    return at;
  }
  static constexpr std::size_t kLengthBytes = 4;
  static std::uint32_t read_length(const char* at) noexcept {
    std::uint32_t length = 0;
    std::memcpy(&length, at, kLengthBytes);
    return length;
  }

  std::size_t threshold_;
  std::string memory_;  // records: head length, tail length (4 bytes each, native order), head, tail
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t file_read_ = 0;  // how much of the file read_more() has read
  std::size_t rows_ = 0;
  std::string read_;  // reused when reading the file back
};

}  // namespace cdc::output
