import hashlib, json, math, threading
from http.server import BaseHTTPRequestHandler, HTTPServer

def vec(text, dim=384):
    h = hashlib.sha256(text.encode()).digest()
    v = [((h[i % 32] + i) % 251) / 251 - 0.5 for i in range(dim)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]

class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inp = body["input"]
        if isinstance(inp, str):
            inp = [inp]
        out = {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": vec(t)} for i, t in enumerate(inp)], "model": body.get("model")}
        data = json.dumps(out).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *a): pass

if __name__ == "__main__":
    HTTPServer(("127.0.0.1", 18765), H).serve_forever()
