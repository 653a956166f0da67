// Fuzz target: a whole cdc-merge run on arbitrary chunk-output and delta text. The input is
// split at the first "\n---\n": before it, the chunk outputs (low/r/high lines); after it, the
// cdc-stream lines. Both go through the real readers (the prefix scan of pass 1, the raw JSON
// scanner, simdjson, the effect store with spilling, the output pass) via temp files, once
// with an unlimited memory budget, once with 4 KiB (spill runs, multi-pass), and once as
// --span. Errors are fine; crashes, hangs and sanitizer reports are not.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "merge/run_merge.h"

namespace {

// One scratch directory per process, removed at exit (run() removes its own spill files).
struct ScratchDir {
  std::string path;
  ScratchDir() {
    path = "/tmp/cdc-merge-fuzz.XXXXXX";
    if (::mkdtemp(path.data()) == nullptr) __builtin_trap();
  }
  ~ScratchDir() {
    ::unlink((path + "/chunks.ndjson").c_str());
    ::unlink((path + "/deltas.ndjson").c_str());
    ::rmdir(path.c_str());
  }
};

const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void write_file(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) __builtin_trap();
  while (!text.empty()) {
    const ssize_t wrote = ::write(fd, text.data(), text.size());
    if (wrote <= 0) __builtin_trap();
    text.remove_prefix(static_cast<std::size_t>(wrote));
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find("\n---\n");
  const std::string_view chunks = input.substr(0, split);
  const std::string_view deltas = split == std::string_view::npos ? std::string_view() : input.substr(split + 5);
  const std::string& dir = scratch_dir();
  const std::string chunks_path = dir + "/chunks.ndjson";
  const std::string deltas_path = dir + "/deltas.ndjson";
  write_file(chunks_path, chunks);
  write_file(deltas_path, deltas);
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) __builtin_trap();

  cdc::merge::Options options;
  options.inputs = {chunks_path};
  options.deltas = deltas_path;
  options.spill_dir = dir;
  for (const std::uint64_t limit : {cdc::merge::kDefaultMemoryLimit, std::uint64_t{4096}}) {
    options.memory_limit = limit;
    const auto result = cdc::merge::run(options, null_fd, null_fd, null_fd);
    if (!result && result.error().message.empty()) __builtin_trap();
  }
  options.deltas.reset();
  options.span = true;
  const auto span = cdc::merge::run(options, null_fd, null_fd, null_fd);
  if (!span && span.error().message.empty()) __builtin_trap();
  ::close(null_fd);
  return 0;
}
