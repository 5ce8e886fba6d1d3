"""Knowledge-graph operations: add, query, end and replace facts, timelines, traversal,
contradictions, statistics, aliases and entities.

The engine work (normalisation, dates, edges, the palace-file section) is in
:mod:`palazzo.memory.kg`. Every name argument goes through the palace's alias table, so
"GCP" and "Google Cloud Platform" query one entity.
"""

from __future__ import annotations

import heapq
from typing import Any

from palazzo.core.model import Entity
from palazzo.errors import NotFound, ValidationError
from palazzo.memory.kg import (
    DEFAULT_HOPS,
    DEFAULT_RESULTS,
    DIRECTIONS,
    ENTITY_PREFIX,
    MAX_HOPS,
    MAX_RESULTS,
    STATEMENT_TYPES,
    Added,
    KnowledgeGraph,
    Triple,
    normalise_entity,
    parse_when,
    traverse,
)
from palazzo.ops.registry import LIMIT, NAME, OPT_TEXT, Operations, Result, obj
from palazzo.palace import Palace

operation = Operations()

ENTITY = {"type": "string", "minLength": 1, "maxLength": 200,
          "description": "entity name; normalised (case, punctuation) and resolved through "
                         "the alias table"}
PREDICATE = {"type": "string", "minLength": 1, "maxLength": 100,
             "description": "relation name, normalised to lower_snake_case"}
WHEN = {"type": "string", "minLength": 10, "maxLength": 40,
        "description": "ISO 8601 date YYYY-MM-DD or datetime YYYY-MM-DDTHH:MM[:SS[.ffffff]]"
                       "[Z|±HH:MM] (no offset: UTC); a date means 00:00 UTC"}
CONFIDENCE = {"type": "number", "minimum": 0, "maximum": 1,
              "description": "0 to 1; a new fact defaults to 1"}
TRIPLE_ID = {"type": "string", "minLength": 1, "maxLength": 100}
STATEMENT = {"enum": list(STATEMENT_TYPES)}
DIRECTION = {"enum": list(DIRECTIONS)}
MAX_PREDICATES = 50

# The evidence and time fields a new fact may carry (kg_add and kg_supersede).
FACT_FIELDS: dict[str, Any] = {
    "confidence": CONFIDENCE, "valid_to": WHEN, "observed_at": WHEN,
    "source_drawer": NAME, "source_file": OPT_TEXT, "statement_type": STATEMENT,
    "subject_type": NAME, "object_type": NAME,
}


def _fields(args: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: args[k] for k in keys if k in args}


def _entity_dict(entity: Entity) -> Result:
    return {"id": entity.id, "key": entity.id[len(ENTITY_PREFIX):], "name": entity.name,
            "type": entity.type, "properties": entity.properties}


def _added(added: Added) -> Result:
    return {"triple_id": added.triple.id, "created": added.created, "updated": added.updated,
            "triple": added.triple.to_dict()}


def _limited(items: list[Any], limit: int) -> tuple[list[Any], bool]:
    return items[:limit], len(items) > limit


@operation(
 "kg_add",
 "Add a fact subject -predicate-> object with confidence, validity (valid_from/"
 "valid_to), evidence (source_drawer, source_file) and statement type. The same "
 "subject, predicate and object with overlapping validity is stored once, keeping "
 "the higher confidence. Returns the triple id and whether it was created/updated.",
 obj({"subject": ENTITY, "predicate": PREDICATE, "object": ENTITY,
       "valid_from": WHEN, **FACT_FIELDS}, ("subject", "predicate", "object")), mutates=True)
def _kg_add(palace: Palace, args: dict[str, Any]) -> Result:
    added = palace.kg.add(
        args["subject"], args["predicate"], args["object"],
        **_fields(args, "confidence", "valid_from", "valid_to", "observed_at",
                  "source_drawer", "source_file", "statement_type", "subject_type",
                  "object_type"),
    )
    return _added(added)


@operation(
 "kg_query",
 "Facts of an entity (out: it is the subject, in: the object, or both); with as_of, "
 "only those valid at that date; optionally one predicate.",
 obj({"entity": ENTITY, "direction": DIRECTION, "as_of": WHEN,
       "predicate": PREDICATE, "limit": LIMIT}, ("entity",)))
