"""`seq2seq explore RUN [RUN ...]`: a local page where a sentence is
translated by every run loaded and its attention drawn.

The runs load once, at start (the same one-line errors as `translate` for a
missing or damaged run). Each request decodes with `translate`'s own code
(lab/translate.py: translate_batch, and entry for the JSON fields), so the
page shows what `seq2seq translate --json --alignments` prints, weights
included. Three panels (explore_page.py draws them):

- **Translate** a typed sentence, or line N of the test split: then each run
  is scored against the reference (sentence BLEU and chrF) and, where the
  corpus has gold word links, the reference is force-decoded (as `evaluate`
  measures AER) and its heatmap drawn with the gold links and the AER.
- **Grow it**: the consecutive test pairs whose joined source has the length
  asked (joined.py, as ``test_joined`` joins them; one long sentence where
  the corpus has it), translated and scored the same way.
- **The curve**: BLEU by source length for every run (explore_curve.py).

The test split is the first run's (``data.test`` of its config); without it
the page translates typed sentences only, and says why. The server
(explore_http.py) takes only text, numbers and a beam size from the page,
never a path or a run name, and nothing here writes a file.

Decoding runs one request at a time (the models are shared); up to
MAX_WAITING more wait their turn, and any beyond are told to try again, so a
burst of requests is answered or refused, never piled up without bound.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from seq2seq.data.corpus import load_split
from seq2seq.data.joined import join_groups
from seq2seq.data.parallel import Split
from seq2seq.data.tokenizer import word_index
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError
from seq2seq.families import mixes_families, run_label
from seq2seq.lab.translate import Translation, entry, translate_batch
from seq2seq.model.interface import by_side
from seq2seq.model.search import Decoding
from seq2seq.specials import UNK
from seq2seq.training.checkpoint import OpenedRun, open_run
from seq2seq.training.device import pick_device
from seq2seq.training.metrics import (
    aer,
    alignment_from_attention,
    sentence_bleu,
    sentence_chrf,
)
from seq2seq.training.scoring import forced_maps, forced_weights

MAX_WORDS = 100  # a sentence longer than this is refused before decoding
MAX_CHARS = 2000  # and one of more characters (100 words of 20 letters)
MAX_BEAM = 10  # the page offers greedy and beams up to this
MAX_WAITING = 32  # requests queued behind the one decoding
MAX_JOIN = 8  # "grow it" joins at most this many consecutive test pairs


def check_text(text: object) -> str:
    """The sentence to translate, or the message the page shows instead."""
    if not isinstance(text, str) or not text.strip():
        raise UserError("type a sentence first: the text is empty")
    if "\n" in text.strip():
        raise UserError("one sentence at a time: the text holds a line break")
    if len(text) > MAX_CHARS:
        raise UserError(
            f"{len(text)} characters: the explorer takes at most {MAX_CHARS}; "
            "shorten the sentence"
        )
    if any("\ud800" <= c <= "\udfff" for c in text):  # JSON's "\ud800" alone
        raise UserError("the text holds half a UTF-16 pair, not a character")
    words = len(text.split())
    if words > MAX_WORDS:
        raise UserError(
            f"{words} words: the explorer takes at most {MAX_WORDS}; shorten the "
            "sentence"
        )
    return text.strip()


def check_whole(value: object, name: str, lo: int, hi: int) -> int:
    """A whole number the page sent, in [lo, hi], or the message to show."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise UserError(f"{name} must be a whole number from {lo} to {hi}")
    return value


def check_beam(beam: object) -> int:
    return check_whole(beam, "beam", 1, MAX_BEAM)


class Busy(UserError):
    """Too many requests waiting: the page asks the user to try again."""


