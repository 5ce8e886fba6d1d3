import numpy as np
import pytest

from palazzo import call
from palazzo.core.model import EdgeKind, drawer_id
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace


def ticking():
    t = [1000.0]

    def clock():
        t[0] += 1.0
        return t[0]

    return clock


def make(**kw):
    return Palace(embedder=HashEmbedder(), clock=ticking(), **kw)


def test_drawer_ids_are_deterministic_and_adding_twice_changes_nothing():
    p = make()
    did, created = p.add_drawer("projects", "palazzo", "Pyodide boots in the worker.")
    assert created and did == drawer_id("Pyodide boots in the worker.", "projects", "palazzo")
    again, created_again = p.add_drawer("projects", "palazzo", "Pyodide boots in the worker.")
    assert (again, created_again) == (did, False)
    assert p.counts()["drawers"] == 1
    other, _ = p.add_drawer("people", "palazzo", "Pyodide boots in the worker.")
    assert other != did  # same text, other wing: another drawer


def test_a_drawer_keeps_its_closet_under_the_normalised_name():
    p = make()
    did, _ = p.add_drawer("w", "r", "text", closet=" \uf900 ")  # U+F900 -> U+8C48 under NFC
    assert p.drawer(did).closet == "\u8c48"
    assert ("w", "r", "\u8c48") in p.closets


def test_rooms_get_halls_in_their_wing_and_tunnels_across_wings():
    p = make()
    p.add_room("projects", "search")
    p.add_room("projects", "ui")
    p.add_room("people", "search")
    kinds = {(p.edges.kind[i], p.edges.src[i], p.edges.dst[i]) for i in p.edges.live()}
    assert (EdgeKind.HALL, "room:projects/search", "room:projects/ui") in kinds
    assert (EdgeKind.TUNNEL, "room:projects/search", "room:people/search") in kinds
    assert (EdgeKind.HAS_ROOM, "wing:people", "room:people/search") in kinds


def test_bad_input_is_refused_and_changes_nothing():
    p = make()
    with pytest.raises(ValidationError):
        p.add_drawer("w", "r", "   ")
    with pytest.raises(ValidationError):
        p.add_drawer("w\x00", "r", "text")
    with pytest.raises(ValidationError):
        p.add_drawer("w", "r", "text", importance=2)
    assert p.counts()["drawers"] == 0


def test_delete_removes_the_drawer_from_every_index():
    p = make(similar_threshold=0.0)
    keep, _ = p.add_drawer("w", "r", "apples and pears")
    gone, _ = p.add_drawer("w", "r", "apples and plums")
    assert any(p.edges.kind[i] == EdgeKind.SIMILAR_TO for i in p.edges.live())
    p.delete_drawer(gone)
    with pytest.raises(NotFound):
        p.drawer(gone)
    hits = call(p, "search", {"query": "plums", "limit": 10})["results"]
    assert [h["drawer_id"] for h in hits] == [keep] or all(h["drawer_id"] != gone for h in hits)
    assert all(gone not in (p.edges.src[i], p.edges.dst[i]) for i in p.edges.live())


def test_update_gives_new_text_its_id_and_reindexes_it():
    p = make()
    did, _ = p.add_drawer("w", "r", "the cat sat")
    d = p.update_drawer(did, content="the dog barked", importance=0.9)
    assert d.id == drawer_id("the dog barked", "w", "r") != did
    assert d.content == "the dog barked" and d.importance == 0.9
    assert p.drawer(did).id == d.id  # the old id is an alias
    hits = call(p, "search", {"query": "dog", "mode": "bm25"})["results"]
    assert hits[0]["drawer_id"] == d.id
    assert call(p, "search", {"query": "cat", "mode": "bm25"})["results"] == []


def test_the_clock_is_injected():
    p = make()
    did, _ = p.add_drawer("w", "r", "x marks the spot")
    assert p.drawer(did).created_at == 1004.0  # palace, wing, room, then the drawer


