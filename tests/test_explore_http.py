"""The explorer as a web service (seq2seq/lab/explore_http.py and
explore_request.py), over real sockets: only requests that name this server
in Host are answered (so DNS rebinding is refused), a POST from another
origin or of anything but JSON is refused before it is read, a preflight is
never granted; the page's own requests and those through a tunnel on another
local port are answered; random and adversarial bodies get 200, 400 or 503,
never a 500 or a traceback; stalled and trickling clients are cut off while
others are served; a non-loopback --host is warned about."""

from __future__ import annotations

import http.client
import json
import random
import select
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Tunnel, tiny_runs

from seq2seq.cli import main
from seq2seq.lab.explore import MAX_CHARS, MAX_WORDS, Explorer
from seq2seq.lab.explore_http import ROUTES, ExploreServer, server
from seq2seq.lab.explore_request import MAX_BODY

TIMEOUT, DEADLINE = 1.0, 3.0  # the server's, shortened so the tests are quick
Headers = list[tuple[str, str]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tiny_runs(tmp_path_factory.mktemp("explore_http"), test_pairs=20)


@pytest.fixture(scope="module")
def port(runs: dict[str, Path]) -> Iterator[int]:
    explorer = Explorer([runs["none"], runs["additive"]], "cpu")
    httpd = server(explorer, "127.0.0.1", 0, timeout=TIMEOUT, deadline=DEADLINE)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def request(
    port: int,
    method: str,
    path: str,
    headers: Headers,
    body: bytes | None = None,
) -> tuple[int, dict, http.client.HTTPResponse]:
    """One request with exactly ``headers`` (no Host added) and the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers:
        conn.putheader(name, value)
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    is_json = reply.getheader("Content-Type", "").startswith("application/json")
    return reply.status, json.loads(data) if is_json else {}, reply


def own(port: int, origin: bool = True) -> Headers:
    """The headers the page's own POST carries."""
    here = f"127.0.0.1:{port}"
    found = [("Host", here), ("Content-Type", "application/json")]
    return found + [("Origin", f"http://{here}")] * origin


def translate(port: int, headers: Headers, text: str = "the dog sleeps .") -> tuple:
    body = json.dumps({"text": text, "beam": 1}).encode()
    return request(port, "POST", "/api/translate", headers, body)[:2]


def test_the_pages_own_requests_are_answered(port: int) -> None:
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, _, reply = request(port, "GET", "/", [("Host", host)])
        assert status == 200
        for name in ("X-Content-Type-Options", "Content-Security-Policy"):
            assert reply.getheader(name), name  # no framing, no sniffing
        assert request(port, "GET", "/api/runs", [("Host", host)])[0] == 200
        headers = [("Host", host), ("Content-Type", "application/json")]
        assert translate(port, headers + [("Origin", f"http://{host}")])[0] == 200
    assert translate(port, own(port, origin=False))[0] == 200  # curl, a script
    utf8 = [
        (k, v + "; charset=UTF-8" if k == "Content-Type" else v) for k, v in own(port)
    ]
    assert translate(port, utf8)[0] == 200


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:{port}",
        "127.0.0.1.nip.io:{port}",
        "localhost.attacker.example:{port}",
        "127.0.0.1:{port}@evil",
        "",
        None,
    ],
)
def test_a_request_naming_another_host_is_refused(port: int, host: str | None) -> None:
    """DNS rebinding: the attacker's name in Host. Refused for every path and
    method, with one line, and nothing decoded."""
    headers = [] if host is None else [("Host", host.format(port=port))]
    for method, path in (
        ("GET", "/"),
        ("GET", "/api/runs"),
        ("POST", "/api/translate"),
    ):
        body = b'{"text": "the dog sleeps ."}' if method == "POST" else None
        extra = [("Content-Type", "application/json")] if body else []
        status, answer, _ = request(port, method, path, headers + extra, body)
        assert status == 403 and "not this server" in answer["error"], answer
    doubled = [("Host", f"127.0.0.1:{port}"), ("Host", "attacker.example")]
    assert request(port, "GET", "/api/runs", doubled)[0] == 403


