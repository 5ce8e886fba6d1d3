"""Long multi-session conversations with questions: palazzo's own retrieval development set.

:func:`make` returns questions in LongMemEval's field names (question_id, question_type,
question, answer, question_date, haystack_session_ids, haystack_dates, haystack_sessions,
answer_session_ids). Each person gets 10–30 dated sessions spanning months, each 2,000–6,000
characters (≈ 500–1,500 tokens) of user and assistant turns about everyday topics; among them
sit planted facts: stable ones (a sibling's job, a favourite cuisine), facts that change (the
city, the employer, a habit switched from one thing to another: the later session holds the
current value), a pet adopted and an event on a known date. Filler sessions reuse the same
topic words and carry near-miss facts about other people (a coworker who moved, a friend's
dog), so that word overlap alone does not find the evidence.

Questions come in three ``question_type`` values: ``single-hop`` (one evidence session),
``multi-hop`` (two sessions combined: where did I live when I adopted the dog?) and
``temporal`` (the current value of an updated fact, whose evidence is the latest session only;
the date of an event; before/after). They are written from their own templates, with other
words than the evidence. Every question of a person carries that person's whole haystack.

Deterministic: the same ``(people, seed)`` gives the same list, byte for byte (stdlib
``random`` only, so it runs in Pyodide too).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

MIN_CHARS, MAX_CHARS = 2_000, 6_000  # a session's text (≈ 500–1,500 tokens)
MIN_SESSIONS, MAX_SESSIONS = 10, 30
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # LongMemEval's haystack_dates format

CITIES = ["Lisbon", "Denver", "Toronto", "Austin", "Portland", "Melbourne", "Edinburgh",
          "Seattle", "Munich", "Barcelona", "Chicago", "Dublin", "Vancouver", "Boston",
          "Copenhagen", "Minneapolis", "Valencia", "Leeds"]
COMPANIES = ["Northwind Logistics", "Brightpath Health", "Cobalt Analytics", "Redfern Media",
             "Bluestone Bank", "Greenleaf Foods", "Halcyon Games", "Meridian Insurance",
             "Tidewater Energy", "Lantern Software", "Quarry Labs", "Saltmarsh Studios"]
ROLES = ["data analyst", "product manager", "nurse", "high school teacher", "software engineer",
         "graphic designer", "accountant", "project coordinator", "UX researcher",
         "sales lead", "physiotherapist", "copywriter"]
SPECIES = ["dog", "cat", "rabbit", "parrot"]
PET_NAMES = ["Biscuit", "Miso", "Pepper", "Luna", "Mochi", "Pickles", "Hazel", "Rocket",
             "Nutmeg", "Waffles", "Ziggy", "Clementine", "Bramble", "Toffee"]
PEOPLE = ["Dana", "Priya", "Marco", "Elena", "Tom", "Keiko", "Sam", "Ruth", "Omar", "Lena",
          "Jonas", "Aisha", "Felix", "Nora"]
CUISINES = ["Thai", "Ethiopian", "Mexican", "Korean", "Lebanese", "Japanese", "Peruvian",
            "Indian", "Greek", "Vietnamese"]
RELATIONS = ["sister", "brother", "cousin"]


@dataclass(slots=True)
class Switch:
    """A habit that changes: what it is about, its options and the words to say it."""

    about: str
    options: list[str]
    was: list[str]  # statements of the old value, "{x}" the value
    now: list[str]  # statements of the change, "{x}" old, "{y}" new
    ask: list[str]  # questions for the current value


SWITCHES = [
    Switch("notes", ["Evernote", "Notion", "Obsidian", "OneNote", "Bear"],
           ["All my work notes live in {x}, I keep a page per project.",
            "I've been writing everything down in {x} for a couple of years."],
           ["I finally ditched {x} and moved all my notes over to {y}.",
            "Big change this week: I switched from {x} to {y} for note-taking."],
           ["Which app do I rely on these days to jot things down?",
            "What tool am I using right now to keep my notes?"]),
    Switch("milk", ["oat milk", "almond milk", "soy milk", "whole milk", "coconut milk"],
           ["I always take {x} in my morning coffee.",
            "My coffee isn't right without a splash of {x}."],
           ["I stopped buying {x}; it's {y} in my coffee from now on.",
            "My coffee order changed, I swapped {x} for {y}."],
           ["What do I put in my coffee at the moment?",
            "These days, what goes into my morning cup besides the coffee?"]),
    Switch("commute", ["driving", "cycling", "taking the train", "taking the bus", "walking"],
           ["My commute is {x}, roughly forty minutes each way.",
            "I get to the office by {x} most days."],
           ["I gave up {x} to work and started {y} instead.",
            "New routine: no more {x}, I'm {y} to the office now."],
           ["How do I get to work nowadays?",
            "What's my current way of travelling to the office?"]),
    Switch("workout", ["yoga", "swimming", "spin classes", "weightlifting", "rock climbing"],
           ["My main exercise is {x}, three times a week.",
            "I've been doing {x} regularly to stay fit."],
           ["I dropped {x} and signed up for {y} instead.",
            "Switched things up: {y} has replaced {x} as my workout."],
           ["What's my go-to form of exercise right now?",
            "Which workout am I currently sticking with?"]),
]


@dataclass(slots=True)
class Event:
    """A dated event: said on the day it happened (so its date is the session's)."""

    said: list[str]
    ask: str  # verb phrase for the questions: "When did I {ask}?"
    noun: str
    key: str  # a word every statement of it holds
    alias: str  # what the multi-hop questions call it


EVENTS = [
    Event(["I ran the city half marathon this morning, 21 kilometres, legs are jelly.",
           "Just crossed the finish line of my first half marathon today!"],
          "finish that long-distance race", "half marathon", "marathon", "21 km race"),
    Event(["Today I passed my driving test on the first attempt.",
           "Got through my driving exam today, the examiner was surprisingly friendly."],
          "get my licence to drive", "driving test", "driving", "road exam"),
    Event(["We threw my parents a surprise 40th anniversary party tonight.",
           "Tonight was the big anniversary party for my mum and dad."],
          "throw the party for my parents", "anniversary party", "anniversary",
          "family celebration"),
    Event(["I gave my first conference talk today, about forty people came.",
           "Presented at a conference for the first time today, nerves and all."],
          "present in front of a conference audience", "conference talk", "conference",
          "first presentation"),
]

# Filler: a topic's nouns, and sentences about them. "{a}", "{b}" are two nouns of the topic.
TOPICS: dict[str, list[str]] = {
    "cooking": ["risotto", "sourdough starter", "cast iron pan", "meal prep", "spice rack",
                "slow cooker", "banana bread", "stir fry", "weeknight dinners", "chickpea curry",
                "pizza dough", "roast vegetables", "knife skills", "leftovers", "soup stock"],
    "travel": ["train tickets", "carry-on bag", "travel insurance", "hostel", "itinerary",
               "jet lag", "window seat", "city break", "packing list", "passport renewal",
               "airport lounge", "road trip", "rental car", "day trip", "museum pass"],
    "work": ["standup meeting", "quarterly review", "deadline", "inbox", "one-on-one",
             "project plan", "spreadsheet", "presentation slides", "manager", "promotion",
             "team offsite", "performance goals", "status report", "hiring round", "overtime"],
    "health": ["sleep schedule", "back pain", "blood pressure", "vitamin D", "hydration",
               "doctor's appointment", "allergy season", "posture", "stress", "dentist",
               "physio exercises", "headaches", "screen time", "step count", "check-up"],
    "hobbies": ["watercolour painting", "guitar practice", "board games", "crochet",
                "photography", "gardening", "chess openings", "pottery", "reading list",
                "birdwatching", "baking", "film camera", "jigsaw puzzles", "book club",
                "houseplants"],
    "money": ["emergency fund", "monthly budget", "credit card", "index funds", "rent",
              "savings account", "tax return", "subscriptions", "grocery bill", "pension",
              "side income", "car loan", "utility bills", "spending tracker", "insurance"],
    "home": ["living room", "bookshelf", "paint colour", "landlord", "kitchen drawers",
             "closet", "balcony", "laundry", "vacuum", "curtains", "desk setup",
             "spare bedroom", "neighbours", "recycling", "leaky tap"],
    "tech": ["laptop battery", "password manager", "phone storage", "backup drive", "router",
             "smartwatch", "browser tabs", "photo library", "headphones", "software update",
             "email filters", "calendar app", "keyboard", "cloud storage", "printer"],
}
USER_LINES = [
    "I've been thinking about {a} lately and I'm not sure {b} is worth the effort.",
    "Can you help me sort out {a}? I also want to keep {b} in mind.",
    "Quick question about {a}: what's a sensible way to start?",
    "So far {a} has been fine, but {b} keeps getting in the way.",
    "I read somewhere that {a} matters more than {b}. Is that true?",
    "My plan for this weekend is {a}, and maybe some {b} if there's time.",
    "Honestly, {a} stresses me out a bit more than it should.",
    "A friend recommended looking into {b} before worrying about {a}.",
    "What would you do about {a} if you only had an hour a week?",
    "Last time I tried {a} it went badly, mostly because of {b}.",
    "Could you give me a checklist for {a}?",
    "I keep putting off {a}; any tips to make it less of a chore?",
    "How do people usually balance {a} with {b}?",
    "That makes sense. What about {b}, though?",
    "Thanks, that helps. One more thing on {a}.",
]
ASSISTANT_LINES = [
    "Good question. With {a}, the main thing is to start small and be consistent.",
    "A common approach is to set aside a fixed slot each week for {a}.",
    "It depends on your situation, but {b} usually pays off over time.",
    "Many people find that writing down a short plan for {a} makes it easier to follow.",
    "If {b} keeps getting in the way, try tackling it first while your energy is high.",
    "You don't need to get {a} perfect; a rough version you actually use beats a perfect "
    "one you never start.",
    "Consider tracking {a} for two weeks before changing anything, so you know your baseline.",
    "One option is to combine {a} with {b}, which saves time and keeps you motivated.",
    "Be careful not to overcommit: pick one change to {a} and let it settle.",
    "Here is a simple way to think about it: what does {a} cost you, and what does it give "
    "back?",
    "If you're unsure, ask someone who has done {b} for a while; their shortcuts are gold.",
    "Keep the setup for {a} visible and easy to reach, friction is what kills habits.",
    "For {b}, a weekly review of ten minutes is usually enough.",
    "Try to notice when {a} feels easy; those conditions are worth repeating.",
    "It's also fine to decide that {b} isn't a priority right now.",
    "Breaking {a} into three or four small steps often removes most of the dread.",
    "A useful rule of thumb is to spend most of your effort where {a} and {b} overlap.",
]
# Concrete sentences a topic (either speaker), some in the questions' own words (city,
# living, employer, these days, called), so filler competes with the evidence.
DETAILS: dict[str, list[str]] = {
    "cooking": [
        "I added smoked paprika and a squeeze of lime, then let it simmer for twenty minutes.",
        "The dough needs a long cold proof in the fridge, ideally overnight.",
        "These days I cook a big batch on Sunday and eat it until Wednesday.",
        "Toasting the cumin seeds in a dry pan first makes a surprising difference.",
        "My favourite quick dinner at the moment is noodles with garlic, ginger and greens.",
        "A sharp chef's knife and a heavy chopping board are worth more than gadgets.",
        "Salt the pasta water properly and save a cup of it for the sauce.",
        "Which spices go well with roasted cauliflower and lentils?",
    ],
    "travel": [
        "Booking the train three weeks ahead was half the price of the flight.",
        "Which city is easier to explore on foot for a long weekend?",
        "I always pack a scarf, a power bank and a paperback in my carry-on.",
        "The old town is lovely early in the morning before the tour groups arrive.",
        "Living out of a backpack for ten days taught me how little I actually need.",
        "A city card usually covers public transport and a handful of museums.",
        "We rented bikes and rode along the river to the harbour.",
        "Check whether your passport has at least six months left before you book.",
    ],
    "work": [
        "My manager wants the status report every Friday before noon.",
        "The company is reorganising the teams again, nobody knows where they will land.",
        "Working from home two days a week has made a real difference to my focus.",
        "The interview had three rounds and a take-home exercise.",
        "Our employer finally approved the budget for new laptops.",
        "I blocked two hours each morning for deep work and declined the optional meetings.",
        "Negotiating salary is easier when you know the market rate for the role.",
        "Writing a short summary after each meeting saves a lot of back-and-forth.",
    ],
    "health": [
        "I've been sleeping better since I stopped looking at my phone after ten.",
        "The physio gave me three stretches for my lower back and a foam roller.",
        "Drinking a glass of water before each meal is an easy habit to keep.",
        "My doctor suggested a blood test to check iron and vitamin levels.",
        "A ten-minute walk after lunch helps more with the afternoon slump than coffee.",
        "Which exercises are gentle on the knees but still build strength?",
        "Stretching at my desk every hour has eased the tension in my shoulders.",
        "I try to get some daylight in the morning, even on grey days.",
    ],
    "hobbies": [
        "I started a small herb garden on the windowsill: basil, mint and thyme.",
        "The pottery studio near me runs a six-week beginners' course.",
        "Our board game night has grown to eight people, we need a bigger table.",
        "I'm learning fingerpicking on the guitar, slowly and painfully.",
        "The shelter down the road is always looking for volunteers to walk the animals.",
        "I photographed the harbour at sunrise with my old film camera.",
        "My book club picked a six-hundred-page novel, which was ambitious.",
        "Watercolour is harder than it looks, the paper buckles if you use too much water.",
    ],
    "money": [
        "I moved my savings into an account with a better interest rate.",
        "Rent went up again this year, it's now almost half of my take-home pay.",
        "I cancelled three streaming subscriptions I had forgotten about.",
        "A simple rule: pay yourself first, automatically, on payday.",
        "The tax return took a whole weekend because I had lost two receipts.",
        "Living in a big city is expensive, but I don't need a car.",
        "Should I pay off the credit card first or build the emergency fund?",
        "My employer matches pension contributions up to five percent.",
    ],
    "home": [
        "The landlord finally fixed the boiler after three weeks of cold showers.",
        "We painted the hallway a warm off-white and it feels twice as big.",
        "Unpacking the last boxes took longer than the move itself.",
        "The neighbourhood has a great bakery and a quiet park nearby.",
        "Which plants survive in a dark flat with north-facing windows?",
        "I built a bookshelf from a kit and only had two screws left over.",
        "Apartment hunting in a new city is exhausting, every viewing is booked out.",
        "Our balcony gets the evening sun, perfect for tomatoes.",
    ],
    "tech": [
        "My laptop battery barely lasts two hours now, maybe it's time to replace it.",
        "I set up a password manager and changed every reused password.",
        "The router kept dropping the connection until I changed the channel.",
        "Which backup strategy is enough for family photos?",
        "I turned off most notifications and my phone feels calmer.",
        "The new phone moved all my apps and photos over in under an hour.",
        "I keep forty browser tabs open and pretend I'll read them later.",
        "A mechanical keyboard is loud but lovely to type on.",
    ],
}
LIST_HEADS = ["Here are a few ideas:", "A quick checklist:", "Some options to consider:",
              "What I would try, in order:"]
# Near-miss facts about other people: the questions' words, the wrong entity.
DECOYS = [
    "My coworker {p} just moved to {city} for a job at {company}.",
    "My friend {p} adopted a {species} called {pet} last month.",
    "{p} from book club switched from {opt1} to {opt2} and won't stop talking about it.",
    "My neighbour {p} told me all about their {event} last year.",
    "{p} is a {role} and says the hours are brutal.",
    "{p}'s {rel} works as a {role}, or at least did last time we spoke.",
    "{p} wants to get a {species} too, maybe one like {pet}.",
    "We might visit {city} in the spring, {p} keeps recommending it.",
    "{p} got a {species} named {pet}, it's adorable.",
    "My old roommate {p} started working at {company} as a {role}.",
    "{p} lives in {city} now and loves {cuisine} food there.",
    "My partner prefers {cuisine} takeaway, I usually go along with it.",
]


@dataclass(slots=True)
class Near:
    """What a person's decoys borrow from them half the time (the pet's species, the habit,
    the event, the relation) and the pet and sibling names they must not use, so near misses
    share the questions' words without becoming a second answer."""

    species: str
    switch: Switch
    event: str
    rel: str
    pet: str
    kin: str


@dataclass(slots=True)
class Plant:
    """A fact sentence for a session (index) and the value a reader must find there."""

    session: int
    text: str
    topic: str


@dataclass(slots=True)
class Asked:
    """A generated question: its LongMemEval record, the value each evidence session must
    contain (session id → value, or the session's date for date questions) and, for updated
    facts, the earlier session holding the superseded value (session id → old value)."""

    record: dict[str, Any]
    keys: dict[str, str] = field(default_factory=dict)
    superseded: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Draft:
    """A question before the haystack is attached: session indices instead of ids."""

    qtype: str
    question: str
    answer: str
    keys: dict[int, str]
    superseded: dict[int, str] = field(default_factory=dict)


def make(people: int, seed: int = 0) -> list[dict[str, Any]]:
    """Return the questions of ``people`` generated people (6–8 each) as LongMemEval records.

    The development set's entry point; :func:`generate` gives the same questions with the
    values their evidence must hold. Cost: O(people × sessions × session length),
    about 3 ms a person."""
    return [a.record for a in generate(people, seed)]


def generate(people: int, seed: int = 0) -> list[Asked]:
    """Return every person's questions with their evidence values (see :class:`Asked`).

    One ``random.Random(seed)`` drives everything, so the output is a pure function of
    ``(people, seed)``. Cost: as :func:`make`."""
    if people < 1:
        raise ValueError("people must be at least 1")
    rng = random.Random(seed)
    return [a for p in range(people) for a in _person(rng, p, seed)]


def _person(rng: random.Random, p: int, seed: int) -> list[Asked]:
    """Return one person's questions over one shared haystack: plan the facts, write the
    sessions around them, then attach ids, dates and the haystack. Cost: O(sessions)."""
    n = rng.randint(MIN_SESSIONS, MAX_SESSIONS)
    dates = _dates(rng, n)
    plants, drafts, near = _plan(rng, n, dates)
    sessions = [_session(rng, [pl for pl in plants if pl.session == i], near)
                for i in range(n)]
    ids = [f"lc{seed}-p{p}-s{i:02d}" for i in range(n)]
    stamps = [d.strftime(DATE_FORMAT) for d in dates]
    asked_on = (dates[-1] + timedelta(days=rng.randint(1, 20))).strftime(DATE_FORMAT)
    chosen = _choose(rng, drafts)
    out = []
    for k, d in enumerate(chosen):
        evidence = sorted(d.keys)
        out.append(Asked(
            record={"question_id": f"lc{seed}-p{p}-q{k}", "question_type": d.qtype,
                    "question": d.question, "answer": d.answer, "question_date": asked_on,
                    "haystack_session_ids": list(ids), "haystack_dates": list(stamps),
                    "haystack_sessions": sessions,
                    "answer_session_ids": [ids[i] for i in evidence]},
            keys={ids[i]: d.keys[i] for i in evidence},
            superseded={ids[i]: v for i, v in d.superseded.items()}))
    return out


def _dates(rng: random.Random, n: int) -> list[datetime]:
    """Return ``n`` increasing session datetimes, 3–16 days apart (months in all)."""
    t = datetime(2023, 1, 2) + timedelta(days=rng.randint(0, 200))
    out = []
    for _ in range(n):
        t += timedelta(days=rng.randint(3, 16))
        out.append(t.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59)))
    return out


