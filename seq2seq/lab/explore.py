"""`seq2seq explore RUN [RUN ...]`: a local page where a sentence is
translated by every run loaded and its attention drawn.

The runs load once, at start (the same one-line errors as `translate` for a
missing or damaged run). Each request decodes with `translate`'s own code
(lab/translate.py: translate_batch, and entry for the JSON fields), so the
page shows what `seq2seq translate --json --alignments` prints, weights
included. The server is the standard library's: it listens on 127.0.0.1
unless told otherwise, takes only text and a beam size from the page (never
a path or a run name), writes nothing, and calls nobody.

Decoding runs one request at a time (the models are shared); up to
MAX_WAITING more wait their turn, and any beyond are told to try again, so a
burst of requests is answered or refused, never piled up without bound.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import torch

from seq2seq.config import Config
from seq2seq.data.tokenizer import Tokenizer
from seq2seq.errors import UserError
from seq2seq.lab.explore_page import PAGE
from seq2seq.lab.translate import Translation, entry, translate_batch
from seq2seq.model.model import Seq2Seq
from seq2seq.model.search import Decoding
from seq2seq.specials import UNK
from seq2seq.training.checkpoint import load_run
from seq2seq.training.device import pick_device

MAX_WORDS = 100  # a sentence longer than this is refused before decoding
MAX_BEAM = 10  # the page offers greedy and beams up to this
MAX_WAITING = 32  # requests queued behind the one decoding
MAX_BODY = 64 * 1024  # bytes of a request
PORT = 8765  # the default port (--port)


@dataclass
class Loaded:
    """One run, loaded once: what a request needs of it."""

    name: str  # the run folder's name, as the page labels it
    cfg: Config
    tok: Tokenizer
    model: Seq2Seq


def check_text(text: object) -> str:
    """The sentence to translate, or the message the page shows instead."""
    if not isinstance(text, str) or not text.strip():
        raise UserError("type a sentence first: the text is empty")
    if "\n" in text.strip():
        raise UserError("one sentence at a time: the text holds a line break")
    words = len(text.split())
    if words > MAX_WORDS:
        raise UserError(
            f"{words} words: the explorer takes at most {MAX_WORDS}; shorten the "
            "sentence"
        )
    return text.strip()


def check_beam(beam: object) -> int:
    if not isinstance(beam, int) or isinstance(beam, bool) or not 1 <= beam <= MAX_BEAM:
        raise UserError(f"beam must be a whole number from 1 to {MAX_BEAM}")
    return beam


class Explorer:
    """The runs and the one lock their decoding shares."""

    def __init__(self, run_dirs: Sequence[Path], device_name: str = "cpu") -> None:
        if not run_dirs:
            raise UserError("explore: name at least one run directory")
        self.device = pick_device(device_name)
        self.runs = [self._load(Path(d)) for d in run_dirs]
        self.decoding = threading.Lock()
        self.slots = threading.BoundedSemaphore(MAX_WAITING + 1)

    def _load(self, run_dir: Path) -> Loaded:
        cfg, tok, model, _ = load_run(run_dir, "best", self.device)
        model.eval()
        return Loaded(run_dir.name, cfg, tok, model)

    def translate(self, text: object, beam: object = 1) -> dict[str, Any]:
        """Every run's translation of one sentence, as the page draws it."""
        sentence, k = check_text(text), check_beam(beam)
        if not self.slots.acquire(blocking=False):
            raise Busy("the explorer is busy; try again in a moment")
        try:
            with self.decoding:
                runs = [self._one(r, sentence, Decoding(k)) for r in self.runs]
        finally:
            self.slots.release()
        return {"source": sentence, "beam": k, "runs": runs}

    def _one(self, r: Loaded, sentence: str, decoding: Decoding) -> dict[str, Any]:
        ratio, device = r.cfg.eval.max_len_ratio, self.device
        with torch.no_grad():
            (t,) = translate_batch(
                r.model, r.tok, [(1, sentence)], decoding, 1, ratio, device
            )
        return describe(r, t)


class Busy(UserError):
    """Too many requests waiting: the page asks the user to try again."""


def describe(r: Loaded, t: Translation) -> dict[str, Any]:
    """One run's answer: `translate --json --alignments`'s fields, the mode,
    and what the page says when there is nothing to draw."""
    best = t.nbest[0] if t.nbest else None
    record = {"run": r.name, "mode": r.model.mode, "source_tokens": t.pieces}
    record |= entry(best, t, r.tok, alignments=r.model.has_alignment)
    ids = r.tok.encode_src([t.source])[0]
    record["unknown"] = sum(1 for i in ids if i == UNK)
    if not r.model.has_alignment:
        record["note"] = (
            f"mode '{r.model.mode}' has no attention weights to draw: its decoder "
            "reads the source only through one vector"
        )
    return record


class Handler(BaseHTTPRequestHandler):
    """GET / (the page), GET /api/runs, POST /api/translate."""

    explorer: Explorer  # set on the class made by serve()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == "/":
            self._send(HTTPStatus.OK, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/api/runs":
            runs = [{"run": r.name, "mode": r.model.mode} for r in self.explorer.runs]
            self._json(HTTPStatus.OK, {"runs": runs, "max_words": MAX_WORDS})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/api/translate":
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such endpoint"})
            return
        try:
            request = self._body()
            answer = self.explorer.translate(
                request.get("text"), request.get("beam", 1)
            )
        except Busy as err:
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(err)})
        except UserError as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})
        else:
            self._json(HTTPStatus.OK, answer)

    def _body(self) -> dict[str, Any]:
        size = int(self.headers.get("Content-Length") or 0)
        if not 0 < size <= MAX_BODY:
            raise UserError(f"a request of {size} bytes: send 1 to {MAX_BODY}")
        try:
            request = json.loads(self.rfile.read(size).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UserError("the request is not JSON text") from None
        if not isinstance(request, dict):
            raise UserError('send {"text": ..., "beam": ...}')
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


def server(explorer: Explorer, host: str, port: int) -> ThreadingHTTPServer:
    """The server, bound but not yet serving (port 0: any free port)."""
    handler = type("ExploreHandler", (Handler,), {"explorer": explorer})
    try:
        return ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({err.strerror}); "
            "pick another --port"
        ) from None
