"""The bad-input catalogue: every mistake a user can make with corpus files,
configs, run directories, checkpoints and devices ends in one line naming the
file/line/key and the fix, exit status 2, no traceback, and no existing file
changed or removed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from conftest import (
    REPO,
    assert_refused,
    snapshot,
    tiny_additive,
    tiny_overrides,
    write_parallel,
)

import seq2seq.training.loop as loop_module
from seq2seq.cli import main
from seq2seq.config import Config, load_config
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.training.train import train

SOURCES = ["ein kleiner hund", "zwei katzen", "der mann liest", "ich sehe dich"]
TARGETS = ["a small dog", "two cats", "the man reads", "i see you"]


def config(folder: Path, src: Path, tgt: Path, extra: str = "") -> Path:
    path = folder / "c.yaml"
    path.write_text(
        f"data:\n  train: {{src: {src}, tgt: {tgt}}}\n"
        f"  val: {{src: {src}, tgt: {tgt}}}\n"
        f"runs_dir: {folder / 'runs'}\n{extra}",
        encoding="utf-8",
    )
    return path


def corpus(folder: Path, src: list[str], tgt: list[str]) -> Path:
    s, t = write_parallel(folder, "train", src, tgt)
    return config(folder, s, t)


def good(folder: Path) -> Path:
    return corpus(folder, SOURCES, TARGETS)


def missing_file(d: Path) -> tuple[list[str], str]:
    cfg = config(d, d / "nope.de", d / "nope.en")
    return ["train", "--config", str(cfg)], "nope.de: file not found"


def line_counts_differ(d: Path) -> tuple[list[str], str]:
    cfg = corpus(d, SOURCES, TARGETS[:3])
    return ["train", "--config", str(cfg)], "train.src has 4 lines but"


def invalid_utf8(d: Path) -> tuple[list[str], str]:
    cfg = good(d)
    (d / "train.src").write_bytes(b"ein hund\nzwei \xff katzen\nx\ny\n")
    return ["train", "--config", str(cfg)], "train.src:2: not valid UTF-8"


def empty_corpus(d: Path) -> tuple[list[str], str]:
    cfg = corpus(d, [], [])
    return ["train", "--config", str(cfg)], "no usable sentence pairs"


def empty_after_cleaning(d: Path) -> tuple[list[str], str]:
    cfg = corpus(d, ["  ", "a b", ""], ["x", " ", "y"])
    return ["train", "--config", str(cfg)], "no usable sentence pairs"


def huge_line(d: Path) -> tuple[list[str], str]:
    cfg = corpus(d, [*SOURCES[:2], "x" * 100_000, SOURCES[3]], TARGETS)
    return ["train", "--config", str(cfg)], "train.src:3: 100,000 characters"


def alignment_out_of_range(d: Path) -> tuple[list[str], str]:
    s, t = write_parallel(d, "train", SOURCES, TARGETS)
    (d / "train.align").write_text("0-0 1-1 2-2\n0-0\n99-99\n0-0\n")
    path = d / "c.yaml"
    path.write_text(
        f"data:\n  train: {{src: {s}, tgt: {t}}}\n"
        f"  val: {{src: {s}, tgt: {t}, align: {d / 'train.align'}}}\n"
        f"runs_dir: {d / 'runs'}\n",
        encoding="utf-8",
    )
    return ["train", "--config", str(path)], "train.align:3: link 99-99 is outside"


def unknown_key(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "train.lerning_rate=1"]
    return args, "unknown config key 'train.lerning_rate'"


def unknown_key_in_file(d: Path) -> tuple[list[str], str]:
    cfg = config(d, *write_parallel(d, "t", SOURCES, TARGETS), "modle: {}\n")
    return ["train", "--config", str(cfg)], "did you mean 'model'"


def wrong_type(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "train.lr=fast"]
    return args, "'train.lr': expected float"


def negative_size(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "model.encoder.hidden_size=-8"]
    return args, "'model.encoder.hidden_size': must be in [1, 65536]"


def dropout_one(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "model.decoder.dropout=1"]
    return args, "'model.decoder.dropout': must be in [0, 1)"


def bad_override_syntax(d: Path) -> tuple[list[str], str]:
    return ["train", "--config", str(good(d)), "--set", "train.lr"], "KEY=VALUE"


def invalid_yaml(d: Path) -> tuple[list[str], str]:
    path = d / "bad.yaml"
    path.write_text("data:\n  train: [a\nmodel: {}\n")
    return ["train", "--config", str(path)], "bad.yaml:3: not valid YAML"


def vocabulary_too_large(d: Path) -> tuple[list[str], str]:
    return ["train", "--config", str(good(d))], "tokenizer.vocab_size=8000 is too large"


def not_a_run_directory(d: Path) -> tuple[list[str], str]:
    return ["evaluate", str(d)], "not a run directory (no config.yaml)"


def bad_override_yaml(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "eval.buckets=[10"]
    return args, "--set 'eval.buckets=[10': the value is not valid YAML"


def out_folder_under_a_file(d: Path) -> tuple[list[str], str]:
    """An OSError from the system (here: a folder below a file) is one line too."""
    (d / "a_file").write_text("x\n")
    args = ["prepare", "synth_ende", "--out", str(d / "a_file" / "corpus")]
    return args, "a_file/corpus: Not a directory"


def cuda_without_cuda(d: Path) -> tuple[list[str], str]:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    return ["train", "--config", str(good(d)), "--device", "cuda"], "no CUDA device"


def name_outside_runs_dir(d: Path) -> tuple[list[str], str]:
    return ["train", "--config", str(good(d)), "--set", "name=../x"], "not a run name"


def name_absolute(d: Path) -> tuple[list[str], str]:
    argv = ["train", "--config", str(good(d)), "--set", f"name={d / 'abs'}"]
    return argv, "not a run name"


def name_dot_overwrite(d: Path) -> tuple[list[str], str]:
    argv = ["train", "--config", str(good(d)), "--set", "name=.", "--overwrite"]
    return argv, "config key 'name': '.' is not a run name"


def name_in_the_file(d: Path) -> tuple[list[str], str]:
    return ["train", "--config", str(config_with(d, "name: a/../../b\n"))], "not a run"


def experiment_name_outside(d: Path) -> tuple[list[str], str]:
    exp = d / "e.yaml"
    exp.write_text(f"name: ..\nconfigs: [{good(d)}]\nruns_dir: {d / 'runs'}\n")
    return ["experiment", str(exp)], "config key 'name': '..' is not a run name"


def config_with(d: Path, extra: str) -> Path:
    s, t = write_parallel(d, "train", SOURCES, TARGETS)
    return config(d, s, t, extra)


def seed_out_of_range(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "train.seed=-1"]
    return args, "'train.seed': must be in [0, 4294967295], got -1"


def lr_not_finite(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "train.lr=.inf"]
    return args, "'train.lr': must be a finite number, got inf"


def option_out_of_range(d: Path) -> tuple[list[str], str]:
    args = ["prepare", "synth_ende", "--seed", "-1", "--out", str(d / "corpus")]
    return args, "--seed -1: must be in [0, 4294967295]"


def option_not_finite(d: Path) -> tuple[list[str], str]:
    return ["evaluate", str(d), "--alpha", "nan"], "--alpha nan: must be a finite"


def model_too_large(d: Path) -> tuple[list[str], str]:
    args = ["train", "--config", str(good(d)), "--set", "tokenizer.vocab_size=30"]
    args += ["--set", "model.decoder.hidden_size=60000"]
    return args, "available; make the model section's widths or layers smaller"


CASES: list[Callable[[Path], tuple[list[str], str]]] = [
    model_too_large,
    seed_out_of_range,
    lr_not_finite,
    option_out_of_range,
    option_not_finite,
    name_outside_runs_dir,
    name_absolute,
    name_dot_overwrite,
    name_in_the_file,
    experiment_name_outside,
    missing_file,
    line_counts_differ,
    invalid_utf8,
    empty_corpus,
    empty_after_cleaning,
    huge_line,
    alignment_out_of_range,
    unknown_key,
    unknown_key_in_file,
    wrong_type,
    negative_size,
    dropout_one,
    bad_override_syntax,
    bad_override_yaml,
    invalid_yaml,
    vocabulary_too_large,
    not_a_run_directory,
    out_folder_under_a_file,
    cuda_without_cuda,
]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_user_errors(case, tmp_path: Path, capsys) -> None:
    argv, needle = case(tmp_path)
    assert_refused(argv, needle, tmp_path, capsys)
    assert not (tmp_path / "runs").exists()  # no half-made run directory


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_additive(tmp_path_factory.mktemp("bad_input"), train_pairs=400)


def test_existing_run_directory_is_refused(trained: Path, capsys) -> None:
    argv = ["train", "--config", str(trained / "config.yaml")]
    assert_refused(argv, "already exists; pass --resume", trained.parent, capsys)


def test_checkpoint_that_is_not_one(trained: Path, tmp_path: Path, capsys) -> None:
    fake = tmp_path / "model.pt"
    fake.write_text("just text\n")
    argv = ["evaluate", str(trained), "--checkpoint", str(fake)]
    assert_refused(
        argv, "model.pt: not a loadable seq2seq checkpoint", tmp_path, capsys
    )


def test_checkpoint_whose_weights_do_not_fit(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """torch's multi-line load_state_dict error becomes one line."""
    payload = torch.load(trained / "best.pt", weights_only=True)
    del payload["model"]["decoder.output.weight"]
    del payload["model"]["decoder.output.bias"]
    torch.save(payload, tmp_path / "cut.pt")
    argv = ["evaluate", str(trained), "--checkpoint", str(tmp_path / "cut.pt")]
    assert_refused(argv, "cut.pt: weights do not fit", tmp_path, capsys)