def _plan(rng: random.Random, n: int,
          dates: list[datetime]) -> tuple[list[Plant], list[Draft], Near]:
    """Return the person's planted facts, every question they support and what their
    decoys borrow.

    Ten distinct sessions hold the ten fact sentences: an old and a new city, an old and a
    new employer, an old and a new habit (old before new), the pet, the event, the sibling
    and the cuisine. Cost: O(1)."""
    slots = rng.sample(range(n), 10)
    pairs = [tuple(sorted(slots[i : i + 2])) for i in (0, 2, 4)]
    pet_at, event_at, kin_at, food_at = slots[6:]
    city, job, habit = pairs
    towns = rng.sample(CITIES, 2)
    firms = rng.sample(COMPANIES, 2)
    roles = rng.sample(ROLES, 3)
    sw = rng.choice(SWITCHES)
    was, now = rng.sample(sw.options, 2)
    species, pet = rng.choice(SPECIES), rng.choice(PET_NAMES)
    ev = rng.choice(EVENTS)
    rel, kin = rng.choice(RELATIONS), rng.choice(PEOPLE)
    food = rng.choice(CUISINES)
    pick = rng.choice
    plants = [
        Plant(city[0], pick(["I've lived in {x} for about three years now, I love my "
                             "neighbourhood.", "Life in {x} is good, although the winters "
                             "here are long."]).format(x=towns[0]), "home"),
        Plant(city[1], pick(["We finally relocated: the boxes are unpacked and I'm "
                             "officially a resident of {y}.", "Moving day is done, I now "
                             "live in {y} and I still get lost on the way to the shops."])
              .format(y=towns[1]), "home"),
        Plant(job[0], pick(["At {x} I work as a {r}, mostly with the finance team.",
                            "My employer is {x}; I've been a {r} there since graduating."])
              .format(x=firms[0], r=roles[0]), "work"),
        Plant(job[1], pick(["Today was my first day at {y}, where I'm now a {r}.",
                            "I handed in my notice and accepted an offer from {y} as a {r}."])
              .format(y=firms[1], r=roles[1]), "work"),
        Plant(habit[0], pick(sw.was).format(x=was), "health"),
        Plant(habit[1], pick(sw.now).format(x=was, y=now), "health"),
        Plant(pet_at, pick(["We adopted a {s} from the shelter this week and named it {n}.",
                            "Meet {n}, the {s} we just brought home from the rescue centre."])
              .format(s=species, n=pet), "hobbies"),
        Plant(event_at, pick(ev.said), "hobbies"),
        Plant(kin_at, pick(["My {rel} {k} works as a {r} and has the strangest shifts.",
                            "{k}, my {rel}, has been a {r} for years now."])
              .format(rel=rel, k=kin, r=roles[2]), "money"),
        Plant(food_at, pick(["Honestly, {c} cooking is my absolute favourite, I could eat "
                             "it every night.", "Nothing beats a plate of {c} food for me."])
              .format(c=food), "cooking"),
    ]
    city_then = lambda i: (city[0], towns[0]) if i < city[1] else (city[1], towns[1])  # noqa: E731
    job_then = lambda i: (job[0], firms[0]) if i < job[1] else (job[1], firms[1])  # noqa: E731
    day = dates[event_at].strftime("%Y/%m/%d")
    drafts = [
        Draft("single-hop", pick([f"What did I name the {species} I got?",
                                  f"What's my {species} called?"]), pet, {pet_at: pet}),
        Draft("single-hop", pick([f"What does my {rel} do for a living?",
                                  f"What is {kin}'s profession?"]), roles[2],
              {kin_at: roles[2]}),
        Draft("single-hop", pick(["Which cuisine do I like best?",
                                  "What kind of food is my favourite?"]), food, {food_at: food}),
        Draft("single-hop", pick([f"What was my role at {firms[0]}?",
                                  f"What position did I hold at {firms[0]}?"]), roles[0],
              {job[0]: roles[0]}),
        Draft("multi-hop", pick([f"Which city was I living in when I got {pet}?",
                                 f"Where did I live at the time I adopted my {species}?"]),
              city_then(pet_at)[1], {pet_at: pet, city_then(pet_at)[0]: city_then(pet_at)[1]}),
        Draft("multi-hop", pick([f"Who was I working for at the time of my {ev.alias}?",
                                 f"Which company employed me when the {ev.alias} happened?"]),
              job_then(event_at)[1], {event_at: ev.key,
                                      job_then(event_at)[0]: job_then(event_at)[1]}),
        Draft("multi-hop", pick([f"In which city was I living for my {ev.alias}?",
                                 f"Where was I based at the time of the {ev.alias}?"]),
              city_then(event_at)[1], {event_at: ev.key,
                                       city_then(event_at)[0]: city_then(event_at)[1]}),
        Draft("temporal", pick(["Which city do I call home these days?",
                                "Where am I living at the moment?"]), towns[1],
              {city[1]: towns[1]}, {city[0]: towns[0]}),
        Draft("temporal", pick(["Who is my current employer?",
                                "Which company am I working for now?"]), firms[1],
              {job[1]: firms[1]}, {job[0]: firms[0]}),
        Draft("temporal", pick(sw.ask), now, {habit[1]: now}, {habit[0]: was}),
        Draft("temporal", f"When did I {ev.ask}?", day, {event_at: day}),
        Draft("temporal", f"Did I adopt {pet} before or after I joined {firms[1]}?",
              "before" if pet_at < job[1] else "after", {pet_at: pet, job[1]: firms[1]}),
    ]
    drafts = [d for d in drafts if len(d.keys) >= (2 if d.qtype == "multi-hop" else 1)]
    return plants, drafts, Near(species, sw, ev.noun, rel, pet, kin)


