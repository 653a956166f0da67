// Fuzz target: a whole binlog file through cdc-stream --file's pipeline (file reader, event
// decoder, transaction payloads, row images, NDJSON writer, and the output stage: the input's
// size picks the format, --key, --flink and --include-query, so that every converter meets what
// the writer hands it). Seeds: the fixture binlogs.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "stream/file_stream.h"

namespace {

int null_output() {
  static const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int input = ::memfd_create("binlog", MFD_CLOEXEC);
  if (input < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(input, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  cdc::stream::FileOptions options;
  options.files = {"/proc/self/fd/" + std::to_string(input)};
  constexpr cdc::output::Format kFormats[] = {cdc::output::Format::ndjson, cdc::output::Format::debezium,
                                              cdc::output::Format::canal, cdc::output::Format::maxwell};
  options.output.format = kFormats[size % 4];
  options.output.kafka_key = (size / 4) % 2 == 1;
  options.output.flink = (size / 8) % 2 == 1;
  options.output.include_query = (size / 16) % 2 == 1;
  (void)cdc::stream::run_files(options, null_output(), [](std::string_view) {});
  ::close(input);
  return 0;
}
