"""seq2seq/lab/explore_request.py: which Host names are this server's, the
JSON content type, and every way a body is refused with one line (the same
checks over real HTTP, fuzzed: test_explore_http.py)."""

from __future__ import annotations

import io
from email.message import Message
from http import HTTPStatus

import pytest

from seq2seq.lab.explore_request import (
    MAX_BODY,
    MAX_DEPTH,
    Gate,
    Refused,
    check_json_type,
    fields,
    host_name,
    is_loopback,
    nesting,
    parse,
    read_body,
)


def headers(*pairs: tuple[str, str]) -> Message:
    message = Message()
    for name, value in pairs:
        message[name] = value
    return message


@pytest.mark.parametrize(
    "value, name",
    [
        ("localhost:8765", "localhost"),
        ("LocalHost", "localhost"),
        ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("evil.example:8765", "evil.example"),
        ("localhost:", "localhost"),
        ("localhost:x", None),
        ("[::1]x", None),
        (":8765", None),
        ("", None),
    ],
)
def test_host_name(value: str, name: str | None) -> None:
    assert host_name(value) == name


def test_the_gate_knows_its_names() -> None:
    loopback = Gate.listening_on("127.0.0.1")
    assert loopback.names == {"127.0.0.1", "localhost", "::1"}
    assert not loopback.any_address
    named = Gate.listening_on("lab.example")
    assert "lab.example" in named.names and not named.any_address
    wildcard = Gate.listening_on("0.0.0.0")
    assert wildcard.any_address and "0.0.0.0" not in wildcard.names
    wildcard.check("GET", "/api/runs", headers(("Host", "10.0.0.7:8765")))
    with pytest.raises(Refused) as err:
        wildcard.check("GET", "/api/runs", headers(("Host", "lab.example:8765")))
    assert err.value.status == HTTPStatus.FORBIDDEN


def test_an_origin_must_be_the_host_asked_for() -> None:
    gate = Gate.listening_on("127.0.0.1")
    own = [("Host", "localhost:9000"), ("Content-Type", "application/json")]
    gate.check("POST", "/api/translate", headers(*own))
    gate.check(
        "POST", "/api/translate", headers(*own, ("Origin", "http://localhost:9000"))
    )
    for origin in ("http://localhost:8765", "http://127.0.0.1:9000", "null"):
        with pytest.raises(Refused, match="own page"):
            gate.check("POST", "/x", headers(*own, ("Origin", origin)))


@pytest.mark.parametrize(
    "values, ok",
    [
        (["application/json"], True),
        (["Application/JSON; charset=utf-8"], True),
        (['application/json; charset="UTF-8"'], True),
        (["application/json; charset=latin-1"], False),
        (["text/plain"], False),
        ([], False),
        (["application/json", "application/json"], False),
    ],
)
def test_the_json_content_type(values: list[str], ok: bool) -> None:
    if ok:
        check_json_type(values)
    else:
        with pytest.raises(Refused) as err:
            check_json_type(values)
        assert err.value.status == HTTPStatus.UNSUPPORTED_MEDIA_TYPE


@pytest.mark.parametrize(
    "pairs, data, needle",
    [
        ([], b"{}", "one Content-Length"),
        ([("Content-Length", "-1")], b"{}", "one Content-Length"),
        ([("Content-Length", "9" * 40)], b"{}", "one Content-Length"),
        ([("Content-Length", "２")], b"{}", "one Content-Length"),
        ([("Content-Length", "2"), ("Content-Length", "2")], b"{}", "one Content-"),
        ([("Content-Length", "0")], b"", "a body of 0 bytes"),
        ([("Content-Length", str(MAX_BODY + 1))], b"{}", f"send 1 to {MAX_BODY}"),
        ([("Content-Length", "10")], b"{}", "ended after 2 of its 10"),
        ([("Transfer-Encoding", "chunked")], b"{}", "not in chunks"),
    ],
)
def test_a_body_of_the_wrong_size_is_refused(pairs, data: bytes, needle: str) -> None:
    with pytest.raises(Refused) as err:
        read_body(headers(*pairs), io.BytesIO(data))
    assert err.value.status == HTTPStatus.BAD_REQUEST and needle in err.value.message
    assert read_body(headers(("Content-Length", "2")), io.BytesIO(b"{}xyz")) == b"{}"


@pytest.mark.parametrize(
    "data, needle",
    [
        (b"\xff{}", "not UTF-8 text (byte 0)"),
        (b'{"text": ', "not JSON"),
        (b"[" * 10_000 + b"]" * 10_000, "nests 10000 deep"),
        (b'{"text": NaN}', "NaN is not a number"),
        (b'{"beam": -Infinity}', "-Infinity is not a number"),
        (b'{"beam": 1e400}', "too large a number"),
        (b'{"line": ' + b"1" * 50 + b"}", "a number of 50 digits"),
        (b'{"beam": 1, "beam": 2}', '"beam" is given twice'),
    ],
)
def test_a_body_that_is_not_usable_json_is_refused(data: bytes, needle: str) -> None:
    with pytest.raises(Refused) as err:
        parse(data)
    assert err.value.status == HTTPStatus.BAD_REQUEST and "\n" not in err.value.message
    assert needle in err.value.message


def test_nesting_counts_brackets_outside_strings_only() -> None:
    assert nesting('{"a": "[[[[[[[[", "b": "\\\\", "c": ["]"]}') == 2
    assert nesting("[" * MAX_DEPTH + "]" * MAX_DEPTH) == MAX_DEPTH
    assert parse(b'{"text": "[[[[[[[[[[ {{{{{{{{{"}') == {
        "text": "[[[[[[[[[[ {{{{{{{{{"
    }
    with pytest.raises(Refused, match="nests"):
        parse(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))


def test_fields_are_the_endpoints_own() -> None:
    keys = ("text", "beam")
    assert fields({"text": "a"}, "/api/translate", keys) == {"text": "a"}
    with pytest.raises(Refused, match='takes text, beam; unknown: "line"$'):
        fields({"text": "a", "line": 1}, "/api/translate", keys)
    with pytest.raises(Refused, match="takes no keys"):
        fields({"x": 1}, "/api/curve", ())
    with pytest.raises(Refused, match=r'such as \{"text": \.\.\., "beam"'):
        fields(["text"], "/api/translate", keys)


def test_is_loopback() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "", "10.1.2.3", "no-such-host.invalid"):
        assert not is_loopback(host), host
