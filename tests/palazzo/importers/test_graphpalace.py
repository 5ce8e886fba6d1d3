"""GraphPalace importer on exports shaped like GraphPalace's serde output (PalaceExport with
PalaceData: id-keyed maps, parent_map, 384-float embeddings, RFC 3339 times with
nanoseconds, relationships between entity ids)."""

import copy
import json
import os

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected
from palazzo.importers import apply
from palazzo.importers.graphpalace import plan_graphpalace
from palazzo.palace import Palace

pytestmark = pytest.mark.cpython_only

EMB = [0.0] * 384
PHER = {"exploitation": 0.25, "exploration": 0.0}


def at(second):
    return f"2026-01-05T10:00:{second:02d}.123456789Z"


def export():
    wings = {"wing_1": {"id": "wing_1", "name": "Science", "wing_type": "domain",
                        "description": "Science wing", "embedding": EMB, "pheromones": PHER,
                        "created_at": at(1)},
             "wing_2": {"id": "wing_2", "name": "Projects", "wing_type": "project",
                        "description": "", "embedding": EMB, "pheromones": PHER,
                        "created_at": at(2)}}
    rooms = {"room_3": {"id": "room_3", "name": "Physics", "hall_type": "facts",
                        "description": "Physics", "embedding": EMB, "pheromones": PHER,
                        "created_at": at(3)},
             "room_4": {"id": "room_4", "name": "palazzo", "hall_type": "events",
                        "description": "the engine", "embedding": EMB, "pheromones": PHER,
                        "created_at": at(4)}}
    closets = {cid: {"id": cid, "name": name, "summary": "Default closet", "embedding": EMB,
                     "pheromones": PHER, "drawer_count": n, "created_at": at(5)}
               for cid, name, n in (("closet_5", "General", 2), ("closet_6", "Design", 1),
                                    ("closet_7", "Empty", 0))}
    drawers = {
        "drawer_8": {"id": "drawer_8", "content": "Light travels at 299,792 km/s.",
                     "embedding": EMB, "source": "file", "source_file": "physics.md",
                     "importance": 0.9, "pheromones": PHER, "created_at": at(8),
                     "accessed_at": at(8)},
        "drawer_9": {"id": "drawer_9", "content": "Entropy never decreases in isolation.",
                     "embedding": EMB, "source": "conversation", "source_file": None,
                     "importance": 0.5, "pheromones": PHER, "created_at": at(9),
                     "accessed_at": at(9)},
        "drawer_10": {"id": "drawer_10", "content": "Pheromones decay every cycle.",
                      "embedding": EMB, "source": "agent", "source_file": None,
                      "importance": 1.5, "pheromones": PHER, "created_at": at(10),
                      "accessed_at": at(10)},
    }
    entities = {eid: {"id": eid, "name": name, "entity_type": etype, "description": name,
                      "embedding": EMB, "pheromones": PHER, "created_at": at(11)}
                for eid, name, etype in (("entity_11", "Einstein", "person"),
                                         ("entity_12", "Relativity", "concept"),
                                         ("entity_13", "Bern", "place"),
                                         ("entity_14", "Light", "concept"))}
    relationships = [
        {"id": "rel_15", "subject": "entity_11", "predicate": "created_by_inverse",
         "object": "entity_12", "confidence": 0.95, "valid_from": "1905-06-30T00:00:00+00:00",
         "valid_to": None, "observed_at": at(15), "invalidated_at": None,
         "statement_type": "fact"},
        {"id": "rel_16", "subject": "entity_11", "predicate": "located_in",
         "object": "entity_13", "confidence": 0.8, "valid_from": "1902-06-23T00:00:00+00:00",
         "valid_to": "1909-10-15T00:00:00+00:00", "observed_at": at(16),
         "invalidated_at": None, "statement_type": "observation"},
        {"id": "rel_17", "subject": "entity_12", "predicate": "explains", "object": "entity_14",
         "confidence": 0.5, "valid_from": None, "valid_to": None, "observed_at": at(17),
         "invalidated_at": at(18), "statement_type": "hypothesis"},
        {"id": "rel_18", "subject": "drawer_8", "predicate": "REFERENCES",
         "object": "entity_14", "confidence": 0.8, "valid_from": None, "valid_to": None,
         "observed_at": at(19), "invalidated_at": None},
    ]
    agents = {"agent_20": {"id": "agent_20", "name": "Curie", "domain": "physics",
                           "focus": "explorer", "goal_embedding": EMB, "temperature": 1.0,
                           "diary": "[2026-01-05 10:00] Visited Physics.\n"
                                    "[2026-01-05 10:05] Entropy drawer is cold.",
                           "created_at": at(20)},
              "agent_21": {"id": "agent_21", "name": "Helper", "domain": "", "focus": "odd",
                           "goal_embedding": EMB, "temperature": 0.5, "diary": "",
                           "created_at": at(21)}}
    parent_map = {"room_3": "wing_1", "room_4": "wing_2", "closet_5": "room_3",
                  "closet_6": "room_4", "closet_7": "room_4", "drawer_8": "closet_5",
                  "drawer_9": "closet_5", "drawer_10": "closet_6"}
    edge = {"success": 0.4, "traversal": 1.0, "recency": 0.9}
    return {
        "version": 1,
        "exported_at": "2026-01-06T09:00:00.000000001Z",
        "data": {
            "wings": wings, "rooms": rooms, "closets": closets, "drawers": drawers,
            "entities": entities, "relationships": relationships, "parent_map": parent_map,
            "edge_pheromones": {"wing_1:room_3": edge},
            "edge_costs": {"wing_1:room_3": {"base_cost": 0.3, "current_cost": 0.25}},
            "similarity_edges": {"drawer_8:drawer_9": 0.42},
            "halls": {}, "tunnels": {"room_3:room_4": None},
            "agents": agents, "next_id": 21, "schema_initialized": True,
        },
    }


