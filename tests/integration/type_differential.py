#!/usr/bin/env python3
"""Every MariaDB type, with the server as the oracle (issue 30).

Random values of every column type MariaDB 10.11 has (edge values among them: integer limits,
DECIMAL(65,30) and DECIMAL(38,38), zero dates and dates with zero parts, TIME past 24 hours and
negative, every fraction precision, text in every character set the server has, binary strings
with trailing zeros, each GEOMETRY kind, INET4, INET6, UUID, ENUM and SET with the empty value
of an invalid member, generated and invisible columns, a system-versioned table's row_start and
row_end, a sequence) are written by the server: inserted, updated, then some deleted. The server
is then asked, over the text protocol, for each row's value of each column at each step, and:

* cdc-stream (--file --catalog, and live) must write, in each c, u and d line, exactly that text
  after the encoding cdc-ndjson(5) documents (VALUES): the before image of an update the value
  after the inserts, the after image the value after the updates;
* cdc-snapshot (cdc-plan's chunks) and cdc-sync --mode initial_only must write the final rows;
* every --format (debezium, canal, maxwell; each also with --flink), for the stream and for
  cdc-sync's snapshot, must write the value cdc-formats(7) documents for it, worked out here from
  the server's text and the column's type, never from what a tool wrote.

No expected value is written by hand: the server decides each one.

Usage: type_differential.py --socket S --port P --password PW --tools DIR --datadir DIR --work DIR
       [--seed N] [--rows 120]
Prints the seed; exit 0 when every value agrees, 1 with the first disagreements.
"""
import argparse
import base64
import datetime
import decimal
import json
import os
import random
import re
import struct
import subprocess
import sys

DB = "typediff"
D = decimal.Decimal
decimal.getcontext().prec = 200


class Column:
    def __init__(self, name, definition, kind, generate=None, **meta):
        self.name = name
        self.definition = definition
        self.kind = kind          # how the server's text becomes each format's value
        self.generate = generate  # rng -> SQL literal; None: the server computes it
        self.meta = meta          # bits, fsp, scale, members, nullable, geometry kind, ...
        self.nullable = "NOT NULL" not in definition

    def select(self):
        """The server's text for the value, as a hex string of its utf8mb4 bytes (NULL as NULL)."""
        name = f"`{self.name}`"
        if self.kind in ("binary", "geometry"):
            text = f"REPLACE(TO_BASE64({name}), '\\n', '')"
        elif self.kind == "bit":
            text = f"{name} + 0"
        elif self.kind == "float":
            text = f"CAST({name} AS DOUBLE)"  # the float's exact value; its own text has 6 digits
        elif self.kind == "geometry_wkt":
            text = f"ST_AsText({name})"
        else:
            text = name
        return f"IF({name} IS NULL, NULL, HEX(CAST({text} AS CHAR CHARACTER SET utf8mb4)))"


# ---------------------------------------------------------------------------------------------
# Random values, as SQL literals.

def sql_text(text):
    return "_utf8mb4 X'" + text.encode("utf-8").hex() + "'"


def integer_values(bits, unsigned):
    low, high = (0, 2 ** bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    edges = [low, high, 0, 1, low + 1, high - 1] + ([-1] if not unsigned else [])

    def generate(rng):
        if rng.random() < 0.4:
            return str(rng.choice(edges))
        return str(rng.randint(low, high))
    return generate


def decimal_values(precision, scale):
    whole = precision - scale

    def digits(count, rng):
        return "".join(rng.choice("0123456789") for _ in range(count)) if count else ""

    def generate(rng):
        r = rng.random()
        if r < 0.15:
            text = ("9" * whole or "0") + ("." + "9" * scale if scale else "")
        elif r < 0.2:
            text = "0"
        elif r < 0.3:
            text = "0." + "0" * (scale - 1) + "1" if scale else "1"
        else:
            text = (digits(rng.randint(0, whole), rng) or "0") + ("." + digits(rng.randint(1, scale), rng) if scale else "")
        return ("-" if rng.random() < 0.4 else "") + text
    return generate


def float_values(single):
    edges = ["0", "-0", "1", "-1", "0.1", "1.5", "100", "1e10", "1e-10", "123456789"]
    edges += ["3.4028234e38", "-3.4028234e38", "1.1754944e-38", "1.4e-45", "16777217"] if single else \
        ["1.7976931348623157e308", "-1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324",
         "9007199254740993", "0.30000000000000004"]
    top = 38 if single else 307

    def generate(rng):
        if rng.random() < 0.3:
            return rng.choice(edges)
        mantissa = rng.uniform(-10, 10)
        return repr(mantissa * 10 ** rng.randint(-top, top))
    return generate


def bit_values(bits):
    def generate(rng):
        value = rng.choice([0, 2 ** bits - 1, 1, rng.getrandbits(bits)])
        return f"b'{value:b}'"
    return generate


def year_values(rng):
    return rng.choice(["0", "1901", "2155", "2000", "'69'", "'0'", str(rng.randint(1901, 2155))])


def date_text(rng):
    r = rng.random()
    if r < 0.08:
        return "0000-00-00"
    if r < 0.14:
        return rng.choice(["2024-00-15", "2024-03-00", "0000-01-01", "1000-01-01", "9999-12-31", "1970-01-01",
                           "1969-12-31", "2024-02-29"])
    return f"{rng.randint(1000, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def fraction(rng, fsp):
    if fsp == 0:
        return ""
    return "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 6)))


def date_values(rng):
    return f"'{date_text(rng)}'"


def time_values(fsp):
    def generate(rng):
        r = rng.random()
        if r < 0.2:
            return "'" + rng.choice(["-838:59:59", "838:59:59", "00:00:00", "-00:00:00.000001", "-00:00:01",
                                      "23:59:59.999999", "24:00:00", "-24:00:00.5", "100:00:00"]) + "'"
        sign = "-" if rng.random() < 0.3 else ""
        return f"'{sign}{rng.randint(0, 838):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}{fraction(rng, fsp)}'"
    return generate


def datetime_values(fsp):
    def generate(rng):
        if rng.random() < 0.1:
            return "'" + rng.choice(["0000-00-00 00:00:00", "2024-00-15 10:00:00", "9999-12-31 23:59:59.999999",
                                      "1000-01-01 00:00:00", "1969-12-31 23:59:59.999"]) + "'"
        return f"'{date_text(rng)} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}{fraction(rng, fsp)}'"
    return generate


def timestamp_values(fsp):
    def generate(rng):
        if rng.random() < 0.12:
            return "'" + rng.choice(["0000-00-00 00:00:00", "1970-01-01 00:00:01", "2038-01-19 03:14:07.999999",
                                      "2000-02-29 12:00:00.5"]) + "'"
        moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=rng.randint(1, 2 ** 31 - 2))
        return f"'{moment:%Y-%m-%d %H:%M:%S}{fraction(rng, fsp)}'"
    return generate


