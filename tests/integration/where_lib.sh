# Shared by the --where tests (stream_where.sh, sync_where.sh): a random load that moves rows of
# w.t (id INT PRIMARY KEY, name VARCHAR(20) utf8mb4_general_ci, amount DECIMAL(8,2),
# at DATETIME(3), n INT) into and out of expressions over those columns, and the replay of
# change lines onto a copy, for the server to compare with its own SELECT ... WHERE. Not a test
# itself; sourced after lib.sh and live_lib.sh.

# load SEED STATEMENTS: a random load as SQL, one transaction of 1 to 4 statements a line.
load() {
  python3 - "$1" "$2" <<'PY'
import random, sys
rng = random.Random(int(sys.argv[1]))
names = ["cafe", "Café", "CAFE", "cafe ", "cafè", "über", "Uber", "ÜBER", "zoë", "zoe", "Zoé", "tea", None]
def value():
    name = rng.choice(names)
    amount = rng.choice([None, "20.25", "20.24", "60.75", "60.76", "%d.%02d" % (rng.randint(0, 99), rng.randint(0, 99))])
    at = rng.choice([None, "2026-03-01 12:00:00", "2026-03-01 11:59:59.999",
                     "2026-%02d-%02d %02d:%02d:%02d.%03d" % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                                                             rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999))])
    n = rng.choice([None, 7, 8, rng.randint(-5, 20)])
    q = lambda v: "NULL" if v is None else "'" + v + "'"
    return "%s, %s, %s, %s" % (q(name), "NULL" if amount is None else amount, q(at), "NULL" if n is None else n)
def column():
    name, amount, at, n = value().split(", ")
    return rng.choice(["name = " + name, "amount = " + amount, "at = " + at, "n = " + n,
                       "name = %s, amount = %s, at = %s, n = %s" % (name, amount, at, n)])
for _ in range(int(sys.argv[2])):
    statements = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        k = rng.randint(1, 400)
        if kind < 0.35:
            statements.append("INSERT INTO w.t VALUES (%d, %s) ON DUPLICATE KEY UPDATE %s" % (k, value(), column()))
        elif kind < 0.75:
            statements.append("UPDATE w.t SET %s WHERE id = %d" % (column(), k))
        elif kind < 0.85:
            statements.append("UPDATE w.t SET %s WHERE id BETWEEN %d AND %d" % (column(), k, k + rng.randint(1, 40)))
        else:
            statements.append("DELETE FROM w.t WHERE id BETWEEN %d AND %d" % (k, k + rng.randint(0, 3)))
    print("BEGIN; " + "; ".join(statements) + "; COMMIT;")
PY
}
# replay NDJSON TABLE [FORMAT]: the change lines (and snapshot r lines, as inserts) as SQL on
# TABLE, each image's columns only; a "c" must insert a new row
# and a "d" must delete one (else the SQL fails); FORMAT debezium reads Debezium's envelopes.
replay() {
  python3 - "$1" "$2" "${3:-ndjson}" <<'PY'
import json, sys
path, table, form = sys.argv[1:4]
def literal(v):
    if v is None: return "NULL"
    if isinstance(v, (int, float)): return repr(v)
    return "'" + str(v).replace("\\", "\\\\").replace("'", "''") + "'"
def values(image):
    columns = ["id"] if form == "debezium" else list(image)
    return "(%s) VALUES (%s)" % (", ".join("`%s`" % c for c in columns), ", ".join(literal(image[c]) for c in columns))
one_row = "DO IF(ROW_COUNT() = 1, 0, (SELECT 1 UNION SELECT 2));"
for line in open(path):
    record = json.loads(line)
    if form == "debezium":
        payload = record.get("payload", record)
        op = {"c": "c", "r": "c", "u": "u", "d": "d"}.get(payload.get("op"))
        before, after = payload.get("before"), payload.get("after")
    else:
        op, before, after = record.get("op"), record.get("before"), record.get("after")
        op = "c" if op == "r" else op
    if op == "c":
        print("INSERT INTO %s %s;" % (table, values(after)))
    elif op == "d":
        print("DELETE FROM %s WHERE id = %d; %s" % (table, before["id"], one_row))
    elif op == "u":
        print("DELETE FROM %s WHERE id = %d; %s INSERT INTO %s %s;" % (table, before["id"], one_row, table,
                                                                      values(after)))
PY
}
