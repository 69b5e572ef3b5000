"""How a user watches training: the progress bar or lines, and the command
that opens TensorBoard on the runs.

At a terminal, one tqdm bar labelled with the run's name; in a log (standard
error is not a terminal), or when several runs share one terminal as in
``make demo``, one labelled line every ``every_s`` seconds instead, since bars
from two processes overwrite each other on the same line. The choice is
``seq2seq train --progress auto|bar|log|off`` (auto: bar at a terminal).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

STYLES = ("auto", "bar", "log", "off")


class Progress:
    """The bar or the lines of one run (``style`` one of :data:`STYLES`)."""

    def __init__(self, name: str, style: str = "auto", every_s: float = 15.0) -> None:
        if style == "auto":
            style = "bar" if sys.stderr.isatty() else "log"
        self.name, self.style, self.every_s = name, style, every_s
        self.last_line, self.current_epoch = -float("inf"), 0

    def epoch(
        self, batches: Sequence[list[int]], done: int, epoch: int
    ) -> tqdm[list[int]]:
        """The epoch's remaining batches, drawn as a bar if the style says so."""
        self.current_epoch = epoch
        return tqdm(
            batches[done:],
            desc=f"{self.name} epoch {epoch}",
            unit="batch",
            initial=done,
            total=len(batches),
            leave=False,
            disable=self.style != "bar",
        )

    def report(
        self,
        bar: tqdm[list[int]],
        step: int,
        max_steps: int,
        loss: float,
        tokens_s: float,
    ) -> None:
        """The latest training loss and speed: on the bar, or as a line."""
        if self.style == "bar":
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{tokens_s:,.0f}")
        elif self.style == "log" and time.monotonic() - self.last_line >= self.every_s:
            self.last_line = time.monotonic()
            of = f"/{max_steps}" if max_steps else ""
            print(
                f"{self.name}: step {step}{of} epoch {self.current_epoch} "
                f"loss {loss:.3f} {tokens_s:,.0f} tok/s",
                file=sys.stderr,
                flush=True,
            )


def tensorboard_command(logdir: Path) -> str:
    """A TensorBoard command that runs as printed from the current folder:
    ``tensorboard`` if it is on the PATH, else the one beside this Python
    (``.venv/bin/tensorboard`` after ``make install``, which the PATH lacks)."""
    if shutil.which("tensorboard"):
        program = "tensorboard"
    else:
        beside = Path(sys.executable).parent / "tensorboard"  # not resolved: the venv
        program = os.path.relpath(beside)
        if program.startswith(".."):  # outside the current folder: say it whole
            program = str(beside)
    return f"{program} --logdir {logdir}"
