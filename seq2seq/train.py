"""Training: teacher forcing, Adam, clipping, a schedule, validation, checkpoints.

``train(cfg)`` reads the corpus, builds the vocabularies and the model, and
runs the loop. Every ``val_every`` steps it computes validation loss and
greedy BLEU, draws the probe heatmaps, saves ``last.pt`` (and ``best.pt``
when BLEU improved), and stops early after ``patience`` validations without
improvement.
"""

from __future__ import annotations

import math
import random
import shutil
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from seq2seq.board import Board
from seq2seq.checkpoint import save_checkpoint
from seq2seq.config import Config, save_config
from seq2seq.data import Batch, bucket_batches, collate
from seq2seq.device import autocast, pick_device
from seq2seq.errors import UserError
from seq2seq.model import Seq2Seq, build_model, loss_sum
from seq2seq.schedule import LRSchedule
from seq2seq.validate import Validator
from seq2seq.workspace import Workspace, load_workspace


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def prepare_run_dir(cfg: Config, overwrite: bool) -> Path:
    run_dir = cfg.run_dir
    if (run_dir / "last.pt").exists() and not overwrite:
        raise UserError(
            f"{run_dir} already holds a trained run; pass --overwrite to replace it "
            "or --set name=<new name>"
        )
    if overwrite and run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def train(cfg: Config, device_name: str = "auto", overwrite: bool = False) -> Path:
    """Train a model from ``cfg``; returns the run directory."""
    device = pick_device(device_name)
    seed_everything(cfg.train.seed)
    ws = load_workspace(cfg)  # corpus, vocabularies, ids: may raise UserError
    run_dir = prepare_run_dir(cfg, overwrite)
    save_config(cfg, run_dir / "config.yaml")
    ws.tokenizer_to(run_dir)
    model = build_model(
        cfg.model, ws.tokenizer.src_vocab_size, ws.tokenizer.tgt_vocab_size
    )
    model.to(device)
    print(
        f"{cfg.name}: mode={cfg.model.attention} params={model.num_parameters():,} "
        f"train={len(ws.train.split):,} pairs device={device}"
    )
    loop = Loop(cfg, ws, model, device, run_dir)
    try:
        loop.run()
    finally:
        loop.board.close()
    return run_dir


class Loop:
    """The training loop's state: model, optimizer, schedule, counters."""

    def __init__(
        self,
        cfg: Config,
        ws: Workspace,
        model: Seq2Seq,
        device: torch.device,
        run_dir: Path,
    ) -> None:
        self.cfg, self.ws, self.model, self.device = cfg, ws, model, device
        self.run_dir = run_dir
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.train.lr)
        self.schedule = LRSchedule(cfg.train)
        self.board = Board(run_dir)
        self.validator = Validator(cfg, ws, self.board, device)
        self.step, self.epoch = 0, 0
        self.best_bleu, self.bad_validations = -1.0, 0
        self.best: dict[str, float] = {}
        self.start = time.monotonic()

    def out_of_budget(self) -> bool:
        t = self.cfg.train
        if t.max_steps and self.step >= t.max_steps:
            return True
        minutes = (time.monotonic() - self.start) / 60
        return bool(t.max_minutes and minutes >= t.max_minutes)

    def run(self) -> None:
        t = self.cfg.train
        stop = False
        while not stop and self.epoch < t.max_epochs and not self.out_of_budget():
            self.epoch += 1
            stop = self.run_epoch()
        if self.step > 0 and self.validator.last_step != self.step:
            self.validate()
        self.validator.finish(self.model, self.best, self.step)

    def run_epoch(self) -> bool:
        """One pass over the training data; True when training must stop."""
        t, train = self.cfg.train, self.ws.train
        batches = bucket_batches(
            train.lengths(), t.batch_tokens, t.batch_sentences, seed=t.seed + self.epoch
        )
        tokens, tick = 0, time.monotonic()
        with tqdm(
            batches, desc=f"epoch {self.epoch}", unit="batch", leave=False
        ) as bar:
            for index in bar:
                batch = collate(train.src_ids, train.tgt_ids, index).to(self.device)
                loss, norm = self.train_step(batch)
                tokens += batch.n_tgt_tokens
                if self.step % t.log_every == 0:
                    rate = tokens / max(time.monotonic() - tick, 1e-9)
                    bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:,.0f}")
                    self.log_train(loss, norm, rate)
                    tokens, tick = 0, time.monotonic()
                if t.val_every and self.step % t.val_every == 0:
                    if self.validate():
                        return True
                    tokens, tick = 0, time.monotonic()  # tokens/s excludes validation
                if self.out_of_budget():
                    return True
        return not t.val_every and self.validate()

    def log_train(self, loss: float, norm: float, rate: float) -> None:
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

    def train_step(self, batch: Batch) -> tuple[float, float]:
        self.model.train()
        self.step += 1
        for group in self.opt.param_groups:
            group["lr"] = self.schedule.lr(self.step)
        with autocast(self.device):
            loss, _ = loss_sum(
                self.model,
                batch.src,
                batch.src_len,
                batch.tgt_in,
                batch.tgt_out,
                self.cfg.train.label_smoothing,
            )
        loss = loss / batch.n_tgt_tokens  # per-token mean
        if not torch.isfinite(loss):
            raise UserError(
                f"loss became {loss.item()} at step {self.step}; lower train.lr or "
                "raise train.clip_norm; the last checkpoint is kept"
            )
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        clip = self.cfg.train.clip_norm or math.inf
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
        self.opt.step()
        return loss.item(), float(norm)

    def validate(self) -> bool:
        """Validate, checkpoint; True when early stopping says stop."""
        result = self.validator.run(self.model, self.step)
        improved = result["bleu"] > self.best_bleu
        if improved:
            self.best_bleu, self.bad_validations = result["bleu"], 0
            self.best = result
        else:
            self.bad_validations += 1
        self.schedule.observe(improved)
        state = {
            "step": self.step,
            "epoch": self.epoch,
            "best_bleu": self.best_bleu,
            "val": result,
            "elapsed_s": time.monotonic() - self.start,
        }
        save_checkpoint(self.run_dir / "last.pt", self.model, self.cfg, self.ws, state)
        if improved:
            save_checkpoint(
                self.run_dir / "best.pt", self.model, self.cfg, self.ws, state
            )
        patience = self.cfg.train.patience
        return bool(patience and self.bad_validations >= patience)
