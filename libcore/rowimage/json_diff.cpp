#include "rowimage/json_diff.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "ndjson/json_scan.h"
#include "ndjson/utf8.h"
#include "util/text.h"

namespace cdc::rowimage {

namespace {

// ---------------------------------------------------------------------------------------------
// Path syntax (sql-common/json_path.cc parse_path(); Json_path_leg::to_string() writes it).

class PathParser {
 public:
  explicit PathParser(std::string_view path) : path_(path) {}

  Result<std::vector<JsonPathLeg>> parse() {
    std::vector<JsonPathLeg> legs;
    skip_space();
    if (!take('$')) return error("it must start with '$'");
    for (;;) {
      skip_space();
      if (at_end()) return legs;
      if (take('.')) {
        skip_space();
        JsonPathLeg leg;
        if (at_end()) return error("member name missing");
        if (peek() == '*') return error("wildcards cannot appear in a diff path");
        if (take('"')) {
          if (!quoted(leg.member)) return error(error_);
        } else {
          const std::size_t start = at_;
          while (!at_end() && !is_space(peek()) && peek() != '.' && peek() != '[') ++at_;
          leg.member.assign(path_.substr(start, at_ - start));
        }
        legs.push_back(std::move(leg));
      } else if (take('[')) {
        skip_space();
        JsonPathLeg leg;
        if (path_.substr(at_).starts_with("last")) {
          at_ += 4;
          leg.kind = JsonPathLeg::Kind::index_from_end;
          skip_space();
          if (take('-')) {
            skip_space();
            if (!number(leg.index)) return error(error_);
          }
        } else if (!at_end() && peek() == '*') {
          return error("wildcards cannot appear in a diff path");
        } else {
          leg.kind = JsonPathLeg::Kind::index;
          if (!number(leg.index)) return error(error_);
        }
        skip_space();
        if (!take(']')) return error("']' expected (ranges cannot appear in a diff path)");
        legs.push_back(std::move(leg));
      } else if (peek() == '*') {
        return error("'**' cannot appear in a diff path");
      } else {
        return error("'.' or '[' expected");
      }
    }
  }

 private:
  [[nodiscard]] bool at_end() const { return at_ >= path_.size(); }
  [[nodiscard]] char peek() const { return path_[at_]; }
  bool take(char c) {
    if (at_end() || path_[at_] != c) return false;
    ++at_;
    return true;
  }
  void skip_space() {
    while (!at_end() && is_space(peek())) ++at_;
  }

  Unexpected error(std::string_view what) const {
    constexpr std::size_t kShown = 120;
    const std::string_view shown = path_.substr(0, kShown);
    return cdc::fail(Errc::corrupt_input, fmt::format("JSON path '{}{}': {} at character {}", shown,
                                                      path_.size() > kShown ? "..." : "", what, at_));
  }

  bool number(std::uint64_t& value) {
    if (at_end() || peek() < '0' || peek() > '9') {
      error_ = "array index expected";
      return false;
    }
    value = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (value > (UINT64_MAX - digit) / 10) {
        error_ = "array index too large";
        return false;
      }
      value = value * 10 + digit;
      ++at_;
    }
    return true;
  }

  // A JSON string body after its opening quote (the server quotes keys with double_quote()).
  bool quoted(std::string& out) {
    const std::size_t open = at_ - 1;
    while (!at_end() && peek() != '"') at_ += peek() == '\\' ? 2U : 1U;
    if (at_end()) {
      error_ = "unterminated quoted member name";
      return false;
    }
    ++at_;
    if (!ndjson::append_unescaped(path_.substr(open, at_ - open), out)) {
      error_ = "bad escape or unpaired surrogate in quoted member name";
      return false;
    }
    return true;
  }

