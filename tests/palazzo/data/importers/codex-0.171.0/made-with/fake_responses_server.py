"""A scripted stand-in for the OpenAI Responses API (``POST /v1/responses``, SSE), enough for
``codex exec`` to run a session offline. Every request is logged (JSON, one a line) to the
file named by ``FAKE_LOG``. The script, decided from the request's last input item:

- after a tool's output: a reasoning item (plain summary) and an answer quoting the output;
- a user prompt asking to "look" at the files: a reasoning item and a shell tool call (``ls``
  then, on a second turn asking to "read", ``cat notes.txt``);
- any other prompt (a third turn saying thanks): a reasoning item and a short answer.

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


def _shell_tool(tools: list) -> str:
    names = [t.get("name") for t in tools if isinstance(t, dict)]
    for name in ("shell_command", "exec_command", "shell"):
        if name in names:
            return name
    return names[0] if names else "shell"


def _tool_args(tool: str, command: str) -> str:
    if tool == "shell":
        return json.dumps({"command": ["bash", "-lc", command], "workdir": None})
    if tool == "exec_command":
        return json.dumps({"cmd": command})
    return json.dumps({"command": command})


def _reasoning(summary: str) -> dict:
    return {"type": "reasoning", "id": _next_id("rs"),
            "summary": [{"type": "summary_text", "text": summary}],
            "content": None, "encrypted_content": "gAAAAB-scripted-opaque-reasoning=="}


def _message(text: str) -> dict:
    return {"type": "message", "id": _next_id("msg"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _script(body: dict) -> list[dict]:
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    last = items[-1] if items else {}
    tool = _shell_tool(body.get("tools", []))
    if last.get("type") in ("function_call_output", "custom_tool_call_output"):
        output = last.get("output")
        if isinstance(output, dict):
            output = output.get("content", "")
        if isinstance(output, list):
            output = "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
        output = str(output).split("Output:\n", 1)[-1].strip()  # after exec_command's header
        return [_reasoning("**Reading the output**\n\nThe command ran; summarising it."),
                _message("The command printed:\n\n```\n" + output[:400] + "\n```")]
    prompt = _text_of(last).lower() if last.get("role") == "user" else ""
    for word, command in (("read", "cat notes.txt"), ("look", "ls")):
        if word in prompt:
            return [_reasoning(f"**Planning**\n\nI should run `{command}` to see."),
                    {"type": "function_call", "id": _next_id("fc"), "name": tool,
                     "arguments": _tool_args(tool, command), "call_id": _next_id("call")}]
    return [_reasoning("**Answering directly**\n\nNo tool needed."),
            _message("You are welcome. I am a scripted model; ask me to look at your files.")]


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
