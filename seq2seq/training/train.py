"""Setting training up, once: :func:`build_loop` (train, resume, the
benchmarks, time_to_bleu and the profiler all start there), and the
``seq2seq train`` entry points :func:`train` and :func:`resume`.

``train(cfg)`` reads the corpus, builds the vocabularies and the model, makes
the run folder and runs the loop (loop.py); ``resume(run_dir)`` continues a
run from its ``last.pt``.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from seq2seq import families, run
from seq2seq.config import Config, save_config
from seq2seq.data.tokenizer import Tokenizer
from seq2seq.data.workspace import Workspace, load_workspace, run_tokenizer
from seq2seq.errors import SettingError, UserError, literal
from seq2seq.files import deleting, exclusive
from seq2seq.model.interface import Model
from seq2seq.model.model import build_model
from seq2seq.results import TrainingState
from seq2seq.training.checkpoint import check_matches, load_checkpoint
from seq2seq.training.device import check_fits, pick_device
from seq2seq.training.distributed import Ranks, process_group
from seq2seq.training.loop import Callback, Loop
from seq2seq.typed_yaml import to_dict


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def prepare_run_dir(cfg: Config, overwrite: bool) -> Path:
    """A fresh run directory; an existing one is refused unless ``overwrite``,
    which deletes only a run folder inside ``runs_dir`` (:func:`deletable`)."""
    run_dir = cfg.run_dir
    if run_dir.exists() and not run_dir.is_dir():
        raise UserError(f"{run_dir} is a file, not a run folder; choose another name")
    if run_dir.exists() and any(run_dir.iterdir()):
        if not overwrite:
            here = literal(run_dir)
            raise SettingError(
                f"{here} already exists; pass {{resume}} {here} to continue it, "
                "{overwrite} to replace it, or {set} name=<new name>"
            )
        if why := deletable(run_dir, Path(cfg.runs_dir)):
            raise SettingError(
                f"{{overwrite}} {literal(run_dir)}: refused, nothing deleted: "
                + literal(why)
            )
        with deleting(run_dir):  # train() holds it; no evaluation reads it
            shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def deletable(run_dir: Path, runs_dir: Path) -> str:
    """Why ``--overwrite`` may not delete ``run_dir`` ('' when it may): it must
    lie strictly inside ``runs_dir`` (symbolic links followed) and look like a
    run: its config.yaml, and no folder in it but the vocabularies' spm/."""
    here, root = run_dir.resolve(), runs_dir.resolve()
    if here == root or root not in here.parents:
        return f"it is not inside runs_dir ({runs_dir})"
    return run.not_a_run(run_dir)


def build_loop(
    cfg: Config,
    ranks: Ranks,
    run_dir: Path | None = None,
    *,
    overwrite: bool = False,
    resume_from: dict[str, Any] | None = None,
    tokenizer: Tokenizer | None = None,
    progress: str = "auto",
    callbacks: Sequence[Callback] = (),
) -> Loop:
    """Training set up once: seeds; corpus and vocabularies (rank 0 builds
    them first); a memory check; the model on this rank's device; the run
    folder with the resolved config and the vocabularies (rank 0); the loop.

    ``run_dir`` None: ``cfg.run_dir``, made fresh (an existing run is refused
    unless ``overwrite``: :func:`prepare_run_dir`). A folder given (a
    benchmark's scratch folder, or the run ``resume_from`` continues with its
    ``tokenizer``) is used as it is. A failed start removes a folder it made."""
    if resume_from is None:
        seed_everything(cfg.train.seed)
        ws = rank_workspace(cfg, ranks)  # may raise UserError
    else:  # the RNG states come from the checkpoint
        ws = load_workspace(cfg, tokenizer)
    check_memory(cfg, ws, ranks.device)
    model = rank_model(cfg, ws, ranks)
    made = False
    try:
        if ranks.main:
            if run_dir is None:
                run_dir, made = prepare_run_dir(cfg, overwrite), True
            run_dir.mkdir(parents=True, exist_ok=True)
            save_config(cfg, run.config_file(run_dir))  # a resumed run's new budget
            if resume_from is None:
                ws.tokenizer_to(run_dir)
        ranks.wait()  # the others must not look at a half-made run directory
        _announce(cfg, ws, model, ranks)
        return Loop(
            cfg,
            ws,
            model,
            ranks,
            run_dir or cfg.run_dir,
            resume_from,
            progress,
            callbacks,
        )
    except Exception:
        if made:
            shutil.rmtree(cfg.run_dir, ignore_errors=True)
        raise


