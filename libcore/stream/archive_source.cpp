#include "stream/archive_source.h"

#include <fmt/format.h>

#include <variant>

#include "binlog/decoder.h"
#include "binlog/file_reader.h"

namespace cdc::stream {

namespace {

using gtid::FilePosition;
using gtid::Position;

// What a file's header says was executed before it: MariaDB's GTID_LIST_EVENT or MySQL's
// PREVIOUS_GTIDS_LOG_EVENT, the second event of every file.
struct HeaderGtids {
  std::optional<gtid::MariadbGtidPos> mariadb;
  std::optional<gtid::MysqlGtidSet> mysql;
};

Result<HeaderGtids> header_gtids(const ArchiveSource::File& file, const std::string& dir) {
  HeaderGtids found;
  auto reader = ArchiveSource::read(file, dir);
  if (!reader) return fail(std::move(reader).error());
  const std::string& path = file.path;
  binlog::Decoder decoder(file.name);
  for (int i = 0; i < 4; ++i) {
    auto next = reader->next();
    if (!next) return fail(std::move(next).error());
    if (!*next) break;
    auto event = decoder.decode((*next)->bytes, (*next)->offset);
    if (!event) return fail(std::move(event).error());
    if (const auto* list = std::get_if<binlog::MariadbGtidListEvent>(&event->body)) {
      found.mariadb = list->state();
      return found;
    }
    if (const auto* previous = std::get_if<binlog::PreviousGtidsEvent>(&event->body)) {
      ByteReader in(previous->encoded_set, previous->offset);
      auto set = gtid::MysqlGtidSet::decode(in);
      if (!set) return fail(set.error().with_context(path));
      found.mysql = std::move(*set);
      return found;
    }
  }
  return found;
}

bool holds_header(const Position& position, const HeaderGtids& header) {
  if (position.kind == Position::Kind::mariadb_gtids)
    return header.mariadb && position.mariadb_gtids.contains(*header.mariadb);
  return header.mysql && position.mysql_gtids.contains(*header.mysql);
}

}  // namespace

Result<ArchiveSource> ArchiveSource::open(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  auto listing = archive::list_directory(dir);
  if (!listing) return fail(std::move(listing).error());
  ArchiveSource source(std::move(dir));
  for (const auto& file : listing->complete) {
    source.files_.push_back(File{file.name, source.dir_ + "/" + file.name, false});
    source.sizes_.push_back(file.size);
  }
  if (listing->in_progress) {
    source.files_.push_back(File{*listing->in_progress,
                                 source.dir_ + "/" + archive::in_progress_name(*listing->in_progress), true});
    source.sizes_.push_back(0);
  }
  return source;
}

std::string ArchiveSource::range_text() const {
  if (files_.empty()) return "nothing";
  if (files_.size() == 1) return files_.front().name + (files_.front().in_progress ? ", in progress" : "");
  return fmt::format("{} to {}{}", files_.front().name, files_.back().name,
                     files_.back().in_progress ? ", in progress" : "");
}

Result<binlog::FileReader> ArchiveSource::read(const File& file, const std::string& dir) {
  auto reader = binlog::FileReader::open(file.path);
  if (!reader && file.in_progress) {
    // Completed (renamed) by the archiver since the listing.
    if (auto completed = binlog::FileReader::open(dir + "/" + file.name)) return completed;
  }
  return reader;
}

std::vector<ArchiveSource::File> ArchiveSource::files_from(const std::string& name) const {
  std::vector<File> files;
  for (const auto& file : files_)
    if (!files.empty() || file.name == name) files.push_back(file);
  return files;
}

Result<std::optional<FilePosition>> ArchiveSource::locate(const Position& position) const {
  if (position.kind != Position::Kind::file) return locate_gtid(position);
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (files_[i].name != position.file.file) continue;
    // The end of a complete file is the start of the next.
    if (!files_[i].in_progress && position.file.offset >= sizes_[i]) {
      if (i + 1 == files_.size()) return std::optional<FilePosition>{};
      return std::optional<FilePosition>{FilePosition{files_[i + 1].name, 4}};
    }
    return std::optional<FilePosition>{position.file};
  }
  return std::optional<FilePosition>{};
}

Result<std::optional<FilePosition>> ArchiveSource::locate_gtid(const Position& position) const {
  // The newest file whose header the position holds: the position is in it or after it
  // (sql/sql_repl.cc gtid_find_binlog_file does the same on the server).
  std::optional<std::size_t> start;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    auto header = header_gtids(files_[i], dir_);
    if (!header) return fail(std::move(header).error());
    if (!holds_header(position, *header)) break;
    start = i;
  }
  if (!start) return std::optional<FilePosition>{};
  // The first transaction the position does not hold starts where reading continues.
  for (std::size_t i = *start; i < files_.size(); ++i) {
    auto reader = read(files_[i], dir_);
    if (!reader) return fail(std::move(reader).error());
    binlog::Decoder decoder(files_[i].name);
    for (;;) {
      auto next = reader->next();
      if (!next) return fail(std::move(next).error());
      if (!*next) break;
      const auto type = static_cast<binlog::EventType>((*next)->bytes[4]);
      if (type != binlog::EventType::format_description && type != binlog::EventType::gtid &&
          type != binlog::EventType::gtid_tagged && type != binlog::EventType::mariadb_gtid)
        continue;
      auto event = decoder.decode((*next)->bytes, (*next)->offset);
      if (!event) return fail(std::move(event).error());
      bool held = true;
      if (const auto* mariadb = std::get_if<binlog::MariadbGtidEvent>(&event->body)) {
        held = position.kind == Position::Kind::mariadb_gtids &&
               position.mariadb_gtids.contains(gtid::MariadbGtid{mariadb->domain_id, event->header.server_id,
                                                                 mariadb->seq_no});
      } else if (const auto* mysql = std::get_if<binlog::MysqlGtidEvent>(&event->body)) {
        if (mysql->anonymous) continue;
        gtid::Gtid id;
        id.uuid.bytes = mysql->uuid;
        id.tag.assign(mysql->tag);
        id.number = static_cast<std::uint64_t>(mysql->gno);
        held = position.kind == Position::Kind::mysql_gtids && position.mysql_gtids.contains(id);
      }
      if (!held) return std::optional<FilePosition>{FilePosition{files_[i].name, (*next)->offset}};
    }
  }
  return std::optional<FilePosition>{};
}

}  // namespace cdc::stream
