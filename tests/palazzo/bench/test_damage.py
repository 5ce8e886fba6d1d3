"""The damage corpus in CI: 540 seeded damages to a palace's files (every kind 60 times),
with no silent loss, no traceback, no repair that lost more than the damage touched, and
none that ``check`` missed."""

import pytest

from palazzo.bench import damage


# The corpus's 540 boots, checks and repairs take about 12 s under CPython; in Pyodide they
# would take most of the engine run's time limit, so the table
# (tests/palazzo/persist/test_damage.py) and the salvage tests carry the engine there.
@pytest.mark.cpython_only
def test_the_damage_corpus_finds_no_silent_loss_and_no_traceback():
    result = damage.run(540, seed=0)
    assert result.failures == []
    assert set(result.outcomes) == set(damage.KINDS)
    told = sum(c.get("told", 0) for c in result.outcomes.values())
    assert told > 250  # the corpus does damage: most cases are told, the rest harmless
    for kind, counts in result.outcomes.items():
        assert sum(counts.values()) == 60, kind
        assert set(counts) <= {"whole", "told"}, kind


def test_a_case_is_the_same_on_every_run():
    ref = damage.reference()
    a, b = damage.generate(ref, 3, 17), damage.generate(ref, 3, 17)
    assert (a.kind, a.target, a.what, a.files) == (b.kind, b.target, b.what, b.files)


@pytest.mark.cpython_only
def test_the_corpus_would_find_a_silent_loss(monkeypatch):
    from palazzo.persist.palacestore import PalaceStore

    # As if there were no tip (a palace an older palazzo wrote): a journal cut at a record
    # boundary, or deleted, then looks whole.
    monkeypatch.setattr(PalaceStore, "_read_tip", lambda self, names, findings: None)
    result = damage.run(90, seed=0)
    assert any(f["outcome"] == "silent" for f in result.failures)