FILLER = [
    "We talked about the kitchen renovation and the new cabinets for a long while.",
    "My sister wants to repaint the hallway a pale shade of green next spring.",
    "The plumber said the pipes under the sink should be replaced before winter.",
    "I compared quotes from three contractors for the bathroom tiles and grout.",
    "Our neighbour lent us a ladder so we could clean the gutters on Saturday.",
    "The hardware store had a sale on paint brushes, rollers and drop cloths.",
]
LONG = (" ".join(FILLER[i % len(FILLER)] for i in range(30))
        + " Finally, I booked a flight to Lisbon for the conference in October.")


def long_palace(chunk_size):
    p = make(chunk_size=chunk_size)
    did, _ = p.add_drawer("home", "notes", LONG)
    p.add_drawer("travel", "ideas", "Someday a conference trip abroad would be nice.")
    p.add_drawer("travel", "ideas", "Flights are expensive in summer.")
    return p, did


def test_a_long_drawer_is_found_by_a_sentence_near_its_end():
    query = {"query": "flight to Lisbon in October", "mode": "vector", "limit": 3}
    p, did = long_palace(chunk_size=900)
    assert len(LONG) > 2000 and len(p.drawers.chunks) >= 3
    assert call(p, "search", query)["results"][0]["drawer_id"] == did
    # Embedded whole, the closing sentence drowns in the rest and a short drawer wins.
    whole, did = long_palace(chunk_size=None)
    assert len(whole.drawers.chunks) == 0
    assert call(whole, "search", query)["results"][0]["drawer_id"] != did


def test_a_chunked_drawer_keeps_the_normalised_mean_of_its_chunks():
    p, did = long_palace(chunk_size=900)
    row = p.row(did)
    slots = p.drawers.chunks.of_row[row]
    mean = p.drawers.chunks.vectors[slots].sum(axis=0)
    assert p.drawers.has_vector[row] and p.drawer(did).embedded
    assert abs(p.drawers.vectors[row] - mean / (mean**2).sum() ** 0.5).max() < 1e-6
    short = p.row(p.add_drawer("w", "r", "a short drawer")[0])
    assert short not in p.drawers.chunks.of_row  # one vector, as before chunking


def test_delete_and_update_free_chunk_rows():
    p, did = long_palace(chunk_size=900)
    chunks = p.drawers.chunks
    used = len(chunks)
    p.update_drawer(did, content="now a short text about Lisbon")
    assert len(chunks) == 0 and not chunks.alive.any() and not chunks.vectors.any()
    p.update_drawer(did, content=LONG + " And back again.")
    assert len(chunks) == used
    p.delete_drawer(did)
    assert len(chunks) == 0 and chunks.of_row == {} and not chunks.vectors.any()
    again, _ = p.add_drawer("home", "notes", LONG)
    assert len(chunks) == used and chunks.size == used  # freed chunk slots are reused


def test_reindex_fills_chunk_vectors_for_a_new_embedder():
    p, did = long_palace(chunk_size=900)
    p.set_embedder(HashEmbedder(dim=128))
    assert len(p.drawers.chunks) == 0 and not p.drawers.has_vector.any()
    result = call(p, "reindex")
    assert result["embedded"] == 3 and p.drawers.chunks.vectors.shape[1] == 128
    assert len(p.drawers.chunks.of_row[p.row(did)]) >= 3
    top = call(p, "search", {"query": "flight to Lisbon in October", "mode": "vector"})
    assert top["results"][0]["drawer_id"] == did


def test_drawers_added_in_a_deferred_block_get_the_vectors_and_links_of_one_by_one():
    from palazzo import call
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.formats.palacefile import export_palace

    texts = [f"the garden note {i} about roses and pears {i % 3}" for i in range(40)]
    one, batched = (Palace(embedder=HashEmbedder(dim=32), similar_threshold=0.1,
                           clock=lambda: 5.0) for _ in range(2))
    call(one, "add_drawer", {"wing": "w", "room": "r", "content": "already here, roses"})
    call(batched, "add_drawer", {"wing": "w", "room": "r", "content": "already here, roses"})
    for text in texts:
        call(one, "add_drawer", {"wing": "w", "room": "r", "content": text})
    call(batched, "batch", {"calls": [{"name": "add_drawer", "args": {
        "wing": "w", "room": "r", "content": t}} for t in texts]})
    a, b = (export_palace(p, exported_at=0.0)["palace"] for p in (one, batched))
    assert a["vectors"] == b["vectors"] and a["drawers"] == b["drawers"]

    def links(doc):
        return sorted((e["src"], e["dst"], e["props"]["cosine"]) for e in doc["edges"]
                      if e["kind"] == "SIMILAR_TO")

    assert links(a) == links(b) and len(links(a)) > len(texts)


