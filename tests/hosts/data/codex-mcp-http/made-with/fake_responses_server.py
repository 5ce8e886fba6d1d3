"""A scripted stand-in for the OpenAI Responses API (``POST /v1/responses``, SSE), enough for
``codex exec`` to use palazzo's MCP tools offline (adapted from the importer fixture's
``tests/palazzo/data/importers/codex-0.171.0/made-with/fake_responses_server.py``). Every
request is logged (JSON, one a line) to the file named by ``FAKE_LOG``. The script, decided
from the request's last input item:

- after a tool's output: a reasoning item and an answer quoting the output;
- a user prompt "Remember: <text>": a call of the offered tool whose name ends in
  ``add_drawer`` (wing "codex", room "notes", the text);
- a user prompt "Recall: <words>": a call of the tool whose name ends in ``search``;
- anything else: a short answer.

Usage: python3 fake_responses_server.py PORT
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTER = {"n": 0}


def _next_id(prefix: str) -> str:
    COUNTER["n"] += 1
    return f"{prefix}_{COUNTER['n']:04d}"


def _text_of(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _reasoning(summary: str) -> dict:
    return {"type": "reasoning", "id": _next_id("rs"),
            "summary": [{"type": "summary_text", "text": summary}],
            "content": None, "encrypted_content": "gAAAAB-scripted-opaque-reasoning=="}


def _message(text: str) -> dict:
    return {"type": "message", "id": _next_id("msg"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _tool_named(tools: list, suffix: str) -> str | None:
    for t in tools:
        if not isinstance(t, dict):
            continue
        name = t.get("name") or ""
        if name.endswith(suffix):
            return name
        for sub in t.get("tools", []) if isinstance(t.get("tools"), list) else []:
            if isinstance(sub, dict) and (sub.get("name") or "").endswith(suffix):
                return f"{name}/{sub['name']}"  # a namespace's tool: "mcp__palazzo/…"
    return None


def _script(body: dict) -> list[dict]:
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    last = items[-1] if items else {}
    tools = body.get("tools", [])
    if last.get("type") in ("function_call_output", "custom_tool_call_output",
                            "mcp_tool_call_output"):
        output = last.get("output")
        if isinstance(output, dict):
            output = output.get("content", "")
        if isinstance(output, list):
            output = "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
        return [_reasoning("**Reading the output**\n\nThe tool answered; quoting it."),
                _message("The palace answered:\n\n" + str(output)[:400])]
    prompt = _text_of(last) if last.get("role") == "user" else ""
    for word, suffix, args in (
            ("Remember:", "add_drawer", lambda t: {"wing": "codex", "room": "notes",
                                                   "content": t}),
            ("Recall:", "search", lambda t: {"query": t, "limit": 3})):
        if word in prompt:
            text = prompt.split(word, 1)[1].strip()
            name = _tool_named(tools, suffix)
            if name is None:
                return [_message(f"No tool ending in {suffix} was offered.")]
            space, _, tool = name.rpartition("/")
            return [_reasoning(f"**Planning**\n\nI should call `{name}`."),
                    {"type": "function_call", "id": _next_id("fc"), "name": tool,
                     **({"namespace": space} if space else {}),
                     "arguments": json.dumps(args(text)), "call_id": _next_id("call")}]
    return [_reasoning("**Answering directly**\n\nNo tool needed."),
            _message("I am a scripted model; tell me to Remember: or Recall: something.")]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # quiet
        pass

    def _log(self, record: dict) -> None:
        with open(os.environ.get("FAKE_LOG", "requests.log"), "a") as f:
            f.write(json.dumps(record) + "\n")

    def do_GET(self) -> None:
        self._log({"method": "GET", "path": self.path})
        body = json.dumps({"object": "list", "data": [{"id": "scripted-model",
                                                       "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        self._log({"method": "POST", "path": self.path, "headers": dict(self.headers),
                   "body": body})
        if not self.path.rstrip("/").endswith("/responses"):
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        rid = _next_id("resp")
        events = [("response.created", {"response": {"id": rid, "status": "in_progress"}})]
        for n, item in enumerate(_script(body)):
            events.append(("response.output_item.added", {"output_index": n, "item": item}))
            if item["type"] == "message":
                events.append(("response.output_text.delta", {
                    "output_index": n, "content_index": 0, "item_id": item["id"],
                    "delta": item["content"][0]["text"]}))
            events.append(("response.output_item.done", {"output_index": n, "item": item}))
        events.append(("response.completed", {"response": {
            "id": rid, "status": "completed",
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5},
                      "total_tokens": 120}}}))
        for name, data in events:
            data = {"type": name, **data}
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
