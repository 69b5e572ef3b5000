"""seq2seq/lab/explore.py over real HTTP on 127.0.0.1: the page's answers are
`translate --json --alignments`'s, weights included; bad input gets a message
and the server keeps serving; twenty requests at once are all answered, and
the queue behind the decoder is bounded; a missing run stops it at start;
nothing is written into the runs."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import snapshot, tiny_runs

from seq2seq.cli import main
from seq2seq.errors import UserError
from seq2seq.lab.explore import MAX_WAITING, MAX_WORDS, Explorer, server
from seq2seq.lab.explore_page import PAGE


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tiny_runs(tmp_path_factory.mktemp("explore"), test_pairs=20)


@pytest.fixture(scope="module")
def site(runs: dict[str, Path]) -> Iterator[tuple[str, Explorer]]:
    explorer = Explorer([runs["none"], runs["additive"]], "cpu")
    httpd = server(explorer, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}", explorer
    httpd.shutdown()
    httpd.server_close()


def post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(f"{url}/api/translate", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def ask(url: str, text: object, beam: object = 1) -> tuple[int, dict]:
    return post(url, json.dumps({"text": text, "beam": beam}).encode())


@pytest.mark.parametrize("beam", [1, 3])
def test_the_page_translates_as_translate_does(
    site, runs, beam: int, tmp_path: Path, capsys
) -> None:
    url, _ = site
    sentence = "the dog sleeps ."
    status, answer = ask(url, sentence, beam)
    assert status == 200, answer
    source = tmp_path / "in.txt"
    source.write_text(sentence + "\n", encoding="utf-8")
    for got in answer["runs"]:
        argv = ["translate", str(runs[got["mode"]]), "--input", str(source)]
        argv += ["--json", "--beam", str(beam)]
        aligned = got["mode"] != "none"  # translate refuses to align `none`
        assert main(argv + ["--alignments"] * aligned) == 0
        expected = json.loads(capsys.readouterr().out.strip())
        for key in ("hypothesis", "tokens", "score", "source_tokens", "weights"):
            assert got[key] == expected[key], key
        if aligned:
            # a row per output token, and one for EOS when it was written
            rows, cols = len(got["weights"]), len(got["source_tokens"]) + 1
            assert rows - len(got["tokens"]) in (0, 1)
            assert {len(row) for row in got["weights"]} == {cols}
        else:
            assert got["weights"] is None and "no attention" in got["note"]


def test_bad_input_gets_a_message_and_the_server_keeps_serving(site) -> None:
    url, _ = site
    long = " ".join(["dog"] * (MAX_WORDS + 1))
    for body, needle in (
        (json.dumps({"text": ""}).encode(), "the text is empty"),
        (json.dumps({"text": " \t "}).encode(), "the text is empty"),
        (json.dumps({"text": "a\nb"}).encode(), "one sentence at a time"),
        (json.dumps({"text": long}).encode(), f"at most {MAX_WORDS}"),
        (json.dumps({"text": "a dog", "beam": 0}).encode(), "from 1 to 10"),
        (json.dumps({"text": "a dog", "beam": "5"}).encode(), "from 1 to 10"),
        (json.dumps(["text"]).encode(), '{"text"'),
        (b"\xff\xfe not json", "not JSON"),
    ):
        status, answer = post(url, body)
        assert status == 400 and needle in answer["error"], answer
    with urllib.request.urlopen(url + "/", timeout=30) as reply:
        assert reply.status == 200
    status, answer = ask(url, "собака спит")  # another script: translated, flagged
    assert status == 200 and all(r["unknown"] > 0 for r in answer["runs"])


def test_twenty_requests_at_once_are_all_answered(site) -> None:
    url, _ = site
    with ThreadPoolExecutor(20) as pool:
        replies = list(pool.map(lambda k: ask(url, f"the dog sleeps {k} ."), range(20)))
    assert [status for status, _ in replies] == [200] * 20
    assert 20 <= MAX_WAITING + 1


def test_a_full_queue_is_told_to_try_again(site) -> None:
    url, explorer = site
    taken = 0
    while explorer.slots.acquire(blocking=False):
        taken += 1
    try:
        status, answer = ask(url, "the dog sleeps .")
        assert status == 503 and "try again" in answer["error"]
    finally:
        for _ in range(taken):
            explorer.slots.release()
    assert taken == MAX_WAITING + 1


def test_it_writes_nothing_and_fetches_nothing(site, runs) -> None:
    url, _ = site
    before = {mode: snapshot(path) for mode, path in runs.items()}
    assert ask(url, "the cat reads a book .", 3)[0] == 200
    assert {mode: snapshot(path) for mode, path in runs.items()} == before
    assert "http://" not in PAGE and "https://" not in PAGE  # works offline
    assert url.startswith("http://127.0.0.1:")


def test_a_missing_or_damaged_run_stops_it_at_start(
    runs, tmp_path: Path, capsys
) -> None:
    assert main(["explore", str(tmp_path / "nope"), "--port", "0"]) == 2
    assert "not a run directory" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("config.yaml",):
        (broken / name).write_bytes((runs["additive"] / name).read_bytes())
    with pytest.raises(UserError):
        Explorer([broken])
    assert main(["explore", str(runs["none"]), "--port", "70000"]) == 2
    assert "--port 70000: must be in [0, 65535]" in capsys.readouterr().err