def test_halls_and_tunnels_grow_linearly_and_rooms_still_reach_each_other():
    from palazzo import call
    from palazzo.palace import HALL_LIMIT, TUNNEL_LIMIT

    p = Palace()
    for i in range(30):
        p.add_room("big", f"r{i}")
        p.add_room(f"side{i}", "common")
    kinds = [p.edges.kind[i] for i in p.edges.live()]
    halls = [i for i in p.edges.live() if p.edges.kind[i] == EdgeKind.HALL]
    assert kinds.count(EdgeKind.HALL) == sum(min(i, HALL_LIMIT) for i in range(30))
    assert kinds.count(EdgeKind.TUNNEL) == sum(min(i, TUNNEL_LIMIT) for i in range(30))
    # the newest room's halls lead to the HALL_LIMIT rooms made just before it
    newest = {p.edges.src[i] for i in halls if p.edges.dst[i] == "room:big/r29"}
    assert newest == {f"room:big/r{i}" for i in range(29 - HALL_LIMIT, 29)}
    path = call(p, "navigate", {"start": "room:big/r0", "goal": "room:big/r29"})
    assert path["found"] and path["nodes"][-1] == "room:big/r29"


@pytest.mark.parametrize("reread", ["palace_json", "snapshot"])
def test_a_palace_read_back_picks_the_same_halls_and_tunnels_as_the_one_it_was(reread):
    from palazzo.formats import palacefile, snapshot

    def edges(p):
        return sorted((p.edges.kind[i].value, p.edges.src[i], p.edges.dst[i])
                      for i in p.edges.live())

    p = Palace()
    for i in range(12):
        p.add_room("big", f"r{i}")
        p.add_room(f"side{i}", "common")
    if reread == "snapshot":
        q = snapshot.read_snapshot(snapshot.write_snapshot(p), Palace)
    else:
        q = palacefile.read_palace(palacefile.export_palace(p), Palace)
    for x in (p, q):
        x.add_room("big", "new")
        x.add_room("side-new", "common")
    assert edges(q) == edges(p)
    assert sum(1 for i in q.edges.live() if q.edges.dst[i] == "room:big/new"
               and q.edges.kind[i] == EdgeKind.HALL) == 8


def test_the_embedding_queue_puts_a_persons_own_words_first_then_short_ones_newest_first():
    from palazzo import call
    from palazzo.embed.hashing import HashEmbedder

    palace = Palace(clock=lambda: 0.0, chunk_size=120)  # no embedder: nothing gets a vector
    long_answer = "Here is a long answer. " * 20
    call(palace, "import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": "How do I prune roses in winter? " * 6,
         "timestamp": 1_000.0},
        {"role": "assistant", "content": long_answer, "timestamp": 1_001.0},
        {"role": "user", "content": "Thanks!", "timestamp": 1_002.0}]})
    old, _ = palace.add_drawer("notes", "n", "An old short note.", created_at=10.0)
    new, _ = palace.add_drawer("notes", "n", "A new short note.", created_at=2_000.0)
    big, _ = palace.add_drawer("notes", "n", "A long note about the garden. " * 10,
                               created_at=3_000.0)
    order = [palace.drawers.ids[int(r)] for r in palace.embedding_queue()]
    texts = [palace.drawers.content[palace.row(i)] for i in order]
    assert texts[0] == "Thanks!"  # one's own first, the newest first
    assert texts[1].startswith("How do I prune")  # one's own, though long
    assert order[2] == new and order[3] == old  # then short ones, newest first
    assert order[4] == big and texts[5] == long_answer.strip()  # long ones last, newest first
    palace.set_embedder(HashEmbedder())
    step = call(palace, "reindex", {"limit": 2})
    assert step["tried"] == order[:2] and step["remaining"] == 4