def _choose(rng: random.Random, drafts: list[Draft]) -> list[Draft]:
    """Return 6–8 of ``drafts``: two of each type first, so every person asks every kind,
    then random others; in a stable shuffled order. Cost: O(drafts)."""
    by_type: dict[str, list[Draft]] = {}
    for d in drafts:
        by_type.setdefault(d.qtype, []).append(d)
    chosen = [d for t in sorted(by_type) for d in rng.sample(by_type[t], min(2, len(by_type[t])))]
    rest = [d for d in drafts if all(d is not c for c in chosen)]
    chosen += rng.sample(rest, max(0, min(len(rest), rng.randint(6, 8) - len(chosen))))
    rng.shuffle(chosen)
    return chosen


def _session(rng: random.Random, plants: list[Plant], near: Near) -> list[dict[str, str]]:
    """Return one session's turns (user and assistant alternating), 2,000–6,000 characters
    in all, about one topic (the plant's, else random); plant sentences go into random user
    turns, decoy facts about other people into some others. Cost: O(length)."""
    topic = plants[0].topic if plants and rng.random() < 0.7 else rng.choice(sorted(TOPICS))
    target = rng.randint(MIN_CHARS + 300, MAX_CHARS - 2_100)
    turns: list[dict[str, str]] = []
    size = 0
    while size < target or len(turns) < 4:
        turns.append({"role": "user", "content": _user_turn(rng, topic)})
        turns.append({"role": "assistant", "content": _assistant_turn(rng, topic)})
        size += len(turns[-2]["content"]) + len(turns[-1]["content"])
    users = [t for t in turns if t["role"] == "user"]
    for pl in plants:
        turn = rng.choice(users)
        turn["content"] = _insert(rng, turn["content"], pl.text)
    for _ in range(rng.randint(1, 3)):
        turn = rng.choice(users)
        turn["content"] = _insert(rng, turn["content"], _decoy(rng, near))
    return turns