# Characters from many scripts; each character set's column draws from those it can hold.
CANDIDATES = ("abcxyzABCXYZ019 _-.,'\"\\/%\t"
              "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÉÑÖÜßœŒŠšŽžƒ€£¥©®°±µ¶·¿×÷"
              "ĀāĂăĄąĆćČčĎďĘęĚěĞğİıŁłŃńŇňŐőŘřŚśŞşŢţŤťŮůŰűŹźŻż"
              "ΑΒΓΔαβγδεζηθλμπσωάέ" "АБВГДЖЗабвгдежзийклмнопрстуфхцчшщъыьэюяЁёЄєІіЇїҐґЎў"
              "אבגדהוזחטיכלמנסעפצקרשת" "ابتثجحخدذرزسشصضطظعغفقكلمنهوي" "ԱԲԳաբգ" "აბგდევზ" "กขคงจฉชซ"
              "日本語中文漢字简体繁體한국어ひらがなカタカナｱｲｳ①②③♪☆★→←∀∃∈≠≤≥√∞" "丂丄丅丆丏丒丗丟丠"
              "😀🎉👍🚀𝄞𠀀")


def text_values(pool, length):
    def generate(rng):
        if rng.random() < 0.05:
            return "''"
        count = rng.randint(1, length)
        text = "".join(rng.choice(pool) for _ in range(count))
        if rng.random() < 0.1:
            text = text.rstrip() + "  "  # trailing spaces: CHAR drops them, VARCHAR keeps them
        return sql_text(text)
    return generate


def enum_values(members):
    def generate(rng):
        r = rng.random()
        if r < 0.1:
            return "'nonesuch'"  # not a member: the server stores the empty value (index 0)
        if r < 0.2:
            return str(rng.randint(1, len(members)))
        return "'" + rng.choice(members) + "'"
    return generate


def set_values(members):
    def generate(rng):
        chosen = [m for m in members if rng.random() < 0.4]
        rng.shuffle(chosen)
        if rng.random() < 0.1:
            return str(rng.getrandbits(len(members)))
        return "'" + ",".join(chosen) + "'"
    return generate


def binary_values(length):
    def generate(rng):
        count = rng.randint(0, length)
        data = bytes(rng.choice([0, 0, 255, 32, rng.randrange(256)]) for _ in range(count))
        return "X'" + data.hex() + "'"
    return generate


def json_values(rng):
    def value(depth):
        r = rng.random()
        if depth > 2 or r < 0.4:
            return rng.choice([1, -7, 1.5, 1e300, "text", "ünï😀", True, False, None, 12345678901234567890, ""])
        if r < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["a", "b", "ключ", "long key"]): value(depth + 1) for _ in range(rng.randint(0, 3))}
    return sql_text(json.dumps(value(0), ensure_ascii=False, separators=rng.choice([(",", ":"), (", ", ": ")])))


def number_text(rng):
    return rng.choice(["0", "1", "-1", "1.5", "-2.25", "100", "123456.789", "1e-5", "-0.001", str(rng.randint(-1000, 1000)),
                       repr(rng.uniform(-1e6, 1e6))])


def point_text(rng):
    return f"{number_text(rng)} {number_text(rng)}"


def ring_text(rng):
    points = [point_text(rng) for _ in range(rng.randint(3, 5))]
    return "(" + ", ".join(points + [points[0]]) + ")"


def line_text(rng):
    return "(" + ", ".join(point_text(rng) for _ in range(rng.randint(2, 4))) + ")"


def geometry_text(kind, rng, depth=0):
    if kind == "geometry":
        kind = rng.choice(["point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon"] +
                          (["geometrycollection"] if depth == 0 else []))
    if kind == "point":
        return f"POINT({point_text(rng)})"
    if kind == "linestring":
        return "LINESTRING" + line_text(rng)
    if kind == "polygon":
        return "POLYGON(" + ", ".join(ring_text(rng) for _ in range(rng.randint(1, 2))) + ")"
    if kind == "multipoint":
        return "MULTIPOINT(" + ", ".join(point_text(rng) for _ in range(rng.randint(1, 3))) + ")"
    if kind == "multilinestring":
        return "MULTILINESTRING(" + ", ".join(line_text(rng) for _ in range(rng.randint(1, 3))) + ")"
    if kind == "multipolygon":
        return "MULTIPOLYGON(" + ", ".join("(" + ring_text(rng) + ")" for _ in range(rng.randint(1, 2))) + ")"
    return "GEOMETRYCOLLECTION(" + ", ".join(geometry_text("geometry", rng, 1) for _ in range(rng.randint(0, 3))) + ")"


