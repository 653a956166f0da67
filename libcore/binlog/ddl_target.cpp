#include "binlog/ddl_target.h"

#include <cctype>

namespace cdc::binlog {

namespace {

// A tiny tokenizer over MySQL's DDL text: keywords, `quoted` and plain identifiers, dots,
// commas. Comments are skipped; versioned comments (/*!50100 ... */) are read as SQL.
class Tokens {
 public:
  explicit Tokens(std::string_view sql) : text_(sql) {}

  void skip_space() {
    for (;;) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (text_.substr(pos_).starts_with("/*!")) {
        pos_ += 3;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
        continue;
      }
      if (text_.substr(pos_).starts_with("/*")) {
        const std::size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
        continue;
      }
      if (text_.substr(pos_).starts_with("*/")) {
        pos_ += 2;
        continue;
      }
      if (text_.substr(pos_).starts_with("-- ") || text_.substr(pos_).starts_with("#")) {
        const std::size_t end = text_.find('\n', pos_);
        pos_ = end == std::string_view::npos ? text_.size() : end + 1;
        continue;
      }
      return;
    }
  }

  // Consumes IF EXISTS or IF NOT EXISTS when next (NOT and EXISTS are reserved words: no table
  // is called that without quotes).
  void if_exists() {
    if (!keyword("IF")) return;
    keyword("NOT");
    keyword("EXISTS");
  }

  // Consumes the keyword (case-insensitive, whole word) if it is next.
  bool keyword(std::string_view word) {
    skip_space();
    if (text_.size() - pos_ < word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(text_[pos_ + i])) != word[i]) return false;
    const std::size_t end = pos_ + word.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_' ||
                               text_[end] == '$'))
      return false;
    pos_ = end;
    return true;
  }

  bool symbol(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // An identifier, `quoted` (with `` for a backquote) or plain; empty when none is next.
  std::string identifier() {
    skip_space();
    std::string out;
    if (pos_ < text_.size() && text_[pos_] == '`') {
      ++pos_;
      while (pos_ < text_.size()) {
        if (text_[pos_] == '`') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '`') {
            out += '`';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        out += text_[pos_++];
      }
      return out;
    }
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
            static_cast<unsigned char>(c) >= 0x80))
        break;
      out += c;
      ++pos_;
    }
    return out;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

bool qualified_name(Tokens& tokens, std::string_view default_database, DdlTarget::Table& out) {
  std::string first = tokens.identifier();
  if (first.empty()) return false;
  if (tokens.symbol('.')) {
    out.database = std::move(first);
    out.table = tokens.identifier();
    return !out.table.empty();
  }
  out.database = std::string(default_database);
  out.table = std::move(first);
  return true;
}

void table_list(Tokens& tokens, std::string_view default_database, DdlTarget& target, bool renames) {
  do {
    DdlTarget::Table table;
    if (!qualified_name(tokens, default_database, table)) return;
    target.tables.push_back(std::move(table));
    if (renames && tokens.keyword("TO")) {
      DdlTarget::Table renamed;
      if (!qualified_name(tokens, default_database, renamed)) return;
      target.tables.push_back(std::move(renamed));
    }
  } while (tokens.symbol(','));
}

// The first action of ALTER TABLE name ..., the tokens being after the name.
DdlTarget::AlterAction first_alter_action(Tokens& tokens) {
  using Action = DdlTarget::AlterAction;
  const auto index_word = [&] {
    return tokens.keyword("INDEX") || tokens.keyword("KEY") || tokens.keyword("UNIQUE") ||
           tokens.keyword("FULLTEXT") || tokens.keyword("SPATIAL") || tokens.keyword("PRIMARY");
  };
  if (tokens.keyword("ADD")) {
    if (index_word()) return Action::add_index;
    if (tokens.keyword("CONSTRAINT")) {
      if (tokens.keyword("UNIQUE") || tokens.keyword("PRIMARY")) return Action::add_index;
      (void)tokens.identifier();  // the constraint's name
      if (tokens.keyword("UNIQUE") || tokens.keyword("PRIMARY")) return Action::add_index;
    }
    return Action::other;
  }
  if (tokens.keyword("DROP")) {
    if (tokens.keyword("INDEX") || tokens.keyword("KEY") || tokens.keyword("CONSTRAINT")) return Action::drop_index;
    return Action::other;
  }
  if (tokens.keyword("RENAME")) {
    if (tokens.keyword("COLUMN") || tokens.keyword("INDEX") || tokens.keyword("KEY")) return Action::other;
    return Action::rename;
  }
  return Action::other;
}

}  // namespace

