"""seq2seq/run.py owns the run folder: its paths, and no other module's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq import run
from seq2seq.errors import UserError

# Building a run file's path: `/ "last.pt"`, f"eval_{...}", f"hyp_{...}" ...
SPELT = re.compile(
    r"""/\s*["'](config\.yaml|last\.pt|best\.pt|history\.jsonl|spm)["']"""
    r"""|(/\s*|with_name\()f["'](eval|hyp|probe)_\{"""
)


def test_no_other_module_spells_a_run_file() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sorted(
            [*(REPO / "seq2seq").rglob("*.py"), *(REPO / "scripts").rglob("*.py")]
        )
        if path.name not in ("run.py", "tokenizer.py")  # tokenizer: its own cache
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if SPELT.search(line)
    ]
    assert found == [], "ask seq2seq.run for these paths"


def test_the_check_finds_a_spelt_name() -> None:
    assert SPELT.search('path = run_dir / "last.pt"')
    assert SPELT.search('out = folder / f"eval_{split}.json"')
    assert SPELT.search('hyps = path.with_name(f"hyp_{split}.txt")')
    assert not SPELT.search('"""saves last.pt (and best.pt)"""')
    assert not SPELT.search('tag = f"probe_{split}"')  # a TensorBoard tag


def test_the_paths(tmp_path: Path) -> None:
    assert run.checkpoint_file(tmp_path, "best") == tmp_path / "best.pt"
    assert run.evaluation_file(tmp_path, "test_beam5").name == "eval_test_beam5.json"
    assert run.hypotheses_file(tmp_path, "test").name == "hyp_test.txt"
    assert run.probe_file(tmp_path, "val", ".png").name == "probe_val.png"
    assert [p.name for p in run.vocab_files(tmp_path)] == ["src.model", "tgt.model"]
    with pytest.raises(AssertionError):
        run.checkpoint_file(tmp_path, "worst")


def test_what_is_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        run.check_run(tmp_path)
    assert "holds no config.yaml" in run.not_a_run(tmp_path)
    run.config_file(tmp_path).write_text("x: 1\n")
    run.vocab_dir(tmp_path).mkdir()
    assert run.not_a_run(tmp_path) == ""
    (tmp_path / "data").mkdir()
    assert "folders a run does not write (data)" in run.not_a_run(tmp_path)
