#!/usr/bin/env python3
"""Flink SQL's debezium-json, canal-json and maxwell-json decoders, as FORMATS.md §3 states them,
for the replay proof of issue 13 (tests/integration/formats_flink_replay.sh).

A Flink user declares a table over a topic (its columns, with Flink types, and a primary key) and
reads the topic with 'format' = 'debezium-json' | 'canal-json' | 'maxwell-json'. This script does
what those decoders do with each message: the op mapping to +I/-U/+U/-D rows, the before image
rebuilt from Canal's and Maxwell's `old`, tombstones skipped, and every value parsed by the rules of
Flink's JsonToRowDataConverters for the declared type (§3.1: BOOLEAN reads anything but true/"true"
as false, DECIMAL with more digits than its precision becomes NULL, TIME loses its fraction, ...).
It then replays the rows into an in-memory table keyed by the primary key, strictly: +I of a key
present, or -U/-D of a row that is not there exactly as the message's before image says, fails.
The same value parsing is applied to the source table's rows (read with the mariadb client), so
`replay` and `source` print comparable rows.

Commands (python3 from Debian; no other packages):
  flink_decode.py declare --format F --socket S --table DB.T
      the Flink column list a user would declare for DB.T's MySQL types with cdc --flink output
  flink_decode.py replay --format F --columns "id INT, ..." --key id [--table DB.T]
                         [--prefix-fields N] [--topic NAME] [--timestamp-standard SQL|ISO-8601] FILE...
      decodes FILE... (the formatted output: one message a line; with --key/--topic the value
      is after N TAB-separated fields; --topic keeps the lines of that topic only) and prints
      the replayed table, one row a line, sorted
  flink_decode.py source --socket S --table DB.T --columns "..."
      the source table's rows through the same parsing, printed the same way
  flink_decode.py self-test
      the decoder on hand-made messages, FORMATS §2.13, §4.6 and §5.5's examples included
"""

import base64
import datetime
import decimal
import json
import re
import subprocess
import sys

MIN_LONG = -(2**63)
MAX_LONG = 2**63 - 1


class DecodeError(Exception):
    """What makes a Flink job fail (without ignore-parse-errors)."""


# ------------------------------------------------------------------------------------------------
# Declared types

class FlinkType:
    def __init__(self, text):
        self.text = text.strip()
        upper = self.text.upper()
        match = re.fullmatch(r"([A-Z_]+(?: WITH LOCAL TIME ZONE)?)\s*(?:\((\d+)(?:\s*,\s*(\d+))?\))?(.*)", upper)
        if not match:
            raise ValueError(f"unknown Flink type {text!r}")
        self.name = match.group(1)
        self.precision = int(match.group(2)) if match.group(2) else None
        self.scale = int(match.group(3)) if match.group(3) else 0
        rest = match.group(4).strip()
        if self.name == "ARRAY":
            inner = re.fullmatch(r"<\s*STRING\s*>", rest)
            if not inner:
                raise ValueError(f"only ARRAY<STRING> is supported, not {text!r}")
        elif rest not in ("", "NOT NULL"):
            raise ValueError(f"unknown Flink type {text!r}")
        if self.name == "TIMESTAMP WITH LOCAL TIME ZONE":
            self.name = "TIMESTAMP_LTZ"
        if self.name in ("CHAR", "VARCHAR"):
            self.name = "STRING"
        if self.name in ("BINARY", "VARBINARY"):
            self.name = "BYTES"
        if self.name == "INTEGER":
            self.name = "INT"
        if self.name == "DECIMAL" and self.precision is None:
            self.precision = 10  # Flink's DECIMAL is DECIMAL(10, 0)

    def __repr__(self):
        return self.text


def parse_columns(text):
    """'id INT, name STRING, price DECIMAL(8,2)' -> [(name, FlinkType)]; commas inside () kept."""
    columns = []
    depth = 0
    start = 0
    parts = []
    for i, c in enumerate(text):
        if c in "(<":
            depth += 1
        elif c in ")>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        part = part.strip()
        if not part:
            continue
        name, _, type_text = part.partition(" ")
        columns.append((name.strip("`"), FlinkType(type_text)))
    return columns


# ------------------------------------------------------------------------------------------------
# Values: JsonToRowDataConverters (FORMATS §3.1). JSON is read as Flink's ObjectMapper reads it
# when the row has a DECIMAL (USE_BIG_DECIMAL_FOR_FLOATS): numbers with a fraction or exponent
# stay exact (decimal.Decimal), integers are ints.

def load_json(text):
    return json.loads(text, parse_float=decimal.Decimal)


