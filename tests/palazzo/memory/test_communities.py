"""Communities: Louvain over the drawers' k-NN similarity and shared entities, named by their
distinctive words, deterministic, cached until the palace changes."""

import random

import numpy as np

from palazzo.embed.hashing import HashEmbedder
from palazzo.memory import communities
from palazzo.memory.communities import Settings, detect, modularity, nearest
from palazzo.palace import Palace

TOPIC_WORDS = {
    "garden": "roses tulips soil compost pruning seeds watering mulch bloom hedges",
    "database": "postgres replication query vacuum schema migration replica lag index",
    "music": "guitar piano chords melody rhythm tempo scales song practice concert",
}
FILLER_WORDS = "today really thing maybe think good went also quite still"
TOPICS = {topic: words.split() for topic, words in TOPIC_WORDS.items()}
FILLER = FILLER_WORDS.split(" ")


def _texts(seed: int = 0, per_topic: int = 12) -> list[tuple[str, str, str]]:
    """Return (topic, wing, text): drawers of three topics, their wings and rooms dealt in
    turn so that neither says which topic a drawer is about."""
    rng = random.Random(seed)
    out = []
    for topic, words in TOPICS.items():
        for i in range(per_topic):
            text = " ".join(rng.choice(words) if rng.random() < 0.6 else rng.choice(FILLER)
                            for _ in range(20))
            out.append((topic, f"wing{i % 3}", text))
    return out


def _palace(texts=None, embedder=True, **kw) -> tuple[Palace, dict[str, str]]:
    """Return (a palace of ``texts``, drawer id -> its topic)."""
    p = Palace(embedder=HashEmbedder() if embedder else None, clock=lambda: 1.0, **kw)
    topic_of = {}
    for topic, wing, text in texts if texts is not None else _texts():
        # the room follows the text, so the same texts make the same drawers in any order
        did, _ = p.add_drawer(wing, f"room{len(text) % 4}", text)
        topic_of[did] = topic
    return p, topic_of


def _groups(p: Palace, found) -> list[set[str]]:
    """Return each community's drawer ids, in community order."""
    ids = p.drawers.ids
    return [{ids[r] for r in np.flatnonzero(found.labels == c.id)} for c in found.communities]


def _check_planted(p: Palace, topic_of: dict[str, str], found) -> None:
    groups = _groups(p, found)
    assert len(groups) == 3
    assert [c.size for c in found.communities] == [len(g) for g in groups]
    for c, group in zip(found.communities, groups, strict=True):
        [topic] = {topic_of[d] for d in group}  # one topic a community...
        assert len(group) == 12  # ...and the whole of it
        words = set(TOPICS[topic])
        assert set(c.name.split(" · ")) <= words and len(c.name.split(" · ")) == 3
        assert set(c.terms[:3]) <= words


def test_planted_topics_are_recovered_and_named_by_their_words():
    p, topic_of = _palace()
    found = detect(p)
    assert found.similarity == "vectors"
    _check_planted(p, topic_of, found)
    assert found.links["similar"] > 0 and found.modularity > 0.5
    assert set(found.seconds) == {"knn", "graph", "louvain", "naming"}
    first = found.communities[0]
    assert sum(first.wings.values()) == first.size and set(first.wings) <= {
        "wing0", "wing1", "wing2"}
    counts = [n for _, _, n in first.rooms]  # the biggest rooms, most drawers first
    assert len(counts) == communities.TOP_ROOMS and counts == sorted(counts, reverse=True)


def test_without_vectors_the_words_stand_in():
    p, topic_of = _palace(embedder=False)
    found = detect(p)
    assert found.similarity == "terms"
    _check_planted(p, topic_of, found)


def test_the_same_palace_gives_the_same_communities_and_ids_in_any_order():
    texts = _texts(seed=3)
    p, _ = _palace(texts)
    a, b = detect(p), detect(p)
    assert np.array_equal(a.labels, b.labels)
    assert [c.to_dict() for c in a.communities] == [c.to_dict() for c in b.communities]
    q, _ = _palace(list(reversed(texts)))  # other rows, same drawers
    c = detect(q)
    assert _groups(p, a) == _groups(q, c)
    assert [x.name for x in a.communities] == [x.name for x in c.communities]
    # ids: by size, then smallest drawer id
    keys = [(-x.size, x.first) for x in a.communities]
    assert keys == sorted(keys)
    assert [x.first for x in a.communities] == [min(g) for g in _groups(p, a)]


def test_another_seed_or_resolution_is_another_setting():
    p, topic_of = _palace()
    found = detect(p, Settings(seed=7))
    _check_planted(p, topic_of, found)  # clear topics do not depend on the seed
    many = detect(p, Settings(resolution=20.0))
    assert len(many.communities) > 3


ISLAND = ["we walked around Zanzibar harbour at dawn", "ferry timetable for Zanzibar crossing",
          "the Zanzibar spice market smelled great"]
CLUSTER = ["paperwork for Kubernetes upgrade done", "Kubernetes pods keep restarting overnight",
           "upgrade notes: Kubernetes drained nodes first"]


