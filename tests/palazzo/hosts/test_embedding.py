"""Background embedding's rate for the status line: drawers a second over the last steps and
the time left; nothing once everything is embedded."""

from palazzo.hosts.embedding import IndexingRate


def test_rate_is_drawers_a_second_over_the_last_steps_with_the_time_left():
    rate = IndexingRate(window=2)
    assert rate.words() is None
    rate.record(25, 5.0, 1000)
    assert rate.per_second() == 5.0
    assert rate.words() is None  # one step says nothing yet (its window holds two)
    rate.record(25, 5.0, 975)
    assert rate.words() == "5.0 drawers/s, about 3 min left"
    rate.record(75, 5.0, 100)
    rate.record(75, 5.0, 25)  # the first steps have left the window of two
    assert rate.per_second() == 15.0 and rate.words() == "15.0 drawers/s, about 2 s left"


def test_a_window_shorter_than_ten_seconds_says_nothing():
    rate = IndexingRate()
    for _ in range(5):
        rate.record(10, 1.0, 1000)  # 5 s in all
    assert rate.per_second() == 10.0 and rate.words() is None
    for _ in range(5):
        rate.record(10, 1.0, 1000)
    assert rate.words() == "10.0 drawers/s, about 2 min left"


def test_nothing_is_said_when_nothing_remains_or_nothing_was_timed():
    rate = IndexingRate()
    rate.record(5, 0.0, 20)  # an untimed step gives no rate
    assert rate.words() is None
    rate.record(5, 1.0, 0)
    assert rate.words() is None and rate.per_second() is None


def test_with_clock_times_the_rate_counts_the_time_between_steps():
    # Three steps of 10 vectors, each 1 s of model time, ending 5 s apart: the count on
    # screen moves at 20 / 10 = 2.0 drawers/s (from the first step's end), not at the
    # model's 10.
    rate = IndexingRate()
    for end in (101.0, 106.0, 111.0):
        rate.record(10, 1.0, 1000, at=end)
    assert abs(rate.per_second() - 2.0) < 1e-9
    assert rate.words() == "2.0 drawers/s, about 8 min left"


def test_a_slow_first_step_does_not_set_the_rate_and_one_step_says_nothing():
    # The page after an import: the first step embeds one drawer while the model loads
    # (37 s), then steps of 16 come every 1.5 s.
    rate = IndexingRate()
    rate.record(1, 37.0, 17_595, at=37.0)
    assert rate.words() is None  # not "0.0 drawers/s, about 10,989 min left"
    left = 17_595
    for i in range(1, 8):
        left -= 16
        rate.record(16, 1.2, left, at=37.0 + 1.5 * i)
        if i < 7:  # less than 10 s since the first step ended
            assert rate.words() is None
    assert abs(rate.per_second() - 16 / 1.5) < 1e-9
    assert rate.words() == "10.7 drawers/s, about 27 min left"


def test_a_long_pause_between_steps_starts_the_window_again():
    rate = IndexingRate()
    rate.record(10, 1.0, 100, at=10.0)
    rate.record(10, 1.0, 90, at=11.0)
    rate.record(10, 2.0, 80, at=11.0 + IndexingRate.PAUSE + 5)  # an import ran meanwhile
    assert rate.per_second() == 5.0  # the last step alone


def test_drawers_coming_between_steps_start_the_window_again():
    # Steps between an import's batches: each finds more drawers waiting than the last left.
    rate = IndexingRate()
    left = 0
    for i in range(6):
        left += 500 - 1
        rate.record(1, 3.0, left, at=3.0 * (i + 1))
    assert rate.words() is None  # not "0.3 drawers/s, about 1,000 min left"
    for i in range(1, 8):  # the import is done: steps of 16 every 1.5 s
        left -= 16
        rate.record(16, 1.4, left, at=18.0 + 1.5 * i)
    assert abs(rate.per_second() - 16 / 1.5) < 1e-9
