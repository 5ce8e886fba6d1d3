from palazzo.memory import aaak

DAY = 1764680000.0  # 2025-12-02 12:53:20 UTC


def test_encode_has_the_seven_fields():
    line = aaak.encode("Decided to move the API server to Hetzner. The deploy was quick.",
                       DAY, "Scout", importance=0.9)
    date, agent, entities, topics, quote, stars, flags = line.split("|")
    assert date == "2025-12-02"
    assert agent == "SCO"
    assert entities == "API,HET"
    assert topics.split(",")[0] == "decided"
    assert quote == '"Decided to move the API server to Hetzner."'
    assert stars == "*****"
    assert flags == "DECISION+TECHNICAL"


def test_user_codes_known_entities_and_collisions():
    line = aaak.encode("we met with Marta and Mario about google cloud platform", DAY, "Marco",
                       codes={"Marta": "MT"}, known=["google cloud platform"])
    _, agent, entities, *_ = line.split("|")
    assert agent == "MAR"
    assert entities == "GOO,MT,MAR2"  # known names first; Mario collides with Marco's MAR


def test_stars_scale_and_separators_are_removed_from_the_quote():
    assert [aaak.stars(x) for x in (0, 0.25, 0.5, 1, 7)] == ["*", "**", "***", "*****", "*****"]
    line = aaak.encode('a|b "c" d', DAY, "x")
    assert line.split("|")[4] == "\"a/b 'c' d\""
    assert line.count("|") == 6


def test_flags_need_whole_words():
    assert aaak.flags("the rapid growth") == []  # "api" inside "rapid" is no signal
    assert aaak.flags("An API bug") == ["TECHNICAL"]
