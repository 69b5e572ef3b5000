"""seq2seq score (lab/score.py): any system's output scored without a model,
to the digit as sacreBLEU's own command line scores it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from seq2seq.cli import main
from seq2seq.cli.parser import EVAL_BUCKETS
from seq2seq.config import EvalConfig
from seq2seq.lab.score import score

WORDS = "the a dog cat man woman runs sits red blue big small house tree".split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + " ."


def noisy(rng: random.Random, text: str, keep: float) -> str:
    """``text`` with each word kept with probability ``keep``, else replaced."""
    words = [w if rng.random() < keep else rng.choice(WORDS) for w in text.split()]
    return " ".join(words)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """60 lines of 2 to 60 source words, two references, three systems
    (one of them with an empty line, as sacreBLEU scores it)."""
    rng = random.Random(7)
    folder = tmp_path_factory.mktemp("score")
    src = [sentence(rng, rng.randint(2, 60)) for _ in range(60)]
    ref = [noisy(rng, s, 0.8) for s in src]
    text = {
        "src": src,
        "ref": ref,
        "ref2": [noisy(rng, r, 0.7) for r in ref],
        "good": [noisy(rng, r, 0.7) for r in ref],
        "bad": [noisy(rng, r, 0.3) for r in ref],
        "mixed": [noisy(rng, r, 0.5) for r in ref],
    }
    text["bad"][3] = ""
    paths = {}
    for name, lines in text.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def sacrebleu_cli(*args: str | Path) -> list[dict]:
    cmd = [sys.executable, "-m", "sacrebleu", *map(str, args), "-f", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    return data if isinstance(data, list) else [data]


@pytest.mark.parametrize("refs", [["ref"], ["ref", "ref2"]])
def test_bleu_and_chrf_equal_sacrebleus_command_line(files, refs) -> None:
    ref_files = [files[r] for r in refs]
    report = score([files["good"], files["bad"]], ref_files, None, EVAL_BUCKETS)
    for system in report.systems:
        cli = sacrebleu_cli(*ref_files, "-i", system.hyp, "-m", "bleu", "chrf", "-w", 4)
        assert round(system.scores.bleu, 4) == cli[0]["score"]
        assert round(system.scores.chrf, 4) == cli[1]["score"]
        assert f"nrefs:{len(refs)}" in system.scores.signature
    assert report.systems[0].scores.buckets == ()  # no --src: no length buckets


def test_the_paired_bootstrap_equals_sacrebleus_command_line(files) -> None:
    hyps = [files["good"], files["bad"], files["mixed"]]
    report = score(hyps, [files["ref"], files["ref2"]], None, EVAL_BUCKETS)
    cli = sacrebleu_cli(files["ref"], files["ref2"], "-i", *hyps, "-m", "bleu", "-pbs")
    for system, theirs in zip(report.systems[1:], cli[1:], strict=True):
        assert system.vs_first is not None
        ours = system.vs_first.test
        expected = theirs["BLEU"]
        assert ours.score == pytest.approx(expected["score"], abs=1e-9)
        assert ours.mean == pytest.approx(expected["mean"], abs=1e-9)
        assert ours.ci == pytest.approx(expected["ci"], abs=1e-9)
        assert ours.p_value == pytest.approx(expected["p_value"], abs=1e-9)
    assert report.systems[0].vs_first is None
    assert "bs:1000" in (report.bootstrap_signature or "")


def test_by_length_scores_each_bucket_as_its_own_corpus(files) -> None:
    src = files["src"].read_text(encoding="utf-8").splitlines()
    hyp = files["good"].read_text(encoding="utf-8").splitlines()
    refs = [files[r].read_text(encoding="utf-8").splitlines() for r in ("ref", "ref2")]
    edges = (10, 20, 40)
    report = score([files["good"]], [files["ref"], files["ref2"]], files["src"], edges)
    buckets = report.systems[0].scores.buckets
    longest = max(len(s.split()) for s in src)  # the last bucket ends there
    assert [(b.lo, b.hi) for b in buckets] == [
        (1, 10),
        (11, 20),
        (21, 40),
        (41, longest),
    ]
    assert sum(b.n for b in buckets) == len(src)
    for b in buckets:
        pick = [i for i, s in enumerate(src) if b.lo <= len(s.split()) <= b.hi]
        h, r = [hyp[i] for i in pick], [[ref[i] for i in pick] for ref in refs]
        assert b.bleu == pytest.approx(sacrebleu.corpus_bleu(h, r).score)
        assert b.chrf == pytest.approx(sacrebleu.corpus_chrf(h, r).score)


def test_the_command_prints_both_tables_and_writes_the_json(
    files, tmp_path, capsys
) -> None:
    out = tmp_path / "scores.json"
    argv = ["score", "--hyp", str(files["good"]), "--hyp", str(files["bad"])]
    argv += ["--hyp-name", "good", "--hyp-name", "bad", "--ref", str(files["ref"])]
    argv += ["--src", str(files["src"]), "--json", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| good |" in printed and "Paired bootstrap against good" in printed
    assert "BLEU 41-" in printed and "chrF 1-10" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [s["name"] for s in data["systems"]] == ["good", "bad"]
    assert data["systems"][1]["vs_first"]["baseline"] == "good"
    assert len(data["systems"][1]["vs_first"]["buckets"]) == len(EVAL_BUCKETS) + 1


def test_its_default_buckets_are_evaluates() -> None:
    assert EVAL_BUCKETS == EvalConfig().buckets


def bad_calls(files: dict[str, Path], tmp_path: Path) -> list[tuple[list[str], str]]:
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    holey = tmp_path / "holey.txt"
    lines = files["src"].read_text(encoding="utf-8").splitlines()
    holey.write_text("\n".join(lines[:5] + [""] + lines[6:]) + "\n", encoding="utf-8")
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    hyp, ref = ["--hyp", str(files["good"])], ["--ref", str(files["ref"])]
    return [
        (["--hyp", str(short), *ref], "short.txt has 1 lines but"),
        ([*hyp, *ref, "--ref", str(short)], "short.txt has 1 lines"),
        ([*hyp, *ref, "--src", str(short)], "short.txt has 1 lines"),
        ([*hyp, *ref, "--src", str(holey)], "holey.txt:6: an empty source line"),
        (["--hyp", str(empty), "--ref", str(empty)], "empty.txt: empty"),
        ([*hyp, *ref, "--hyp-name", "a", "--hyp-name", "b"], "2 --hyp-name for 1"),
        ([*hyp, *hyp, *ref], "two systems are called"),
        ([*hyp, *ref, "--buckets", "10,x"], "--buckets 10,x: not whole numbers"),
        ([*hyp, *ref, "--buckets", "20,10"], "--buckets 20,10: give increasing"),
        ([*hyp, *ref, "--json", str(files["ref"])], "--json"),
        ([*hyp, "--ref", str(tmp_path / "nothing.txt")], "nothing.txt: file not found"),
    ]


def test_bad_input_gets_one_line_and_exit_2(files, tmp_path, capsys) -> None:
    before = files["ref"].read_bytes()
    for argv, message in bad_calls(files, tmp_path):
        assert main(["score", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, (argv, err)
    assert files["ref"].read_bytes() == before  # --json refused: nothing written