DdlTarget ddl_target(std::string_view sql, std::string_view default_database) {
  DdlTarget target;
  target.database = std::string(default_database);
  Tokens tokens(sql);
  const auto one_table = [&] {
    DdlTarget::Table table;
    if (qualified_name(tokens, default_database, table)) {
      target.tables.push_back(std::move(table));
      target.parsed = true;
    }
  };
  const auto database_level = [&](DdlTarget::Kind kind) {
    target.kind = kind;
    tokens.if_exists();
    std::string name = tokens.identifier();
    if (!name.empty()) {
      target.database = std::move(name);
      target.parsed = true;
    }
  };
  if (tokens.keyword("CREATE")) {
    if (tokens.keyword("OR")) tokens.keyword("REPLACE");
    if (tokens.keyword("DATABASE") || tokens.keyword("SCHEMA")) {
      database_level(DdlTarget::Kind::create_database);
    } else {
      tokens.keyword("TEMPORARY");
      if (tokens.keyword("TABLE")) {
        target.kind = DdlTarget::Kind::create_table;
        tokens.if_exists();
        one_table();
      } else {
        (void)(tokens.keyword("UNIQUE") || tokens.keyword("FULLTEXT") || tokens.keyword("SPATIAL"));
        if (tokens.keyword("INDEX")) {
          target.kind = DdlTarget::Kind::create_index;
          tokens.if_exists();
          (void)tokens.identifier();
          if (tokens.keyword("ON")) one_table();
        }
      }
    }
  } else if (tokens.keyword("ALTER")) {
    if (tokens.keyword("DATABASE") || tokens.keyword("SCHEMA")) {
      database_level(DdlTarget::Kind::alter_database);
    } else {
      tokens.keyword("ONLINE");
      tokens.keyword("IGNORE");
      if (tokens.keyword("TABLE")) {
        target.kind = DdlTarget::Kind::alter_table;
        tokens.if_exists();
        one_table();
        if (target.parsed) target.alter_action = first_alter_action(tokens);
      }
    }
  } else if (tokens.keyword("DROP")) {
    if (tokens.keyword("DATABASE") || tokens.keyword("SCHEMA")) {
      database_level(DdlTarget::Kind::drop_database);
    } else {
      tokens.keyword("TEMPORARY");
      if (tokens.keyword("TABLE")) {
        target.kind = DdlTarget::Kind::drop_table;
        tokens.if_exists();
        table_list(tokens, default_database, target, false);
        target.parsed = !target.tables.empty();
      } else if (tokens.keyword("INDEX")) {
        target.kind = DdlTarget::Kind::drop_index;
        tokens.if_exists();
        (void)tokens.identifier();
        if (tokens.keyword("ON")) one_table();
      }
    }
  } else if (tokens.keyword("RENAME")) {
    if (tokens.keyword("TABLE")) {
      target.kind = DdlTarget::Kind::rename_table;
      table_list(tokens, default_database, target, true);
      target.parsed = !target.tables.empty();
    }
  } else if (tokens.keyword("TRUNCATE")) {
    target.kind = DdlTarget::Kind::truncate_table;
    tokens.keyword("TABLE");
    one_table();
  }
  if (!target.parsed) target.kind = DdlTarget::Kind::other;
  if (!target.tables.empty()) target.database = target.tables.front().database;
  return target;
}

}  // namespace cdc::binlog
