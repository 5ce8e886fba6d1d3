"""Event sentences: the dated sentences of a drawer, and whose event each tells of."""

import pytest

from palazzo.memory import events
from palazzo.memory.events import OTHER, OWN, about_someone_else, event_sentences, event_texts

TEXT = ("How do people balance reading with birdwatching? Today I passed my driving test on "
        "the first attempt. I started a herb garden on the windowsill. My friend Sam adopted "
        "a parrot called Hazel last month. Tonight was the big anniversary party for my mum "
        "and dad. On 2026-03-14 we signed the lease.")


def test_only_dated_sentences_count_in_text_order_with_whose_they_are():
    assert event_sentences(TEXT) == [
        ("Today I passed my driving test on the first attempt.", OWN),
        ("My friend Sam adopted a parrot called Hazel last month.", OTHER),
        ("Tonight was the big anniversary party for my mum and dad.", OWN),
        ("On 2026-03-14 we signed the lease.", OWN),
    ]


def test_event_texts_are_the_same_sentences_in_the_same_order_without_kinds():
    # Search finds a drawer's sentences again by this order: it must match the vectors'.
    assert event_texts(TEXT) == [s for s, _ in event_sentences(TEXT)]
    text = " ".join(f"Today I planted tree number {i}." for i in range(40))
    assert event_texts(text) == [s for s, _ in event_sentences(text)]
    assert event_texts("I like tea.") == []


def test_a_text_without_a_time_or_a_date_has_none():
    assert event_sentences("I like tea. The garden needs water. Sam is a teacher.") == []
    assert event_sentences("") == []


def test_fragments_and_run_on_paragraphs_are_left_to_the_windows():
    assert event_sentences("Last week! Then more.") == []
    run_on = "Yesterday " + "and then we walked on " * 20  # > MAX_CHARS without a stop
    assert len(run_on) > events.MAX_CHARS and event_sentences(run_on) == []


def test_a_drawer_gives_at_most_max_per_drawer():
    text = " ".join(f"Today I planted tree number {i}." for i in range(40))
    found = event_sentences(text)
    assert len(found) == events.MAX_PER_DRAWER
    assert found[0][0] == "Today I planted tree number 0."


@pytest.mark.parametrize(("sentence", "other"), [
    ("Marco got a parrot named Rocket today.", True),
    ("My friend Sam adopted a parrot called Hazel last month.", True),
    ("My neighbour Tom told me all about their anniversary party last year.", True),
    ("Today I passed my driving test.", False),
    ("Got through my driving exam today, the examiner was friendly.", False),
    ("Today was my first day at Tidewater Energy.", False),
    ("Tonight was the big anniversary party for my mum and dad.", False),
])
def test_whose_event_a_sentence_tells_of(sentence, other):
    assert about_someone_else(sentence) is other
