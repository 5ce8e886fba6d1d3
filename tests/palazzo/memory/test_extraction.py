"""Deterministic extraction (issue 18): each kind of entity and fact, what must give no fact
(questions, negations, hedges, pointers), offsets, aliases, dates resolved against ``today``,
determinism; and the bench's scores on the committed hand-labelled set."""

import json
from pathlib import Path

import pytest

from palazzo.bench import extraction as bench
from palazzo.memory.extraction import Extraction, Fact, Mention, extract, sure_mentions

LABELLED = Path(__file__).parents[1] / "data" / "extraction_labelled.json"


def mentions(text, **kw):
    return {(m.name, m.kind) for m in extract(text, **kw).mentions}


def facts(text, **kw):
    return {(f.subject, f.predicate, f.object, f.kind) for f in extract(text, **kw).facts}


# -- entities ---------------------------------------------------------------------------------

def test_capitalised_names_skip_sentence_initial_stop_words():
    got = mentions("The weather was fine. My friend Aisha went to Manchester City with Dr. "
                   "Smith and the Paws for a Cause gala.")
    assert {("Aisha", "name"), ("Manchester City", "name"), ("Dr. Smith", "name"),
            ("Paws for a Cause", "name")} <= got
    assert not {n for n, _ in got} & {"The", "My", "I"}


def test_no_weekdays_months_or_nationalities_as_names():
    got = mentions("I go every Monday in March. My partner prefers Mexican takeaway.")
    assert got == set()


def test_aliases_resolve_to_their_canonical_key():
    result = extract("We run everything on k8s and Postgres, and write python.")
    keys = {(m.name, m.key, m.kind) for m in result.mentions}
    assert ("k8s", "kubernetes", "alias") in keys
    assert ("Postgres", "postgresql", "alias") in keys
    assert ("python", "python", "alias") in keys


def test_common_word_aliases_need_a_capital():
    assert mentions("How do people react to rust on a bike?") == set()
    assert ("React", "alias") in mentions("The app is written in React.")


def test_custom_alias_table():
    result = extract("Our team lives in Teams Chat.", aliases={"teams-chat": "microsoft-teams"})
    assert [(m.key, m.kind) for m in result.mentions] == [("microsoft-teams", "alias")]


def test_code_identifiers():
    got = mentions("Call `load_palace` from palazzo.memory.kg, edit utils.py and rename "
                   "parseWhen to parse_when.")
    assert {("load_palace", "code"), ("palazzo.memory.kg", "code"), ("utils.py", "code"),
            ("parseWhen", "code"), ("parse_when", "code")} <= got


def test_dates_and_not_weekdays():
    got = mentions("On March 3, 2023 and 2023-05-01, then 2023/06/02 and 4 July; not Friday.")
    assert {("March 3, 2023", "date"), ("2023-05-01", "date"), ("2023/06/02", "date"),
            ("4 July", "date")} <= got
    assert not any(n == "Friday" for n, _ in got)


def test_quantities_with_units_and_currency():
    got = mentions("It cost $400 for 3 km, 20% off, took 5 hours, a 50-pound bag and two "
                   "days; I read 440 pages three weeks ago.")
    assert {("$400", "quantity"), ("3 km", "quantity"), ("20%", "quantity"),
            ("5 hours", "quantity"), ("50-pound", "quantity"), ("two days", "quantity")} <= got
    assert not any("pages" in n or "weeks" in n for n, _ in got)


def test_offsets_point_at_the_text():
    text = "Yesterday Omar moved to Boston. I use Docker and spent $20 on 2024-01-05."
    result = extract(text)
    for m in result.mentions:
        assert text[m.start:m.end] == m.name
    for f in result.facts:
        assert f.object in text[f.start:f.end] or f.kind == "decision"
    assert [text[f.start:f.end] for f in result.facts if f.predicate == "moved_to"] == \
        ["Yesterday Omar moved to Boston."]


# -- facts ------------------------------------------------------------------------------------

