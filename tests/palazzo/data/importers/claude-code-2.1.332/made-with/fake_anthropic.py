"""A scripted stand-in for the Anthropic Messages API, for recording Claude Code sessions.

It answers ``POST /v1/messages`` (streamed as server-sent events, or as one JSON message
when the request does not ask to stream), ``POST /v1/messages/count_tokens`` and
``GET /v1/models``; anything else gets a small JSON answer and is logged. No model runs: the
reply is chosen from the conversation so far by a fixed script (``reply_for``), so the same
prompts always give the same answers.

Usage: python3 fake_anthropic.py PORTFILE LOGFILE
It listens on a free port of 127.0.0.1 and writes the port number to PORTFILE. Every request
is appended to LOGFILE as one JSON line (method, path, a few headers, body).
"""

from __future__ import annotations

import itertools
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COUNTER = itertools.count(1)
MODEL = "claude-sonnet-4-5-20250929"


def _ids(prefix: str) -> str:
    return f"{prefix}_fake{next(COUNTER):020d}"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content
                     if isinstance(b, dict) and b.get("type") == "text")


def _tool_results(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)}


def _last_tool_use(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for m in reversed(messages):
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            uses = [b for b in m["content"] if b.get("type") == "tool_use"]
            if uses:
                return uses[-1]
    return None


def _turn(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The last user message (the CLI may put a system message after it)."""
    for m in reversed(messages):
        if m.get("role") == "user":
            return m
    return messages[-1]


def _prompt(content: Any) -> str:
    """The user's own words: the last text block that is not a system reminder."""
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content if isinstance(b, dict)
             and b.get("type") == "text" and not b.get("text", "").startswith("<system-")]
    return texts[-1] if texts else ""


def reply_for(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the content blocks of the scripted answer to a /v1/messages request."""
    messages = body.get("messages") or []
    if not messages:
        return [{"type": "text", "text": "(no messages)"}]
    last = _turn(messages)
    tools = _tool_names(body)
    if _tool_results(last.get("content")):
        use = _last_tool_use(messages) or {}
        name = use.get("name")
        if name == "Read":
            return [{"type": "text", "text": "The notes list three rooms of the palace: the "
                     "hall (greetings), the library (books to read) and the kitchen "
                     "(recipes). Each room holds a few short reminders."}]
        if name == "Bash" and "wc" in json.dumps(use.get("input")):
            return [{"type": "text", "text": "notes.txt has 10 words."}]
        if name == "Bash":
            return [{"type": "text", "text": "The project holds two files: notes.txt and "
                     "hello.py."}]
        if name in ("Agent", "Task"):
            return [{"type": "text", "text": "The subagent counted 10 words in notes.txt."}]
        return [{"type": "text", "text": f"Done ({name})."}]
    prompt = _prompt(last.get("content"))
    low = prompt.lower()
    if "Read" not in tools and "Bash" not in tools:
        if "title" in low or "summar" in low:
            return [{"type": "text", "text": '{"title": "Memory palace notes"}'}]
        return [{"type": "text", "text": "Memory palace notes"}]
    if "count the words" in low and "subagent" not in low:
        # the subagent's own task
        return [{"type": "text", "text": "I'll count them with wc."},
                {"type": "tool_use", "id": _ids("toolu"), "name": "Bash",
                 "input": {"command": "wc -w notes.txt", "description": "Count words"}}]
    if "subagent" in low:
        agent = "Agent" if "Agent" in tools else "Task"
        return [{"type": "tool_use", "id": _ids("toolu"), "name": agent,
                 "input": {"description": "Count words in notes",
                           "prompt": "Count the words in notes.txt in the current directory "
                                     "and report the number.",
                           "subagent_type": "general-purpose",
                           "run_in_background": False}}]
    if "read notes.txt" in low:
        return [{"type": "text", "text": "I'll read the notes file first."},
                {"type": "tool_use", "id": _ids("toolu"), "name": "Read",
                 "input": {"file_path": body_cwd(body) + "/notes.txt"}}]
    if "bash" in low:
        return [{"type": "tool_use", "id": _ids("toolu"), "name": "Bash",
                 "input": {"command": "ls", "description": "List files in the project"}}]
    if "memory palace" in low:
        return [{"type": "thinking", "thinking": "The user asks what a memory palace is. "
                 "Explain the method of loci briefly.", "signature": "ZmFrZS1zaWduYXR1cmU="},
                {"type": "text", "text": "A memory palace (the method of loci) is a way to "
                 "remember things by placing them, in your mind, in the rooms of a building "
                 "you know well, then walking through it to recall them."}]
    return [{"type": "text", "text": "Noted. Anything else?"}]


CWD = "/tmp/project"


def body_cwd(body: dict[str, Any]) -> str:
    """The working directory the CLI states in its prompts (else CWD)."""
    text = json.dumps(body).replace("\\n", "\n")
    marker = "Primary working directory: "
    at = text.find(marker)
    if at < 0:
        marker = "Working directory: "
        at = text.find(marker)
    if at < 0:
        return CWD
    return text[at + len(marker):].split("\n", 1)[0].strip()


def _events(blocks: list[dict[str, Any]], model: str) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events the real API sends for a message made of ``blocks``."""
    mid = _ids("msg")
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {
        "type": "message_start",
        "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 1,
                              "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 0}}})]
    out.append(("ping", {"type": "ping"}))
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}}))
            words = b["text"].split(" ")
            half = len(words) // 2
            for chunk in (" ".join(words[:half]) + " ", " ".join(words[half:])):
                out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                            "delta": {"type": "text_delta", "text": chunk}}))
        elif b["type"] == "thinking":
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                        "content_block": {"type": "thinking", "thinking": "",
                                          "signature": ""}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                        "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                        "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                          "input": {}}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": json.dumps(b["input"])}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 20}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_path = "requests.jsonl"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _log(self, body: Any) -> None:
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() in ("anthropic-version", "anthropic-beta", "user-agent",
                                    "x-app", "content-type")}
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": headers, "body": body}) + "\n")

    def _json(self, status: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _ids("req"))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self._log(None)
        if self.path.startswith("/v1/models"):
            self._json(200, {"data": [{"type": "model", "id": MODEL,
                                       "display_name": "Claude Sonnet 4.5 (fake)",
                                       "created_at": "2025-09-29T00:00:00Z"}],
                             "has_more": False, "first_id": MODEL, "last_id": MODEL})
        else:
            self._json(200, {})

    def do_HEAD(self) -> None:  # noqa: N802
        self._log(None)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"raw": raw.decode("utf-8", "replace")}
        self._log(body)
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 100})
            return
        if not path.endswith("/v1/messages"):
            self._json(200, {})
            return
        blocks = reply_for(body)
        model = body.get("model") or MODEL
        if not body.get("stream"):
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            self._json(200, {"id": _ids("msg"), "type": "message", "role": "assistant",
                             "model": model, "content": blocks, "stop_reason": stop,
                             "stop_sequence": None,
                             "usage": {"input_tokens": 100, "output_tokens": 20}})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", _ids("req"))
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in _events(blocks, model):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


def main() -> None:
    Handler.log_path = sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
