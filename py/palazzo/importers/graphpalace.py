"""Import a GraphPalace JSON export (``PalaceExport``: ``{version, exported_at, data}``).

Field names are those of GraphPalace's Rust sources (``gp-palace/src/export.rs``,
``gp-storage/src/memory.rs`` ``PalaceData``, ``gp-core/src/types.rs``): ``data`` holds maps
from id to record for ``wings`` (``name``, ``wing_type``, ``description``), ``rooms``
(``name``, ``hall_type``, ``description``), ``closets`` (``name``, ``summary``), ``drawers``
(``content``, ``source``, ``source_file``, ``importance``, ``created_at``), ``entities``
(``name``, ``entity_type``, ``description``) and ``agents`` (``name``, ``domain``, ``focus``,
``diary``), a list of ``relationships`` (``subject``, ``predicate``, ``object`` — entity ids
—, ``confidence``, ``valid_from``, ``valid_to``, ``observed_at``, ``invalidated_at``,
``statement_type``) and ``parent_map`` (child id -> parent id: room -> wing, closet -> room,
drawer -> closet), which is where the hierarchy lives.

Mapping: wings -> ``add_wing`` (with description), rooms -> ``add_room``, drawers ->
``add_drawer`` in their wing/room/closet (source ``"graphpalace"``, ``source_file`` and
``importance`` kept), entities -> ``kg_entity`` (type = ``entity_type``), relationships
between entities -> ``kg_add`` with names, confidence, validity, observed time and statement
type (an ``invalidated_at`` with no ``valid_to`` ends the fact then), agents -> ``add_agent``
(``focus`` is GraphPalace's archetype, ``domain`` becomes palazzo's focus) and every line of
an agent's ``diary`` -> ``diary_write``.

Not imported, and said so in the summary: embeddings (palazzo embeds again), pheromones and
edge costs (palazzo's trails start fresh), halls, tunnels and similarity edges (palazzo makes
its own from rooms and vectors), ``REFERENCES`` links from drawers to entities (palazzo has no
such edge; the entities themselves are imported), closets with no drawers and closet
summaries (palazzo makes closets through drawers).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers import (
    Plan,
    PlanBuilder,
    check_unicode,
    iso_when,
    number,
    planned_drawer_id,
    usable_name,
)
from palazzo.importers._files import read_regular
from palazzo.memory.kg import normalise_entity, normalise_predicate
from palazzo.stigmergy.agents import ARCHETYPES

SOURCE = "graphpalace"
STATEMENT_TYPES = ("fact", "observation", "inference", "hypothesis")

__all__ = ["plan_graphpalace"]


def _records(data: dict[str, Any], key: str, where: str) -> dict[str, dict[str, Any]]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ImportRejected(f"{where}.{key} must be an object (id -> record)")
    for rid, rec in value.items():
        if not isinstance(rec, dict):
            raise ImportRejected(f"{where}.{key}[{rid!r}] must be an object")
    return value


def _text(rec: dict[str, Any], field: str, where: str, required: bool = True) -> str:
    value = rec.get(field)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ImportRejected(f"{where}.{field} must be text")
    return value


def _order(records: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Records in creation order (GraphPalace maps are unordered), ties by id."""
    return sorted(records.items(), key=lambda kv: (str(kv[1].get("created_at", "")), kv[0]))


