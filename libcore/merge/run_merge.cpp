#include "merge/run_merge.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "merge/apply_pass.h"
#include "merge/chunk_input.h"
#include "merge/deltas.h"
#include "merge/effects.h"
#include "merge/positions.h"
#include "merge/temp_dir.h"
#include "ndjson/line_reader.h"
#include "ndjson/writer.h"
#include "records/snapshot_lines.h"
#include "records/table_line.h"
#include "util/fd_io.h"
#include "util/wall_clock.h"

namespace cdc::merge {

namespace {

struct OpenFiles {
  std::vector<int> fds;
  ~OpenFiles() {
    for (const int fd : fds) ::close(fd);
  }
};

Result<int> open_input(const std::string& path, OpenFiles& files) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Errc::io, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  files.fds.push_back(fd);
  return fd;
}

std::string spill_parent(const Options& options) {
  if (!options.spill_dir.empty()) return options.spill_dir;
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') return tmp;
  return "/tmp";
}

Result<void> check_options(const Options& options) {
  if (options.inputs.empty())
    return fail(Errc::usage, "no chunk outputs given: name the files cdc-snapshot wrote (or - for stdin)");
  std::size_t dashes = 0;
  for (const std::string& input : options.inputs)
    if (input == "-") ++dashes;
  if (options.deltas && *options.deltas == "-") ++dashes;
  if (dashes > 1) return fail(Errc::usage, "standard input (-) can be given only once");
  if (options.span) {
    if (options.deltas) return fail(Errc::usage, "--span reads only the chunk outputs: drop --deltas");
    if (options.check_deltas) return fail(Errc::usage, "--span and --check-deltas do different things: give one");
    // --output is where the merged snapshot goes (as FILE.partial, renamed when whole); --span
    // writes no snapshot, and taking it silently would leave FILE unwritten.
    if (options.output)
      return fail(Errc::usage,
                  "--output names the file for the merged snapshot, and --span writes none: drop --output "
                  "(FROM UNTIL go to standard output; redirect them)");
    return {};
  }
  if (options.check_deltas && options.output)
    return fail(Errc::usage, "--check-deltas writes nothing: drop --output");
  if (!options.deltas)
    return fail(Errc::usage,
                "--deltas FILE is required: the cdc-stream output from the lowest low to the highest high "
                "(cdc-merge --span prints them)");
  if (options.memory_limit < 4096) return fail(Errc::usage, "--memory-limit must be at least 4K");
  return {};
}

// The chunk high to copy "file" and "offset" from: the one at H*, else (without --until)
// the one furthest in the binlog.
void high_file_offset(const std::vector<ChunkInfo>& chunks, const gtid::Position& high, bool until,
                      std::string& file, std::optional<std::uint64_t>& offset) {
  if (high.kind == gtid::Position::Kind::file) {
    file = high.file.file;
    offset = high.file.offset;
    return;
  }
  const std::string text = high.to_string();
  const ChunkInfo* best = nullptr;
  for (const ChunkInfo& chunk : chunks) {
    if (chunk.closed.mark.file.empty()) continue;
    if (chunk.high.to_string() == text) {
      best = &chunk;
      break;
    }
    if (until) continue;
    if (best == nullptr || gtid::FilePosition{best->closed.mark.file, best->closed.mark.offset} <
                               gtid::FilePosition{chunk.closed.mark.file, chunk.closed.mark.offset})
      best = &chunk;
  }
  if (best == nullptr || (until && best->high.to_string() != text)) return;
  file = best->closed.mark.file;
  offset = best->closed.mark.offset;
}

// The table line before a table's rows in the merged snapshot: its first chunk's description,
// at the merged high watermark's file and offset (null when not known), as Debezium places its
// snapshot rows. Nothing when the chunk outputs have none (an older cdc-snapshot's).
void write_table_line(const TableInfo& table, std::span<const ChunkInfo> chunks, const std::string& file,
                      std::optional<std::uint64_t> offset, std::string& out) {
  for (const std::size_t c : table.chunks) {
    if (!chunks[c].described) continue;
    records::TableLine line = *chunks[c].described;
    if (offset)
      line.pos = records::TablePos{file, *offset, ""};
    else
      line.pos.reset();
    ndjson::Writer writer;
    records::write_table_line(line, writer);
    out.append(writer.buffered());
    return;
  }
}

}  // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  const auto bad = [&] {
    return fail(Errc::usage, fmt::format("'{}' is not a size: give bytes, or a number with K, M, G or T "
                                         "(256M, 4K)",
                                         text));
  };
  if (text.empty()) return bad();
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > (UINT64_MAX - 9) / 10) return bad();
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (i == 0) return bad();
  std::uint64_t unit = 1;
  if (i < text.size()) {
    switch (text[i]) {
      case 'k': case 'K': unit = std::uint64_t{1} << 10; break;
      case 'm': case 'M': unit = std::uint64_t{1} << 20; break;
      case 'g': case 'G': unit = std::uint64_t{1} << 30; break;
      case 't': case 'T': unit = std::uint64_t{1} << 40; break;
      default: return bad();
    }
    ++i;
    if (i < text.size() && (text[i] == 'b' || text[i] == 'B')) ++i;
    if (i != text.size()) return bad();
  }
  if (value > UINT64_MAX / unit) return bad();
  return value * unit;
}

