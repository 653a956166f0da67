#pragma once

// How doctest prints the GTID types in failed assertions, for the gtid tests.

#include <doctest/doctest.h>

#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"

namespace doctest {
template <>
struct StringMaker<cdc::gtid::MysqlGtidSet> {
  static String convert(const cdc::gtid::MysqlGtidSet& value) { return ("'" + value.to_string() + "'").c_str(); }
};
template <>
struct StringMaker<cdc::gtid::MariadbGtidPos> {
  static String convert(const cdc::gtid::MariadbGtidPos& value) { return ("'" + value.to_string() + "'").c_str(); }
};
template <>
struct StringMaker<cdc::gtid::MariadbGtid> {
  static String convert(const cdc::gtid::MariadbGtid& value) { return value.to_string().c_str(); }
};
template <>
struct StringMaker<cdc::gtid::Gtid> {
  static String convert(const cdc::gtid::Gtid& value) { return value.to_string().c_str(); }
};
}  // namespace doctest