def as_text(node):
    """Jackson's JsonNode.asText() for scalars."""
    if isinstance(node, str):
        return node
    if isinstance(node, bool):
        return "true" if node else "false"
    if node is None:
        return "null"
    if isinstance(node, (int, decimal.Decimal)):
        return str(node)
    return compact(node)


def compact(node):
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False, default=str)


def parse_java_integer(text, low, high, what):
    """Java's Byte/Short/Integer/Long.parseXxx on trimmed text: an optional sign and digits."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise DecodeError(f"{what}: cannot parse {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise DecodeError(f"{what}: {text} out of range")
    return value


def parse_time_of_day(text, what):
    """ISO_LOCAL_TIME: HH:mm[:ss[.fffffffff]], 00-23 h."""
    match = re.fullmatch(r"(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?", text)
    if not match:
        raise DecodeError(f"{what}: {text!r} is not HH:mm:ss[.f]")
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise DecodeError(f"{what}: {text!r} is not a time of day")
    nanos = int((match.group(4) or "").ljust(9, "0"))
    return hour, minute, second, nanos


def parse_local_date(text, what):
    """ISO_LOCAL_DATE: yyyy-MM-dd, a real calendar date."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", text)
    if not match:
        raise DecodeError(f"{what}: {text!r} is not yyyy-MM-dd")
    try:
        return datetime.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError as error:
        raise DecodeError(f"{what}: {text!r}: {error}") from None


def parse_timestamp(text, separator, zone_z, what):
    """yyyy-MM-dd<sep>HH:mm[:ss[.f]] (+ a literal Z for TIMESTAMP_LTZ): 'YYYY-MM-DD HH:MM:SS.nnnnnnnnn'."""
    if zone_z:
        if not text.endswith("Z"):
            raise DecodeError(f"{what}: {text!r} lacks the trailing Z")
        text = text[:-1]
    date_text, sep, time_text = text.partition(separator)
    if not sep:
        raise DecodeError(f"{what}: {text!r} has no {separator!r} between date and time")
    day = parse_local_date(date_text, what)
    hour, minute, second, nanos = parse_time_of_day(time_text, what)
    return f"{day.isoformat()} {hour:02}:{minute:02}:{second:02}.{nanos:09}" + ("Z" if zone_z else "")


def float32(value):
    import struct
    return struct.unpack("<f", struct.pack("<f", value))[0]


def convert(node, flink_type, options, what="value"):
    """One JSON node to the value of a Flink column of flink_type; None for NULL."""
    if node is None:
        return None
    name = flink_type.name
    if name == "BOOLEAN":
        if isinstance(node, bool):
            return node
        return as_text(node).strip().lower() == "true"  # Boolean.parseBoolean: all else is false
    if name == "TINYINT":
        return parse_java_integer(as_text(node), -128, 127, what)
    if name == "SMALLINT":
        return parse_java_integer(as_text(node), -32768, 32767, what)
    if name in ("INT", "BIGINT"):
        low, high = (-(2**31), 2**31 - 1) if name == "INT" else (MIN_LONG, MAX_LONG)
        if isinstance(node, int) and not isinstance(node, bool) and low <= node <= high:
            return node  # canConvertToInt/Long
        if isinstance(node, decimal.Decimal) and low <= node <= high:
            return int(node)  # Jackson's DecimalNode.asInt/asLong truncate
        return parse_java_integer(as_text(node), low, high, what)
    if name in ("FLOAT", "DOUBLE"):
        if isinstance(node, bool):
            raise DecodeError(f"{what}: {node} is no number")
        text = as_text(node).strip()
        try:
            value = float(text)  # Double.parseDouble: also "NaN", "Infinity"
        except ValueError:
            raise DecodeError(f"{what}: cannot parse {text!r} as a number") from None
        return float32(value) if name == "FLOAT" else value
    if name == "DECIMAL":
        text = as_text(node)
        try:
            value = decimal.Decimal(text)
        except decimal.InvalidOperation:
            raise DecodeError(f"{what}: cannot parse {text!r} as a decimal") from None
        if not value.is_finite():
            raise DecodeError(f"{what}: {text!r} is no decimal")
        scaled = value.quantize(decimal.Decimal(1).scaleb(-flink_type.scale), rounding=decimal.ROUND_HALF_UP,
                                context=decimal.Context(prec=1000))
        unscaled = abs(int(scaled.scaleb(flink_type.scale)))
        if len(str(unscaled)) > flink_type.precision:
            return None  # DecimalData.fromBigDecimal: more digits than the precision is NULL, silently
        return scaled
    if name == "STRING":
        return node if isinstance(node, str) else (compact(node) if isinstance(node, (dict, list)) else as_text(node))
    if name == "BYTES":
        if not isinstance(node, str):
            raise DecodeError(f"{what}: {node!r} is not base64 text")
        try:
            return base64.b64decode(node, validate=True)
        except ValueError:
            raise DecodeError(f"{what}: {node!r} is not base64") from None
    if name == "DATE":
        if not isinstance(node, str):
            raise DecodeError(f"{what}: {node!r} is not a date string")
        return parse_local_date(node, what).isoformat()
    if name == "TIME":
        if not isinstance(node, str):
            raise DecodeError(f"{what}: {node!r} is not a time string")
        hour, minute, second, _ = parse_time_of_day(node, what)
        return (hour * 3600 + minute * 60 + second) * 1000  # the fraction is dropped
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if not isinstance(node, str):
            raise DecodeError(f"{what}: {node!r} is not a timestamp string")
        separator = " " if options.get("timestamp_standard", "SQL") == "SQL" else "T"
        return parse_timestamp(node, separator, name == "TIMESTAMP_LTZ", what)
    if name == "ARRAY":
        if not isinstance(node, list):
            raise DecodeError(f"{what}: {node!r} is not an array")
        return tuple(convert(element, FlinkType("STRING"), options, what) for element in node)
    raise DecodeError(f"{what}: type {flink_type} not supported here")