def test_decisions():
    assert ("user", "decided", "explore the coast", "decision") in facts(
        "We decided to explore the coast.")
    assert ("user", "decided", "the IKEA lamp", "decision") in facts(
        "I think I'll go with the IKEA lamp.")
    assert ("user", "decided", "SQLite", "decision") in facts("OK, let's use SQLite.")
    assert {("user", "decided", "Headspace", "decision"),
            ("user", "decided", "Insight Timer", "decision")} <= facts(
        "I think I'll try Headspace and Insight Timer.")


def test_preferences():
    assert ("user", "prefers", "novels", "preference") in facts("I prefer novels.")
    assert ("user", "hates", "cold coffee", "preference") in facts("I hate cold coffee.")
    assert ("user", "favourite_quick_dinner", "noodles with garlic, ginger and greens",
            "preference") in facts("My favourite quick dinner is noodles with garlic, "
                                   "ginger and greens.")
    assert ("my partner", "prefers", "Greek takeaway", "preference") in facts(
        "My partner prefers Greek takeaway, I usually go along with it.")


def test_relations():
    got = facts("My coworker Omar just moved to Boston for a job at Lantern Software. "
                "I live in Springfield. I use Google Calendar for my scheduling. "
                "Felix switched from Bear to Obsidian last week. "
                "My old roommate Keiko started working at Saltmarsh Studios as a nurse.")
    assert {("Omar", "moved_to", "Boston", "relation"),
            ("Omar", "works_at", "Lantern Software", "relation"),
            ("user", "lives_in", "Springfield", "relation"),
            ("user", "uses", "Google Calendar", "relation"),
            ("Felix", "switched_from", "Bear", "relation"),
            ("Felix", "switched_to", "Obsidian", "relation"),
            ("Keiko", "works_at", "Saltmarsh Studios", "relation"),
            ("Keiko", "works_as", "a nurse", "relation")} <= got


def test_dated_events_and_milestones_resolve_when():
    result = extract("On March 3, 2023 I bought a road bike. I adopted a cat called Miso "
                     "last month. Today I passed my driving test.", today="2024-05-10")
    by = {(f.predicate, f.object): f for f in result.facts}
    assert by["bought", "a road bike"].when == "2023-03-03"
    assert by["bought", "a road bike"].kind == "event"
    assert by["adopted", "a cat called Miso"].when == "2024-04-10"
    assert by["passed", "my driving test"].kind == "milestone"
    assert by["passed", "my driving test"].when == "2024-05-10"


def test_relative_times_stay_unresolved_without_today():
    [fact] = extract("I got a new lamp three weeks ago.").facts
    assert (fact.predicate, fact.object, fact.when) == ("got", "a new lamp", None)


def test_an_event_needs_a_time():
    assert facts("I bought a road bike.") == set()


@pytest.mark.parametrize("text", [
    "I don't use Docker.",
    "We never decided to move.",
    "Do you use Docker?",
    "Should I switch from Bear to Obsidian?",
    "If I prefer tea, what should I buy?",
    "I'd like to try parasailing.",
    "I'm thinking of moving to Denver.",
    "I'll have to try that when I'm in Milan.",
    "I like the idea of a photo album.",
    "I moved my savings into an account with a better rate.",
    "I'm definitely going to check out some of these artists.",
])
def test_no_fact_from_questions_negations_hedges_or_pointers(text):
    assert facts(text) == set()


def test_types_and_determinism():
    text = ("My friend Aisha adopted a rabbit called Miso last month. We use k8s; "
            "I prefer tea. On 2024-01-05 I bought a $400 bike.")
    first = extract(text, today="2024-02-01")
    assert isinstance(first, Extraction)
    assert all(isinstance(m, Mention) for m in first.mentions)
    assert all(isinstance(f, Fact) and 0 < f.confidence <= 1 for f in first.facts)
    for _ in range(3):
        again = extract(text, today="2024-02-01")
        assert again.mentions == first.mentions and again.facts == first.facts


def test_empty_and_odd_text():
    assert extract("").mentions == [] and extract("").facts == []
    result = extract("???\n\n... I I I my my\t`\u00e9t\u00e9` 🙂")
    assert result.facts == []