def train(
    cfg: Config,
    device_name: str = "auto",
    overwrite: bool = False,
    progress: str = "auto",
) -> Path:
    """Train a model from ``cfg``; returns the run directory. ``progress``:
    one of :data:`seq2seq.training.progress.STYLES`."""
    with (
        process_group(pick_device(device_name)) as ranks,
        exclusive(cfg.run_dir, "seq2seq train", take=ranks.main),
    ):  # held before the folder is made (or an old one deleted: --overwrite)
        loop = build_loop(cfg, ranks, overwrite=overwrite, progress=progress)
        _train(loop, ranks)
    return loop.run_dir


def _train(loop: Loop, ranks: Ranks) -> None:
    """Run the loop; a failed start (no last.pt yet) leaves no run folder."""
    try:
        loop.run()
    except Exception:
        last = run.checkpoint_file(loop.run_dir, "last")
        if ranks.main and not last.exists():
            shutil.rmtree(loop.run_dir, ignore_errors=True)
        raise


def check_memory(cfg: Config, ws: Workspace, device: torch.device) -> None:
    """Refuse a model the device cannot train before its weights exist: its
    parameters counted on the meta device (no memory, no random draws), times
    four for fp32 weights, gradients and Adam's two moments (a lower bound:
    activations come on top)."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        vocab = (ws.tokenizer.src_vocab_size, ws.tokenizer.tgt_vocab_size)
        params = build_model(cfg.model, *vocab).num_parameters()
    check_fits(
        16 * params,
        device,
        f"training {params:,} parameters (weights, gradients, Adam's state)",
        "make the model section's widths or layers smaller",
    )


def resume(
    run_dir: Path,
    overrides: list[str] | None = None,
    device_name: str = "auto",
    progress: str = "auto",
) -> Path:
    """Continue ``run_dir`` from its ``last.pt``; ``overrides`` may only raise
    the budget (see :data:`seq2seq.config.RESUMABLE`)."""
    from seq2seq.config import load_resume_config

    cfg = load_resume_config(run_dir, overrides or [])
    path = run.checkpoint_file(run_dir, "last")
    if not path.is_file():
        raise SettingError(
            f"{literal(run_dir)}: nothing to resume (no last.pt: it stopped before "
            "its first checkpoint); start it again with {config} ... {overwrite}"
        )
    payload = load_checkpoint(path)
    tokenizer = run_tokenizer(run_dir)
    fingerprint = tokenizer.fingerprint()
    for section in ("model", "tokenizer", "data"):
        check_matches(payload, cfg, fingerprint, path, section)
    if "optimizer" not in payload:
        raise UserError(f"{path}: holds no training state; it cannot be resumed")
    state = TrainingState.from_dict(payload["state"])
    if state.finished and payload["config"]["train"] == to_dict(cfg)["train"]:
        raise SettingError(
            f"{literal(run_dir)} finished at step {state.step}; to train on, "
            "raise the budget, e.g. {set} train.max_steps=N (or max_epochs)"
        )
    with (
        process_group(pick_device(device_name)) as ranks,
        exclusive(run_dir, "seq2seq train --resume", take=ranks.main),
    ):
        build_loop(
            cfg,
            ranks,
            Path(run_dir),
            resume_from=payload,
            tokenizer=tokenizer,
            progress=progress,
        ).run()
    return run_dir


def rank_workspace(cfg: Config, ranks: Ranks) -> Workspace:
    """The corpus and ids; rank 0 builds (and caches) the vocabularies first."""
    if not ranks.main:
        ranks.wait()
    ws = load_workspace(cfg)
    if ranks.main:
        ranks.wait()
    return ws


def rank_model(cfg: Config, ws: Workspace, ranks: Ranks) -> Model:
    """On this rank's device: the same initial weights on every rank, then a
    seed of its own for its dropout draws."""
    vocab = (ws.tokenizer.src_vocab_size, ws.tokenizer.tgt_vocab_size)
    model = build_model(cfg.model, *vocab, cfg.train.recurrence)
    model.to(ranks.device)
    if ranks.world > 1:
        torch.manual_seed(cfg.train.seed + ranks.rank)
    return model


def _announce(cfg: Config, ws: Workspace, model: Model, ranks: Ranks) -> None:
    if ranks.main:
        print(
            f"{cfg.name}: {family_of(model)}mode={model.mode} params="
            f"{model.num_parameters():,} train={len(ws.train.split):,} pairs "
            f"device={ranks.device}"
            + (f" x {ranks.world}" if ranks.world > 1 else "")
            + (f" {path}" if (path := model.training_path()) else "")
        )


def family_of(model: Model) -> str:
    """``family=NAME `` on the start-up line, for a family other than the
    default (whose lines read as they did before there were families)."""
    return "" if model.family == families.DEFAULT else f"family={model.family} "