def write(tmp_path, doc, name="palace-export.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_export_maps_to_the_palace(tmp_path):
    plan = plan_graphpalace(write(tmp_path, export()))
    s = plan.summary
    assert s["format"] == "graphpalace-v1"
    assert s["calls"] == {"add_wing": 2, "add_room": 2, "add_drawer": 3, "kg_entity": 4,
                          "kg_add": 3, "add_agent": 2, "diary_write": 2}
    assert s["not_imported"]["references"] == 1 and s["not_imported"]["empty_closets"] == 1
    palace = Palace(extract_on_add=False)  # the mapping alone (extraction adds entities)
    apply(plan, bind(palace))
    counts = palace.counts()
    assert (counts["wings"], counts["rooms"], counts["drawers"], counts["entities"],
            counts["agents"]) == (3, 3, 5, 4, 2)  # + the agent diary wing and its entries
    assert palace.wings["Science"].description == "Science wing"
    assert palace.rooms[("Projects", "palazzo")].description == "the engine"
    s = palace.drawers
    by_text = {s.content[r]: r for r in s.live_rows()}
    light = by_text["Light travels at 299,792 km/s."]
    assert (s.wing[light], s.room[light], s.closet[light]) == ("Science", "Physics", "General")
    assert s.source[light] == "graphpalace" and s.source_file[light] == "physics.md"
    assert s.columns["importance"][light] == pytest.approx(0.9)
    assert s.columns["importance"][by_text["Pheromones decay every cycle."]] == 1.0  # clamped

    facts = {f["predicate"]: f for f in
             call(palace, "kg_timeline", {"entity": "Einstein"})["facts"]}
    located = facts["located_in"]
    assert (located["valid_from"], located["valid_to"]) == ("1902-06-23T00:00:00Z",
                                                           "1909-10-15T00:00:00Z")
    assert located["statement_type"] == "observation" and located["confidence"] == 0.8
    assert located["observed_at"] == "2026-01-05T10:00:16.123456Z"  # nanoseconds cut
    explains = call(palace, "kg_timeline", {"entity": "Relativity",
                                           "predicate": "explains"})["facts"][0]
    assert explains["valid_to"] == "2026-01-05T10:00:18.123456Z"  # ended by invalidated_at
    assert explains["statement_type"] == "hypothesis"
    einstein = call(palace, "kg_query", {"entity": "Einstein"})["entity"]
    assert einstein["type"] == "person"

    agents = {a["name"]: a for a in call(palace, "list_agents")["agents"]}
    assert agents["Curie"]["archetype"] == "explorer" and agents["Curie"]["focus"] == "physics"
    assert agents["Helper"]["archetype"] == "balanced"
    diary = call(palace, "diary_read", {"agent": "Curie"})["entries"]
    assert sorted(e["content"] for e in diary) == ["[2026-01-05 10:00] Visited Physics.",
                                                   "[2026-01-05 10:05] Entropy drawer is cold."]

    again = apply(plan_graphpalace(write(tmp_path, export(), "again.json")), bind(palace))
    assert again["created"] == {}
    assert palace.counts() == counts


def rejected(tmp_path, doc, match, raw=None):
    path = tmp_path / "bad.json"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(doc), encoding="utf-8")
    palace = Palace()
    call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "already here"})
    before = palace.counts()
    with pytest.raises(ImportRejected, match=match):
        apply(plan_graphpalace(path), bind(palace))
    assert palace.counts() == before


