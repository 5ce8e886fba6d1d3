"""The HTTP app of ``palazzo serve``: operations, change feed, health, metrics, the web app.

:func:`make_app` builds a Starlette app over one :class:`PalaceDirectory`; :func:`serve`
runs it with uvicorn. Operations run in worker threads, one at a time (the directory's
lock: the palace in memory is not thread-safe), so the event loop stays free: health
checks, metrics and the change feed answer while a long call runs. Every call has a
deadline (:data:`CALL_TIMEOUT`): past it the client is answered 504 and the call goes on to
its end in its thread (a write is done or not done, never half; the 504 says to read before
writing again). Reads and writes wait for separate worker threads (:meth:`Server.threads`), and
the journal is compacted aside (:meth:`PalaceDirectory.compact_aside`: a forked child writes
the snapshot while reads go on), never on a write's request path.

Errors answer ``{"error": {"code", "type", "message"[, "field"]}}`` with the status of
:data:`STATUS` (the codes of :mod:`palazzo.errors`). Refused before anything is read: a
``Host`` that does not name this server (DNS rebinding), an ``Origin`` that is not this
server's own, a body whose ``Content-Length`` is over :data:`MAX_BODY` (and a body that
grows past it while read).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import mimetypes
import signal
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from palazzo.core import jsontext
from palazzo.errors import (
    Forbidden,
    NotFound,
    PalazzoError,
    ReadOnly,
    Unauthorized,
    UnknownOperation,
    ValidationError,
)
from palazzo.hosts.serve import SITE_HEADERS
from palazzo.hosts.server import openapi
from palazzo.hosts.server.client import remove_discovery, url_of, write_discovery
from palazzo.hosts.server.feed import KEEPALIVE_S, POLL_S, Feed, frame
from palazzo.hosts.server.pair import Pair
from palazzo.hosts.server.streamable import StreamableMcp
from palazzo.hosts.server.tokens import Scoped, Token, Tokens

mimetypes.add_type("application/wasm", ".wasm")  # what Pyodide's files are served as
mimetypes.add_type("text/javascript", ".mjs")
CALL_TIMEOUT = 30.0  # seconds a client waits for an operation
READ_THREADS = 1  # worker threads for reads a copy of the palace (Server.threads)
WRITE_THREADS = 2  # and for writes
HEAVY_THREADS = 2  # and for heavy reads, each waiting for its forked child (Operation.heavy)
COMPACT_RETRY_S = 60.0  # seconds before a compaction that failed is tried again
WARM_ROOM = 1024  # drawers the warm-up makes room for (Palace.reserve)
MAX_BODY = 64 << 20  # bytes of a request body (the MCP server's line limit)
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
# HTTP status by error class, most specific first.
STATUS: tuple[tuple[type[PalazzoError], int], ...] = (
    (UnknownOperation, 404), (NotFound, 404), (ValidationError, 400), (ReadOnly, 409),
    (Unauthorized, 401), (Forbidden, 403))
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _error(status: int, code: str, message: str, kind: str = "", field: str | None = None
           ) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "type": kind or code, "message": message}
    if field:
        body["field"] = field
    return JSONResponse({"error": body}, status_code=status)


def _host_of(value: str) -> tuple[str, int | None]:
    """Return (host name, port) of a ``Host`` header value ("[::1]:8765" → ("::1", 8765))."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = value.partition(":")
    return host, int(port) if port.isdigit() else None


