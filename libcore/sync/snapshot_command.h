#pragma once

// cdc-sync --snapshot-command (man cdc-sync, "Workers elsewhere"): the plan's chunks read by a
// command of the user's (ssh, GNU parallel, srun, kubectl exec) in place of the local
// cdc-snapshot processes. The command is a template that /bin/sh -c runs, with placeholders
// cdc-sync fills in as quoted shell words; once it has exited 0, cdc-sync checks that every
// chunk of the plan was published in the chunks directory, which the workers must share.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cdc::sync {

// What the placeholders stand for, for one run of the command.
struct WorkerPlaceholders {
  std::uint64_t index = 0;        // {index}: 0 to count - 1; {shard} is INDEX/COUNT
  std::uint64_t count = 1;        // {count}
  std::string plan;               // {plan}: the plan file, an absolute path
  std::string chunks_dir;         // {dir}: the chunks directory, an absolute path
  std::string cdc_snapshot;       // {cdc-snapshot}: the cdc-snapshot cdc-sync would run
  std::vector<std::string> args;  // {args}: the arguments cdc-sync would give it
};

// The template names {index} or {shard}: it is run once per worker, each reading its shard of
// the plan. Otherwise it is run once, for every chunk.
[[nodiscard]] bool runs_per_worker(std::string_view command_template);

// value as one word of a POSIX shell: as it is when made only of characters no shell reads as
// syntax (letters, digits and %+,-./:=@_), else in single quotes ('it'\''s'; '' for nothing).
[[nodiscard]] std::string shell_word(std::string_view value);

// The template with each placeholder replaced. Outside quotes, by its value as one shell word
// ({args}: a word per argument), so that the shell reads back the value. Inside single or
// double quotes, by those same words as text, escaped for the quotes around them, so that the
// shell hands them on unchanged to a command that gives them to another shell (ssh, GNU
// parallel, sh -c in a pod), which reads back the value. Other text in braces stays as it is
// (GNU parallel's {} and {#}). The quotes are followed as sh reads them: '...', "..." and
// backslash escapes outside single quotes.
[[nodiscard]] std::string expand_worker_command(std::string_view command_template, const WorkerPlaceholders& values);

// The names of the chunk files (cdc-snapshot --output-dir's) of the plan's chunks that are not
// published in chunks_dir (a missing directory has none), in plan order. Errc::corrupt_input for a plan line that is not a
// chunk line.
[[nodiscard]] Result<std::vector<std::string>> missing_chunk_files(std::string_view plan_text,
                                                                   const std::string& chunks_dir);

// "a, b, c and 4 more": the first at_most names, for a message.
[[nodiscard]] std::string some_names(const std::vector<std::string>& names, std::size_t at_most);

}  // namespace cdc::sync
