#include "binlog/ddl_target.h"

#include "binlog/sql_tokens.h"

namespace cdc::binlog {

namespace {

bool qualified_name(SqlTokens& tokens, std::string_view default_database, DdlTarget::Table& out) {
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

void table_list(SqlTokens& tokens, std::string_view default_database, DdlTarget& target, bool renames) {
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
DdlTarget::AlterAction first_alter_action(SqlTokens& tokens) {
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
  SqlTokens tokens(sql);
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
