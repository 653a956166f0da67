#!/usr/bin/env python3
"""append_dangling_gtid.py BINLOG: appends to a MariaDB binlog file a GTID event of the next
sequence number whose transaction never follows, as a server killed while writing a
transaction to its binlog leaves the file (the server's recovery does not count that GTID:
the next transaction is given its number again). The event is a copy of the file's last GTID
event with the sequence number one higher, its end position and CRC32 made right. Prints the
GTID it appended (domain-server-seq)."""
import struct
import sys
import zlib

HEADER = 19
MARIADB_GTID = 162
FORMAT_DESCRIPTION = 15

path = sys.argv[1]
data = open(path, "rb").read()
if data[:4] != b"\xfebin":
    sys.exit(f"{path}: not a binlog file")
offset = 4
last_gtid = None
while offset + HEADER <= len(data):
    type_code = data[offset + 4]
    size = struct.unpack_from("<I", data, offset + 9)[0]
    if size < HEADER or offset + size > len(data):
        break
    if type_code == MARIADB_GTID:
        last_gtid = data[offset:offset + size]
    offset += size
if offset != len(data):
    sys.exit(f"{path}: ends inside an event at {offset}")
if last_gtid is None:
    sys.exit(f"{path}: holds no GTID event to copy")
event = bytearray(last_gtid)
seq_no = struct.unpack_from("<Q", event, HEADER)[0] + 1
domain_id = struct.unpack_from("<I", event, HEADER + 8)[0]
server_id = struct.unpack_from("<I", event, 5)[0]
struct.pack_into("<Q", event, HEADER, seq_no)
struct.pack_into("<I", event, 13, len(data) + len(event))  # the event's end position
struct.pack_into("<I", event, len(event) - 4, zlib.crc32(bytes(event[:-4])) & 0xFFFFFFFF)
with open(path, "ab") as out:
    out.write(event)
print(f"{domain_id}-{server_id}-{seq_no}")