def test_checkpoint_path_that_does_not_exist(trained: Path, capsys) -> None:
    argv = ["evaluate", str(trained), "--checkpoint", "bset"]
    assert_refused(argv, "--checkpoint bset: no such file; pass best", trained, capsys)


def test_translate_without_a_finished_checkpoint(trained: Path, capsys) -> None:
    copy = trained.parent / "unvalidated"
    copy.mkdir()
    for name in ("config.yaml", "last.pt"):
        (copy / name).write_bytes((trained / name).read_bytes())
    (copy / "spm").mkdir()
    for name in ("src.model", "tgt.model"):
        (copy / "spm" / name).write_bytes((trained / "spm" / name).read_bytes())
    assert_refused(
        ["translate", str(copy)],
        "best.pt: missing, the run has not validated yet",
        copy,
        capsys,
    )


def diverging_run(tmp_path: Path, name: str) -> Config:
    """A tiny run of 40 steps with a checkpoint every 5, to break at step 12."""
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 400, "val": 20, "test": 20}
    )
    items = tiny_overrides(tmp_path / "corpus", tmp_path / "runs", name)
    return load_config(
        REPO / "configs/synth_ende/additive.yaml",
        [*items, "train.checkpoint_every=5", "train.max_steps=40"],
    )


def test_loss_going_nan_stops_and_keeps_the_last_checkpoint(
    tmp_path: Path, monkeypatch
) -> None:
    cfg = diverging_run(tmp_path, "nan")
    real, calls = loop_module.loss_sum, []

    def diverging(*args, **kwargs):  # a real loss that overflows at step 12
        loss, weights = real(*args, **kwargs)
        calls.append(1)
        return (loss * float("inf") if len(calls) >= 12 else loss), weights

    monkeypatch.setattr(loop_module, "loss_sum", diverging)
    with pytest.raises(UserError, match="loss became inf at step 12; lower train.lr"):
        train(cfg, "cpu")
    last = torch.load(tmp_path / "runs" / "nan" / "last.pt", weights_only=True)
    assert last["state"]["step"] == 10
    assert all(torch.isfinite(v).all() for v in last["model"].values())


