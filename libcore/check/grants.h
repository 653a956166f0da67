#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cdc::check {

// Privileges parsed from SHOW GRANTS. Only what the tools need is interpreted: global
// privileges, and the objects on which SELECT is held.
struct Grants {
  std::set<std::string> global;               // upper case, e.g. "REPLICATION SLAVE"
  bool all_global = false;                    // GRANT ALL [PRIVILEGES] ON *.*
  std::vector<std::string> select_objects;    // e.g. "`shop`.*", when SELECT is not global
  std::vector<std::string> roles;             // role grants (GRANT `r` TO ...)

  [[nodiscard]] bool has_global(std::string_view privilege) const;
};

[[nodiscard]] Grants parse_grants(const std::vector<std::string>& statements);

}  // namespace cdc::check