class Explorer:
    """The runs, the test split and the one lock their decoding shares."""

    def __init__(self, run_dirs: Sequence[Path], device_name: str = "cpu") -> None:
        if not run_dirs:
            raise UserError("explore: name at least one run directory")
        self.device = pick_device(device_name)
        self.runs = [self._load(Path(d)) for d in run_dirs]
        self.test, self.test_note = first_test_split(self.runs[0])
        self.decoding = threading.Lock()
        self.slots = threading.BoundedSemaphore(MAX_WAITING + 1)

    def _load(self, run_dir: Path) -> OpenedRun:
        return open_run(run_dir, "best", self.device)

    def info(self) -> dict[str, Any]:
        """What the page needs to know first: the runs and the test split."""
        mixed = mixes_families(r.model.family for r in self.runs)
        runs = [
            {
                "run": r.name,
                "mode": r.model.mode,
                "family": r.model.family,
                "label": run_label(r.model.family, r.model.mode, mixed),
                "step": r.step,
            }
            for r in self.runs
        ]
        test = None if self.test is None else {"lines": len(self.test)}
        limits = {"max_words": MAX_WORDS, "max_beam": MAX_BEAM}
        return {"runs": runs, "test": test, "test_note": self.test_note, **limits}

    def translate(self, text: object, beam: object = 1) -> dict[str, Any]:
        """Every run's translation of one typed sentence."""
        return self._answer(check_text(text), check_beam(beam), None)

    def example(self, line: object, beam: object = 1) -> dict[str, Any]:
        """Every run's translation of test line ``line`` (1-based), scored."""
        split = self._test()
        i = check_whole(line, "line", 1, len(split)) - 1
        pair = join_groups(split, [[i]])
        return self._answer(check_text(pair.src[0]), check_beam(beam), pair)

    def grow(self, words: object, variant: object = 0, beam: object = 1) -> dict:
        """Every run's translation of consecutive test pairs joined to about
        ``words`` source words (``variant``: another group of that length)."""
        split = self._test()
        n = check_whole(words, "length", 1, MAX_WORDS)
        k = check_whole(variant, "variant", 0, 10**6)
        group = grown(split, n, k)
        pair = join_groups(split, [group])
        answer = self._answer(check_text(pair.src[0]), check_beam(beam), pair)
        return answer | {"asked": n, "lines": [i + 1 for i in group]}

    def _test(self) -> Split:
        if self.test is None:
            raise UserError(self.test_note or "no test split")
        return self.test

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for the decoder; refuse when MAX_WAITING already wait."""
        if not self.slots.acquire(blocking=False):
            raise Busy("the explorer is busy; try again in a moment")
        try:
            with self.decoding:
                yield
        finally:
            self.slots.release()

    def _answer(self, sentence: str, k: int, pair: Split | None) -> dict[str, Any]:
        with self.turn(), torch.no_grad():
            runs = [self._one(r, sentence, Decoding(k), pair) for r in self.runs]
        answer: dict[str, Any] = {"source": sentence, "beam": k, "runs": runs}
        if pair is not None:
            answer["reference"] = pair.tgt[0]
            answer["gold"] = pair.align is not None
        return answer

    def _one(
        self, r: OpenedRun, sentence: str, decoding: Decoding, pair: Split | None
    ) -> dict[str, Any]:
        ratio, device = r.cfg.eval.max_len_ratio, self.device
        (t,) = translate_batch(
            r.model, r.tok, [(1, sentence)], decoding, 1, ratio, device
        )
        record = describe(r, t)
        if r.model.has_alignment and (maps := layered(r, t, device)) is not None:
            record["maps"] = maps  # the page's kind, layer and head pickers
        if pair is not None:
            record |= scores(record["hypothesis"], pair.tgt[0])
            if r.model.has_alignment:
                record["forced"] = forced_answer(r, pair, device)
        return record


def first_test_split(r: OpenedRun) -> tuple[Split | None, str | None]:
    """The first run's test split, or why there is none (a note the page
    shows: typed sentences still work)."""
    if r.cfg.data.test is None:
        return None, f"{r.name}'s config has no data.test: type sentences instead"
    try:
        return load_split(r.cfg.data, "test"), None
    except UserError as err:
        return None, f"{r.name}'s test split cannot be read ({err}): type sentences"


def describe(r: OpenedRun, t: Translation) -> dict[str, Any]:
    """One run's answer: `translate --json --alignments`'s fields, the mode,
    and what the page says when there is nothing to draw."""
    best = t.nbest[0] if t.nbest else None
    record: dict[str, Any] = {
        "run": r.name,
        "mode": r.model.mode,
        "source_tokens": t.pieces,
    }
    record |= entry(best, t, r.tok, alignments=r.model.has_alignment)
    record["unknown"] = sum(1 for i in r.tok.encode_src([t.source])[0] if i == UNK)
    if not r.model.has_alignment:
        record["note"] = (
            f"model '{run_label(r.model.family, r.model.mode)}' has no attention "
            "weights to draw: its decoder attends over no source position"
        )
    return record


def layered(
    r: OpenedRun, t: Translation, device: torch.device
) -> dict[str, Any] | None:
    """Every kind, layer and head of the model's attention over its own
    translation fed back in (teacher forcing on the hypothesis), for the
    page to pick from: per kind its rows' and columns' labels and the
    weights (layers, heads, rows, columns) to three decimals. None for a
    model with one map a sentence (the RNN's is the heatmap already drawn)."""
    if not t.nbest:
        return None
    best = t.nbest[0]
    src = r.tok.encode_src([t.source])[0]
    (maps,) = forced_maps(r.model, [src], [best.tokens], [0], device)
    if not maps.several:
        return None
    hyp, source = r.tok.tgt_pieces(best.tokens), [*t.pieces, "</s>"]
    labels = {
        kind: by_side(kind, source, [*hyp, "</s>"], ["<s>", *hyp])
        for kind in maps.kinds
    }
    out: dict[str, Any] = {}
    for kind in maps.kinds:
        found = maps.of(kind)
        assert found is not None
        rows, cols = labels[kind]
        weights = (found[0] * 1000).round() / 1000  # (L, h, Q, K)
        out[kind] = {"rows": rows, "cols": cols, "weights": weights.tolist()}
    return out


def scores(hypothesis: str, reference: str) -> dict[str, float]:
    """Sentence BLEU and chrF of one translation (sacreBLEU's defaults)."""
    return {
        "bleu": sentence_bleu(hypothesis, reference),
        "chrf": sentence_chrf(hypothesis, reference),
    }


def forced_answer(r: OpenedRun, pair: Split, device: torch.device) -> dict[str, Any]:
    """The reference force-decoded (as `evaluate` measures AER): its
    weights (T_ref + 1, S + 1), and where the corpus has gold word links,
    the subword cells of each gold link and this sentence's AER of the
    attention's argmax (metrics.alignment_from_attention)."""
    data = encode(pair, r.tok)
    weights = forced_weights(r.model, data, [0], device)[0]  # (T + 1, S + 1)
    src = r.tok.src_pieces(data.src_ids[0])
    tgt = r.tok.tgt_pieces(data.tgt_ids[0])
    out: dict[str, Any] = {"tokens": tgt, "source_tokens": src}
    out |= {"weights": weights.tolist(), "gold": None, "aer": None}
    if pair.align is not None:
        gold = set(pair.align[0])
        src_words, tgt_words = word_index(src), word_index(tgt)
        out["gold"] = [
            [t, s]
            for t, tw in enumerate(tgt_words)
            for s, sw in enumerate(src_words)
            if (sw, tw) in gold
        ]
        found = alignment_from_attention(weights, src_words, tgt_words)
        out["aer"] = aer([found], [gold])
    return out


def grown(split: Split, words: int, variant: int) -> list[int]:
    """The consecutive pairs (at most MAX_JOIN, at most MAX_WORDS source
    words in all) whose joined source is nearest ``words`` long: fewest
    pairs first, so a corpus with long sentences of its own gives one of
    them; ``variant`` steps through the groups equally near."""
    lengths = [len(s.split()) for s in split.src]
    found: list[tuple[int, int, int]] = []  # (distance, pairs, first)
    for first in range(len(split)):
        total = 0
        for k in range(1, MAX_JOIN + 1):
            if first + k > len(split):
                break
            total += lengths[first + k - 1]
            if total > MAX_WORDS:
                break
            found.append((abs(total - words), k, first))
    if not found:
        raise UserError("the test split has no sentence short enough to grow from")
    nearest = min(d for d, _, _ in found)
    pool = sorted(f for f in found if f[0] == nearest)
    _, k, first = pool[variant % len(pool)]
    return list(range(first, first + k))
