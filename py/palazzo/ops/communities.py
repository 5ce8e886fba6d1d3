"""The ``communities`` operation, and the mask a search filter and the map read.

The engine work is in :mod:`palazzo.memory.communities` (Louvain over the drawers' k-NN
similarity graph and their shared entities); the result is cached on the palace
(``palace.communities``) until its drawers, vectors or links change, so the operation, the
search filter (:func:`community_mask`) and the map colouring share one computation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.errors import NotFound, ValidationError
from palazzo.memory import communities as engine
from palazzo.ops.registry import LIMIT, Operations, Result, obj
from palazzo.palace import Palace

operation = Operations()


def _range(name: str, kind: str, description: str) -> dict[str, Any]:
    lo, hi = engine.LIMITS[name]
    return {"type": kind, "minimum": lo, "maximum": hi, "description": description}


# The settings every caller of the communities may give (the search filter takes them too,
# so that it filters by the communities the user was shown).
SETTINGS_SCHEMA: dict[str, Any] = {
    "k": _range("k", "integer", f"nearest drawers each drawer is linked to (default "
                f"{engine.K})"),
    "min_cosine": _range("min_cosine", "number", "a pair less similar than this is not "
                         f"linked (default {engine.MIN_COSINE})"),
    "entity_weight": _range("entity_weight", "number", "weight of a drawer's link to an "
                            "entity it names, against a cosine link's cosine (default "
                            f"{engine.ENTITY_WEIGHT}; 0: similarity only)"),
    "resolution": _range("resolution", "number", "Louvain's resolution: higher gives more, "
                         f"smaller communities (default {engine.RESOLUTION})"),
    "seed": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1,
             "description": f"Louvain's random seed (default {engine.SEED})"},
}


def settings_of(args: dict[str, Any]) -> engine.Settings:
    """Return the :class:`~palazzo.memory.communities.Settings` the keys of
    :data:`SETTINGS_SCHEMA` in ``args`` give (the defaults for those missing)."""
    given = {k: args[k] for k in SETTINGS_SCHEMA if args.get(k) is not None}
    try:
        return engine.Settings(**given).check()
    except ValueError as err:  # a caller that skipped the schema
        raise ValidationError(str(err)) from None


def communities_of(palace: Palace, args: dict[str, Any] | None = None) -> engine.Communities:
    """Return the palace's communities under the settings in ``args`` (from the palace's
    cache when nothing changed since they were computed). Cost: a cache check (a pass over
    the drawer ids), else :func:`palazzo.memory.communities.detect`."""
    return palace.communities.get(settings_of(args or {}))


def community_mask(palace: Palace, community_id: int,
                   args: dict[str, Any] | None = None) -> np.ndarray:
    """Return a boolean mask over the palace's drawer rows [0, ``drawers.size``): True for
    the live drawers of community ``community_id`` (under the settings in ``args``). Raises
    ValidationError for an id that is not a non-negative integer and NotFound for one the
    palace has no community of. Cost: :func:`communities_of` plus O(rows)."""
    if isinstance(community_id, bool) or not isinstance(community_id, int | np.integer) \
            or community_id < 0:
        raise ValidationError(f"community must be a non-negative integer, got "
                              f"{community_id!r}", field="community")
    found = communities_of(palace, args)
    if community_id >= len(found.communities):
        raise NotFound(f"no community {community_id}: the palace has "
                       f"{len(found.communities)} (ids 0 to {len(found.communities) - 1})"
                       if found.communities else f"no community {community_id}: the "
                       "palace has no drawers")
    return found.mask(int(community_id))


@operation("communities",
           "Groups of drawers about one thing: Louvain communities (seeded, deterministic) "
           "over each drawer's nearest drawers by meaning and the entities drawers share; "
           "each named by its most distinctive words, with its size, wings, rooms and "
           "entities. Largest first; a community's id is its place in that order. Cached "
           "until the drawers change.",
           obj({**SETTINGS_SCHEMA,
                "limit": {**LIMIT, "description": "communities listed (default 50)"},
                "min_size": {"type": "integer", "minimum": 1, "maximum": 1_000_000,
                             "description": "list only communities of at least this many "
                                            "drawers (default 1)"},
                "community": {"type": "integer", "minimum": 0,
                              "description": "list only this community"},
                "drawers": {"type": "boolean",
                            "description": "also list each community's drawer ids"}}),
           heavy=True)
def _communities(palace: Palace, args: dict[str, Any]) -> Result:
    found = communities_of(palace, args)
    listed = found.communities
    if "community" in args:
        community_mask(palace, args["community"], args)  # NotFound for an id not there
        listed = [listed[args["community"]]]
    listed = [c for c in listed if c.size >= args.get("min_size", 1)]
    limit = args.get("limit", 50)
    out = []
    store = palace.drawers
    for c in listed[:limit]:
        entry = c.to_dict()
        if args.get("drawers"):
            rows = np.flatnonzero(found.labels == c.id)
            entry["drawer_ids"] = sorted(store.ids[r] for r in rows.tolist())
        out.append(entry)
    s = found.settings
    return {"communities": out, "count": len(listed), "total": len(found.communities),
            "truncated": len(listed) > limit, "drawers": int(np.count_nonzero(
                found.labels >= 0)),
            "similarity": found.similarity, "modularity": round(found.modularity, 6),
            "links": found.links, "seconds": found.seconds,
            "settings": {"k": s.k, "min_cosine": s.min_cosine,
                         "entity_weight": s.entity_weight, "resolution": s.resolution,
                         "seed": s.seed}}