def broken(change):
    doc = export()
    change(doc["data"])
    return doc


def test_malformed_exports_are_rejected(tmp_path):
    rejected(tmp_path, None, "not valid JSON", raw=b'{"version": 1, "data": {')
    rejected(tmp_path, [1], "an object with 'version'")
    rejected(tmp_path, {"version": "1", "data": {}}, "version must be an integer")
    rejected(tmp_path, broken(lambda d: d.update(wings=[])), r"data.wings must be an object")
    rejected(tmp_path, broken(lambda d: d["parent_map"].pop("drawer_9")),
             r"drawers\['drawer_9'\]: parent_map does not lead to a closet")
    rejected(tmp_path, broken(lambda d: d["parent_map"].update(room_3="nowhere")),
             r"rooms\['room_3'\]: parent_map does not lead to a wing")
    rejected(tmp_path, broken(lambda d: d["drawers"]["drawer_8"].update(content=7)),
             r"drawers\['drawer_8'\].content must be text")
    rejected(tmp_path, broken(lambda d: d["relationships"][0].update(statement_type="rumour")),
             r"relationships\[0\].statement_type")
    rejected(tmp_path, broken(lambda d: d["relationships"][1].update(confidence=2)),
             r"relationships\[1\].confidence must be between")
    rejected(tmp_path, broken(lambda d: d["relationships"][1].update(valid_from="yesterday")),
             r"relationships\[1\].valid_from is not an ISO 8601")
    rejected(tmp_path, broken(lambda d: d["relationships"][1].update(
        valid_to="1900-01-01T00:00:00+00:00")), "valid_to .* must be after valid_from")
    rejected(tmp_path, broken(lambda d: d["drawers"]["drawer_8"].update(importance="high")),
             r"importance must be a finite number")


def test_unusable_items_are_skipped(tmp_path):
    doc = export()
    data = doc["data"]
    data["entities"]["entity_99"] = copy.deepcopy(data["entities"]["entity_14"])
    data["entities"]["entity_99"].update(id="entity_99", name="\t")
    data["relationships"].append({"id": "rel_99", "subject": "entity_11", "predicate": "is",
                                  "object": "entity_11", "confidence": 1.0,
                                  "observed_at": at(30)})
    data["drawers"]["drawer_8"]["content"] = "  "
    plan = plan_graphpalace(write(tmp_path, doc))
    reasons = sorted(s["reason"] for s in plan.summary["skipped"])
    assert reasons == ["empty drawer", "unusable entity name",
                       "unusable subject, predicate or object, or a self-loop"]


def test_numbers_beyond_float_range_and_lone_surrogates_are_clear_errors(tmp_path):
    text = json.dumps(export())
    huge = "1" + "0" * 400
    rejected(tmp_path, None, r"drawers\['drawer_8'\].importance must be a finite number, got "
                             "an integer too large", raw=text.replace('"importance": 0.9',
                                                                      f'"importance": {huge}')
             .encode())
    rejected(tmp_path, None, r"relationships\[1\].confidence must be a finite number",
             raw=text.replace('"confidence": 0.8', '"confidence": 1e400', 1).encode())
    rejected(tmp_path, None, r"data.drawers.drawer_9.content holds a lone surrogate",
             raw=text.replace("Entropy never", "Entropy \\udc00 never").encode())


def test_drawers_palazzo_keeps_once_are_named_not_counted_twice(tmp_path):
    doc = export()
    data = doc["data"]
    data["drawers"]["drawer_99"] = dict(data["drawers"]["drawer_9"], id="drawer_99")
    data["parent_map"]["drawer_99"] = data["parent_map"]["drawer_9"]
    plan = plan_graphpalace(write(tmp_path, doc))
    assert plan.summary["calls"]["add_drawer"] == 3
    assert [(s["item"].rsplit(" ", 1)[-1], s["reason"].split(" as ")[0])
            for s in plan.summary["skipped"]] == \
        [("data.drawers['drawer_99']", "duplicate: the same text in Science/Physics")]
    palace = Palace()
    assert apply(plan, bind(palace))["created"]["add_drawer"] == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_a_clear_error_not_a_wait(tmp_path, in_time):
    fifo = tmp_path / "palace-export.json"
    os.mkfifo(fifo)
    with pytest.raises(ImportRejected, match=r"palace-export.json: cannot read: not a regular "
                                             r"file \(a FIFO\)$"):
        in_time(lambda: plan_graphpalace(fifo), fifo)