def _kg_query(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    entity = kg.entity(args["entity"])
    as_of = args.get("as_of")
    predicate = args.get("predicate")
    found = kg.query(args["entity"], args.get("direction", "both"), as_of,
                     None if predicate is None else [predicate])
    facts, truncated = _limited(found, args.get("limit", DEFAULT_RESULTS))
    return {"entity": _entity_dict(entity), "direction": args.get("direction", "both"),
            "as_of": None if as_of is None else parse_when(as_of, "as_of").text,
            "count": len(found), "truncated": truncated,
            "facts": [{**t.to_dict(), "direction": side} for t, side in facts]}


@operation(
 "kg_invalidate",
 "End a current fact (by triple_id, or every current fact with that subject, "
 "predicate and object): valid_to = ended (default now), invalidated_at = now.",
 obj({"triple_id": TRIPLE_ID, "subject": ENTITY, "predicate": PREDICATE,
       "object": ENTITY, "ended": WHEN}), mutates=True)
def _kg_invalidate(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    spo = [k for k in ("subject", "predicate", "object") if k in args]
    if ("triple_id" in args) == bool(spo):
        raise ValidationError("kg_invalidate needs either 'triple_id' or all of 'subject', "
                              "'predicate' and 'object'")
    if "triple_id" in args:
        targets: list[Triple] = [kg.get(args["triple_id"])]
    else:
        if len(spo) != 3:
            raise ValidationError("kg_invalidate needs all of 'subject', 'predicate' and "
                                  "'object' (or a 'triple_id')")
        targets = kg.matching(args["subject"], args["predicate"], args["object"])
        if not targets:
            raise NotFound("no current fact matches that subject, predicate and object")
    ended = kg.invalidate(targets, args.get("ended"))
    return {"count": len(ended), "ended": [t.to_dict() for t in ended]}


@operation(
 "kg_reopen",
 "Make an ended fact current again (the undo of kg_invalidate): clears its valid_to and "
 "invalidated_at, everything else stays. Refused when the fact is current or when the "
 "same fact (subject, predicate, object) is valid again after it starts.",
 obj({"triple_id": TRIPLE_ID}, ("triple_id",)), mutates=True)
def _kg_reopen(palace: Palace, args: dict[str, Any]) -> Result:
    return {"reopened": palace.kg.reopen(args["triple_id"]).to_dict()}


@operation(
 "kg_supersede",
 "End a current fact at 'at' (default now) and add its replacement valid from then "
 "(subject and predicate default to the old fact's), atomically: on any error "
 "neither change is made.",
 obj({"triple_id": TRIPLE_ID, "subject": ENTITY, "predicate": PREDICATE,
       "object": ENTITY, "at": WHEN, **FACT_FIELDS}, ("triple_id", "object")), mutates=True)
def _kg_supersede(palace: Palace, args: dict[str, Any]) -> Result:
    old, added = palace.kg.supersede(
        args["triple_id"], args["object"],
        **_fields(args, "subject", "predicate", "at", "confidence", "valid_to",
                  "observed_at", "source_drawer", "source_file", "statement_type",
                  "subject_type", "object_type"),
    )
    return {"ended": old.to_dict(), **_added(added)}


@operation(
 "kg_timeline",
 "Facts of an entity (or of the whole graph) in time order of validity.",
 obj({"entity": ENTITY, "predicate": PREDICATE, "limit": LIMIT}))
def _kg_timeline(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    name = args.get("entity")
    key = None if name is None else kg.entity(name).id[len(ENTITY_PREFIX):]
    found = kg.timeline(name, args.get("predicate"))
    facts, truncated = _limited(found, args.get("limit", DEFAULT_RESULTS))
    return {"entity": key, "count": len(found), "truncated": truncated,
            "facts": [t.to_dict() for t in facts]}


@operation(
 "kg_traverse",
 "Bounded breadth-first walk from an entity over current facts (or those valid "
 "as_of a date): whole paths with hop count and their weakest confidence, shortest "
 "first, deterministic order.",
 obj({"start": ENTITY,
       "predicates": {"type": "array", "items": PREDICATE, "minItems": 1,
                      "maxItems": MAX_PREDICATES},
       "direction": DIRECTION,
       "max_hops": {"type": "integer", "minimum": 1, "maximum": MAX_HOPS,
                    "default": DEFAULT_HOPS},
       "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                       "default": DEFAULT_RESULTS},
       "min_confidence": CONFIDENCE, "as_of": WHEN}, ("start",)))
def _kg_traverse(palace: Palace, args: dict[str, Any]) -> Result:
    predicates = args.get("predicates")
    if predicates is not None and not 1 <= len(predicates) <= MAX_PREDICATES:
        raise ValidationError(f"predicates must list 1 to {MAX_PREDICATES} predicates")
    result = traverse(palace.kg, args["start"], predicates=predicates,
                      direction=args.get("direction", "out"),
                      max_hops=args.get("max_hops", DEFAULT_HOPS),
                      max_results=args.get("max_results", DEFAULT_RESULTS),
                      min_confidence=args.get("min_confidence", 0.0), as_of=args.get("as_of"))
    return result.to_dict()


@operation(
 "kg_contradictions",
 "Pairs of facts with the same subject and predicate but different objects whose "
 "validity overlaps (optionally for one subject entity or one predicate).",
 obj({"entity": ENTITY, "predicate": PREDICATE, "limit": LIMIT}))
def _kg_contradictions(palace: Palace, args: dict[str, Any]) -> Result:
    found = palace.kg.contradictions(args.get("entity"), args.get("predicate"))
    items, truncated = _limited(found, args.get("limit", DEFAULT_RESULTS))
    return {"count": len(found), "truncated": truncated,
            "contradictions": [c.to_dict() for c in items]}


@operation(
 "kg_stats",
 "Knowledge-graph counts: entities, triples (current/ended), per predicate and "
 "statement type, aliases, RELATES_TO edges.",
 obj({}))
def _kg_stats(palace: Palace, args: dict[str, Any]) -> Result:
    return palace.kg.stats()


@operation(
 "kg_aliases", "The entity alias table (alias -> entity key) of the palace.",
 obj({}))
def _kg_aliases(palace: Palace, args: dict[str, Any]) -> Result:
    return {"aliases": dict(sorted(palace.kg.aliases.items()))}


@operation(
 "kg_alias",
 "Add an alias (a name that then resolves to an existing or future entity), or "
 "remove one with remove: true. The table is saved with the palace.",
 obj({"alias": ENTITY, "entity": ENTITY, "remove": {"type": "boolean"}},
      ("alias",)), mutates=True)
def _kg_alias(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    if args.get("remove", False):
        if "entity" in args:
            raise ValidationError("kg_alias with remove takes only 'alias'")
        return {"alias": args["alias"], "removed": True,
                "entity": kg.remove_alias(args["alias"])}
    if "entity" not in args:
        raise ValidationError("kg_alias needs 'entity' (the name the alias stands for), "
                              "or remove: true")
    return {"removed": False, **kg.add_alias(args["alias"], args["entity"])}


@operation(
 "kg_entity",
 "Create an entity or update its type and properties (merged).",
 obj({"name": ENTITY, "type": NAME, "properties": {"type": "object"}}, ("name",)), mutates=True)
def _kg_entity(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    entity, created = kg.set_entity(args["name"], args.get("type"), args.get("properties"))
    key = entity.id[len(ENTITY_PREFIX):]
    facts = kg.facts_of(key)
    return {"entity": _entity_dict(entity), "created": created, "facts": len(facts),
            "current": sum(t.current for t in facts)}


def _rank(key: str, query: str) -> int | None:
    """Return how well the key matches the normalised query (0 the whole key, 1 its start,
    2 the start of one of its words, 3 anywhere) or None for no match."""
    if key == query:
        return 0
    if key.startswith(query):
        return 1
    if f"-{query}" in key:
        return 2
    return 3 if query in key else None


def find_entities(kg: KnowledgeGraph, query: str,
                  limit: int) -> tuple[int, list[tuple[int, int, str, str | None]]]:
    """Return how many entities match ``query`` by key or alias and the best ``limit`` of
    them, best first, as (rank, facts, key, matched alias or None); an empty query matches
    every entity.

    A key's rank is its own or its best alias's (see :func:`_rank`); ties go to the entity
    with more facts, then the key. Cost: O(entities + aliases) substring tests and a
    partial sort, 5-15 ms at 5,000 entities under CPython (docs/browser.md).
    """
    q = normalise_entity(query)
    best: dict[str, tuple[int, str | None]] = {}
    for eid in kg.palace.entities:
        if eid.startswith(ENTITY_PREFIX):
            key = eid[len(ENTITY_PREFIX):]
            rank = _rank(key, q) if q else 3
            if rank is not None:
                best[key] = (rank, None)
    if q:
        for alias, key in kg.aliases.items():
            rank = _rank(alias, q)
            if rank is not None and ENTITY_PREFIX + key in kg.palace.entities \
                    and rank < best.get(key, (4, None))[0]:
                best[key] = (rank, alias)
    found = [(rank, -len(kg.by_subject.get(key, ())) - len(kg.by_object.get(key, ())), key,
              alias) for key, (rank, alias) in best.items()]
    top = heapq.nsmallest(limit, found, key=lambda m: (m[0], m[1], m[2]))
    return len(found), [(rank, -facts, key, alias) for rank, facts, key, alias in top]


@operation(
 "kg_entities",
 "Entities whose key or an alias matches 'query' (case and punctuation ignored): the "
 "whole name first, then names starting with it, then a word starting with it, then "
 "anywhere; ties by number of facts. Without a query, every entity, most facts first. "
 "Each with its fact counts (all, current) and the alias that matched.",
 obj({"query": {"type": "string", "maxLength": 200}, "limit": LIMIT}))
def _kg_entities(palace: Palace, args: dict[str, Any]) -> Result:
    kg = palace.kg
    limit = args.get("limit", DEFAULT_RESULTS)
    count, shown = find_entities(kg, args.get("query", ""), limit)
    out = []
    for _, facts, key, alias in shown:
        entity = palace.entities[ENTITY_PREFIX + key]
        out.append({**_entity_dict(entity), "facts": facts,
                    "current": sum(t.current for t in kg.facts_of(key)), "alias": alias})
    return {"query": normalise_entity(args.get("query", "")), "count": count,
            "truncated": count > limit, "entities": out}
