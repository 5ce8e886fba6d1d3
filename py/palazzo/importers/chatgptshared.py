"""ChatGPT's ``shared_conversations.json``: the links the user made to share a conversation.

The file is a list of ``{id, conversation_id, title, is_anonymous}``: ``id`` is the share
(its page is ``https://chatgpt.com/share/<id>``), ``conversation_id`` the shared conversation,
``title`` its title when it was shared, ``is_anonymous`` whether the page hides the user's
name. It holds no message text and no dates: the conversations themselves are in the same
export's ``conversations.json``. So it becomes no conversation of its own (that would copy
them); it becomes one small transcript, ``chatgpt:shared-links``, whose single message lists
each shared conversation with its share links and its name in the palace
(``chatgpt:<conversation id>``), so "which chats did I share?" finds one answer.

A conversation shared more than once (real exports hold such pairs) is one line with every
link; a share id listed twice is counted once, the repeat left out with a reason.
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers.transcript import Message, Transcript

__all__ = ["SHARED", "SHARED_TITLE", "SHARE_URL", "read_shared", "sniff_shared"]

SHARED = "chatgpt:shared-links"  # the transcript the shared links gather in
SHARED_TITLE = "ChatGPT shared links"
SHARE_URL = "https://chatgpt.com/share/"
REPEATED = "repeated share link (listed once)"
_KEYS = ("id", "conversation_id", "is_anonymous")


def sniff_shared(doc: Any) -> bool:
    """Return whether the parsed JSON ``doc`` is a ``shared_conversations.json``: a non-empty
    list of objects that each have ``id``, ``conversation_id`` and ``is_anonymous`` and no
    ``mapping`` (a conversation) or ``message_id`` (``message_feedback.json``). An empty
    list says nothing and is not claimed. Cost: one pass over the list."""
    return isinstance(doc, list) and bool(doc) and all(
        isinstance(s, dict) and all(k in s for k in _KEYS)
        and "mapping" not in s and "message_id" not in s for s in doc)


def read_shared(doc: Any, where: str) -> list[Transcript]:
    """Return the transcript ``chatgpt:shared-links`` for the parsed ``shared_conversations
    .json`` ``doc`` (``where`` names the file for messages): one message, role user, kind
    text, a line per shared conversation in the order first shared; [] when nothing was
    shared. Raises ImportRejected naming the file and the share for a record that is not
    ``{id, conversation_id, title?, is_anonymous?}`` with ids as text. Cost: one pass."""
    if not isinstance(doc, list):
        raise ImportRejected(f"{where}: shared_conversations.json must be a list of shares")
    out = Transcript(SHARED, SHARED_TITLE, f"{where} shared links")
    links: dict[str, list[str]] = {}  # conversation id -> share ids, in file order
    titles: dict[str, str] = {}
    named: set[str] = set()  # conversations shared at least once with the user's name
    seen: set[str] = set()
    for n, share in enumerate(doc):
        at = f"{where} share {n}"
        if not isinstance(share, dict):
            raise ImportRejected(f"{at}: a share must be an object")
        sid, cid = share.get("id"), share.get("conversation_id")
        for key, value in (("id", sid), ("conversation_id", cid)):
            if not isinstance(value, str) or not value.strip():
                raise ImportRejected(f"{at}: {key} must be a non-empty string")
        title = share.get("title")
        if title is not None and not isinstance(title, str):
            raise ImportRejected(f"{at}: title must be a string")
        anonymous = share.get("is_anonymous", True)
        if anonymous is not None and not isinstance(anonymous, bool):
            raise ImportRejected(f"{at}: is_anonymous must be true or false")
        if sid in seen:
            out.skipped.append((at, REPEATED))
            continue
        seen.add(sid)
        links.setdefault(cid, []).append(sid)
        if title and title.strip() and not titles.get(cid):
            titles[cid] = title.strip()
        if anonymous is False:
            named.add(cid)
    if not links:
        return []
    lines = [f"[{SHARED_TITLE}]"]
    for cid, sids in links.items():
        urls = ", ".join(SHARE_URL + s for s in sids)
        note = " (shared with your name)" if cid in named else ""
        lines.append(f"- {titles.get(cid, 'untitled')}: {urls} "
                     f"(conversation chatgpt:{cid}){note}")
    out.nodes.append(Message("shared-links", None, "user", "\n".join(lines), None, out.where))
    return [out]