def test_gradient_going_inf_stops_before_the_update(
    tmp_path: Path, monkeypatch
) -> None:
    """A finite loss with an infinite gradient must not reach the weights."""
    cfg = diverging_run(tmp_path, "inf")
    real, calls, seen = torch.nn.utils.clip_grad_norm_, [], {}

    def overflowing(params, max_norm):  # a real clip, then a norm that overflowed
        params = list(params)
        norm = real(params, max_norm)
        calls.append(1)
        if len(calls) < 12:
            return norm
        seen["params"] = params  # the model's own tensors, and their values now
        seen["before"] = [p.detach().clone() for p in params]
        return norm * float("inf")

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", overflowing)
    with pytest.raises(UserError, match="gradient norm became inf at step 12"):
        train(cfg, "cpu")
    for param, before in zip(seen["params"], seen["before"], strict=True):
        assert torch.equal(param.detach(), before)  # the update never happened
    last = torch.load(tmp_path / "runs" / "inf" / "last.pt", weights_only=True)
    assert last["state"]["step"] == 10


def test_overwrite_replaces_a_run_and_nothing_beside_it(trained: Path) -> None:
    runs = trained.parent
    args = ["--set", f"runs_dir={runs}", "--progress", "off", "--device", "cpu"]
    first = ["train", "--config", str(trained / "config.yaml"), *args]
    assert main([*first, "--set", "name=other"]) == 0
    beside = snapshot(runs / "tiny")
    assert main([*first, "--set", "name=other", "--overwrite"]) == 0
    assert snapshot(runs / "tiny") == beside  # the run beside it: intact
    assert (runs / "other" / "best.pt").is_file()


