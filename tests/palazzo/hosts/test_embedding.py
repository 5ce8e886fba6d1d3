"""Background embedding's rate for the status line: drawers a second over the last steps and
the time left; nothing once everything is embedded."""

import numpy as np

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


def _work(done, queue, block=50):
    """A step's ``work`` (reindex's) for the drawers of ``queue`` (their costs) next."""
    cum = np.cumsum(queue)
    marks = [float(x) for x in cum[block - 1::block]]
    if len(cum) % block:
        marks.append(float(cum[-1]))
    return {"done": float(done), "left": float(cum[-1]) if len(cum) else 0.0,
            "block": block, "next": marks, "drawers": len(queue)}


def test_with_work_the_rate_follows_the_drawers_next_in_the_queue():
    # The model does 1,000 characters a second. Steps of 10 long drawers (500 each) end every
    # 5 s; next in the queue, 300 short drawers of 100, then 200 long ones again.
    queue = [100.0] * 300 + [500.0] * 200
    rate = IndexingRate()
    for i in range(4):
        rate.record(10, 5.0, len(queue), at=5.0 * (i + 1), work=_work(5_000, queue))
    assert abs(rate.per_second() - 2.0) < 1e-9  # the drawers just done
    assert abs(rate.work_per_second() - 1_000.0) < 1e-9
    # Over the next 120 s: 120,000 characters, the 300 short drawers (30,000) and 180 long
    # ones, 480 drawers: 4.0 a second, not the 2.0 of the long drawers just done.
    assert rate.drawers_ahead(1_000.0) == 4.0
    # The time left is the work left: 130,000 characters at 1,000 a second.
    assert rate.words() == "4.0 drawers/s, about 2 min left"
    # Near the end the queue runs out within the horizon: its drawers over its work's time.
    short = [100.0] * 30
    rate.record(10, 5.0, 30, at=25.0, work=_work(5_000, short))
    assert rate.drawers_ahead(1_000.0) == 10.0 and rate.words().endswith("about 3 s left")


def test_past_the_drawers_listed_the_rate_takes_their_mean_work():
    rate = IndexingRate()  # 100 drawers of 200 listed, 5,000 remaining
    rate.record(5, 1.0, 5_000, work={"done": 1_000.0, "left": 1e6, "block": 50,
                                     "next": [10_000.0, 20_000.0], "drawers": 5_000})
    assert rate.drawers_ahead(1_000.0) == 5.0  # 120,000 / 200 over 120 s


def test_a_window_with_a_step_of_unknown_work_falls_back_to_drawers():
    rate = IndexingRate()
    for i in range(3):
        rate.record(10, 5.0, 100, at=5.0 * (i + 1))
    rate.record(10, 5.0, 90, at=20.0, work=_work(1_000, [100.0] * 90))
    assert rate.work_per_second() is None
    assert rate.words() == "2.0 drawers/s, about 45 s left"


def test_on_the_clock_the_rate_is_over_the_last_minute_when_that_holds_more_steps():
    # Steps every second: 30 of 10 drawers, then 30 of 20. The last 20 steps alone say 20.0;
    # the last minute holds all 60: (29 · 10 + 30 · 20) / 59 s.
    rate = IndexingRate()
    left = 10_000
    for i in range(60):
        n = 10 if i < 30 else 20
        left -= n
        rate.record(n, 0.9, left, at=float(i + 1))
    assert abs(rate.per_second() - 890 / 59) < 1e-9
    # Steps a minute old drop out of it; the last 20 steps stay the least it goes by.
    for i in range(60, 100):
        left -= 20
        rate.record(20, 0.9, left, at=float(i + 1))
    assert rate.per_second() == 20.0