def test_a_subject_joined_to_its_verb_by_a_contraction():
    # "I've lived" has no space between the subject and the verb; it is as much a fact as
    # "I have lived"
    assert facts("I've lived in Barcelona for about three years now.") == {
        ("user", "lives_in", "Barcelona", "relation")}
    assert facts("I'm living in Berlin.") == {("user", "lives_in", "Berlin", "relation")}
    assert facts("We've moved to Lisbon.") == {("user", "moved_to", "Lisbon", "relation")}
    assert ("user", "uses", "Obsidian", "relation") in facts("I've been using Obsidian for notes.")
    assert facts("I've never lived in Rome.") == set()  # still negated


# -- the labelled set and its bench ----------------------------------------------------------

def test_labelled_set_loads_and_is_scored():
    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    assert data["labelling_rules"]
    items = data["items"]
    assert 60 <= len(items) <= 120
    for item in items:
        assert set(item) == {"source", "text", "entities", "facts"}
        assert len(item["text"]) <= 600
        for e in item["entities"]:
            assert e["kind"] in ("name", "alias", "code", "date", "quantity")
            assert e["name"] in item["text"]
        for f in item["facts"]:
            assert f["kind"] in ("decision", "preference", "relation", "event", "milestone")
    assert any(not i["facts"] for i in items)  # turns where nothing should be extracted
    result = bench.run(LABELLED, speed_data=None)
    for what in ("entities", "facts", "facts_lenient"):
        s = result[what]["all"]
        assert 0 <= s["precision"] <= 1 and 0 <= s["recall"] <= 1
        assert s["gold"] > 0
    # Regression floors, well below what was measured (entities 0.98, facts 0.95 precision
    # on 2026-12): a drop under them means a pattern went greedy, not noise.
    assert result["entities"]["all"]["precision"] >= 0.85
    assert result["facts"]["all"]["precision"] >= 0.8
    assert result["facts"]["all"]["recall"] >= 0.5
    assert "speed" not in result
    assert "precision" in bench.table(result)


def test_bench_speed_counts_characters(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([{"haystack_session_ids": ["a", "a"],
                                 "haystack_sessions": [[{"role": "user", "content": "I use Go."}],
                                                       [{"role": "user", "content": "dup"}]]}]))
    sp = bench.speed(path, repeat=1)
    assert sp["turns"] == 1 and sp["chars"] == len("I use Go.") and sp["facts"] == 1


def test_sure_mentions_are_the_alias_and_code_mentions_of_extract():
    text = "Step 1: install k8s and run `deploy_all` with Python. Then Maria checks it."
    sure = sure_mentions(text)
    assert {(m.key, m.kind) for m in sure} == {
        (m.key, m.kind) for m in extract(text).mentions if m.kind in ("alias", "code")}
    assert {m.kind for m in sure} == {"alias", "code"} and "kubernetes" in {m.key for m in sure}
    assert all(text[m.start:m.end] == m.name for m in sure)


# -- real text: noise classes (issue 31) ------------------------------------------------------

REAL = Path(__file__).parents[1] / "data" / "extraction_real.json"


def test_korean_particles_glued_to_latin_names_and_code_are_left_out():
    assert mentions("notion_alert.py를 실행하면 에러가 나요.") == {("notion_alert.py", "code")}
    assert mentions("어제 Notion에서 Slack으로 알림을 보냈어.") == {("Notion", "name"),
                                                         ("Slack", "alias")}
    assert mentions("Python으로 짜고 있는데 requests.get()이 느려.") == {
        ("Python", "alias"), ("requests.get", "code")}
    assert mentions("내일 John이랑 미팅이 있어.") == {("John", "name")}


def test_a_hangul_alias_is_found_with_its_particle_glued():
    aliases = {"민수": "kim-minsu"}
    found = extract("민수가 Python으로 만들었어", aliases).mentions
    assert [(m.name, m.key) for m in found if m.kind == "alias"][0] == ("민수", "kim-minsu")
    assert mentions("이가 아파", aliases=aliases) == set()  # a particle alone is no name


