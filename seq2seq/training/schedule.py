"""Learning-rate schedules: constant, cosine, halve-on-plateau or noam
(inverse square root), each after a linear warmup."""

from __future__ import annotations

import math

from seq2seq.config import TrainConfig


class LRSchedule:
    """lr(step) for the configured schedule; ``observe`` feeds validation results."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.scale = 1.0  # plateau decay so far
        self.stalled = 0  # validations without improvement

    def lr(self, step: int) -> float:
        cfg = self.cfg
        warm = min(1.0, step / cfg.warmup_steps) if cfg.warmup_steps else 1.0
        lr = cfg.lr * warm
        if cfg.schedule == "cosine" and cfg.max_steps:
            span = max(1, cfg.max_steps - cfg.warmup_steps)
            progress = min(1.0, max(0, step - cfg.warmup_steps) / span)
            lr = cfg.min_lr + (lr - cfg.min_lr) * 0.5 * (
                1 + math.cos(math.pi * progress)
            )
        elif cfg.schedule == "plateau":
            lr *= self.scale
        elif cfg.schedule == "noam" and step > cfg.warmup_steps:
            # Vaswani et al. 2017, eq. (3): d_model^-0.5 * min(step^-0.5,
            # step * warmup^-1.5), scaled to peak at cfg.lr at the warmup's end
            lr = cfg.lr * math.sqrt(cfg.warmup_steps / step)
        return max(lr, cfg.min_lr)

    def observe(self, improved: bool) -> None:
        """Count validations without improvement; decay after ``plateau_patience``."""
        if self.cfg.schedule != "plateau":
            return
        self.stalled = 0 if improved else self.stalled + 1
        if self.stalled >= self.cfg.plateau_patience:
            self.scale *= self.cfg.plateau_factor
            self.stalled = 0

    def state_dict(self) -> dict[str, float]:
        """What a checkpoint keeps of the plateau decay, to resume it."""
        return {"scale": self.scale, "stalled": self.stalled}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.scale, self.stalled = state["scale"], int(state["stalled"])
