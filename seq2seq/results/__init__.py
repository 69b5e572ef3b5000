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
  :class:`TrainingSummary` and the paired bootstrap (:class:`VsBaseline`);
- :class:`ScoreReport`: ``seq2seq score --json``'s file, one
  :class:`ScoredSystem` per hypothesis file.
"""

from seq2seq.results.comparison import (
    ComparedRun,
    CompareRow,
    Paired,
    PairedBucket,
    TrainingSummary,
    VsBaseline,
)
from seq2seq.results.evaluation import (
    Bucket,
    Evaluation,
    Joined,
    TextScores,
)
from seq2seq.results.probe import PositionScore, ProbeResult, ProbeSetup, RangeScore
from seq2seq.results.scored import ScoredSystem, ScoreReport
from seq2seq.results.training import TrainingState, Validation

__all__ = [
    "Bucket",
    "CompareRow",
    "ComparedRun",
    "Evaluation",
    "Joined",
    "Paired",
    "PairedBucket",
    "PositionScore",
    "ProbeResult",
    "ProbeSetup",
    "RangeScore",
    "ScoreReport",
    "ScoredSystem",
    "TextScores",
    "TrainingState",
    "TrainingSummary",
    "Validation",
    "VsBaseline",
]
