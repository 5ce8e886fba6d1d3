"""Deterministic extraction of entities and typed facts from conversation text (no LLM).

:func:`extract` reads a drawer's text and returns what it mentions (:class:`Mention`:
capitalised names, known aliases, code identifiers, dates, quantities) and what it states
(:class:`Fact`: decisions, preferences, relations, dated events, milestones), each with the
character span it came from, so a caller can link a fact to its drawer and sentence. It is
rule-based, as MemPalace's extraction of decisions, preferences and milestones is: a fixed set
of regular expressions over the text, stdlib only, so it runs in Pyodide and gives the same
answer every time.

Precision before recall: facts go into a knowledge graph a user trusts, so a pattern fires
only on an asserted statement — never in a question, after a negation ("I don't use X") or
under a hedge ("if", "maybe", "I'd like to") — and an object that only points elsewhere
("it", "that", "those ideas") gives no fact. What is not said plainly is missed.

Measured with ``palazzo bench extraction --data tests/palazzo/data/extraction_labelled.json
--out bench-results/extraction.json`` (CPython 3.11, one core of the development machine,
2026-12): on the 96 hand-labelled turns, entities P 0.98 / R 0.99 and facts P 0.975 /
R 0.87 (a development set: the patterns were tuned on it, so expect less on new text).
Speed: 1.0–1.6 M characters/s (by machine load) over the 1,430 distinct turns (361,078 chars) of
tests/palazzo/data/longconv_dev.json, one call a turn, and 1.1 M characters/s one call a
session. Cost is linear in the text: each compiled pattern scans it once, the fact patterns
only the sentences that hold their verbs (found with ``str.find``), then a Python step a
capitalised span and a match; a call has about 20 µs of fixed cost.

On real text (``palazzo bench extraction --data tests/palazzo/data/extraction_real.json``:
LoCoMo conversation turns labelled before the extractor ran on them; docs/benchmarks.md,
"Extraction on real text"), the last sample kept apart from all changes (test5, 290 turns
labelled by a session that never ran the extractor, run once after round 6) gives entities
P 0.97 / R 0.95 and facts P 1.00 / R 0.58 (15 of 15 right, 26 labelled); the samples held
out before it gave facts P 0.57, 0.60 and 0.73 at the extractor of their day. Few facts on a
small sample: read these as rough. The rules read English: other languages give entities
(Latin names, aliases and code, a Korean particle glued to them left out) and few facts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from palazzo.memory.kg import DEFAULT_ALIASES, normalise_entity

__all__ = ["Extraction", "Fact", "Mention", "extract"]

USER = "user"


@dataclass(slots=True, frozen=True)
class Mention:
    """An entity mentioned in a text: its surface form, its canonical key and its span."""

    name: str  # surface text as written
    key: str  # normalise_entity(name), resolved through the alias table
    kind: str  # "name" | "alias" | "code" | "date" | "quantity"
    start: int
    end: int


@dataclass(slots=True, frozen=True)
class Fact:
    """A statement ``subject --predicate--> object`` read from one sentence of a text."""

    subject: str  # entity as written, "user" for the first person (I, my, we)
    predicate: str  # lower_snake_case: "uses", "moved_to", "prefers", "decided", ...
    object: str
    kind: str  # "decision" | "preference" | "relation" | "event" | "milestone"
    confidence: float  # the pattern's reliability, see _CONFIDENCE
    when: str | None  # YYYY-MM-DD when the sentence dates it, else None
    start: int  # the span of its sentence (or clause: a spaced dash or ';' ends one)
    end: int


@dataclass(slots=True)
class Extraction:
    """What :func:`extract` found in one text, each list in text order."""

    mentions: list[Mention]
    facts: list[Fact]


# How much a fact from each pattern is trusted. Set by hand from how often the pattern was
# right on the hand-labelled development set (palazzo bench extraction), rounded down, and
# lower where one reading of the words is common but not the only one ("I'll try X" is
# sometimes musing, "X is a Y" sometimes a simile).
_CONFIDENCE = {
    "switched": 0.9, "moved_to": 0.9, "works_at": 0.9, "works_as": 0.85, "lives_in": 0.85,
    "uses": 0.75, "is": 0.6, "prefers": 0.85, "favourite": 0.9, "decided": 0.9,
    "will": 0.7, "lets": 0.75, "event": 0.75, "event_dated": 0.85, "milestone": 0.8,
}

_ASCII_RUN = re.compile(r"[^a-z0-9]+")


def _key(name: str) -> str:
    """Return :func:`normalise_entity` of ``name``, without its Unicode work for ASCII text
    (where NFKC changes nothing and case-folding is lower-casing)."""
    if name.isascii():
        return _ASCII_RUN.sub("-", name.lower()).strip("-")
    return normalise_entity(name)


# -- text pieces ------------------------------------------------------------------------------

_MONTHS = {m: i for i, ms in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), 1) for m in ms}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_ABBR = frozenset(("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat",
                           "sun"))
_MONTH_RE = (r"(?:January|February|March|April|May|June|July|August|September|October|"
             r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100,
    "a": 1, "an": 1, "a few": 3, "a couple of": 2, "several": 3}
_DIGIT = re.compile(r"\d")
_NUMBER_SET = frozenset(w for w in _NUMBER_WORDS if " " not in w and len(w) > 2)
_NUM = r"(?:\d[\d,]*(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|" \
       r"twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred)"
_UNITS = (
    r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|decades?|"
    r"millimet(?:er|re)s?|centimet(?:er|re)s?|kilomet(?:er|re)s?|met(?:er|re)s?|mm|cm|km|"
    r"miles?|inch(?:es)?|foot|feet|ft|yards?|acres?|hectares?|square feet|sq ft|"
    r"grams?|kilograms?|kilos?|kg|mg|pounds?|lbs?|ounces?|oz|tons?|tonnes?|"
    r"millilit(?:er|re)s?|lit(?:er|re)s?|ml|gallons?|"
    r"[kKMGT]B|bytes?|kilobytes?|megabytes?|gigabytes?|terabytes?|mAh|kWh|kW|watts?|volts?|"
    r"mph|km/h|kph|°[CF]|degrees|calories|kcal|GHz|MHz|Hz|bpm|dollars?|euros?|cents?")
_QUANTITY = re.compile(
    r"(?<![\w$€£¥.])(?:"
    r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|K|million|billion|thousand|bn|m)\b)?"
    r"(?:\s?-\s?\$?\d[\d,]*(?:\.\d+)?)?"
    r"|\d[\d,]*(?:\.\d+)?\s?%"
    rf"|(?i:{_NUM})(?:[\s-]|(?<=\d))(?:{_UNITS})(?![\w/])"
    r")(?!\s+ago\b)(?![\s-]old\b)")  # "three weeks ago" is a time, "one-year-old" an age
_DATE = re.compile(
    r"(?<![\w/-])(?:"
    r"(?P<iso>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?![\d])"
    r"|(?P<sy>\d{4})/(?P<sm>\d{1,2})/(?P<sd>\d{1,2})(?![\d/])"
    r"|(?P<um>\d{1,2})/(?P<ud>\d{1,2})/(?P<uy>\d{4})(?![\d/])"
    rf"|(?P<mname>{_MONTH_RE})\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])"
    r"(?:,?\s+(?P<my>\d{4}))?"
    rf"|(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dname>{_MONTH_RE})"
    r"(?:,?\s+(?P<dy>\d{4}))?"
    r")(?![\w])")
# Relative times that date an event (a bare "recently" does not).
_TIME = re.compile(
    r"\b(?:(?:just|only|about|around|roughly)\s+)?(?:"
    r"(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<yesterday>yesterday|last night)"
    r"|(?P<this>this (?:week|weekend|month|year))"
    r"|last (?P<last>week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
    r"|(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|"
    r"several)\s+(?P<unit>days?|weeks?|months?|years?)\s+ago"
    r")\b", re.IGNORECASE)
_TIME_WORDS = ("ago", "today", "tonight", "yesterday", "last ", "this ", "finally",
               "first time", "january", "february", "march", "april", "may", "june", "july",
               "august", "september", "october", "november", "december")
# Identifiers are ASCII: a letter of another script ends one, so a Korean particle glued to
# it ("notion_alert.py를", "main.py에서") is left out of the name.
_CODE = re.compile(
    r"`(?P<tick>[^`\n]{1,80})`"
    r"|(?<![\w.@/])(?P<dotted>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?P<call>\(\))?"
    r"(?![A-Za-z0-9_@])"
    r"|(?<![\w.])(?P<snake>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?![A-Za-z0-9_])"
    r"|(?<![\w.])(?P<camel>[a-z]{2,}[a-z0-9]*(?:[A-Z][a-z0-9]*)+)(?![A-Za-z0-9_])"
    r"|(?<![\w.])(?P<fn>[A-Za-z_][A-Za-z0-9_]*)\((?=[^)\n]{0,40}\))")
_CAMEL = re.compile(r"[a-z][A-Z]")
_DOTTED = re.compile(r"[A-Za-z_]\.[A-Za-z_]")
_FILE_EXT = {"py", "js", "ts", "tsx", "jsx", "json", "md", "txt", "yml", "yaml", "toml", "cfg",
             "ini", "csv", "html", "css", "rs", "go", "java", "c", "h", "cpp", "hpp", "sh",
             "sql", "xml", "ipynb", "rb", "php", "kt", "swift", "lock", "env", "log", "pdf",
             "png", "jpg", "svg", "npz", "onnx", "whl", "cs"}
_NOT_MODULES = {"com", "org", "net", "edu", "gov", "io", "co", "uk", "www", "e", "i", "g",
                "etc", "vs", "eg", "ie"}
_CODE_LINE = re.compile(r"[{}=]|;\s*$|\(\)|^\s*(?:import|from|def|class|public|private|return)\b",
                        re.MULTILINE)
# A run of capitalised words, joined by spaces, "&", name connectors and "'s" before another
# capitalised word ("Paws for a Cause", "Schitt's Creek", "Dr. Smith").
# Name letters are Latin (accents too) and digits: a letter of another script ends a name, so
# a Korean particle glued to it ("Notion에서", "John이랑") is not part of it.
_LAT = r"0-9A-Za-z_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_CAP_WORD = rf"(?:[A-Z][{_LAT}'’-]*[{_LAT}]|[A-Z]|[a-z][A-Z][{_LAT}-]*)"
_CONNECT = r"(?:of|the|for|a|in|on|de|la|le|du|del|della|di|da|alla|van|von|der|den|&)"
_NAME = re.compile(
    rf"(?<![\w.@/#-])(?:(?:Dr|Mr|Mrs|Ms|Prof|St)\.\s)?{_CAP_WORD}"
    rf"(?:(?:'s|’s)?\s(?:{_CONNECT}\s)*{_CAP_WORD})*")
_SENTENCE_END = re.compile(r"(?<!\b(?:Dr|Mr|Ms|St|vs))(?<!\bMrs)(?<!\bProf)[.!?]+[\"')\]]*"
                           r"(?=\s)|\n+")
_STOP_INITIAL = {
    "the", "a", "an", "i", "i'm", "i've", "i'll", "i'd", "my", "our", "we", "we're", "we've",
    "you", "your", "it", "it's", "its", "this", "that", "these", "those", "there", "here",
    "he", "she", "they", "his", "her", "their", "what", "how", "why", "when", "where",
    "which", "who", "whose", "can", "could", "would", "should", "will", "do", "does", "did",
    "is", "are", "was", "were", "if", "so", "but", "and", "or", "also", "just", "last",
    "next", "today", "yesterday", "tomorrow", "hey", "hi", "hello", "thanks", "thank", "yes",
    "no", "ok", "okay", "please", "by", "for", "in", "on", "at", "to", "as", "after", "before",
    "since", "while", "then", "now", "well", "oh", "wow", "great", "sure", "actually",
    "honestly", "anyway", "maybe", "perhaps", "let's", "let", "any", "some", "all",
    "one", "two", "three", "each", "every", "both", "not", "however", "speaking", "quick",
    "sounds", "what's", "that's", "there's", "here's", "don't", "didn't", "write", "give",
    "make", "tell", "explain", "show", "list", "add", "use", "try", "find",
    "create", "help", "consider", "keep", "see", "look", "note", "remember", "imagine",
    # pronouns with a verb glued ("You've got guts")
    "you've", "you're", "you'll", "you'd", "we'll", "we'd", "they're", "they've", "they'll",
    "he's", "she's", "it'll", "that'll", "there'll",
    "nobody", "somebody", "someone", "everyone", "everybody", "anyone", "anybody", "nothing",
    "something", "everything", "anything", "none",
}
# Interjections and greetings that open real chat turns ("Bye Caroline", "Go Jon!", "Yeah
# John"): dropped from the start of a sentence only ("our Go Green campaign" keeps its "Go").
_INTERJECTIONS = {
    "bye", "yeah", "yep", "yup", "nope", "congrats", "congratulations", "cool", "nice",
    "awesome", "sorry", "go", "dear", "aw", "aww", "haha", "lol", "cheers", "welcome", "ugh",
    "hmm", "whoa", "woah", "yay", "agreed", "definitely", "totally", "absolutely", "good"}
_NOT_NAMES = {
    "i", "i'm", "i've", "i'll", "i'd", "ok", "tv", "ai", "api", "ux", "ui", "faq", "diy", "am",
    "pm", "usb", "pdf", "url", "ceo", "hr", "id", "led", "gps", "dna", "bbq", "asap", "fyi",
    "app", "ps", "pc", "it", "ip", "seo", "roi", "kpi", "mr", "mrs", "ms", "dr", "st", "etc",
    "a", "have", "master's", "bachelor's", "backend", "frontend", "covid",
    *(m for m in _MONTHS), *_WEEKDAYS, "mon", "tue", "tues", "wed", "thu", "thur", "thurs",
    "fri",
    # chat acronyms ("BTW, I found ..."), which name nothing
    "btw", "imo", "imho", "tbh", "lol", "omg", "idk", "brb", "np", "thx", "ty", "irl",
    # pronoun-like words, capitalised only by a sentence ("Nobody told me")
    "nobody", "somebody", "someone", "everyone", "everybody", "anyone", "anybody", "nothing",
    "something", "everything", "anything", "none",
    # a relation said as a name ("Mom's birthday"): the person is "my mom", not an entity
    "mom", "mum", "dad", "mommy", "mummy", "daddy", "mama", "papa", "grandma", "grandpa",
    # nationality and language adjectives: "Mexican takeaway" names a kind, not an entity
    "american", "british", "english", "french", "german", "italian", "spanish", "chinese",
    "japanese", "korean", "indian", "mexican", "thai", "vietnamese", "greek", "turkish",
    "lebanese", "ethiopian", "lithuanian", "polish", "russian", "dutch", "swedish",
    "portuguese", "brazilian", "canadian", "australian", "irish", "scottish", "european",
    "asian", "african", "arabic", "persian", "moroccan", "peruvian", "filipino",
    "indonesian", "malaysian", "egyptian", "israeli", "danish", "norwegian", "finnish",
    "swiss", "austrian", "belgian", "caribbean", "mediterranean", "latin", "western",
    "eastern", "northern", "southern", "victorian", "impressionist",
    # group and faith adjectives, named like nationalities ("LGBTQ rights", "Christian music")
    "lgbt", "lgbtq", "lgbtqia", "lgbtq+", "christian", "muslim", "jewish", "catholic",
    "buddhist", "hindu",
}
_I_FORMS = {"I", "I'm", "I've", "I'll", "I'd", "I’m", "I’ve", "I’ll", "I’d"}
# Words people start a sentence with that stay names only in other positions.
_FOLLOWS_NAME = {
    "from", "wants", "wanted", "said", "says", "told", "tells", "switched", "moved", "works",
    "worked", "got", "adopted", "started", "lives", "lived", "uses", "used", "joined",
    "bought", "loves", "likes", "prefers", "thinks", "thought", "asked", "sent", "gave",
    "called", "texted", "visited", "went", "sounds", "recommended", "and", "runs", "offers",
}
# Single-word aliases that are also everyday words: they count only when written with a
# capital ("React", not "how people react"); two-letter ones only in capitals.
_COMMON_ALIASES = {"amazon", "apple", "claude", "flask", "gemini", "google", "intel", "java",
                   "llama", "rag", "react", "ruby", "rust", "slack", "stripe", "zoom",
                   "pandas", "mongo", "vue", "zeit", "tailwind", "kube", "copilot", "git"}

# -- facts: the patterns ---------------------------------------------------------------------

# Anything inside one clause: no sentence end, no semicolon.
_ADV = (r"(?:(?:just|finally|recently|also|actually|really|already|eventually|then|now|"
        r"usually|still|always|mostly|definitely|probably|officially|ultimately|even|"
        r"totally|absolutely|much|truly|honestly|kind of|sort of|generally|mainly|"
        r"personally|originally|initially|first|later|quickly|happily|gladly|have|has|"
        r"'ve|’ve|all|both|so)\s+)*")
_RELATIVE = (r"friend|coworker|co-worker|colleague|neighbou?r|roommate|flatmate|brother|"
             r"sister|cousin|partner|wife|husband|boyfriend|girlfriend|fianc[ée]e?|mom|mum|"
             r"mother|dad|father|son|daughter|boss|manager|uncle|aunt|niece|nephew|grandma|"
             r"grandpa|grandmother|grandfather|teacher|doctor|therapist|landlord|mentor")
_PNAME = r"[A-Z][a-z]+(?:\s[A-Z][a-z]+)?"
_SUBJ = (rf"(?P<subj>\bI\b|\b[Ww]e\b|(?:\b[Mm]y|\b[Oo]ur)\s(?:(?:old|best|new|close|little|"
         rf"big|older|younger|elder|former)\s)?(?:{_RELATIVE})(?:,?\s(?P<pname>{_PNAME}),?)?"
         rf"|(?P<name>{_PNAME})(?:(?:'s|’s)\s(?P<rel>{_RELATIVE}))?)"
         r"(?:\s(?:from|at)\s(?:the\s|my\s|our\s)?[a-z]+(?:\s[a-z]+)?(?=\s))?")
_FP = r"(?P<subj>\bI\b|\b[Ww]e\b)"
# Between a subject and its verb: a space, or nothing before a contraction ("I've lived").
_SEP = r"(?:\s+|(?=['’]))"
_OBJ = r"(?P<obj>[^.!?;\n]{1,160})"
_NEG = re.compile(r"\b(?:not|never|no longer|n't|nt|cannot|nor|hardly|barely)\b|n't\b",
                  re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:if|whether|maybe|perhaps|might|may|could|would|should|wonder|"
                    r"wondering|thinking of|thinking about|considering|planning|plan to|"
                    r"hope|hoping|want to|wanted to|trying to|try to|unless|in case|"
                    r"not sure|whenever|when)\s+[^,;]*$", re.IGNORECASE)
_ANAPHOR = re.compile(r"^(?:it|that|this|these|those|them|they|one|ones|him|her|here|there|"
                      r"something|anything|everything|stuff|things?|some of|all of|any of|"
                      r"the idea|the same|the quality|the rest|the one|the ones)\b|"
                      r"\b(?:it|them|these|those|this one|that one|their|its)\b",
                      re.IGNORECASE)
# A chat turn shares a picture ("here's a pic I got from my walk"): the picture is a pointer.
_SHARED_PIC = re.compile(r"(?:(?:a|an|the|this|that|my|our)\s+)?(?:[\w-]+\s+)?(?:pic|pics|photo|"
                         r"photos|picture|pictures|snap|snaps|shot|selfie|pic of it)",
                         re.IGNORECASE)
_FUNCTION_WORDS = frozenset(("to", "too", "so", "as", "and", "or", "but", "of", "for", "with",
                             "at", "in", "on", "a", "an", "the"))
_CLAUSE_END = re.compile(
    r",?\s+(?:'|’)?cause\b|,\s+(?:cuz|coz|bc)\b|"
    r",\s+(?:and|but|so|or|which|who|where|because|since|as|though|although|while|when|"
    r"if|then|plus|like|especially|maybe|probably|it|they|i|we|he|she|you|that's|it's)\b"
    r"|\s+(?:because|since|but|although|though|which|so that|so I|and I|and we|and it|"
    r"and they|and she|and he|and my|and won't|and has|and have|and had|and is|and was|"
    r"and named|and produced|and it's|and I'm|and I've|whereas|until|"
    # a second verb phrase: "passionate about X and would like to study ..."
    r"and (?:would|will|can|could|should|might|must|want|wanna|need|hope)\b"
    r")\b"
    r"|\s[-–—]\s|[;:()\"]", re.IGNORECASE)
# A comma keeps the clause going in a list tail ("garlic, ginger and greens") and before a
# state or country ("a city near LA, California"); checked in Python, as a regex with
# nested repeats here backtracks for ever on a long run of commas.
_LIST_TAIL = re.compile(r"[\w' ,-]*\s(?:and|or)\s[\w' -]+")
# What opens a clause of its own after "and"/"or": a subject, or a word that points back.
_NEW_SUBJECT = re.compile(r"\s+(?:I|I'm|I've|I'll|I'd|we|we're|we've|we'll|you|he|she|it|"
                          r"it's|they|they're|there|that|this|these|those|then|so|my|our|"
                          r"his|her|their|also|now)\b", re.IGNORECASE)
# A determiner and one word before a comma, then two more words: coordinated adjectives ("a
# safe, inviting place") as often as the end of the thing; no fact is safer than a cut one.
_ADJ_COMMA = re.compile(r"\b(?:a|an|the|my|our|such a)\s+[a-z]+$", re.IGNORECASE)
_WORD_PAIR = re.compile(r"\s*[a-z]+\s+[a-z]+")
_PLACE_TAIL = re.compile(r"\s*[A-Z]\w+\s*")
_PRONOUN = re.compile(r"\b(?:I|I'd|I'm|I've|we|it|they|he|she|you)\b")
# Where a thing's noun phrase stops: before a purpose, place or time adverbial.
_NP_END = re.compile(r"\s+(?:to|for|at|in|on|during|with|from|instead|because|so|after|"
                     r"that|who|which|"
                     r"before|when|while|as|since|until|every|each|this|next|again|too|"
                     r"today|tonight|tomorrow|yesterday|now|soon|later|first|though|"
                     r"anyway|instead)\b", re.IGNORECASE)
# An event's object also ends before an adverb of company or manner: "we went to a convention
# together", "made some dinner together", "painted the fence ourselves", "went alone".
_EVENT_END = re.compile(r"\s+(?:at|in|on|during|with|from|and|because|so|after|before|when|"
                        r"while|as|since|until|every|each|again|too|instead|but|which|that|"
                        r"who|to(?=\s+(?:a|an|the|my|our|his|her|their|this|that|some)\s)|"
                        r"for the first time|together|alone|ourselves|myself|"
                        r"by (?:myself|ourselves|himself|herself|themselves))\b|,",
                        re.IGNORECASE)
# "as a ..." after a noun of role names the role, it does not end the thing: "my job as a
# banker", "my time as a volunteer".
_ROLE_AS = re.compile(r"\s+as\s+(?:a|an)\s", re.IGNORECASE)
# "at"/"with" and a name after a noun of role name where: "my job at Door Dash".
_AT_NAME = re.compile(r"\s+(?:at|with)\s+[A-Z]")
_ROLE_NOUN = re.compile(r"\b(?:job|role|position|career|time|work|post|stint|days|years|"
                        r"internship|shift|gig)$",
                        re.IGNORECASE)
# "to the ..." after a noun of going names where to, it does not end the thing: "a road trip
# to the beach house"; after another thing it is where the thing went ("donated my old car
# to a shelter").
_TO_PLACE = re.compile(r"\s+to\s", re.IGNORECASE)
_TRIP_NOUN = re.compile(r"\b(?:trips?|visits?|journeys?|flights?|drives?|rides?|tours?|hikes?|"
                        r"walks?|roads?|moves?|tickets?|invitations?|paths?|way|doors?|cruises?|"
                        r"vacations?|getaways?|excursions?|expeditions?|commutes?|routes?|"
                        r"runs?|outings?|pilgrimages?|holidays?|retreats?)$", re.IGNORECASE)
# Who a person "took" somewhere or to do something: "took my fam camping", "took the kids to
# the museum", "took our dog for a walk" -- the object is the people (or pet) taken.
_TAKEN = re.compile(
    rf"(?:my|our|his|her|their|the)\s+(?:[\w-]+\s+){{0,2}}?(?:(?:{_RELATIVE})s?|kids?|"
    r"children|child|family|fam|folks|parents|grandkids|grandchildren|twins|boys|girls|"
    r"little ones|youngest|oldest|baby|students|dogs?|cats?|pup|puppy|puppies|pets?)"
    r"(?=\s+[\w\"'])", re.IGNORECASE)
# What a thing got opens on: a determiner, a possessive, a number, a name, "new"/"free", or
# a plural ("tickets"); "got hurt", "got sick", "got home" name a state or a place instead.
_GOT_THING = re.compile(
    r"(?:a|an|the|my|our|his|her|their|your|some|this|that|these|those|another|both|all|"
    r"lots|plenty|several|many|few|enough|new|free|brand-new|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|\d[\d,.]*|[A-Z][\w'’-]*|\w+(?<![su]s)(?<!ous)s)\b")
# A place that ends a liked thing: "improving education in our community".
_PLACE_END = re.compile(r"\s+(?:at|in|on|around|near)\s+(?:my|our|his|her|their)\s[^,]*$",
                        re.IGNORECASE)
# Adverbs that end an object without being part of it ("painting together lately",
# "volunteering here").
_TRAILING = re.compile(r"(?:\s+(?:lately|recently|these days|nowadays|here|there|now|again|"
                       r"anymore|so far|right now|at the moment))+$", re.IGNORECASE)
# An object handed to the listener: "I'll get the video to you", "I'll keep ya posted".
# What follows a verb without naming a thing: a particle ("get through this", "go over it")
# or an idiom of effort ("try my best").
_NO_THING = re.compile(r"(?:through|over|back|up|out|along|by|away|around|off|into|to|on)\b|"
                       r"(?:my|our|your)\s+(?:very\s+)?(?:best|hardest|utmost|part)\b",
                       re.IGNORECASE)
# What the speaker does for the listener, or to the listener's things (in the clause), is no
# choice of the speaker's: "I'll get the video to you", "I'll watch your routine".
_TO_LISTENER = re.compile(r"^(?:you|ya)\b|\b(?:to|for|with)\s+(?:you|ya)\b", re.IGNORECASE)
_YOURS = re.compile(r"\b(?:your|yours)\b", re.IGNORECASE)
_LEADING = re.compile(r"^(?:(?:just|finally|really|actually|definitely|probably|also|"
                      r"now|then|go ahead and|officially|maybe)\s+)+", re.IGNORECASE)

# A liked "the X" is mostly the thing at hand -- the listener's picture, its colours, its
# theme ("I love the self-acceptance theme") -- a reaction, not a taste; a few kinds of place
# or weather are said with "the" and are tastes ("I love the outdoors").
_AT_HAND = re.compile(r"(?:all\s+)?the\s", re.IGNORECASE)
_GENERIC_THE = re.compile(
    r"the\s+(?:outdoors|beach|ocean|sea|mountains|countryside|city|rain|snow|sun|cold|heat|"
    r"quiet|mornings?|evenings?|summer|winter|spring|fall|autumn|classics|water|woods|"
    r"forest|desert|seaside|coast)\b(?!\s+(?:in|on|of)\s+(?:the|this|that|your)\s)",
    re.IGNORECASE)

_PREF_VERBS = {"prefer": "prefers", "prefers": "prefers", "love": "loves", "loves": "loves",
               "like": "likes", "likes": "likes", "enjoy": "enjoys", "enjoys": "enjoys",
               "hate": "hates", "hates": "hates", "dislike": "dislikes",
               "dislikes": "dislikes", "adore": "loves", "adores": "loves",
               "enjoying": "enjoys", "loving": "loves"}
_THING_VERBS = {"go with", "use", "try", "try out", "choose", "pick", "get", "buy", "order",
                "switch to", "stick with", "opt for", "settle on", "go for"}
_DECIDE_VERBS = (r"go with|use|try out|try|choose|pick|get|buy|order|book|switch to|"
                 r"stick with|start with|look into|check out|create|take|join|"
                 r"sign up for|cancel|skip|focus on|prioriti[sz]e|install|download|visit|"
                 r"include|go for|opt for|settle on|learn|start|stop|set up|schedule|"
                 r"invest in|apply for|register for|read|watch|listen to|plant|adopt|"
                 r"hire|move|rent|sell|return|replace|upgrade to|add")
# Past verbs that make an event (with a time in the sentence) -> predicate; milestones apart.
_EVENT_VERBS = {
    "attended": "attended", "attend": "attended", "visited": "visited", "bought": "bought",
    "purchased": "purchased", "got": "got", "adopted": "adopted", "installed": "installed",
    "submitted": "submitted", "watched": "watched", "started": "started", "joined": "joined",
    "booked": "booked", "ordered": "ordered", "received": "received", "sold": "sold",
    "had": "had", "met": "met", "hosted": "hosted", "volunteered at": "volunteered_at",
    "signed up for": "signed_up_for", "registered for": "registered_for",
    "got back from": "got_back_from", "returned from": "returned_from", "went to": "went_to",
    "took": "took", "took up": "took_up", "picked up": "picked_up", "traveled to": "traveled_to",
    "travelled to": "travelled_to", "flew to": "flew_to", "saw": "saw", "ran": "ran",
    "planted": "planted", "painted": "painted", "built": "built", "baked": "baked",
    "cooked": "cooked", "made": "made", "read": "read", "hiked": "hiked", "organized":
    "organized", "organised": "organised", "participated in": "participated_in",
    "moved into": "moved_into", "rescued": "rescued", "inherited": "inherited",
    "upgraded to": "upgraded_to", "redeemed": "redeemed", "donated": "donated",
    "went on": "went_on", "went": "went", "did": "did", "found": "found", "lost": "lost",
    "emailed": "emailed", "called": "called", "texted": "texted", "contacted": "contacted",
}
# Whom an activity is done with is no part of the activity ("spending time with the friends I
# have", "hiking with Jon"); a bare "together" stays ("we love painting together").
_COMPANY = re.compile(rf"\s+(?:with\s+(?:[A-Z][a-z]+\b|(?:(?:the|my|our|his|her|"
                      rf"their|some|a few|other|close|old|good|best)\s+)*(?:[\w-]+\s+)?"
                      rf"(?:friends?|family|fam|kids|children|folks|people|pals|buddies|"
                      rf"{_RELATIVE})s?\b))")
# Verbs of going: what follows the place after "to" is why ("went to a fair to show off my
# studio"), not part of the place.
_MOTION_VERBS = frozenset(("went to", "traveled to", "travelled to", "flew to", "went on",
                           "got back from", "returned from"))
# Event verbs whose object must name a thing or a person (see _GOT_THING): "did a charity
# event", "found a violin concert", "lost my job" -- not "did well", "found myself", "lost track".
_THING_EVENT_VERBS = frozenset(("got", "did", "found", "lost", "emailed", "called", "texted",
                                "contacted"))
_MILESTONE_VERBS = {
    "passed": "passed", "graduated from": "graduated_from", "graduated": "graduated",
    "finished": "finished", "completed": "completed", "won": "won", "launched": "launched",
    "published": "published", "got promoted": "got_promoted", "got married": "got_married",
    "got engaged": "got_engaged", "retired": "retired", "earned": "earned",
}


def _alt(words: Mapping[str, str] | set[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+")
                    for w in sorted(words, key=len, reverse=True))


_P_SWITCH = re.compile(rf"{_SUBJ}{_SEP}{_ADV}switched\s+(?:over\s+)?from\s+"
                       rf"(?P<a>[^.!?;\n]{{1,80}}?)\s+to\s+{_OBJ}")
_P_GAVEUP = re.compile(
    rf"{_SUBJ}{_SEP}{_ADV}(?:gave up(?: on)?|stopped|ditched|quit|dropped)\s+"
    rf"(?P<a>[^.!?;,\n]{{1,80}}?)"
    rf"\s+and\s+(?:{_ADV})(?:started|switched to|moved\s+(?:[a-z]+\s+){{0,3}}?(?:over\s+)?to|"
    rf"went with|now use|use)\s+{_OBJ}")
_P_INSTEAD = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:started|began|switched to)\s+(?P<obj>[^.!?;,\n]"
                        rf"{{1,80}}?)\s+instead of\s+(?P<a>[^.!?;,\n]{{1,60}})")
_P_MOVED = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+"
                      rf"(?P<obj>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*(?:,\s[A-Z][\w'-]*)?)")
_P_LIVES = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:live|lives|lived|'m living|am living|'ve lived|"
                      rf"have lived|has lived|’ve lived)\s+in\s+{_OBJ}")
_P_WORKS = re.compile(
    rf"{_SUBJ}{_SEP}{_ADV}(?:work|works|worked|'ve been working|have been working|"
    rf"started working|began working|'m working|am working|is working|got a job)\s+"
    rf"(?:(?:at|for)\s+(?P<org>[A-Z][\w&'-]*(?:\s(?:of\s|&\s)?[A-Z][\w&'-]*)*)\s*)?"
    rf"(?:as\s+(?P<role>(?:a|an)\s[^.!?;,\n]{{1,60}}))?")
_P_EMPLOYER = re.compile(r"\b(?P<subj>[Mm]y)\s(?:employer|company|workplace)\s+is\s+"
                         r"(?P<org>[A-Z][\w&'-]*(?:\s(?:of\s|&\s)?[A-Z][\w&'-]*)*)")
_P_JOB_AT = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:moved|relocated)\s+to\s+"
                       rf"[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*"
                       rf"\s+for\s+(?:a|her|his|their|my)\s+(?:new\s+)?job\s+at\s+"
                       rf"(?P<org>[A-Z][\w&'-]*(?:\s(?:of\s|&\s)?[A-Z][\w&'-]*)*)")
_P_BEEN_A = re.compile(rf"{_FP}(?:'ve|’ve| have)\s+been\s+(?P<role>(?:a|an)\s[a-zA-Z -]{{2,40}}?)"
                       rf"\s+(?:there|at\s+[A-Z])")
_P_USES = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:use|uses|'m using|am using|'ve been using|"
                     rf"have been using|has been using|been using|rely on|relies on)\s+"
                     rf"(?!to\b){_OBJ}")
_P_LIVE_IN_TOOL = re.compile(r"\b(?:[Aa]ll\s)?[Mm]y\s(?:work\s)?(?:notes|files|documents|docs|"
                             r"photos|code|tasks|projects)\s(?:live|are|go)\s+in\s+"
                             r"(?P<obj>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*)")
_P_IS_A = re.compile(r"(?<![\w'])(?P<name>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*)\s+is\s+"
                     r"(?P<obj>(?:a|an|my|our)\s[^.!?;,\n]{2,80})")
_P_PREF = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:(?:'m|’m|am)\s+|'ve\s+been\s+|have\s+been\s+|"
                     rf"been\s+)?{_ADV}(?P<verb>{_alt(_PREF_VERBS)})\s+{_OBJ}")
_P_FAN = re.compile(rf"{_SUBJ}(?:'m|’m| am|'re|’re| are|(?:'ve|’ve| have)\s+{_ADV}been)\s+{_ADV}"
                    rf"(?:a\s+(?:big|huge|real)\s+fan\s+of|"
                    rf"passionate\s+about|(?:really\s+)?into)\s+{_OBJ}")
_P_FAV = re.compile(r"\b(?P<who>[Mm]y|[Oo]ur|[A-Z][a-z]+(?:'s|’s))\s+(?:all-time\s+)?"
                    r"favou?rite\s+(?P<what>[a-z][a-z -]{1,40}?)(?:\s+(?:at the moment|"
                    r"right now|these days|of all time|lately|so far))?\s+(?:is|are|has to be)\s+"
                    + _OBJ)
_P_DECIDED = re.compile(rf"{_SUBJ}{_SEP}{_ADV}(?:'ve\s+|have\s+|has\s+)?(?:decided|chose|chosen|"
                        rf"picked|went with|opted for|settled on|committed to)\s+"
                        rf"(?:(?P<to>to)\s+|(?P<on>on)\s+)?{_OBJ}")
_P_WILL = re.compile(rf"(?:(?<![\s\S])|(?<=[.!?\n]\s)|(?<=\n)|"
                     rf"(?:I think|I guess|So|so|,|and|but|Then|then|now|Now|OK|Okay)\s+)"
                     rf"(?P<subj>I|We|we)(?:'ll|’ll| will|'m going to|’m going to| am going to|"
                     rf"'re going to| are going to|'m gonna| am gonna)\s+{_ADV}"
                     rf"(?P<verb>{_DECIDE_VERBS})\b\s*{_OBJ}")
_P_LETS = re.compile(rf"(?:^|\s)(?P<subj>[Ll]et's|[Ll]et us)\s+(?P<verb>go with|use|try|"
                     rf"switch to|stick with|pick|choose)\s+{_OBJ}")
_P_EVENT = re.compile(
    rf"{_SUBJ}{_SEP}{_ADV}(?P<verb>{_alt(_EVENT_VERBS)}|{_alt(_MILESTONE_VERBS)})\b\s*{_OBJ}")
# A chat turn often leaves out its "I": "Started hitting the gym last week." A clause that opens
# on a past verb (never a base form, which would read as an order) is the speaker's event.
_P_EVENT_BARE = re.compile(
    r"(?:(?:just|finally|also|recently|then|and|so)\s+)?"
    rf"(?P<verb>{_alt({v for v in _EVENT_VERBS if v not in ('attend', 'read', 'did')})}|"
    rf"{_alt(_MILESTONE_VERBS)})\b\s*{_OBJ}", re.IGNORECASE)
# "Painting landscapes is my favorite!", "My favourite is the banana split": a favourite
# without its kind, read as "likes" (the clause must end there, or start with "my").
_P_FAV_IS = re.compile(r"(?P<obj>[A-Z][^.!?;\n]{0,80}?)(?:\s+is|\s+are|'s|’s)\s+(?:my|our)\s+"
                       r"(?:all-time\s+|absolute\s+)?(?:favou?rite|fave|top pick)s?\s*(?:[!.,]|$)")
_P_MY_FAV = re.compile(r"(?P<subj>\b[Mm]y|\b[Oo]ur)\s+(?:all-time\s+|absolute\s+)?"
                       r"(?:favou?rite|fave)\s+(?:is|are|has to be)\s+" + _OBJ)
_P_GOT_REL = re.compile(
    r"\b(?P<obj>(?:a|an|the|my|our)\s(?:[\w'’-]+\s){0,5}?[\w'’-]+)\s+(?:that\s+|which\s+)?"
    r"(?P<subj>I|we)\s+(?:just\s+|recently\s+)?(?P<verb>got|bought|purchased|picked up|ordered|"
    r"received|adopted)\b")

# The words without one of which a pattern cannot match (lower case), see _scan.
_TRIGGERS: dict[re.Pattern[str], tuple[str, ...]] = {
    _P_SWITCH: ("switched",), _P_GAVEUP: ("gave up", "stopped", "ditched", "quit", "dropped"),
    _P_INSTEAD: ("instead of",), _P_MOVED: ("moved", "relocated"), _P_LIVES: ("live", "living"),
    _P_WORKS: ("work", "job"), _P_EMPLOYER: ("employer", "company", "workplace"),
    _P_JOB_AT: ("job at",), _P_BEEN_A: ("been a",), _P_USES: (" use", "using", " rel"),
    _P_LIVE_IN_TOOL: (" live in", " are in", " go in"), _P_IS_A: (" is a", " is my", " is our"),
    _P_PREF: ("prefer", "lov", "like", "enjoy", "hate", "dislike", "adore"),
    _P_FAN: ("fan of", "passionate", "into "), _P_FAV: ("favo",),
    _P_FAV_IS: ("favo", "fave", "top pick"), _P_MY_FAV: ("favo", "fave"),
    _P_DECIDED: ("decided", "chose", "picked", "went with", "opted", "settled", "committed"),
    _P_WILL: ("'ll", "’ll", " will ", "going to", "gonna"), _P_LETS: ("let",),
}

# -- sentences -------------------------------------------------------------------------------


def _sentences(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) spans of the sentences of ``text`` (split at . ! ? followed by
    white space, and at line breaks), blank ones left out. Cost: O(len(text))."""
    out = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end() if m.group(0)[0] != "\n" else m.start()
        if text[start:end].strip():
            out.append((start, end))
        start = m.end()
    if text[start:].strip():
        out.append((start, len(text)))
    # trim leading white space so a sentence starts at its first word
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in out]


