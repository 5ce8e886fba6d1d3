"""W3C PROV export: an admissible evidence bundle as a PROV-JSON document.

The export is deterministic (relations numbered in bundle order) and never fails on a time a
bundle carried: a time no date has is left out rather than raising.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from palazzo.provenance.kernel import AdmissibleEvidenceBundle, require_admissible


def _iso(t: float) -> str | None:
    """Return epoch seconds ``t`` as an ISO datetime (UTC), or None when no date has that
    time: an export never fails on a time a bundle carried. O(1)."""
    try:
        return datetime.fromtimestamp(t, UTC).isoformat()
    except (OverflowError, ValueError, OSError, TypeError):
        return None


def prov_document(bundle: AdmissibleEvidenceBundle) -> dict[str, Any]:
    """Return ``bundle`` as a W3C PROV-JSON document.

    Entities: every turn (``palazzo:Turn``), the slice (``palazzo:ContextSlice``, carrying the
    six fields, token and key id) and the policy (a ``prov:Plan``). One activity, the slicing
    (``palazzo:PolicyWeightedBFS``), which used each turn and generated the slice, associated
    with the agent palazzo (a ``prov:SoftwareAgent``) following the policy. The slice
    wasDerivedFrom each turn; a child turn wasDerivedFrom its parents (with the edge type);
    each turn wasAttributedTo an agent for its role. Relation ids are numbered in bundle
    order, so the document is deterministic. A time no date has (a bundle made in Python
    with ``sliced_at`` 1e308 or NaN) is left out rather than raising. A budgeted slice's
    entity carries ``palazzo:maxTokens`` and ``palazzo:tokenEstimate``. TypeError for a bundle
    that was not made by verifying (:func:`require_admissible`). Cost: O(turns + edges).
    """
    from palazzo._version import __version__

    require_admissible(bundle)
    f = bundle.fields
    sid = f"palazzo:slice_{f.slice_id}"
    act = f"palazzo:slicing_{f.slice_id}"
    plan = f"palazzo:policy_{f.policy_id}"
    engine = "palazzo:engine"
    entity: dict[str, Any] = {}
    for t in bundle.turns:
        attrs: dict[str, Any] = {
            "prov:type": "palazzo:Turn", "palazzo:conversation": t.conversation,
            "palazzo:role": t.role, "palazzo:phase": t.phase, "palazzo:salience": t.salience,
            "palazzo:depth": t.depth, "palazzo:distance": t.distance,
            "palazzo:priority": t.priority, "palazzo:contentHash": t.content_hash,
            "palazzo:drawer": t.drawer_id}
        if (created := _iso(t.created_at)) is not None:
            attrs["palazzo:createdAt"] = created
        if t.content is not None:
            attrs["prov:value"] = t.content
        entity[f"palazzo:{t.id}"] = attrs
    entity[sid] = {"prov:type": "palazzo:ContextSlice",
                   **{f"palazzo:{k}": v for k, v in f.to_dict().items()},
                   "palazzo:token": bundle.token, "palazzo:keyId": bundle.key_id}
    if bundle.budget is not None:
        entity[sid]["palazzo:maxTokens"] = bundle.budget.max_tokens
        entity[sid]["palazzo:tokenEstimate"] = bundle.budget.estimate
    entity[plan] = {"prov:type": "prov:Plan", "palazzo:paramsHash": f.policy_params_hash,
                    **{f"palazzo:{k}": (json.dumps(v, sort_keys=True) if isinstance(v, dict)
                                        else v)
                       for k, v in bundle.policy.to_dict().items()}}
    activity: dict[str, Any] = {act: {"prov:type": "palazzo:PolicyWeightedBFS",
                                      "palazzo:anchor": f"palazzo:{f.anchor_turn_id}"}}
    sliced = None if bundle.sliced_at is None else _iso(bundle.sliced_at)
    if sliced is not None:
        activity[act]["prov:startTime"] = activity[act]["prov:endTime"] = sliced
    roles = sorted({t.role for t in bundle.turns})
    agent: dict[str, Any] = {engine: {"prov:type": "prov:SoftwareAgent",
                                      "palazzo:version": __version__}}
    for r in roles:
        agent[f"palazzo:role_{r}"] = {"prov:type": "prov:Person" if r == "user"
                                      else "prov:SoftwareAgent", "palazzo:role": r}
    used = {f"_:u{i}": {"prov:activity": act, "prov:entity": f"palazzo:{t.id}"}
            for i, t in enumerate(bundle.turns)}
    derived = {f"_:d{i}": {"prov:generatedEntity": sid, "prov:usedEntity": f"palazzo:{t.id}",
                           "prov:activity": act}
               for i, t in enumerate(bundle.turns)}
    base = len(derived)
    for j, e in enumerate(bundle.edges):
        derived[f"_:d{base + j}"] = {"prov:generatedEntity": f"palazzo:{e.child}",
                                     "prov:usedEntity": f"palazzo:{e.parent}",
                                     "palazzo:edgeType": e.type}
    generated = {"_:g0": {"prov:entity": sid, "prov:activity": act}}
    if sliced is not None:
        generated["_:g0"]["prov:time"] = sliced
    return {
        "prefix": {"palazzo": "urn:palazzo:"},
        "entity": entity,
        "activity": activity,
        "agent": agent,
        "used": used,
        "wasGeneratedBy": generated,
        "wasAssociatedWith": {"_:a0": {"prov:activity": act, "prov:agent": engine,
                                       "prov:plan": plan}},
        "wasDerivedFrom": derived,
        "wasAttributedTo": {f"_:t{i}": {"prov:entity": f"palazzo:{t.id}",
                                        "prov:agent": f"palazzo:role_{t.role}"}
                            for i, t in enumerate(bundle.turns)},
    }