@pytest.mark.parametrize("kind", ["not_a_run", "holds_a_folder", "link_outside"])
def test_overwrite_refuses_what_is_not_a_run_inside_runs_dir(
    kind: str, trained: Path, tmp_path: Path, capsys
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    target = runs / "victim"
    if kind == "link_outside":  # runs/victim -> a run folder outside runs/
        (runs / "victim").symlink_to(trained, target_is_directory=True)
        target, needle = trained, "is not inside runs_dir"
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine\n")
        needle = "holds no config.yaml"
        if kind == "holds_a_folder":
            (target / "config.yaml").write_text("x: 1\n")
            (target / "data").mkdir()
            (target / "data" / "corpus.txt").write_text("mine\n")
            needle = "holds folders a run does not write (data)"
    before = snapshot(target)
    argv = ["train", "--config", str(trained / "config.yaml"), "--overwrite"]
    argv += ["--set", f"runs_dir={runs}", "--set", "name=victim"]
    assert_refused(argv, f"refused, nothing deleted: it {needle}", runs, capsys)
    assert snapshot(target) == before


def test_a_beam_above_its_ceiling_is_refused(trained: Path, capsys) -> None:
    argv = ["evaluate", str(trained), "--beam", "100000000", "--device", "cpu"]
    assert_refused(argv, "--beam 100000000: must be in [1, 1000]", trained, capsys)


def test_a_beam_too_large_for_the_machine_is_refused(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """Under every ceiling, and still more than the machine holds: 8,000
    sentences at once with --beam 1000 need hundreds of GB of logits."""
    source = tmp_path / "in.txt"
    source.write_text("the dog sleeps .\n" * 8000, encoding="utf-8")
    argv = ["translate", str(trained), "--input", str(source), "--beam", "1000"]
    argv += ["--batch-size", "100000", "--device", "cpu"]
    assert_refused(argv, "with --beam 1000 needs about", tmp_path, capsys)


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("model.encoder.hidden_size=1000000000000", "must be in [1, 65536]"),
        ("model.decoder.embed_dim=99999999999999999999", "must be in [1, 65536]"),
        ("train.lr=3e38", "'train.lr': must be in (0, 10], got 3e+38"),
        ("train.max_steps=10000000000", "must be in [0, 1000000000]"),
        ("tokenizer.vocab_size=10000000000", "must be in [8, 1000000]"),
        ("eval.buckets=[10, 1000000]", "must be in [1, 100000]"),
    ],
)
def test_a_number_above_its_ceiling_is_refused(
    item: str, needle: str, tmp_path: Path, capsys
) -> None:
    """Absurd values get the one-line error of values below the floor, before
    anything is built (the memory check itself would overflow otherwise)."""
    argv = ["train", "--config", str(good(tmp_path)), "--set", item]
    assert_refused(argv, needle, tmp_path, capsys)
    assert not (tmp_path / "runs").exists()


def test_a_failed_start_leaves_no_run_folder(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """An allocation that fails in the first steps (before any checkpoint) is
    one line, and the next attempt does not find a half-made run."""

    def no_memory(self) -> None:
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't "
            "allocate memory: you tried to allocate 40000000000000 bytes."
        )

    monkeypatch.setattr(loop_module.Loop, "run", no_memory)
    argv = [
        "train",
        "--config",
        str(good(tmp_path)),
        "--set",
        "tokenizer.vocab_size=30",
    ]
    assert_refused(argv, "error: out of memory (", tmp_path, capsys)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
