// Fuzz target: the NDJSON reader (line splitting, torn lines, limits) on arbitrary bytes.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "ndjson/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int input = ::memfd_create("ndjson", MFD_CLOEXEC);
  if (input < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(input, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::lseek(input, 0, SEEK_SET);
  cdc::ndjson::Reader reader(input, "fuzz", 4096);
  for (int i = 0; i < 100000; ++i) {
    auto next = reader.next();
    if (!next || !*next) break;
    (void)reader.record().size();
  }
  ::close(input);
  return 0;
}