def test_pronouns_interjections_and_fragments_are_not_names():
    assert mentions("Nobody told me the key expired.") == set()
    assert mentions("Anyway, Something went wrong. Yeah, Nothing works.") == set()
    assert mentions("Working on the F") == set()
    assert mentions("Working on the FastAPI migration.") == {("FastAPI", "alias")}
    assert mentions("Bye Caroline. Go Jon! Yeah John, sure.") == {
        ("Caroline", "name"), ("Jon", "name"), ("John", "name")}
    assert mentions('We ran our "Go Green" campaign.') == {("Go Green", "name")}
    assert mentions("Glad I could help. You've got guts. BTW, JUST DOING IT!") == set()
    assert mentions("Life's too short. Nature's amazing. Tom's dog barked.") == {("Tom", "name")}
    assert mentions('The sign says, "Always look on the bright side of life".') == set()
    assert mentions("- Working on the parser\n- Dana wants tea") == {("Dana", "name")}
    assert mentions("I take vitamin D. Mom's birthday is soon. LGBTQ rights matter.") == set()
    assert mentions("I went to a reading last Fri.") == set()


def test_real_chat_facts_hold_their_boundaries():
    assert facts("We love painting together lately.") == {
        ("user", "loves", "painting together", "preference")}
    assert facts("I started volunteering here about a year ago.") == {
        ("user", "started", "volunteering", "event")}
    assert facts("I went to a poetry reading last Fri - it was powerful!") == {
        ("user", "went_to", "a poetry reading", "event")}
    # a spaced dash ends a clause: the first object does not run into the second
    assert facts("I got some great news to share - I joined a gym last week!") == {
        ("user", "joined", "a gym", "event")}
    assert facts("Started hitting the gym last week to stay on track.") == {
        ("user", "started", "hitting the gym", "event")}
    assert facts("Painting landscapes is my favorite!") == {
        ("user", "likes", "Painting landscapes", "preference")}
    assert facts("I took my kids to a park yesterday.") == {
        ("user", "took", "my kids", "event")}


def test_an_event_object_ends_before_an_adverb_of_company_or_manner():
    # "together", "alone", "ourselves" say how or with whom, not what (round 4, test sample)
    assert facts("My friends and I went to a concert together last month.") == {
        ("user", "went_to", "a concert", "event")}
    assert facts("We baked some bread together yesterday!") == {
        ("user", "baked", "some bread", "event")}
    assert facts("I went to the lake alone last weekend.") == {
        ("user", "went_to", "the lake", "event")}
    assert facts("We painted the fence ourselves last weekend.") == {
        ("user", "painted", "the fence", "event")}
    assert facts("We love painting together lately.") == {  # a taste keeps its "together"
        ("user", "loves", "painting together", "preference")}


def test_took_someone_to_do_something_is_the_people_taken():
    assert facts("I took my fam camping in the mountains last week.") == {
        ("user", "took", "my fam", "event")}
    assert facts("Yesterday I took the kids fishing at the lake.") == {
        ("user", "took", "the kids", "event")}
    assert facts("Last weekend we took our dog for a long walk.") == {
        ("user", "took", "our dog", "event")}
    # a thing taken keeps its words
    assert facts("I took my driving test last week.") == {
        ("user", "took", "my driving test", "event")}
    assert facts("Last week I took my daughter's wedding photos.") == {
        ("user", "took", "my daughter's wedding photos", "event")}


def test_liking_the_thing_at_hand_is_a_reaction_not_a_taste():
    assert facts("Wow, that's gorgeous! I love the bold colors.") == set()
    assert facts("I like the self-care theme, so calming.") == set()
    assert facts("I love the sea in the picture.") == set()
    # a kind of place or weather said with "the" is a taste; so is any "prefer"
    assert facts("I love the outdoors.") == {("user", "loves", "the outdoors", "preference")}
    assert facts("I prefer the train.") == {("user", "prefers", "the train", "preference")}


def test_an_object_ends_before_a_second_verb_phrase():
    assert facts("I'm passionate about protecting the environment and would like to study "
                 "abroad.") == {("user", "likes", "protecting the environment", "preference")}
    assert facts("I love hiking and can go most weekends.") == {
        ("user", "loves", "hiking", "preference")}


# -- round 5: the error classes of test2 (2026-12-06) -------------------------------------------

