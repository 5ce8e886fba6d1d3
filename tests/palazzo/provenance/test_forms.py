"""Budgeted slices and the forms a model reads them in (messages, text, triples).

A budget bounds a policy's slice (never adds to it), is signed through the slice id, and is
never exceeded by the texts the bundle carries or the forms made from it.
"""

import copy
import random

import pytest

from palazzo.errors import NotAdmissible, ValidationError
from palazzo.memory.wakeup import tokens
from palazzo.palace import Palace
from palazzo.provenance.forms import FORMS, as_messages, as_text, as_triples, render
from palazzo.provenance.kernel import turn_tokens
from palazzo.provenance.keys import Keyring
from palazzo.provenance.records import ProvenanceFields

T0 = 1_700_000_000.0
KEY = bytes(range(32))
MESSAGES = [  # the kernel's golden conversation: a branch, a merge, a side branch
    {"role": "user", "content": "We need a plan for the launch.", "phase": "planning",
     "salience": 0.8},
    {"role": "assistant", "content": "Plan: ship the engine first, then the page.",
     "phase": "synthesis", "salience": 0.9},
    {"role": "assistant", "content": "Alternatively, ship the page first.", "parents": [0],
     "phase": "exploration", "salience": 0.4},
    {"role": "user", "content": "The engine test fails in Pyodide.", "parents": [1],
     "phase": "debugging", "salience": 0.7},
    {"role": "assistant", "content": "Fixed: sha256 instead of xxHash64.", "phase": "debugging",
     "salience": 0.6},
    {"role": "user", "content": "Combine both plans.", "parents": [4, 2],
     "phase": "consolidation", "salience": 1.0},
    {"role": "assistant", "content": "Side note on naming.", "parents": [3],
     "phase": "exploration", "salience": 0.2},
]


def golden_palace():
    p = Palace(clock=lambda: T0)
    p.provenance.keyring = Keyring.with_secret(KEY, T0)
    return p, list(p.conversations.import_messages("launch", MESSAGES).turn_ids)


def generated(seed=0, turns=80):
    """A seeded conversation of long and short turns, with branches."""
    rng = random.Random(seed)
    phases = ["synthesis", "planning", "consolidation", "debugging", "exploration"]
    msgs = []
    for i in range(turns):
        m = {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"turn {i}: " + "word " * rng.choice([2, 5, 20, 80, 200]),
             "phase": rng.choice(phases), "salience": round(rng.random(), 3)}
        if i >= 2 and rng.random() < 0.2:
            m["parents"] = [rng.randrange(max(0, i - 6), i - 1)]
        msgs.append(m)
    p = Palace(clock=lambda: T0)
    p.provenance.keyring = Keyring.with_secret(KEY, T0)
    return p, list(p.conversations.import_messages("gen", msgs).turn_ids)


def test_turn_tokens_is_the_wake_up_estimate_plus_the_turn_overhead():
    assert turn_tokens("") == 4 and turn_tokens(None) == 4
    assert turn_tokens("abcd") == tokens("abcd") + 4 == 5
    assert turn_tokens("abcde") == 6


@pytest.mark.parametrize("budget", [60, 100, 150, 250, 400, 800, 2000])
def test_a_budget_is_never_exceeded_and_only_bounds_the_slice(budget):
    p, ids = generated()
    anchor = ids[40]
    free = p.provenance.slice(anchor)
    b = p.provenance.slice(anchor, budget=budget)
    kept = [t.id for t in b.turns]
    assert kept[0] == anchor  # the anchor always, first
    taken = [t.id for t in free.turns]
    assert [t for t in taken if t in kept] == kept  # a subset, in the order taken
    used = sum(turn_tokens(t.content) for t in b.turns)
    assert used == b.budget.used <= budget
    assert tokens(as_text(b)) <= budget
    assert sum(turn_tokens(m["content"]) for m in as_messages(b)) <= budget
    # Greedy: any left-out turn of the policy's slice would not have fitted where it came.
    left = budget
    for t in free.turns:
        if t.id in kept:
            left -= turn_tokens(t.content)
        else:
            assert turn_tokens(t.content) > left
    assert p.provenance.check(b.to_dict()).valid


