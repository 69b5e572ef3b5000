"""Config: YAML -> validated dataclasses; errors name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from seq2seq.config import Config, load_config, save_config
from seq2seq.errors import UserError

MINIMAL = """
data:
  train: {src: a.de, tgt: a.en}
  val: {src: b.de, tgt: b.en}
"""


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_paths_alone_make_a_valid_config(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL))
    assert cfg.data.train.src == "a.de" and cfg.data.test is None
    assert cfg.model.attention == "additive" and cfg.train.lr == 1e-3


def test_overrides_are_typed_and_validated(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    cfg = load_config(path, ["train.lr=3e-4", "model.attention=none", "name=x"])
    assert cfg.train.lr == 3e-4 and cfg.model.attention == "none" and cfg.name == "x"
    assert cfg.run_dir == Path("runs/x")
    with pytest.raises(UserError, match="train.lr"):
        load_config(path, ["train.lr=-1"])
    with pytest.raises(UserError, match="KEY=VALUE"):
        load_config(path, ["train.lr"])
    with pytest.raises(UserError, match=r"--set 'eval.buckets=\[1'.*not valid YAML"):
        load_config(path, ["eval.buckets=[1"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model.atention=none", "unknown config key 'model.atention'.*model.attention"),
        ("model.attention=luong", "'model.attention'.*not one of"),
        ("model.encoder.dropout=1.0", "model.encoder.dropout"),
        ("model.encoder.hidden_size=-4", "model.encoder.hidden_size"),
        ("model.encoder.hidden_size=big", "model.encoder.hidden_size.*expected int"),
        ("train.max_epochs=true", "train.max_epochs.*expected int"),
        ("eval.buckets=[20, 10]", "eval.buckets"),
        ("tokenizer.model_type=wordpiece", "tokenizer.model_type"),
        ("data.join_train=0", "data.join_train': must be in \\[1, 64\\], got 0"),
        ("data.join_val=0", "data.join_val': must be in \\[1, 64\\], got 0"),
        ("train.plateau_patience=0", "train.plateau_patience.*in \\[1, "),
        ("train.min_lr=-1e-5", "train.min_lr': must be in \\[0, 10\\], got -1e-05"),
        ("train.min_lr=0.5", "train.min_lr': must be <= train.lr = 0.001, got 0.5"),
        ("train.schedule=cosine", "train.schedule.*train.max_steps > 0"),
        ("train.seed=-1", "train.seed': must be in \\[0, 4294967295\\], got -1"),
        ("train.seed=4294967296", "train.seed': must be in"),
        ("train.lr=.nan", "train.lr': must be a finite number, got nan"),
        ("train.lr=.inf", "train.lr': must be a finite number"),
        ("train.lr=0", "train.lr': must be in \\(0, 10\\], got 0"),
        ("train.label_smoothing=1", "train.label_smoothing': must be in \\[0, 1\\)"),
        ("eval.buckets=[0, 10]", "eval.buckets': must be in \\[1, 100000\\], got 0"),
        ("tokenizer.character_coverage=2", "character_coverage': must be in"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, override: str, message: str) -> None:
    path = write(tmp_path, MINIMAL)
    with pytest.raises(UserError, match=message) as info:
        load_config(path, [override])
    assert str(path) in str(info.value)


def test_missing_paths_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="data.val' is required"):
        load_config(write(tmp_path, "data:\n  train: {src: a, tgt: b}\n"))
    with pytest.raises(UserError, match=r"c.yaml:\d+: not valid YAML"):
        load_config(write(tmp_path, "data: [unclosed\n"))
    with pytest.raises(UserError, match="not found"):
        load_config(tmp_path / "nope.yaml")


def test_base_files_merge_and_roundtrip(tmp_path: Path) -> None:
    write(tmp_path, MINIMAL + "model:\n  encoder: {hidden_size: 64}\n", "base.yaml")
    child = write(
        tmp_path,
        "base: base.yaml\nmodel:\n  attention: dot\n  decoder: {hidden_size: 128}\n",
    )
    cfg = load_config(child)
    assert cfg.model.encoder.hidden_size == 64 and cfg.model.attention == "dot"
    save_config(cfg, tmp_path / "resolved.yaml")
    assert load_config(tmp_path / "resolved.yaml") == cfg


def test_every_shipped_config_loads() -> None:
    root = Path(__file__).resolve().parent.parent / "configs"
    # experiment files are not model configs: tests/test_experiment.py loads them
    files = sorted(p for p in root.rglob("*.yaml") if p.parent.name != "experiments")
    assert files
    for path in files:
        load_config(path)


def numeric_fields(cls: type, prefix: str = ""):
    """(dotted key, field) for every int or float key under ``cls``, the
    model section's of every registered family."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if sections := f.metadata.get("sections"):
            for member in sections().values():
                yield from numeric_fields(member, f"{prefix}{f.name}.")
            continue
        inner = [a for a in typing.get_args(tp) if dataclasses.is_dataclass(a)]
        nested = tp if dataclasses.is_dataclass(tp) else (inner[0] if inner else None)
        if nested is not None:
            yield from numeric_fields(nested, f"{prefix}{f.name}.")
        elif tp in (int, float) or typing.get_args(tp)[:1] == (int,):
            yield prefix + f.name, f


def test_every_number_has_a_range_and_its_default_is_in_it() -> None:
    from seq2seq.config import Config

    keys = dict(numeric_fields(Config))
    assert "train.seed" in keys and "eval.buckets" in keys and len(keys) >= 35
    for name, f in keys.items():
        rng = f.metadata.get("range")
        assert rng is not None, f"{name}: no range declared"
        defaults = f.default if isinstance(f.default, tuple) else (f.default,)
        assert all(d in rng for d in defaults), (name, f.default, str(rng))


def test_every_number_has_a_floor_and_a_ceiling() -> None:
    """A value no machine can hold is refused at load like one below the
    floor; the CLI's numeric options too."""
    from seq2seq.cli import RANGES

    fields = [(k, f.metadata.get("range")) for k, f in numeric_fields(Config)]
    assert len(fields) >= 35, fields
    for key, rng in [*fields, *RANGES.items()]:
        assert rng is not None and rng.lo is not None and rng.hi is not None, key
        assert rng.hi < 2**53, key  # exact as a float, far from any overflow
