"""``seq2seq compare``'s rows: a run's evaluation, training and paired bootstrap."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq2seq.errors import UserError
from seq2seq.families import DEFAULT, run_label
from seq2seq.results.evaluation import Bucket, Evaluation


@dataclass(frozen=True)
class TrainingSummary:
    """What compare reads of a run's history.jsonl: the best validation (by
    ``train.stop_metric``, as training chose its best.pt), the epochs trained
    and the minutes; None for what the history does not hold."""

    val_bleu: float | None = None
    val_ppl: float | None = None
    best_epoch: int | None = None
    epochs: int | None = None
    train_minutes: float | None = None


@dataclass(frozen=True)
class Paired:
    """sacreBLEU's paired bootstrap of a run's BLEU against the baseline's
    (Koehn 2004): the run's score, the bootstrap mean, its 95% CI, p."""

    score: float
    mean: float
    ci: float
    p_value: float


@dataclass(frozen=True)
class PairedBucket:
    """The paired bootstrap within one source-length bucket (None: empty)."""

    lo: int
    hi: int
    n: int
    test: Paired | None

    def to_dict(self) -> dict[str, Any]:
        test = dataclasses.asdict(self.test) if self.test else {}
        return {"lo": self.lo, "hi": self.hi, "n": self.n} | test


@dataclass(frozen=True)
class VsBaseline:
    """A run against the first run compared, overall and per bucket."""

    baseline: str
    test: Paired
    buckets: tuple[PairedBucket, ...]

    def to_dict(self) -> dict[str, Any]:
        buckets = [b.to_dict() for b in self.buckets]
        return (
            {"baseline": self.baseline}
            | dataclasses.asdict(self.test)
            | {"buckets": buckets}
        )


# compare.json's keys of a run's evaluation, in their order
COMPARED = ("mode", "family", "params", "bleu", "chrf", "buckets", "aer", "bleu_lc")


@dataclass(frozen=True)
class CompareRow:
    """One run in ``seq2seq compare`` (lab/compare.py): its evaluation, the
    ablations' BLEU drops, words written per reference word, its training
    summary, and, once the runs are paired, the bootstrap against the first
    (``paired``: compared on the same sentences; the first run's
    ``vs_baseline`` stays None)."""

    run: str  # the folder as named on the command line
    evaluation: Evaluation
    ablation_drops: dict[str, float]
    length_ratio: tuple[float, ...]  # overall, then per k sentences joined
    training: TrainingSummary
    paired: bool = False
    vs_baseline: VsBaseline | None = None
    mixed: bool = False  # compared with runs of other model families

    @property
    def mode(self) -> str:
        return self.evaluation.mode

    @property
    def label(self) -> str:
        """What the tables and the legend call it (evaluation.run_label)."""
        return self.evaluation.label(self.mixed)

    def to_dict(self) -> dict[str, Any]:
        """The row of compare.json."""
        e = self.evaluation.to_dict()
        out = {"run": self.run} | {key: e[key] for key in COMPARED}
        out |= {"by_sentences": e["by_sentences"], "decoding": e["decoding"]}
        out |= {"ablation_drops": self.ablation_drops}
        out |= {"length_ratio": list(self.length_ratio)}
        out |= dataclasses.asdict(self.training)
        if self.paired:
            vs = self.vs_baseline
            out["vs_baseline"] = vs.to_dict() if vs is not None else None
        return out


@dataclass(frozen=True)
class ComparedRun:
    """What a committed ``compare.json`` keeps of a run's scores, read back
    (notebook 3 draws the Bible experiment's curves from it, untrained)."""

    run: str
    mode: str
    family: str
    bleu: float
    chrf: float
    buckets: tuple[Bucket, ...]

    @property
    def label(self) -> str:
        return run_label(self.family, self.mode)

    @classmethod
    def read_all(cls, path: Path) -> list[ComparedRun]:
        """Every row of ``compare.json``; a file that is not one is one line."""
        try:
            rows = json.loads(Path(path).read_text(encoding="utf-8"))
            return [
                cls(
                    r["run"],
                    r["mode"],
                    r.get("family", DEFAULT),
                    r["bleu"],
                    r["chrf"],
                    tuple(Bucket.from_dict(b) for b in r["buckets"]),
                )
                for r in rows
            ]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise UserError(
                f"{path}: not a compare.json of seq2seq compare ({err}); "
                "run seq2seq compare again"
            ) from None
