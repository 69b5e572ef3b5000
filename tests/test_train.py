"""Integration: train `none` and `additive` briefly on the shipped corpus, evaluate,
and read back what TensorBoard will show (event files and a live server)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.training.train import train

STEPS = 800  # configs/experiments/lesson.yaml's budget


@pytest.fixture(scope="module")
def runs(lesson_runs: dict) -> dict:
    """The lesson's `none` and `additive` runs (conftest.lesson_runs)."""
    return lesson_runs


def result(run: Path) -> dict:
    return json.loads((run / "eval_test.json").read_text())


@pytest.mark.slow
def test_attention_learns_and_beats_the_bottleneck_on_long_sentences(runs) -> None:
    """Margins, from these two trainings over train.seed 1-5 on an Intel Xeon
    (each training on one thread, as here), seed 1 on an AMD EPYC (Zen 3) and
    seed 1 on an AMD EPYC (Zen 4): `additive` scored 32.4-47.4 BLEU (42.4 and
    30.8 on the EPYCs), asked for > 20; its longest bucket led `none`'s by
    26-40 BLEU (25.6 on the Zen 4), asked for > 10; its AER was 0.24-0.28,
    asked for < 0.6, and fell from 0.45-0.63 at the first validation to
    0.22-0.26 at the second. The spread over seeds and CPUs is wide (15 BLEU)
    because 800 steps end just after the alignment forms."""
    att, none = result(runs["additive"]), result(runs["none"])
    for r in (att, none):
        assert {"mode", "params", "bleu", "chrf", "signature", "buckets", "aer"} <= set(
            r
        )
        assert sum(b["n"] for b in r["buckets"]) == runs["sizes"]["test"]
    assert att["mode"] == "additive" and none["mode"] == "none"
    assert att["bleu"] > 20.0, att
    long_att, long_none = att["buckets"][-1]["bleu"], none["buckets"][-1]["bleu"]
    assert long_att > long_none + 10.0, (long_att, long_none)
    assert none["aer"] is None
    assert att["aer"] is not None and att["aer"] < 0.6, att["aer"]