def test_a_post_from_another_origin_is_refused(port: int) -> None:
    here = f"127.0.0.1:{port}"
    for origin in (
        "http://attacker.example",
        f"http://localhost:{port}",  # another origin than the Host asked for
        f"http://127.0.0.1:{port + 1}",  # another local server's page
        f"https://{here}",
        "null",  # a sandboxed frame or a file:// page
    ):
        headers = [("Host", here), ("Content-Type", "application/json")]
        status, answer = translate(port, headers + [("Origin", origin)])
        assert status == 403 and "own page" in answer["error"], (origin, answer)
    cross = own(port) + [("Sec-Fetch-Site", "cross-site")]
    assert translate(port, cross)[0] == 403
    visit = [
        ("Host", here),
        ("Sec-Fetch-Site", "cross-site"),
        ("Sec-Fetch-Mode", "navigate"),
    ]
    assert request(port, "GET", "/", visit)[0] == 200  # a link to the page opens it


@pytest.mark.parametrize(
    "kind",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin-1",
        "application/jsonx",
        None,
    ],
)
def test_a_post_that_is_not_json_is_refused(port: int, kind: str | None) -> None:
    """What a page may send another origin without a preflight is refused
    before its body is read."""
    headers = [("Host", f"127.0.0.1:{port}")] + [("Content-Type", kind)] * bool(kind)
    status, answer = translate(port, headers)
    assert status == 415 and "application/json" in answer["error"], answer


def test_a_preflight_is_never_granted(port: int) -> None:
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Origin", "http://attacker.example"),
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "content-type"),
    ]
    status, _, reply = request(port, "OPTIONS", "/api/translate", headers)
    assert status == 403
    assert not [
        h for h, _ in reply.getheaders() if h.lower().startswith("access-control")
    ]


def test_an_ssh_tunnel_to_another_local_port_works(port: int) -> None:
    tunnel = Tunnel(port)
    try:
        here = f"localhost:{tunnel.port}"
        status, _, _ = request(tunnel.port, "GET", "/", [("Host", here)])
        assert status == 200
        headers = [("Host", here), ("Content-Type", "application/json")]
        status, answer = translate(
            tunnel.port, headers + [("Origin", f"http://{here}")]
        )
        assert status == 200 and len(answer["runs"]) == 2
    finally:
        tunnel.close()


def adversarial() -> list[bytes]:
    """Bodies written to break a JSON reader or the explorer's checks."""
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = [
        b"",
        b" ",
        b"null",
        b"[]",
        b"1",
        b'"text"',
        b"{",
        b"}",
        b"{}",
        deep[: MAX_BODY - 1],
        b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"a":' * 3000 + b"1" + b"}" * 3000,
        b'{"text": NaN}',
        b'{"beam": Infinity, "text": "a"}',
        b'{"beam": -Infinity}',
        b'{"line": 1e999}',
        b'{"words": -1e999}',
        b'{"line": ' + b"9" * 5000 + b"}",
        b'{"line": 1.0}',
        b'{"line": true}',
        b'{"words": 1e2}',
        b'{"beam": 1, "beam": 3}',
        b'{"text": "a dog", "extra": 1}',
        b'{"text": "a", "__proto__": {}}',
        b"\xef\xbb\xbf" + b'{"text": "a dog"}',
        '{"text": "a dog"}'.encode("utf-16"),
        b'{"text": "\\ud800"}',
        b'{"text": "a \\udfff b"}',
        b'{"text": "\\u0000"}',
        b'{"text": "\\u200b"}',
        b'{"text": "\\u2028a\\u2029"}',
        b'{"text": "\\r"}',
        b'{"text": "a\\u0000b\\u0007c"}',
        b'{"text": "\\ufeff\\ufffe\\uffff"}',
        json.dumps({"text": "x" * MAX_CHARS}).encode(),
        json.dumps({"text": "x" * (MAX_CHARS + 1)}).encode(),
        json.dumps({"text": " ".join(["ab"] * MAX_WORDS), "beam": 10}).encode(),
        json.dumps({"text": "a" * (MAX_BODY - 20)}).encode(),
        b'{"text": "' + b"a" * MAX_BODY + b'"}',
        json.dumps({"text": "\U0001f600 \u202e \u0301\u0301 \ufdfd" * 50}).encode(),
        json.dumps({"text": ["a dog"]}).encode(),
        json.dumps({"text": {"a": 1}}).encode(),
        json.dumps({"line": -1}).encode(),
        json.dumps({"line": 2**63}).encode(),
        json.dumps({"words": 100, "variant": 10**7}).encode(),
        b"\x00" * 100,
        bytes(range(256)),
    ]
    return cases


