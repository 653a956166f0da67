#include "output/value_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/utf8.h"


namespace cdc::output {

namespace {

// The shortest digits of a double or float and the decimal exponent of the first one:
// value = 0.d1d2...dn * 10^(point), so 19.5 is digits "195", point 2.
struct Digits {
  std::array<char, 32> digits{};
  std::size_t count = 0;
  int point = 0;
  bool negative = false;
};

template <typename Float>
bool shortest_digits(std::string_view value_text, Digits& out) {
  Float value{};
  const auto [end, error] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
  if (error != std::errc() || end != value_text.data() + value_text.size() || !std::isfinite(value)) return false;
  out.negative = std::signbit(value);
  if (value == 0) {
    out.digits[0] = '0';
    out.count = 1;
    out.point = 1;
    return true;
  }
  std::array<char, 48> text{};
  auto written = std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::scientific);
  if (written.ec != std::errc()) return false;
  // Java (JDK 19+) writes at least two digits: where one digit is enough, it takes the
  // two-digit decimal closest to the value (Double.MIN_VALUE is "4.9E-324", not "5.0E-324").
  const std::size_t mantissa = value < 0 ? 1 : 0;  // after the sign
  if (written.ptr - text.data() > static_cast<std::ptrdiff_t>(mantissa + 1) && text[mantissa + 1] == 'e')
    written = std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::scientific, 1);
  if (written.ec != std::errc()) return false;
  const std::string_view scientific(text.data(), static_cast<std::size_t>(written.ptr - text.data()));
  const std::size_t e = scientific.find('e');
  if (e == std::string_view::npos) return false;
  for (std::size_t i = 0; i < e; ++i)
    if (scientific[i] >= '0' && scientific[i] <= '9') out.digits[out.count++] = scientific[i];
  int exponent = 0;
  std::string_view exponent_text = scientific.substr(e + 1);
  if (!exponent_text.empty() && exponent_text.front() == '+') exponent_text.remove_prefix(1);
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
  out.point = exponent + 1;
  while (out.count > 1 && out.digits[out.count - 1] == '0') --out.count;
  return true;
}

// Java's Double.toString layout: plain for 1e-3 <= |v| < 1e7 (at least one fraction digit),
// else d.dddE[-]n.
void append_java_layout(const Digits& d, std::string& out) {
  if (d.negative) out.push_back('-');
  const std::string_view digits(d.digits.data(), d.count);
  if (digits == "0") {
    out += "0.0";
    return;
  }
  if (d.point >= -2 && d.point <= 7) {  // 1e-3 <= |v| < 1e7
    if (d.point <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-d.point), '0');
      out += digits;
      return;
    }
    const auto whole = static_cast<std::size_t>(d.point);
    if (digits.size() <= whole) {
      out += digits;
      out.append(whole - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, whole);
      out.push_back('.');
      out += digits.substr(whole);
    }
    return;
  }
  out.push_back(digits[0]);
  out.push_back('.');
  if (digits.size() > 1) {
    out += digits.substr(1);
  } else {
    out.push_back('0');
  }
  out.push_back('E');
  out += fmt::format_int(d.point - 1).str();
}

// JTS's ordinate text (DecimalFormat "0.################"): plain, at most 16 fraction digits.
void append_ordinate(double value, std::string& out) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "Inf";
    return;
  }
  std::array<char, 400> text{};
  auto written = std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  std::string_view plain(text.data(), static_cast<std::size_t>(written.ptr - text.data()));
  const std::size_t dot = plain.find('.');
  if (dot != std::string_view::npos && plain.size() - dot - 1 > 16) {
    written = std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed, 16);
    plain = std::string_view(text.data(), static_cast<std::size_t>(written.ptr - text.data()));
    while (plain.ends_with('0')) plain.remove_suffix(1);
    if (plain.ends_with('.')) plain.remove_suffix(1);
  }
  out += plain;
}

class WkbReader {
 public:
  explicit WkbReader(std::string_view bytes) : bytes_(bytes) {}

