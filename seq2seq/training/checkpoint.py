"""Checkpoints: tensors and plain data only, written atomically; and
:func:`open_run`, which opens a trained run (config, vocabularies, model).

A checkpoint is a dict of tensors, numbers, strings, lists and dicts, so it
loads with ``torch.load(weights_only=True)`` and a file holding pickled
objects is refused. ``last.pt`` also carries everything ``--resume`` needs to
continue bit for bit: optimizer, schedule, counters and every RNG state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from seq2seq import run
from seq2seq.config import Config, DataConfig, SplitFiles, load_config
from seq2seq.data.tokenizer import Tokenizer
from seq2seq.data.workspace import run_tokenizer
from seq2seq.errors import SettingError, UserError, first_line, literal
from seq2seq.files import save_torch
from seq2seq.model.interface import Model
from seq2seq.model.model import build_model
from seq2seq.results import TrainingState
from seq2seq.typed_yaml import build, to_dict


def atomic_save(payload: dict[str, Any], path: Path) -> None:
    """Serialise, then write to a temporary file in the same folder, fsync and
    rename over ``path`` (seq2seq.files): a crash or a full disk mid-save
    leaves the previous checkpoint intact, and the error names the file."""
    save_torch(payload, path)


def rng_state() -> dict[str, Any]:
    """Every random generator training touches, as plain lists and numbers
    (they also travel between processes, see distributed.py)."""
    version, words, gauss = random.getstate()
    numpy_state = np.random.get_state(legacy=True)
    assert isinstance(numpy_state, tuple)  # legacy: a tuple, not a dict
    name, keys, pos, has_gauss, cached = numpy_state
    state = {
        "python": [version, list(words), gauss],
        "numpy": [name, keys.tolist(), pos, has_gauss, cached],
        "torch": torch.get_rng_state().tolist(),
    }
    if torch.cuda.is_available():
        state["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    version, words, gauss = state["python"]
    random.setstate((version, tuple(words), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        cuda = [torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]]
        torch.cuda.set_rng_state_all(cuda)


def load_checkpoint(path: Path, mmap: bool = False) -> dict[str, Any]:
    """Load with ``weights_only=True``: pickled objects are refused. With
    ``mmap`` the tensors stay on disk until read (for a look at the state)."""
    if not path.is_file():
        raise UserError(f"{path}: no checkpoint here; train the run first")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except Exception as err:  # any failure here means "not a checkpoint"
        raise UserError(
            f"{path}: not a loadable seq2seq checkpoint ({first_line(err)}); pass "
            "a best.pt or last.pt written by seq2seq train"
        ) from None
    if not isinstance(payload, dict) or "model" not in payload:
        raise UserError(f"{path}: not a seq2seq checkpoint (no model weights)")
    return payload


def saved_step(path: Path) -> int | None:
    """The training step a checkpoint was saved at, read without loading its
    tensors into memory (mmap); None when the file is missing or unreadable."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        return TrainingState.from_dict(payload["state"]).step
    except Exception:  # missing, damaged or not ours: no step to compare
        return None


def config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Dotted keys whose values differ between two config dicts."""
    out = []
    for key in sorted(set(saved) | set(current)):
        a, b = saved.get(key), current.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{sub}" for sub in config_differences(a, b)]
        elif a != b:
            out.append(key)
    return out


def check_matches(
    payload: dict[str, Any], cfg: Config, fingerprint: str, path: Path, what: str
) -> None:
    """The checkpoint was made with this config's ``what`` section and these
    vocabularies; otherwise name the first mismatch."""
    if payload.get("tokenizer") != fingerprint:
        raise UserError(
            f"{path}: trained with other sentencepiece models than the run's spm/ "
            "folder (fingerprints differ); restore the run's spm/ folder or retrain"
        )
    recorded = payload.get("config", {}).get(what)
    section = getattr(cfg, what)
    if not isinstance(recorded, dict):
        raise UserError(f"{path}: records no '{what}' config; retrain the run")
    # Read through the schema: keys added since the checkpoint was written
    # take their defaults, which reproduce what the older code did.
    saved = to_dict(build(type(section), recorded, what))
    current = to_dict(section)
    diff = config_differences(saved, current)
    if diff:
        key = diff[0]
        old = lookup(saved, key)
        new = lookup(current, key)
        raise UserError(
            f"{path}: trained with {what}.{key}={old!r} but the config says "
            f"{new!r}; restore config.yaml or retrain"
            + (f" ({len(diff) - 1} more keys differ)" if len(diff) > 1 else "")
        )


def lookup(tree: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted key of a nested dict (None where it is missing)."""
    node: Any = tree
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


# ------------------------------------------------------------ opening a run


