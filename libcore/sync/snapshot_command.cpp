#include "sync/snapshot_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <unordered_set>

#include "snapshot/run_snapshot.h"
#include "sync/state_dir.h"

namespace cdc::sync {

namespace {

enum class Quote { none, single, twofold };

// The words a placeholder stands for; nullopt for text in braces that is not one.
std::optional<std::vector<std::string>> words_of(std::string_view name, const WorkerPlaceholders& values) {
  using Words = std::vector<std::string>;
  if (name == "index") return Words{std::to_string(values.index)};
  if (name == "count") return Words{std::to_string(values.count)};
  if (name == "shard") return Words{fmt::format("{}/{}", values.index, values.count)};
  if (name == "plan") return Words{values.plan};
  if (name == "dir") return Words{values.chunks_dir};
  if (name == "cdc-snapshot") return Words{values.cdc_snapshot};
  if (name == "args") return values.args;
  return std::nullopt;
}

// The words as the shell would read them back, and escaped for the quotes they stand in.
std::string quoted_text(const std::vector<std::string>& words, Quote quote) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += ' ';
    text += shell_word(word);
  }
  if (quote == Quote::none) return text;
  std::string escaped;
  for (const char c : text) {
    if (quote == Quote::single && c == '\'') {
      escaped += "'\\''";
      continue;
    }
    if (quote == Quote::twofold && (c == '\\' || c == '"' || c == '$' || c == '`')) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

bool is_plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("%+,-./:=@_").find(c) != std::string_view::npos;
}

}  // namespace

bool runs_per_worker(std::string_view command_template) {
  return command_template.find("{index}") != std::string_view::npos ||
         command_template.find("{shard}") != std::string_view::npos;
}

std::string shell_word(std::string_view value) {
  if (!value.empty() && std::all_of(value.begin(), value.end(), is_plain)) return std::string(value);
  std::string word = "'";
  for (const char c : value) {
    if (c == '\'')
      word += "'\\''";
    else
      word += c;
  }
  return word + "'";
}

std::string expand_worker_command(std::string_view command_template, const WorkerPlaceholders& values) {
  std::string out;
  Quote quote = Quote::none;
  for (std::size_t at = 0; at < command_template.size();) {
    const char c = command_template[at];
    if (c == '{') {
      const std::size_t close = command_template.find('}', at + 1);
      if (close != std::string_view::npos) {
        if (const auto words = words_of(command_template.substr(at + 1, close - at - 1), values)) {
          out += quoted_text(*words, quote);
          at = close + 1;
          continue;
        }
      }
    } else if (c == '\\' && quote != Quote::single && at + 1 < command_template.size()) {
      out.append(command_template, at, 2);
      at += 2;
      continue;
    } else if (c == '\'' && quote != Quote::twofold) {
      quote = quote == Quote::single ? Quote::none : Quote::single;
    } else if (c == '"' && quote != Quote::single) {
      quote = quote == Quote::twofold ? Quote::none : Quote::twofold;
    }
    out += c;
    ++at;
  }
  return out;
}

Result<std::vector<std::string>> missing_chunk_files(std::string_view plan_text, const std::string& chunks_dir) {
  // The directory listed once, not each name looked up: on NFS a name looked up before a
  // worker on another host published it can stay "missing" in the client's cache for a while,
  // and a listing is read afresh when the directory is opened.
  std::unordered_set<std::string> published;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(chunks_dir, error)) {
    std::string name = entry.path().filename().string();
    // is_regular_file follows a symlink, as the merge's open will.
    if (name.ends_with(".ndjson") && entry.is_regular_file(error)) published.insert(std::move(name));
  }
  std::vector<std::string> missing;
  auto read = each_plan_chunk(plan_text, [&](std::string_view, const records::Chunk& chunk) {
    std::string name = snapshot::chunk_file_name(chunk);
    if (!published.contains(name)) missing.push_back(std::move(name));
  });
  if (!read) return fail(std::move(read).error());
  return missing;
}

std::string some_names(const std::vector<std::string>& names, std::size_t at_most) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < at_most; ++i) {
    if (i > 0) text += ", ";
    text += names[i];
  }
  if (names.size() > at_most) text += fmt::format(" and {} more", names.size() - at_most);
  return text;
}

}  // namespace cdc::sync
