#!/usr/bin/env bash
# Generates libcore/order/uca_weights.cpp: the weights of MariaDB's UCA collations that
# cdc-merge orders keys by (order/uca_table.h), read from a throwaway MariaDB's WEIGHT_STRING()
# rather than copied from any source code.
#
#   unicode      utf8mb4_unicode_ci (UCA 4.0.0): level 1 of every code point (0..10FFFF
#                without the surrogates).
#   unicode_520  utf8mb4_unicode_520_ci (UCA 5.2.0): the same.
#   uca1400      utf8mb4_uca1400_* (UCA 14.0.0): levels 1, 2 and 3 of every code point, from
#                WEIGHT_STRING under _ai_ci (level 1), _as_ci (levels 1+2) and _ai_cs (1+3).
#
# Contractions: every sequence DUCET lists as one (the multi-character lines of
# /usr/share/unicode/allkeys.txt, Debian's unicode-data) is weighed whole; those whose weights
# are not their characters' weights one after the other are the server's contractions and are
# kept with their own weights. Checked: the space weighs one weight at each level; the _nopad_
# and utf8mb3 variants weigh every BMP character as their utf8mb4 PAD SPACE collation.
#
# The table is compressed into runs of consecutive code points with the same weights, or whose
# last level-1 weight grows by one per code point (implicit weights, most scripts); see
# merge/uca_table.cpp for the text format.
#
# Usage: scripts/gen_uca_weights.sh [OUTPUT]   (default libcore/order/uca_weights.cpp)
set -euo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"
output=${1:-$CDC_ROOT/libcore/order/uca_weights.cpp}
allkeys=${CDC_ALLKEYS:-/usr/share/unicode/allkeys.txt}
[[ -r $allkeys ]] || {
  echo "gen_uca_weights: $allkeys not found; apt-get install unicode-data" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/cdc-uca-weights.XXXXXX")
trap 'throwaway_stop "$work/server"; rm -rf "$work"' EXIT INT TERM
throwaway_start "$work/server" >/dev/null

sql() {
  mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot -N -B -D mysql --default-character-set=utf8mb4 -e "$1"
}
die() {
  echo "gen_uca_weights: $*" >&2
  exit 1
}

version=$(sql "SELECT VERSION()")
char_of="CONVERT(CONVERT(UNHEX(LPAD(HEX(seq), 8, '0')) USING utf32) USING utf8mb4)"
weight_of() { echo "HEX(WEIGHT_STRING($1 COLLATE $2))"; }
all_weights() {  # the five weight strings of the text expression $1
  echo "$(weight_of "$1" utf8mb4_uca1400_ai_ci), $(weight_of "$1" utf8mb4_uca1400_as_ci),
        $(weight_of "$1" utf8mb4_uca1400_ai_cs), $(weight_of "$1" utf8mb4_unicode_ci),
        $(weight_of "$1" utf8mb4_unicode_520_ci)"
}

sql "SELECT seq, $(all_weights "$char_of") FROM seq_0_to_1114111 WHERE seq NOT BETWEEN 55296 AND 57343" \
  >"$work/chars.tsv"
[[ $(wc -l <"$work/chars.tsv") -eq 1112064 ]] || die "expected 1112064 code points"

# The variants must weigh as the collation they vary (surrogates D800..DFFF are not characters).
for pair in utf8mb4_uca1400_nopad_as_cs:utf8mb4_uca1400_as_cs utf8mb3_uca1400_as_cs:utf8mb4_uca1400_as_cs \
  utf8mb3_uca1400_nopad_ai_ci:utf8mb4_uca1400_ai_ci utf8mb4_unicode_nopad_ci:utf8mb4_unicode_ci \
  utf8mb3_unicode_ci:utf8mb4_unicode_ci utf8mb4_unicode_520_nopad_ci:utf8mb4_unicode_520_ci \
  utf8mb3_unicode_520_ci:utf8mb4_unicode_520_ci; do
  variant=${pair%%:*} base=${pair#*:}
  differ=$(sql "SELECT COUNT(*) FROM seq_0_to_65535 WHERE seq NOT BETWEEN 55296 AND 57343 AND
                $(weight_of "$char_of" "$base") <> $(weight_of "CONVERT($char_of USING ${variant%%_*})" "$variant")")
  [[ $differ == 0 ]] || die "$variant weighs $differ BMP code points unlike $base"
done

# DUCET's contractions, weighed whole by the server.
python3 - "$allkeys" >"$work/contractions.sql" <<'EOF'
import re, sys
rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^([0-9A-F]{4,6}(?: [0-9A-F]{4,6})+)\s*;", line)
    if m:
        rows.append(m.group(1).split())
print("CREATE DATABASE gen; CREATE TABLE gen.c (id INT PRIMARY KEY, s VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin);")
print("INSERT INTO gen.c VALUES " + ",".join(
    "(%d, CONVERT(X'%s' USING utf32))" % (i, "".join(c.zfill(8) for c in r)) for i, r in enumerate(rows)) + ";")
EOF
sql "$(cat "$work/contractions.sql")"
sql "SELECT HEX(CONVERT(s USING utf32)), $(all_weights s) FROM gen.c ORDER BY id" >"$work/contractions.tsv"
[[ -s $work/contractions.tsv ]] || die "no contractions in $allkeys"

PYTHONPATH="$CDC_ROOT/scripts/lib" python3 - "$work/chars.tsv" "$work/contractions.tsv" "$version" >"$output.tmp" <<'EOF'
import sys
from uca_text import contraction_text, literal, run_text, runs

def weights(hex_text):
    return tuple(int(hex_text[i:i + 4], 16) for i in range(0, len(hex_text), 4))

def levels(fields):
    """(uca1400 L1, L2, L3), unicode L1, unicode_520 L1 from the five weight strings."""
    l1, l12, l13, unicode, unicode_520 = (weights(f) for f in fields)
    if l12[:len(l1)] != l1 or l13[:len(l1)] != l1:
        sys.exit("gen_uca_weights: _as_ci/_ai_cs weights do not start with the _ai_ci ones")
    return (l1, l12[len(l1):], l13[len(l1):]), (unicode,), (unicode_520,)

tables = ([], [], [])  # per table: (code point, levels)
for line in open(sys.argv[1]):
    fields = line.rstrip("\n").split("\t")
    for table, entry in zip(tables, levels(fields[1:])):
        table.append((int(fields[0]), entry))
chars = [dict(t) for t in tables]

contractions = ([], [], [])
for line in open(sys.argv[2]):
    fields = line.rstrip("\n").split("\t")
    seq = [int(fields[0][i:i + 8], 16) for i in range(0, len(fields[0]), 8)]
    for table, entry, known in zip(contractions, levels(fields[1:]), chars):
        apart = tuple(sum((known[c][level] for c in seq), ()) for level in range(len(entry)))
        if entry != apart:
            table.append((seq, entry))

space_levels = [t[0x20] for t in chars]
for entry in space_levels:
    if any(len(level) != 1 for level in entry):
        sys.exit("gen_uca_weights: the space does not weigh one weight per level")

version = sys.argv[3]
print("""// Generated by scripts/gen_uca_weights.sh from %s: do not edit.
// WEIGHT_STRING() of every code point and of DUCET's contractions, read from the server (see the
// script for the checks); the text format is merge/uca_table.cpp's.

#include "order/uca_table.h"

namespace cdc::merge::detail {

namespace {

// clang-format off""" % version)
names = ("Uca1400", "Unicode400", "Unicode520")
for name, table, contraction in zip(names, tables, contractions):
    print("constexpr std::string_view k%sRuns =\n%s;\n" % (name, literal(run_text(table))))
    print("constexpr std::string_view k%sContractions =\n%s;\n" % (name, literal(contraction_text(contraction))))
print("""// clang-format on

}  // namespace

UcaSource uca1400_source() noexcept { return {3, kUca1400Runs, kUca1400Contractions}; }
UcaSource unicode400_source() noexcept { return {1, kUnicode400Runs, kUnicode400Contractions}; }
UcaSource unicode520_source() noexcept { return {1, kUnicode520Runs, kUnicode520Contractions}; }

}  // namespace cdc::merge::detail""")
print("gen_uca_weights: %s" % ", ".join("%s %d runs %d contractions" % (n, len(runs(t)), len(c))
                                        for n, t, c in zip(names, tables, contractions)), file=sys.stderr)
EOF
mv "$output.tmp" "$output"
echo "gen_uca_weights: wrote $output ($(wc -c <"$output") bytes) from $version" >&2