def test_a_decision_to_think_about_something_is_a_hedge():
    for text in ("Yeah, Caroline! I'll start thinking about what we can do.",
                 "I'm going to think about it some more.", "I decided to consider my options.",
                 "I'll start figuring out the budget.", "I'm gonna start planning the trip.",
                 "I think I'll start wondering about the move."):
        assert facts(text) == set(), text
    # a decision to do something stays one
    assert facts("I'll start looking into PhD programs.") == {
        ("user", "decided", "start looking into PhD programs", "decision")}
    assert facts("I decided to start running.") == {
        ("user", "decided", "start running", "decision")}


def test_got_with_a_state_is_no_thing_got():
    for text in ("Last month I got hurt and had to rest.", "I got stuck in traffic yesterday.",
                 "I got sick last week.", "We got caught in the rain yesterday.",
                 "Last night I got home late.", "I got better at it last year."):
        assert facts(text) == set(), text
    assert facts("I got a puppy two weeks ago!") == {("user", "got", "a puppy", "event")}
    assert facts("Got the tattoo a few years ago.") == {("user", "got", "the tattoo", "event")}
    assert facts("I got tickets for the show yesterday.") == {
        ("user", "got", "tickets for the show", "event")}
    assert facts("I got 3 new plants last week.") == {("user", "got", "3 new plants", "event")}


def test_a_verb_whose_object_was_moved_before_it_gives_no_object():
    # a relative clause ("pottery, which I use for ..."; "something I love is awesome"): what
    # follows the verb is not its object
    assert facts("I had to take a break from pottery, which I use for self-expression and "
                 "peace.") == set()
    assert facts("Being my own boss and doing something I love is awesome.") == set()
    assert facts("What I love is the quiet.") == set()
    assert facts("That's the app which I use daily.") == set()
    assert facts("The tool that I use at work is slow.") == set()
    # an object in its place still counts
    assert facts("I use Notion for my notes.") == {("user", "uses", "Notion", "relation")}
    assert facts("I love to dance.") == {("user", "loves", "to dance", "preference")}


def test_a_decided_action_leaves_out_its_purpose():
    assert facts("That's awesome, Gina! Yesterday I chose to go to networking events to make "
                 "things happen.") == {("user", "decided", "go to networking events",
                                        "decision")}
    assert facts("I decided to take a pottery class to express myself.") == {
        ("user", "decided", "take a pottery class", "decision")}
    assert facts("I'm going to join a gym in order to get fit.") == {
        ("user", "decided", "join a gym", "decision")}
    assert facts("We love going to the park to relax.") == {
        ("user", "loves", "going to the park", "preference")}
    # an infinitive that is the choice itself, or part of a thing, stays
    assert facts("I decided to learn to swim.") == {
        ("user", "decided", "learn to swim", "decision")}
    assert facts("Last weekend, I participated in a community event to raise money for a good "
                 "cause.") == {("user", "participated_in",
                                "a community event to raise money for a good cause", "event")}


def test_a_list_with_a_serial_comma_is_kept_whole():
    assert facts("Thanks, Maria! We love climbing, sliding, and playing games.") == {
        ("user", "loves", "climbing, sliding, and playing games", "preference")}
    assert facts("I love hiking, biking, or swimming.") == {
        ("user", "loves", "hiking, biking, or swimming", "preference")}
    # an ", and" that opens a new clause still ends the object
    assert facts("I love hiking, and we go every weekend.") == {
        ("user", "loves", "hiking", "preference")}
    assert facts("I love hiking, biking, and I go every weekend.") == {
        ("user", "loves", "hiking", "preference")}


def test_a_second_clause_of_a_sentence_gives_its_event():
    # the first subject's match ("It made ...", "I painted it") no longer hides the second
    assert facts("It made me reflect on how far I've come since I started transitioning three "
                 "years ago.") == {("user", "started", "transitioning", "event")}
    assert facts("I painted it after I visited the beach last week.") == {
        ("user", "visited", "the beach", "event")}


