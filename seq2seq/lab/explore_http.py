"""The explorer's server: the standard library's, on 127.0.0.1 unless told
otherwise. It serves one page (explore_page.py) and a JSON API over the
Explorer (explore.py) and its Curve (explore_curve.py):

    GET  /              the page
    GET  /api/runs      the runs, the test split's size, the limits
    POST /api/translate {"text": str, "beam": int}
    POST /api/example   {"line": int, "beam": int}       test line, scored
    POST /api/grow      {"words": int, "variant": int, "beam": int}
    POST /api/curve     {}   BLEU by length: progress, then the figures

A request carries text and numbers only, never a path or a run name. Bad
input is answered 400 with {"error": message} and the server goes on; a
full queue is answered 503.
"""

from __future__ import annotations

import json
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from seq2seq.errors import UserError, worded
from seq2seq.lab.explore import Busy, Explorer
from seq2seq.lab.explore_curve import SAMPLE, Curve
from seq2seq.lab.explore_page import PAGE

MAX_BODY = 64 * 1024  # bytes of a request
PORT = 8765  # the default port (--port)


class Handler(BaseHTTPRequestHandler):
    """The routes above; ``explorer`` and ``curve`` are set by server()."""

    explorer: Explorer
    curve: Curve

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == "/":
            self._send(HTTPStatus.OK, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/api/runs":
            self._json(HTTPStatus.OK, self.explorer.info())
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})

    def do_POST(self) -> None:  # noqa: N802
        routes = {
            "/api/translate": lambda q: self.explorer.translate(
                q.get("text"), q.get("beam", 1)
            ),
            "/api/example": lambda q: self.explorer.example(
                q.get("line"), q.get("beam", 1)
            ),
            "/api/grow": lambda q: self.explorer.grow(
                q.get("words"), q.get("variant", 0), q.get("beam", 1)
            ),
            "/api/curve": lambda q: self.curve.poll(),
        }
        route = routes.get(self.path)
        if route is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such endpoint"})
            return
        try:
            answer = route(self._body())
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

    def _body(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length") or "0"
        size = int(length) if length.isdigit() else 0
        if not 0 < size <= MAX_BODY:
            raise UserError(f"a request of {size} bytes: send 1 to {MAX_BODY}")
        try:
            request = json.loads(self.rfile.read(size).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UserError("the request is not JSON text") from None
        if not isinstance(request, dict):
            raise UserError('send a JSON object, such as {"text": ..., "beam": ...}')
        return request

    def _json(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self._send(status, data, "application/json; charset=utf-8")

    def _send(self, status: HTTPStatus, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: the terminal shows the address, not every request


def server(
    explorer: Explorer, host: str, port: int, sample: int = SAMPLE
) -> ThreadingHTTPServer:
    """The server, bound but not yet serving (port 0: any free port); the
    curve decodes at most ``sample`` test lines a run."""
    attrs = {"explorer": explorer, "curve": Curve(explorer, sample)}
    handler = type("ExploreHandler", (Handler,), attrs)
    try:
        return ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({err.strerror}); "
            "pick another --port"
        ) from None