class Guard:
    """ASGI middleware refusing, before the app reads anything: a ``Host`` not among
    ``hosts`` (or with another port), an ``Origin`` other than this server's own, and a
    ``Content-Length`` over ``max_body``."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str], port: int | None,
                 max_body: int) -> None:
        self.app, self.hosts, self.port, self.max_body = app, hosts, port, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        host, port = _host_of(headers.get("host", ""))
        refusal = None
        if host not in self.hosts or (self.port is not None and port not in (None, self.port)):
            refusal = _error(403, "forbidden_host", f"Host {headers.get('host', '')!r} is not "
                             "this server: palazzo serve answers only to its own address")
        elif "origin" in headers and not self._own(headers["origin"]):
            refusal = _error(403, "forbidden_origin", f"Origin {headers['origin']!r} is not "
                             "this server's: a page elsewhere may not call it")
        else:
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self.max_body:
                refusal = _error(413, "too_large", f"the request body is {int(length):,} "
                                 f"bytes; this server reads at most {self.max_body:,}")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _own(self, origin: str) -> bool:
        scheme, _, rest = origin.partition("://")
        host, port = _host_of(rest)
        return scheme == "http" and host in self.hosts and port == self.port


class SiteHeaders:
    """ASGI middleware adding to every answer the headers the web app is served with
    (:data:`palazzo.hosts.serve.SITE_HEADERS`: no stale caching, cross-origin isolation)."""

    HEADERS = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SITE_HEADERS]

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *[(k, v) for k, v in self.HEADERS if k not in have]]
            await send(message)

        await self.app(scope, receive, send_with)


class Metrics:
    """Requests and latency by operation, in Prometheus text. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, str], int] = {}
        self.seconds: dict[str, list[float]] = {}  # per op: [sum, count, *bucket counts]
        self.gauges: dict[str, float] = {}

    def observe(self, op: str, outcome: str, seconds: float) -> None:
        with self._lock:
            self.requests[(op, outcome)] = self.requests.get((op, outcome), 0) + 1
            row = self.seconds.setdefault(op, [0.0, 0.0] + [0.0] * len(BUCKETS))
            row[0] += seconds
            row[1] += 1
            for i, edge in enumerate(BUCKETS):
                if seconds <= edge:
                    row[2 + i] += 1

    def text(self, extra: dict[str, float]) -> str:
        with self._lock:
            lines = ["# HELP palazzo_requests_total Operations answered, by outcome.",
                     "# TYPE palazzo_requests_total counter"]
            lines += [f'palazzo_requests_total{{op="{op}",outcome="{out}"}} {n}'
                      for (op, out), n in sorted(self.requests.items())]
            lines += ["# HELP palazzo_request_seconds Time to answer an operation.",
                      "# TYPE palazzo_request_seconds histogram"]
            for op, row in sorted(self.seconds.items()):
                lines += [f'palazzo_request_seconds_bucket{{op="{op}",le="{edge}"}} '
                          f"{int(row[2 + i])}" for i, edge in enumerate(BUCKETS)]
                lines += [f'palazzo_request_seconds_bucket{{op="{op}",le="+Inf"}} '
                          f"{int(row[1])}",
                          f'palazzo_request_seconds_sum{{op="{op}"}} {row[0]:.6f}',
                          f'palazzo_request_seconds_count{{op="{op}"}} {int(row[1])}']
            gauges = {**self.gauges, **extra}
        for name, value in sorted(gauges.items()):
            lines += [f"# TYPE palazzo_{name} gauge", f"palazzo_{name} {value:g}"]
        return "\n".join(lines) + "\n"