def convert_row(node, columns, options, what):
    """A JSON object to a row: each declared column by exact name, a missing member is NULL."""
    if node is None:
        return None
    if not isinstance(node, dict):
        raise DecodeError(f"{what}: {compact(node)[:80]} is not an object")
    return tuple(convert(node.get(name), flink_type, options, f"{what}.{name}") for name, flink_type in columns)


# ------------------------------------------------------------------------------------------------
# The three decoders: one message (text of a Kafka value; "" for a null value) -> [(kind, row)]

def decode_debezium(message, columns, options):
    if not message:
        return []  # a tombstone (null or empty value) is skipped
    root = load_json(message)
    payload = root.get("payload") if options.get("schema_include") else root
    if not isinstance(payload, dict):
        raise DecodeError("no payload object")
    op = payload.get("op")
    before = convert_row(payload.get("before"), columns, options, "before")
    after = convert_row(payload.get("after"), columns, options, "after")
    if op in ("c", "r"):
        if after is None:
            raise DecodeError(f"op {op} with a null after")
        return [("+I", after)]
    if op == "u":
        if before is None:
            raise DecodeError("The \"before\" field of UPDATE message is null, if you are using Debezium Postgres "
                              "Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.")
        return [("-U", before), ("+U", after)]
    if op == "d":
        if before is None:
            raise DecodeError("The \"before\" field of DELETE message is null (REPLICA IDENTITY)")
        return [("-D", before)]
    raise DecodeError(f"Unknown \"op\" value \"{op}\". The Debezium JSON message is '{message[:200]}'")


def contains_name(node, name):
    """Jackson's JsonNode.findValue(name) != null: a member of that name anywhere inside node."""
    if isinstance(node, dict):
        if name in node:
            return True
        return any(contains_name(value, name) for value in node.values())
    if isinstance(node, list):
        return any(contains_name(element, name) for element in node)
    return False


def rebuild_before(old_row, after, old_root, columns):
    """A column null in old_row and named nowhere in the whole `old` is unchanged: after's value."""
    return tuple(after[i] if old_row[i] is None and not contains_name(old_root, name) else old_row[i]
                 for i, (name, _) in enumerate(columns))


def selected_message(message, options):
    """The JSON of a Canal or Maxwell message of the wanted table; None for an empty message
    (skipped) or another table's (canal-json.database.include / table.include are regexes over
    the whole `database` and `table` values; the test passes plain names)."""
    if not message:
        return None
    root = load_json(message)
    wanted = options.get("table")
    if wanted and [root.get("database"), root.get("table")] != wanted.split(".", 1):
        return None
    return root


def decode_canal(message, columns, options):
    root = selected_message(message, options)
    if root is None:
        return []
    kind = root.get("type")
    data = root.get("data")
    if kind == "INSERT":
        return [("+I", convert_row(row, columns, options, f"data[{i}]")) for i, row in enumerate(data)]
    if kind == "DELETE":
        return [("-D", convert_row(row, columns, options, f"data[{i}]")) for i, row in enumerate(data)]
    if kind == "UPDATE":
        old = root.get("old")
        if not isinstance(old, list) or not isinstance(data, list) or len(old) < len(data):
            raise DecodeError("UPDATE needs old with as many elements as data")
        rows = []
        for i, element in enumerate(data):
            after = convert_row(element, columns, options, f"data[{i}]")
            old_row = convert_row(old[i], columns, options, f"old[{i}]")
            if old_row is None:
                raise DecodeError(f"old[{i}] is null")
            rows += [("-U", rebuild_before(old_row, after, old, columns)), ("+U", after)]
        return rows
    if kind == "CREATE":
        return []  # the only DDL type the decoder skips
    raise DecodeError(f"Unknown \"type\" value \"{kind}\". The Canal JSON message is '{message[:200]}'")