def geometry_values(kind, srid=0):
    def generate(rng):
        return f"ST_GeomFromText('{geometry_text(kind, rng)}', {srid})"
    return generate


def inet4_values(rng):
    return "'" + ".".join(str(rng.choice([0, 255, rng.randrange(256)])) for _ in range(4)) + "'"


def inet6_values(rng):
    r = rng.random()
    if r < 0.2:
        return "'::ffff:" + ".".join(str(rng.randrange(256)) for _ in range(4)) + "'"
    groups = [0 if rng.random() < 0.5 else rng.randrange(65536) for _ in range(8)]
    return "'" + ":".join(f"{g:x}" for g in groups) + "'"


def uuid_values(rng):
    data = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
    r = rng.random()
    if r < 0.15:  # time-based (version 1, RFC 4122 variant): the server swaps its segments in the record
        data[6], data[8] = 0x10 | data[6] & 0x0F, 0x80 | data[8] & 0x3F
    elif r < 0.3:  # a record read as swapped whose value has bytes 6 and 8 of 0x80, which text cannot write
        data[6] = data[8] = 0x80
    return f"CAST(X'{data.hex()}' AS UUID)"


# ---------------------------------------------------------------------------------------------
# The table.

INTEGERS = [("ti", "TINYINT", 8), ("si", "SMALLINT", 16), ("mi", "MEDIUMINT", 24), ("i", "INT", 32), ("bi", "BIGINT", 64)]
ENUM_MEMBERS = ["small", "medium", "large", "x-large", "ünï"]
SET_MEMBERS = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]


