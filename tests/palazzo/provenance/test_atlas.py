"""The atlas: batch slicing, slice overlap, turn influence and the atlas bundle.

Hand-built conversations whose answers are known: a chain sliced with radius 1 (Jaccard and
bridges by hand), a fan-out (a star: the centre's betweenness is 1), and a generated DAG with
branches and merges for batch == one-by-one and determinism.
"""

import json
import random

import numpy as np
import pytest

from palazzo.errors import NotFound, ValidationError
from palazzo.ops import default_registry
from palazzo.palace import Palace
from palazzo.provenance import atlas as atlas_mod
from palazzo.provenance.atlas import (
    betweenness,
    bridge_scores,
    build_atlas,
    overlap_matrix,
    turn_frequency,
)
from palazzo.provenance.canonical import canonical_bytes
from palazzo.provenance.keys import Keyring
from palazzo.provenance.policy import SlicePolicyV1

T0 = 1_700_000_000.0
KEY = bytes(range(32))
NEAR = SlicePolicyV1("near", max_radius=1, include_siblings=False)


def palace(key=KEY):
    p = Palace(clock=lambda: T0)
    p.provenance.keyring = Keyring.with_secret(key, T0)
    p.provenance.register_policy(NEAR)
    return p


def chain(n=5):
    """A conversation a → b → c → d → e; returns (palace, turn ids in order)."""
    p = palace()
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
            for i in range(n)]
    return p, list(p.conversations.import_messages("chain", msgs).turn_ids)


def generated(seed=0, turns=80, key=KEY):
    """A seeded conversation DAG with branches (regenerated answers) and merges."""
    rng = random.Random(seed)
    phases = ["synthesis", "planning", "consolidation", "debugging", "exploration"]
    msgs = []
    for i in range(turns):
        m = {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"turn {i}: " + " ".join(rng.choice("abcdefgh") * rng.randint(1, 9)
                                                 for _ in range(rng.randint(1, 30))),
             "phase": rng.choice(phases), "salience": round(rng.random(), 3)}
        if i >= 2 and rng.random() < 0.2:
            m["parents"] = [rng.randrange(max(0, i - 6), i - 1)]  # a branch
        if i >= 4 and rng.random() < 0.08:
            m["parents"] = sorted({i - 1, rng.randrange(0, i - 2)})  # a merge
        msgs.append(m)
    p = palace(key)
    return p, list(p.conversations.import_messages("gen", msgs).turn_ids)


# -- overlap -----------------------------------------------------------------------------------

def test_jaccard_of_hand_made_sets():
    m = overlap_matrix([{"a", "b"}, {"b", "c", "d"}, {"d", "e"}, {"a", "b"}])
    expected = np.array([[1, 1 / 4, 0, 1], [1 / 4, 1, 1 / 4, 1 / 4], [0, 1 / 4, 1, 0],
                         [1, 1 / 4, 0, 1]])
    assert m.dtype == np.float64 and m.shape == (4, 4)
    np.testing.assert_allclose(m, expected)
    assert (m == m.T).all()


def test_jaccard_of_slices_on_a_chain():
    p, ids = chain()
    a = build_atlas(p.provenance, [ids[0], ids[2], ids[4]], "near")
    # near: radius 1, no siblings: {a, b}, {b, c, d}, {d, e}
    assert [s.turns for s in a.slices] == [tuple(sorted(ids[0:2])), tuple(sorted(ids[1:4])),
                                           tuple(sorted(ids[3:5]))]
    np.testing.assert_allclose(a.overlap, [[1, 0.25, 0], [0.25, 1, 0.25], [0, 0.25, 1]])
    assert a.to_dict()["overlap"] == [[1.0, 0.25, 0.0], [0.25, 1.0, 0.25], [0.0, 0.25, 1.0]]


# -- influence ---------------------------------------------------------------------------------

def test_frequency_and_bridges_on_a_chain():
    p, ids = chain()
    a = build_atlas(p.provenance, [ids[0], ids[2], ids[4]], "near")
    rows = {r.turn: r for r in a.influence}
    assert [rows[t].frequency for t in ids] == [1, 2, 1, 2, 1]
    # b alone joins slice(a) and slice(c); d alone joins slice(c) and slice(e).
    assert [rows[t].bridge for t in ids] == [0, 1, 0, 1, 0]
    # With radius 2 the slices of a and c share a, b and c: no single turn holds them.
    wide = SlicePolicyV1("wide", max_radius=2, include_siblings=False)
    p.provenance.register_policy(wide)
    w = build_atlas(p.provenance, [ids[0], ids[2]], "wide")
    assert all(r.bridge == 0 for r in w.influence)


def test_bridge_counts_the_groups_a_turn_alone_holds_together():
    scores = bridge_scores([{"x", "y"}, {"y", "z"}, {"y", "w"}, {"q"}])
    assert scores == {"q": 0, "w": 0, "x": 0, "y": 2, "z": 0}
    # Two of the three also share "z": y then holds two groups together, not three.
    assert bridge_scores([{"x", "y"}, {"y", "z"}, {"y", "z", "w"}])["y"] == 1
    assert turn_frequency([{"x", "y"}, {"y"}]) == {"x": 1, "y": 2}


def test_betweenness_of_a_star_and_a_path():
    p = palace()
    root = p.conversations.add_turn("star", "user", "centre")[0].id
    leaves = [p.conversations.add_turn("star", "assistant", f"leaf {i}", parents=[root])[0].id
              for i in range(4)]
    scores, how = betweenness(p.conversations, [root, *leaves])
    assert scores[root] == pytest.approx(1.0) and all(scores[x] == 0 for x in leaves)
    assert how["exact"] and how["samples"] is None and how["links"] == 4
    q, ids = chain()
    path, _ = betweenness(q.conversations, ids)
    # Path of 5: the middle lies on 4 of the 6 pairs' paths, normalised by (n-1)(n-2)/2 = 6.
    assert path[ids[2]] == pytest.approx(4 / 6) and path[ids[0]] == 0
    assert path[ids[1]] == pytest.approx(3 / 6)


