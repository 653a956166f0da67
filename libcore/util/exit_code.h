#pragma once

#include <string_view>

#include "util/error.h"

namespace cdc {

// The one exit-code table of all four tools. Every man page prints it (EXIT STATUS); the
// numbers follow sysexits(3) so that shells and job runners already know them.
enum class ExitCode : int {
  success = 0,      // including a clean stop on a stop condition or SIGTERM
  failure = 1,      // failure not otherwise listed
  usage = 2,        // bad flags or operands (CLI11's own codes are mapped here)
  // cdc-stream's stops that ask for an operator (not sysexits: these are ours).
  ddl_review = 3,   // --on-ddl stop: stopped just before a DDL, state saved before it
  primary_switch = 4,// --require-read-only / --watch-dns: the server is no longer the replica it was
  binlog_purged = 5,// the server no longer has the binlog the stream needs
  data_error = 65,  // corrupt or invalid input: a binlog event, an NDJSON line
  unavailable = 69, // server unreachable, or authentication failed
  internal = 70,    // a bug in cdc
  io_error = 74,    // reading or writing failed, including a failed close of stdout
  temp_failure = 75,// stream interrupted after the state was saved: rerunning resumes
  config = 78,      // the server lacks a prerequisite (cdc-plan --check names it and the fix)
};

[[nodiscard]] constexpr int exit_code_for(Errc code) noexcept {
  switch (code) {
    case Errc::usage: return static_cast<int>(ExitCode::usage);
    case Errc::io: return static_cast<int>(ExitCode::io_error);
    case Errc::corrupt_input: return static_cast<int>(ExitCode::data_error);
    case Errc::server: return static_cast<int>(ExitCode::failure);
    case Errc::unavailable: return static_cast<int>(ExitCode::unavailable);
    case Errc::config: return static_cast<int>(ExitCode::config);
    case Errc::interrupted: return static_cast<int>(ExitCode::temp_failure);
    case Errc::purged: return static_cast<int>(ExitCode::binlog_purged);
    case Errc::internal: return static_cast<int>(ExitCode::internal);
    case Errc::unsupported: return static_cast<int>(ExitCode::failure);
  }
  return static_cast<int>(ExitCode::internal);
}

}  // namespace cdc
