"""Graph exports: the palace (or a knowledge-graph neighbourhood) as DOT, Mermaid or D3 JSON.

A :class:`Subgraph` is chosen first (the palace's rooms, the whole palace down to drawers, or
the entities within ``hops`` RELATES_TO hops of one entity), then rendered. Node labels are
user text (wing and room names, drawer openings, entity names), so every renderer escapes
them for its own syntax: a label can never end a string, start a new statement or carry
markup into a page that draws the graph. Node and edge order is canonical (sorted ids), so the
same palace gives byte-identical output.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from palazzo.core.model import PALACE_ID, EdgeKind
from palazzo.errors import NotFound, ValidationError
from palazzo.memory.kg import entity_id

FORMATS = ("dot", "mermaid", "d3")
LEVELS = ("rooms", "drawers")
MAX_NODES = 20_000
LABEL_CHARS = 48
ROOM_KINDS = frozenset({EdgeKind.HAS_WING, EdgeKind.HAS_ROOM, EdgeKind.HALL, EdgeKind.TUNNEL})


@dataclass(slots=True)
class Subgraph:
    """Nodes {id: (kind, label)} and edges (src, dst, kind) to render."""

    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _node(palace: Any, node: str) -> tuple[str, str]:
    """Return (kind, label) of any palace node id."""
    if node == PALACE_ID:
        return "palace", palace.name
    if node in palace.drawers.row_of:
        return "drawer", _short(palace.drawers.content[palace.row(node)])
    if node in palace.entities:
        return "entity", palace.entities[node].name
    if node in palace.agents:
        return "agent", palace.agents[node].name
    kind, _, rest = node.partition(":")
    return kind or "node", rest.rsplit("/", 1)[-1] or node


def palace_subgraph(palace: Any, level: str = "rooms", wing: str | None = None) -> Subgraph:
    """Return the palace's rooms level (palace, wings, rooms, halls, tunnels) or every node and
    live edge (``drawers``), optionally of one wing. Refuses graphs over MAX_NODES nodes."""
    if level not in LEVELS:
        raise ValidationError(f"level must be one of {', '.join(LEVELS)}")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    e = palace.edges
    g = Subgraph()
    for i in e.live():
        kind = e.kind[i]
        if level == "rooms" and kind not in ROOM_KINDS:
            continue
        src, dst = e.src[i], e.dst[i]
        g.edges.append((src, dst, kind.value))
    if wing is not None:
        inside = _wing_nodes(palace, wing)
        g.edges = [x for x in g.edges if x[0] in inside and x[1] in inside]
    ids = {n for s, d, _ in g.edges for n in (s, d)}
    if wing is None:
        ids.add(PALACE_ID)
    else:
        ids.add(f"wing:{wing}")
    if len(ids) > MAX_NODES:
        raise ValidationError(f"the graph has {len(ids)} nodes, more than {MAX_NODES}: "
                              "export the rooms level or one wing")
    g.nodes = {n: _node(palace, n) for n in sorted(ids)}
    g.edges.sort()
    return g


def _wing_nodes(palace: Any, wing: str) -> set[str]:
    """Return the ids of a wing, its rooms, closets and drawers (and agents/entities linked to
    its drawers are left out: they belong to no wing)."""
    s = palace.drawers
    out = {f"wing:{wing}"}
    out.update(r.id for (w, _), r in palace.rooms.items() if w == wing)
    out.update(c.id for (w, _, _), c in palace.closets.items() if w == wing)
    out.update(s.ids[int(r)] for r in s.live_rows() if s.wing[int(r)] == wing)
    return out


def entity_subgraph(palace: Any, entity: str, hops: int = 2) -> Subgraph:
    """Return the entities within ``hops`` RELATES_TO hops of ``entity`` (an id, or a name
    the knowledge graph normalises) and the RELATES_TO edges among them. Cost: O(edges seen)."""
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= 6:
        raise ValidationError("hops must be an integer from 0 to 6")
    start = _entity_id(palace, entity)
    e = palace.edges
    seen = {start: 0}
    queue = deque([start])
    edges: set[tuple[str, str, str]] = set()
    while queue:
        node = queue.popleft()
        for i in sorted(e.touching(node)):
            if e.kind[i] is not EdgeKind.RELATES_TO:
                continue
            other = e.dst[i] if e.src[i] == node else e.src[i]
            if other not in seen and seen[node] < hops:
                seen[other] = seen[node] + 1
                queue.append(other)
            if other in seen:
                edges.add((e.src[i], e.dst[i], EdgeKind.RELATES_TO.value))
    g = Subgraph()
    g.nodes = {n: _node(palace, n) for n in sorted(seen)}
    g.edges = sorted(edges)
    return g


def _entity_id(palace: Any, entity: str) -> str:
    if entity in palace.entities:
        return entity
    try:  # the knowledge graph's normalisation and aliases ("GCP" finds google-cloud-platform)
        candidate = entity_id(palace.kg.resolve(entity))
    except ValidationError:
        candidate = None
    if candidate in palace.entities:
        return candidate
    folded = entity.strip().casefold()
    for e in palace.entities.values():
        if e.name.casefold() == folded:
            return e.id
    raise NotFound(f"no entity {entity!r}")


# -- renderers ----------------------------------------------------------------------------------

def _dot_string(text: str) -> str:
    """Return ``text`` as a DOT double-quoted string (backslash, quote and newlines escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", " ").replace("\n", "\\n") + '"'


def to_dot(g: Subgraph, name: str = "palace") -> str:
    """Return the subgraph as a Graphviz digraph (node ids and labels quoted and escaped)."""
    lines = [f"digraph {_dot_string(name)} {{", "  node [shape=box];"]
    for nid, (kind, label) in g.nodes.items():
        lines.append(f"  {_dot_string(nid)} [label={_dot_string(label)}, "
                     f"class={_dot_string(kind)}];")
    for src, dst, kind in g.edges:
        lines.append(f"  {_dot_string(src)} -> {_dot_string(dst)} [label={_dot_string(kind)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


_MERMAID_ENTITIES = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "&": "#amp;",
                     "`": "#96;", "|": "#124;", "[": "#91;", "]": "#93;", "{": "#123;",
                     "}": "#125;", "(": "#40;", ")": "#41;", ";": "#59;"}


def _mermaid_label(text: str) -> str:
    """Return ``text`` with every character Mermaid could read as syntax or markup replaced by
    its #code; entity (newlines become spaces)."""
    return "".join(_MERMAID_ENTITIES.get(c, c) for c in " ".join(text.split()))


def to_mermaid(g: Subgraph) -> str:
    """Return the subgraph as a Mermaid flowchart; node ids are n0, n1… in canonical order
    (palace ids hold characters Mermaid ids cannot), labels are escaped."""
    short = {nid: f"n{i}" for i, nid in enumerate(g.nodes)}
    lines = ["flowchart LR"]
    for nid, (kind, label) in g.nodes.items():
        lines.append(f'  {short[nid]}["{_mermaid_label(label)}"]:::{kind}')
    for src, dst, kind in g.edges:
        lines.append(f'  {short[src]} -->|"{_mermaid_label(kind)}"| {short[dst]}')
    return "\n".join(lines) + "\n"


def to_d3(g: Subgraph) -> dict[str, Any]:
    """Return the subgraph as D3 node-link JSON: {"nodes": [{id, kind, label}], "links":
    [{source, target, kind}]} (a JSON document; labels stay data for the page to escape)."""
    return {"nodes": [{"id": n, "kind": k, "label": lab} for n, (k, lab) in g.nodes.items()],
            "links": [{"source": s, "target": d, "kind": k} for s, d, k in g.edges]}


def render(g: Subgraph, fmt: str, name: str = "palace") -> str | dict[str, Any]:
    """Return the subgraph in ``fmt`` (dot and mermaid as text, d3 as a JSON-able dict)."""
    if fmt == "dot":
        return to_dot(g, name)
    if fmt == "mermaid":
        return to_mermaid(g)
    if fmt == "d3":
        return to_d3(g)
    raise ValidationError(f"format must be one of {', '.join(FORMATS)}")


def export_graph(palace: Any, fmt: str = "d3", level: str = "rooms", wing: str | None = None,
                 entity: str | None = None, hops: int = 2) -> dict[str, Any]:
    """Return {"format", "nodes", "edges", "graph"}: the palace (``level``, ``wing``) or, when
    ``entity`` is given, its knowledge-graph neighbourhood, rendered as ``fmt``."""
    if fmt not in FORMATS:
        raise ValidationError(f"format must be one of {', '.join(FORMATS)}")
    g = (entity_subgraph(palace, entity, hops) if entity is not None
         else palace_subgraph(palace, level, wing))
    return {"format": fmt, "nodes": len(g.nodes), "edges": len(g.edges),
            "graph": render(g, fmt, palace.name)}


def dumps(result: dict[str, Any]) -> str:
    """Return the graph of an export_graph result as text (d3 as JSON)."""
    graph = result["graph"]
    return graph if isinstance(graph, str) else json.dumps(graph, ensure_ascii=False, indent=1)