def test_drawers_that_name_the_same_entity_are_joined():
    p, _ = _palace([("island", "w", t) for t in ISLAND] + [("ops", "w", t) for t in CLUSTER])
    apart = Settings(min_cosine=0.99)  # no similarity link: only the entities join them
    found = detect(p, apart)
    assert found.links == {"similar": 0, "entity": 6}
    groups = _groups(p, found)
    by_text = {p.drawers.ids[r]: p.drawers.content[r] for r in p.drawers.live_rows()}
    assert sorted(sorted(by_text[d] for d in g) for g in groups) == [sorted(CLUSTER),
                                                                     sorted(ISLAND)]
    names = {c.entities[0][0] for c in found.communities}
    assert names == {"Zanzibar", "Kubernetes"}
    alone = detect(p, Settings(min_cosine=0.99, entity_weight=0.0))
    assert len(alone.communities) == 6  # without the entity links nothing joins them


def test_the_source_drawer_of_a_fact_joins_its_entities():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, extract_on_add=False)
    a, _ = p.add_drawer("w", "r", "notes on the Harbour Bridge repaint schedule")
    b, _ = p.add_drawer("w", "r", "quarterly budget spreadsheet totals")
    c, _ = p.add_drawer("w", "r", "pasta recipe with anchovies")
    p.kg.add("Mira", "works_at", "Bridgeworks", source_drawer=a)
    p.kg.add("Mira", "lives_in", "Sydney", source_drawer=b)
    found = detect(p, Settings(min_cosine=0.99))
    assert found.links["entity"] == 2  # a and b meet at Mira (the others have one drawer)
    assert found.labels[p.row(a)] == found.labels[p.row(b)] != found.labels[p.row(c)]
    assert found.communities[0].entities == [("Mira", 2), ("Bridgeworks", 1), ("Sydney", 1)]


def test_an_entity_of_most_drawers_links_nothing(monkeypatch):
    texts = [("x", "w", f"Python note {w} {w}") for w in ("alpha", "beta", "gamma", "delta")]
    p, _ = _palace(texts)
    assert detect(p, Settings(min_cosine=0.99)).links["entity"] == 4
    monkeypatch.setattr(communities, "HUB_FLOOR", 2)
    monkeypatch.setattr(communities, "HUB_SHARE", 0.5)
    found = detect(p, Settings(min_cosine=0.99))
    assert found.links["entity"] == 0
    assert found.communities[0].entities == [("Python", 1)]  # still named as what it names


def test_the_mask_selects_a_communitys_rows_and_deleted_rows_are_in_none():
    p, topic_of = _palace()
    gone = p.drawers.ids[5]
    p.delete_drawer(gone)
    found = detect(p)
    assert found.labels[5] == -1 and len(found.labels) == p.drawers.size
    for c in found.communities:
        rows = np.flatnonzero(found.mask(c.id))
        assert len(rows) == c.size and {topic_of[p.drawers.ids[r]] for r in rows} == {
            topic_of[p.drawers.ids[rows[0]]]}
    assert not found.mask(99).any()


def test_an_empty_palace_has_no_communities():
    found = detect(Palace())
    assert found.communities == [] and found.similarity == "none" and len(found.labels) == 0
    assert found.modularity == 0.0


def test_the_cache_keeps_the_result_until_the_drawers_change():
    p, _ = _palace()
    first = p.communities.get()
    assert p.communities.get() is first
    assert p.communities.get(Settings(seed=1)) is not first
    again = p.communities.get()
    p.add_drawer("wing0", "room0", "compost roses mulch pruning bloom soil")
    after = p.communities.get()
    assert after is not again and after.labels.size == p.drawers.size
    assert p.communities.get() is after
    did = p.drawers.ids[0]
    p.update_drawer(did, content="guitar chords melody tempo")  # a new id: changed
    assert p.communities.get() is not after


def test_nearest_is_the_exact_k_nn_graph(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[7] = 0.0  # a row without a vector links nothing
    monkeypatch.setattr(communities, "BLOCK_CELLS", 100)  # several blocks
    i, j, w = nearest(x, 3, 0.1)
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    want = set()
    for a in range(40):
        for b in np.argsort(-sims[a], kind="stable")[:3]:
            if sims[a, b] >= 0.1:
                want.add((min(a, b), max(a, b)))
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == want
    assert np.all(i < j) and 7 not in set(i) | set(j)
    assert np.allclose(w, sims[i, j], atol=1e-6)


def test_modularity_matches_networkx():
    import networkx as nx

    g = nx.karate_club_graph()
    parts = nx.community.louvain_communities(g, seed=0)
    labels = np.zeros(g.number_of_nodes(), dtype=np.int32)
    for c, members in enumerate(parts):
        labels[list(members)] = c
    src, dst, w = (np.array(v) for v in zip(*g.edges(data="weight"), strict=True))
    assert abs(modularity(labels, src, dst, w.astype(float))
               - nx.community.modularity(g, parts, weight="weight")) < 1e-9
