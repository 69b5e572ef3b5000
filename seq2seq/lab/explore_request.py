"""What the explorer's server answers (explore_http.py asks here first).

The server listens on the loopback address, but a browser connects to it for
any page the user has open, so "local" is not enough. A careful local server
(Jupyter's, for one) refuses the two requests a foreign page can make:

- **Cross-site requests.** A page on another origin can POST to
  127.0.0.1:PORT with ``Content-Type: text/plain``, a "simple" request that
  the browser sends without asking first. So a POST must say
  ``Content-Type: application/json``, which a browser sends to another
  origin only after a preflight (OPTIONS) that this server never grants,
  and where the browser names the ``Origin`` it must be the page's own,
  ``http://`` + the ``Host`` it asked for.
- **DNS rebinding.** A name the attacker controls is pointed at 127.0.0.1,
  so that their page is "same origin" with the server and can read its
  answers. Every such request carries that name in ``Host``; a request is
  answered only when ``Host`` names this server: 127.0.0.1, localhost,
  [::1], or the ``--host`` it listens on (on a wildcard ``--host``, such as
  0.0.0.0, any address written as numbers too: no name is ever rebound to
  those). The port is not compared: an SSH tunnel to another local port
  (``ssh -L 9000:localhost:8765``) asks for ``localhost:9000``, and a
  rebinding attacker controls the name, never the port.

Bodies: any way a body can be wrong (its size, its encoding, its JSON, how
deep it nests, NaN or an infinity, a repeated or unknown key) is
:class:`Refused` with 400 and one line, before anything decodes. Types and
ranges of the values are the explorer's own checks (explore.py).
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import Message
from http import HTTPStatus
from typing import Any, Protocol

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})
MAX_BODY = 64 * 1024  # bytes of a request body
MAX_DEPTH = 4  # nesting of a body's arrays and objects (the API uses 1)


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class Refused(Exception):
    """A request answered ``status`` with one line, and never decoded."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad(message: str) -> Refused:
    return Refused(HTTPStatus.BAD_REQUEST, message)


def host_name(value: str) -> str | None:
    """The name in a Host header ('localhost' of 'localhost:8765', '::1' of
    '[::1]:8765'), lower case; None when it is not of that form."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None if rest else ""
    else:
        name, colon, port = value.partition(":")
        port = port if colon else ""
    if not name or port is None or (port and not port.isdigit()):
        return None
    return name


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps the server to this machine: every
    address it names (a name resolved) is a loopback one."""
    host = host.strip("[]").lower()
    if host in LOOPBACK:
        return True
    if host in WILDCARD:
        return False
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    return bool(found) and all(ipaddress.ip_address(a).is_loopback for a in found)


@dataclass(frozen=True)
class Gate:
    """Which requests the server listening on ``host`` answers."""

    names: frozenset[str]  # what Host may name
    any_address: bool  # on a wildcard --host: any Host written as numbers

    @classmethod
    def listening_on(cls, host: str) -> Gate:
        host = host.strip("[]").lower()
        return cls(LOOPBACK | {host} - WILDCARD, host in WILDCARD)

    def check(self, method: str, path: str, headers: Message) -> None:
        """Refuse (403) a request that is not the page's own; refuse (415) a
        POST that is not JSON."""
        hosts = headers.get_all("Host") or []
        name = host_name(hosts[0]) if len(hosts) == 1 else None
        if name is None or not (
            name in self.names or (self.any_address and is_address(name))
        ):
            shown = ", ".join(hosts)[:80] or "none"
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"refused: the request names host {shown!r}, not this server "
                f"(open the page at {' or '.join(sorted(self.names))})",
            )
        origins = headers.get_all("Origin") or []
        own = f"http://{hosts[0].strip().lower()}"
        if origins and [o.strip().lower() for o in origins] != [own]:
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"refused: a request from {', '.join(origins)[:80]!r}; this server "
                f"answers its own page ({own}) only",
            )
        site = (headers.get("Sec-Fetch-Site") or "").lower()
        if path.startswith("/api/") and site in ("cross-site", "same-site"):
            raise Refused(
                HTTPStatus.FORBIDDEN,
                "refused: a request from another site; this server answers its "
                "own page only",
            )
        if method == "POST":
            check_json_type(headers.get_all("Content-Type") or [])


