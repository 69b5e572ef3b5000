"""Progress: labelled bars or lines, and a TensorBoard command that runs as printed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import REPO, tiny_overrides

from seq2seq.cli import main
from seq2seq.data.synth import write_corpus
from seq2seq.training.progress import Progress, tensorboard_command


def test_log_lines_name_the_run_and_never_rewrite_a_line(capsys) -> None:
    progress = Progress("demo/none", "log", every_s=0.0)
    bar = progress.epoch([[0], [1], [2]], done=1, epoch=3)
    for step, _ in enumerate(bar, start=2):
        progress.report(bar, step, 100, 2.5, 1234.0)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == [
        "demo/none: step 2/100 epoch 3 loss 2.500 1,234 tok/s",
        "demo/none: step 3/100 epoch 3 loss 2.500 1,234 tok/s",
    ]


def test_log_lines_are_spaced_in_time(capsys) -> None:
    progress = Progress("x", "log", every_s=3600.0)
    bar = progress.epoch([[0], [1]], done=0, epoch=1)
    for step, _ in enumerate(bar, start=1):
        progress.report(bar, step, 0, 1.0, 10.0)
    assert capsys.readouterr().err.splitlines() == [
        "x: step 1 epoch 1 loss 1.000 10 tok/s"
    ]


def test_the_bar_is_labelled_and_off_is_silent(capsys) -> None:
    bar = Progress("demo/additive", "bar").epoch([[0]], done=0, epoch=2)
    assert bar.desc == "demo/additive epoch 2"
    bar.close()
    capsys.readouterr()
    off = Progress("x", "off", every_s=0.0)
    bar = off.epoch([[0]], done=0, epoch=1)
    for _ in bar:
        off.report(bar, 1, 1, 1.0, 1.0)
    assert capsys.readouterr().err == ""


def test_train_in_a_log_prints_labelled_lines(tmp_path: Path, capsys) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 10})
    sets = [*tiny_overrides(corpus, tmp_path / "runs", "logged"), "train.log_every=4"]
    argv = ["train", "--config", str(REPO / "configs/synth_ende/none.yaml")]
    assert (
        main([*argv, "--progress", "log", *(a for s in sets for a in ("--set", s))])
        == 0
    )
    out, err = capsys.readouterr()
    assert "\r" not in err and "logged: step 4/16 epoch 1 loss" in err
    assert "logged: step 8: val loss" in out and "logged: step 16: val loss" in out
    done = out.splitlines()[-1]
    assert done.startswith("done: ") and "--logdir" in done


def test_the_tensorboard_command_runs_as_printed_without_the_venv_on_path() -> None:
    env = dict(os.environ, PATH="/usr/bin:/bin")
    code = (
        "from pathlib import Path; "
        "from seq2seq.training.progress import tensorboard_command; "
        "print(tensorboard_command(Path('runs/demo')))"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    assert printed.endswith(" --logdir runs/demo")
    program = shlex.split(printed)[0]
    version = subprocess.run(
        [program, "--version_tb"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert tensorboard_command(Path("x")).endswith("--logdir x")