Result<Summary> run(const Options& options, int stdin_fd, int stdout_fd, int stderr_fd) {
  if (auto checked = check_options(options); !checked) return fail(checked.error());
  auto converter = output::make_converter(options.format);  // the output stage (--format)
  if (!converter) return fail(converter.error());
  TempDir temp(spill_parent(options));
  OpenFiles files;

  // Inputs; a "-" chunk operand is copied to the temp dir, because it is read twice.
  std::vector<InputFile> inputs;
  for (const std::string& operand : options.inputs) {
    if (operand == "-") {
      auto copy = temp.create("stdin");
      if (!copy) return fail(copy.error());
      if (auto copied = copy_fd(stdin_fd, *copy, "stdin"); !copied) return fail(copied.error());
      inputs.push_back(InputFile{"stdin", copy->fd});
      continue;
    }
    auto fd = open_input(operand, files);
    if (!fd) return fail(fd.error());
    inputs.push_back(InputFile{operand, *fd});
  }

  auto chunks = scan_chunk_outputs(inputs, options.threads);
  if (!chunks) return fail(chunks.error());
  if (chunks->empty())
    return fail(Errc::corrupt_input,
                fmt::format("{}: no chunk in the input{}: give the outputs of cdc-snapshot", inputs.front().name,
                            inputs.size() > 1 ? "s" : ""));
  const ChunkInfo& first = chunks->front();
  std::vector<gtid::Position> lows;
  std::vector<gtid::Position> highs;
  for (const ChunkInfo& chunk : *chunks) {
    if (chunk.low.kind != first.low.kind)
      return fail(Errc::corrupt_input,
                  fmt::format("{}:{}: {} has {} watermarks, but {} at {}:{} has {}: the chunks come from different "
                              "servers or setups",
                              inputs[chunk.input].name, chunk.low_line, chunk.describe(), kind_name(chunk.low.kind),
                              first.describe(), inputs[first.input].name, first.low_line, kind_name(first.low.kind)));
    lows.push_back(chunk.low);
    highs.push_back(chunk.high);
  }
  Summary summary;
  summary.chunks = chunks->size();

  if (options.span) {
    const gtid::Position from = lowest(lows);
    const gtid::Position until = highest(highs);
    if (from.kind == gtid::Position::Kind::mariadb_gtids && from.mariadb_gtids.empty())
      return fail(Errc::corrupt_input,
                  "the low watermarks share no GTID domain, so no position starts before all of them");
    const std::string text = fmt::format("{} {}\n", from.to_string(), until.to_string());
    if (auto wrote = write_all(stdout_fd, text, "stdout"); !wrote) return fail(wrote.error());
    return summary;
  }

  auto tables = group_tables(*chunks, inputs, options.subset);
  if (!tables) return fail(tables.error());

  // H*.
  gtid::Position high = highest(highs);
  const gtid::Position lowest_low = lowest(lows);
  if (options.until) {
    auto until = gtid::Position::parse(*options.until);
    if (!until) return fail(Errc::usage, fmt::format("--until: {}", until.error().message));
    if (until->kind != first.low.kind)
      return fail(Errc::usage, fmt::format("--until is {} but the chunks' watermarks are {}", kind_name(until->kind),
                                           kind_name(first.low.kind)));
    for (const ChunkInfo& chunk : *chunks)
      if (!contains(*until, chunk.high))
        return fail(Errc::usage,
                    fmt::format("--until {} is before the high watermark {} of {} ({}:{}): give a position at or "
                                "after every chunk's high (cdc-merge --span prints the highest)",
                                until->to_string(), chunk.high.to_string(), chunk.describe(),
                                inputs[chunk.input].name, chunk.low_line));
    high = std::move(*until);
  }

  // Groups in output order: chunks in input order; the chunks of an unordered table together,
  // where its first chunk is.
  std::vector<std::size_t> table_of(chunks->size());
  for (std::size_t t = 0; t < tables->size(); ++t)
    for (const std::size_t c : (*tables)[t].chunks) table_of[c] = t;
  std::vector<Group> groups;
  std::vector<std::uint32_t> chunk_group(chunks->size());
  std::map<std::size_t, std::uint32_t> unordered_group;
  for (std::size_t c = 0; c < chunks->size(); ++c) {
    const TableInfo& table = (*tables)[table_of[c]];
    const ChunkInfo& chunk = (*chunks)[c];
    Segment segment{inputs[chunk.input].fd, inputs[chunk.input].name, chunk.rows_begin, chunk.rows_end,
                    chunk.rows_first_line, chunk.rows_unread};
    if (!table.ordered) {
      auto [it, added] = unordered_group.emplace(table_of[c], static_cast<std::uint32_t>(groups.size()));
      if (added) groups.push_back(Group{it->second, &table, {}});
      chunk_group[c] = it->second;
      groups[it->second].segments.push_back(std::move(segment));
      continue;
    }
    chunk_group[c] = static_cast<std::uint32_t>(groups.size());
    groups.push_back(Group{chunk_group[c], &table, {std::move(segment)}});
  }

  // The deltas. When they are a regular file, it is also mapped whole, so that the effects
  // can point into it for the row images instead of copying them (see EffectStore::set_source).
  struct Mapping {
    void* data = MAP_FAILED;
    std::size_t size = 0;
    ~Mapping() {
      if (data != MAP_FAILED) ::munmap(data, size);
    }
  } deltas_map;
  // The deltas in two parts at once, each into its own store with half the limit, when there
  // are threads to spare; read whole otherwise, or when the parts do not check out.
  std::optional<EffectStore> whole;
  std::optional<EffectStore> first_part;
  std::optional<EffectStore> second_part;
  std::vector<EffectStore*> stores;
  {
    int fd = stdin_fd;
    std::string name = "stdin";
    if (*options.deltas != "-") {
      auto opened = open_input(*options.deltas, files);
      if (!opened) return fail(opened.error());
      fd = *opened;
      name = *options.deltas;
    }
    // Standard input is read once, in order: pread() would fail on a pipe, so a pipe is
    // copied first.
    if (fd == stdin_fd && ::lseek(fd, 0, SEEK_CUR) < 0) {
      auto copy = temp.create("deltas");
      if (!copy) return fail(copy.error());
      if (auto copied = copy_fd(stdin_fd, *copy, "stdin"); !copied) return fail(copied.error());
      fd = copy->fd;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      deltas_map.size = static_cast<std::size_t>(st.st_size);
      deltas_map.data = ::mmap(nullptr, deltas_map.size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    const auto make_store = [&](std::optional<EffectStore>& store, std::uint64_t limit) {
      store.emplace(limit, temp);
      if (deltas_map.data != MAP_FAILED) store->set_source(static_cast<const char*>(deltas_map.data), deltas_map.size);
    };
    const std::uint64_t begin = fd == stdin_fd ? static_cast<std::uint64_t>(::lseek(fd, 0, SEEK_CUR)) : 0;
    const DeltaContext context{*chunks,    *tables,    chunk_group, high, options.until.has_value(),
                               lowest_low, options.check_deltas};
    std::optional<DeltaSummary> read;
    if (options.threads > 1) {
      make_store(first_part, options.memory_limit / 2);
      make_store(second_part, options.memory_limit / 2);
      read = read_deltas_in_parts(fd, name, begin, context, *first_part, *second_part);
      if (read) {
        stores = {&*first_part, &*second_part};
      } else {
        first_part.reset();
        second_part.reset();
      }
    }
    if (!read) {
      make_store(whole, options.memory_limit);
      ndjson::LineReader reader(fd, name, begin);
      auto whole_read = read_deltas(reader, context, *whole);
      if (!whole_read) return fail(whole_read.error());
      read = *whole_read;
      stores = {&*whole};
    }
    summary.changes_applied = read->changes_applied;
    summary.changes_after_high = read->changes_after_high;
  }
  if (options.check_deltas) return summary;
  for (const EffectStore* store : stores) summary.spill_runs += store->runs();
  if (summary.changes_after_high > 0) {
    const std::string notice =
        fmt::format("cdc-merge: notice: {} change{} after {} not applied: they belong to the stream from there\n",
                    summary.changes_after_high, summary.changes_after_high == 1 ? "" : "s", high.to_string());
    (void)write_all(stderr_fd, notice, "stderr");
  }
  auto cursor = EffectStore::finish(stores);
  if (!cursor) return fail(cursor.error());

  // The output.
  int out_fd = stdout_fd;
  std::string out_name = "stdout";
  std::string partial;
  struct PartialGuard {
    std::string path;
    int fd = -1;
    ~PartialGuard() {
      if (fd >= 0) ::close(fd);
      if (!path.empty()) ::unlink(path.c_str());
    }
  } guard;
  if (options.output) {
    partial = *options.output + ".partial";
    out_fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) return fail(Errc::io, fmt::format("{}: cannot create: {}", partial, std::strerror(errno)));
    guard.path = partial;
    guard.fd = out_fd;
    out_name = partial;
  }
  OutputSink out(out_fd, out_name);
  out.set_converter(converter->get());
  std::string file;
  std::optional<std::uint64_t> offset;
  high_file_offset(*chunks, high, options.until.has_value(), file, offset);
  std::set<const TableInfo*> described;
  std::vector<std::string> before(groups.size());  // each table's line, before its first group
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (described.insert(groups[g].table).second)
      write_table_line(*groups[g].table, *chunks, file, offset, before[g]);
  std::span<const char> deltas;
  if (deltas_map.data != MAP_FAILED) deltas = {static_cast<const char*>(deltas_map.data), deltas_map.size};
  auto written = write_groups(groups, before, **cursor, options.memory_limit, deltas, temp, out, options.threads);
  if (!written) return fail(written.error());
  summary.rows = written->rows;
  summary.passes = written->passes;
  records::MergedHigh merged{high.to_string(), std::nullopt, summary.chunks, summary.rows, wall_clock_ms()};
  if (offset) merged.at = gtid::FilePosition{file, *offset};
  ndjson::Writer writer;
  records::write_merged_high(merged, writer);
  out.append(writer.buffered());
  if (auto flushed = out.finish(); !flushed) return fail(flushed.error());
  if (options.output) {
    if (::fsync(out_fd) != 0 || ::close(out_fd) != 0) {
      guard.fd = -1;
      return fail(Errc::io, fmt::format("{}: cannot write: {}", partial, std::strerror(errno)));
    }
    guard.fd = -1;
    if (::rename(partial.c_str(), options.output->c_str()) != 0)
      return fail(Errc::io, fmt::format("cannot rename {} to {}: {}", partial, *options.output, std::strerror(errno)));
    guard.path.clear();
  }
  return summary;
}

}  // namespace cdc::merge