def _nouns(rng: random.Random, topic: str) -> dict[str, str]:
    """Return two different nouns: mostly from ``topic``, now and then from another, so
    sessions share words across topics."""
    pool = TOPICS[topic] if rng.random() < 0.8 else TOPICS[rng.choice(sorted(TOPICS))]
    a, b = rng.sample(pool, 2)
    return {"a": a, "b": b}


def _line(rng: random.Random, topic: str, lines: list[str]) -> str:
    """Return one sentence about ``topic``: a concrete detail of the topic (a third of the
    time) or one of ``lines`` filled with two of its nouns."""
    if rng.random() < 0.35:
        return rng.choice(DETAILS[topic])
    return rng.choice(lines).format(**_nouns(rng, topic))


def _user_turn(rng: random.Random, topic: str) -> str:
    """Return a user turn of 1–3 sentences about ``topic``."""
    return " ".join(_line(rng, topic, USER_LINES) for _ in range(rng.randint(1, 3)))


def _assistant_turn(rng: random.Random, topic: str) -> str:
    """Return an assistant turn: a few sentences of advice, sometimes with a numbered list."""
    said = [_line(rng, topic, ASSISTANT_LINES) for _ in range(rng.randint(2, 4))]
    if rng.random() < 0.4:
        items = [_line(rng, topic, ASSISTANT_LINES) for _ in range(rng.randint(2, 4))]
        said.append(rng.choice(LIST_HEADS) + "\n" +
                    "\n".join(f"{i + 1}. {s}" for i, s in enumerate(items)))
    return " ".join(said)


