"""seq2seq/lab/explore.py and explore_http.py over real HTTP on 127.0.0.1:
the page's answers are `translate --json --alignments`'s, weights included;
a test line is scored against its reference and its forced heatmap carries
the gold links and the sentence's AER; "grow it" joins the consecutive test
lines nearest the length asked; bad input gets a message and the server
keeps serving; twenty requests at once are all answered, and the queue
behind the decoder is bounded; a missing run stops it at start; nothing is
written into the runs. (The curve: test_explore_curve.py; the page in a
real browser: test_explore_browser.py.)"""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sacrebleu
import torch
from conftest import snapshot, tiny_runs

from seq2seq.cli import main
from seq2seq.data.corpus import load_split
from seq2seq.data.parallel import Split
from seq2seq.data.tokenizer import word_index
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError
from seq2seq.lab.explore import MAX_JOIN, MAX_WAITING, MAX_WORDS, Explorer, grown
from seq2seq.lab.explore_curve import Curve
from seq2seq.lab.explore_http import server
from seq2seq.lab.explore_page import PAGE
from seq2seq.training.metrics import aer, alignment_from_attention
from seq2seq.training.scoring import forced_weights


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


JSON = {"Content-Type": "application/json"}


def post(url: str, body: bytes, path: str = "/api/translate") -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{url}{path}", data=body, method="POST", headers=JSON
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def ask(url: str, text: object, beam: object = 1) -> tuple[int, dict]:
    return post(url, json.dumps({"text": text, "beam": beam}).encode())


def call(url: str, path: str, **body: object) -> tuple[int, dict]:
    return post(url, json.dumps(body).encode(), path)


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
        (b"\xff\xfe not json", "not UTF-8"),
        (b'{"text": ', "not JSON"),
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
    assert call(url, "/api/example", line=2, beam=3)[0] == 200
    assert call(url, "/api/grow", words=40)[0] == 200
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


def test_a_test_line_is_scored_and_its_gold_links_drawn(site, runs) -> None:
    url, explorer = site
    split = explorer.test
    assert split is not None and split.align is not None  # synth has gold links
    line = 7
    status, answer = call(url, "/api/example", line=line, beam=1)
    assert status == 200, answer
    assert answer["source"] == split.src[line - 1].strip()
    assert answer["reference"] == split.tgt[line - 1].strip() and answer["gold"]
    # the same translation as the sentence typed
    typed = ask(url, answer["source"])[1]
    for got, same in zip(answer["runs"], typed["runs"], strict=True):
        assert got["hypothesis"] == same["hypothesis"]
        expected = sacrebleu.sentence_bleu(got["hypothesis"], [answer["reference"]])
        assert got["bleu"] == pytest.approx(expected.score)
        assert 0 <= got["chrf"] <= 100
    none, additive = answer["runs"]
    assert "forced" not in none  # nothing to draw
    forced = additive["forced"]
    # the forced weights are those scoring.forced_weights gives this pair
    # inside the whole split's batch (padding around it changes nothing)
    cfg_run = explorer.runs[1]
    data = encode(load_split(cfg_run.cfg.data, "test"), cfg_run.tok)
    batch = forced_weights(
        cfg_run.model, data, list(range(len(split))), torch.device("cpu")
    )
    want = batch[line - 1]
    assert torch.allclose(torch.tensor(forced["weights"]), want, atol=1e-5)
    # every gold link is drawn on the cells of its subwords, and the AER is
    # the argmax links' against the gold ones
    src_w, tgt_w = word_index(forced["source_tokens"]), word_index(forced["tokens"])
    drawn = {(src_w[s], tgt_w[t]) for t, s in forced["gold"]}
    assert drawn == set(split.align[line - 1])
    found = alignment_from_attention(want, src_w, tgt_w)
    assert forced["aer"] == pytest.approx(aer([found], [set(split.align[line - 1])]))


def test_grow_joins_the_consecutive_lines_nearest_the_length(site) -> None:
    url, explorer = site
    split = explorer.test
    for words in (5, 30, 60):
        status, answer = call(url, "/api/grow", words=words)
        assert status == 200, answer
        lines = answer["lines"]
        assert lines == list(range(lines[0], lines[0] + len(lines)))
        assert answer["source"] == " ".join(split.src[i - 1].strip() for i in lines)
        assert answer["reference"] == " ".join(split.tgt[i - 1].strip() for i in lines)
        got = len(answer["source"].split())
        assert abs(got - words) == min(nearest_lengths(split, words))
        assert [r["mode"] for r in answer["runs"]] == ["none", "additive"]
    # a length two groups have (more groups than lengths up to MAX_WORDS)
    twice = next(
        n for n in range(1, MAX_WORDS) if nearest_lengths(split, n).count(0) > 1
    )
    one, two = (call(url, "/api/grow", words=twice, variant=v)[1] for v in (0, 1))
    assert one["lines"] != two["lines"]
    assert len(one["source"].split()) == len(two["source"].split()) == twice


