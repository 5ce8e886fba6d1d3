import struct
import zlib

from palazzo.persist import journal
from palazzo.persist.journal import Record


def _records(n):
    return [Record(i + 1, "add_drawer", {"wing": "w", "room": "r", "content": f"é {i}"},
                   1000.0 + i) for i in range(n)]


def test_records_round_trip_and_scan_stops_at_nothing():
    data = b"".join(journal.encode(r) for r in _records(3))
    found = journal.scan(data)
    assert found.records == _records(3)
    assert (found.good_bytes, found.dropped_bytes, found.problem) == (len(data), 0, None)


def test_every_cut_keeps_exactly_the_whole_records():
    recs = _records(3)
    ends, data = [], b""
    for r in recs:
        data += journal.encode(r)
        ends.append(len(data))
    for cut in range(len(data) + 1):
        found = journal.scan(data[:cut])
        whole = sum(e <= cut for e in ends)
        assert found.records == recs[:whole]
        assert found.good_bytes == ([0, *ends][whole])
        assert (found.problem is None) == (cut in (0, *ends))


def test_a_flipped_byte_anywhere_in_the_last_record_drops_it():
    recs = _records(2)
    first = journal.encode(recs[0])
    data = first + journal.encode(recs[1])
    for i in range(len(first), len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x01
        found = journal.scan(bytes(bad))
        assert found.records == recs[:1], i
        assert found.good_bytes == len(first) and found.problem


def test_a_valid_checksum_over_a_bad_payload_or_sequence_is_refused():
    payload = b'{"not":"a record"}'
    data = struct.pack("<2sII", b"PZ", len(payload), zlib.crc32(payload)) + payload
    assert journal.scan(data).problem.startswith("unreadable record")
    one, three = _records(3)[0], _records(3)[2]
    found = journal.scan(journal.encode(one) + journal.encode(three))
    assert found.records == [one] and "out of sequence" in found.problem
    huge = struct.pack("<2sII", b"PZ", 1 << 31, 0)
    assert journal.scan(huge).problem.startswith("bad record header")