def _insert(rng: random.Random, text: str, sentence: str) -> str:
    """Return ``text`` with ``sentence`` at its start or its end."""
    return f"{sentence} {text}" if rng.random() < 0.5 else f"{text} {sentence}"


def _decoy(rng: random.Random, near: Near) -> str:
    """Return a near-miss fact about someone else, in the words the questions use: half the
    time with the person's own species, habit, event and relation (see :class:`Near`)."""
    own = rng.random() < 0.5
    sw = near.switch if own else rng.choice(SWITCHES)
    opt1, opt2 = rng.sample(sw.options, 2)
    return rng.choice(DECOYS).format(
        p=rng.choice([n for n in PEOPLE if n != near.kin]), city=rng.choice(CITIES),
        company=rng.choice(COMPANIES),
        species=near.species if own else rng.choice(SPECIES),
        pet=rng.choice([n for n in PET_NAMES if n != near.pet]), opt1=opt1, opt2=opt2,
        event=near.event if own else rng.choice(EVENTS).noun, role=rng.choice(ROLES),
        rel=near.rel if own else rng.choice(RELATIONS), cuisine=rng.choice(CUISINES))


def parse_date(stamp: str) -> date:
    """Return the calendar date of a LongMemEval date stamp (``2023/05/20 (Sat) 07:46``)."""
    return datetime.strptime(stamp, DATE_FORMAT).date()