@dataclass(frozen=True)
class OpenedRun:
    """A trained run, opened once (:func:`open_run`): its config, vocabularies
    and model with the checkpoint's weights, and where its files are (the
    names are run.py's). Lab commands take this, not a folder to re-read."""

    path: Path  # the run folder
    cfg: Config
    tok: Tokenizer
    model: Model
    checkpoint: str  # best, last, or the path of a .pt file
    step: int | None  # the training step the checkpoint was saved at

    @property
    def name(self) -> str:
        return self.path.name

    def evaluation_file(self, name: str) -> Path:
        return run.evaluation_file(self.path, name)

    def hypotheses_file(self, name: str) -> Path:
        return run.hypotheses_file(self.path, name)

    def probe_file(self, split: str, suffix: str = ".json") -> Path:
        return run.probe_file(self.path, split, suffix)


def load_run_config(run_dir: Path) -> Config:
    """A run's saved config, its corpus found. Relative corpus paths are
    relative to the folder training ran in: read from the working folder when
    the files are there (as ``train`` read them), else from the nearest folder
    above the run folder that has them, so that a run opens from a notebook's
    folder or from inside ``runs/``. Left as written when neither has them
    (the error then names the path as the config spells it)."""
    cfg = load_config(run.config_file(run_dir))
    sample = Path(cfg.data.val.src)  # one corpus file, to look for
    if sample.is_absolute() or sample.exists():
        return cfg
    above = [*Path(run_dir).absolute().parents, *Path(run_dir).resolve().parents]
    for folder in dict.fromkeys(above):  # as given first (runs/ may be a link)
        if (folder / sample).exists():
            return replace(cfg, data=corpus_under(cfg.data, folder))
    return cfg


def corpus_under(data: DataConfig, folder: Path) -> DataConfig:
    """``data`` with every relative corpus path read from ``folder``."""

    def moved(files: SplitFiles) -> SplitFiles:  # an absolute path stays as it is
        align = None if files.align is None else str(folder / files.align)
        return SplitFiles(str(folder / files.src), str(folder / files.tgt), align)

    test = None if data.test is None else moved(data.test)
    return replace(data, train=moved(data.train), val=moved(data.val), test=test)


def open_run(
    run_dir: Path, checkpoint: str = "best", device: torch.device | None = None
) -> OpenedRun:
    """Open a run folder: check it, read its config and vocabularies, build
    the model and load ``checkpoint``'s weights (on ``device``, CPU by
    default), in eval mode. Each problem is one line naming the file."""
    run_dir = Path(run_dir)
    run.check_run(run_dir)
    cfg = load_run_config(run_dir)
    tokenizer = run_tokenizer(run_dir)
    path = checkpoint_path(run_dir, checkpoint)
    if not path.is_file() and checkpoint in ("best", "last"):
        last = run.checkpoint_file(run_dir, "last").is_file()
        hint = " or pass {checkpoint} last" if last else ""
        raise SettingError(
            f"{literal(path)}: missing, the run has not validated yet; finish it "
            f"with seq2seq train --resume {literal(run_dir)}{hint}"
        )
    if not path.is_file():
        raise SettingError(
            f"{{checkpoint}} {literal(checkpoint)}: no such file; pass best, last "
            "or the path of a .pt file written by seq2seq train"
        )
    payload = load_checkpoint(path)
    check_matches(payload, cfg, tokenizer.fingerprint(), path, "model")
    vocab = (tokenizer.src_vocab_size, tokenizer.tgt_vocab_size)
    model = build_model(cfg.model, *vocab, cfg.train.recurrence)
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as err:
        raise UserError(
            f"{path}: weights do not fit {run.config_file(run_dir)} "
            f"({first_problem(err)})"
        ) from None
    model.to(device or torch.device("cpu")).eval()
    state = TrainingState.from_dict(payload["state"]) if "state" in payload else None
    step = None if state is None else state.step
    return OpenedRun(run_dir, cfg, tokenizer, model, checkpoint, step)


def first_problem(err: Exception, limit: int = 160) -> str:
    """One line out of torch's multi-line load_state_dict error: its first
    problem, shortened, and how many more there are."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    details = lines[1:] or lines or [type(err).__name__]
    first = details[0] if len(details[0]) <= limit else details[0][:limit] + "…"
    return first + (f" (+{len(details) - 1} more)" if len(details) > 1 else "")


def checkpoint_path(run_dir: Path, checkpoint: str) -> Path:
    """``best``/``last``: that file in the run folder; anything else: a path."""
    if checkpoint in run.CHECKPOINTS:
        return run.checkpoint_file(run_dir, checkpoint)
    return Path(checkpoint)