def plan_graphpalace(path: str | os.PathLike[str]) -> Plan:
    """Return the plan importing the GraphPalace export at ``path``.

    The whole file is parsed and every record checked (types, parent links, dates,
    confidences) before the plan is returned; a problem raises ImportRejected naming the
    file and the record. Calls come in dependency order: wings, rooms, drawers, entities,
    facts, agents, diary entries. Cost: one parse of the file; O(records).
    """
    source = Path(path)
    try:
        raw = read_regular(source)
    except OSError as err:
        raise ImportRejected(f"{source}: cannot read: {err.strerror}") from None
    doc = jsontext.loads(raw, str(source), ImportRejected)
    check_unicode(doc, str(source))
    where = str(source)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        raise ImportRejected(f"{where}: a GraphPalace export is an object with 'version', "
                             "'exported_at' and 'data'")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ImportRejected(f"{where}.version must be an integer")
    data = doc["data"]
    at = f"{where} data"
    wings = _records(data, "wings", at)
    rooms = _records(data, "rooms", at)
    closets = _records(data, "closets", at)
    drawers = _records(data, "drawers", at)
    entities = _records(data, "entities", at)
    agents = _records(data, "agents", at)
    parents = data.get("parent_map", {})
    if not isinstance(parents, dict) or not all(isinstance(v, str) for v in parents.values()):
        raise ImportRejected(f"{at}.parent_map must map ids to parent ids")
    relationships = data.get("relationships", [])
    if not isinstance(relationships, list):
        raise ImportRejected(f"{at}.relationships must be a list")

    builder = PlanBuilder(str(source), f"graphpalace-v{version}")
    wing_names: dict[str, str] = {}
    for wid, w in _order(wings):
        wat = f"{at}.wings[{wid!r}]"
        name = usable_name(_text(w, "name", wat))
        if name is None:
            raise ImportRejected(f"{wat}.name is not a usable wing name")
        wing_names[wid] = name
        builder.add("add_wing", {"name": name,
                                 "description": _text(w, "description", wat, False)}, wat)
    room_of: dict[str, tuple[str, str]] = {}
    for rid, r in _order(rooms):
        rat = f"{at}.rooms[{rid!r}]"
        parent = parents.get(rid)
        if parent not in wing_names:
            raise ImportRejected(f"{rat}: parent_map does not lead to a wing (got {parent!r})")
        name = usable_name(_text(r, "name", rat))
        if name is None:
            raise ImportRejected(f"{rat}.name is not a usable room name")
        room_of[rid] = (wing_names[parent], name)
        builder.add("add_room", {"wing": wing_names[parent], "name": name,
                                 "description": _text(r, "description", rat, False)}, rat)
    closet_of: dict[str, tuple[str, str, str]] = {}
    for cid, c in _order(closets):
        cat = f"{at}.closets[{cid!r}]"
        parent = parents.get(cid)
        if parent not in room_of:
            raise ImportRejected(f"{cat}: parent_map does not lead to a room (got {parent!r})")
        name = usable_name(_text(c, "name", cat))
        if name is None:
            raise ImportRejected(f"{cat}.name is not a usable closet name")
        closet_of[cid] = (*room_of[parent], name)
    used_closets: set[str] = set()
    planned: dict[str, str] = {}  # palazzo drawer id -> the record it comes from
    for did, d in _order(drawers):
        dat = f"{at}.drawers[{did!r}]"
        parent = parents.get(did)
        if parent not in closet_of:
            raise ImportRejected(f"{dat}: parent_map does not lead to a closet (got {parent!r})")
        wing, room, closet = closet_of[parent]
        content = _text(d, "content", dat)
        if not content.strip():
            builder.skip(dat, "empty drawer")
            continue
        args: dict[str, Any] = {"wing": wing, "room": room, "closet": closet, "content": content,
                                "source": SOURCE}
        if d.get("source_file") is not None:
            args["source_file"] = _text(d, "source_file", dat)
        if d.get("importance") is not None:
            args["importance"] = min(1.0, max(0.0, number(d["importance"], f"{dat}.importance")))
        used_closets.add(parent)
        did = planned_drawer_id(content, wing, room)
        if did in planned:
            # palazzo keeps one drawer per text in a room; say so instead of counting it twice
            builder.skip(dat, f"duplicate: the same text in {wing}/{room} as {planned[did]}")
            continue
        planned[did] = dat
        builder.add("add_drawer", args, dat)

    entity_names: dict[str, str] = {}
    for eid, e in _order(entities):
        eat = f"{at}.entities[{eid!r}]"
        name = usable_name(_text(e, "name", eat))
        if name is None:
            builder.skip(eat, "unusable entity name")
            continue
        entity_names[eid] = name
        args = {"name": name}
        etype = e.get("entity_type")
        if etype is not None:
            if usable_name(etype) is None:
                raise ImportRejected(f"{eat}.entity_type must be a name")
            args["type"] = usable_name(etype)
        builder.add("kg_entity", args, eat)
    references = 0
    for i, rel in enumerate(relationships):
        rat = f"{at}.relationships[{i}]"
        if not isinstance(rel, dict):
            raise ImportRejected(f"{rat} must be an object")
        subject, predicate, obj = (_text(rel, k, rat) for k in ("subject", "predicate", "object"))
        if subject in drawers or obj in drawers:
            references += 1  # drawer -> entity mention links; the entity is imported itself
            continue
        args = _fact(rel, rat, entity_names.get(subject) or usable_name(subject),
                     predicate, entity_names.get(obj) or usable_name(obj), entities, subject, obj)
        if args is None:
            builder.skip(rat, "unusable subject, predicate or object, or a self-loop")
            continue
        builder.add("kg_add", args, rat)

    diary_lines = 0
    for aid, a in _order(agents):
        aat = f"{at}.agents[{aid!r}]"
        name = usable_name(_text(a, "name", aat))
        if name is None:
            builder.skip(aat, "unusable agent name")
            continue
        focus = _text(a, "focus", aat, False).strip().lower()
        args = {"name": name, "archetype": focus if focus in ARCHETYPES else "balanced",
                "focus": _text(a, "domain", aat, False)}
        builder.add("add_agent", args, aat)
        for n, line in enumerate(_text(a, "diary", aat, False).splitlines()):
            if line.strip():
                builder.add("diary_write", {"agent": name, "text": line}, f"{aat}.diary line {n}")
                diary_lines += 1
    return builder.finish(
        version=version,
        exported_at=doc.get("exported_at"),
        wings=len(wings), rooms=len(rooms), closets=len(closets), drawers=len(drawers),
        entities=len(entities), relationships=len(relationships), agents=len(agents),
        diary_entries=diary_lines,
        not_imported={
            "embeddings": "palazzo embeds the text again",
            "pheromones_and_costs": "trails start fresh",
            "halls_tunnels_similarity": "palazzo derives its own",
            "references": references,
            "empty_closets": len(set(closets) - used_closets),
        },
    )