def nearest_lengths(split: Split, words: int) -> list[int]:
    """Every |length - words| of consecutive groups of at most MAX_JOIN lines."""
    lengths = [len(s.split()) for s in split.src]
    return [
        abs(sum(lengths[i : i + k]) - words)
        for i in range(len(lengths))
        for k in range(1, MAX_JOIN + 1)
        if i + k <= len(lengths) and sum(lengths[i : i + k]) <= MAX_WORDS
    ]


def test_grown_prefers_one_long_sentence_then_cycles() -> None:
    split = Split("test", ["a " * 3, "b " * 4, "c " * 7, "d " * 2], ["x"] * 4)
    assert grown(split, 7, 0) == [2]  # one sentence of 7 before 3 + 4
    assert grown(split, 7, 1) == [0, 1]  # the next equally near
    assert grown(split, 7, 2) == [2]  # and round again
    assert grown(split, 100, 0) == [0, 1, 2, 3]  # the longest there is


def test_the_curve_is_polled_until_done(site) -> None:
    url, explorer = site
    for _ in range(600):
        status, state = call(url, "/api/curve")
        assert status == 200 and state["done"] <= state["total"]
        if state["state"] != "running":
            break
        time.sleep(0.1)
    assert state["state"] == "done", state
    assert [r["mode"] for r in state["runs"]] == ["none", "additive"]
    for r in state["runs"]:
        assert sum(b["n"] for b in r["buckets"]) == r["n"] == len(explorer.test)


def test_bad_panel_input_gets_a_message(site) -> None:
    url, explorer = site
    n = len(explorer.test)
    for path, body, needle in (
        ("/api/example", {"line": 0}, f"line must be a whole number from 1 to {n}"),
        ("/api/example", {"line": n + 1}, f"from 1 to {n}"),
        ("/api/example", {"line": "3"}, "line must be a whole number"),
        ("/api/example", {}, "line must be a whole number"),
        (
            "/api/grow",
            {"words": 0},
            f"length must be a whole number from 1 to {MAX_WORDS}",
        ),
        ("/api/grow", {"words": MAX_WORDS + 1}, "length must be"),
        ("/api/grow", {"words": 10, "variant": -1}, "variant must be"),
        ("/api/grow", {"words": 10.5}, "length must be"),
        ("/api/nowhere", {}, "no such endpoint"),
    ):
        status, answer = call(url, path, **body)
        assert status in (400, 404) and needle in answer["error"], (path, answer)
    assert call(url, "/api/example", line=1)[0] == 200


def test_without_a_test_split_typed_sentences_still_work(runs, tmp_path: Path) -> None:
    copy = tmp_path / "additive"
    shutil.copytree(runs["additive"], copy)
    config = (copy / "config.yaml").read_text(encoding="utf-8")
    test_src = load_split_files(runs["additive"]).src
    (copy / "config.yaml").write_text(
        config.replace(test_src, str(tmp_path / "gone.txt")), encoding="utf-8"
    )
    explorer = Explorer([copy])
    assert explorer.test is None and "gone.txt" in explorer.info()["test_note"]
    for panel in (lambda: explorer.example(1), lambda: explorer.grow(10)):
        with pytest.raises(UserError, match="test split cannot be read"):
            panel()
    with pytest.raises(UserError, match="test split cannot be read"):
        Curve(explorer).poll()
    assert explorer.translate("the dog sleeps .")["runs"][0]["run"] == "additive"


def load_split_files(run_dir: Path):
    from seq2seq.config import load_config

    test = load_config(run_dir / "config.yaml").data.test
    assert test is not None
    return test


def test_a_fault_is_a_message_and_the_server_goes_on(site, monkeypatch) -> None:
    url, explorer = site

    def broken(*args: object) -> dict:
        raise RuntimeError("a fault inside decoding")

    monkeypatch.setattr(explorer, "translate", broken)
    status, answer = ask(url, "the dog sleeps .")
    assert status == 500 and "a fault inside decoding" in answer["error"]
    monkeypatch.undo()
    assert ask(url, "the dog sleeps .")[0] == 200
