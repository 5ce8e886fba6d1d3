"""Background embedding's rate for the status line: drawers a second over the last steps and
the time left; nothing once everything is embedded."""

from palazzo.hosts.embedding import IndexingRate


def test_rate_is_drawers_a_second_over_the_last_steps_with_the_time_left():
    rate = IndexingRate(window=2)
    assert rate.words() is None
    rate.record(10, 2.0, 1000)
    assert rate.per_second() == 5.0
    assert rate.words() == "5.0 drawers/s, about 3 min left"
    rate.record(30, 2.0, 40)
    rate.record(30, 2.0, 10)  # the first step has left the window of two
    assert rate.per_second() == 15.0 and rate.words() == "15.0 drawers/s, about 1 s left"


def test_nothing_is_said_when_nothing_remains_or_nothing_was_timed():
    rate = IndexingRate()
    rate.record(5, 0.0, 20)  # an untimed step gives no rate
    assert rate.words() is None
    rate.record(5, 1.0, 0)
    assert rate.words() is None and rate.per_second() is None