def test_the_budget_is_signed():
    p, ids = golden_palace()
    free = p.provenance.slice(ids[5])
    big, bigger = (p.provenance.slice(ids[5], budget=n) for n in (10_000, 20_000))
    # Same turns, yet three different slices: the budget is part of what is signed.
    assert [t.id for t in big.turns] == [t.id for t in free.turns] == [t.id for t in
                                                                        bigger.turns]
    assert len({free.fields.slice_id, big.fields.slice_id, bigger.fields.slice_id}) == 3
    assert len({free.token, big.token, bigger.token}) == 3
    doc = big.to_dict()
    assert doc["budget"] == {"max_tokens": 10_000, "estimate": "ceil(chars/4)+4",
                             "used": big.budget.used}
    assert p.provenance.admit(doc).to_dict() == doc
    for change, reason in [
        (lambda d: d["budget"].update(max_tokens=20_000), "slice_mismatch"),
        (lambda d: d.pop("budget"), "slice_mismatch"),
        (lambda d: d["budget"].update(used=10_001), "over_budget"),
        (lambda d: d["budget"].update(estimate="words"), "malformed_bundle"),
        (lambda d: d["budget"].update(max_tokens=0), "malformed_bundle"),
        (lambda d: d["budget"].pop("used"), "malformed_bundle"),
        (lambda d: d.update(budget=5), "malformed_bundle"),
    ]:
        bad = copy.deepcopy(doc)
        change(bad)
        verdict = p.provenance.check(bad)
        assert not verdict.valid and verdict.reason == reason, (bad.get("budget"), verdict)
        with pytest.raises(NotAdmissible):
            p.provenance.admit(bad)
    assert p.provenance.check(free.to_dict()).valid


def test_a_budgeted_slice_is_current_only_with_its_budget():
    p, ids = golden_palace()
    b = p.provenance.slice(ids[5], budget=30)
    fields = ProvenanceFields(**b.to_dict()["provenance"])
    assert p.provenance.is_current(fields, 30)
    assert not p.provenance.is_current(fields)
    assert not p.provenance.is_current(fields, 31)
    assert not p.provenance.is_current(fields, 1)  # the anchor no longer fits: not current


def test_a_budget_the_anchor_alone_exceeds_is_refused():
    p, ids = golden_palace()
    need = turn_tokens(p.drawer(p.conversations.turns[ids[5]].drawer_id).content)
    assert p.provenance.slice(ids[5], budget=need).budget.used == need
    with pytest.raises(ValidationError, match=f"at least {need}"):
        p.provenance.slice(ids[5], budget=need - 1)
    for bad in (0, -1, True, 1.5, 10**9):
        with pytest.raises(ValidationError):
            p.provenance.slice(ids[5], budget=bad)


def test_the_forms():
    p, ids = golden_palace()
    drawer = p.conversations.turns[ids[1]].drawer_id
    p.kg.add("Engine", "ships_before", "Page", source_drawer=drawer)
    p.kg.add("Nobody", "knows", "this")  # no evidence in the slice: not shown
    b = p.provenance.slice(ids[5])
    msgs = render(b, "messages")
    assert [m["turn"] for m in msgs] == [t.id for t in sorted(
        b.turns, key=lambda t: (t.created_at, t.depth, t.id))]
    assert all(set(m) == {"role", "content", "turn"} for m in msgs)
    assert msgs[0] == {"role": "user", "content": "We need a plan for the launch.",
                       "turn": ids[0]}
    assert render(b, "text") == "\n\n".join(f"{m['role']}: {m['content']}" for m in msgs)
    rows = render(b, "triples", p.kg.triples.values())
    facts = [r for r in rows if r["kind"] == "fact"]
    assert [(r["subject"], r["predicate"], r["object"], r["turn"]) for r in facts] == [
        ("engine", "ships_before", "page", ids[1])]
    edges = [r for r in rows if r["kind"] == "edge"]
    assert len(edges) == len(b.edges)
    assert {"subject": ids[5], "predicate": "merges_from", "object": ids[4], "turn": ids[5],
            "kind": "edge"} in edges
    assert as_triples(b, []) == edges
    assert FORMS == ("messages", "text", "triples")
    with pytest.raises(ValueError):
        render(b, "xml")


def test_turns_whose_text_is_gone_are_left_out_of_the_text_forms():
    p, ids = golden_palace()
    p.update_drawer(p.conversations.turns[ids[0]].drawer_id, content="rewritten")
    b = p.provenance.slice(ids[5])
    assert ids[0] in [t.id for t in b.turns]
    assert ids[0] not in [m["turn"] for m in as_messages(b)]
    assert "rewritten" not in as_text(b)
