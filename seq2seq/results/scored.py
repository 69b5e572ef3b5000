"""``seq2seq score``'s result: system outputs scored against references."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from seq2seq.results.comparison import VsBaseline
from seq2seq.results.evaluation import TextScores


@dataclass(frozen=True)
class ScoredSystem:
    """One hypothesis file: its name, path and scores, and from the second
    file on, the paired bootstrap against the first (None for the first)."""

    name: str
    hyp: str
    scores: TextScores
    vs_first: VsBaseline | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "hyp": self.hyp} | self.scores.to_dict()
        del out["by_sentences"]  # one sentence a line: nothing was joined
        if self.vs_first is not None:
            out["vs_first"] = self.vs_first.to_dict()
        return out


@dataclass(frozen=True)
class ScoreReport:
    """Every system scored on the same lines: the reference files, the
    source file (None: no BLEU by length), and the paired bootstrap's
    sacreBLEU signature (None with a single system)."""

    refs: tuple[str, ...]
    src: str | None
    systems: tuple[ScoredSystem, ...]
    bootstrap_signature: str | None = None

    def to_json(self) -> str:
        data = {
            "refs": list(self.refs),
            "src": self.src,
            "systems": [s.to_dict() for s in self.systems],
            "bootstrap_signature": self.bootstrap_signature,
        }
        return json.dumps(data, indent=2) + "\n"
