"""Counts in sentences (hosts.words) and the interface's sentences that use them: a count of
one takes the singular noun and verb, any other count the plural."""

import re
from pathlib import Path

import pytest

from palazzo.hosts.words import plural, verb

ROOT = Path(__file__).resolve().parents[3]


def test_plural_and_verb_follow_the_count():
    assert plural(1, "drawer") == "1 drawer"
    assert plural(0, "drawer") == "0 drawers"
    assert plural(32, "drawer") == "32 drawers"
    assert plural(1200, "diary entry", "diary entries") == "1,200 diary entries"
    assert verb(1, "matches", "match") == "matches"
    assert [verb(n, "has", "have") for n in (0, 2)] == ["have", "have"]


# An f-string (Python) or template (JS) putting a bare count before a plural noun, or a
# "(s)" plural: the wording the tester found ("1 drawer match", "32 drawers in 1 wings").
BARE = re.compile(r"(\{[^{}]*(len\(|count|total|drawers|wings|rooms|cycles|visited|"
                  r"iterations|length|\bn\b)[^{}]*\}|\$\{[^{}]*\.(total|length)\}) "
                  r"(drawers|wings|rooms|files|items|cycles|nodes|steps|iterations|"
                  r"problems|communities)\b|\w\(s\)")


@pytest.mark.cpython_only  # it reads palazzo's source tree, which Pyodide's run has not
@pytest.mark.parametrize("path", sorted(
    [*(ROOT / "py/palazzo/hosts/ui").glob("*.py"), ROOT / "py/palazzo/hosts/importing.py",
     *(ROOT / "web").glob("*.js")]), ids=lambda p: p.name)
def test_no_sentence_counts_with_a_fixed_plural(path):
    bad = [f"{path.name}:{i}: {line.strip()}"
           for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if BARE.search(line) and not line.lstrip().startswith(("#", "//"))]
    assert not bad, "count sentences must use plural()/verb():\n" + "\n".join(bad)


@pytest.mark.cpython_only  # builds the Panel app, which the Pyodide engine run does not load
def test_the_interface_says_one_drawer_one_wing_one_room():
    pytest.importorskip("panel")
    from palazzo import Palace
    from palazzo.hosts.bridge import Bridge
    from palazzo.hosts.ui import build_app
    from palazzo.hosts.ui.files import check_html

    p = Palace(clock=lambda: 1764633600.0)
    p.add_drawer("garden", "roses", "the red roses bloom in june")
    app = build_app(Bridge(p)).palazzo_app
    app.search.query.value = "roses"
    assert "1 drawer matches “roses”." in app.search.summary.object
    assert "1 drawer in 1 room of 1 wing" in app.status.pane.object
    app.heat.show()
    assert "1 of 1 room shown" in app.heat.table.object
    app.map.show_room("garden", "roses")
    assert "(1 drawer)</h3>" in app.map.drawers.object
    app.map.show_heat()
    assert "1 of 1 room has some" in app.map.legend.object
    one = {"file": "palace.json", "ok": True, "role": "snapshot", "bytes": 10, "found": ""}
    text = check_html({"palace": "p", "check": {"ok": True, "files": [one]}})
    assert "(1 file)" in text
    bad = {**one, "ok": False}
    text = check_html({"palace": "p", "check": {"ok": True, "files": [one, bad]}})
    assert "1 file it does not need does not verify" in text
