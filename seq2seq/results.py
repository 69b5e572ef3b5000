"""What a run's scoring writes, as typed values: one class per result, each
with the one reader and writer of its JSON.

A module passes these, not dicts: a renamed field fails the type checker
(mypy, `make check`), not a run in another module. ``from_dict`` reads every
file earlier versions wrote (fields added since take the value the older
code meant), and ``to_dict`` writes the keys in the order they always had,
so the files users have stay as they are.

- :class:`Validation`: one validation during training, a line of a run's
  ``history.jsonl`` (and the best one in a checkpoint);
- :class:`TrainingState`: the loop's counters in a checkpoint (``best.pt``,
  ``last.pt``);
- :class:`Bucket`: BLEU of the pairs in one source-length range;
- :class:`Joined`: BLEU of the pairs made of k sentences (joined splits);
- :class:`TextScores`: corpus BLEU/chrF and the two breakdowns;
- :class:`Evaluation`: ``seq2seq evaluate``'s ``eval_<name>.json``;
- :class:`ProbeResult`: ``seq2seq probe``'s ``probe_<split>.json``, with its
  :class:`PositionScore` and :class:`RangeScore` rows;
- :class:`CompareRow`: a row of ``seq2seq compare``'s ``compare.json``, with its
  :class:`TrainingSummary` and the paired bootstrap (:class:`VsBaseline`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from seq2seq.errors import UserError


@dataclass(frozen=True)
class Bucket:
    """Corpus BLEU of the pairs whose source has ``lo``..``hi`` words (both
    included); ``bleu`` is None for an empty bucket."""

    lo: int
    hi: int
    n: int
    bleu: float | None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bucket:
        return cls(data["lo"], data["hi"], data["n"], data["bleu"])


@dataclass(frozen=True)
class Joined:
    """The pairs made of ``k`` sentences: their BLEU and how many sentences
    the hypotheses and the references hold on average (a model that drops
    or merges sentences of a long input writes fewer). Results written
    before the counts existed read them as None."""

    k: int
    n: int
    bleu: float
    hyp_sentences: float | None = None
    ref_sentences: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Joined:
        counts = data.get("hyp_sentences"), data.get("ref_sentences")
        return cls(data["k"], data["n"], data["bleu"], *counts)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if self.hyp_sentences is None:  # as the older code wrote it
            del out["hyp_sentences"], out["ref_sentences"]
        return out


@dataclass(frozen=True)
class TextScores:
    """Scores of hypotheses against references (training/scoring.text_scores):
    sacreBLEU BLEU and chrF with their signatures, lowercased BLEU (the
    tutorials' setting), BLEU by source length and by sentences joined."""

    n: int
    bleu: float
    chrf: float
    bleu_lc: float | None  # None: written before it was scored
    signature: str
    chrf_signature: str
    buckets: tuple[Bucket, ...]
    by_sentences: tuple[Joined, ...]

    def filled(self) -> list[Bucket]:
        """The buckets that hold a pair."""
        return [b for b in self.buckets if b.n]


@dataclass(frozen=True)
class Evaluation:
    """``seq2seq evaluate``'s result (lab/evaluate.py), saved as
    ``eval_<name>.json`` in the run folder."""

    run: str
    split: str
    mode: str
    params: int
    checkpoint: str  # best, last or a path
    decoding: str  # Decoding.describe(): "greedy" or "beam 5, alpha 1.0"
    ablation: str | None  # evaluate --ablate's kind
    step: int | None  # the checkpoint's training step
    scores: TextScores
    aer: float | None  # None without gold links or attention
    bleu_drop: float | None = None  # with ablation: BLEU lost against none

    @property
    def bleu(self) -> float:
        return self.scores.bleu

    @property
    def buckets(self) -> tuple[Bucket, ...]:
        return self.scores.buckets

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evaluation:
        scores = TextScores(
            data["n"],
            data["bleu"],
            data["chrf"],
            data.get("bleu_lc"),
            data["signature"],
            data.get("chrf_signature", ""),
            tuple(Bucket.from_dict(b) for b in data["buckets"]),
            tuple(Joined.from_dict(j) for j in data.get("by_sentences", [])),
        )
        return cls(
            data["run"],
            data["split"],
            data["mode"],
            data["params"],
            data.get("checkpoint", "best"),
            data.get("decoding", "greedy"),
            data.get("ablation"),
            data.get("step"),
            scores,
            data.get("aer"),
            data.get("bleu_drop"),
        )

    def to_dict(self) -> dict[str, Any]:
        s = self.scores
        out: dict[str, Any] = {
            "run": self.run,
            "split": self.split,
            "mode": self.mode,
            "params": self.params,
            "checkpoint": self.checkpoint,
            "decoding": self.decoding,
            "ablation": self.ablation,
            "step": self.step,
            "n": s.n,
            "bleu": s.bleu,
            "chrf": s.chrf,
            "bleu_lc": s.bleu_lc,
            "signature": s.signature,
            "chrf_signature": s.chrf_signature,
            "buckets": [dataclasses.asdict(b) for b in s.buckets],
            "by_sentences": [j.to_dict() for j in s.by_sentences],
            "aer": self.aer,
        }
        if self.bleu_drop is not None:
            out["bleu_drop"] = self.bleu_drop
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def read(cls, path: Path) -> Evaluation:
        """An ``eval_<name>.json``; a file that is not one is a one-line error
        naming it."""
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as err:
            raise UserError(f"{path}: not valid JSON ({err}); delete it") from None
        except (KeyError, TypeError, AttributeError) as err:
            raise UserError(
                f"{path}: not an evaluation written by seq2seq evaluate "
                f"({type(err).__name__}: {err}); delete it"
            ) from None


@dataclass(frozen=True)
class PositionScore:
    """An accuracy at one word position (1-based) over ``n`` words."""

    position: int
    n: int
    accuracy: float


@dataclass(frozen=True)
class RangeScore:
    """An accuracy over the words in ``lo``..``hi`` (source-length buckets,
    or relative positions in [0, 1]); None where no word falls in it."""

    lo: float
    hi: float
    n: int
    accuracy: float | None


@dataclass(frozen=True)
class ProbeSetup:
    """How the probe's classifier was trained."""

    train_sentences: int
    epochs: int
    hidden: int


@dataclass(frozen=True)
class ProbeResult:
    """``seq2seq probe``'s result (lab/probe.py), saved as
    ``probe_<split>.json``: how often a classifier names source word i from
    the vector the decoder reads, by position and length, against the same
    classifier without the vector, and the output's recall by position."""

    run: str
    split: str
    mode: str
    vector: str  # "summary" or "context at the aligned step"
    step: int | None
    bleu: float  # the run's evaluation of the same split
    probe: ProbeSetup
    accuracy: float
    baseline_accuracy: float  # position alone
    by_position: tuple[PositionScore, ...]
    baseline_by_position: tuple[PositionScore, ...]
    by_relative_position: tuple[RangeScore, ...]
    by_length: tuple[RangeScore, ...]
    output_by_position: tuple[PositionScore, ...]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeResult:
        def positions(key: str) -> tuple[PositionScore, ...]:
            return tuple(PositionScore(**p) for p in data[key])

        def ranges(key: str) -> tuple[RangeScore, ...]:
            return tuple(RangeScore(**r) for r in data[key])

        return cls(
            data["run"],
            data["split"],
            data["mode"],
            data["vector"],
            data.get("step"),
            data["bleu"],
            ProbeSetup(**data["probe"]),
            data["accuracy"],
            data["baseline_accuracy"],
            positions("by_position"),
            positions("baseline_by_position"),
            ranges("by_relative_position"),
            ranges("by_length"),
            positions("output_by_position"),
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


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
COMPARED = ("mode", "params", "bleu", "chrf", "buckets", "aer", "bleu_lc")


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

    @property
    def mode(self) -> str:
        return self.evaluation.mode

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