class _EnglishOnly(HashEmbedder):
    """The hash embedder under MiniLM's name: what the palace knows of an embedder's
    scripts comes from its name (retrieval.scripts.READS). Counts the texts it embeds."""

    name = "minilm"

    def __init__(self):
        super().__init__()
        self.texts = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def test_an_answer_gets_one_vector_of_its_opening_and_a_persons_turns_all_their_windows():
    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    emb = _EnglishOnly()
    long_question = "How do I prune roses in winter without hurting the buds? " * 6
    long_answer = "Cut above an outward-facing bud at an angle, in dry weather. " * 12
    call(palace, "import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": long_question, "timestamp": 1_000.0},
        {"role": "assistant", "content": long_answer, "timestamp": 1_001.0}]})
    note, _ = palace.add_drawer("notes", "n", "A long note about the garden beds. " * 12)
    palace.set_embedder(emb)
    status = call(palace, "palace_status", {})
    assert status["to_embed"] == 3 and status["to_embed_own"] == 1  # the question
    call(palace, "reindex", {})
    s = palace.drawers
    answer = next(r for r in s.live_rows().tolist() if s.content[r] == long_answer.strip())
    question = next(r for r in s.live_rows().tolist() if s.content[r].startswith("How do"))
    assert s.has_vector[answer] and answer not in s.chunks.of_row  # one vector
    assert palace.pieces(long_answer, answer=True) == palace.pieces(long_answer)[:1]
    assert len(s.chunks.of_row[question]) > 1  # the person's own words: every window
    assert len(s.chunks.of_row[palace.row(note)]) > 1  # a note: every window
    answer_windows = palace.pieces(long_answer)
    assert answer_windows[0] in emb.texts and answer_windows[1] not in emb.texts
    status = call(palace, "palace_status", {})
    assert status["to_embed"] == 0 and status["to_embed_own"] == 0


def _long_turns(palace):
    """A conversation with a person's long question and a short one, then a long note."""
    long_question = "How do I prune roses in winter without hurting the buds? " * 6
    call(palace, "import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": long_question, "timestamp": 1_000.0},
        {"role": "assistant", "content": "Cut above a bud.", "timestamp": 1_001.0},
        {"role": "user", "content": "Thanks, and the climbers?", "timestamp": 1_002.0}]})
    note, _ = palace.add_drawer("notes", "n", "A long note about the garden beds. " * 12)
    s = palace.drawers
    question = next(r for r in s.live_rows().tolist() if s.content[r].startswith("How do"))
    return question, palace.row(note)


def test_opening_first_gives_a_long_turn_its_opening_window_then_the_rest_as_one_pass_would():
    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    question, note = _long_turns(palace)
    emb = _EnglishOnly()
    palace.set_embedder(emb)
    windows = palace.pieces(palace.drawers.content[question])
    assert len(windows) > 2
    assert palace.opening_later(palace.embedding_queue()) == 1  # the question
    # The person's short turn first; left: the question (two steps), the answer, the note.
    one = call(palace, "reindex", {"limit": 1, "opening_first": True})
    assert one["embedded"] == 1 and one["remaining"] == 4
    first = call(palace, "reindex", {"limit": 10, "opening_first": True})
    s = palace.drawers
    # Every drawer has a vector; the question has its opening window's only, the rest to come.
    assert first["embedded"] == 3 and first["remaining"] == 1
    assert s.opening(question) and not s.opening(note) and len(s.chunks.of_row[note]) > 1
    assert windows[0] in emb.texts and windows[1] not in emb.texts
    status = call(palace, "palace_status", {})
    assert status["to_embed"] == 0 and status["to_embed_own"] == 0
    assert status["to_complete"] == 1 and status["embedded"] == 4
    hits = call(palace, "search", {"query": windows[0], "limit": 1, "mode": "vector"})
    assert hits["results"][0]["drawer_id"] == s.ids[question]  # found by meaning already
    assert [int(r) for r in palace.embedding_queue()] == [question]
    emb.texts.clear()
    rest = call(palace, "reindex", {"limit": 10, "opening_first": True})
    assert rest["embedded"] == 1 and rest["remaining"] == 0
    assert windows[0] not in emb.texts and windows[1] in emb.texts  # the rest only
    assert not s.opening(question) and call(palace, "palace_status", {})["to_complete"] == 0
    # The same vectors as embedding it in one pass.
    once = Palace(clock=lambda: 0.0, chunk_size=120)
    q1, _ = _long_turns(once)
    once.set_embedder(_EnglishOnly())
    call(once, "reindex", {})
    o = once.drawers
    assert np.array_equal(o.vectors[q1], s.vectors[question])
    assert np.array_equal(o.chunks.vectors[o.chunks.of_row[q1]],
                          s.chunks.vectors[s.chunks.of_row[question]])
    assert np.array_equal(o.chunks.kind[o.chunks.of_row[q1]],
                          s.chunks.kind[s.chunks.of_row[question]])


