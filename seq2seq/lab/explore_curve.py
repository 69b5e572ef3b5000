"""The explorer's third panel: BLEU by source length for every run, the
bottleneck's curve, in `compare`'s buckets (each run's eval.buckets).

A run whose ``eval_test.json`` is current (lab/evaluate.saved_evaluation: of
its best checkpoint as it is now) and of the explorer's whole test split
gives its figures straight away. Any other run is decoded here, greedily
(as `evaluate` decodes), over a sample of the test split: every line when
it holds at most ``sample`` lines, else ``sample`` lines evenly spaced. The
whole split decoded here gives `evaluate`'s own figures (tested).

Decoding runs in a background thread, batch by batch, behind the explorer's
decoding lock, which it lets go between batches so that a sentence typed
meanwhile is answered; the page polls :meth:`Curve.poll` for its progress.
Nothing is written: decoded figures live in memory until the server stops.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seq2seq.errors import UserError, worded
from seq2seq.lab.evaluate import saved_evaluation
from seq2seq.model.search import GREEDY
from seq2seq.results import Bucket
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.metrics import bleu, scores_by_length

if TYPE_CHECKING:
    from seq2seq.config import SplitFiles
    from seq2seq.data.parallel import Split
    from seq2seq.lab.explore import Explorer
    from seq2seq.training.checkpoint import OpenedRun

SAMPLE = 1000  # test lines decoded at most per run (seq2seq explore --sample)


def sample_index(n: int, size: int) -> list[int]:
    """Every index below ``n`` when n <= size, else ``size`` evenly spaced."""
    if n <= size:
        return list(range(n))
    return [i * n // size for i in range(size)]


class Curve:
    """One computation of every run's curve, started by the first poll."""

    def __init__(self, explorer: Explorer, sample: int = SAMPLE) -> None:
        self.explorer, self.sample = explorer, sample
        self.lock = threading.Lock()  # guards the fields below
        self.thread: threading.Thread | None = None
        self.done = self.total = 0
        self.runs: list[dict[str, Any]] = []
        self.error: str | None = None

    def poll(self) -> dict[str, Any]:
        """Start the computation if it has not started; its state now:
        ``state`` (running, done or failed), sentences ``done`` of
        ``total`` to decode, the ``runs`` finished so far, any ``error``."""
        if self.explorer.test is None:
            raise UserError(self.explorer.test_note or "no test split")
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._work, daemon=True)
                self.thread.start()
            state = "running" if self.thread.is_alive() else "done"
            if self.error is not None:
                state = "failed"
            return {
                "state": state,
                "done": self.done,
                "total": self.total,
                "runs": list(self.runs),
                "error": self.error,
            }

    def _work(self) -> None:
        split, files = self.explorer.test, self.explorer.runs[0].cfg.data.test
        assert split is not None and files is not None  # poll() checked
        index = sample_index(len(split), self.sample)
        try:
            saved = {
                r.name: whole_split_result(r, split, files) for r in self.explorer.runs
            }
            with self.lock:
                self.total = len(index) * sum(s is None for s in saved.values())
            for r in self.explorer.runs:
                result = saved[r.name] or self._decoded(r, split, index)
                with self.lock:
                    self.runs.append(result)
        except UserError as err:
            with self.lock:
                self.error = worded(err)
        except Exception as err:  # the page must hear of it, not wait forever
            with self.lock:
                self.error = f"the curve failed: {type(err).__name__}: {err}"
            raise

    def _decoded(self, r: OpenedRun, split: Split, index: list[int]) -> dict[str, Any]:
        """``r``'s greedy translations of the sampled lines, scored."""
        src_ids = r.tok.encode_src([split.src[i] for i in index])
        lock = self.explorer.decoding
        lock.acquire()
        try:
            hyps = decode_corpus(
                r.model,
                src_ids,
                r.cfg.eval.batch_sentences,
                r.cfg.eval.max_len_ratio,
                self.explorer.device,
                GREEDY,
                after_batch=self._batch_done,
            )
        finally:
            lock.release()
        texts = [r.tok.decode_tgt(h.tokens) for h in hyps]
        refs = [split.tgt[i] for i in index]
        words = [len(split.src[i].split()) for i in index]
        buckets = scores_by_length(texts, refs, words, r.cfg.eval.buckets)
        return curve(r, "decoded here", len(index), bleu(texts, refs)[0], buckets)

    def _batch_done(self, sentences: int) -> None:
        """Count a batch, and let a waiting request decode before the next."""
        with self.lock:
            self.done += sentences
        self.explorer.decoding.release()
        time.sleep(0.001)  # a request woken by the release takes the lock now
        self.explorer.decoding.acquire()


def whole_split_result(
    r: OpenedRun, split: Split, files: SplitFiles
) -> dict[str, Any] | None:
    """``r``'s curve from its current eval_test.json, when that evaluated
    the explorer's test split (read from ``files``: the same files, every
    line); else None."""
    ours = r.cfg.data.test
    if ours is None or resolved(ours) != resolved(files):
        return None
    saved = saved_evaluation(r.path, "test")
    if saved is None or saved.scores.n != len(split):
        return None
    if saved.step not in (None, r.step):  # of the checkpoint loaded
        return None
    return curve(r, "eval_test.json", len(split), saved.bleu, saved.buckets)


def resolved(files: SplitFiles) -> tuple[Path, Path]:
    return Path(files.src).resolve(), Path(files.tgt).resolve()


def curve(
    r: OpenedRun, source: str, n: int, score: float, buckets: Sequence[Bucket]
) -> dict[str, Any]:
    """One run's curve as the page's JSON reads it."""
    return {
        "run": r.name,
        "mode": r.model.mode,
        "source": source,
        "n": n,
        "bleu": score,
        "buckets": [dataclasses.asdict(b) for b in buckets],
    }