def decode_maxwell(message, columns, options):
    root = selected_message(message, options)
    if root is None:
        return []
    kind = root.get("type")
    data = convert_row(root.get("data"), columns, options, "data")
    if kind == "insert":
        return [("+I", data)]
    if kind == "delete":
        return [("-D", data)]
    if kind == "update":
        old = root.get("old")
        if not isinstance(old, dict):
            raise DecodeError("update without old (Maxwell leaves it out when no column changed)")
        return [("-U", rebuild_before(convert_row(old, columns, options, "old"), data, old, columns)), ("+U", data)]
    raise DecodeError(f"Unknown \"type\" value \"{kind}\". The Maxwell JSON message is '{message[:200]}'")


DECODERS = {"debezium": decode_debezium, "canal": decode_canal, "maxwell": decode_maxwell}


# ------------------------------------------------------------------------------------------------
# Replay into a table keyed by the primary key

class Table:
    def __init__(self, columns, key):
        self.columns = columns
        names = [name for name, _ in columns]
        missing = [k for k in key if k not in names]
        if missing:
            raise ValueError(f"key columns {missing} are not declared")
        self.key_index = [names.index(k) for k in key]
        self.rows = {}

    def key_of(self, row):
        return tuple(row[i] for i in self.key_index)

    def apply(self, kind, row, where):
        key = self.key_of(row)
        if kind in ("+I", "+U"):
            if key in self.rows:
                raise DecodeError(f"{where}: {kind} of key {render_row(key)} already present")
            self.rows[key] = row
        else:
            present = self.rows.get(key)
            if present is None:
                raise DecodeError(f"{where}: {kind} of key {render_row(key)} that is not there")
            if present != row:
                raise DecodeError(f"{where}: {kind} row {render_row(row)} differs from the row held "
                                  f"{render_row(present)} (a wrong before image)")
            del self.rows[key]


def render(value):
    if isinstance(value, bytes):
        return "b64:" + base64.b64encode(value).decode()
    if isinstance(value, decimal.Decimal):
        return "dec:" + str(value)
    if isinstance(value, float):
        return "f:" + repr(value)
    if isinstance(value, tuple):
        return [render(v) for v in value]
    return value


def render_row(row):
    return compact([render(v) for v in row])


def message_of(line, options):
    """The Kafka value of one output line, or None when the line is for another topic."""
    fields = line.split("\t", options.get("prefix_fields", 0))
    if len(fields) <= options.get("prefix_fields", 0):
        raise DecodeError(f"expected {options['prefix_fields']} TAB-separated fields before the value: {line[:120]!r}")
    topic = options.get("topic")
    if topic is not None and fields[0] != topic:
        return None
    return fields[-1]


def replay(format_name, columns, key, paths, options):
    decoder = DECODERS[format_name]
    table = Table(columns, key)
    counts = {"+I": 0, "-U": 0, "+U": 0, "-D": 0}
    for path in paths:
        with open(path, encoding="utf-8", newline="\n") as lines:
            for number, line in enumerate(lines, 1):
                line = line.rstrip("\n")
                where = f"{path}:{number}"
                try:
                    message = message_of(line, options)
                    if message is None:
                        continue
                    for kind, row in decoder(message, columns, options):
                        counts[kind] += 1
                        table.apply(kind, row, where)
                except DecodeError as error:
                    raise DecodeError(f"{where}: {error}") from None
    return table, counts


# ------------------------------------------------------------------------------------------------
# The source side: MySQL types -> declared Flink types, and the source rows as a correct emitter
# would write them, through the same parsing.

def mariadb(socket, sql):
    command = ["mariadb", "--no-defaults", "--default-character-set=utf8mb4", "-S", socket, "-uroot", "-N",
               "--batch", "--raw", "-e", sql]
    return subprocess.run(command, check=True, capture_output=True).stdout.decode("utf-8")


def source_columns(socket, table):
    database, name = table.split(".", 1)
    out = mariadb(socket, "SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE FROM information_schema.COLUMNS "
                          f"WHERE TABLE_SCHEMA = '{database}' AND TABLE_NAME = '{name}' ORDER BY ORDINAL_POSITION")
    return [tuple(line.split("\t")) for line in out.splitlines() if line]