def test_an_edited_or_force_embedded_long_turn_keeps_nothing_of_its_opening_window():
    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    question, _ = _long_turns(palace)
    palace.set_embedder(_EnglishOnly())
    call(palace, "reindex", {"limit": 10, "opening_first": True})
    s = palace.drawers
    did = s.ids[question]
    new_text = "Which roses climb best on a north wall of the garden? " * 5
    palace.update_drawer(did, content=new_text)
    fresh = Palace(clock=lambda: 0.0, chunk_size=120, embedder=_EnglishOnly())
    row, _ = fresh.add_drawer("w", "r", new_text)
    row = fresh.row(row)
    assert not s.opening(question) and call(palace, "palace_status", {})["to_complete"] == 0
    assert np.array_equal(s.vectors[question], fresh.drawers.vectors[row])
    # reindex with force embeds a waiting turn whole again.
    other = Palace(clock=lambda: 0.0, chunk_size=120)
    q2, _ = _long_turns(other)
    other.set_embedder(_EnglishOnly())
    call(other, "reindex", {"limit": 10, "opening_first": True})
    o = other.drawers
    o.vectors[q2] = o.vectors[q2][::-1].copy()  # not the opening window's vector any more
    call(other, "reindex", {"force": True})
    once = Palace(clock=lambda: 0.0, chunk_size=120)
    q1, _ = _long_turns(once)
    once.set_embedder(_EnglishOnly())
    call(once, "reindex", {})
    assert not o.opening(q2) and np.array_equal(o.vectors[q2], once.drawers.vectors[q1])


def test_a_long_turn_waiting_for_its_rest_survives_a_palace_file_and_any_reindex_completes_it():
    from palazzo.formats.palacefile import export_palace

    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    question, _ = _long_turns(palace)
    palace.set_embedder(_EnglishOnly())
    call(palace, "reindex", {"limit": 10, "opening_first": True})
    doc = export_palace(palace)
    assert "3" in doc["palace"]["chunk_vectors"]["kinds"]
    copy = Palace(clock=lambda: 0.0, chunk_size=120, embedder=_EnglishOnly())
    call(copy, "import", {"document": doc, "reindex": False, "take_name": True})
    row = copy.row(palace.drawers.ids[question])
    assert copy.drawers.opening(row) and copy.drawers.has_vector[row]
    assert call(copy, "palace_status", {})["to_complete"] == 1
    call(copy, "reindex", {})  # the command line's whole reindex, no opening_first
    assert not copy.drawers.opening(row) and len(copy.drawers.chunks.of_row[row]) > 2
    assert call(copy, "palace_status", {})["to_complete"] == 0


