"""A scripted stand-in for an OpenAI-compatible chat completions API (``POST
/v1/chat/completions``, streamed SSE ``chat.completion.chunk``s; ``GET /v1/models``), enough
for ``opencode run`` to hold a session offline. Every request is logged (JSON, one a line) to
the file named by ``FAKE_LOG``. The script, decided from the request's messages:

- a request whose system prompt asks for a title (OpenCode's title agent): a short title;
- after a tool's result (the last message has role ``tool``): an answer quoting it;
- a user prompt asking to "read" a file: a short text and a ``read`` tool call on
  ``notes.txt`` in the project folder (``FAKE_PROJECT``), as OpenCode's read tool wants an
  absolute path;
- a user prompt asking to "summarise" (the file attached with ``--file``): reasoning
  (streamed as ``reasoning_content`` deltas, which @ai-sdk/openai-compatible reads) and a
  short answer;
- any other prompt: a short answer.

Usage: FAKE_LOG=requests.log FAKE_PROJECT=/abs/project python3 fake_chat_server.py PORT
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTER = {"n": 0}
MODEL = "scripted-1"


def _next_id(prefix: str) -> str:
    COUNTER["n"] += 1
    return f"{prefix}-{COUNTER['n']:04d}"


def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _script(body: dict) -> tuple[str, list[dict], str]:
    """Return (text, tool calls, reasoning) of the scripted answer to one request."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    system = "\n".join(_text_of(m) for m in messages if m.get("role") == "system").lower()
    last = messages[-1] if messages else {}
    if "title" in system and "generate" in system and not body.get("tools"):
        return "Reading the notes file", [], ""
    if last.get("role") == "tool":
        output = _text_of(last)
        return "The file says:\n\n```\n" + output[:400].strip() + "\n```\n\nAnything else?", [], ""
    prompt = _text_of(last).lower() if last.get("role") == "user" else ""
    if "summarise" in prompt:  # before "read": the attached file comes as "Called the Read…"
        return ("It is a two-item to-do list: buy milk and water the plants.", [],
                "The attached file lists two chores; a one-line summary will do.")
    if "read" in prompt:
        path = os.path.join(os.environ.get("FAKE_PROJECT", os.getcwd()), "notes.txt")
        call = {"id": _next_id("call"), "type": "function",
                "function": {"name": "read", "arguments": json.dumps({"filePath": path})}}
        return "I will read notes.txt.", [call], ""
    return "You are welcome. Goodbye!", [], ""


def _chunks(text: str, calls: list[dict], reasoning: str = "") -> list[dict]:
    """Return the stream of one answer: role, reasoning and text in two deltas each, tool calls split in a
    header and argument pieces, a finish reason and a usage chunk."""
    cid = _next_id("chatcmpl")
    now = int(time.time())

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": now, "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    if reasoning:
        half = len(reasoning) // 2
        out += [chunk({"reasoning_content": reasoning[:half]}),
                chunk({"reasoning_content": reasoning[half:]})]
    if text:
        half = len(text) // 2
        out += [chunk({"content": text[:half]}), chunk({"content": text[half:]})]
    for i, call in enumerate(calls):
        args = call["function"]["arguments"]
        out.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"],
                                                       "arguments": ""}}]}))
        mid = len(args) // 2
        for piece in (args[:mid], args[mid:]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": MODEL,
             "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                                      "total_tokens": 120}}
    out.append(usage)
    return out


class Handler(BaseHTTPRequestHandler):
    def _log(self, record: dict) -> None:
        with open(os.environ.get("FAKE_LOG", "requests.log"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def do_GET(self) -> None:
        self._log({"method": "GET", "path": self.path})
        body = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        self._send(200, "application/json", body.encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        text, calls, reasoning = (_script(body) if self.path.endswith("/chat/completions")
                                  else ("", [], ""))
        self._log({"method": "POST", "path": self.path, "body": body,
                   "answer": {"text": text, "tool_calls": calls, "reasoning": reasoning}})
        if not self.path.endswith("/chat/completions"):
            self._send(404, "application/json", b'{"error": "not scripted"}')
            return
        if not body.get("stream"):
            message = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            doc = {"id": _next_id("chatcmpl"), "object": "chat.completion",
                   "created": int(time.time()), "model": MODEL,
                   "choices": [{"index": 0, "message": message,
                                "finish_reason": "tool_calls" if calls else "stop"}],
                   "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                             "total_tokens": 120}}
            self._send(200, "application/json", json.dumps(doc).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for c in _chunks(text, calls, reasoning):
            self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