  std::string_view path_;
  std::size_t at_ = 0;
  std::string_view error_;
};

// ---------------------------------------------------------------------------------------------
// The after-image tree. Allocation is fine here: partial updates are rare, and only the
// containers a path passes through are expanded.

struct Member;

struct Node {
  enum class Kind : std::uint8_t { binary, object, array };
  Kind kind = Kind::binary;
  JsonBinaryValue binary;  // the value itself (Kind::binary) or where it came from (expanded)
  std::vector<Member> members;
  std::vector<Node> elements;
};

struct Member {
  std::string key;
  Node value;
};

// The order Json_object keeps its members in (json_dom.h Json_key_comparator): shorter keys
// first, equal lengths bytewise (char_traits<char> compares as unsigned char).
bool key_before(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

class DiffApplier {
 public:
  DiffApplier(JsonBinaryDecoder& decoder, JsonBinaryValue before) : decoder_(decoder) { root_.binary = before; }

  bool apply(const JsonDiff& diff, std::size_t number) {
    const Result<std::vector<JsonPathLeg>> parsed = parse_json_path(diff.path);
    if (!parsed) return reject(diff, number, parsed.error().message);
    const std::vector<JsonPathLeg>& legs = *parsed;
    // Every leg descends one object/array, so a longer path cannot exist in any document we
    // may write; refusing it also keeps the expanded tree (and writing it) shallow.
    if (legs.size() > decoder_.max_depth()) {
      return reject(diff, number, fmt::format("the path has {} legs, deeper than a document may nest", legs.size()));
    }
    Node value;
    if (diff.operation != JsonDiffOperation::remove) value.binary = json_binary_root(diff.value, diff.value_offset);

    if (legs.empty()) {
      // The server never logs a diff at '$' (apply_json_diff() asserts leg_count() > 0); a
      // REPLACE there can only mean the whole document.
      if (diff.operation != JsonDiffOperation::replace) return reject(diff, number, "no path legs");
      root_ = std::move(value);
      return true;
    }
    Node* parent = seek(legs, legs.size() - 1);
    if (!decoder_.ok()) return false;
    if (parent == nullptr) return reject(diff, number, "the path does not exist in the document");
    if (!expand(*parent)) return false;
    const JsonPathLeg& last = legs.back();

    switch (diff.operation) {
      case JsonDiffOperation::replace: {
        Node* target = child(*parent, last);
        if (!decoder_.ok()) return false;
        if (target == nullptr) return reject(diff, number, "nothing to replace at the path");
        *target = std::move(value);
        return true;
      }
      case JsonDiffOperation::insert:
        if (parent->kind == Node::Kind::object && last.kind == JsonPathLeg::Kind::member) {
          auto& members = parent->members;
          const auto found = std::find_if(members.begin(), members.end(),
                                          [&](const Member& m) { return m.key == last.member; });
          if (found != members.end()) return reject(diff, number, "the member already exists");
          const auto at = std::find_if(members.begin(), members.end(),
                                       [&](const Member& m) { return key_before(last.member, m.key); });
          members.insert(at, Member{last.member, std::move(value)});
          return true;
        }
        if (parent->kind == Node::Kind::array && last.kind != JsonPathLeg::Kind::member) {
          auto& elements = parent->elements;
          const std::size_t at = insert_position(last, elements.size());
          elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), std::move(value));
          return true;
        }
        return reject(diff, number, "the parent is not an object/array matching the last leg");
      case JsonDiffOperation::remove:
        if (parent->kind == Node::Kind::object && last.kind == JsonPathLeg::Kind::member) {
          auto& members = parent->members;
          const auto found = std::find_if(members.begin(), members.end(),
                                          [&](const Member& m) { return m.key == last.member; });
          if (found == members.end()) return reject(diff, number, "no such member to remove");
          members.erase(found);
          return true;
        }
        if (parent->kind == Node::Kind::array && last.kind != JsonPathLeg::Kind::member) {
          auto& elements = parent->elements;
          const std::optional<std::size_t> at = cell(last, elements.size());
          if (!at) return reject(diff, number, "no such array element to remove");
          elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(*at));
          return true;
        }
        return reject(diff, number, "the parent is not an object/array matching the last leg");
    }
    return reject(diff, number, "unknown operation");
  }

  bool write(ndjson::Writer& out) { return write(root_, 0, out); }

 private:
  bool reject(const JsonDiff& diff, std::size_t number, std::string_view why) {
    constexpr std::size_t kShown = 120;
    return decoder_.fail(Errc::corrupt_input,
                         fmt::format("JSON diff {} ({} {}{}) at offset {}: {}", number,
                                     json_diff_operation_name(diff.operation), diff.path.substr(0, kShown),
                                     diff.path.size() > kShown ? "..." : "", diff.path_offset, why));
  }

  // Json_array_index for [n] / [last-n] (json_path.h): the position an array cell names, if
  // it is inside the array.
  static std::optional<std::size_t> cell(const JsonPathLeg& leg, std::size_t size) {
    if (leg.index >= size) return std::nullopt;
    const auto index = static_cast<std::size_t>(leg.index);
    return leg.kind == JsonPathLeg::Kind::index_from_end ? size - 1 - index : index;
  }
  // Where INSERT puts a new element: [n] past the end appends, [last-n] before the start
  // inserts first (Json_array_index::position()).
  static std::size_t insert_position(const JsonPathLeg& leg, std::size_t size) {
    if (leg.kind == JsonPathLeg::Kind::index_from_end) {
      return leg.index < size ? size - 1 - static_cast<std::size_t>(leg.index) : 0;
    }
    return leg.index < size ? static_cast<std::size_t>(leg.index) : size;
  }

  // Turns a binary object/array into tree nodes, one level; scalars stay as they are.
  bool expand(Node& node) {
    if (node.kind != Node::Kind::binary || !(node.binary.is_object() || node.binary.is_array())) return true;
    const std::optional<JsonBinaryContainer> container = decoder_.container(node.binary);
    if (!container) return false;
    if (container->is_object) {
      std::vector<Member> members;
      members.reserve(container->count);
      for (std::uint32_t i = 0; i < container->count; ++i) {
        const std::optional<std::string_view> name = decoder_.key(*container, i);
        const std::optional<JsonBinaryValue> value = decoder_.element(*container, i);
        if (!name || !value) return false;
        members.push_back(Member{std::string(*name), Node{Node::Kind::binary, *value, {}, {}}});
      }
      node.members = std::move(members);
      node.kind = Node::Kind::object;
    } else {
      std::vector<Node> elements;
      elements.reserve(container->count);
      for (std::uint32_t i = 0; i < container->count; ++i) {
        const std::optional<JsonBinaryValue> value = decoder_.element(*container, i);
        if (!value) return false;
        elements.push_back(Node{Node::Kind::binary, *value, {}, {}});
      }
      node.elements = std::move(elements);
      node.kind = Node::Kind::array;
    }
    return true;
  }

  // json_diff.cc seek_exact_path(): member legs match objects, cell legs match arrays; no
  // auto-wrapping. nullptr when the path is not there (or the decoder failed).
  Node* child(Node& node, const JsonPathLeg& leg) {
    if (!expand(node)) return nullptr;
    if (node.kind == Node::Kind::object && leg.kind == JsonPathLeg::Kind::member) {
      for (Member& member : node.members) {
        if (member.key == leg.member) return &member.value;
      }
      return nullptr;
    }
    if (node.kind == Node::Kind::array && leg.kind != JsonPathLeg::Kind::member) {
      const std::optional<std::size_t> at = cell(leg, node.elements.size());
      return at ? &node.elements[*at] : nullptr;
    }
    return nullptr;
  }

  Node* seek(const std::vector<JsonPathLeg>& legs, std::size_t count) {
    Node* node = &root_;
    for (std::size_t i = 0; i < count && node != nullptr; ++i) node = child(*node, legs[i]);
    return node;
  }

  // Recursion depth is bounded by check_depth() (expanded levels are at most max_depth deep).
  bool write(const Node& node, std::size_t depth, ndjson::Writer& out) {
    switch (node.kind) {
      case Node::Kind::binary: return decoder_.write(node.binary, depth, out);
      case Node::Kind::object:
        if (!decoder_.check_depth(depth, node.binary.offset)) return false;
        out.begin_object();
        for (const Member& member : node.members) {
          out.key(member.key);
          if (!write(member.value, depth + 1, out)) return false;
        }
        out.end_object();
        return true;
      case Node::Kind::array:
        if (!decoder_.check_depth(depth, node.binary.offset)) return false;
        out.begin_array();
        for (const Node& element : node.elements) {
          if (!write(element, depth + 1, out)) return false;
        }
        out.end_array();
        return true;
    }
    return false;
  }

  JsonBinaryDecoder& decoder_;
  Node root_;
};

