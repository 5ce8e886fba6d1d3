import struct
import zlib

from palazzo.persist import journal
from palazzo.persist.journal import Record, Tip


def _records(n):
    return [Record(i + 1, "add_drawer", {"wing": "w", "room": "r", "content": f"é {i}"},
                   1000.0 + i) for i in range(n)]


def _bytes(recs):
    return b"".join(journal.encode(r) for r in recs)


def test_records_round_trip_and_scan_stops_at_nothing():
    data = _bytes(_records(3))
    found = journal.scan(data)
    assert found.records == _records(3)
    assert (found.good_bytes, found.dropped_bytes, found.problem) == (len(data), 0, None)
    assert found.damaged == [] and found.torn is None


def test_every_cut_keeps_exactly_the_whole_records_and_is_a_torn_tail_not_damage():
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
        assert found.damaged == [], cut
        assert (found.torn is None) == (cut in (0, *ends)), cut


def test_a_flipped_byte_anywhere_is_damage_and_never_costs_the_other_records():
    recs = _records(3)
    data = _bytes(recs)
    one, two = len(journal.encode(recs[0])), len(journal.encode(recs[0])) + len(
        journal.encode(recs[1]))
    for lo, hi, victim in ((0, one, 0), (one, two, 1), (two, len(data), 2)):
        for i in range(lo, hi):
            bad = bytearray(data)
            bad[i] ^= 0x01
            found = journal.scan(bytes(bad))
            others = [r for k, r in enumerate(recs) if k != victim]
            assert [r for r in found.records if r != recs[victim]] == others, i
            assert found.damaged and found.torn is None, i  # never mistaken for a crash
            header = i - lo < 6  # the magic and length: its data still verifies
            assert (recs[victim] in found.records) == header, i


def test_a_damaged_length_that_claims_more_than_the_file_is_read_back():
    recs = _records(2)
    data = bytearray(_bytes(recs))
    at = len(journal.encode(recs[0]))
    struct.pack_into("<I", data, at + 2, 5000)  # the last record now seems to run past the end
    found = journal.scan(bytes(data))
    assert found.records == recs and found.torn is None and found.repaired_headers == 1


def test_swapped_repeated_and_stray_bytes_are_read_around():
    a, b, c = (journal.encode(r) for r in _records(3))
    found = journal.scan(a + c + b)
    assert [r.seq for r in found.records] == [1, 3, 2] and not found.damaged
    found = journal.scan(a + b + b + c)
    assert [r.seq for r in found.records] == [1, 2, 2, 3]
    found = journal.scan(a + b"\x00" * 4096 + b + c)
    assert [r.seq for r in found.records] == [1, 2, 3]
    assert found.damaged[0].start == len(a) and found.damaged[0].end == len(a) + 4096
    found = journal.scan(a + b + b"\x00" * 100)  # zeros at the end are not a torn record
    assert found.damaged and found.torn is None


def test_a_valid_checksum_over_a_bad_payload_is_refused():
    payload = b'{"not":"a record"}'
    data = struct.pack("<2sII", b"PZ", len(payload), zlib.crc32(payload)) + payload
    assert journal.scan(data).problem.startswith("unreadable record")
    huge = struct.pack("<2sII", b"PZ", 1 << 31, 0)
    assert journal.scan(huge).problem.startswith("bad record header")


def test_the_tip_round_trips_and_any_flipped_byte_is_found():
    tip = Tip(7, 1234, 56789)
    data = tip.encode()
    assert len(data) == 28 and Tip.decode(data) == tip
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x10
        assert Tip.decode(bytes(bad)) is None
    assert Tip.decode(data[:-1]) is None
