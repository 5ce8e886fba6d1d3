"""The built-in alias table: large, flat, unambiguous, and what a new palace starts with."""

from palazzo.memory.aliases import BUILTIN
from palazzo.memory.kg import DEFAULT_ALIASES, normalise_entity
from palazzo.palace import Palace


def test_the_table_has_over_300_aliases_of_over_50_entities() -> None:
    assert len(BUILTIN) >= 50
    assert len(DEFAULT_ALIASES) >= 300


def test_keys_are_normalised_and_no_spelling_is_a_key_or_means_two_things() -> None:
    owner: dict[str, str] = {}
    for key, spellings in BUILTIN.items():
        assert isinstance(spellings, tuple) and spellings, key
        assert normalise_entity(key) == key
        for s in spellings:
            a = normalise_entity(s)
            assert a and a != key and a not in BUILTIN, (key, s)
            assert owner.setdefault(a, key) == key, (s, key, owner[a])
            assert sum(normalise_entity(t) == a for t in spellings) == 1, (key, s)


def test_a_new_palace_resolves_common_spellings_to_one_entity() -> None:
    kg = Palace(name="p").kg
    assert {kg.resolve(n) for n in ("GCP", "Google Cloud", "google-cloud-platform")} == {
        "google-cloud-platform"}
    assert {kg.resolve(n) for n in ("Postgres", "psql", "PostgreSQL")} == {"postgresql"}
    assert {kg.resolve(n) for n in ("scikit-learn", "sklearn")} == {"scikit-learn"}
    assert kg.resolve("Rabbit") == "rabbit"  # ordinary words stay themselves
