"""A scripted stand-in for the Gemini API (``generativelanguage`` v1beta), enough for
``gemini -p`` to run a session offline. Every request is logged (JSON, one a line: method,
path, body) to the file named by ``FAKE_LOG``. Endpoints:

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: the scripted turn, streamed
  as server-sent events of ``GenerateContentResponse`` JSON (a thought part, text in two
  chunks, or a ``functionCall`` part; ``usageMetadata`` on the last chunk);
- ``POST /v1beta/models/<model>:generateContent``: the CLI's side calls: model routing (a
  JSON schema asking for a complexity score: every field filled, numbers 10) and the
  session summary an interactive start writes for the previous session (a fixed line);
- ``POST /v1beta/models/<model>:countTokens``: ``{"totalTokens": <body length / 4>}``;
- anything else: ``{}`` (logged, so a remake shows what the CLI asked).

The script, decided from the last content of a ``streamGenerateContent`` request:

- after a ``functionResponse`` part: a thought and an answer quoting the tool's output;
- a user prompt with "read": a thought and a ``read_file`` call on ``notes.txt``;
- a user prompt with "list": a thought and a ``run_shell_command`` call (``ls``);
- anything else: a thought and a short answer.

Usage: python3 fake_gemini_server.py PORT
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_VERSION = "gemini-scripted-1"


def _usage(body: bytes, out: int) -> dict:
    prompt = max(1, len(body) // 4)
    return {"promptTokenCount": prompt, "candidatesTokenCount": out, "thoughtsTokenCount": 7,
            "totalTokenCount": prompt + out + 7}


def _chunk(parts: list[dict], finish: str | None = None, usage: dict | None = None) -> dict:
    cand: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    out: dict = {"candidates": [cand], "modelVersion": MODEL_VERSION,
                 "responseId": "scripted-response"}
    if usage:
        out["usageMetadata"] = usage
    return out


def _thought(text: str) -> dict:
    return {"text": text, "thought": True}


def _text_of(content: dict) -> str:
    return "".join(p.get("text", "") for p in content.get("parts", []) if isinstance(p, dict)
                   and not p.get("thought"))


def _script(req: dict, raw: bytes) -> list[dict]:
    """Return the chunks of one streamed answer."""
    contents = [c for c in req.get("contents", []) if isinstance(c, dict)]
    last = contents[-1] if contents else {}
    parts = [p for p in last.get("parts", []) if isinstance(p, dict)]
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if responses:
        resp = responses[0].get("response", {})
        output = resp.get("output", resp.get("content", json.dumps(resp)))
        if not isinstance(output, str):
            output = json.dumps(output)
        return [_chunk([_thought("**Reading the result**\n\nThe tool answered; I will "
                                 "summarise it.")]),
                _chunk([{"text": "The tool gave back:\n\n```\n"}]),
                _chunk([{"text": output.strip()[:400] + "\n```\n"}], "STOP", _usage(raw, 30))]
    prompt = _text_of(last).lower()
    if "read" in prompt:
        call = {"name": "read_file", "args": {"file_path": "notes.txt"}}
        plan = "**Planning**\n\nI should read `notes.txt` with the read_file tool."
    elif "list" in prompt:
        call = {"name": "run_shell_command",
                "args": {"command": "ls", "description": "List the files in the folder."}}
        plan = "**Planning**\n\nI should run `ls` to see the files."
    else:
        return [_chunk([_thought("**Answering**\n\nA short reply will do.")]),
                _chunk([{"text": "You are welcome. "}]),
                _chunk([{"text": "Goodbye!"}], "STOP", _usage(raw, 5))]
    return [_chunk([_thought(plan)]),
            _chunk([{"functionCall": call}], "STOP", _usage(raw, 12))]


def _side_answer(req: dict) -> dict:
    """Return a non-streamed answer: JSON when the request asks for JSON, else text."""
    config = req.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json" or config.get("responseSchema") \
            or config.get("responseJsonSchema"):
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        answer: dict = {}
        for key, spec in props.items():
            kind = spec.get("type", "string") if isinstance(spec, dict) else "string"
            kind = kind.lower() if isinstance(kind, str) else "string"
            if "enum" in (spec or {}):
                answer[key] = spec["enum"][0]
            elif kind == "boolean":
                answer[key] = False
            elif kind in ("number", "integer"):
                answer[key] = 10
            elif kind == "array":
                answer[key] = []
            elif kind == "object":
                answer[key] = {}
            else:
                answer[key] = "scripted"
        text = json.dumps(answer)
    elif "Summarize the user's primary intent" in json.dumps(req.get("contents")):
        text = "List the folder's files and read notes.txt"  # the session summary (title)
    else:
        text = "Scripted answer."
    return _chunk([{"text": text}], "STOP", {"promptTokenCount": 10,
                                             "candidatesTokenCount": 5,
                                             "totalTokenCount": 15})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _log(self, body: bytes) -> None:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with open(os.environ.get("FAKE_LOG", "/dev/null"), "a", encoding="utf-8") as log:
            log.write(json.dumps({"method": self.command, "path": self.path,
                                  "body": parsed}) + "\n")

    def _json(self, doc: dict, status: int = 200) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._log(b"")
        self._json({})

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._log(raw)
        try:
            req = json.loads(raw) if raw else {}
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        if path.endswith(":streamGenerateContent"):
            data = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n"
                            for c in _script(req, raw))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path.endswith(":generateContent"):
            self._json(_side_answer(req))
        elif path.endswith(":countTokens"):
            self._json({"totalTokens": max(1, len(raw) // 4)})
        else:
            self._json({})

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
