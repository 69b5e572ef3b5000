"""A length curriculum: short pairs first, every pair by ``curriculum_steps``.

Competence-based curriculum learning (Platanios et al. 2019, Sec. 3): a pair's
difficulty is the fraction of training pairs whose source is no longer than
its own (the length's CDF), and the model's competence at step t is

    c(t) = min(1, sqrt(t (1 - c0^2) / T + c0^2))          (Eq. 7, "sqrt")

with c0 = ``curriculum_start`` and T = ``curriculum_steps``. A batch is trained
on at step t only if its longest source is within the competence; the others
of the epoch are passed over. Batches hold pairs of similar length
(``data.bucket_batches``), so a batch's difficulty is its pairs'. Passing over
a batch is a function of the step alone, so a resumed run passes over the same
ones. Every mode gets the same curriculum: a comparison stays a comparison of
``model.attention``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence


class Curriculum:
    def __init__(self, src_lengths: Sequence[int], steps: int, start: float) -> None:
        self.lengths = src_lengths
        self.sorted = sorted(src_lengths)
        self.steps, self.start = steps, start
        # the shortest batches are always open, so training always advances
        self.floor = bisect.bisect_right(self.sorted, self.sorted[0]) / len(self.sorted)

    def competence(self, step: int) -> float:
        """c(step): the fraction of the data, shortest first, open at ``step``."""
        if self.steps == 0:
            return 1.0
        c0 = self.start
        return min(1.0, math.sqrt(step * (1 - c0 * c0) / self.steps + c0 * c0))

    def difficulty(self, batch: Sequence[int]) -> float:
        """The length CDF at the batch's longest source."""
        longest = max(self.lengths[i] for i in batch)
        return bisect.bisect_right(self.sorted, longest) / len(self.sorted)

    def admits(self, batch: Sequence[int], step: int) -> bool:
        """Whether ``batch`` is trained on as step number ``step``."""
        if self.steps == 0:
            return True
        return self.difficulty(batch) <= max(self.competence(step), self.floor)