def test_tastes_in_the_perfect_and_the_progressive():
    assert facts("I've been into dancing since I was a kid.") == {
        ("user", "likes", "dancing", "preference")}
    assert facts("I'm really enjoying my new job.") == {
        ("user", "enjoys", "my new job", "preference")}
    assert facts("We both love helping others.") == {
        ("user", "loves", "helping others", "preference")}
    assert facts("We're all passionate about using tech for good in our community.") == {
        ("user", "likes", "using tech for good", "preference")}
    assert facts("They remind me why I'm so passionate about making a positive impact.") == {
        ("user", "likes", "making a positive impact", "preference")}
    # a likeness, a reaction, the listener's thing: no taste
    for text in ("I'm just like my mom.", "I'm like my dad.", "I'm enjoying myself.",
                 "I'm really loving it.", "I love your painting!", "I really like your idea.",
                 "Yeah, I love to.", "I love all the yellow leaves, it looks so cozy."):
        assert facts(text) == set(), text


def test_more_past_actions_make_events_when_they_name_a_thing():
    assert facts("I went on a mountaineering trip last week with some workmates.") == {
        ("user", "went_on", "a mountaineering trip", "event")}
    assert facts("I went hiking last week.") == {("user", "went", "hiking", "event")}
    assert facts("I emailed some wholesalers and one replied today!") == {
        ("user", "emailed", "some wholesalers", "event")}
    assert facts("Lost my job as a banker yesterday.") == {
        ("user", "lost", "my job as a banker", "event")}
    assert facts("Just last week, I found a violin concert that we all enjoyed.") == {
        ("user", "found", "a violin concert", "event")}
    for text in ("I found myself crying yesterday.", "I lost track of time yesterday.",
                 "I went back home last week.", "I did really well last week.",
                 "Last week, my grandma passed away.", "Had a wild week, my car broke down.",
                 "Oh, and here's a pic I got from my walk last week."):
        assert facts(text) == set(), text


def test_an_event_object_ends_before_where_it_went_unless_it_is_a_trip():
    assert facts("I donated my old car to a homeless shelter yesterday.") == {
        ("user", "donated", "my old car", "event")}
    assert facts("I just got back from a road trip to the beach house last week.") == {
        ("user", "got_back_from", "a road trip to the beach house", "event")}


def test_descriptions_are_not_classifications():
    for text in ("Kickboxing is a perfect way to stay in shape.",
                 "Finding my Zen is a mix of things."):
        assert facts(text) == set(), text
    # whom an activity is done with is no part of it (round 6, from test4's labels)
    assert facts("I love camping trips with my fam, 'cause nature brings peace.") == {
        ("user", "loves", "camping trips", "preference")}


def test_real_chat_promises_idioms_and_capitals_give_no_fact():
    for text in ("We'll make some awesome memories!", "I'll get the video to you soon!",
                 "I'll try my best.", "We'll get through this!", "Max and I had a blast last "
                 "summer.", "Dance is my stress fix too.", "Feels like a dream come true!",
                 "I love how art lets us get our emotions out.", "Read the book today!"):
        assert facts(text) == set(), text
    # a relation, or a name the text knows, still makes "X is my Y" a fact
    assert facts("Priya is my sister.") == {("Priya", "is", "my sister", "relation")}


def test_the_real_set_keeps_its_labels_and_provenance():
    import hashlib

    data = json.loads(REAL.read_text(encoding="utf-8"))
    assert "CC BY-NC 4.0" in data["licence"] and "LoCoMo" in data["provenance"]
    assert "selection_rule" in data and "history" in data
    # the labels are the ones fixed before the extractor ran on each sample
    for name, digest in data["labels_sha256"].items():
        text = json.dumps(data[name], ensure_ascii=False, sort_keys=True)
        assert hashlib.sha256(text.encode()).hexdigest() == digest, name
    assert set(data["labels_sha256"]) == {"items", "b_items", "c_items", "test_items",
                                          "test2_items", "test3_items", "test4_items",
                                          "test5_items"}
    assert [len(data[k]) for k in ("items", "b_items", "c_items", "test_items", "test2_items",
                                   "test3_items", "test4_items", "test5_items")] == [
        146, 145, 145, 145, 146, 143, 291, 290]
    assert "NOT real" in data["written_items_note"] and len(data["written_items"]) == 35