  bool byte(std::uint8_t& value) {
    if (pos_ + 1 > bytes_.size()) return false;
    value = static_cast<std::uint8_t>(bytes_[pos_++]);
    return true;
  }
  bool u32(bool little, std::uint32_t& value) {
    if (pos_ + 4 > bytes_.size()) return false;
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const auto b = static_cast<std::uint8_t>(bytes_[pos_ + static_cast<std::size_t>(little ? 3 - i : i)]);
      value = (value << 8) | b;
    }
    pos_ += 4;
    return true;
  }
  bool f64(bool little, double& value) {
    if (pos_ + 8 > bytes_.size()) return false;
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) {
      const auto b = static_cast<std::uint8_t>(bytes_[pos_ + static_cast<std::size_t>(little ? 7 - i : i)]);
      bits = (bits << 8) | b;
    }
    std::memcpy(&value, &bits, 8);
    pos_ += 8;
    return true;
  }
  // A count that the remaining bytes could hold (each element at least min_size bytes).
  bool count(bool little, std::size_t min_size, std::uint32_t& value) {
    return u32(little, value) && static_cast<std::uint64_t>(value) * min_size <= bytes_.size() - pos_;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

bool append_coordinates(WkbReader& reader, bool little, std::uint32_t points, std::string& out) {
  for (std::uint32_t i = 0; i < points; ++i) {
    double x = 0;
    double y = 0;
    if (!reader.f64(little, x) || !reader.f64(little, y)) return false;
    if (i > 0) out += ", ";
    append_ordinate(x, out);
    out.push_back(' ');
    append_ordinate(y, out);
  }
  return true;
}

// "(x y, x y)" or "EMPTY" (with the space before it written by the caller).
bool append_point_list(WkbReader& reader, bool little, std::string& out) {
  std::uint32_t points = 0;
  if (!reader.count(little, 16, points)) return false;
  if (points == 0) {
    out += "EMPTY";
    return true;
  }
  out.push_back('(');
  if (!append_coordinates(reader, little, points, out)) return false;
  out.push_back(')');
  return true;
}

bool append_ring_list(WkbReader& reader, bool little, std::string& out) {
  std::uint32_t rings = 0;
  if (!reader.count(little, 4, rings)) return false;
  if (rings == 0) {
    out += "EMPTY";
    return true;
  }
  out.push_back('(');
  for (std::uint32_t i = 0; i < rings; ++i) {
    if (i > 0) out += ", ";
    if (!append_point_list(reader, little, out)) return false;
  }
  out.push_back(')');
  return true;
}

constexpr std::array<std::string_view, 8> kWktNames = {
    "", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"};

bool append_geometry(WkbReader& reader, int depth, std::uint32_t expected_type, std::string& out);

// The body of one geometry whose byte order and type were read: its text after "NAME ".
bool append_body(WkbReader& reader, bool little, std::uint32_t type, int depth, std::string& out) {
  switch (type) {
    case 1: {
      double x = 0;
      double y = 0;
      if (!reader.f64(little, x) || !reader.f64(little, y)) return false;
      if (std::isnan(x) && std::isnan(y)) {
        out += "EMPTY";
        return true;
      }
      out.push_back('(');
      append_ordinate(x, out);
      out.push_back(' ');
      append_ordinate(y, out);
      out.push_back(')');
      return true;
    }
    case 2:
      return append_point_list(reader, little, out);
    case 3:
      return append_ring_list(reader, little, out);
    case 4:
    case 5:
    case 6:
    case 7: {
      std::uint32_t parts = 0;
      if (!reader.count(little, 5, parts)) return false;
      if (parts == 0) {
        out += "EMPTY";
        return true;
      }
      out.push_back('(');
      for (std::uint32_t i = 0; i < parts; ++i) {
        if (i > 0) out += ", ";
        // The parts of a MULTI* are whole geometries of the single type, written without
        // their name; a collection's parts keep theirs.
        if (!append_geometry(reader, depth + 1, type == 7 ? 0 : type - 3, out)) return false;
      }
      out.push_back(')');
      return true;
    }
    default:
      return false;
  }
}

bool append_geometry(WkbReader& reader, int depth, std::uint32_t expected_type, std::string& out) {
  if (depth > 32) return false;
  std::uint8_t order = 0;
  std::uint32_t type = 0;
  if (!reader.byte(order) || order > 1 || !reader.u32(order == 1, type)) return false;
  if (type < 1 || type > 7) return false;
  if (expected_type != 0) {
    if (type != expected_type) return false;
    // JTS writes a MULTIPOINT's points as "(x y)": the body of a point is that already.
    return append_body(reader, order == 1, type, depth, out);
  }
  out += kWktNames[type];
  out.push_back(' ');
  return append_body(reader, order == 1, type, depth, out);
}

}  // namespace

bool unescape_json_string(std::string_view raw, std::string& out) {
  out.clear();
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return false;
  const std::string_view body = raw.substr(1, raw.size() - 2);
  if (body.find('\\') == std::string_view::npos) {
    out.assign(body);
    return true;
  }
  // Escapes are rare in the values read here (ENUM and SET members): simdjson decodes them.
  simdjson::dom::parser parser;
  std::string_view text;
  if (parser.parse(raw).get_string().get(text) != simdjson::SUCCESS) return false;
  out.assign(text);
  return true;
}

bool append_java_double(std::string_view value_text, std::string& out) {
  Digits digits;
  if (!shortest_digits<double>(value_text, digits)) return false;
  append_java_layout(digits, out);
  return true;
}

bool append_java_float(std::string_view value_text, std::string& out) {
  Digits digits;
  if (!shortest_digits<float>(value_text, digits)) return false;
  append_java_layout(digits, out);
  return true;
}

bool append_java_big_decimal(std::string_view plain, std::string& out) {
  std::string_view text = plain;
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty()) return false;
  for (const char c : whole)
    if (c < '0' || c > '9') return false;
  for (const char c : fraction)
    if (c < '0' || c > '9') return false;
  // BigDecimal: unscaled digits without leading zeros, scale = fraction digits; the adjusted
  // exponent is -scale + (digits - 1); below -6 the text is scientific.
  std::size_t first = 0;
  const std::string_view all_whole = whole;
  while (first < all_whole.size() && all_whole[first] == '0') ++first;
  std::size_t unscaled_digits = 0;
  std::size_t leading_fraction_zeros = 0;
  if (first < all_whole.size()) {
    unscaled_digits = all_whole.size() - first + fraction.size();
  } else {
    while (leading_fraction_zeros < fraction.size() && fraction[leading_fraction_zeros] == '0') ++leading_fraction_zeros;
    unscaled_digits = fraction.size() - leading_fraction_zeros;
    if (unscaled_digits == 0) unscaled_digits = 1;  // the value 0
  }
  const long long adjusted = -static_cast<long long>(fraction.size()) + static_cast<long long>(unscaled_digits) - 1;
  if (adjusted >= -6) {
    out += plain;
    return true;
  }
  // Only values below 1 get here (a whole part would make adjusted >= 0).
  const std::string_view significant = leading_fraction_zeros < fraction.size()
                                           ? fraction.substr(leading_fraction_zeros)
                                           : std::string_view("0");
  // Java keeps the sign of the unscaled value: 0 has none.
  if (negative && significant != "0") out.push_back('-');
  out.push_back(significant[0]);
  if (significant.size() > 1) {
    out.push_back('.');
    out += significant.substr(1);
  }
  out.push_back('E');
  out += fmt::format_int(adjusted).str();
  return true;
}