def check_json_type(values: Sequence[str]) -> None:
    """Content-Type application/json, in UTF-8 when a charset is named."""
    parts = [p.strip().lower() for p in values[0].split(";")] if values else []
    charset = [p.partition("=")[2].strip('"') for p in parts[1:] if "=" in p]
    if (
        len(values) != 1
        or parts[0] != "application/json"
        or charset
        not in (
            [],
            ["utf-8"],
        )
    ):
        raise Refused(
            HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            f"send Content-Type: application/json (got {', '.join(values)[:60]!r})",
        )


def read_body(headers: Message, stream: Readable) -> bytes:
    """The body, exactly Content-Length bytes (1 to MAX_BODY)."""
    lengths = headers.get_all("Content-Length") or []
    if headers.get("Transfer-Encoding") is not None:
        raise bad("send the body with a Content-Length, not in chunks")
    length = lengths[0].strip() if len(lengths) == 1 else ""
    if not (length.isascii() and length.isdigit() and len(length) < 16):
        raise bad("send one Content-Length: the body's size in bytes")
    size = int(length)
    if not 0 < size <= MAX_BODY:
        raise bad(f"a body of {size} bytes: send 1 to {MAX_BODY}")
    data = stream.read(size)
    if len(data) < size:
        raise bad(f"the body ended after {len(data)} of its {size} bytes")
    return data


def parse(data: bytes) -> Any:
    """The JSON value of a body, or :class:`Refused` saying what is wrong."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise bad(f"the body is not UTF-8 text (byte {err.start})") from None
    brackets = text.count("[") + text.count("{")  # nesting() only when it may
    if brackets > MAX_DEPTH and (depth := nesting(text)) > MAX_DEPTH:
        raise bad(f"the body nests {depth} deep: send one flat JSON object")
    try:
        return json.loads(
            text,
            parse_constant=no_constant,
            parse_float=finite,
            parse_int=whole,
            object_pairs_hook=unique,
        )
    except json.JSONDecodeError as err:
        raise bad(f"the body is not JSON ({err.msg}, column {err.colno})") from None
    except RecursionError:  # belt and braces: nesting() counted first
        raise bad("the body nests too deep: send one flat JSON object") from None


def nesting(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings
    not counted), found without recursion."""
    depth = deepest = 0
    quoted = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif quoted:
            escaped, quoted = ch == "\\", ch != '"'
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def no_constant(name: str) -> Any:
    raise bad(f"{name} is not a number the explorer takes: send finite numbers")


def finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise bad(f"{text[:20]} is too large a number: send finite numbers")
    return value


def whole(text: str) -> int:
    if len(text) > 20:  # int() refuses 4,300 digits only, and slowly
        raise bad(f"a number of {len(text)} digits: send smaller numbers")
    return int(text)


def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) < len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise bad(f"the key {json.dumps(twice[0])[:40]} is given twice: send it once")
    return dict(pairs)


def fields(value: Any, path: str, keys: Sequence[str]) -> dict[str, Any]:
    """``value`` as the JSON object ``path`` takes: no key but ``keys``."""
    if not isinstance(value, dict):
        example = ", ".join(f'"{k}": ...' for k in keys)
        raise bad(f"send a JSON object, such as {{{example}}}")
    unknown = [k for k in value if k not in keys]
    if unknown:
        takes = ", ".join(keys) or "no keys"
        raise bad(
            f"{path} takes {takes}; unknown: "
            + ", ".join(json.dumps(k)[:40] for k in unknown[:3])
        )
    return value
