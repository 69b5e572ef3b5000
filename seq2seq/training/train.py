"""Training: teacher forcing, Adam, clipping, a schedule, validation, checkpoints.

``train(cfg)`` reads the corpus, builds the vocabularies and the model, and
runs the loop. Every ``val_every`` steps it computes validation loss and
greedy BLEU, draws the probe heatmaps, saves ``last.pt`` (and ``best.pt``
when ``train.stop_metric``, BLEU or loss, improved), and stops early after
``patience`` validations without improvement. ``last.pt`` is also written
every ``checkpoint_every`` steps and holds everything ``--resume`` needs to
continue exactly where it was written (optimizer, schedule, counters, position
in the epoch, RNG states).
"""

from __future__ import annotations

import math
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from seq2seq import run
from seq2seq.config import Config, save_config
from seq2seq.data.batching import Batch, bucket_batches, collate
from seq2seq.data.curriculum import Curriculum
from seq2seq.data.workspace import Workspace, load_workspace, run_tokenizer
from seq2seq.errors import UserError
from seq2seq.model.model import Seq2Seq, build_model, loss_sum
from seq2seq.training.board import Board
from seq2seq.training.checkpoint import (
    atomic_save,
    check_matches,
    load_checkpoint,
    rng_state,
    set_rng_state,
)
from seq2seq.training.device import autocast, check_fits, pick_device
from seq2seq.training.distributed import Ranks, process_group
from seq2seq.training.progress import Progress
from seq2seq.training.schedule import LRSchedule
from seq2seq.training.validate import Validator, improves
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
            raise UserError(
                f"{run_dir} already exists; pass --resume {run_dir} to continue it, "
                "--overwrite to replace it, or --set name=<new name>"
            )
        if why := deletable(run_dir, Path(cfg.runs_dir)):
            raise UserError(f"--overwrite {run_dir}: refused, nothing deleted: {why}")
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


def train(
    cfg: Config,
    device_name: str = "auto",
    overwrite: bool = False,
    progress: str = "auto",
) -> Path:
    """Train a model from ``cfg``; returns the run directory. ``progress``:
    one of :data:`seq2seq.training.progress.STYLES`."""
    run_dir, made = cfg.run_dir, False
    with process_group(pick_device(device_name)) as ranks:
        try:
            seed_everything(cfg.train.seed)
            ws = rank_workspace(cfg, ranks)  # may raise UserError
            check_memory(cfg, ws, ranks.device)
            model = rank_model(cfg, ws, ranks)
            if ranks.main:
                run_dir, made = prepare_run_dir(cfg, overwrite), True
                save_config(cfg, run.config_file(run_dir))
                ws.tokenizer_to(run_dir)
            ranks.wait()  # the others must not look at a half-made run directory
            _announce(cfg, ws, model, ranks)
            Loop(cfg, ws, model, ranks, run_dir, progress=progress).run()
        except Exception:
            if made and not run.checkpoint_file(run_dir, "last").exists():
                shutil.rmtree(run_dir, ignore_errors=True)  # a failed start: nothing
            raise
    return run_dir


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
        "lower model.encoder/decoder hidden_size, embed_dim or layers",
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
        raise UserError(
            f"{run_dir}: nothing to resume (no last.pt: it stopped before its first "
            "checkpoint); start it again with --config ... --overwrite"
        )
    payload = load_checkpoint(path)
    tokenizer = run_tokenizer(run_dir)
    fingerprint = tokenizer.fingerprint()
    for section in ("model", "tokenizer", "data"):
        check_matches(payload, cfg, fingerprint, path, section)
    if "optimizer" not in payload:
        raise UserError(f"{path}: holds no training state; it cannot be resumed")
    if (
        payload["state"].get("finished")
        and payload["config"]["train"] == to_dict(cfg)["train"]
    ):
        raise UserError(
            f"{run_dir} finished at step {payload['state']['step']}; to train on, "
            "raise the budget, e.g. --set train.max_steps=N (or max_epochs)"
        )
    with process_group(pick_device(device_name)) as ranks:
        ws = load_workspace(cfg, tokenizer)
        if ranks.main:
            save_config(cfg, run.config_file(run_dir))  # the raised budget
        model = rank_model(cfg, ws, ranks)
        _announce(cfg, ws, model, ranks)
        Loop(cfg, ws, model, ranks, run_dir, payload, progress).run()
    return run_dir