// Sum of the bytes the documents involved may be visited for (see JsonBinaryDecoder).
std::size_t budget_for(std::size_t before_size, std::span<const JsonDiff> diffs) {
  std::size_t budget = before_size + 1;
  for (const JsonDiff& diff : diffs) budget += diff.value.size() + 1;
  return budget;
}

}  // namespace

std::string_view json_diff_operation_name(JsonDiffOperation operation) noexcept {
  switch (operation) {
    case JsonDiffOperation::replace: return "REPLACE";
    case JsonDiffOperation::insert: return "INSERT";
    case JsonDiffOperation::remove: return "REMOVE";
  }
  return "UNKNOWN";
}

Result<std::vector<JsonPathLeg>> parse_json_path(std::string_view path) { return PathParser(path).parse(); }

Result<std::vector<JsonDiff>> read_json_diff_vector(ByteReader& reader) {
  const std::uint32_t length = reader.u32();
  ByteReader body = reader.sub(length, "JSON diff vector");
  if (!reader.ok()) return cdc::fail(Errc::corrupt_input, reader.failure_text());
  std::vector<JsonDiff> diffs;
  while (!body.empty()) {
    JsonDiff diff;
    // Checked before it is consumed, so the failure names the operation byte's own offset.
    if (body.peek_rest()[0] > static_cast<std::uint8_t>(JsonDiffOperation::remove)) {
      body.fail(fmt::format("unknown JSON diff operation {} (REPLACE 0, INSERT 1, REMOVE 2)", body.peek_rest()[0]));
    }
    const auto operation = static_cast<std::uint8_t>(body.uint_le(1, "JSON diff operation"));
    diff.operation = static_cast<JsonDiffOperation>(operation);
    const std::uint64_t path_length = body.packed_integer("JSON diff path length");
    diff.path_offset = body.offset();
    diff.path = body.chars(static_cast<std::size_t>(path_length), "JSON diff path");
    if (diff.operation != JsonDiffOperation::remove) {
      const std::uint64_t value_length = body.packed_integer("JSON diff value length");
      diff.value_offset = body.offset();
      diff.value = body.bytes(static_cast<std::size_t>(value_length), "JSON diff value");
    }
    if (!body.ok()) {
      reader.adopt_failure(body);
      return cdc::fail(Errc::corrupt_input, body.failure_text());
    }
    diffs.push_back(diff);
  }
  return diffs;
}

