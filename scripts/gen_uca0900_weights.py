#!/usr/bin/env python3
"""Generates libcore/order/uca0900_weights.cpp: the weights of MySQL 8's utf8mb4_0900_ai_ci,
utf8mb4_0900_as_ci and utf8mb4_0900_as_cs, which cdc-merge orders keys by (order/uca_table.h).

No MySQL server is available here (none in Debian or npm), so unlike scripts/gen_uca_weights.sh
the weights are not read from a server but derived from the Unicode data files Debian's
`unicode-data` ships (UCA 15.0.0's allkeys.txt, DerivedAge.txt), following MySQL's own generator of
its 0900 table, strings/uca9-dump.cc (MySQL 8.0, "dump DUCET 9.0.0 to table we use in MySQL
collations"), and its scanner, strings/ctype-uca.cc (uca_scanner_900::next_implicit); MySQL's
reference manual ("Unicode Character Sets") says the utf8mb4_0900 collations are based on UCA 9.0.0,
are NO PAD, and do not ignore punctuation or spaces.

  - Characters assigned in Unicode 9.0.0 or before (DerivedAge.txt) weigh what allkeys.txt gives
    them. Its 15.0.0 weights are not 9.0.0's numbers, but DUCET keeps the relative order of the
    characters it already had, which is all cdc-merge needs (it compares, never prints, weights).
    uca9-dump keeps at most 8 collation elements a character (only U+FDFA has more: 18).
  - Variable weighting is non-ignorable: allkeys.txt's variable marks (*) are read as ordinary
    weights, so 'a b' <> 'ab'.
  - No contractions: uca9-dump skips allkeys.txt's multi-character lines ("Contractions we don't
    support"), and the untailored 0900 collations add none (my_uca_v900 has no contraction
    table; only the language collations, utf8mb4_xx_0900_*, have some). So U+0438 U+0306 is
    not U+0439 there, unlike in MariaDB's uca1400 collations.
  - Hangul syllables AC00..D7AF (also the unassigned D7A4..D7AF) weigh as their conjoining jamo,
    the first collation element of each (ctype-uca.cc my_put_jamo_weights). In page D7, which
    DUCET also fills with Jamo Extended-B, uca9-dump computes them into the table instead, and
    adds one to each tertiary weight there (its my_put_jamo_weights): U+D700..U+D7AF differ from
    their jamo at the tertiary level, U+AC00..U+D6FF do not.
  - Every other code point takes the implicit weights of UCA 9.0.0, [.AAAA.0020.0002][.BBBB.0000.0000]:
      Tangut: the whole of 17000..18AFF, assigned or not: AAAA = FB00, BBBB = (CP - 17000) | 8000.
      Han assigned by 9.0.0: core (4E00..9FD5, FA0E..FA29 where no DUCET weight) AAAA = FB40 +
        (CP >> 15); extensions A..E (3400..4DB5, 20000..2A6D6, 2A700..2B734, 2B740..2B81D,
        2B820..2CEA1) AAAA = FB80 + (CP >> 15); BBBB = (CP & 7FFF) | 8000.
      anything else (unassigned in 9.0.0: Nushu, Khitan, extension F and later Han, the emoji of
        Unicode 10+; private use; noncharacters): AAAA = FBC0 + (CP >> 15), BBBB = (CP & 7FFF) | 8000.

What this cannot check: DUCET reorderings made between 9.0.0 and 15.0.0 among characters both
versions weigh (rare); the table has never been compared with a MySQL server.

Levels are those of uca_table.h: 0 primary, 1 secondary, 2 tertiary (0900_ai_ci compares level
0, _as_ci levels 0-1, _as_cs levels 0-2: key_order.cpp). The output is a function of the input
files only (sorted, no dates), so the same files give the same bytes.

Usage: scripts/gen_uca0900_weights.py [OUTPUT]   (default libcore/order/uca0900_weights.cpp)
Environment: CDC_UNICODE_DIR (default /usr/share/unicode).
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from uca_text import contraction_text, literal, run_text, runs  # noqa: E402

UNICODE_DIR = os.environ.get("CDC_UNICODE_DIR", "/usr/share/unicode")
MYSQL_UNICODE_VERSION = (9, 0)
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7AF  # my_decompose_hangul_syllable's range
TANGUT_FIRST, TANGUT_LAST = 0x17000, 0x18AFF
# Unicode 9.0.0's Han, as next_implicit lists it (checked against PropList.txt below).
CORE_HAN = ((0x4E00, 0x9FD5), (0xFA0E, 0xFA29))
OTHER_HAN = ((0x3400, 0x4DB5), (0x20000, 0x2A6D6), (0x2A700, 0x2B734), (0x2B740, 0x2B81D), (0x2B820, 0x2CEA1))
MAX_ELEMENTS = 8  # uca9-dump's MY_UCA_MAXCE_TO_DUMP


def die(message):
    sys.exit("gen_uca0900_weights: " + message)


def data_lines(name):
    path = os.path.join(UNICODE_DIR, name)
    if not os.access(path, os.R_OK):
        die("%s not found; apt-get install unicode-data" % path)
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            yield [field.strip() for field in line.split(";")]


def code_points(text):
    first, _, last = text.partition("..")
    return range(int(first, 16), int(last or first, 16) + 1)


def assigned_by_9_0():
    assigned = set()
    for fields in data_lines("DerivedAge.txt"):
        if tuple(int(n) for n in fields[1].split(".")) <= MYSQL_UNICODE_VERSION:
            assigned.update(code_points(fields[0]))
    return assigned


def unified_ideographs():
    han = set()
    for fields in data_lines("PropList.txt"):
        if fields[1] == "Unified_Ideograph":
            han.update(code_points(fields[0]))
    return han


ELEMENT = re.compile(r"\[[.*]([0-9A-F]{4,5})\.([0-9A-F]{4})\.([0-9A-F]{4})\]")


def allkeys():
    """(version, {code point: elements}, [(code points, elements)]); an element is (p, s, t)."""
    path = os.path.join(UNICODE_DIR, "allkeys.txt")
    if not os.access(path, os.R_OK):
        die("%s not found; apt-get install unicode-data" % path)
    version, singles, multis = "?", {}, []
    for line in open(path, encoding="utf-8"):
        if line.startswith("@version"):
            version = line.split()[1]
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("@"):
            continue
        chars, _, keys = line.partition(";")
        seq = tuple(int(c, 16) for c in chars.split())
        elements = tuple(tuple(int(w, 16) for w in m) for m in ELEMENT.findall(keys))
        if not elements:
            die("no collation elements in: " + line)
        if len(seq) == 1:
            singles[seq[0]] = elements
        else:
            multis.append((seq, elements))
    return version, singles, multis


def in_ranges(cp, ranges):
    return any(first <= cp <= last for first, last in ranges)


def implicit(cp):
    """next_implicit's weights of a code point DUCET 9.0.0 does not list."""
    if TANGUT_FIRST <= cp <= TANGUT_LAST:
        return ((0xFB00, 0x20, 0x02), ((cp - TANGUT_FIRST) | 0x8000, 0, 0))
    base = 0xFB80 if in_ranges(cp, OTHER_HAN) else 0xFB40 if in_ranges(cp, CORE_HAN) else 0xFBC0
    return ((base + (cp >> 15), 0x20, 0x02), ((cp & 0x7FFF) | 0x8000, 0, 0))


