"""The run folder: the one owner of where a run keeps its files.

``seq2seq train`` makes one folder per run, under ``runs_dir``::

    config.yaml          the resolved config (what --resume and evaluate read)
    spm/                 the run's own vocabularies (src.model, tgt.model)
    last.pt, best.pt     checkpoints: the latest, and the best by train.stop_metric
    step_<N>.pt          the weights at the last train.average_last validations
    averaged.pt          their mean (seq2seq average, or the end of training)
    history.jsonl        one line per validation
    events.out.tfevents.*  TensorBoard
    eval_<name>.json     evaluate's scores of split <name> (hyp_<name>.txt beside)
    probe_<split>.json   seq2seq probe's results (probe_<split>.png beside)

Every other module asks here for these paths; none spells a run file's name
(tests/test_run.py checks that).
"""

from __future__ import annotations

from pathlib import Path

from seq2seq.errors import UserError

CONFIG = "config.yaml"
VOCAB = "spm"
HISTORY = "history.jsonl"
CHECKPOINTS = ("best", "last", "averaged")  # best.pt, last.pt, averaged.pt
# The splits evaluate scores by name (eval_<split>.json); the joined ones join
# k = 1..4 consecutive pairs into one (data/joined.py).
SPLITS = ("val", "test", "val_joined", "test_joined")


def config_file(run_dir: Path) -> Path:
    return Path(run_dir) / CONFIG


def vocab_dir(run_dir: Path) -> Path:
    return Path(run_dir) / VOCAB


def vocab_files(run_dir: Path) -> tuple[Path, Path]:
    """The source and target sentencepiece models inside :func:`vocab_dir`."""
    folder = vocab_dir(run_dir)
    return folder / "src.model", folder / "tgt.model"


def history_file(run_dir: Path) -> Path:
    return Path(run_dir) / HISTORY


def checkpoint_file(run_dir: Path, name: str) -> Path:
    """``best``, ``last`` or ``averaged``: that checkpoint of the run."""
    assert name in CHECKPOINTS, name
    return Path(run_dir) / f"{name}.pt"


def step_file(run_dir: Path, step: int) -> Path:
    """``step_<N>.pt``: the weights at step N's validation (train.average_last)."""
    return Path(run_dir) / f"step_{step}.pt"


def step_files(run_dir: Path) -> dict[int, Path]:
    """Every ``step_<N>.pt`` of the run, by step, in step order."""
    found = {}
    for path in Path(run_dir).glob("step_*.pt"):
        number = path.stem.removeprefix("step_")
        if number.isdigit():
            found[int(number)] = path
    return dict(sorted(found.items()))


def evaluation_file(run_dir: Path, name: str) -> Path:
    """``eval_<name>.json``; ``name`` is a split with its decoding's tag
    (``test``, ``test_beam5``, ``test_ablate-uniform``)."""
    return Path(run_dir) / f"eval_{name}.json"


def hypotheses_file(run_dir: Path, name: str) -> Path:
    """``hyp_<name>.txt``, one hypothesis a line, beside its evaluation."""
    return Path(run_dir) / f"hyp_{name}.txt"


def probe_file(run_dir: Path, split: str, suffix: str = ".json") -> Path:
    """``probe_<split>.json``, or its plot with ``suffix=".png"``."""
    return Path(run_dir) / f"probe_{split}{suffix}"


def check_run(run_dir: Path) -> None:
    """A clear error for a folder that is not a run."""
    if not config_file(run_dir).is_file():
        raise UserError(f"{run_dir}: not a run directory (no {CONFIG})")


def not_a_run(run_dir: Path) -> str:
    """Why ``run_dir`` does not look like a run folder ('' when it does): a
    run has its config and no folder but its vocabularies'."""
    if not config_file(run_dir).is_file():
        return f"it holds no {CONFIG}, so it is not a run folder"
    folders = sorted(p.name for p in Path(run_dir).iterdir() if p.is_dir())
    if others := [name for name in folders if name != VOCAB]:
        return f"it holds folders a run does not write ({', '.join(others)})"
    return ""


def enclosing_run(path: Path) -> Path | None:
    """The run folder ``path`` is, or lies inside (links followed): the
    nearest folder at or above it holding a run's config and vocabularies."""
    here = Path(path).resolve()
    for folder in (here, *here.parents):
        if config_file(folder).is_file() and vocab_dir(folder).is_dir():
            return folder
    return None
