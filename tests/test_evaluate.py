"""seq2seq evaluate (seq2seq/lab/evaluate.py): what it writes is what it
returns, a saved evaluation is reused only while it scores the checkpoint as
it is, and a run evaluates from any folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import tiny_additive

from seq2seq import run as run_files
from seq2seq.config import load_config
from seq2seq.lab.evaluate import (
    cached_evaluate,
    evaluate,
    format_result,
    saved_evaluation,
)
from seq2seq.results import Evaluation


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny additive run (seconds), evaluated on its 20 test pairs."""
    run_dir = tiny_additive(tmp_path_factory.mktemp("evaluate"))
    evaluate(run_dir, "test", device_name="cpu")
    return run_dir


def test_what_it_writes_is_what_it_returns(evaluated: Path) -> None:
    saved = saved_evaluation(evaluated, "test")
    assert isinstance(saved, Evaluation) and saved.split == "test"
    path = run_files.evaluation_file(evaluated, "test")
    assert json.loads(path.read_text()) == saved.to_dict()
    hyps = run_files.hypotheses_file(evaluated, "test").read_text().splitlines()
    assert len(hyps) == 20 == sum(b.n for b in saved.scores.buckets)
    assert saved.aer is not None and 0.0 <= saved.aer <= 1.0  # gold links
    report = format_result(saved)
    assert f"BLEU {saved.scores.bleu:.2f}" in report and "AER" in report


def test_a_run_evaluates_from_another_folder(
    evaluated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny run's corpus is absolute; a copy of it with relative corpus
    paths, opened from an unrelated folder, finds its corpus above the run."""
    root = tmp_path / "work"
    shutil.copytree(evaluated.parent.parent / "corpus", root / "corpus")
    run_dir = Path(shutil.copytree(evaluated, root / "runs" / "tiny"))
    config = run_files.config_file(run_dir)
    config.write_text(config.read_text().replace(f"{evaluated.parent.parent}/", ""))
    assert "src: corpus/test.en" in config.read_text()  # relative now
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    again = evaluate(run_dir, "test", device_name="cpu")
    assert again.scores == saved_evaluation(evaluated, "test").scores


def test_a_saved_evaluation_is_redone_for_a_new_checkpoint(
    evaluated: Path, tmp_path: Path
) -> None:
    """compare reuses eval_test.json only while best.pt is the checkpoint it
    scored (a resumed training may write a new one) and its hypotheses are
    there; without best.pt the saved result stands."""
    run = Path(shutil.copytree(evaluated, tmp_path / "copy"))
    saved = json.loads((run / "eval_test.json").read_text())
    assert cached_evaluate(run, "test", "cpu").to_dict() == saved
    payload = torch.load(run / "best.pt", weights_only=True)
    payload["state"]["step"] = saved["step"] + 1  # as if trained further
    torch.save(payload, run / "best.pt")
    redone = cached_evaluate(run, "test", "cpu")
    assert redone.step == saved["step"] + 1
    assert json.loads((run / "eval_test.json").read_text()) == redone.to_dict()
    # without its hypotheses (which the bootstrap reads) it is redone as well
    (run / "hyp_test.txt").unlink()
    assert cached_evaluate(run, "test", "cpu") == redone
    assert (run / "hyp_test.txt").is_file()
    (run / "best.pt").unlink()
    (run / "hyp_test.txt").unlink()
    assert cached_evaluate(run, "test", "cpu") == redone


# -- evaluate --src F --ref F: any test set ------------------------------------


def _other_set(evaluated: Path, folder: Path, lines: int = 12) -> list[Path]:
    """The run's first ``lines`` test pairs as files of their own, a second
    reference (the first with its last word dropped) and a source file."""
    test = load_config(run_files.config_file(evaluated)).data.test
    src = Path(test.src).read_text().splitlines()[:lines]
    ref = Path(test.tgt).read_text().splitlines()[:lines]
    files = [folder / "news.en.gz", folder / "news.de", folder / "news2.de"]
    import gzip

    files[0].write_bytes(gzip.compress("".join(s + "\n" for s in src).encode()))
    files[1].write_text("".join(r + "\n" for r in ref))
    files[2].write_text("".join(r.rsplit(" ", 1)[0] + "\n" for r in ref))
    return files


def test_any_test_file_is_scored_as_a_split_is(evaluated: Path, tmp_path: Path) -> None:
    """--src/--ref: the file set is decoded, scored and written under its
    name as a split is; its first reference alone scores what sacreBLEU
    scores, and a second reference is used (nrefs:2), as in sacreBLEU."""
    import sacrebleu

    from seq2seq.cli import main

    src, ref, ref2 = _other_set(evaluated, tmp_path)
    assert main(["evaluate", str(evaluated), "--src", str(src), "--ref", str(ref)]) == 0
    one = Evaluation.read(run_files.evaluation_file(evaluated, "news"))
    assert one.split == "news" and one.files == (str(src), str(ref))
    hyps = run_files.hypotheses_file(evaluated, "news").read_text().splitlines()
    refs = ref.read_text().splitlines()
    assert len(hyps) == 12 == sum(b.n for b in one.buckets)
    assert one.bleu == sacrebleu.corpus_bleu(hyps, [refs]).score
    args = ["evaluate", str(evaluated), "--src", str(src), "--ref", str(ref)]
    assert main([*args, "--ref", str(ref2), "--name", "news_2refs"]) == 0
    two = Evaluation.read(run_files.evaluation_file(evaluated, "news_2refs"))
    both = [refs, ref2.read_text().splitlines()]
    assert two.bleu == sacrebleu.corpus_bleu(hyps, both).score
    assert two.scores.chrf == sacrebleu.corpus_chrf(hyps, both).score
    assert two.scores.signature.startswith("nrefs:2|")


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--split", "val"], "--split or --src, not both"),
        (["--name", "test"], "'test' is a split's name"),
        (["--name", "../x"], "not a file name of its own"),
        (["--ref", "{short}"], "short.de has 3 lines but"),
        (["--ref", "{missing}"], "missing.de: file not found"),
    ],
)
def test_bad_file_sets_are_refused_in_one_line(
    evaluated: Path,
    tmp_path: Path,
    capsys,
    extra: list[str],
    needle: str,  # noqa: ANN001
) -> None:
    from conftest import assert_refused

    src, ref, _ = _other_set(evaluated, tmp_path)
    (tmp_path / "short.de").write_text("a\nb\nc\n")
    names = {
        "short": str(tmp_path / "short.de"),
        "missing": str(tmp_path / "missing.de"),
    }
    extra = [x.format(**names) for x in extra]
    argv = ["evaluate", str(evaluated), "--src", str(src), "--ref", str(ref), *extra]
    assert_refused(argv, needle, evaluated, capsys)


def test_ref_without_src_is_refused(evaluated: Path, capsys) -> None:  # noqa: ANN001
    from conftest import assert_refused

    argv = ["evaluate", str(evaluated), "--ref", "x.de"]
    assert_refused(argv, "--ref goes with --src", evaluated, capsys)