def test_large_graphs_use_a_seeded_sample(monkeypatch):
    p, ids = generated(turns=60)
    monkeypatch.setattr(atlas_mod, "EXACT_LIMIT", 10)
    one, how = betweenness(p.conversations, ids, samples=8)
    two, _ = betweenness(p.conversations, list(reversed(ids)), samples=8)
    assert not how["exact"] and how["samples"] == 8 and how["seed"] == atlas_mod.SEED
    assert one == two  # same turns, same sample, whatever order they came in


# -- batch slicing -----------------------------------------------------------------------------

@pytest.mark.parametrize("budget", [None, 120])
def test_batch_slicing_equals_slicing_one_by_one(budget):
    p, ids = generated()
    anchors = ids[::3] + [ids[5], ids[5]]  # a repeat too
    batch = p.provenance.slice_many(anchors, budget=budget)
    alone = [p.provenance.slice(a, budget=budget) for a in anchors]
    assert [b.to_dict() for b in batch] == [b.to_dict() for b in alone]
    assert len({b.fields.slice_id for b in batch}) > 10


def test_batch_slicing_checks_every_anchor_first():
    p, ids = generated(turns=10)
    revision = p.provenance.keyring.revision
    with pytest.raises(NotFound):
        p.provenance.slice_many([ids[0], "turn_nowhere"])
    assert p.provenance.keyring.revision == revision


# -- the bundle --------------------------------------------------------------------------------

def test_the_atlas_bundle_is_deterministic_and_independent_of_the_key():
    first = build_atlas(generated()[0].provenance, generated()[1][::4])
    p, ids = generated(key=bytes(range(1, 33)))
    again = build_atlas(p.provenance, ids[::4])
    assert first.canonical() == again.canonical()
    assert json.dumps(first.to_dict(), sort_keys=True) == \
        json.dumps(again.to_dict(), sort_keys=True)
    d = first.to_dict()
    body = {k: v for k, v in d.items() if k != "content_hash"}
    assert first.content_hash == d["content_hash"] == atlas_mod.sha256_hex(
        canonical_bytes(atlas_mod._quantised(body)))
    assert d["policy"]["params_hash"] == SlicePolicyV1().params_hash
    assert [s["slice_id"] for s in d["slices"]] == [
        p.provenance.slice(a).fields.slice_id for a in ids[::4]]
    assert [r["turn"] for r in d["influence"]] == sorted(r["turn"] for r in d["influence"])
    # Another policy, budget or anchor set is another bundle.
    assert build_atlas(p.provenance, ids[::4], "near").content_hash != first.content_hash
    assert build_atlas(p.provenance, ids[::4], budget=200).content_hash != first.content_hash
    assert build_atlas(p.provenance, ids[::5]).content_hash != first.content_hash


def test_the_summary_ranks_the_influential_turns():
    p, ids = chain()
    s = build_atlas(p.provenance, [ids[0], ids[2], ids[4]], "near").summary(top=2)
    assert s["anchors"] == 3 and s["turns"] == 5 and s["slice_turns"] == 7
    assert s["overlap"] == {"mean": round(1 / 6, 6), "max": 0.25, "overlapping_pairs": 2}
    assert s["bridges"] == 2 and [r["turn"] for r in s["bridging"]] == sorted([ids[1], ids[3]])
    assert s["central"][0]["turn"] == ids[2]
    assert len(s["frequent"]) == 2 and {r["frequency"] for r in s["frequent"]} == {2}


def test_atlas_refuses_bad_anchor_sets():
    p, ids = chain()
    with pytest.raises(ValidationError, match="1 to 1000"):
        build_atlas(p.provenance, [])
    with pytest.raises(ValidationError, match="1 to 1000"):
        build_atlas(p.provenance, ids * 201)
    with pytest.raises(NotFound):
        build_atlas(p.provenance, ["turn_nowhere"])
    with pytest.raises(NotFound):
        build_atlas(p.provenance, ids, "no-such-policy")


# -- the operation -----------------------------------------------------------------------------

def test_the_atlas_operation():
    reg = default_registry()
    p, ids = chain()
    out = reg.call(p, "atlas", {"anchors": [ids[0], ids[2], ids[4]], "policy": "near"})
    assert out["anchors"] == 3 and out["bridges"] == 2 and out["chosen_from"] == 3
    whole = reg.call(p, "atlas", {"anchors": [ids[0], ids[2], ids[4]], "policy": "near",
                                  "output": "bundle"})["atlas"]
    assert whole["content_hash"] == out["content_hash"] and len(whole["overlap"]) == 3
    sampled = reg.call(p, "atlas", {"conversation": "chain", "limit": 2, "output": "bundle"})
    assert sampled["chosen_from"] == 5 and sampled["atlas"]["anchors"] == [ids[0], ids[2]]
    assert reg.call(p, "atlas", {})["anchors"] == 5
    with pytest.raises(ValidationError, match="not both"):
        reg.call(p, "atlas", {"anchors": [ids[0]], "conversation": "chain"})
    with pytest.raises(ValidationError, match="1 to 1000"):
        reg.call(p, "atlas", {"anchors": []})
    with pytest.raises(ValidationError):
        reg.call(p, "atlas", {"limit": 0})
    with pytest.raises(NotFound):
        reg.call(p, "atlas", {"conversation": "nowhere"})
    with pytest.raises(ValidationError, match="no conversation turns"):
        reg.call(palace(), "atlas", {})
