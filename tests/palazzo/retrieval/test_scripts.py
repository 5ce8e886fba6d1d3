"""Hybrid search and the scripts the embedder reads: a query in a script MiniLM does not
read (Korean) is ranked by its words, and a drawer still waiting for its vector keeps the
place its words give it."""

import numpy as np

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace
from palazzo.retrieval import scripts


class EnglishOnly(HashEmbedder):
    """The hash embedder under MiniLM's name: what search knows of an embedder's scripts
    comes from its name (scripts.READS)."""

    name = "minilm"


def test_latin_share_counts_letters_only():
    assert scripts.latin_share("income tax threshold 2024") == 1.0
    assert scripts.latin_share("금융소득 종합과세 기준") == 0.0
    assert 0.3 < scripts.latin_share("GitHub 업로드 방법") < 0.7
    assert scripts.latin_share("2024-05-01 12:00") == 1.0
    assert scripts.readable("금융소득 종합과세 기준", HashEmbedder())  # reads every script
    assert not scripts.readable("금융소득 종합과세 기준", EnglishOnly())
    assert scripts.readable("Vergütung für Überstunden", EnglishOnly())


def _palace(embedder):
    palace = Palace(embedder=embedder, clock=lambda: 0.0)
    palace.add_drawer("chats", "tax", "금융소득 종합과세 기준은 연 2천만 원입니다. "
                      "이자와 배당을 합산합니다.")
    for i in range(30):
        palace.add_drawer("chats", f"misc {i}", f"GitHub 업로드 {i}: git push origin main, "
                          f"release notes number {i}.")
    return palace


def test_a_query_in_a_script_the_embedder_does_not_read_is_ranked_by_its_words():
    palace = _palace(EnglishOnly())
    out = call(palace, "search", {"query": "금융소득 종합과세 기준", "limit": 5})
    top = out["results"][0]
    assert top["room"] == "tax"
    assert top["scores"]["vector"] is None and top["scores"]["bm25"] > 0
    assert "by_words" in out and "Latin" in out["by_words"]
    english = call(palace, "search", {"query": "release notes git push", "limit": 5})
    assert "by_words" not in english and english["results"][0]["scores"]["vector"] is not None


def test_the_same_query_with_an_embedder_that_reads_every_script_uses_vectors():
    out = call(_palace(HashEmbedder()), "search", {"query": "금융소득 종합과세 기준"})
    assert "by_words" not in out and out["results"][0]["scores"]["vector"] is not None


def test_a_drawer_without_a_vector_keeps_the_place_its_words_give_it():
    palace = Palace(embedder=HashEmbedder(), clock=lambda: 0.0)
    for i in range(20):
        palace.add_drawer("w", f"r{i}", f"Note {i} about the harbour ferry timetable.")
    target, _ = palace.add_drawer("w", "lighthouse", "The lighthouse keeper's logbook: "
                                  "storms, ships and the lighthouse lamp.")
    row = palace.row(target)
    palace.drawers.has_vector[row] = False  # still waiting for the background embedding
    palace.drawers.vectors[row] = 0.0
    hits = call(palace, "search", {"query": "lighthouse lamp logbook", "enrich": 1})["results"]
    assert hits[0]["drawer_id"] == target
    assert hits[0]["scores"]["vector"] is None and hits[0]["scores"]["bm25_rank"] == 1
    embedded = Palace(embedder=HashEmbedder(), clock=lambda: 0.0)
    for i in range(20):
        embedded.add_drawer("w", f"r{i}", f"Note {i} about the harbour ferry timetable.")
    again, _ = embedded.add_drawer("w", "lighthouse", "The lighthouse keeper's logbook: "
                                   "storms, ships and the lighthouse lamp.")
    full = call(embedded, "search", {"query": "lighthouse lamp logbook", "enrich": 1})
    assert full["results"][0]["drawer_id"] == again
    assert np.isclose(full["results"][0]["score"], hits[0]["score"])  # its own place, no more


def test_the_status_counts_the_drawers_the_embedder_does_not_read():
    palace = _palace(EnglishOnly())
    palace.add_drawer("notes", "en", "A plain English note about the garden.")
    status = call(palace, "palace_status", {})
    # the tax drawer is Korean; the 30 "GitHub 업로드" drawers are mostly Latin letters
    assert status["unread"] == {"drawers": 1, "script": "latin"}
    kr = palace.add_drawer("notes", "kr", "오늘은 정원에 토마토를 심었다.")[0]
    assert call(palace, "palace_status", {})["unread"]["drawers"] == 2
    palace.update_drawer(kr, content="Today I planted tomatoes in the garden.")
    assert call(palace, "palace_status", {})["unread"]["drawers"] == 1
    palace.delete_drawer(_id_in(palace, "tax"))
    assert call(palace, "palace_status", {})["unread"]["drawers"] == 0
    # an embedder that reads every script: nothing to say
    assert call(_palace(HashEmbedder()), "palace_status", {})["unread"] is None


def _id_in(palace, room):
    s = palace.drawers
    return next(s.ids[r] for r in s.live_rows().tolist() if s.room[r] == room)
