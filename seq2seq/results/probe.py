"""``seq2seq probe``'s result: the classifier's accuracy by position and length."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from seq2seq.families import DEFAULT


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
    family: str = DEFAULT  # the model family (files before it had one: rnn)

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
            data.get("family", DEFAULT),
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields in their order, ``family`` beside ``mode``."""
        out: dict[str, Any] = {}
        for key, value in dataclasses.asdict(self).items():
            if key != "family":
                out[key] = value
            if key == "mode":
                out["family"] = self.family
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"