def flink_type_for(column_type, data_type, format_name):
    """The type a Flink user declares for a MySQL column read from cdc's --flink output."""
    unsigned = "unsigned" in column_type
    fsp = re.search(r"\((\d+)\)", column_type)
    fsp = int(fsp.group(1)) if fsp else 0
    if data_type == "tinyint":
        return "SMALLINT" if unsigned else "TINYINT"  # TINYINT(1) too: BOOLEAN would read 1 as false
    if data_type == "smallint":
        return "INT" if unsigned else "SMALLINT"
    if data_type in ("mediumint",):
        return "INT"
    if data_type == "int":
        return "BIGINT" if unsigned else "INT"
    if data_type == "bigint":
        return "DECIMAL(20, 0)" if unsigned else "BIGINT"
    if data_type in ("decimal", "numeric"):
        precision, scale = re.search(r"\((\d+),(\d+)\)", column_type).groups()
        return f"DECIMAL({precision}, {scale})"
    if data_type == "float":
        return "FLOAT"
    if data_type == "double":
        return "DOUBLE"
    if data_type in ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "json"):
        return "STRING"
    if data_type == "set":
        return "ARRAY<STRING>" if format_name == "maxwell" else "STRING"
    if data_type in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"):
        return "BYTES"
    if data_type == "date":
        return "DATE"
    if data_type == "time":
        return f"TIME({fsp})"
    if data_type == "datetime":
        return f"TIMESTAMP({fsp})"
    if data_type == "timestamp":
        # Debezium's TIMESTAMP is an instant (…Z, TIMESTAMP_LTZ); Canal and Maxwell write UTC
        # wall-clock text without a zone.
        return f"TIMESTAMP_LTZ({fsp})" if format_name == "debezium" else f"TIMESTAMP({fsp})"
    if data_type == "year":
        return "INT"
    if data_type == "bit":
        return "BOOLEAN" if column_type == "bit(1)" else "BIGINT"
    raise ValueError(f"no Flink type chosen for {column_type}")


def source_expression(column, data_type):
    """SQL giving '' for NULL, else '=' and the hex of the value's text (or bytes)."""
    quoted = f"`{column}`"
    if data_type in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"):
        value = quoted
    elif data_type in ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"):
        value = f"CONVERT({quoted} USING utf8mb4)"
    elif data_type == "bit":
        value = f"CAST({quoted} + 0 AS CHAR)"
    elif data_type in ("float", "double"):
        # The shortest text that reads back as the same double: MariaDB's own text can round.
        value = f"CAST(CAST({quoted} AS DOUBLE) AS CHAR)"
    else:
        value = f"CAST({quoted} AS CHAR)"
    return f"IF({quoted} IS NULL, '', CONCAT('=', HEX({value})))"


def source_node(raw, flink_type):
    """The JSON node a correct emitter writes for a source value (raw: the bytes), per declared type."""
    if flink_type.name == "BYTES":
        return base64.b64encode(raw).decode()
    text = raw.decode("utf-8")
    if flink_type.name == "BOOLEAN":
        return text not in ("0", "")
    if flink_type.name == "ARRAY":
        return [] if text == "" else text.split(",")
    if flink_type.name == "TIMESTAMP_LTZ":
        return text + "Z"
    if flink_type.name in ("FLOAT", "DOUBLE"):
        return decimal.Decimal(text)
    return text


def read_source(socket, table, columns, options):
    types = {name: data_type for name, _, data_type in source_columns(socket, table)}
    database, name = table.split(".", 1)
    select = ", ".join(source_expression(column, types[column]) for column, _ in columns)
    out = mariadb(socket, f"SET time_zone = '+00:00'; SELECT {select} FROM `{database}`.`{name}`")
    rows = []
    for line in out.splitlines():
        fields = line.split("\t")
        row = []
        for (column, flink_type), field in zip(columns, fields):
            node = None if field == "" else source_node(bytes.fromhex(field[1:]), flink_type)
            row.append(convert(node, flink_type, options, column))
        rows.append(tuple(row))
    return rows


def print_rows(rows):
    for line in sorted(render_row(row) for row in rows):
        print(line)


# ------------------------------------------------------------------------------------------------
# Self-test