def rank_workspace(cfg: Config, ranks: Ranks) -> Workspace:
    """The corpus and ids; rank 0 builds (and caches) the vocabularies first."""
    if not ranks.main:
        ranks.wait()
    ws = load_workspace(cfg)
    if ranks.main:
        ranks.wait()
    return ws


def rank_model(cfg: Config, ws: Workspace, ranks: Ranks) -> Seq2Seq:
    """On this rank's device: the same initial weights on every rank, then a
    seed of its own for its dropout draws."""
    model = build_model(
        cfg.model, ws.tokenizer.src_vocab_size, ws.tokenizer.tgt_vocab_size
    )
    model.to(ranks.device)
    if ranks.world > 1:
        torch.manual_seed(cfg.train.seed + ranks.rank)
    return model


def _announce(cfg: Config, ws: Workspace, model: Seq2Seq, ranks: Ranks) -> None:
    if ranks.main:
        print(
            f"{cfg.name}: mode={model.mode} params="
            f"{model.num_parameters():,} train={len(ws.train.split):,} pairs "
            f"device={ranks.device}" + (f" x {ranks.world}" if ranks.world > 1 else "")
        )


class Loop:
    """The training loop's state: model, optimizer, schedule, counters."""

    def __init__(
        self,
        cfg: Config,
        ws: Workspace,
        model: Seq2Seq,
        ranks: Ranks,
        run_dir: Path,
        payload: dict[str, Any] | None = None,
        progress: str = "auto",
    ) -> None:
        self.cfg, self.ws, self.model, self.ranks = cfg, ws, model, ranks
        self.progress = Progress(cfg.name, progress if ranks.main else "off")
        self.device, self.run_dir = ranks.device, run_dir
        self.fingerprint = ws.tokenizer.fingerprint()  # hashed once, saved often
        # The module that trains: DDP averages gradients over the ranks.
        self.net = DistributedDataParallel(model) if ranks.world > 1 else model
        self.opt = torch.optim.Adam(
            model.parameters(), lr=cfg.train.lr, fused=cfg.train.fused_adam or None
        )
        self.schedule = LRSchedule(cfg.train)
        self.curriculum = Curriculum(
            [src for src, _ in ws.train.lengths()],
            cfg.train.curriculum_steps,
            cfg.train.curriculum_start,
        )
        self.step, self.epoch, self.batch_in_epoch = 0, 0, 0
        self.bad_validations = 0
        self.best: dict[str, float] = {}  # the best validation so far
        self.last_val_step, elapsed = -1, 0.0
        if payload is not None:
            elapsed = self.load_state(payload)
        self.start = time.monotonic() - elapsed
        self.board = self.validator = None
        if ranks.main:
            # Events after the checkpoint's step came from the lost part of an
            # interrupted run; TensorBoard drops them (purge_step).
            self.board = Board(run_dir, self.step + 1 if payload else None)
            self.validator = Validator(cfg, ws, self.board, self.device, run_dir)
            if payload is not None:
                self.validator.rewind(self.step, elapsed)

    def out_of_budget(self) -> bool:
        t = self.cfg.train
        if t.max_steps and self.step >= t.max_steps:
            return True
        minutes = (time.monotonic() - self.start) / 60
        return self.ranks.any(bool(t.max_minutes and minutes >= t.max_minutes))

    def run(self) -> None:
        t = self.cfg.train
        stop = False
        try:
            while not stop and not self.out_of_budget():
                if self.batch_in_epoch == 0:  # else: resume inside an epoch
                    if self.epoch >= t.max_epochs:
                        break
                    self.epoch += 1
                stop = self.run_epoch()
            if self.step > 0 and self.last_val_step != self.step:
                self.validate()
            self.save_last(finished=True)
            if self.validator is not None:
                self.validator.finish(self.model, self.best, self.step)
        finally:
            if self.board is not None:
                self.board.close()

    def epoch_batches(self) -> list[list[int]]:
        """The epoch's batches (a function of seed and epoch, so a resumed run
        rebuilds the same list); batches too small to give every rank a
        sentence are left out on every rank."""
        t = self.cfg.train
        batches = bucket_batches(
            self.ws.train.lengths(),
            t.batch_tokens,
            t.batch_sentences,
            seed=t.seed + self.epoch,
        )
        return [b for b in batches if len(b) >= self.ranks.world]

    def run_epoch(self) -> bool:
        """The rest of the epoch; True when training must stop."""
        t = self.cfg.train
        batches = self.epoch_batches()
        done = self.batch_in_epoch
        tokens, tick = 0, time.monotonic()
        bar = self.progress.epoch(batches, done, self.epoch)
        with bar:
            for index in bar:
                if not self.curriculum.admits(index, self.step + 1):
                    self.batch_in_epoch += 1  # passed over, as on resume
                    continue
                loss, norm, n_tokens = self.train_step(index)
                tokens += n_tokens
                if self.step % t.log_every == 0:
                    rate = tokens / max(time.monotonic() - tick, 1e-9)
                    self.progress.report(bar, self.step, t.max_steps, loss, rate)
                    self.log_train(loss, norm, rate)
                    tokens, tick = 0, time.monotonic()
                if t.val_every and self.step % t.val_every == 0:
                    if self.validate():
                        return True
                    tokens, tick = 0, time.monotonic()  # tokens/s excludes validation
                elif t.checkpoint_every and self.step % t.checkpoint_every == 0:
                    self.save_last()
                if self.out_of_budget():
                    return True
        self.batch_in_epoch = 0
        return not t.val_every and self.validate()

    def log_train(self, loss: float, norm: float, rate: float) -> None:
        if self.board is None:
            return
        lr = self.opt.param_groups[0]["lr"]
        self.board.scalars(
            {
                "train/loss": loss,
                "train/grad_norm": norm,
                "train/tokens_per_s": rate,
                "train/lr": lr,
            },
            self.step,
        )

    def train_step(self, index: list[int]) -> tuple[float, float, int]:
        """One update on the batch ``index`` (this rank's share of it); returns
        loss per target token, gradient norm, the batch's target tokens."""
        train = self.ws.train
        n_tokens = sum(len(train.tgt_ids[i]) + 1 for i in index)  # the whole batch
        batch: Batch = collate(
            train.src_ids, train.tgt_ids, self.ranks.shard(index)
        ).to(self.device)
        self.net.train()
        self.step += 1
        self.batch_in_epoch += 1
        for group in self.opt.param_groups:
            group["lr"] = self.schedule.lr(self.step)
        with autocast(self.device, self.cfg.train.precision):
            loss, _ = loss_sum(
                self.net,
                batch.src,
                batch.src_len,
                batch.tgt_in,
                batch.tgt_out,
                self.cfg.train.label_smoothing,
                self.cfg.train.fused_loss,
            )
        # Per-token mean over the whole batch once DDP averages over ranks.
        loss = loss / n_tokens * self.ranks.world
        loss_value = loss.item()
        self.stop_unless_finite("loss", loss_value, "or raise train.clip_norm")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        clip = self.cfg.train.clip_norm or math.inf
        norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip))
        # before the update: clipping cannot make an inf or NaN norm finite
        self.stop_unless_finite("gradient norm", norm, "or look for a broken batch")
        self.opt.step()
        return loss_value, norm, n_tokens

    def stop_unless_finite(self, what: str, value: float, advice: str) -> None:
        """Stop, on every process, when ``value`` is NaN or inf on any."""
        if self.ranks.any(not math.isfinite(value)):
            how = f"{value:g}" if not math.isfinite(value) else "NaN or inf elsewhere"
            raise UserError(
                f"{what} became {how} at step {self.step}; lower train.lr {advice}; "
                "the last checkpoint is kept"
            )

    def validate(self) -> bool:
        """Validate (rank 0), checkpoint; True when early stopping says stop."""
        improved = False
        if self.validator is not None:
            extra = {"epoch": self.epoch, "lr": self.schedule.lr(self.step)}
            result = self.validator.run(self.model, self.step, extra)
            improved = improves(result, self.best, self.cfg.train.stop_metric)
            if improved:
                self.best = result
        improved = self.ranks.any(improved)
        # Under a length curriculum the rule (halve on a stall, stop after
        # `patience` stalls) waits until every pair is open: a model that has
        # not seen the long pairs yet is not judged on them.
        if self.curriculum.competence(self.step) >= 1.0:
            self.bad_validations = 0 if improved else self.bad_validations + 1
            self.schedule.observe(improved)
        self.last_val_step = self.step
        self.save_last()
        if improved and self.ranks.main:
            atomic_save(self.payload(), run.checkpoint_file(self.run_dir, "best"))
        patience = self.cfg.train.patience
        return bool(patience and self.bad_validations >= patience)

    # --- checkpoints -----------------------------------------------------------

    def payload(self, finished: bool = False) -> dict[str, Any]:
        """What ``best.pt`` holds: weights, config, vocabularies, counters."""
        return {
            "model": self.model.state_dict(),
            "config": to_dict(self.cfg),
            "tokenizer": self.fingerprint,
            "vocab": [
                self.ws.tokenizer.src_vocab_size,
                self.ws.tokenizer.tgt_vocab_size,
            ],
            "state": {
                "step": self.step,
                "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch,
                "best": self.best,
                "bad_validations": self.bad_validations,
                "last_val_step": self.last_val_step,
                "elapsed_s": time.monotonic() - self.start,
                "world": self.ranks.world,
                "finished": finished,
            },
        }

    def save_last(self, finished: bool = False) -> None:
        """``last.pt``: :meth:`payload` plus optimizer, schedule and the RNG
        state of every rank, so that ``--resume`` continues exactly."""
        rngs = self.ranks.gather(rng_state())  # a collective: every rank calls it
        if not self.ranks.main:
            return
        payload = self.payload(finished) | {
            "optimizer": self.opt.state_dict(),
            "schedule": self.schedule.state_dict(),
            "rng": rngs,
        }
        atomic_save(payload, run.checkpoint_file(self.run_dir, "last"))

    def load_state(self, payload: dict[str, Any]) -> float:
        """Restore from a ``last.pt`` payload; returns the elapsed seconds."""
        self.model.load_state_dict(payload["model"])
        self.opt.load_state_dict(payload["optimizer"])
        self.schedule.load_state_dict(payload["schedule"])
        s = payload["state"]
        self.step, self.epoch = s["step"], s["epoch"]
        self.batch_in_epoch = s["batch_in_epoch"]
        self.best = s["best"]
        self.bad_validations, self.last_val_step = (
            s["bad_validations"],
            s["last_val_step"],
        )
        rngs = payload["rng"]
        if len(rngs) != self.ranks.world and self.ranks.main:
            print(
                f"warning: last.pt was written by {len(rngs)} processes and resumes "
                f"with {self.ranks.world}: dropout draws differ from an "
                "uninterrupted run, and the rest of this epoch may skip or repeat "
                "a batch (batches too small for every process are left out)",
                file=sys.stderr,
            )
        set_rng_state(rngs[self.ranks.rank % len(rngs)])
        if self.ranks.main:
            print(f"resuming at step {self.step} (epoch {self.epoch})")
        return float(s["elapsed_s"])
