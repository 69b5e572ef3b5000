"""The explorer's server: the standard library's, on 127.0.0.1 unless told
otherwise. It serves one page (explore_page.py) and a JSON API over the
Explorer (explore.py) and its Curve (explore_curve.py):

    GET  /              the page
    GET  /api/runs      the runs, the test split's size, the limits
    POST /api/translate {"text": str, "beam": int}
    POST /api/example   {"line": int, "beam": int}       test line, scored
    POST /api/grow      {"words": int, "variant": int, "beam": int}
    POST /api/curve     {}   BLEU by length: progress, then the figures

It answers its own page only: a request that names another host, comes
from another origin or POSTs anything but JSON is refused before it is read
(explore_request.py says why each check is there). A request carries text
and numbers only, never a path or a run name. A body the server cannot use
is answered 400 with {"error": message} and the server goes on; a full
queue is answered 503; a 500 means a bug, and prints its traceback.

A client cannot hold the server: each connection is served by a thread of
its own, closed when it sends nothing for ``timeout`` seconds or has not
sent its whole request after DEADLINE seconds (a client sending a byte at a
time), and a client that goes away mid-answer costs one quiet thread.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from seq2seq.errors import UserError, worded
from seq2seq.lab.explore import Busy, Explorer
from seq2seq.lab.explore_curve import SAMPLE, Curve
from seq2seq.lab.explore_page import PAGE
from seq2seq.lab.explore_request import Gate, Refused, fields, parse, read_body

TIMEOUT = 10.0  # seconds a connection may send nothing before it is closed
DEADLINE = 30.0  # seconds from connecting to a whole request, at most
HEADERS = {  # on every answer: nothing may frame, sniff or cache the page
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'",
}


@dataclass(frozen=True)
class Route:
    """A POST endpoint: the keys its body may hold, and what answers it."""

    keys: tuple[str, ...]
    answer: Callable[[Handler, dict[str, Any]], dict[str, Any]]


ROUTES = {
    "/api/translate": Route(
        ("text", "beam"),
        lambda h, q: h.explorer.translate(q.get("text"), q.get("beam", 1)),
    ),
    "/api/example": Route(
        ("line", "beam"),
        lambda h, q: h.explorer.example(q.get("line"), q.get("beam", 1)),
    ),
    "/api/grow": Route(
        ("words", "variant", "beam"),
        lambda h, q: h.explorer.grow(
            q.get("words"), q.get("variant", 0), q.get("beam", 1)
        ),
    ),
    "/api/curve": Route((), lambda h, q: h.curve.poll()),
}


class Handler(BaseHTTPRequestHandler):
    """The routes above; ``explorer``, ``curve`` and ``gate`` are set by
    server(), ``timeout`` (the socket's) too."""

    explorer: Explorer
    curve: Curve
    gate: Gate
    server: ExploreServer

    def setup(self) -> None:
        super().setup()
        self.server.watchdog.watch(self.connection)

    def finish(self) -> None:
        self.server.watchdog.forget(self.connection)
        super().finish()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if not self._admitted():
            return
        if self.path == "/":
            self._send(HTTPStatus.OK, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/api/runs":
            self._json(HTTPStatus.OK, self.explorer.info())
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})

    def do_POST(self) -> None:  # noqa: N802
        if not self._admitted():
            return
        route = ROUTES.get(self.path)
        if route is None:
            self._refuse(Refused(HTTPStatus.NOT_FOUND, "no such endpoint"))
            return
        try:
            body = parse(read_body(self.headers, self.rfile))
            request = fields(body, self.path, route.keys)
        except Refused as err:
            self._refuse(err)
            return
        self.server.watchdog.forget(self.connection)  # read whole: no deadline
        try:
            answer = route.answer(self, request)
        except Busy as err:
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(err)})
        except UserError as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": worded(err)})
        except Exception as err:  # a bug: the page says so, the server goes on
            traceback.print_exc()
            message = f"internal error ({type(err).__name__}: {err}); see the terminal"
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": message})
        else:
            self._json(HTTPStatus.OK, answer)

    def do_OPTIONS(self) -> None:  # noqa: N802
        """A browser's preflight: never granted (no Access-Control-* header),
        so no other origin may POST JSON here."""
        if self._admitted():
            message = "refused: this server answers its own page only"
            self._refuse(Refused(HTTPStatus.FORBIDDEN, message))

    def _admitted(self) -> bool:
        try:
            self.gate.check(self.command, self.path, self.headers)
        except Refused as err:
            self._refuse(err)
            return False
        return True

    def _refuse(self, err: Refused) -> None:
        self.close_connection = True  # its body, if any, is left unread
        self._json(err.status, {"error": err.message})

    def _json(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self._send(status, data, "application/json; charset=utf-8")

    def _send(self, status: HTTPStatus, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: the terminal shows the address, not every request


class Watchdog:
    """Closes the connections that have not sent a whole request within
    ``deadline`` seconds of connecting: the socket's timeout closes one that
    sends nothing, this one that sends a byte now and then."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.lock = threading.Lock()
        self.open: dict[socket.socket, float] = {}
        self.stopped = threading.Event()
        thread = threading.Thread(target=self._run, daemon=True, name="watchdog")
        thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def watch(self, conn: socket.socket) -> None:
        with self.lock:
            self.open[conn] = time.monotonic() + self.deadline

    def forget(self, conn: socket.socket) -> None:
        with self.lock:
            self.open.pop(conn, None)

    def _run(self) -> None:
        while not self.stopped.wait(min(self.deadline / 4, 1.0)):
            now = time.monotonic()
            with self.lock:
                late = [c for c, t in self.open.items() if t < now]
                for conn in late:
                    del self.open[conn]
            for conn in late:
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # its read ends; it closes
                except OSError:
                    pass


class ExploreServer(ThreadingHTTPServer):
    """The standard threading server with a longer listen queue, the
    watchdog, and quiet about clients that go away (an OSError on their
    socket): what a client does never prints a traceback."""

    request_queue_size = 128
    watchdog: Watchdog

    def server_close(self) -> None:
        self.watchdog.stop()
        super().server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


def server(
    explorer: Explorer,
    host: str,
    port: int,
    sample: int = SAMPLE,
    timeout: float = TIMEOUT,
    deadline: float = DEADLINE,
) -> ExploreServer:
    """The server, bound but not yet serving (port 0: any free port); the
    curve decodes at most ``sample`` test lines a run."""
    attrs = {
        "explorer": explorer,
        "curve": Curve(explorer, sample),
        "gate": Gate.listening_on(host),
        "timeout": timeout,
    }
    handler = type("ExploreHandler", (Handler,), attrs)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    kind = type("Server", (ExploreServer,), {"address_family": family})
    try:
        httpd = kind((host.strip("[]"), port), handler)
    except (OSError, OverflowError) as err:
        why = getattr(err, "strerror", None) or str(err)
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({why}); "
            "pick another --host or --port"
        ) from None
    httpd.watchdog = Watchdog(deadline)
    return httpd