_CLAUSE_BREAK = re.compile(r"\s[-–—]+\s|;\s")


def _clauses(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the sentence ``spans`` cut at spaced dashes and semicolons, blank ones left out.
    Cost: O(len(text))."""
    if " -" not in text and "–" not in text and "—" not in text and ";" not in text:
        return spans
    out = []
    for start, end in spans:
        at = start
        for m in _CLAUSE_BREAK.finditer(text, start, end):
            if text[at:m.start()].strip():
                out.append((at, m.start()))
            at = m.end()
        if text[at:end].strip():
            out.append((at, end))
    return out


# What other modules read text with (memory.events finds dated sentences with them).
DATE = _DATE  # a calendar date ("2026-03-14", "March 14th", "14 March 2026")
RELATIVE_WORDS = _RELATIVE  # the people a speaker names by relation ("friend", "sister", ...)
sentence_spans = _sentences

# -- entities --------------------------------------------------------------------------------


_Index = tuple[dict[str, str], frozenset[str], int, dict[str, list[tuple[str, ...]]]]


def _alias_index(aliases: Mapping[str, str]) -> _Index:
    """Return (spelling key -> canonical key, the first words of the spellings, longest
    spelling in words) for scanning a text for ``aliases``."""
    table = dict(aliases)
    for key in set(aliases.values()):
        table.setdefault(key, key)
    first = frozenset(k.split("-")[0] for k in table if k)
    longest = max((k.count("-") + 1 for k in table), default=1)
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for k in table:
        if k:
            by_first.setdefault(k.split("-")[0], []).append(tuple(k.split("-")))
    return table, first, longest, by_first


_INDEX_CACHE: dict[int, tuple[Mapping[str, str], _Index]]
_INDEX_CACHE = {}
# A word is a run of Latin letters and digits or a run of another script's letters, so a
# Korean particle glued to a name is a word of its own ("Python으로" holds "python").
_WORD = re.compile(r"[0-9a-zA-Z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+|"
                   r"[^\W\d_a-zA-Z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+")


def _index_for(aliases: Mapping[str, str]) -> _Index:
    # Building the index costs a pass over the table; the default table is shared by every
    # call, so keep the last few (keyed by identity, kept alive so the id stays theirs).
    hit = _INDEX_CACHE.get(id(aliases))
    if hit is not None and hit[0] is aliases:
        return hit[1]
    index = _alias_index(aliases)
    if len(_INDEX_CACHE) > 8:
        _INDEX_CACHE.clear()
    _INDEX_CACHE[id(aliases)] = (aliases, index)
    return index


# Korean particles (case markers and postpositions) that are written glued to the word they
# follow: "Python으로", "민수가". Longest first, so "에서" is taken before "에".
_PARTICLES = tuple(sorted((
    "에서부터", "에게서", "이에요", "이랑", "에서", "에게", "으로", "한테", "까지", "부터",
    "보다", "처럼", "께서", "하고", "이나", "이야", "예요", "랑", "을", "를", "이", "가",
    "은", "는", "의", "에", "로", "와", "과", "도", "만", "야"), key=len, reverse=True))
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _stem(word: str) -> str | None:
    """Return a Hangul ``word`` without the particle glued to its end ("민수가" -> "민수"),
    or None when it is not Hangul or ends in no particle (the stem keeps a syllable)."""
    if not word or not _HANGUL.match(word[-1]):
        return None
    for p in _PARTICLES:
        if word.endswith(p) and len(word) > len(p):
            return word[:-len(p)]
    return None


def _alias_mentions(text: str, words: set[str], aliases: Mapping[str, str]) -> list[Mention]:
    """Return the known aliases (and canonical keys) written in ``text``, whole words, any
    case, longest first; ``words`` are the text's lower-cased words. Cost: a set
    intersection, then a Python step a word only in texts that hold a known first word."""
    table, first, longest, by_first = _index_for(aliases)
    if _HANGUL.search(text):
        words = words | {st for w in words if (st := _stem(w))}
    # Most texts hold no alias: settle that with set operations before any Python loop —
    # a spelling can be present only if all its words are among the text's words.
    if not any(all(part in words for part in parts)
               for w in first.intersection(words) for parts in by_first[w]):
        return []
    out: list[Mention] = []
    pos = 0
    n = len(text)
    for m in _WORD.finditer(text):
        start = m.start()
        if start < pos or m.group(0).lower() not in first and _stem(m.group(0)) not in first:
            continue
        found = None
        parts: list[str] = []
        w: re.Match[str] | None = m
        for _ in range(longest):
            if w is None:
                break
            parts.append(w.group(0).lower())
            key = "-".join(parts)
            if key in table:
                found = (w.end(), key, len(parts))
            else:
                stem = _stem(parts[-1])  # "민수가": a Hangul name, its particle glued
                if stem and "-".join([*parts[:-1], stem]) in table:
                    found = (w.start() + len(stem), "-".join([*parts[:-1], stem]), len(parts))
                    break  # a particle ends a name
            end = w.end()
            # the next word continues the spelling only across one space, "-", "_" or "."
            w = _WORD.match(text, end + 1) if end + 1 < n and text[end] in " -_." else None
        if found is None:
            continue
        end, key, count = found
        surface = text[start:end]
        if count == 1 and (key in _COMMON_ALIASES and not surface[0].isupper()
                           or len(surface) <= 2 and surface.isascii()
                           and not surface.isupper()):
            continue
        out.append(Mention(surface, table[key], "alias", start, end))
        pos = end
    return out


def _code_mentions(text: str) -> list[Mention]:
    """Return the code identifiers in ``text``: `backticked`, dotted.names and file.ext,
    snake_case, camelCase and name( calls, PascalCase words on lines that look like code.
    Cost: O(len(text))."""
    out: list[Mention] = []
    if not ("`" in text or "_" in text or "(" in text or _DOTTED.search(text)
            or _CAMEL.search(text)):
        return out
    for m in _CODE.finditer(text):
        kind = m.lastgroup
        if kind == "call":
            kind = "dotted"
        name = m.group(kind)
        start, end = m.start(kind), m.end(kind)
        if kind == "dotted":
            parts = name.split(".")
            low = [p.lower() for p in parts]
            if any(p in _NOT_MODULES for p in low) or all(len(p) <= 1 for p in parts):
                continue
            if len(parts) == 2 and low[1] not in _FILE_EXT and not (
                    parts[0].islower() and parts[1].islower() or m.group("call")):
                continue  # "Mr.Smith", "end.The": two words run together, not a module
        elif kind == "fn":
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            if not _CODE_LINE.search(line) or name in ("if", "for", "while", "print"):
                continue
        out.append(Mention(name, _key(name), "code", start, end))
    # PascalCase words (two humps or more) on lines that look like code: class names.
    if _CODE_LINE.search(text) is None:
        return out
    for m in re.finditer(r"(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+(?![\w.])", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start:line_end if line_end >= 0 else len(text)]
        if _CODE_LINE.search(line):
            out.append(Mention(m.group(0), _key(m.group(0)), "code", m.start(),
                               m.end()))
    return out


# Where a sentence starts inside a line: after a list or heading marker ("- Working on"),
# and at a quoted sentence (a capital, then a lower-case word that is not a name connector,
# five words or more: 'The sign says, "Always look on the bright side"'), not a quoted title.
_LINE_MARK = re.compile(r"^[ \t]*(?:[-*+>#]+|\d{1,3}[.)])[ \t]+(?=[A-Z])", re.MULTILINE)
_QUOTED = re.compile(r"(?<![\w])[\"“](?=[A-Z][\w'’-]*\s(?!(?:of|the|for|a|in|on|and|&)\s)"
                     r"[a-z][\w'’-]*(?:\s[^\s\"”]+){3})")
# After "'s" these words read "is", not a possessive ("Life's too short", "Nature's amazing").
_IS_NEXT = {
    "a", "an", "the", "too", "so", "very", "really", "just", "not", "all", "been", "got",
    "going", "gonna", "always", "never", "still", "also", "quite", "pretty", "such", "amazing",
    "great", "awesome", "good", "cool", "nice", "important", "hard", "tough", "beautiful",
    "fun", "okay", "ok", "true", "fine", "right", "over", "here", "there", "back", "gone",
    "done", "like", "what", "how", "about", "my", "your", "our", "no", "full", "busy"}


def _name_mentions(text: str, sentence_starts: set[int]) -> list[Mention]:
    """Return the capitalised spans of ``text`` that name something: a sentence's first
    word only when it is also capitalised elsewhere or reads as a subject ("Dana wants"),
    never a stop word, month, weekday, nationality or single letter, nor a sentence's
    opening verb form before a lower-case word ("Working on the F"). Cost: O(len(text))."""
    if "\n" in text or text[:1] in "-*+>#0123456789" or '"' in text or "“" in text:
        sentence_starts = sentence_starts | {m.end() for m in _LINE_MARK.finditer(text)} \
            | {m.end() for m in _QUOTED.finditer(text)}
    spans = []
    elsewhere: set[str] = set()
    for m in _NAME.finditer(text):
        if m.start() not in sentence_starts:
            elsewhere.add(m.group(0).split()[0].rstrip("'’s"))
        spans.append(m)
    out = []
    for m in spans:
        start, words = m.start(), m.group(0)
        # drop stop words that open the span ("The", "My", "Last") and dangling connectors
        tokens = words.split(" ")
        at_start = start in sentence_starts
        while tokens and (tokens[0].lower().rstrip(",") in _STOP_INITIAL
                          or at_start and tokens[0].lower().rstrip(",!") in _INTERJECTIONS
                          or tokens[0].lower() in _NOT_NAMES
                          or re.fullmatch(_CONNECT, tokens[0])):
            if tokens[0].lower() in _STOP_INITIAL and not at_start and tokens[0] == "The" \
                    and len(tokens) > 1:
                break  # "The Nightingale" inside a sentence is a title
            start += len(tokens[0]) + 1
            tokens = tokens[1:]
            at_start = False if not at_start else start in sentence_starts or True
        # a sentence opening on a verb form before a lower-case word: "Working on the F",
        # "Started with the Docker setup" (not "Breaking Bad", not a name seen elsewhere)
        if at_start and start == m.start() and len(tokens) > 1 \
                and tokens[0].endswith(("ing", "ed", "ly")) and tokens[0] not in elsewhere \
                and re.fullmatch(_CONNECT, tokens[1]):
            start += len(tokens[0]) + 1
            tokens = tokens[1:]
            while tokens and re.fullmatch(_CONNECT, tokens[0]):
                start += len(tokens[0]) + 1
                tokens = tokens[1:]
        while tokens and (re.fullmatch(_CONNECT, tokens[-1]) or tokens[-1] in _I_FORMS):
            tokens = tokens[:-1]  # "Glad I could help": the pronoun is not part of a name
        if not tokens:
            continue
        if len(tokens) > 1 and all(t.isupper() for t in tokens) \
                and any(t.lower() in _STOP_INITIAL for t in tokens):
            continue  # "JUST DOING IT": shouting, not an acronym
        name = " ".join(tokens)
        if name.endswith(("'s", "’s")):
            name = name[:-2]
        low = name.lower()
        if low in _NOT_NAMES or low in _STOP_INITIAL and len(tokens) == 1 or len(name) < 2:
            continue
        if m.start() in sentence_starts and start == m.start() and len(tokens) == 1:
            after = text[m.end():m.end() + 20].split()
            nxt = after[0].lower().strip(",.!?;:") if after else ""
            possessive = (text[m.end():m.end() + 2] in ("'s", "’s") or words.endswith("'s")) \
                and nxt not in _IS_NEXT
            if name.endswith(("ing", "ly", "ed")) or not (
                    name in elsewhere or nxt in _FOLLOWS_NAME or possessive
                    or (name.isupper() and len(name) > 1)):
                continue
        out.append(Mention(name, _key(name), "name", start, start + len(name)))
    return out


def _month_day(mname: str | None, day: str | None, year: str | None,
               today: date | None) -> str | None:
    if mname is None or day is None:
        return None
    month = _MONTHS.get(mname.lower().rstrip("."))
    if month is None:
        return None
    y = int(year) if year else (today.year if today else None)
    if y is None:
        return None
    try:
        d = date(y, month, int(day))
    except ValueError:
        return None
    if not year and today and d > today:  # "March 3" said in January is last March
        try:
            d = d.replace(year=y - 1)
        except ValueError:
            return None
    return d.isoformat()


def _iso_of(m: re.Match[str], today: date | None) -> str | None:
    """Return the ISO date a :data:`_DATE` match names, or None (no year and no ``today``,
    or no such day)."""
    g = m.groupdict()
    try:
        if g["iso"]:
            return date(int(g["iso"]), int(g["im"]), int(g["id"])).isoformat()
        if g["sy"]:
            return date(int(g["sy"]), int(g["sm"]), int(g["sd"])).isoformat()
        if g["uy"]:
            a, b = int(g["um"]), int(g["ud"])
            month, day = (b, a) if a > 12 else (a, b)  # US order unless it cannot be
            return date(int(g["uy"]), month, day).isoformat()
    except ValueError:
        return None
    if g["mname"]:
        return _month_day(g["mname"], g["md"], g["my"], today)
    return _month_day(g["dname"], g["dd"], g["dy"], today)


def _relative(m: re.Match[str], today: date) -> str | None:
    """Return the ISO date a :data:`_TIME` match stands for, counted back from ``today``."""
    g = m.groupdict()
    if g["today"] or g["this"]:
        return today.isoformat()
    if g["yesterday"]:
        return (today - timedelta(days=1)).isoformat()
    last = (g["last"] or "").lower()
    if last.rstrip(".") in _WEEKDAY_ABBR:  # "last Fri"
        last = _WEEKDAYS[[d[:3] for d in _WEEKDAYS].index(last[:3])]
    if last:
        if last == "week":
            return (today - timedelta(days=7)).isoformat()
        if last == "weekend":  # the Saturday before today
            return (today - timedelta(days=(today.weekday() - 5) % 7 or 7)).isoformat()
        if last in _WEEKDAYS:
            back = (today.weekday() - _WEEKDAYS.index(last)) % 7 or 7
            return (today - timedelta(days=back)).isoformat()
        if last == "month":
            return _months_back(today, 1)
        if last == "year":
            return _months_back(today, 12)
        return None  # a season is not a day
    n = _NUMBER_WORDS.get((g["n"] or "").lower()) or int(g["n"]) if g["n"] else None
    unit = (g["unit"] or "").lower().rstrip("s")
    if n is None:
        return None
    if unit == "day":
        return (today - timedelta(days=n)).isoformat()
    if unit == "week":
        return (today - timedelta(weeks=n)).isoformat()
    return _months_back(today, n * (12 if unit == "year" else 1))


def _months_back(today: date, months: int) -> str:
    y, mo = divmod(today.year * 12 + today.month - 1 - months, 12)
    day = today.day
    while True:
        try:
            return date(y, mo + 1, day).isoformat()
        except ValueError:
            day -= 1


# -- facts -----------------------------------------------------------------------------------


def _clause(obj: str) -> str:
    """Return ``obj`` cut at the end of its clause (a conjunction, a comma that does not
    separate a list, a dash), stripped. A serial comma ("climbing, sliding, and playing
    games") closes a list, not the clause, unless a subject follows its "and" ("hiking,
    biking, and I go ...")."""
    m = _CLAUSE_END.search(obj)
    while m is not None and m.group(0)[0] == "," and "," in obj[:m.start()] \
            and m.group(0)[-3:].lower() in ("and", " or") \
            and _NEW_SUBJECT.match(obj, m.end()) is None:
        m = _CLAUSE_END.search(obj, m.end())
    if m is not None:
        obj = obj[:m.start()]
    comma = obj.find(",")
    if comma >= 0:
        tail = obj[comma + 1:]
        keep = (_LIST_TAIL.fullmatch(tail) is not None and _PRONOUN.search(tail) is None
                ) or _PLACE_TAIL.fullmatch(tail) is not None
        if not keep:
            if _ADJ_COMMA.search(obj, 0, comma) and _WORD_PAIR.match(tail):
                return ""  # "a safe, inviting place ...": where the thing ends is unsure
            obj = obj[:comma]
    return obj.strip(" ,'\"“”‘’")


def _noun_phrase(obj: str) -> str:
    """Return the thing ``obj`` starts with: cut before a purpose, place or time."""
    obj = _clause(obj)
    m = _NP_END.search(obj)
    if m is not None:
        obj = obj[:m.start()]
    return obj.strip(" ,'\"“”‘’")


def _good(obj: str) -> bool:
    """Whether ``obj`` stands on its own: words with a letter, not a pronoun or a pointer,
    not a lone function word ("I love to."), not the picture being shared ("a pic")."""
    return bool(obj) and any(c.isalpha() for c in obj) and len(obj) <= 120 \
        and _ANAPHOR.search(obj) is None and _SHARED_PIC.fullmatch(obj) is None \
        and obj.lower() not in _FUNCTION_WORDS


def _split_names(obj: str) -> list[str]:
    """Return "A and B" / "A, B and C" as its names when each is capitalised, else [obj]."""
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", obj)]
    if len(parts) > 1 and all(p and p[0].isupper() and len(p.split()) <= 4 for p in parts):
        return parts
    return [obj]


@dataclass(slots=True)
class _Context:
    text: str
    lower: str
    starts: list[int]
    spans: list[tuple[int, int]]
    today: date | None
    facts: list[Fact]
    seen: set[tuple[str, str, str, int]]
    names: set[str]  # the keys of the names and aliases the text mentions

    def sentences_with(self, words: tuple[str, ...]) -> list[int]:
        """Return the indexes of the sentences that hold one of ``words`` (lower case)."""
        found: set[int] = set()
        low = self.lower
        for w in words:
            i = low.find(w)
            while i >= 0:
                k = bisect.bisect_right(self.starts, i) - 1
                found.add(max(k, 0))
                # skip to the next sentence: one hit a sentence is enough
                nxt = self.starts[k + 1] if k + 1 < len(self.starts) else len(low)
                i = low.find(w, max(nxt, i + 1))
        return sorted(found)

    def sentence(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.spans[max(i, 0)]

    def when(self, start: int, end: int) -> str | None:
        s = self.text[start:end]
        for m in _DATE.finditer(s):
            iso = _iso_of(m, self.today)
            if iso:
                return iso
        if self.today is not None:
            for m in _TIME.finditer(s):
                iso = _relative(m, self.today)
                if iso:
                    return iso
        return None

    def asserted(self, m: re.Match[str], pre: int | None = None) -> tuple[int, int] | None:
        """Return the sentence of match ``m`` if it asserts something: not a question, no
        negation between the subject and the end of the match, no hedge before it."""
        start, end = self.sentence(m.start())
        sentence = self.text[start:end].rstrip()
        if sentence.endswith("?") or re.match(
                r"(?:can|could|do|does|did|is|are|was|were|should|would|will|how|what|why|"
                r"which|where|when|who|have|has|shall|may|might)\b", sentence, re.IGNORECASE):
            return None
        span = self.text[m.start():m.end() if pre is None else pre]
        if _NEG.search(span):
            return None
        before = self.text[start:m.start()]
        if _HEDGE.search(before) or re.search(r"\b(?:not|n't|never)\s*$", before):
            return None
        return start, end

    def add(self, subject: str, predicate: str, obj: str, kind: str, confidence: float,
            span: tuple[int, int], when: str | None = None) -> None:
        for pattern in (_TIME, _DATE):  # a time dates the fact, it is not part of the object
            t = pattern.search(obj)
            if t is not None and t.start() > 0:
                obj = obj[:t.start()]
        obj = _LEADING.sub("", obj).strip(" ,'\"“”‘’")
        obj = _TRAILING.sub("", obj)
        if not _good(obj) or not subject:
            return
        key = (_key(subject), predicate, _key(obj), span[0])
        if key in self.seen:
            return
        self.seen.add(key)
        if when is None:  # "I moved to Lisbon in March 2023": the sentence dates any fact
            when = self.when(*span)
        self.facts.append(Fact(subject, predicate, obj, kind, confidence, when, *span))


def _subject(m: re.Match[str]) -> str:
    """Return the subject a pattern's groups name: "user" for I/we/my, a person's name, or
    "my partner" / "Sam's sister" when only the relation is given."""
    g = m.groupdict()
    subj = g.get("subj") or ""
    if g.get("pname"):
        return g["pname"]
    if g.get("name"):
        if g.get("rel"):
            return f"{g['name']}'s {g['rel']}"
        return g["name"]
    if subj.lower() in ("i", "we", "my", "our", "let's", "let us"):
        return USER
    subj = subj.strip(" ,")
    return subj[0].lower() + subj[1:] if subj[:3] in ("My ", "Our") else subj


def _bad_subject(name: str) -> bool:
    return name.lower() in _STOP_INITIAL or name.lower() in _NOT_NAMES


def _scan(ctx: _Context, pattern: re.Pattern[str], *triggers: str) -> list[re.Match[str]]:
    """Return the matches of ``pattern`` in the sentences of the text that hold one of the
    ``triggers`` (lower-case words without which it cannot match). The patterns open on a
    subject that could start anywhere, so finding their verbs with ``str.find`` first and
    searching only those sentences is what keeps extraction linear and fast."""
    return _scan_sentences(ctx, pattern, ctx.sentences_with(triggers))


def _scan_starts(ctx: _Context, pattern: re.Pattern[str],
                 indexes: list[int]) -> list[re.Match[str]]:
    """Return the matches of ``pattern`` that open one of the clauses at ``indexes``."""
    out = []
    for k in indexes:
        start, end = ctx.spans[k]
        m = pattern.match(ctx.text, start, end)
        if m is not None:
            out.append(m)
    return out


def _scan_sentences(ctx: _Context, pattern: re.Pattern[str],
                    indexes: list[int]) -> list[re.Match[str]]:
    out: list[re.Match[str]] = []
    for k in indexes:
        start, end = ctx.spans[k]
        out.extend(pattern.finditer(ctx.text, start, end))
    return out


def _scan_clauses(ctx: _Context, pattern: re.Pattern[str],
                  indexes: list[int]) -> list[re.Match[str]]:
    """Like :func:`_scan_sentences` for a pattern that opens on a subject and its verb, but
    the search goes on after each verb rather than after the whole object, so a second
    clause's subject is found too ("It made me reflect on how far I've come since I started
    transitioning three years ago", "I painted it after I visited the beach last week")."""
    out: list[re.Match[str]] = []
    for k in indexes:
        pos, end = ctx.spans[k]
        while (m := pattern.search(ctx.text, pos, end)) is not None:
            out.append(m)
            pos = m.end("verb")
    return out


def _relations(ctx: _Context) -> None:
    for p in (_P_SWITCH, _P_GAVEUP, _P_INSTEAD):
        for m in _scan(ctx, p, *_TRIGGERS[p]):
            span = ctx.asserted(m, pre=m.start("a"))
            subj = _subject(m)
            if span is None or _bad_subject(subj):
                continue
            old, new = _clause(m.group("a")), _clause(m.group("obj"))
            if p is _P_INSTEAD:
                new = m.group("obj").strip()
            new = re.sub(r"\s+instead$", "", new)
            c = _CONFIDENCE["switched"]
            if _good(old) and _good(new):
                ctx.add(subj, "switched_from", old, "relation", c, span)
                ctx.add(subj, "switched_to", new, "relation", c, span)
    for m in _scan(ctx, _P_MOVED, *_TRIGGERS[_P_MOVED]):
        span, subj = ctx.asserted(m), _subject(m)
        if span and not _bad_subject(subj):
            ctx.add(subj, "moved_to", m.group("obj"), "relation", _CONFIDENCE["moved_to"], span)
    for m in _scan(ctx, _P_LIVES, *_TRIGGERS[_P_LIVES]):
        span, subj = ctx.asserted(m), _subject(m)
        if span and not _bad_subject(subj):
            obj = _noun_phrase_place(m.group("obj"))
            ctx.add(subj, "lives_in", obj, "relation", _CONFIDENCE["lives_in"], span)
    for m in _scan(ctx, _P_WORKS, *_TRIGGERS[_P_WORKS]):
        if not (m.group("org") or m.group("role")):
            continue
        span, subj = ctx.asserted(m), _subject(m)
        if span is None or _bad_subject(subj):
            continue
        if m.group("org") and m.group("org").lower() not in _STOP_INITIAL:
            ctx.add(subj, "works_at", m.group("org"), "relation", _CONFIDENCE["works_at"], span)
        if m.group("role"):
            ctx.add(subj, "works_as", _noun_phrase(m.group("role")), "relation",
                    _CONFIDENCE["works_as"], span)
    for p in (_P_EMPLOYER, _P_JOB_AT):
        for m in _scan(ctx, p, *_TRIGGERS[p]):
            span, subj = ctx.asserted(m), _subject(m)
            if span and not _bad_subject(subj):
                ctx.add(subj, "works_at", m.group("org"), "relation", _CONFIDENCE["works_at"],
                        span)
    for m in _scan(ctx, _P_BEEN_A, *_TRIGGERS[_P_BEEN_A]):
        span = ctx.asserted(m)
        if span:
            ctx.add(USER, "works_as", m.group("role").strip(), "relation",
                    _CONFIDENCE["works_as"], span)
    for m in _scan(ctx, _P_USES, *_TRIGGERS[_P_USES]):
        span, subj = ctx.asserted(m), _subject(m)
        if span and not _bad_subject(subj) and not _moved(ctx.text, m):
            ctx.add(subj, "uses", _noun_phrase(m.group("obj")), "relation", _CONFIDENCE["uses"],
                    span)
    for m in _scan(ctx, _P_LIVE_IN_TOOL, *_TRIGGERS[_P_LIVE_IN_TOOL]):
        span = ctx.asserted(m)
        if span:
            ctx.add(USER, "uses", m.group("obj"), "relation", _CONFIDENCE["uses"], span)
    for m in _scan(ctx, _P_IS_A, *_TRIGGERS[_P_IS_A]):
        name = m.group("name")
        first = name.split()[0]
        if first.lower() in _STOP_INITIAL or name.lower() in _NOT_NAMES:
            continue
        span = ctx.asserted(m)
        if span is None:
            continue
        obj = _noun_phrase(m.group("obj"))
        # "Dance is my stress fix": a capital the sentence gave, and a "my" that is no relation
        if re.match(r"(?:my|our)\s", obj) and _key(name) not in ctx.names \
                and not re.match(rf"(?:my|our)\s(?:[\w-]+\s)?(?:{_RELATIVE})s?\b", obj):
            continue
        # "X is a bit/lot/great ..." or "a perfect way to ..." describes, it does not classify
        if re.match(r"(?:a|an)\s+(?:bit|lot|little|few|must|great|good|nice|big|huge|real|"
                    r"perfect|wonderful|awesome|amazing|fun|cool|fantastic|excellent|beautiful|"
                    r"terrible|hard|tough|special|powerful|key|true|total|major|mix|way|"
                    r"reminder|sign|source|form|kind|sort|type|part)\b", obj) \
                or re.search(r"\bway$", obj):
            continue
        # "Finding my Zen is ...": a capital inside a noun phrase is no name of its own
        if re.search(r"\b(?:my|our|your|his|her|their|the|a|an|this|that)\s+$",
                     ctx.text[max(0, m.start() - 8):m.start()], re.IGNORECASE):
            continue
        ctx.add(name, "is", obj, "relation", _CONFIDENCE["is"], span)


def _noun_phrase_place(obj: str) -> str:
    """Return a place phrase: the clause, cut before a duration or reason ("for three years",
    "because ..."), keeping "City, State"."""
    obj = _clause(obj)
    m = re.search(r"\s+(?:for|since|because|with|and|now|ever|until|so)\b", obj)
    return (obj[:m.start()] if m else obj).strip(" ,")


def _preferences(ctx: _Context) -> None:
    text = ctx.text
    for m in _scan(ctx, _P_PREF, *_TRIGGERS[_P_PREF]):
        span, subj = ctx.asserted(m), _subject(m)
        if span is None or _bad_subject(subj) or _moved(text, m):
            continue
        verb = m.group("verb").lower()
        if m.group("name") and not m.group("rel") and not verb.endswith("s") \
                and verb not in ("enjoying", "loving"):
            continue  # "Feels like a dream": one named person takes "likes", not "like"
        before = text[m.start():m.start("verb")]
        if verb == "loving" and not re.search(r"been\s+$", before) or verb == "enjoying" \
                and not re.search(r"(?:been|'m|’m|am)\s+(?:[a-z]+\s+)?$", before):
            continue  # "I'm loving it" is a reaction; "I'm really enjoying X" a taste
        if not verb.endswith("ing") and re.search(r"(?:'m|’m|\bam)\s+(?:[a-z]+\s+)*$", before):
            continue  # "I'm just like my mom": a likeness, not a taste
        if subj == USER and re.search(r"'d|’d|would", before):
            continue
        obj = _clause(m.group("obj"))
        if re.match(r"(?:the\s+)?(?:idea|sound|look|way|fact|suggestion|list|tip)s?\b|"
                    r"(?:how|what|when|where|why|who|that|your|ya|myself|ourselves|"
                    r"yourself|every (?:minute|moment|second|bit))\b", obj, re.IGNORECASE):
            continue  # "I love how art lets us ...": a reaction to a situation, not a taste
        if _AT_HAND.match(obj) and not _GENERIC_THE.match(obj) \
                and _PREF_VERBS[verb] in ("loves", "likes", "enjoys"):
            continue  # "That's gorgeous! I love the bold colors": the thing shown, not a taste
        place = _PLACE_END.search(obj)
        if place is not None:
            obj = obj[:place.start()]
        obj = re.sub(r"\s+(?:a lot|so much|very much|the most|more|too)$", "", obj)
        if re.match(r"to\s|\w+ing\b", obj):  # an activity: "going to the park to relax"
            obj = _without_purpose(obj)
            company = _COMPANY.search(obj)
            if company is not None:  # "spending time with the friends I have": whom with
                obj = obj[:company.start()]
        ctx.add(subj, _PREF_VERBS[verb], obj, "preference", _CONFIDENCE["prefers"], span)
    for m in _scan(ctx, _P_FAN, *_TRIGGERS[_P_FAN]):
        span, subj = ctx.asserted(m), _subject(m)
        if span and not _bad_subject(subj) and not _moved(text, m):
            obj = _clause(m.group("obj"))
            place = _PLACE_END.search(obj)
            ctx.add(subj, "likes", obj[:place.start()] if place else obj, "preference",
                    _CONFIDENCE["prefers"], span)
    for m in _scan(ctx, _P_FAV, *_TRIGGERS[_P_FAV]):
        span = ctx.asserted(m)
        if span is None:
            continue
        who = m.group("who")
        subj = USER if who.lower() in ("my", "our") else who[:-2]
        what = _key(m.group("what")).replace("-", "_")
        ctx.add(subj, f"favourite_{what}", _clause_list(m.group("obj")), "preference",
                _CONFIDENCE["favourite"], span)
    for p in (_P_FAV_IS, _P_MY_FAV):
        found = _scan_starts(ctx, p, ctx.sentences_with(_TRIGGERS[p])) if p is _P_FAV_IS \
            else _scan(ctx, p, *_TRIGGERS[p])
        for m in found:
            span = ctx.asserted(m)
            obj = m.group("obj")
            while (lead := re.match(r"([A-Za-z]+),\s+", obj)) and (
                    lead.group(1).lower() in _STOP_INITIAL or lead.group(1).endswith("ly")):
                obj = obj[lead.end():]  # "Honestly, Korean cooking is my favourite"
            # "I love all dances, but contemporary is my top pick": the last clause
            tail = re.search(r",\s+(?:but|and|though|while|so|yet)\s+(?!.*,\s)", obj)
            if tail is not None:
                obj = obj[tail.end():]
            if span:
                ctx.add(USER, "likes", _clause_list(obj), "preference",
                        _CONFIDENCE["favourite"], span)


def _clause_list(obj: str) -> str:
    """Like :func:`_clause`, but a favourite may be a list ("noodles with garlic, ginger and
    greens") that runs to the sentence's end."""
    m = re.search(r",\s+(?:but|so|which|because|since|though|and I|I|it)\b|[;:()]|\s[-–—]\s",
                  obj)
    return (obj[:m.start()] if m else obj).strip(" ,'\"“”‘’")


def _decisions(ctx: _Context) -> None:
    for m in _scan(ctx, _P_DECIDED, *_TRIGGERS[_P_DECIDED]):
        span, subj = ctx.asserted(m), _subject(m)
        if span is None or _bad_subject(subj) or _moved(ctx.text, m):
            continue
        if m.group("to"):
            obj = _without_purpose(_clause(m.group("obj")))
            if _MUSING.match(obj):
                continue  # "I decided to think about it": a hedge, no choice made
        else:
            obj = _noun_phrase(m.group("obj"))
        ctx.add(subj, "decided", obj, "decision", _CONFIDENCE["decided"], span)
    for p, conf in ((_P_WILL, _CONFIDENCE["will"]), (_P_LETS, _CONFIDENCE["lets"])):
        for m in _scan(ctx, p, *_TRIGGERS[p]):
            span = ctx.asserted(m)
            if span is None:
                continue
            subj = _subject(m)
            verb = re.sub(r"\s+", " ", m.group("verb").lower())
            if _TO_LISTENER.search(m.group("obj")) or _NO_THING.match(m.group("obj")) \
                    or _YOURS.search(_clause(m.group("obj"))):
                continue  # "I'll get the video to you", "we'll get through this": no choice
            if verb in _THING_VERBS:
                objs = _split_names(_noun_phrase(m.group("obj")))
            else:
                phrase = f"{m.group('verb')} {_decision_phrase(m.group('obj'))}".strip()
                if _MUSING.match(phrase):
                    continue  # "I'll start thinking about what we can do": a hedge
                objs = [_without_purpose(phrase)]
            for obj in objs:
                ctx.add(subj, "decided", obj, "decision", conf, span)


# A decided action that is only thinking ("start thinking about what we can do", "decided to
# consider my options") is a hedge: nothing is chosen yet.
_MUSING = re.compile(r"(?:(?:start|begin|keep|try)\s+(?:to\s+)?)?(?:think|thinking|consider|"
                     r"considering|wonder|wondering|ponder|pondering|mull|mulling|figure|"
                     r"figuring|plan|planning|brainstorm|brainstorming|decide|deciding)\b",
                     re.IGNORECASE)
# A purpose infinitive after an action ("go to networking events to make things happen"): a
# "to" and a verb that does not follow a verb taking an infinitive ("learn to swim").
_PURPOSE = re.compile(
    r"\s+(?:in\s+order\s+)?to\s+(?:be|make|help|get|keep|see|stay|learn|show|give|find|raise|"
    r"support|build|bring|reach|meet|improve|spread|connect|have|do|try|take|let|create|share|"
    r"celebrate|remember|honou?r|relax|unwind|de-?stress|recharge|clear|gain|boost|expand|"
    r"grow|save|earn|become|feel|understand|explore|discover|prepare|avoid|ensure|"
    r"encourage|inspire|promote|lift|express|capture|pursue|achieve|attract|reduce|"
    r"increase|put|go|escape|spend|enjoy|say|thank|pay|lose|burn|blow|calm|distract|"
    r"challenge|push|stretch|practi[cs]e|train|focus)\b", re.IGNORECASE)
_TAKES_TO = frozenset((
    "learn", "learning", "learned", "learnt", "how", "want", "wants", "wanted", "need",
    "needs", "try", "trying", "tried", "decide", "start", "starting", "begin", "continue",
    "like", "love", "hope", "plan", "going", "used", "able", "have", "has", "had", "got",
    "ready", "where", "what", "when", "whether", "who", "chance", "way", "time", "back"))


def _without_purpose(phrase: str) -> str:
    """Return an action ``phrase`` without a trailing purpose infinitive ("go to networking
    events to make things happen" -> "go to networking events"); an infinitive the verb
    before it takes ("learn to swim", "try to help") stays."""
    for m in _PURPOSE.finditer(phrase):
        before = phrase[:m.start()].split()
        if len(before) >= 2 and before[-1].lower() not in _TAKES_TO:
            return phrase[:m.start()].rstrip(" ,")
    return phrase


def _moved(text: str, m: re.Match[str]) -> bool:
    """Whether match ``m`` opens in a relative clause whose object was moved before it: the
    subject follows "which" ("pottery, which I use for ..."), or a noun and "that" ("the tool
    that I use at work is slow"), or the object opens on a verb or a preposition
    ("something I love is awesome")."""
    if _MOVED_OBJ.match(m.group("obj")):
        return True
    before = text[max(0, m.start() - 40):m.start()]
    r = _RELATIVE_BEFORE.search(before)
    return r is not None and (r.group(1) is not None  # "which"
                              or (r.group(2) or "").lower() not in _THAT_VERBS)


_MOVED_OBJ = re.compile(
    r"(?:is|are|was|were|has|have|had|will|would|can|could|makes|made|helps|keeps|gives|brings|"
    r"means|feels|looks|seems|does|did|for|as|in|with|at|on|from|by|during|every|each|daily|"
    r"most|best|a lot|so much|very much)\b|'s\b", re.IGNORECASE)
_RELATIVE_BEFORE = re.compile(r"(?:\b(which)|(?:\b([\w'’]+)\s+)?\b(that))\s+$",
                              re.IGNORECASE)
# Words after which "that" opens what is said or known ("I realised that I love X"), not a
# relative clause.
_THAT_VERBS = frozenset((
    "think", "thought", "know", "knew", "realise", "realised", "realize", "realized", "feel",
    "felt", "find", "found", "guess", "hope", "say", "said", "admit", "notice", "noticed",
    "learn", "learned", "learnt", "discover", "discovered", "sure", "glad", "happy", "proud",
    "decided", "mean", "means", "agree", "believe", "saw", "see", "so", "now", "true",
    "remember", "forget", "forgot", "tell", "told", "show", "showed", "shows", "great",
    "amazing", "awesome", "crazy", "funny", "mentioned", "just", "also", "and", "but", ""))


def _decision_phrase(obj: str) -> str:
    """Return the rest of a decided action: its clause, without a trailing time or reason."""
    obj = _clause(obj)
    m = re.search(r"\s+(?:first|next|soon|today|tomorrow|tonight|later|then|this weekend|"
                  r"this week|now|instead|right away|as well)\b.*$", obj)
    return (obj[:m.start()] if m else obj).strip(" ,")


def _events(ctx: _Context) -> None:
    text = ctx.text
    # an event needs a time (or a "finally") in its sentence: search only those
    timed = ctx.sentences_with(_TIME_WORDS + tuple("0123456789"))
    if not timed:
        return
    for p in (_P_EVENT, _P_GOT_REL, _P_EVENT_BARE):
        found = _scan_starts(ctx, p, timed) if p is _P_EVENT_BARE \
            else _scan_clauses(ctx, p, timed) if p is _P_EVENT \
            else _scan_sentences(ctx, p, timed)
        for m in found:
            span = ctx.asserted(m)
            if span is None:
                continue
            sentence = text[span[0]:span[1]]
            dated = _DATE.search(sentence) is not None
            verb = re.sub(r"\s+", " ", m.group("verb").lower())
            milestone = verb in _MILESTONE_VERBS
            if not (dated or _TIME.search(sentence) or (milestone and re.search(
                    r"\b(?:finally|first time)\b", sentence))):
                continue
            subj = USER if p is _P_EVENT_BARE else _subject(m)
            if _bad_subject(subj):
                continue
            if p is _P_GOT_REL:
                obj = m.group("obj")
                if re.match(r"(?:the|a|an|my|our)\s+(?:one|ones|thing|things|same)\b", obj):
                    continue
            else:
                obj = m.group("obj")
                t = _TIME.search(obj)
                if t is not None:
                    obj = obj[:t.start()]
                d = _DATE.search(obj)
                if d is not None:
                    obj = obj[:d.start()]
                e = _EVENT_END.search(obj)
                while e is not None and ((_ROLE_AS.match(obj, e.start()) or _AT_NAME.match(
                        obj, e.start())) and _ROLE_NOUN.search(obj, 0, e.start())
                        or _TO_PLACE.match(obj, e.start())
                        and _TRIP_NOUN.search(obj, 0, e.start())):
                    # "my job as a banker", "a road trip to the beach house": one thing
                    e = _EVENT_END.search(obj, e.end())
                if e is not None:
                    obj = obj[:e.start()]
                obj = obj.strip(" ,")
                if not obj or obj.split()[0].lower() in ("to", "that", "into", "up", "out",
                                                          "on", "at", "in", "from", "for",
                                                          "back", "around", "over", "off",
                                                          "through", "by", "like", "away",
                                                          "down"):
                    continue
                if verb == "took":  # "took my kids to a park": the kids were taken
                    obj = re.split(r"\s+to\s+(?=(?:a|an|the|my|our)\s)", obj)[0]
                    taken = _TAKEN.match(obj)
                    if taken is not None:  # "took my fam camping": the fam, not the camping
                        obj = taken.group(0)
                if verb in _THING_EVENT_VERBS and not _GOT_THING.match(obj):
                    continue  # "got hurt", "got stuck", "got home": a state or place, no thing
                if verb in _MOTION_VERBS:  # "went to a fair to show off my studio"
                    obj = _without_purpose(obj)
                if verb == "went" and not re.match(r"[a-z]+ing\b", obj):
                    continue  # "went hiking", "went camping"; "went back", "went well" are not
                if verb in ("got", "had", "made", "took", "ran", "saw", "read") and \
                        re.match(r"(?:to|used|it|so|really|very|pretty|sick|lost|\w+ed)\b",
                                 obj):
                    continue  # "got used to", "got lost": not a thing got
                if verb == "had" and re.match(r"(?:a\s+)?(?:blast|ball|fun|(?:a|an|the)\s+"
                                              r"(?:[\w-]+\s+){0,2}(?:time|day|days|week|"
                                              r"weekend|month|year|night|morning|evening|"
                                              r"afternoon))\b", obj):
                    continue  # "had a blast", "had a great time", "had a wild week": how it went
            predicate = (_MILESTONE_VERBS.get(verb) or _EVENT_VERBS.get(verb)
                         or verb.replace(" ", "_"))
            kind = "milestone" if milestone else "event"
            conf = _CONFIDENCE["milestone" if milestone else
                               "event_dated" if dated else "event"]
            ctx.add(subj, predicate, obj, kind, conf, span, ctx.when(*span))


# -- the entry point --------------------------------------------------------------------------


def sure_mentions(text: str, aliases: Mapping[str, str] | None = None,
                  code: bool = True) -> list[Mention]:
    """Return only the mentions that are names for sure: known aliases and, with ``code``,
    code identifiers (overlaps settled as in :func:`extract`, code first), in text order.

    For text whose facts are not taken (an assistant's answer): it skips the name and fact
    patterns, the costly part of :func:`extract`. Cost: linear in ``len(text)``; on the
    scale benchmark's 18.7 MB of answers 2.2 s for the aliases and 3.7 s more for code."""
    table = DEFAULT_ALIASES if aliases is None else aliases
    found = [*(_code_mentions(text) if code else ()),
             *_alias_mentions(text, set(_WORD.findall(text.lower())), table)]
    found.sort(key=lambda m: (m.kind != "code", -(m.end - m.start), m.start))
    taken = bytearray(len(text))
    out = []
    for m in found:
        if any(taken[m.start:m.end]):
            continue
        taken[m.start:m.end] = b"\x01" * (m.end - m.start)
        out.append(Mention(m.name, table.get(m.key, m.key), m.kind, m.start, m.end))
    out.sort(key=lambda m: m.start)
    return out


def extract(text: str, aliases: Mapping[str, str] | None = None,
            today: str | None = None) -> Extraction:
    """Return the entities ``text`` mentions and the facts it states.

    ``aliases`` maps a normalised alias to its canonical key (the shape of
    :data:`palazzo.memory.kg.DEFAULT_ALIASES`, the default); it decides which words are
    known aliases and the key of every mention. ``today`` (YYYY-MM-DD) resolves relative
    times ("yesterday", "last week", "3 days ago") in a fact's ``when``; without it only
    dates with a year are resolved. Mentions do not overlap: where two kinds claim the same
    words the order is code, date, quantity, alias, name, and the longer span wins within a
    kind. Facts come one a (subject, predicate, object, sentence), in pattern order.

    Deterministic, pure and linear in ``len(text)``: about 1 M characters/s under CPython (see the
    module docstring for the measurement).
    """
    day = date.fromisoformat(today) if today else None
    table = DEFAULT_ALIASES if aliases is None else aliases
    spans = _sentences(text)
    starts = [s for s, _ in spans]
    lower = text.lower()
    mentions = _mentions(text, set(_WORD.findall(lower)), table, set(starts))
    # Facts are read a clause at a time: a spaced dash or a semicolon ends one ("I got great
    # news - I joined a gym last week!"), so an object or a time does not run across it.
    clauses = _clauses(text, spans)
    names = {_key(m.name) for m in mentions if m.kind in ("name", "alias")}
    ctx = _Context(text, lower, [s for s, _ in clauses], clauses, day, [], set(), names)
    if re.search(r"\b(?:I|[Ww]e|[Mm]y|[Oo]ur|[Ll]et's)\b|[A-Z][a-z]+\s+(?:is|switched|moved|"
                 r"works|started|prefers|uses|adopted|lives|got)\b|"
                 r"(?:^|[.!?]\s|\n)\s*(?:[A-Z][a-z]+ed|Got|Bought|Took|Saw|Ran|Met|Had|Made|"
                 r"Built|Sold|Won)\b", text):
        _relations(ctx)
        _preferences(ctx)
        _decisions(ctx)
        _events(ctx)
    ctx.facts.sort(key=lambda f: (f.start, f.kind, f.predicate))
    return Extraction(mentions, ctx.facts)


def _mentions(text: str, words: set[str], aliases: Mapping[str, str],
              sentence_starts: set[int]) -> list[Mention]:
    """Return every kind's mentions in ``text``, overlaps settled by kind then length."""
    digits = _DIGIT.search(text) is not None
    dates = [Mention(m.group(0), _key(m.group(0)), "date", m.start(), m.end())
             for m in _DATE.finditer(text)] if digits else []
    quantities = [Mention(m.group(0), _key(m.group(0)), "quantity", m.start(), m.end())
                  for m in _QUANTITY.finditer(text)] \
        if digits or not _NUMBER_SET.isdisjoint(words) else []
    found = [*_code_mentions(text), *dates, *quantities, *_alias_mentions(text, words, aliases)]
    names = _name_mentions(text, sentence_starts)
    rank = {"code": 0, "date": 1, "quantity": 2, "alias": 3, "name": 4}
    taken = bytearray(len(text))  # 1 where a mention already claimed the character
    out: list[Mention] = []

    def claim(m: Mention, key: str) -> None:
        if not key or any(taken[m.start:m.end]):
            return
        taken[m.start:m.end] = b"\x01" * (m.end - m.start)
        out.append(Mention(m.name, key, m.kind, m.start, m.end))

    # An alias inside a longer capitalised name ("Google Calendar") is part of that name.
    alias_spans = sorted((m.start, m.end) for m in found if m.kind == "alias")
    alias_starts = [a for a, _ in alias_spans]
    long_names = []
    for n in names:
        i = bisect.bisect_left(alias_starts, n.start)
        while i < len(alias_spans) and alias_spans[i][0] < n.end:
            a, b = alias_spans[i]
            if b <= n.end and b - a < n.end - n.start:
                long_names.append(n)
                break
            i += 1
    for m in long_names:  # claimed before the aliases inside them
        claim(m, aliases.get(m.key, m.key))
    ordered = sorted(found + names, key=lambda m: (rank[m.kind], -(m.end - m.start), m.start))
    for m in ordered:
        claim(m, m.key if m.kind in ("date", "quantity") else aliases.get(m.key, m.key))
    out.sort(key=lambda m: m.start)
    return out