def _fact(rel: dict[str, Any], where: str, subject: str | None, predicate: str,
          obj: str | None, entities: dict[str, dict[str, Any]], sid: str,
          oid: str) -> dict[str, Any] | None:
    """Return the ``kg_add`` arguments of one relationship, or None if palazzo cannot hold
    it (no usable names, or subject and object are one entity)."""
    if subject is None or obj is None or not normalise_predicate(predicate) \
            or normalise_entity(subject) == normalise_entity(obj):
        return None
    args: dict[str, Any] = {"subject": subject, "predicate": predicate, "object": obj}
    if rel.get("confidence") is not None:
        args["confidence"] = number(rel["confidence"], f"{where}.confidence", 0.0, 1.0)
    start = iso_when(rel.get("valid_from"), f"{where}.valid_from")
    end = iso_when(rel.get("valid_to"), f"{where}.valid_to") or \
        iso_when(rel.get("invalidated_at"), f"{where}.invalidated_at")
    seen = iso_when(rel.get("observed_at"), f"{where}.observed_at")
    for key, value in (("valid_from", start), ("valid_to", end), ("observed_at", seen)):
        if value is not None:
            args[key] = value
    kind = rel.get("statement_type")
    if kind is not None:
        if kind not in STATEMENT_TYPES:
            raise ImportRejected(f"{where}.statement_type must be one of "
                                 f"{', '.join(STATEMENT_TYPES)}, got {kind!r}")
        args["statement_type"] = kind
    for key, eid in (("subject_type", sid), ("object_type", oid)):
        etype = entities.get(eid, {}).get("entity_type")
        if isinstance(etype, str) and usable_name(etype):
            args[key] = usable_name(etype)
    return args