@pytest.mark.slow
def test_run_directory_has_checkpoints_and_tensorboard_images(runs) -> None:
    run = runs["additive"]
    for name in ("best.pt", "last.pt", "config.yaml", "history.jsonl", "hyp_test.txt"):
        assert (run / name).is_file(), name
    assert load_config(run / "config.yaml").model.attention == "additive"
    events = EventAccumulator(str(run), size_guidance={"images": 0})
    events.Reload()
    tags = events.Tags()
    for view in ("alignment", "alignment_words", "forced", "forced_words"):
        images = sorted(t for t in tags["images"] if t.startswith(f"{view}/"))
        assert images == [f"{view}/probe{k}" for k in range(4)], view
    assert [e.step for e in events.Images("alignment/probe0")] == [STEPS // 2, STEPS]
    png = events.Images("alignment/probe3")[-1].encoded_image_string
    assert png.startswith(b"\x89PNG")
    for scalar in (
        "train/loss",
        "train/lr",
        "train/grad_norm",
        "train/tokens_per_s",
        "val/loss",
        "val/ppl",
        "val/bleu",
        "val/chrf",
    ):
        assert scalar in tags["scalars"], scalar
    for scalar in ("entropy", "peak", "eos_mass", "monotone", "aer"):
        assert f"attention/{scalar}" in tags["scalars"], scalar
    # the gold alignments of the validation set: AER falls as attention learns
    # (0.45-0.61 -> 0.22-0.25 over train.seed 1-5: docs/testing.md)
    lines = (run / "history.jsonl").read_text().splitlines()
    aers = [json.loads(line)["attention"]["aer"] for line in lines]
    assert len(aers) == 2 and aers[1] < aers[0] <= 1.0, aers
    assert "samples/text_summary" in tags["tensors"]
    assert "hparams" in events.PluginTagToContent(
        "hparams"
    ) or events.PluginTagToContent("hparams")


@pytest.mark.slow
def test_no_attention_run_says_there_is_nothing_to_align(runs) -> None:
    events = EventAccumulator(str(runs["none"]))
    events.Reload()
    # no heatmap of any view (a probe's plot, from the notebooks, may be there)
    views = ("alignment", "forced")
    assert not [t for t in events.Tags()["images"] if t.startswith(views)]
    assert "alignment/text_summary" in events.Tags()["tensors"]
    assert not [t for t in events.Tags()["scalars"] if t.startswith("attention/")]


@pytest.mark.slow
def test_existing_run_is_not_overwritten(runs) -> None:
    cfg = load_config(runs["additive"] / "config.yaml")
    before = (runs["additive"] / "best.pt").stat().st_mtime_ns
    with pytest.raises(UserError, match="pass resume .* overwrite to replace it"):
        train(cfg, "cpu")
    assert (runs["additive"] / "best.pt").stat().st_mtime_ns == before


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


@pytest.mark.slow
def test_tensorboard_serves_the_heatmaps(runs) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}/data/plugin/images"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tensorboard.main",
            "--logdir",
            str(runs["additive"]),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--reload_interval",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        tags: dict = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                tags = json.loads(get(f"{base}/tags"))
                if any("alignment/probe0" in t for t in tags.values()):
                    break
            except OSError:
                pass
            time.sleep(1)
        run = next(r for r, t in tags.items() if "alignment/probe0" in t)
        listing = json.loads(
            get(f"{base}/images?run={run}&tag=alignment/probe0&sample=0")
        )
        assert [entry["step"] for entry in listing] == [STEPS // 2, STEPS]
        png = get(f"{base}/individualImage?{listing[-1]['query']}")
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert server.returncode is not None


def test_same_seed_same_weights(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    weights, scores = [], []
    for name in ("a", "b"):
        cfg = load_config(
            REPO / "configs/synth_ende/additive.yaml",
            tiny_overrides(corpus, tmp_path / "runs", name),
        )
        run = train(cfg, "cpu")
        payload = torch.load(run / "last.pt", weights_only=True)
        assert payload["state"]["step"] == 16
        weights.append(payload["model"])
        history = [json.loads(line) for line in (run / "history.jsonl").open()]
        scores.append([(h["step"], h["loss"], h["bleu"], h["chrf"]) for h in history])
    for key, value in weights[0].items():
        assert torch.equal(value, weights[1][key]), key
    assert scores[0] == scores[1] and len(scores[0]) == 2  # validation, bit for bit


@pytest.mark.parametrize("flag", ["train.fused_adam", "train.chunked_loss"])
def test_fused_kernels_take_the_same_steps_up_to_rounding(
    tmp_path: Path, flag: str
) -> None:
    """train.fused_adam and train.chunked_loss change how Adam and the loss are
    computed, not what they compute."""
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    weights = []
    for fused in (False, True):
        cfg = load_config(
            REPO / "configs/synth_ende/additive.yaml",
            [
                *tiny_overrides(corpus, tmp_path / "runs", f"fused_{fused}"),
                "train.label_smoothing=0.1",
                f"{flag}={fused}",
            ],
        )
        run = train(cfg, "cpu")
        weights.append(torch.load(run / "last.pt", weights_only=True)["model"])
    for key, value in weights[0].items():
        torch.testing.assert_close(weights[1][key], value, rtol=0, atol=1e-5)


def test_a_read_only_corpus_folder_is_never_written(tmp_path: Path) -> None:
    """A corpus on a read-only mount trains: the vocabulary cache lives in the
    project's cache folder, not beside the data. (As root the mode bits do not
    stop writes, so the folder's listing is compared as well.)"""
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    paths = [corpus, *corpus.iterdir()]
    before = sorted((str(p), p.stat().st_mtime_ns) for p in paths)
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        cfg = load_config(
            REPO / "configs/synth_ende/additive.yaml",
            tiny_overrides(corpus, tmp_path / "runs", "readonly"),
        )
        run = train(cfg, "cpu")
        after = sorted(
            (str(p), p.stat().st_mtime_ns) for p in [corpus, *corpus.iterdir()]
        )
    finally:
        corpus.chmod(0o755)
    assert after == before
    assert (run / "spm" / "src.model").is_file()


LR_TOO_SMALL = 1e-10  # changes no translation: every validation but the first stalls


def stalling_run(tmp_path: Path, *extra: str) -> list[dict]:
    """A plateau/patience=2 run whose every validation after the first is a
    stall; the lines of its history.jsonl."""
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    cfg = load_config(
        REPO / "configs/synth_ende/additive.yaml",
        [
            *tiny_overrides(corpus, tmp_path / "runs", "stop"),
            f"train.lr={LR_TOO_SMALL}",
            "train.min_lr=1e-15",
            "train.warmup_steps=0",
            "train.schedule=plateau",
            "train.plateau_patience=1",
            "train.patience=2",
            "train.max_steps=80",
            "train.val_every=8",
            *extra,
        ],
    )
    run = train(cfg, "cpu")
    return [json.loads(line) for line in (run / "history.jsonl").open()]


def test_early_stopping_halves_the_lr_then_stops(tmp_path: Path) -> None:
    """schedule=plateau halves the lr after a validation without a new best
    BLEU; patience=2 stops after two in a row."""
    history = stalling_run(tmp_path)
    lr, run = LR_TOO_SMALL, tmp_path / "runs" / "stop"
    assert [h["step"] for h in history] == [8, 16, 24]  # stopped, budget was 80
    assert [h["lr"] for h in history] == pytest.approx([lr, lr, lr / 2])
    assert len({h["bleu"] for h in history}) == 1
    assert all(h["epoch"] == 1 for h in history)  # 400 pairs: one epoch is longer
    payload = torch.load(run / "last.pt", weights_only=True)
    assert payload["state"]["step"] == 24 and payload["state"]["bad_validations"] == 2
    assert payload["schedule"]["scale"] == 0.25  # halved after each stall, saved


def test_the_stopping_rule_waits_for_the_curriculum(tmp_path: Path) -> None:
    """Stalls before every pair is open (step 40 here) are not counted: the lr
    first halves at the validation of step 40 and training stops at step 48."""
    history = stalling_run(tmp_path, "train.curriculum_steps=40")
    assert [h["step"] for h in history] == [8, 16, 24, 32, 40, 48]
    lr = LR_TOO_SMALL
    assert [h["lr"] for h in history] == pytest.approx([lr] * 5 + [lr / 2])