def random_value(rng: random.Random, depth: int = 0) -> object:
    pick = rng.randrange(9 if depth < 3 else 6)
    if pick == 0:
        return rng.choice([0, 1, -1, 3, 10, 11, 100, 101, 10**6, 2**53, -(2**31)])
    if pick == 1:
        return rng.choice([True, False, None, 0.5, -0.0, 1e300, 1.0])
    if pick in (2, 3, 4):
        alphabet = "the dog sleeps .ÄßЖ\u200b\t\n\x00\x7f\U0001f600\u0301\\\"'<>&"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
    if pick == 5:
        words = ["the", "dog", "a", "cat", "sleeps", "."]
        return " ".join(rng.choice(words) for _ in range(rng.randrange(1, 12)))
    if pick == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    keys = ["text", "beam", "line", "words", "variant", "x", ""]
    size = rng.randrange(0, 4)
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(size)}


def random_body(rng: random.Random, keys: tuple[str, ...]) -> bytes:
    """Random bytes, a random JSON value, a JSON text cut or spoilt, or (half
    the time) an object of the endpoint's own keys with random values."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(rng.randrange(1, 200))
    if kind >= 3:
        plausible = {
            "text": lambda: random_value(rng, 3),
            "beam": lambda: rng.choice([1, 3, 5, 10, 0, 11, "3", 2.0]),
            "line": lambda: rng.choice([1, 5, 20, 21, 0, -3, None]),
            "words": lambda: rng.choice([1, 10, 60, 100, 101, 0]),
            "variant": lambda: rng.choice([0, 1, 7, -1, 10**6]),
        }
        value = {k: plausible[k]() for k in keys if rng.random() < 0.8}
        return json.dumps(value).encode()
    text = json.dumps(random_value(rng), ensure_ascii=rng.random() < 0.5)
    if kind == 2:  # a JSON text cut, or with a character changed
        cut = rng.randrange(len(text))
        spoilt = rng.choice(["", "]", "}", ",", '"', "\\", "\\u12", "\\ud800"])
        text = text[:cut] + spoilt + text[cut + 1 :]
    return text.encode("utf-8", "surrogatepass")


COUNT, SECONDS = 1000, 120  # the fuzz's bounds: bodies tried, and time


def test_no_body_breaks_the_server(port: int, capfd) -> None:
    """Adversarial, then random (seeded) bodies at every endpoint: each is
    answered 200, 400 or 503 with a message, no traceback is printed, and
    the server answers a normal request after them."""
    rng = random.Random(55)
    bodies = adversarial()
    end = time.monotonic() + SECONDS
    tried = 0
    while tried < COUNT and time.monotonic() < end:
        if tried < len(bodies):  # each adversarial body at every endpoint
            for path in ROUTES:
                check_answer(port, path, bodies[tried])
        else:
            path, route = rng.choice(list(ROUTES.items()))
            check_answer(port, path, random_body(rng, route.keys))
        tried += 1
    assert tried >= min(COUNT, len(bodies) + 50)  # the bound left room for random ones
    assert translate(port, own(port))[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err, err[-3000:]


def check_answer(port: int, path: str, body: bytes) -> None:
    status, answer, _ = request(port, "POST", path, own(port), body)
    assert status in (200, 400, 503), (path, body[:200], status, answer)
    if status != 200:
        assert isinstance(answer["error"], str) and "\n" not in answer["error"]


def test_stalled_clients_cannot_hold_the_server(port: int) -> None:
    """Sixty connections that send nothing, half a header or half a body,
    and one that trickles a byte at a time: a normal request is answered
    meanwhile, the silent ones are closed after the socket's timeout and
    the trickling one at the deadline."""
    here = f"127.0.0.1:{port}"
    partial = [
        b"",
        f"POST /api/translate HTTP/1.1\r\nHost: {here}\r\n".encode(),
        (
            f"POST /api/translate HTTP/1.1\r\nHost: {here}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        ).encode(),
    ]
    stalled = []
    for k in range(60):
        conn = socket.create_connection(("127.0.0.1", port))
        conn.sendall(partial[k % 3])
        stalled.append(conn)
    started = time.monotonic()
    status, answer = translate(port, own(port))
    assert status == 200, answer
    for conn in stalled:
        conn.settimeout(TIMEOUT + 10)
        assert closed(conn), "a silent connection was left open"
    assert time.monotonic() - started < TIMEOUT + 10
    line = f"GET /api/runs HTTP/1.1\r\nHost: {here}\r\nX-Slow: {'a' * 500}\r\n\r\n"
    trickle = socket.create_connection(("127.0.0.1", port))
    held = trickled(trickle, line.encode(), gap=TIMEOUT / 4, limit=DEADLINE + 10)
    assert held is not None and DEADLINE - 0.5 < held < DEADLINE + 10, held
    assert translate(port, own(port))[0] == 200


def trickled(
    conn: socket.socket, data: bytes, gap: float, limit: float
) -> float | None:
    """Send ``data`` a byte every ``gap`` seconds until the server closes the
    connection: the seconds it took, or None if it was still open at ``limit``."""
    began = time.monotonic()
    for byte in data:
        try:
            conn.sendall(bytes([byte]))
            readable, _, _ = select.select([conn], [], [], gap)
            if readable and not conn.recv(65536):
                return time.monotonic() - began
        except OSError:  # a reset, or a broken pipe
            return time.monotonic() - began
        if time.monotonic() - began > limit:
            return None
    return None


def closed(conn: socket.socket) -> bool:
    """Whether the server has closed ``conn`` (its end read, or a reset)."""
    try:
        while conn.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        return False
    return True


def test_a_client_gone_mid_answer_prints_nothing(port: int, capfd) -> None:
    for _ in range(5):
        conn = socket.create_connection(("127.0.0.1", port))
        body = json.dumps({"text": "the dog sleeps .", "beam": 10}).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in own(port))
        head += f"Content-Length: {len(body)}\r\n\r\n"
        conn.sendall(f"POST /api/translate HTTP/1.1\r\n{head}".encode() + body)
        linger = struct.pack("ii", 1, 0)  # close with a reset, as a crash would
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        conn.close()  # a reset, before the answer
    assert translate(port, own(port))[0] == 200
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("host, warned", [("127.0.0.1", False), ("0.0.0.0", True)])
def test_a_host_beyond_this_machine_is_warned_about(
    runs, monkeypatch, capsys, host: str, warned: bool
) -> None:
    monkeypatch.setattr(ExploreServer, "serve_forever", lambda self: None)
    argv = ["explore", str(runs["additive"]), "--host", host, "--port", "0"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert ("anyone who can reach it" in err) == warned, err
    if warned:
        assert "ssh -L" in err and err.count("\n") == 1


def test_on_a_wildcard_host_an_address_is_answered_a_name_is_not(runs) -> None:
    explorer = Explorer([runs["none"]], "cpu")
    httpd = server(explorer, "0.0.0.0", 0, timeout=TIMEOUT, deadline=DEADLINE)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        for host, status in (
            (f"192.168.1.20:{port}", 200),  # the machine's address, as typed
            (f"127.0.0.1:{port}", 200),
            (f"attacker.example:{port}", 403),
        ):
            assert request(port, "GET", "/api/runs", [("Host", host)])[0] == status
    finally:
        httpd.shutdown()
        httpd.server_close()