def columns(charsets, pools):
    out = [Column("id", "INT NOT NULL PRIMARY KEY", "integer")]
    for name, sql, bits in INTEGERS:
        out.append(Column(name, sql, "integer", integer_values(bits, False), bits=bits))
        out.append(Column(name + "u", sql + " UNSIGNED", "integer", integer_values(bits, True), bits=bits, unsigned=True))
    out.append(Column("bool", "BOOL", "integer", integer_values(8, False), bits=8))
    for precision, scale in [(1, 0), (10, 2), (18, 9), (38, 38), (65, 30), (65, 0)]:
        out.append(Column(f"dec_{precision}_{scale}", f"DECIMAL({precision},{scale})", "decimal",
                          decimal_values(precision, scale), scale=scale))
    out.append(Column("decu", "DECIMAL(12,4) UNSIGNED", "decimal", lambda rng: decimal_values(12, 4)(rng).lstrip("-"), scale=4))
    out.append(Column("f", "FLOAT", "float", float_values(True)))
    out.append(Column("f72", "FLOAT(7,2)", "float", lambda rng: repr(round(rng.uniform(-99999, 99999), rng.randint(0, 4)))))
    out.append(Column("dbl", "DOUBLE", "double", float_values(False)))
    for bits in (1, 7, 8, 9, 33, 64):
        out.append(Column(f"bit{bits}", f"BIT({bits})", "bit", bit_values(bits), bits=bits))
    out.append(Column("yr", "YEAR", "year", year_values))
    out.append(Column("dt", "DATE", "date", date_values))
    out.append(Column("dtn", "DATE NOT NULL DEFAULT '2000-01-01'", "date", date_values))
    for fsp in range(7):
        out.append(Column(f"tm{fsp}", f"TIME({fsp})", "time", time_values(fsp), fsp=fsp))
        out.append(Column(f"dtm{fsp}", f"DATETIME({fsp})", "datetime", datetime_values(fsp), fsp=fsp))
        out.append(Column(f"ts{fsp}", f"TIMESTAMP({fsp}) NULL", "timestamp", timestamp_values(fsp), fsp=fsp))
    out.append(Column("dtmn", "DATETIME(3) NOT NULL DEFAULT '2000-01-01'", "datetime", datetime_values(3), fsp=3))
    out.append(Column("tsn", "TIMESTAMP(2) NOT NULL DEFAULT '2000-01-01'", "timestamp", timestamp_values(2), fsp=2))
    for charset in charsets:
        out.append(Column(f"vc_{charset}", f"VARCHAR(12) CHARACTER SET {charset}", "text", text_values(pools[charset], 12)))
    for charset in ("utf8mb4", "latin1", "sjis", "utf16"):
        out.append(Column(f"ch_{charset}", f"CHAR(8) CHARACTER SET {charset}", "text", text_values(pools[charset], 8)))
    out.append(Column("tt", "TINYTEXT CHARACTER SET utf8mb4", "text", text_values(pools["utf8mb4"], 40)))
    out.append(Column("tx", "TEXT CHARACTER SET cp1251", "text", text_values(pools["cp1251"], 300)))
    out.append(Column("mt", "MEDIUMTEXT CHARACTER SET utf8mb4", "text", text_values(pools["utf8mb4"], 100)))
    out.append(Column("lt", "LONGTEXT CHARACTER SET big5", "text", text_values(pools["big5"], 100)))
    out.append(Column("en", "ENUM('" + "','".join(ENUM_MEMBERS) + "') CHARACTER SET utf8mb4", "enum",
                      enum_values(ENUM_MEMBERS), members=ENUM_MEMBERS))
    out.append(Column("st", "SET('" + "','".join(SET_MEMBERS) + "')", "set", set_values(SET_MEMBERS), members=SET_MEMBERS))
    out.append(Column("bn", "BINARY(6)", "binary", binary_values(6)))
    out.append(Column("vb", "VARBINARY(20)", "binary", binary_values(20)))
    for blob, length in [("TINYBLOB", 30), ("BLOB", 300), ("MEDIUMBLOB", 100), ("LONGBLOB", 100)]:
        out.append(Column(blob.lower(), blob, "binary", binary_values(length)))
    out.append(Column("js", "JSON", "text", json_values))
    for kind in ("geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                 "geometrycollection"):
        out.append(Column("g_" + kind, kind.upper(), "geometry", geometry_values(kind), geometry=kind))
    out.append(Column("g_srid", "GEOMETRY REF_SYSTEM_ID=4326", "geometry", geometry_values("geometry", 4326), geometry="geometry"))
    out.append(Column("ip4", "INET4", "text", inet4_values))
    out.append(Column("ip6", "INET6", "text", inet6_values))
    out.append(Column("uu", "UUID", "text", uuid_values))
    out.append(Column("inv", "INT INVISIBLE", "integer", integer_values(32, False), bits=32))
    out.append(Column("gen_v", "BIGINT AS (i * 2) VIRTUAL", "integer", bits=64))
    out.append(Column("gen_s", "VARCHAR(20) CHARACTER SET utf8mb4 AS (CONCAT(IFNULL(en, '-'), '/', IFNULL(yr, '-'))) STORED",
                      "text"))
    return out


# ---------------------------------------------------------------------------------------------
# The server.

class Server:
    def __init__(self, args):
        self.args = args

    def run(self, script, session=""):
        done = subprocess.run(["mariadb", "--no-defaults", "-S", self.args.socket, "-uroot", "-N", "-B",
                               "--default-character-set=utf8mb4"],
                              input=(session + script).encode("utf-8"), capture_output=True)
        if done.returncode != 0:
            sys.exit(f"FAIL the server refused: {done.stderr.decode(errors='replace').strip()[-2000:]}")
        return done.stdout.decode("utf-8")

    def rows(self, table, cols, extra="", db=DB):
        """{id: {column: text or None}}: each column's text, as the server writes it (UTC)."""
        query = f"SELECT id, {', '.join(c.select() for c in cols)} FROM {db}.{table} {extra} ORDER BY id;\n"
        out = {}
        for line in self.run(query, "SET time_zone = '+00:00';").split("\n")[:-1]:
            fields = line.split("\t")
            values = {}
            for column, field in zip(cols, fields[1:]):
                values[column.name] = None if field == "NULL" else bytes.fromhex(field).decode("utf-8")
            out[int(fields[0])] = values
        return out


def character_pools(server):
    """For each character set: the candidate characters it can hold (the server converts them there
    and back), and for single-byte sets every byte it maps to a character."""
    names = [line.split("\t")[0] for line in server.run("SHOW CHARACTER SET;").splitlines()]
    names = sorted(n for n in names if n != "binary")
    probe = CANDIDATES
    selects = ", ".join(f"HEX(CONVERT(CONVERT(_utf8mb4 X'{probe.encode().hex()}' USING {n}) USING utf8mb4))" for n in names)
    back = server.run(f"SELECT {selects};").strip().split("\t")
    pools = {}
    for name, hexed in zip(names, back):
        converted = bytes.fromhex(hexed).decode("utf-8")
        pool = {c for c, d in zip(probe, converted) if c == d} if len(converted) == len(probe) else set()
        pools[name] = pool
    single = server.run("SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS WHERE MAXLEN = 1;").split()
    every_byte = bytes(range(0x20, 0x100)).hex()
    for name in single:
        if name == "binary":
            continue
        hexed = server.run(f"SELECT HEX(CONVERT(CONVERT(X'{every_byte}' USING {name}) USING utf8mb4));").strip()
        pools[name] |= {c for c in bytes.fromhex(hexed).decode("utf-8") if c != "?"}
    for name in names:
        pools[name].add("?")
        if len(pools[name]) < 20:
            sys.exit(f"FAIL character set {name}: only {len(pools[name])} characters found to write")
        pools[name] = "".join(sorted(pools[name]))
    return names, pools


# ---------------------------------------------------------------------------------------------
# What each tool and format must write, from the server's text.

EPOCH = datetime.datetime(1970, 1, 1)


def is_zero_date(text):
    return text[:4] == "0000" or text[5:7] == "00" or text[8:10] == "00"


def time_micros(text):
    sign = -1 if text.startswith("-") else 1
    hours, minutes, seconds = text.lstrip("-").split(":")
    whole, _, frac = seconds.partition(".")
    return sign * ((int(hours) * 3600 + int(minutes) * 60 + int(whole)) * 1_000_000 + int((frac + "000000")[:6]))


def datetime_micros(text):
    whole, _, frac = text.partition(".")
    moment = datetime.datetime.strptime(whole, "%Y-%m-%d %H:%M:%S")
    return (moment - EPOCH) // datetime.timedelta(microseconds=1) + int((frac + "000000")[:6])


def shortest_float32(value):
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                return text
        except OverflowError:  # rounded past the largest float
            continue
    return repr(value)


def java_float_text(value, single):
    """Java's Float.toString / Double.toString (JDK 19 on): the shortest decimal that reads back,
    but at least two digits (of those, the closest to the value); plain from 1E-3 to 1E7, else
    computerized scientific notation."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    shortest = shortest_float32(value) if single else repr(value)
    sign, digits, exponent = D(shortest).as_tuple()
    if len(digits) == 1:
        sign, digits, exponent = D(f"{value:.1e}").as_tuple()
    digits = "".join(map(str, digits))
    point = len(digits) + exponent  # where the decimal point goes, counted from the first digit
    digits = digits.rstrip("0") or "0"
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            text = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
    else:
        text = digits[0] + "." + (digits[1:] or "0") + "E" + str(point - 1)
    return ("-" if sign else "") + text


def big_endian_twos(value):
    length = 1
    while not -(1 << (8 * length - 1)) <= value < (1 << (8 * length - 1)):
        length += 1
    return value.to_bytes(length, "big", signed=True)


def geometry_bytes(text):
    data = base64.b64decode(text)
    return int.from_bytes(data[:4], "little"), data[4:]


def jts_wkt(server_wkt):
    """The server's WKT as JTS's WKTWriter writes it: a space after each type name, each point of
    a MULTIPOINT in parentheses, ", " between members, EMPTY for an empty collection; numbers
    are compared by value (same_wkt)."""
    text = re.sub(r"([A-Z])\(", r"\1 (", server_wkt).replace(",", ", ")
    text = re.sub(r"MULTIPOINT \(([^()]*)\)",
                  lambda m: "MULTIPOINT (" + ", ".join("(" + p.strip() + ")" for p in m.group(1).split(",")) + ")", text)
    return text.replace("GEOMETRYCOLLECTION ()", "GEOMETRYCOLLECTION EMPTY")


class Expect:
    """The value a format must write for a column whose server text is `text`."""

    def __init__(self, fmt, flink, snapshot=False):
        self.fmt = fmt
        self.flink = flink
        self.snapshot = snapshot  # rows of a snapshot, not of changes

    def value(self, column, text):
        if text is None:
            return None
        kind = column.kind
        method = getattr(self, f"{self.fmt}_{kind}", None) or getattr(self, f"{self.fmt}_any")
        return method(column, text)

    # cdc-ndjson(5), VALUES
    def ndjson_any(self, column, text):
        return text

    def ndjson_integer(self, column, text):
        return int(text)

    ndjson_bit = ndjson_integer
    ndjson_year = ndjson_integer

    def ndjson_float(self, column, text):
        return ("float32", float(text))

    def ndjson_double(self, column, text):
        return ("float64", float(text))

    def ndjson_timestamp(self, column, text):
        return text if is_zero_date(text) else text + "Z"

    # cdc-formats(7), DEBEZIUM, Values
    def debezium_any(self, column, text):
        return text

    def debezium_integer(self, column, text):
        value = int(text)
        if column.meta.get("unsigned") and column.meta.get("bits") == 64 and not self.flink and value >= 2 ** 63:
            value -= 2 ** 64  # bigint.unsigned.handling.mode=long
        return value

    def debezium_year(self, column, text):
        return int(text)

    debezium_float = ndjson_float
    debezium_double = ndjson_double

    def debezium_decimal(self, column, text):
        if self.flink:
            return text
        unscaled = int(D(text).scaleb(column.meta["scale"]))
        return base64.b64encode(big_endian_twos(unscaled)).decode()

    def debezium_bit(self, column, text):
        if column.meta["bits"] == 1:
            return text != "0"
        return base64.b64encode(int(text).to_bytes((column.meta["bits"] + 7) // 8, "little")).decode()

    def debezium_date(self, column, text):
        if is_zero_date(text):
            return None if column.nullable else ("1970-01-01" if self.flink else 0)
        if self.flink:
            return text
        return (datetime.date.fromisoformat(text) - datetime.date(1970, 1, 1)).days

    def debezium_time(self, column, text):
        return text if self.flink else time_micros(text)

    def debezium_datetime(self, column, text):
        if is_zero_date(text):
            return None if column.nullable else ("1970-01-01 00:00:00" if self.flink else 0)
        if self.flink:
            return text
        micros = datetime_micros(text)
        return micros if column.meta["fsp"] > 3 else micros // 1000

    def debezium_timestamp(self, column, text):
        if is_zero_date(text):
            if column.nullable:
                return None
            text = "1970-01-01 00:00:00" + ("." + "0" * column.meta["fsp"] if column.meta["fsp"] else "")
        return (text if self.flink else text.replace(" ", "T")) + "Z"

    def debezium_geometry(self, column, text):
        # --flink too: Flink's debezium-json reads the struct into a STRING column as its JSON
        srid, wkb = geometry_bytes(text)
        out = {}
        if column.meta["geometry"] == "point":
            little = wkb[0] == 1
            x, y = struct.unpack("<dd" if little else ">dd", wkb[5:21])
            out = {"x": ("float64", x), "y": ("float64", y)}
        out.update({"wkb": base64.b64encode(wkb).decode(), "srid": srid})
        return out

    # cdc-formats(7), CANAL, Canal values: every value a string
    def canal_any(self, column, text):
        return text

    def canal_float(self, column, text):
        return java_float_text(struct.unpack("<f", struct.pack("<f", float(text)))[0], True)

    def canal_double(self, column, text):
        return java_float_text(float(text), False)

    def canal_year(self, column, text):
        return "0000" if int(text) == 0 else str(int(text))

    def canal_timestamp(self, column, text):
        return text

    def canal_enum(self, column, text):
        if self.flink:
            return text
        return str(column.meta["members"].index(text) + 1) if text else "0"

    def canal_set(self, column, text):
        if self.flink:
            return text
        members = column.meta["members"]
        return str(sum(1 << members.index(m) for m in text.split(",")) if text else 0)

    def canal_binary(self, column, text):
        return text if self.flink else base64.b64decode(text).decode("latin-1")

    canal_geometry = canal_binary

    # cdc-formats(7), MAXWELL, Maxwell values
    def maxwell_any(self, column, text):
        return text

    def maxwell_integer(self, column, text):
        return int(text)

    maxwell_bit = maxwell_integer
    maxwell_year = maxwell_integer

    def maxwell_float(self, column, text):
        return ("java", java_float_text(struct.unpack("<f", struct.pack("<f", float(text)))[0], True))

    def maxwell_double(self, column, text):
        return ("java", java_float_text(float(text), False))

    def maxwell_decimal(self, column, text):
        return ("decimal", D(text))

    def maxwell_timestamp(self, column, text):
        return text

    def maxwell_date(self, column, text):
        return "0000-00-00" if is_zero_date(text) else text

    def maxwell_datetime(self, column, text):
        if not is_zero_date(text):
            return text
        return "0000-00-00 00:00:00" + ("." + "0" * column.meta["fsp"] if column.meta["fsp"] else "")

    def maxwell_binary(self, column, text):
        if self.snapshot or not column.definition.startswith("BINARY("):
            return text
        return base64.b64encode(base64.b64decode(text).rstrip(b"\0")).decode()

    def maxwell_enum(self, column, text):
        return text if text else None

    def maxwell_set(self, column, text):
        return text.split(",") if text else []

    def maxwell_geometry(self, column, text):
        return ("wkt", jts_wkt(column.wkt_of[text]))


def same_value(expected, actual):
    if isinstance(expected, tuple):
        kind, value = expected
        if kind == "float32":
            return isinstance(actual, (int, float, D)) and struct.unpack("<f", struct.pack("<f", float(actual)))[0] == value \
                and float(actual) == float(shortest_float32(value))
        if kind == "float64":
            return isinstance(actual, (int, float, D)) and float(actual) == value
        if kind == "decimal":
            return isinstance(actual, (int, D)) and D(actual) == value and \
                (isinstance(actual, int) and value.as_tuple().exponent == 0 or actual.as_tuple().exponent == value.as_tuple().exponent)
        if kind == "java":  # a JSON number in Java's text
            return isinstance(actual, (int, D)) and not isinstance(actual, bool) and D(actual) == D(value)
        if kind == "wkt":
            return isinstance(actual, str) and same_wkt(value, actual)
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and \
            all(same_value(expected[k], actual[k]) for k in expected)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int) and isinstance(actual, (int, D)):
        return D(actual) == expected and (isinstance(actual, int) or actual == actual.to_integral())
    return expected == actual


NUMBER = re.compile(r"-?[0-9.]+(?:[eE][-+]?[0-9]+)?")


def same_wkt(expected, actual):
    if NUMBER.sub("#", expected) != NUMBER.sub("#", actual):
        return False
    return all(float(a) == float(b) for a, b in zip(NUMBER.findall(expected), NUMBER.findall(actual)))


# ---------------------------------------------------------------------------------------------
# Reading what the tools wrote.

def load(line):
    return json.loads(line, parse_float=D)


def changes_of(fmt, lines, table):
    """[(op, id, before, after)] of one table, each image a {column: value} dict, from a format's
    lines: c/u/d (ndjson), Debezium envelopes, Canal's rows with their "old", Maxwell's data/old."""
    out = []
    for line in lines:
        message = load(line)
        if fmt == "ndjson":
            if message.get("op") in ("c", "u", "d", "r") and message.get("table") == table:
                out.append((message["op"], message.get("before"), message.get("after")))
        elif fmt == "debezium":
            payload = message.get("payload", message)
            if isinstance(payload, dict) and payload.get("op") in ("c", "u", "d", "r") and payload["source"]["table"] == table:
                out.append((payload["op"], payload.get("before"), payload.get("after")))
        elif fmt == "canal":
            if message.get("isDdl") or message.get("table") != table:
                continue
            op = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}.get(message["type"])
            if op is None:
                continue
            for index, row in enumerate(message["data"]):
                if op == "u":
                    before = dict(row)
                    before.update(message["old"][index])
                    out.append((op, before, row))
                else:
                    out.append((op, row if op == "d" else None, row if op == "c" else None))
        elif fmt == "maxwell":
            if message.get("table") != table:
                continue
            op = {"insert": "c", "update": "u", "delete": "d", "bootstrap-insert": "r"}.get(message.get("type"))
            if op is None:
                continue
            row = message["data"]
            if op == "u":
                before = dict(row)
                before.update(message["old"])
                out.append((op, before, row))
            else:
                out.append((op, row if op == "d" else None, row if op in ("c", "r") else None))
    return [(op, int(str((after or before)["id"])), before, after) for op, before, after in out]


class Checker:
    def __init__(self, cols):
        self.cols = cols
        self.failures = []
        self.checked = 0

    def image(self, where, expect, image, server_row):
        if image is None:
            self.failures.append(f"{where}: no image")
            return
        for column in self.cols:
            if column.name not in image:
                self.failures.append(f"{where}: column {column.name} is missing")
                continue
            expected = expect.value(column, server_row[column.name])
            self.checked += 1
            if not same_value(expected, image[column.name]):
                self.failures.append(f"{where} column {column.name} ({column.definition}): the server has "
                                     f"{server_row[column.name]!r}, so {expected!r} is expected; the line has "
                                     f"{image[column.name]!r}")


# ---------------------------------------------------------------------------------------------

def tool(args, name, *arguments, stdin=None):
    env = dict(os.environ, MYSQL_PWD=args.password)
    done = subprocess.run([os.path.join(args.tools, name), *arguments], env=env, capture_output=True, input=stdin,
                          timeout=600)
    if done.returncode != 0:
        sys.exit(f"FAIL {name} {' '.join(arguments)}: exit {done.returncode}: "
                 f"{done.stderr.decode(errors='replace').strip()[:2000]}")
    return done.stdout.decode("utf-8").split("\n")[:-1]


def insert_sql(table, cols, rng, ids, db=DB):
    settable = [c for c in cols if c.generate]
    names = ", ".join(f"`{c.name}`" for c in settable)
    rows = ",\n".join("(" + ", ".join([str(i)] + [c.generate(rng) for c in settable]) + ")" for i in ids)
    return f"INSERT INTO {db}.{table} (id, {names}) VALUES\n{rows};\n"


def update_sql(table, cols, rng, key, db=DB):
    sets = ", ".join(f"`{c.name}` = {c.generate(rng) if rng.random() < 0.9 else 'NULL'}"
                     for c in cols if c.generate and c.nullable) + ", " + \
        ", ".join(f"`{c.name}` = {c.generate(rng)}" for c in cols if c.generate and not c.nullable and c.name != "id")
    return f"UPDATE {db}.{table} SET {sets} WHERE id = {key};\n"


def schema_sql(cols, db=DB, prefix=None):
    """The proof's tables: t with every column, a system-versioned table, a sequence, a table
    with a long UNIQUE key. In a new database db; or, with prefix, named prefix + t and so on
    in db as it is (apply_types.py make-source: beside fault_apply.sh's tables)."""
    p = prefix or ""
    return (("" if prefix else f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db};\n") +
            f"CREATE TABLE {db}.{p}t ({', '.join(f'`{c.name}` {c.definition}' for c in cols)}) ROW_FORMAT=DYNAMIC;\n"
            f"CREATE TABLE {db}.{p}sv (id INT NOT NULL PRIMARY KEY, v VARCHAR(20), d DECIMAL(8,3)) WITH SYSTEM VERSIONING;\n"
            f"CREATE SEQUENCE {db}.{p}sq START WITH 100 INCREMENT BY 7 MAXVALUE 1000000 NOCACHE CYCLE;\n"
            # a long UNIQUE key: the server logs a hidden DB_ROW_HASH_1 column no SELECT shows
            f"CREATE TABLE {db}.{p}hu (id INT NOT NULL PRIMARY KEY, b TEXT, UNIQUE KEY (b));\n")


def main():
    parser = argparse.ArgumentParser()
    for name in ("socket", "port", "password", "tools", "datadir", "work"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rows", type=int, default=120)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    print(f"seed {seed} (CDC_TYPE_SEED={seed} replays this run)", flush=True)
    rng = random.Random(seed)
    server = Server(args)

    charsets, pools = character_pools(server)
    cols = columns(charsets, pools)
    value_cols = [c for c in cols if c.name != "id"]
    session = "SET sql_mode = ''; SET time_zone = '+00:00';\n"
    server.run(schema_sql(cols))
    start = server.run("SHOW MASTER STATUS;").split("\t")[:2]
    start_gtid = server.run("SELECT @@gtid_binlog_pos;").strip()

    ids = list(range(1, args.rows + 1))
    script = "".join(insert_sql("t", cols, rng, ids[i:i + 10]) for i in range(0, len(ids), 10))
    server.run(script, session)
    inserted = server.rows("t", value_cols)
    updated_ids = [i for i in ids if rng.random() < 0.7]
    server.run("".join(update_sql("t", cols, rng, key) for key in updated_ids), session)
    after_updates = server.rows("t", value_cols)
    deleted_ids = [i for i in ids if rng.random() < 0.2]
    server.run(f"DELETE FROM {DB}.t WHERE id IN ({', '.join(map(str, deleted_ids or [0]))});")
    geometry = [c for c in cols if c.kind == "geometry"]
    # the system-versioned table and the sequence
    server.run(f"INSERT INTO {DB}.sv (id, v, d) VALUES (1, 'one', 1.5), (2, 'two', -2.25), (3, NULL, NULL);\n"
               f"UPDATE {DB}.sv SET v = 'uno', d = d * 2 WHERE id = 1;\nUPDATE {DB}.sv SET v = 'tres' WHERE id = 3;\n"
               f"DELETE FROM {DB}.sv WHERE id = 2;\n"
               f"INSERT INTO {DB}.hu VALUES (1, 'one'), (2, REPEAT('long ', 200)), (3, NULL);\n"
               f"UPDATE {DB}.hu SET b = 'uno' WHERE id = 1;\nDELETE FROM {DB}.hu WHERE id = 3;\n" +
               "".join(f"SELECT NEXTVAL({DB}.sq);\n" for _ in range(5)), session)
    end = server.run("SHOW MASTER STATUS;").split("\t")[:2]
    final = server.rows("t", value_cols)

    # Maxwell's WKT: the server's ST_AsText of every geometry value the history held
    values = sorted({row[c.name] for state in (inserted, after_updates) for row in state.values() for c in geometry
                     if row[c.name] is not None})
    texts = server.run("".join(f"SELECT HEX(ST_AsText(FROM_BASE64('{value}')));\n" for value in values)).split()
    wkt_of = {value: bytes.fromhex(text).decode() for value, text in zip(values, texts)}
    for column in geometry:
        column.wkt_of = wkt_of

    checker = Checker(value_cols)
    binlogs = [os.path.join(args.datadir, line.split("\t")[0]) for line in server.run("SHOW BINARY LOGS;").splitlines()]
    connection = ["-h", "127.0.0.1", "-P", args.port, "-u", "cdc"]
    file_stream = ["--file", *binlogs, "--catalog", *connection, "--tables", f"{DB}.*",
                   "--start-position", start[1]] if len(binlogs) == 1 else None
    if file_stream is None:
        sys.exit("FAIL the test expects its history in one binlog file")

    def check_stream(label, fmt, flink, lines):
        changes = changes_of(fmt, lines, "t")
        deletes_before = {key: after_updates[key] for key in deleted_ids}  # rows not updated kept their values
        expect = Expect(fmt, flink)
        expected_ops = [("c", i) for i in ids] + [("u", i) for i in updated_ids] + [("d", i) for i in deleted_ids]
        got = [(op, key) for op, key, _, _ in changes]
        if sorted(got) != sorted(expected_ops):
            checker.failures.append(f"{label}: {len(got)} changes, the history made {len(expected_ops)}: "
                                    f"{sorted(set(got) ^ set(expected_ops))[:5]}")
            return
        for op, key, before, after in changes:
            where = f"{label} {op} id={key}"
            if op == "c":
                checker.image(where + " after", expect, after, inserted[key])
            elif op == "u":
                checker.image(where + " before", expect, before, inserted[key])
                checker.image(where + " after", expect, after, after_updates[key])
            else:
                checker.image(where + " before", expect, before, deletes_before[key])

    def check_snapshot(label, fmt, flink, lines):
        changes = changes_of(fmt, lines, "t")
        # Canal has no snapshot type, nor has Flink's maxwell-json: their snapshot rows are inserts
        inserts_are_rows = fmt == "canal" or (fmt == "maxwell" and flink)
        got = {key: after for op, key, _, after in changes if op == "r" or (op == "c" and inserts_are_rows)}
        if sorted(got) != sorted(final):
            checker.failures.append(f"{label}: rows {sorted(set(got) ^ set(final))[:5]} differ in presence")
            return
        expect = Expect(fmt, flink, snapshot=True)
        for key, after in got.items():
            checker.image(f"{label} r id={key}", expect, after, final[key])

    stop = ["--stop-position", end[1]]
    check_stream("cdc-stream --file", "ndjson", False, tool(args, "cdc-stream", *file_stream, *stop))
    check_stream("cdc-stream live", "ndjson", False,
                 tool(args, "cdc-stream", *connection, "--tables", f"{DB}.*", "--from", start_gtid, "--until", "now"))
    for fmt in ("debezium", "canal", "maxwell"):
        for flink in (False, True):
            label = f"cdc-stream --format {fmt}{' --flink' if flink else ''}"
            check_stream(label, fmt, flink,
                         tool(args, "cdc-stream", *file_stream, *stop, "--format", fmt, *(["--flink"] if flink else [])))

    plan = tool(args, "cdc-plan", *connection, "--tables", f"{DB}.t", "--chunk-size", "37")
    snapshot = []
    for chunk in plan:
        snapshot += tool(args, "cdc-snapshot", *connection, stdin=(chunk + "\n").encode())
    check_snapshot("cdc-snapshot", "ndjson", False, snapshot)
    for fmt in ("ndjson", "debezium", "canal", "maxwell"):
        for flink in ((False, True) if fmt != "ndjson" else (False,)):
            directory = os.path.join(args.work, f"sync-{fmt}-{flink}")
            lines = tool(args, "cdc-sync", *connection, "--tables", f"{DB}.t", "--dir", directory, "--mode", "initial_only",
                         "--format", fmt, *(["--flink"] if flink else []))
            check_snapshot(f"cdc-sync --mode initial_only --format {fmt}{' --flink' if flink else ''}", fmt, flink, lines)

    # The system-versioned table (all its history, FOR SYSTEM_TIME ALL, with row_start and
    # row_end) and the sequence: the stream replayed, and the snapshot, equal the server's rows.
    def server_tuples(query):
        out = server.run("SET time_zone = '+00:00';\n" + query)
        return sorted((tuple(None if f == "NULL" else f for f in line.split("\t")) for line in out.splitlines()), key=repr)

    def line_tuples(images, names):
        return sorted((tuple(None if image[n] is None else str(image[n]).rstrip("Z") if not isinstance(image[n], bool)
                             else str(int(image[n])) for n in names) for image in images), key=repr)

    stream_lines = [load(line) for line in tool(args, "cdc-stream", *file_stream, *stop)]
    for table, names, query in [
            ("sv", ["id", "v", "d", "row_start", "row_end"],
             f"SELECT id, v, d, row_start, row_end FROM {DB}.sv FOR SYSTEM_TIME ALL;"),
            ("hu", ["id", "b"], f"SELECT id, b FROM {DB}.hu;"),
            ("sq", ["next_not_cached_value", "minimum_value", "maximum_value", "start_value", "increment", "cache_size",
                    "cycle_option", "cycle_count"], f"SELECT * FROM {DB}.sq;")]:
        want = server_tuples(query + "\n")
        # A sequence is one row, which the server logs as a whole new row at each change
        # (cdc-ndjson(5)): the last one is the table. The versioned table's key is (id, row_end).
        def key_of(image):
            return (image["id"], image["row_end"]) if table == "sv" else image["id"] if table == "hu" else "the row"

        replay = {}
        for message in stream_lines:
            if message.get("table") != table or message.get("op") not in ("c", "u", "d"):
                continue
            if message.get("before"):
                replay.pop(key_of(message["before"]), None)
            if message.get("after"):
                replay[key_of(message["after"])] = message["after"]
        internal = [m for m in stream_lines if m.get("table") == table and "DB_ROW_HASH_1" in json.dumps(m)]
        if internal:
            checker.failures.append(f"{table}: a line shows the server's internal DB_ROW_HASH_1: {internal[0]}")
        if line_tuples(replay.values(), names) != want:
            checker.failures.append(f"{table}: the stream replays into {line_tuples(replay.values(), names)}, the server "
                                    f"has {want}")
        lines = []
        for chunk in tool(args, "cdc-plan", *connection, "--tables", f"{DB}.{table}", "--chunk-size", "2"):
            lines += tool(args, "cdc-snapshot", *connection, stdin=(chunk + "\n").encode())
        rows = [load(line)["after"] for line in lines if '"op":"r"' in line]
        if line_tuples(rows, names) != want:
            checker.failures.append(f"{table}: cdc-snapshot reads {line_tuples(rows, names)}, the server has {want}")

    print(f"{checker.checked} values checked: {len(value_cols)} columns, {len(ids)} rows inserted, "
          f"{len(updated_ids)} updated, {len(deleted_ids)} deleted, {len(charsets)} character sets")
    if checker.failures:
        print(f"FAIL {len(checker.failures)} values differ; the first ones:")
        kinds = {}
        for failure in checker.failures:
            kind = re.sub(r" id=[0-9]+", "", failure.split(": the server")[0])
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind, count in sorted(kinds.items()):
            print(f"  {count:5d} {kind}")
        for failure in checker.failures[:40]:
            print("  " + failure)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
