"""What training writes: validation records and a checkpoint's counters."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Validation:
    """One validation during training (training/validate.py): a line of the
    run's ``history.jsonl``; the best one so far rides in the checkpoint's
    state (its five scores only)."""

    step: int
    loss: float  # per-token cross-entropy under teacher forcing
    ppl: float
    bleu: float  # greedy, sacreBLEU
    chrf: float
    epoch: int | None = None  # None: written without it (histories before it)
    lr: float | None = None
    elapsed_s: float | None = None  # training seconds so far
    attention: dict[str, float] = field(default_factory=dict)  # diagnostics, AER

    SCORES: ClassVar = ("step", "loss", "ppl", "bleu", "chrf")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Validation:
        return cls(
            data["step"],
            data["loss"],
            data["ppl"],
            data["bleu"],
            data["chrf"],
            data.get("epoch"),
            data.get("lr"),
            data.get("elapsed_s"),
            dict(data.get("attention", {})),
        )

    def scores(self) -> dict[str, float]:
        """The five scores, as the checkpoint keeps the best validation."""
        return {key: getattr(self, key) for key in self.SCORES}

    def to_dict(self) -> dict[str, Any]:
        """The history line: the scores, then what is known of the rest."""
        extra = {"epoch": self.epoch, "lr": self.lr, "elapsed_s": self.elapsed_s}
        known = {key: value for key, value in extra.items() if value is not None}
        return self.scores() | known | {"attention": self.attention}

    def beats(self, best: Validation | None, metric: str) -> bool:
        """Whether this beats ``best`` (None: there is none yet) by
        ``train.stop_metric``: higher BLEU, or lower loss."""
        if best is None:
            return True
        if metric == "loss":
            return self.loss < best.loss
        return self.bleu > best.bleu


@dataclass(frozen=True)
class TrainingState:
    """What a checkpoint keeps of the loop (its ``state``): where training
    was, so that ``--resume`` continues from there, and the best validation
    so far (its five scores; None before the first)."""

    step: int
    epoch: int
    batch_in_epoch: int
    best: Validation | None
    bad_validations: int  # validations without a new best, for early stopping
    last_val_step: int
    elapsed_s: float
    world: int  # processes that trained it
    finished: bool  # the budget was reached or early stopping ended it

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingState:
        best = data["best"]
        return cls(
            data["step"],
            data["epoch"],
            data["batch_in_epoch"],
            Validation.from_dict(best) if best else None,
            data["bad_validations"],
            data["last_val_step"],
            data["elapsed_s"],
            data["world"],
            data["finished"],
        )

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["best"] = self.best.scores() if self.best else {}
        return out