void append_latin1_as_utf8(std::string_view bytes, std::string& out) {
  for (const char c : bytes) ndjson::append_utf8(out, static_cast<unsigned char>(c));
}

bool append_mysql_json_text(std::string_view compact, std::string& out) {
  bool in_string = false;
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    out.push_back(c);
    if (in_string) {
      if (c == '\\' && i + 1 < compact.size()) {
        out.push_back(compact[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == ':') {
      out.push_back(' ');
    }
  }
  return !in_string;
}

bool append_wkt(std::string_view srid_and_wkb, std::string& out) {
  if (srid_and_wkb.size() < 4) return false;
  WkbReader reader(srid_and_wkb.substr(4));
  return append_geometry(reader, 0, 0, out);
}

std::optional<std::uint64_t> enum_index(const ColumnInfo& column, std::string_view label) {
  for (std::size_t i = 0; i < column.values.size(); ++i)
    if (column.values[i] == label) return i + 1;
  if (label.empty() && !column.values.empty()) return 0;
  return std::nullopt;
}

std::optional<std::uint64_t> set_mask(const ColumnInfo& column, std::string_view members) {
  if (column.values.empty() && !members.empty()) return std::nullopt;
  std::uint64_t mask = 0;
  while (!members.empty()) {
    const std::size_t comma = members.find(',');
    const std::string_view member = members.substr(0, comma);
    bool found = false;
    for (std::size_t i = 0; i < column.values.size() && i < 64; ++i) {
      if (column.values[i] == member) {
        mask |= std::uint64_t{1} << i;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
    if (comma == std::string_view::npos) break;
    members.remove_prefix(comma + 1);
  }
  return mask;
}

void append_topic_name(std::string_view db, std::string_view table, std::string& out) {
  const auto append_part = [&out](std::string_view part) {
    for (const char c : part) {
      const bool allowed =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      out.push_back(allowed ? c : '_');
    }
  };
  append_part(db);
  if (!table.empty()) {
    out.push_back('.');
    append_part(table);
  }
}

void append_uuid_from(std::string_view seed, std::string& out) {
  // Two FNV-1a 64-bit hashes with different offset bases: 128 bits that depend on every byte.
  std::uint64_t high = 0xcbf29ce484222325ULL;
  std::uint64_t low = 0x84222325cbf29ce4ULL;
  for (const char c : seed) {
    high = (high ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    low = (low ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    low ^= low >> 29;
  }
  // Version 8 (RFC 9562: custom), variant 10.
  high = (high & ~0xF000ULL) | 0x8000ULL;
  low = (low & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  out += fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xFFFF, high & 0xFFFF,
                     low >> 48, low & 0xFFFFFFFFFFFFULL);
}

}  // namespace cdc::output
