#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "util/result.h"

namespace cdc {

// Writes every byte or fails; retries EINTR and short writes. A closed reader (EPIPE) is
// reported as Errc::io with the message "broken pipe" so callers can end quietly.
Result<void> write_all(int fd, std::string_view bytes, std::string_view what);
// The same for the bytes of vectors in order, with writev() (IOV_MAX at a time); the vectors
// are used up as they are written.
Result<void> write_all(int fd, std::span<iovec> vectors, std::string_view what);

// Reads up to size bytes; 0 means end of input. Retries EINTR.
Result<std::size_t> read_some(int fd, char* buffer, std::size_t size, std::string_view what);
// The same at a file offset (pread: the fd's own offset is not used or moved).
Result<std::size_t> read_some_at(int fd, char* buffer, std::size_t size, std::uint64_t offset, std::string_view what);

[[nodiscard]] bool is_broken_pipe(const Error& error) noexcept;

// The system call that just failed, as Errc::io "<what> <path>: <strerror(errno)>", e.g.
// "cannot rename the state file to /var/lib/cdc/state.json: Permission denied".
[[nodiscard]] Unexpected errno_error(std::string_view what, std::string_view path);

}  // namespace cdc
