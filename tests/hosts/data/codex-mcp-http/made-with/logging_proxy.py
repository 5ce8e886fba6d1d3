"""A transparent HTTP proxy that writes down every exchange it relays (stdlib only).

Listens on 127.0.0.1:LISTEN and relays each request to 127.0.0.1:TARGET (method, path, headers
and body as they came, but for ``Host``, which names the target, as the server checks it),
then the answer back unchanged; each exchange is appended to LOG as one
JSON line: the request (method, path, headers, body) and the answer (status, headers, body).
Used to keep what a real assistant CLI sends to ``palazzo serve``'s ``/mcp``.

Usage: python3 logging_proxy.py LISTEN TARGET LOG
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


class Relay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _relay(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]), timeout=120)
        headers = {k: v for k, v in self.headers.items()}
        sent = {k: v for k, v in headers.items()  # http.client sets these itself
                if k.lower() not in ("host", "content-length", "connection")}
        sent["Host"] = f"127.0.0.1:{sys.argv[2]}"  # the server checks its Host
        conn.request(self.command, self.path, body=body or None, headers=sent)
        r = conn.getresponse()
        answer = r.read()
        record = {"request": {"method": self.command, "path": self.path,
                              "headers": headers, "body": body.decode("utf-8", "replace")},
                  "response": {"status": r.status, "headers": dict(r.getheaders()),
                               "body": answer.decode("utf-8", "replace")}}
        with LOCK, open(sys.argv[3], "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_DELETE = _relay


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Relay).serve_forever()
