"""``seq2seq evaluate``'s result and the scores inside it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq2seq.errors import UserError
from seq2seq.families import DEFAULT, run_label


@dataclass(frozen=True)
class Bucket:
    """Corpus BLEU and chrF of the pairs whose source has ``lo``..``hi`` words
    (both included); None for an empty bucket, and ``chrf`` None in results
    written before it was scored by length."""

    lo: int
    hi: int
    n: int
    bleu: float | None
    chrf: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bucket:
        return cls(data["lo"], data["hi"], data["n"], data["bleu"], data.get("chrf"))

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if self.chrf is None:  # an empty bucket, or as the older code wrote it
            del out["chrf"]
        return out


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TextScores:
        return cls(
            data["n"],
            data["bleu"],
            data["chrf"],
            data.get("bleu_lc"),
            data["signature"],
            data.get("chrf_signature", ""),
            tuple(Bucket.from_dict(b) for b in data["buckets"]),
            tuple(Joined.from_dict(j) for j in data.get("by_sentences", [])),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "bleu": self.bleu,
            "chrf": self.chrf,
            "bleu_lc": self.bleu_lc,
            "signature": self.signature,
            "chrf_signature": self.chrf_signature,
            "buckets": [b.to_dict() for b in self.buckets],
            "by_sentences": [j.to_dict() for j in self.by_sentences],
        }


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
    family: str = DEFAULT  # the model family (files before it had one: rnn)
    # evaluate --src F --ref F ...: the files scored, (src, ref, ref2, ...);
    # () for a split of the run's config
    files: tuple[str, ...] = ()

    def label(self, mixed: bool = False) -> str:
        return run_label(self.family, self.mode, mixed)

    @property
    def bleu(self) -> float:
        return self.scores.bleu

    @property
    def buckets(self) -> tuple[Bucket, ...]:
        return self.scores.buckets

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evaluation:
        scores = TextScores.from_dict(data)
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
            data.get("family", DEFAULT),
            tuple(data.get("files", ())),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run": self.run,
            "split": self.split,
            "mode": self.mode,
            "family": self.family,
            "params": self.params,
            "checkpoint": self.checkpoint,
            "decoding": self.decoding,
            "ablation": self.ablation,
            "step": self.step,
        }
        out |= self.scores.to_dict() | {"aer": self.aer}
        if self.bleu_drop is not None:
            out["bleu_drop"] = self.bleu_drop
        if self.files:
            out["files"] = list(self.files)
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