def self_test():
    failures = []

    def check(name, got, want):
        if got != want:
            failures.append(f"{name}: got {got!r}, want {want!r}")

    def raises(name, function):
        try:
            result = function()
        except DecodeError:
            return
        failures.append(f"{name}: no error, got {result!r}")

    opts = {}
    t = FlinkType
    # §3.1 value rules, the traps first.
    check("BOOLEAN true", convert(True, t("BOOLEAN"), opts), True)
    check("BOOLEAN 'TRUE'", convert("TRUE", t("BOOLEAN"), opts), True)
    for trap in (1, "1", "yes", "t"):
        check(f"BOOLEAN {trap!r} reads false", convert(trap, t("BOOLEAN"), opts), False)
    check("TINYINT '7'", convert(" 7 ", t("TINYINT"), opts), 7)
    raises("TINYINT 1.0", lambda: convert(decimal.Decimal("1.0"), t("TINYINT"), opts))
    raises("TINYINT 300", lambda: convert(300, t("TINYINT"), opts))
    check("INT '42'", convert("42", t("INT"), opts), 42)
    check("BIGINT max", convert(MAX_LONG, t("BIGINT"), opts), MAX_LONG)
    raises("BIGINT 2^63", lambda: convert(2**63, t("BIGINT"), opts))
    raises("INT 'x'", lambda: convert("x", t("INT"), opts))
    check("DOUBLE string", convert("1.0E10", t("DOUBLE"), opts), 1e10)
    check("DOUBLE number", convert(decimal.Decimal("0.1"), t("DOUBLE"), opts), 0.1)
    check("FLOAT rounds to float32", convert(decimal.Decimal("3.14"), t("FLOAT"), opts), float32(3.14))
    check("DECIMAL string", convert("19.90", t("DECIMAL(8,2)"), opts), decimal.Decimal("19.90"))
    check("DECIMAL number", convert(decimal.Decimal("19.9"), t("DECIMAL(8,2)"), opts), decimal.Decimal("19.90"))
    check("DECIMAL half-up", convert("12.345", t("DECIMAL(4,2)"), opts), decimal.Decimal("12.35"))
    check("DECIMAL too many digits is NULL", convert("123.45", t("DECIMAL(4,2)"), opts), None)
    check("DECIMAL(20,0) unsigned max", convert(18446744073709551615, t("DECIMAL(20, 0)"), opts),
          decimal.Decimal("18446744073709551615"))
    raises("DECIMAL base64", lambda: convert("B8Y=", t("DECIMAL(8,2)"), opts))
    check("STRING of a number", convert(7, t("STRING"), opts), "7")
    check("STRING of an object", convert({"a": 1}, t("STRING"), opts), '{"a":1}')
    check("BYTES base64", convert("yv4=", t("BYTES"), opts), b"\xca\xfe")
    raises("BYTES hex", lambda: convert("cafe!", t("BYTES"), opts))
    check("DATE", convert("2024-09-04", t("DATE"), opts), "2024-09-04")
    raises("DATE epoch days", lambda: convert(19970, t("DATE"), opts))
    raises("DATE zero", lambda: convert("0000-00-00", t("DATE"), opts))
    check("TIME drops the fraction", convert("10:52:12.189", t("TIME(3)"), opts), 39132000)
    raises("TIME 25 h", lambda: convert("25:00:00", t("TIME"), opts))
    raises("TIME negative", lambda: convert("-01:00:00", t("TIME"), opts))
    raises("TIME micros number", lambda: convert(39132189000, t("TIME"), opts))
    check("TIMESTAMP SQL", convert("2024-09-05 08:00:01.250", t("TIMESTAMP(3)"), opts),
          "2024-09-05 08:00:01.250000000")
    raises("TIMESTAMP with Z", lambda: convert("2024-09-05 08:00:01.250Z", t("TIMESTAMP(3)"), opts))
    raises("TIMESTAMP epoch ms", lambda: convert(1725523201250, t("TIMESTAMP(3)"), opts))
    raises("TIMESTAMP ISO under SQL", lambda: convert("2024-09-05T08:00:01", t("TIMESTAMP"), opts))
    check("TIMESTAMP ISO-8601", convert("2024-09-05T08:00", t("TIMESTAMP"), {"timestamp_standard": "ISO-8601"}),
          "2024-09-05 08:00:00.000000000")
    check("TIMESTAMP_LTZ SQL", convert("2024-09-05 08:00:01.25Z", t("TIMESTAMP_LTZ(3)"), opts),
          "2024-09-05 08:00:01.250000000Z")
    raises("TIMESTAMP_LTZ +00:00", lambda: convert("2024-09-05 08:00:01+00:00", t("TIMESTAMP_LTZ(3)"), opts))
    raises("TIMESTAMP_LTZ without Z", lambda: convert("2024-09-05 08:00:01", t("TIMESTAMP_LTZ(3)"), opts))
    check("ARRAY<STRING>", convert(["a", "c"], t("ARRAY<STRING>"), opts), ("a", "c"))

    items = parse_columns("id INT, name STRING, price DECIMAL(8,2), updated TIMESTAMP(3)")
    lamp = (7, "lamp", decimal.Decimal("19.90"), "2024-09-05 08:00:01.250000000")
    lamp2 = (7, "lamp", decimal.Decimal("17.50"), "2024-09-05 08:00:02.500000000")
    expected = [("+I", lamp), ("-U", lamp), ("+U", lamp2), ("-D", lamp2)]

    # FORMATS §2.13 with decimal.handling.mode=string and `updated` declared BIGINT.
    source = ('"source":{"version":"3.6.1.Final","connector":"mysql","name":"dbz1","ts_ms":1725523201123,'
              '"snapshot":"false","db":"shop","sequence":null,"table":"items","server_id":1,"gtid":null,'
              '"file":"binlog.000042","pos":1520,"row":0,"thread":12,"query":null}')
    row1 = '{"id":7,"name":"lamp","price":"19.90","updated":1725523201250}'
    row2 = '{"id":7,"name":"lamp","price":"17.50","updated":1725523202500}'
    debezium = [f'{{"before":null,"after":{row1},{source},"transaction":null,"op":"c","ts_ms":1}}',
                f'{{"before":{row1},"after":{row2},{source},"transaction":null,"op":"u","ts_ms":2}}',
                f'{{"before":{row2},"after":null,{source},"transaction":null,"op":"d","ts_ms":3}}', ""]
    items_bigint = parse_columns("id INT, name STRING, price DECIMAL(8,2), updated BIGINT")
    got = [r for m in debezium for r in decode_debezium(m, items_bigint, opts)]
    check("§2.13 debezium", [(k, (r[0], r[1], str(r[2]), r[3])) for k, r in got],
          [("+I", (7, "lamp", "19.90", 1725523201250)), ("-U", (7, "lamp", "19.90", 1725523201250)),
           ("+U", (7, "lamp", "17.50", 1725523202500)), ("-D", (7, "lamp", "17.50", 1725523202500))])
    check("debezium schema-include", decode_debezium('{"schema":{},"payload":' + debezium[0][:-1] + "}}",
                                                     items_bigint, {"schema_include": True})[0][0], "+I")
    raises("debezium u without before",
           lambda: decode_debezium(f'{{"before":null,"after":{row2},"op":"u"}}', items_bigint, opts))
    raises("debezium op t", lambda: decode_debezium('{"before":null,"after":null,"op":"t"}', items_bigint, opts))
    raises("debezium schemas.enable without schema-include",
           lambda: decode_debezium('{"schema":{},"payload":' + debezium[0] + "}", items_bigint, opts))

    # FORMATS §4.6 (mysqlType and sqlType abridged as there).
    meta = '"database":"shop","es":1725523201000,"id":12,"isDdl":false,"pkNames":["id"],"sql":"","table":"items"'
    canal = [
        '{"data":[{"id":"7","name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"}],' + meta +
        ',"old":null,"ts":1,"type":"INSERT"}',
        '{"data":[{"id":"7","name":"lamp","price":"17.50","updated":"2024-09-05 08:00:02.500"}],' + meta +
        ',"old":[{"price":"19.90","updated":"2024-09-05 08:00:01.250"}],"ts":2,"type":"UPDATE"}',
        '{"data":[{"id":"7","name":"lamp","price":"17.50","updated":"2024-09-05 08:00:02.500"}],' + meta +
        ',"old":null,"ts":3,"type":"DELETE"}']
    check("§4.6 canal", [r for m in canal for r in decode_canal(m, items, opts)], expected)
    # §5.5
    maxwell = [
        '{"database":"shop","table":"items","type":"insert","ts":1725523201,"xid":9001,"commit":true,'
        '"data":{"id":7,"name":"lamp","price":19.90,"updated":"2024-09-05 08:00:01.250"}}',
        '{"database":"shop","table":"items","type":"update","ts":1725523202,"xid":9002,"commit":true,'
        '"data":{"id":7,"name":"lamp","price":17.50,"updated":"2024-09-05 08:00:02.500"},'
        '"old":{"price":19.90,"updated":"2024-09-05 08:00:01.250"}}',
        '{"database":"shop","table":"items","type":"delete","ts":1725523203,"xid":9003,"commit":true,'
        '"data":{"id":7,"name":"lamp","price":17.50,"updated":"2024-09-05 08:00:02.500"}}']
    check("§5.5 maxwell", [r for m in maxwell for r in decode_maxwell(m, items, opts)], expected)

    # Canal's old: a NULL in old[i] is a changed column when its name appears anywhere in old,
    # so row 2's before has a NULL `a` (named in old[0] only): why Canal itself lists in old[i]
    # every column changed in any row of the message (§4.5).
    abc = parse_columns("id INT, a STRING, b STRING")
    message = ('{"data":[{"id":"1","a":"x","b":"y"},{"id":"2","a":"p","b":"q"}],"old":[{"a":"w"},{"b":null}],'
               '"type":"UPDATE","database":"d","table":"t"}')
    check("canal name search across old elements", decode_canal(message, abc, opts),
          [("-U", (1, "w", None)), ("+U", (1, "x", "y")), ("-U", (2, None, None)), ("+U", (2, "p", "q"))])
    check("canal NULL->value", decode_canal('{"data":[{"id":"1","a":"x","b":"y"}],"old":[{"a":null}],'
                                            '"type":"UPDATE"}', abc, opts)[0], ("-U", (1, None, "y")))
    check("canal CREATE skipped", decode_canal('{"data":null,"old":null,"type":"CREATE","isDdl":true}', abc, opts), [])
    raises("canal ALTER", lambda: decode_canal('{"data":null,"old":null,"type":"ALTER","isDdl":true}', abc, opts))
    raises("canal UPDATE without old", lambda: decode_canal('{"data":[{"id":"1"}],"old":null,"type":"UPDATE"}',
                                                            abc, opts))
    raises("canal old shorter than data",
           lambda: decode_canal('{"data":[{"id":"1"},{"id":"2"}],"old":[{"a":"1"}],"type":"UPDATE"}', abc, opts))
    check("canal table filter", decode_canal(canal[0], items, {"table": "shop.other"}), [])
    check("maxwell old {}", decode_maxwell('{"type":"update","data":{"id":1,"a":"x"},"old":{}}', abc, opts),
          [("-U", (1, "x", None)), ("+U", (1, "x", None))])
    raises("maxwell update without old", lambda: decode_maxwell('{"type":"update","data":{"id":1}}', abc, opts))
    raises("maxwell bootstrap-insert", lambda: decode_maxwell('{"type":"bootstrap-insert","data":{"id":1}}', abc, opts))
    raises("maxwell table-alter", lambda: decode_maxwell('{"type":"table-alter","data":null}', abc, opts))

    # The strict replay.
    table = Table(items, ["id"])
    for kind, row in expected[:1]:
        table.apply(kind, row, "t")
    raises("+I twice", lambda: table.apply("+I", lamp, "t"))
    raises("-U with a wrong before image", lambda: table.apply("-U", lamp2, "t"))
    table.apply("-U", lamp, "t")
    raises("-D of a missing key", lambda: table.apply("-D", lamp, "t"))
    check("message of a keyed, topic-prefixed line",
          message_of('cdc.shop.items\t{"id":7}\t{"op":"c"}', {"prefix_fields": 2, "topic": "cdc.shop.items"}),
          '{"op":"c"}')
    check("a tombstone's value", message_of('{"id":7}\t', {"prefix_fields": 1}), "")
    check("another topic", message_of('cdc\t{"ddl":1}', {"prefix_fields": 1, "topic": "cdc.shop.items"}), None)

    for failure in failures:
        print("FAIL " + failure)
    print(f"flink_decode self-test: {len(failures)} failed")
    return 1 if failures else 0