def test_the_turn_roles_follow_new_turns_and_the_status_counts_only_readable_own_turns():
    palace = Palace(clock=lambda: 0.0)
    call(palace, "import_conversation", {"conversation": "a", "messages": [
        {"role": "user", "content": "Where did I park?", "timestamp": 1.0},
        {"role": "assistant", "content": "Level 3, row F.", "timestamp": 2.0}]})
    assert len(palace.own_turns()) == 1 and len(palace.answers()) == 1
    call(palace, "import_conversation", {"conversation": "b", "messages": [
        {"role": "user", "content": "금융소득 종합과세 기준은?", "timestamp": 3.0},
        {"role": "user", "content": "And the threshold in euros?", "timestamp": 4.0},
        {"role": "assistant", "content": "About 17,000 euros.", "timestamp": 5.0}]})
    own, answers = palace.own_turns(), palace.answers()
    assert len(own) == 3 and len(answers) == 2 and not own & answers  # made again
    # the same answer a row at a time, as the queue and the workload ask it
    rows = np.arange(len(palace.drawers.ids))
    is_answer, is_own = palace.roles_of(rows)
    assert [palace.drawers.ids[r] in answers for r in rows] == is_answer.tolist()
    assert [palace.drawers.ids[r] in own for r in rows] == is_own.tolist()
    palace.set_embedder(_EnglishOnly())
    status = call(palace, "palace_status", {})
    # The Korean question waits for no vector: it is neither to embed nor one's own to embed.
    assert status["unread"] == {"drawers": 1, "script": "latin"}
    assert status["to_embed"] == 4 and status["to_embed_own"] == 2
    note = palace.row(palace.add_drawer("notes", "misc", "Not a turn.")[0])
    assert [m.tolist() for m in palace.roles_of(np.array([note]))] == [[False], [False]]


def test_text_the_embedder_does_not_read_gets_no_vector_and_is_no_failure():
    palace = Palace(clock=lambda: 0.0)
    korean, _ = palace.add_drawer("chats", "tax", "금융소득 종합과세 기준은 연 2천만 원입니다.")
    english, _ = palace.add_drawer("chats", "git", "The upload failed: the token expired.")
    emb = _EnglishOnly()
    palace.set_embedder(emb)
    assert [palace.drawers.ids[int(r)] for r in palace.embedding_queue()] == [english]
    status = call(palace, "palace_status", {})
    assert status["to_embed"] == 1 and status["unread"] == {"drawers": 1, "script": "latin"}
    out = call(palace, "reindex", {})
    assert out["embedded"] == 1 and out["no_vector"]["count"] == 0
    assert not palace.drawers.has_vector[palace.row(korean)]
    assert all("금융" not in t for t in emb.texts)  # no model work on it
    status = call(palace, "palace_status", {})
    assert status["to_embed"] == 0 and status["embedded"] == 1
    # with force, a vector it had (from an older palazzo) is taken away; still no failure
    palace.drawers.set_vector(palace.row(korean), np.ones(palace.drawers.dim, np.float32))
    out = call(palace, "reindex", {"force": True})
    assert out["no_vector"]["count"] == 0 and not palace.drawers.has_vector[palace.row(korean)]
    # the Korean drawer is still found by its words, first
    hits = call(palace, "search", {"query": "금융소득 종합과세"})["results"]
    assert hits[0]["drawer_id"] == korean


def test_reserve_makes_room_so_the_writes_it_was_made_for_copy_no_array():
    from palazzo.formats import snapshot

    p = make()
    for i in range(40):
        p.add_drawer("w", "r", f"note {i} about the garden window and its {'long ' * i}frame")
    q = snapshot.read_snapshot(snapshot.write_snapshot(p), lambda **kw: make(**kw))
    before = call(q, "search", {"query": "garden frame", "limit": 5})
    q.reserve(8)
    store, index = q.drawers, q.text_index
    held = (store.vectors, store.alive, store.columns["importance"], store.chunks.vectors,
            q.edges.alive, index._start, index._p_row)
    assert index.capacity == p.text_index.capacity  # what scores returns is unchanged
    assert call(q, "search", {"query": "garden frame", "limit": 5}) == before
    for i in range(8):
        q.add_drawer("w", "r", f"a new note {i} on the garden frame")
    after = (store.vectors, store.alive, store.columns["importance"], store.chunks.vectors,
             q.edges.alive, index._start, index._p_row)
    assert all(a is b for a, b in zip(held, after, strict=True))
    plain = snapshot.read_snapshot(snapshot.write_snapshot(p), lambda **kw: make(**kw))
    for i in range(8):  # the same writes without the room made first
        plain.add_drawer("w", "r", f"a new note {i} on the garden frame")
    assert call(q, "search", {"query": "garden frame", "limit": 10}) == \
        call(plain, "search", {"query": "garden frame", "limit": 10})
    assert snapshot.write_snapshot(q) == snapshot.write_snapshot(plain)