def test_bench_scores_the_real_set_and_counts_noise():
    result = bench.run(REAL, speed_data=None)
    assert set(result) >= {"entities", "facts", "noise", "b", "c", "test", "test2", "test3",
                           "test4", "test5", "written"}
    assert result["test2"]["items"] == 146
    assert result["test3"]["items"] == 143  # each sample run once is scored as its own row
    assert result["test4"]["items"] == 291
    assert result["test5"]["items"] == 290
    # Floors below what was measured (2026-12-06): test sample facts P 0.75 when run once
    # (1.00 after rounds 4 and 5, fitted to it), test2 facts P 0.57 when run once (1.00 after
    # round 5, fitted to it), held-out test3 facts P 0.60 (3/5), entities P 0.97; the written
    # Korean/mixed set has no particle, fragment or pronoun noise left.
    assert result["test"]["facts"]["all"]["precision"] >= 0.6
    assert result["test"]["entities"]["all"]["precision"] >= 0.9
    assert result["test2"]["facts"]["all"]["precision"] >= 0.8
    assert result["test2"]["entities"]["all"]["precision"] >= 0.9
    assert result["test3"]["facts"]["all"]["precision"] >= 0.5
    assert result["test3"]["entities"]["all"]["precision"] >= 0.9
    # test5, held out, run once after round 6: facts P 1.00 (15/15), entities P 0.97
    assert result["test5"]["facts"]["all"]["precision"] >= 0.8
    assert result["test5"]["entities"]["all"]["precision"] >= 0.9
    for name in ("noise",):
        assert result[name]["particle"] == result[name]["fragment"] == 0
    noise = result["written"]["noise"]
    assert noise["particle"] == noise["fragment"] == noise["pronoun"] == 0
    assert bench.noise_class("notion_alert.py를") == "particle"
    assert bench.noise_class("Working on the F") == "fragment"
    assert bench.noise_class("Nobody") == bench.noise_class("Bye Caroline") == "pronoun"
    assert bench.noise_class("Caroline") is None
    assert "test sample" in bench.table(result)


def test_the_extract_operation_takes_facts_from_the_persons_turns_unless_asked():
    from palazzo import call
    from palazzo.palace import Palace

    p = Palace(clock=lambda: 1_714_521_600.0, extract_on_add=False)
    call(p, "import_conversation", {"conversation": "c1", "messages": [
        {"role": "user", "content": "I live in Porto."},
        {"role": "assistant", "content": "I moved to Lisbon last year."}]})
    call(p, "extract", {})
    assert {(t.subject, t.predicate, t.object) for t in p.kg.triples.values()} == {
        ("user", "lives_in", "porto")}
    call(p, "extract", {"assistant": True})  # asked for: the assistant's words give facts too
    assert ("user", "moved_to", "lisbon") in {
        (t.subject, t.predicate, t.object) for t in p.kg.triples.values()}


def test_a_relative_that_clause_is_read_without_failing_and_a_said_that_keeps_its_fact():
    # "that" with no "which" before it once failed on the missing group (dev50's text)
    assert [f.object for f in extract("The tool that I use at work is slow.", {}).facts] == []
    said = extract("I realised that I love hiking in the hills.", {}).facts
    assert [(f.predicate, f.object) for f in said] == [("loves", "hiking in the hills")]


def test_round_six_ends_things_where_a_reader_does():
    # a relative clause ends a chosen thing; the listener's things are no choice
    assert facts("I chose furniture that looks great and is comfy too.") == {
        ("user", "decided", "furniture", "decision")}
    assert facts("Yeah, Jon, I'll watch your routine!") == set()
    # a name after a noun of role says where: one thing
    assert facts("I also lost my job at Door Dash this month.") == {
        ("user", "lost", "my job at Door Dash", "event")}
    # the purpose of going is no part of the place
    assert facts("Yesterday, I went to a fair to show off my studio.") == {
        ("user", "went_to", "a fair", "event")}
    # company is no part of a liked activity; a bare "together" stays
    assert facts("I love spending time with the friends I have.") == {
        ("user", "loves", "spending time", "preference")}
    assert facts("We love painting together lately.") == {
        ("user", "loves", "painting together", "preference")}
    # coordinated adjectives before a comma: where the thing ends is unsure, so no fact
    assert facts("Now I'm passionate about creating a safe, inviting place for people.") \
        == set()