class Server:
    """The app's state: the palace directory, the change feed, the metrics, the poller."""

    def __init__(self, directory: Any, call_timeout: float = CALL_TIMEOUT,
                 tokens: Tokens | None = None) -> None:
        self.directory = directory
        self.tokens = tokens  # None: no token is asked for (loopback without --tokens)
        self.registry = directory.registry
        self.names = frozenset(self.registry.names())
        self.call_timeout = call_timeout
        self.feed = Feed()
        self.metrics = Metrics()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._poller: threading.Thread | None = None
        self._compactor: threading.Thread | None = None
        self._compact_retry = 0.0  # (monotonic) no compaction before, after one failed
        self._limiters: dict[str, anyio.CapacityLimiter] | None = None
        self.compactions = 0
        self.ready = True
        # Compaction off the request path: a write never compacts here; the server does it
        # aside when the journal is due (PalaceDirectory.compact_aside), reads going on.
        for copy in self.copies():
            copy.store.compact_inline = False
            copy.reads_aside = True  # heavy reads (communities…) in a forked child,
            copy.aside_limit = call_timeout  # stopped when no caller waits for it any more
        self.metrics.gauges["copies"] = len(self.copies())  # (the palace held in memory)

    def copies(self) -> tuple[Any, ...]:
        """Return the palace directories this server holds in memory: the writer and the
        reader of a :class:`Pair`, the one directory otherwise (none for a palace that
        cannot compact aside, as a test's bare store)."""
        d = self.directory
        if isinstance(d, Pair):
            return d.writer, d.reader
        return (d,) if hasattr(d, "compact_aside") else ()

    # -- the palace, in worker threads -------------------------------------------------------
    def threads(self, name: str | None) -> anyio.CapacityLimiter:
        """Return the worker threads the operation ``name`` (None: a read that is no
        operation) waits for, shared by the calls of
        its kind (HTTP and MCP alike): :data:`WRITE_THREADS` for writes,
        :data:`HEAVY_THREADS` for heavy reads (each thread waits for the forked child that
        computes the answer: :meth:`PalaceDirectory.call`), :data:`READ_THREADS` a copy of
        the palace for other reads (two with a :class:`Pair`, whose reads go to the writer
        while a slow one holds the reader). Why so few: calls run one at a time on a copy
        anyway, and every thread more that waits in line contends for the GIL with the one
        that runs and with the event loop; measured with `palazzo bench serve` (50 clients,
        0.5 s apart, 20k drawers), 32 read threads gave a search p50 of 33–38 ms and one
        16–18 ms (docs/benchmarks.md). Why apart: a write may wait for the writer lock
        (another process's write, up to 30 s), and a heavy read for seconds, and neither
        should hold up the reads meanwhile."""
        if self._limiters is None:  # (made in the event loop, on the first call)
            copies = 2 if isinstance(self.directory, Pair) else 1
            self._limiters = {"read": anyio.CapacityLimiter(READ_THREADS * copies),
                              "write": anyio.CapacityLimiter(WRITE_THREADS),
                              "heavy": anyio.CapacityLimiter(HEAVY_THREADS)}
        if name is None:
            return self._limiters["read"]
        op = self.registry.get(name)
        aside = op.heavy and bool(self.copies())  # (every copy reads aside: __init__)
        return self._limiters["write" if op.mutates else "heavy" if aside else "read"]

    def token(self, request: Request) -> Token | None:
        """Return the request's token (None when the server asks for none); raise
        Unauthorized when it asks and the request has no valid one."""
        if self.tokens is None:
            return None
        return self.tokens.check(request.headers.get("authorization"))

    def caller(self, request: Request) -> tuple[Token | None, Response | None]:
        """Return (the request's token, None), or (None, the 401 answer) when the server
        asks for a token and the request has no valid one."""
        try:
            return self.token(request), None
        except Unauthorized as err:
            return None, _error(401, err.code, str(err), "Unauthorized")

    def call(self, name: str, args: dict[str, Any], token: Token | None = None
             ) -> dict[str, Any]:
        """Run an operation (in a worker thread) as ``token`` may, and publish the writes it
        and its follow saw. Cost: the operation's."""
        try:
            return Scoped(self.directory, token).call(name, args)
        finally:
            self.publish_after_call()
            self.compact_if_due()

    def compact_if_due(self) -> None:
        """Start a compaction aside in its own thread when the journal is due for one and
        none runs. Cost: a look at the store's status."""
        if self.directory.store.compact_inline or not self.directory.store.compact_due or \
                time.monotonic() < self._compact_retry:
            return
        with self._lock:
            if self._compactor is not None and self._compactor.is_alive():
                return
            self._compactor = threading.Thread(target=self._compact, name="palazzo-compact",
                                               daemon=True)
            self._compactor.start()

    def _compact(self) -> None:
        try:
            if self.directory.compact_aside():
                self.compactions += 1
                self.metrics.gauges["compactions"] = self.compactions
        except Exception:  # (ReadOnly: another process held the lock; tried again later)
            traceback.print_exc(file=sys.stderr)
        if self.directory.store.compact_due:  # it failed (said in the status): not at once
            self._compact_retry = time.monotonic() + COMPACT_RETRY_S
        self.publish()

    def publish_after_call(self) -> None:
        """:meth:`publish` after a call: with two copies without waiting for the writer (a
        read must not wait for a write to publish; the next call or the poller sends what
        this one would have), with one copy waiting, as its reads wait for writes anyway."""
        self.publish(wait=not isinstance(self.directory, Pair))

    def publish(self, wait: bool = True) -> None:
        """Send the writes the directory made or followed since the last call to the feed,
        and note the palace's size for the metrics; without ``wait``, nothing while a call
        runs on the writer (that call's own publish, or the poller's, sends them). Cost: a
        look at the store's status."""
        taken = self.directory.take_changes(wait)
        if taken is None:
            return
        events, status = taken
        self.feed.publish(events)
        self.metrics.gauges.update(seq=status["seq"], journal_records=status["journal_records"],
                                   journal_bytes=status["journal_bytes"],
                                   generation=status["generation"])

    def warm(self) -> None:
        """Run one search that finds drawers (the words of the newest one) before the server
        listens, so the parts of the palace a search reads that are built on first use
        (conversations, entity links, the knowledge graph: about 0.6 s at 20k drawers) are
        built before a client waits for them rather than while the first clients' calls
        queue behind it; make room for the next :data:`WARM_ROOM` drawers, which the first
        write would otherwise make while every call waits (0.4 s at 20k drawers: every
        per-drawer array copied); then move every object made so far out of the garbage collector's
        sight (``gc.freeze``), so that its full collections, which would walk the whole
        palace's millions of objects while every call waits, walk only what calls make.
        Returns None; a failure is left for the first call to meet."""
        for copy in self.copies():  # (each copy of a Pair builds its own)
            self._warm(copy)
        gc.collect()
        gc.freeze()

    @staticmethod
    def _warm(copy: Any) -> None:
        with contextlib.suppress(Exception):
            drawers = copy.store.palace.drawers
            rows = drawers.live_rows()
            words = " ".join(drawers.content[rows[-1]].split()[:8]) if len(rows) \
                else "palazzo"
            copy.call("search", {"query": words or "palazzo", "limit": 10})
            copy.store.palace.reserve(WARM_ROOM)

    def start(self) -> None:
        """Start following the other processes' writes every :data:`POLL_S` seconds."""
        def poll() -> None:
            while not self._stop.wait(POLL_S):
                try:
                    self.directory.refresh()
                    self.publish()
                    self.ready = not self.directory.status.read_only
                    self.compact_if_due()
                except Exception:  # a poll that fails is tried again; the calls still work
                    self.ready = False
                    traceback.print_exc(file=sys.stderr)
        self._poller = threading.Thread(target=poll, name="palazzo-follow", daemon=True)
        self._poller.start()

    def stop(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=5)
        compactor = self._compactor
        if compactor is not None:
            compactor.join(timeout=CALL_TIMEOUT)

    # -- endpoints ----------------------------------------------------------------------------
    async def op(self, request: Request) -> Response:
        name = request.path_params["name"]
        t0 = time.perf_counter()
        response = await self._op(name, request)
        outcome = "ok" if response.status_code == 200 else str(response.status_code)
        known = name if name in self.names else "unknown"
        self.metrics.observe(known, outcome, time.perf_counter() - t0)
        return response

    async def _op(self, name: str, request: Request) -> Response:
        token, refusal = self.caller(request)
        if refusal is not None:
            return refusal
        if name not in self.names:
            return _error(404, "unknown_operation", f"no operation named {name!r} (the list: "
                          "GET /api/openapi.json)", "UnknownOperation")
        body = await request.body()
        try:
            args = jsontext.loads(body, "the request body") if body.strip() else {}
        except ValidationError as err:
            return _error(400, "invalid_json", str(err), "ValidationError")
        if not isinstance(args, dict):
            return _error(400, "invalid_arguments", "the body must be a JSON object of the "
                          "operation's arguments", "ValidationError")
        try:
            with anyio.fail_after(self.call_timeout):
                result = await anyio.to_thread.run_sync(
                    self.call, name, args, token, abandon_on_cancel=True,
                    limiter=self.threads(name))
        except TimeoutError:
            return _error(504, "timeout", f"{name} took longer than {self.call_timeout:g} s; "
                          "it goes on in the server (a write is done or not done): read "
                          "before you write it again")
        except PalazzoError as err:
            status = next((s for cls, s in STATUS if isinstance(err, cls)), 500)
            d = err.to_dict()
            return _error(status, d["code"], d["message"], d["type"],
                          getattr(err, "field", None))
        except Exception as err:  # a bug: said, logged, and the server goes on
            traceback.print_exc(file=sys.stderr)
            return _error(500, "internal", f"{type(err).__name__}: {err}")
        return Response(json.dumps(result, ensure_ascii=False, allow_nan=False),
                         media_type="application/json")

    async def not_posted(self, request: Request) -> Response:
        return _error(405, "method_not_allowed", f"operations are called with POST "
                      f"(a JSON object of arguments as the body), not {request.method}")

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi.document(self.registry))

    async def events(self, request: Request) -> Response:
        token, refusal = self.caller(request)
        if refusal is not None:
            return refusal
        scope = Scoped(self.directory, token)
        queue = self.feed.listen()

        async def stream() -> AsyncIterator[str]:
            try:
                yield f": palazzo change feed, from seq {self.feed.last_seq}\n\n"
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if scope.visible(event) or event.get("op") == "lagged":
                        yield frame({k: v for k, v in event.items() if k != "wings"})
                    if event.get("op") == "lagged":
                        return
            finally:
                self.feed.leave(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def live(self, request: Request) -> Response:
        return JSONResponse({"status": "live"})

    async def ready_(self, request: Request) -> Response:
        status = self.directory.status
        ok = self.ready and not status.read_only
        return JSONResponse({"status": "ready" if ok else "not ready",
                             **({} if ok else {"problem": status.problem})},
                            status_code=200 if ok else 503)

    async def metrics_(self, request: Request) -> Response:
        _, refusal = self.caller(request)
        if refusal is not None:
            return refusal
        spilled = getattr(self.directory, "spilled", None)  # (a Pair's)
        return PlainTextResponse(self.metrics.text({
            "feed_listeners": self.feed.listeners, "feed_events": self.feed.published,
            **({} if spilled is None else {"reads_on_the_writer": spilled})}),
            media_type="text/plain; version=0.0.4")


def make_app(directory: Any, *, port: int | None = None, site: Path | None = None,
             call_timeout: float = CALL_TIMEOUT, max_body: int = MAX_BODY,
             hosts: frozenset[str] = LOOPBACK, tokens: Tokens | None = None
             ) -> tuple[Starlette, Server]:
    """Return the ASGI app serving ``directory`` (and the built web app in ``site``) and its
    :class:`Server`. ``port`` is the one the server listens on (for the Host and Origin
    checks; None: any); ``tokens``: ask every call for one of them."""
    server = Server(directory, call_timeout, tokens)
    routes = [Route("/api/ops/{name}", server.op, methods=["POST"]),
              Route("/api/ops/{name}", server.not_posted,
                    methods=["GET", "PUT", "PATCH", "DELETE"]),
              Route("/api/openapi.json", server.openapi, methods=["GET"]),
              Route("/api/events", server.events, methods=["GET"]),
              Route("/health/live", server.live, methods=["GET"]),
              Route("/health/ready", server.ready_, methods=["GET"]),
              Route("/metrics", server.metrics_, methods=["GET"])]
    streamable = StreamableMcp(server)
    routes.append(Route("/mcp", streamable.endpoint, methods=["GET", "POST", "DELETE"]))
    if site is not None and (Path(site) / "index.html").is_file():
        routes.append(Mount("/", StaticFiles(directory=str(site), html=True)))
    app = Starlette(routes=routes, middleware=[
        Middleware(SiteHeaders),
        Middleware(Guard, hosts=hosts, port=port, max_body=max_body),
        Middleware(RequestBodyLimitMiddleware, max_body_size=max_body)])
    return app, server


def check_host(host: str, palace: Path, require_tokens: bool = False) -> Tokens | None:
    """Return the tokens the server must ask for (None: none, the loopback default).
    Listening beyond the loopback address asks for them always, and is refused while the
    palace has none (``palazzo token create``)."""
    if host in LOOPBACK and not require_tokens:
        return None
    tokens = Tokens(palace)
    if not tokens.all():
        raise ValidationError(
            f"palazzo serve on {host!r} asks every caller for a token, and this palace has "
            "none yet: make one with `palazzo token create --scope write` (or listen on "
            "127.0.0.1)" if host not in LOOPBACK else
            "--tokens asks every caller for a token, and this palace has none yet: make one "
            "with `palazzo token create --scope write`")
    return tokens


def one_blas_thread() -> int | None:
    """Make NumPy's BLAS (OpenBLAS) use one thread in this process; return how many it used
    before (None where threadpoolctl finds no BLAS).

    Why: the server runs one operation at a time, and a search's one matrix-vector product
    over the drawer vectors gains about a millisecond from a second thread (7.5 -> 6.6 ms at
    20k drawers), while OpenBLAS's threads spin between calls: with two, the server took
    about 1.8 of this machine's 2 cores under the serve benchmark's load, leaving a
    compaction's child and the clients to fight over the rest (search p99 0.6-0.7 s; with
    one thread 0.16-0.26 s, docs/benchmarks.md "The palace server under load"). Cost:
    reading the loaded libraries once."""
    from threadpoolctl import threadpool_info, threadpool_limits

    with contextlib.suppress(ImportError):  # SciPy's own OpenBLAS, loaded now to be limited
        import scipy.linalg.blas  # noqa: F401
    before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    threadpool_limits(1, user_api="blas")
    return max(before) if before else None


def _flock() -> bool:
    """Whether this system has ``flock`` (the two copies of a :class:`Pair` exclude each
    other through it; without it, one copy)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


def serve(directory: Any, host: str = "127.0.0.1", port: int = 8765,
          site: Path | None = None, require_tokens: bool = False,
          allow_hosts: tuple[str, ...] = (), one_copy: bool = False) -> int:
    """Serve ``directory`` on ``host``:``port`` until SIGINT or SIGTERM; return 0.
    ``allow_hosts``: more names the ``Host`` header may give (the machine's name on a
    private network). Reads are answered from a second copy of the palace
    (:mod:`palazzo.hosts.server.pair`) unless ``one_copy``."""
    import uvicorn

    tokens = check_host(host, directory.path, require_tokens)
    one_blas_thread()
    writer = directory
    if not one_copy and hasattr(directory, "another") and _flock():
        # Opened before listening: this doubles the time a (re)start takes to answer
        # (2.3 -> 4.4 s at 20k drawers); opened in a thread after listening it answered at
        # 3.1 s, but its work in the same interpreter slowed the calls of the next seconds
        # (25 over a second in `bench serve`'s ten seconds after the restart, against none).
        directory = Pair(writer, writer.another(reads_only=True))
    names = frozenset({*LOOPBACK, *(h.lower() for h in allow_hosts),
                       *([host] if host not in ("0.0.0.0", "::") else [])})
    app, server = make_app(directory, port=port, site=site, hosts=names, tokens=tokens)
    server.warm()
    server.publish()
    server.start()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            timeout_graceful_shutdown=5, lifespan="off")
    write_discovery(directory.path, url_of(host, port))
    # uvicorn stops gracefully on SIGTERM and then raises the signal again: with this
    # handler that ends the process through the ``finally`` below, not around it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.Server(config).run()
    finally:
        remove_discovery(directory.path)
        server.stop()
        if directory is not writer:
            directory.close()
    return 0
