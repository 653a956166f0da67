#pragma once

// Small helpers that more than one unit test file needs (the test programs are compiled in
// batches of files, so two files cannot each define their own).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test {

using Bytes = std::vector<std::uint8_t>;

// A directory under /tmp for one test, removed with what it holds.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/cdc-unit-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
};

// A whole file's bytes as text ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// value as `width` big-endian bytes.
inline Bytes be(std::uint64_t value, std::size_t width) {
  Bytes out(width);
  for (std::size_t i = width; i-- > 0; value >>= 8) out[i] = static_cast<std::uint8_t>(value & 0xFF);
  return out;
}

inline Bytes concat(Bytes head, const Bytes& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

inline std::vector<std::string> names(std::initializer_list<const char*> list) { return {list.begin(), list.end()}; }

// A chunk line as cdc-plan writes it, of db.table, chunk index/count.
inline std::string chunk_line(std::string_view db, std::string_view table, int index, int count) {
  return "{\"op\":\"chunk\",\"v\":1,\"db\":\"" + std::string(db) + "\",\"table\":\"" + std::string(table) +
         "\",\"key\":[\"id\"],\"key_types\":[\"int(11)\"],\"start\":null,\"end\":null,\"index\":" +
         std::to_string(index) + ",\"count\":" + std::to_string(count) +
         ",\"columns\":[{\"name\":\"id\",\"type\":\"int(11)\",\"collation_id\":0}],\"rows_estimate\":10}\n";
}

}  // namespace unit_test
