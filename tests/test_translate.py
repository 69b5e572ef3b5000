"""seq2seq translate: line counts, n-best, Pharaoh alignments, JSON, plots, errors."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_runs

from seq2seq.cli import main
from seq2seq.data.tokenizer import word_index
from seq2seq.data.workspace import run_tokenizer
from seq2seq.lab.translate import pharaoh, prompt_lines
from seq2seq.model.search import Hypothesis

LONG = " ".join(["the"] * 300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tiny_runs(tmp_path_factory.mktemp("translate"), test_pairs=10)


@pytest.fixture
def source(runs, tmp_path: Path) -> Path:
    corpus = runs["additive"].parent.parent / "corpus"
    lines = (corpus / "test.en").read_text(encoding="utf-8").splitlines()[:4]
    path = tmp_path / "in.en"
    path.write_text("\n".join([lines[0], "", lines[1], lines[2], "", lines[3]]) + "\n")
    return path


def run(*args: str | Path) -> int:
    return main(["translate", *map(str, args)])


def output_of(capsys, *args: str | Path) -> list[str]:
    assert run(*args) == 0
    return capsys.readouterr().out.splitlines()


def test_line_count_and_empty_lines_are_kept(runs, source: Path, capsys) -> None:
    out = output_of(capsys, runs["additive"], "--input", source)
    assert len(out) == 6 and out[1] == "" and out[4] == ""
    assert all(out[i] for i in (0, 2, 3, 5))
    assert (
        output_of(capsys, runs["additive"], "--input", source, "--batch-size", "1")
        == out
    )


def test_pharaoh_links_words_not_subwords(runs, source: Path, capsys) -> None:
    out = output_of(capsys, runs["additive"], "--input", source, "--alignments")
    sources = source.read_text().splitlines()
    assert out[1] == ""
    for src, line in zip(sources, out, strict=True):
        if not src:
            continue
        hyp, links = line.split(" ||| ")
        pairs = [tuple(map(int, link.split("-"))) for link in links.split()]
        assert all(0 <= i < len(src.split()) for i, _ in pairs)
        assert all(0 <= j < len(hyp.split()) for _, j in pairs)
    # a 16-step model may attend only to the source </s> (no link): the links
    # themselves are checked on known weights below


def test_pharaoh_maps_subword_argmax_to_words(runs) -> None:
    tok = run_tokenizer(runs["additive"])
    src = tok.src_pieces(tok.encode_src(["The brave singers find the bird."])[0])
    tokens = tok.encode_tgt(["Die tapferen Sänger finden den Vogel."])[0]
    pieces = tok.tgt_pieces(tokens)
    # target piece k attends to source piece k (</s> for the extra rows)
    weights = torch.zeros(len(tokens) + 1, len(src) + 1)
    for k in range(len(tokens) + 1):
        weights[k, min(k, len(src))] = 1.0
    links = pharaoh(Hypothesis(tokens, weights), src, tok)
    expected = {
        (word_index(src)[k], word_index(pieces)[k])
        for k in range(min(len(src), len(pieces)))
    }
    pairs = {tuple(map(int, x.split("-"))) for x in links.split()}
    assert pairs == expected and pairs
    # a hypothesis of one bare word-boundary piece decodes to no word: no link
    bare = [tok.tgt.piece_to_id("\u2581")]
    assert tok.tgt_pieces(bare) == ["\u2581"] and tok.decode_tgt(bare) == ""
    assert pharaoh(Hypothesis(bare, torch.ones(2, len(src) + 1)), src, tok) == ""


def test_nbest_lists_scores_best_first(runs, source: Path, capsys) -> None:
    out = output_of(
        capsys, runs["additive"], "--input", source, "--beam", "3", "--nbest", "3"
    )
    rows = [line.split(" ||| ") for line in out if line]
    assert [int(r[0]) for r in rows] == [0, 0, 0, 2, 2, 2, 3, 3, 3, 5, 5, 5]
    assert all(len(r) == 4 and r[2] == f"score= {r[3]}" for r in rows)  # Moses's
    for k in range(0, len(rows), 3):
        scores = [float(r[3]) for r in rows[k : k + 3]]
        assert scores == sorted(scores, reverse=True)
    assert out.count("") == 2  # the two empty input lines


def test_json_and_plots(runs, source: Path, tmp_path: Path, capsys) -> None:
    plots = tmp_path / "plots"
    out = output_of(
        capsys,
        runs["additive"],
        "--input",
        source,
        "--json",
        "--alignments",
        "--plot",
        plots,
    )
    records = [json.loads(line) for line in out]
    assert [r["line"] for r in records] == [1, 2, 3, 4, 5, 6]
    first = records[0]
    assert {"source", "hypothesis", "score", "alignment", "tokens"} <= set(first)
    assert first["score"] < 0 and first["tokens"]
    assert isinstance(first["alignment"], str)
    assert records[1]["hypothesis"] == "" and records[1]["score"] is None
    assert sorted(p.name for p in plots.iterdir()) == [
        f"line{n:05d}.png" for n in (1, 3, 4, 6)
    ]


def test_long_lines_are_cut_with_a_warning(runs, tmp_path: Path, capsys) -> None:
    path = tmp_path / "long.en"
    path.write_text(f"a short one\n{LONG}\n")
    assert run(runs["additive"], "--input", path) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2
    assert "warning: line 2: 3" in captured.err and "translating the first 250" in (
        captured.err
    )


def test_none_refuses_alignments_and_plots(runs, source: Path, capsys) -> None:
    for flag in (["--alignments"], ["--plot", str(source.parent / "p")]):
        assert run(runs["none"], "--input", source, *flag) == 2
        err = capsys.readouterr().err
        assert "model 'none' has no attention to align or plot" in err
    assert len(output_of(capsys, runs["none"], "--input", source)) == 6


def test_errors_leave_an_existing_output_alone(runs, source: Path, capsys) -> None:
    out = source.parent / "out.de"
    out.write_text("keep me\n")
    assert (
        run(runs["additive"], "--input", source, "--output", out, "--nbest", "2") == 2
    )
    assert "--nbest 2 needs --beam 2" in capsys.readouterr().err
    assert run(runs["additive"], "--input", source / "nope", "--output", out) == 2
    assert out.read_text() == "keep me\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["in.en", "out.de"]
    assert run(runs["additive"], "--input", source, "--output", out) == 0
    assert len(out.read_text().splitlines()) == 6
    empty = source.parent / "empty_run"
    empty.mkdir()
    assert run(empty, "--input", source) == 2
    assert "not a run directory" in capsys.readouterr().err
    shutil.copytree(runs["additive"] / "spm", empty / "spm")
    shutil.copy(runs["additive"] / "config.yaml", empty)
    assert run(empty, "--input", source) == 2
    assert "best.pt: missing, the run has not validated yet" in capsys.readouterr().err


def test_output_paths_are_checked_before_decoding(
    runs, source: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_decoding(*args, **kwargs):
        raise AssertionError("decoded before checking the output path")

    monkeypatch.setattr("seq2seq.lab.translate.translate_batch", no_decoding)
    folder = source.parent / "outdir"
    folder.mkdir()
    (folder / "kept.txt").write_text("keep me\n")
    assert run(runs["additive"], "--input", source, "--output", folder) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--output {folder}: is a directory" in err
    assert [p.name for p in folder.iterdir()] == ["kept.txt"]
    missing = source.parent / "nope" / "out.de"
    assert run(runs["additive"], "--input", source, "--output", missing) == 2
    assert "folder" in capsys.readouterr().err and not missing.parent.exists()
    plot_file = folder / "kept.txt"
    assert run(runs["additive"], "--input", source, "--plot", plot_file) == 2
    assert "is a file" in capsys.readouterr().err
    assert plot_file.read_text() == "keep me\n"


def test_standard_input_and_output(runs, source: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seq2seq", "translate", str(runs["additive"])],
        input=source.read_bytes(),
        capture_output=True,
        check=True,
        cwd=REPO,
    )
    assert len(done.stdout.decode().splitlines()) == 6
    bad = subprocess.run(
        [sys.executable, "-m", "seq2seq", "translate", str(runs["additive"])],
        input=b"fine\n\xff\xfe\n",
        capture_output=True,
        cwd=REPO,
    )
    assert bad.returncode == 2 and b"line 2: not valid UTF-8" in bad.stderr


def test_a_reader_that_goes_away_is_not_an_error(runs, tmp_path: Path) -> None:
    """`seq2seq translate ... | head -1`: the closed pipe ends it quietly, with
    no traceback and no message about a file (only the checkpoint's step,
    said before translating)."""
    many = tmp_path / "many.en"
    many.write_text("the dog sees the cat near the old house .\n" * 5000)
    cmd = f"{sys.executable} -m seq2seq translate {runs['none']} < {many} | head -1"
    done = subprocess.run(cmd, shell=True, capture_output=True, cwd=REPO)
    assert len(done.stdout.decode().splitlines()) == 1
    said = done.stderr.decode().splitlines()  # only the step it translated with
    assert len(said) == 1 and said[0].startswith(f"{runs['none']}: best at step")


def test_the_prompt_reads_one_line_at_a_time(capsys) -> None:
    typed = io.StringIO("Hallo Welt\n\nTschüss\n")
    lines = prompt_lines(typed)
    assert next(lines) == "Hallo Welt\n"
    assert typed.tell() == len(b"Hallo Welt\n")  # nothing read ahead
    assert list(lines) == ["\n", "Tschüss\n"]
    assert capsys.readouterr().err == "> " * 4  # a prompt before each read