def hangul_jamo(cp):
    """my_decompose_hangul_syllable: the L V [T] jamo of a syllable."""
    index = cp - 0xAC00
    jamo = [0x1100 + index // 588, 0x1161 + (index % 588) // 28]
    if index % 28:
        jamo.append(0x11A7 + index % 28)
    return jamo


def levels(elements):
    return tuple(tuple(e[level] for e in elements if e[level]) for level in range(3))


def main():
    output = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "libcore", "merge", "uca0900_weights.cpp")
    assigned = assigned_by_9_0()
    version, singles, _ = allkeys()
    ducet = {cp: elements[:MAX_ELEMENTS] for cp, elements in singles.items() if cp in assigned}
    han = {cp for cp in unified_ideographs() if cp in assigned}  # DUCET lists a few (FA0E: implicit weights)
    listed_han = {cp for cp in range(0x110000) if in_ranges(cp, CORE_HAN + OTHER_HAN) and cp not in ducet}
    if han - set(ducet) != listed_han:
        die("Unicode 9.0.0's Unified_Ideograph is not next_implicit's Han ranges")
    loaded_pages = {cp >> 8 for cp in ducet}

    def elements_of(cp):
        if cp in ducet:
            return ducet[cp]
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            # In a page DUCET partly fills, uca9-dump stores the syllable with tertiary + 1.
            extra = 1 if cp >> 8 in loaded_pages else 0
            return tuple((p, s, t + extra) for p, s, t in (ducet[j][0] for j in hangul_jamo(cp)))
        return implicit(cp)

    table = [(cp, levels(elements_of(cp))) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    chars = dict(table)
    if any(len(level) != 1 for level in chars[0x20]):
        die("the space does not weigh one weight per level")
    contractions = []  # uca9-dump drops DUCET's contractions (see above)

    text = ["// Generated by scripts/gen_uca0900_weights.py from allkeys.txt %s (UCA 9.0.0 rules): do not edit." % version,
            "// MySQL 8's utf8mb4_0900_* weights, derived without a MySQL server (see the script for the",
            "// rules and what they cannot check); the text format is merge/uca_table.cpp's.",
            "",
            '#include "order/uca_table.h"',
            "",
            "namespace cdc::merge::detail {",
            "",
            "namespace {",
            "",
            "// clang-format off",
            "constexpr std::string_view kUca0900Runs =\n%s;\n" % literal(run_text(table)),
            "constexpr std::string_view kUca0900Contractions =\n%s;" % literal(contraction_text(contractions)),
            "// clang-format on",
            "",
            "}  // namespace",
            "",
            "UcaSource uca0900_source() noexcept { return {3, kUca0900Runs, kUca0900Contractions}; }",
            "",
            "}  // namespace cdc::merge::detail"]
    with open(output + ".tmp", "w", encoding="utf-8") as out:
        out.write("\n".join(text) + "\n")
    os.replace(output + ".tmp", output)
    print("gen_uca0900_weights: wrote %s from allkeys.txt %s: %d runs, %d contractions"
          % (output, version, len(runs(table)), len(contractions)), file=sys.stderr)


if __name__ == "__main__":
    main()