# ------------------------------------------------------------------------------------------------

def main(argv):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    declare = commands.add_parser("declare")
    declare.add_argument("--format", required=True, choices=sorted(DECODERS))
    declare.add_argument("--socket", required=True)
    declare.add_argument("--table", required=True)
    replay_command = commands.add_parser("replay")
    replay_command.add_argument("--format", required=True, choices=sorted(DECODERS))
    replay_command.add_argument("--columns", required=True)
    replay_command.add_argument("--key", required=True, help="the primary key's columns, comma-separated")
    replay_command.add_argument("--table", help="DB.T: canal/maxwell messages of other tables are skipped")
    replay_command.add_argument("--prefix-fields", type=int, default=0)
    replay_command.add_argument("--topic")
    replay_command.add_argument("--schema-include", action="store_true")
    replay_command.add_argument("--timestamp-standard", default="SQL", choices=["SQL", "ISO-8601"])
    replay_command.add_argument("files", nargs="+")
    source = commands.add_parser("source")
    source.add_argument("--socket", required=True)
    source.add_argument("--table", required=True)
    source.add_argument("--columns", required=True)
    commands.add_parser("self-test")
    args = parser.parse_args(argv)

    if args.command == "self-test":
        return self_test()
    if args.command == "declare":
        print(", ".join(f"{name} {flink_type_for(column_type, data_type, args.format)}"
                        for name, column_type, data_type in source_columns(args.socket, args.table)))
        return 0
    columns = parse_columns(args.columns)
    if args.command == "source":
        print_rows(read_source(args.socket, args.table, columns, {}))
        return 0
    options = {"table": args.table, "prefix_fields": args.prefix_fields, "topic": args.topic,
               "schema_include": args.schema_include, "timestamp_standard": args.timestamp_standard}
    try:
        table, counts = replay(args.format, columns, args.key.split(","), args.files, options)
    except DecodeError as error:
        print(f"flink_decode: {args.format}-json: {error}", file=sys.stderr)
        return 1
    print_rows(table.rows.values())
    print(f"flink_decode: {args.format}-json: " + ", ".join(f"{counts[k]} {k}" for k in counts) +
          f", {len(table.rows)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
