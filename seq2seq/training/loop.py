"""The training loop: teacher forcing, Adam, clipping, a schedule,
validation, checkpoints (train.py sets it up: :func:`build_loop`).

Every ``val_every`` steps the loop validates (loss, greedy BLEU, the
watched sentences' heatmaps), saves ``last.pt`` (and ``best.pt`` when
``train.stop_metric``, BLEU or loss, improved), and stops early after
``patience`` validations without improvement. ``last.pt`` is also written
every ``checkpoint_every`` steps and holds everything ``--resume`` needs to
continue exactly where it was written (optimizer, schedule, counters,
position in the epoch, RNG states).

What a benchmark or an experiment needs from a running loop goes through a
:class:`Callback` (after each validation) and :meth:`Loop.off_the_clock`, not
through a subclass.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from seq2seq import run
from seq2seq.config import Config
from seq2seq.data.batching import Batch, bucket_batches, collate
from seq2seq.data.curriculum import Curriculum
from seq2seq.data.workspace import Workspace
from seq2seq.errors import UserError
from seq2seq.model.interface import Model
from seq2seq.model.model import loss_sum
from seq2seq.results import TrainingState, Validation
from seq2seq.training.averaging import keep_step, write_average
from seq2seq.training.board import Board
from seq2seq.training.checkpoint import atomic_save, rng_state, set_rng_state
from seq2seq.training.device import autocast
from seq2seq.training.distributed import Ranks
from seq2seq.training.progress import Progress
from seq2seq.training.schedule import LRSchedule
from seq2seq.training.validate import Validator
from seq2seq.typed_yaml import to_dict


class Callback:
    """A hook into a running loop; override what you need."""

    def after_validation(self, loop: Loop, result: Validation | None) -> bool:
        """After each validation and its checkpoints, on every process
        (``result`` is rank 0's validation, None on the others). Return True
        to stop training; time spent here counts as training time unless it
        is inside ``loop.off_the_clock()``."""
        return False


class Loop:
    """The training loop's state: model, optimizer, schedule, counters."""

    def __init__(
        self,
        cfg: Config,
        ws: Workspace,
        model: Model,
        ranks: Ranks,
        run_dir: Path,
        payload: dict[str, Any] | None = None,
        progress: str = "auto",
        callbacks: Sequence[Callback] = (),
    ) -> None:
        self.cfg, self.ws, self.model, self.ranks = cfg, ws, model, ranks
        self.callbacks = list(callbacks)
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
        self.best: Validation | None = None  # the best validation so far
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

    def minutes(self) -> float:
        """Training time so far (validation included, time off the clock not)."""
        return (time.monotonic() - self.start) / 60

    @contextmanager
    def off_the_clock(self) -> Iterator[None]:
        """Time spent inside does not count: not against train.max_minutes,
        not in the run's elapsed time (a callback's extra evaluation)."""
        tick = time.monotonic()
        try:
            yield
        finally:
            self.start += time.monotonic() - tick

    def out_of_budget(self) -> bool:
        t = self.cfg.train
        if t.max_steps and self.step >= t.max_steps:
            return True
        minutes = self.minutes()
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
            if self.cfg.train.average_last and self.ranks.main and self.step > 0:
                path, steps = write_average(self.run_dir)  # before "finished"
                print(f"wrote {path}: the mean of the weights at steps {steps}")
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

    def first_batches(self, n: int) -> list[list[int]]:
        """The next ``n`` batches, epoch after epoch, as training would see
        them (the epoch counter moves on); for driving :meth:`train_step`
        directly, as the benchmarks and the profiler do."""
        batches: list[list[int]] = []
        while len(batches) < n:
            self.epoch += 1
            batches += self.epoch_batches()
        return batches[:n]

    def run_epoch(self) -> bool:
        """The rest of the epoch; True when training must stop."""
        t = self.cfg.train
        batches = self.epoch_batches()
        done = self.batch_in_epoch
        tokens, tick = 0, time.monotonic()
        bar = self.progress.epoch(batches, done, self.epoch)
        pending: list[list[int]] = []  # the next update's batches (accumulate)
        with bar:
            for position, index in enumerate(bar, start=done):
                if self.curriculum.admits(index, self.step + 1):
                    pending.append(index)
                else:
                    self.batch_in_epoch += 1  # passed over, as on resume
                more = len(pending) < t.accumulate and position + 1 < len(batches)
                if not pending or more:
                    continue
                loss, norm, n_tokens = self.train_step(*pending)
                pending = []
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

    def train_step(
        self, index: list[int], *more: list[int]
    ) -> tuple[float, float, int]:
        """One update on the batch ``index`` (this rank's share of it) and the
        batches ``more`` (train.accumulate: their gradients add up before the
        update, as one batch of them all would give); returns loss per target
        token, gradient norm, the batches' target tokens."""
        batches = [index, *more]
        train = self.ws.train
        # every batch of the update, every rank's share
        n_tokens = sum(len(train.tgt_ids[i]) + 1 for b in batches for i in b)
        self.net.train()
        self.step += 1
        self.batch_in_epoch += len(batches)
        for group in self.opt.param_groups:
            group["lr"] = self.schedule.lr(self.step)
        self.opt.zero_grad(set_to_none=True)
        loss_value = 0.0
        for k, part in enumerate(batches):
            # Per-token mean over the whole update once DDP averages over ranks.
            loss = self.batch_loss(part) / n_tokens * self.ranks.world
            loss_value += loss.item()
            self.stop_unless_finite("loss", loss_value, "or raise train.clip_norm")
            with self.syncing(last=k == len(batches) - 1):
                loss.backward()  # type: ignore[no-untyped-call]
        clip = self.cfg.train.clip_norm or math.inf
        norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip))
        # before the update: clipping cannot make an inf or NaN norm finite
        self.stop_unless_finite("gradient norm", norm, "or look for a broken batch")
        self.opt.step()
        return loss_value, norm, n_tokens

    def batch_loss(self, index: list[int]) -> torch.Tensor:
        """The summed token loss of this rank's share of the batch ``index``."""
        train = self.ws.train
        batch: Batch = collate(
            train.src_ids, train.tgt_ids, self.ranks.shard(index)
        ).to(self.device)
        with autocast(self.device, self.cfg.train.precision):
            loss, _ = loss_sum(
                self.net,
                batch.src,
                batch.src_len,
                batch.tgt_in,
                batch.tgt_out,
                self.cfg.train.label_smoothing,
                self.cfg.train.chunked_loss,
                maps=False,  # the loss is all a step needs
            )
        return loss

    def syncing(self, last: bool) -> AbstractContextManager[Any]:
        """Where DDP averages the gradients over the ranks: after the last
        batch of an update only (no_sync before it), once per update."""
        if last or not isinstance(self.net, DistributedDataParallel):
            return nullcontext()
        return self.net.no_sync()

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
        improved, result = False, None
        if self.validator is not None:
            lr = self.schedule.lr(self.step)
            result = self.validator.run(self.model, self.step, self.epoch, lr)
            improved = result.beats(self.best, self.cfg.train.stop_metric)
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
        if self.cfg.train.average_last and self.ranks.main:
            keep_step(
                self.run_dir, self.payload(), self.step, self.cfg.train.average_last
            )
        patience = self.cfg.train.patience
        stop = bool(patience and self.bad_validations >= patience)
        for callback in self.callbacks:
            stop = callback.after_validation(self, result) or stop
        return self.ranks.any(stop) if self.callbacks else stop

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
            "state": TrainingState(
                self.step,
                self.epoch,
                self.batch_in_epoch,
                self.best,
                self.bad_validations,
                self.last_val_step,
                time.monotonic() - self.start,
                self.ranks.world,
                finished,
            ).to_dict(),
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
        s = TrainingState.from_dict(payload["state"])
        self.step, self.epoch, self.batch_in_epoch = s.step, s.epoch, s.batch_in_epoch
        self.best = s.best
        self.bad_validations, self.last_val_step = s.bad_validations, s.last_val_step
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
        return float(s.elapsed_s)