Result<void> apply_json_diffs(std::span<const std::uint8_t> before, std::uint64_t before_offset,
                              std::span<const JsonDiff> diffs, ndjson::Writer& out, std::size_t writer_depth) {
  JsonBinaryDecoder decoder(json_max_depth(writer_depth), budget_for(before.size(), diffs));
  DiffApplier applier(decoder, json_binary_root(before, before_offset));
  for (std::size_t i = 0; i < diffs.size(); ++i) {
    if (!applier.apply(diffs[i], i)) return decoder.result();
  }
  applier.write(out);
  return decoder.result();
}

Result<void> decode_json_partial_update(std::span<const std::uint8_t> before, std::uint64_t before_offset,
                                        ByteReader& diff_vector, ndjson::Writer& out, std::size_t writer_depth) {
  Result<std::vector<JsonDiff>> diffs = read_json_diff_vector(diff_vector);
  if (!diffs) return cdc::fail(std::move(diffs).error());
  return apply_json_diffs(before, before_offset, *diffs, out, writer_depth);
}

Result<void> write_json_diffs(std::span<const JsonDiff> diffs, ndjson::Writer& out, std::size_t writer_depth) {
  // The values sit two levels down: inside the array and a diff's object.
  JsonBinaryDecoder decoder(json_max_depth(writer_depth + 2), budget_for(0, diffs));
  out.begin_array();
  for (const JsonDiff& diff : diffs) {
    out.begin_object();
    switch (diff.operation) {
      case JsonDiffOperation::replace: out.field("op", "replace"); break;
      case JsonDiffOperation::insert: out.field("op", "insert"); break;
      case JsonDiffOperation::remove: out.field("op", "remove"); break;
    }
    out.field("path", diff.path);
    if (diff.operation != JsonDiffOperation::remove) {
      out.key("value");
      if (!decoder.write(json_binary_root(diff.value, diff.value_offset), 0, out)) return decoder.result();
    }
    out.end_object();
  }
  out.end_array();
  return decoder.result();
}

}  // namespace cdc::rowimage
