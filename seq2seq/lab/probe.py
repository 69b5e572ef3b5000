"""``seq2seq probe RUN_DIR --split test``: do early words fade from one vector?

The lesson's table says of the final RNN state: "compress all history into one
vector", limitation "early tokens fade". Two measurements test that directly:

1. **A probe** (Adi et al. 2017; Conneau et al. 2018, "What you can cram into a
   single $&!#* vector"). The trained model is frozen. For every source word i
   we take the vector through which the decoder reads the source, and a small
   classifier, trained on the train split, must name the word's first subword
   from that vector and the position i. ``none`` and ``context`` read the
   source only through the encoder summary c = [h_n(forward); h_1(backward)]
   (the decoder's h_0 = tanh(W_b c) is a function of it, so c bounds what the
   decoder can get). Attention modes read the context c_t = sum_j a_tj h_j at
   the step t that attends most to word i, with the reference force-decoded.
   Both vectors have the encoder's width D, and the classifier is the same.
2. **Output recall by target position**: for each reference word position j,
   the share of reference words at j that are part of the longest matching
   between hypothesis and reference (difflib), from the greedy hypotheses.

Accuracies are reported by source word position and by source length (the
``evaluate`` buckets), in ``RUN_DIR/probe_<split>.json``, a plot and TensorBoard.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from seq2seq import run
from seq2seq.config import Config
from seq2seq.data.batching import bucket_batches, collate
from seq2seq.data.corpus import build_split, load_split
from seq2seq.data.parallel import Split
from seq2seq.data.tokenizer import Tokenizer, word_index
from seq2seq.data.workspace import Encoded, encode
from seq2seq.files import atomic_write, exclusive, reading
from seq2seq.lab.evaluate import cached_evaluate
from seq2seq.model.interface import Model
from seq2seq.results import (
    PositionScore,
    ProbeResult,
    ProbeSetup,
    RangeScore,
)
from seq2seq.training.checkpoint import open_run
from seq2seq.training.metrics import length_buckets


@dataclass
class Examples:
    """One row per source word: the vector read for it, its position, the id
    of its first subword (what the probe must name), and its sentence."""

    vectors: Tensor  # (N, D)
    positions: Tensor  # (N,) 0-based word position
    targets: Tensor  # (N,) first-subword id of the word
    sentence: Tensor  # (N,) index of the sentence in its split
    words: Tensor  # (N,) number of words in that sentence

    def without_vectors(self) -> Examples:
        """The same rows with the vectors zeroed: what position alone gives."""
        zero = torch.zeros_like(self.vectors)
        return Examples(zero, self.positions, self.targets, self.sentence, self.words)


@torch.no_grad()
def read_vectors(
    model: Model, data: Encoded, tok: Tokenizer, batch: int = 64
) -> Examples:
    """The vector the decoder reads for each source word (module docstring)."""
    rows: list[tuple[Tensor, int, int, int, int]] = []
    for index in bucket_batches(data.lengths(), 10**9, batch):
        b = collate(data.src_ids, data.tgt_ids, index)
        read = model.read_source(b.src, b.src_len, b.tgt_in)
        for k, i in enumerate(index):
            words = word_index(tok.src_pieces(data.src_ids[i]))
            t_len = len(data.tgt_ids[i]) + 1  # the steps that predict a token
            for j, w in enumerate(words):
                if j > 0 and words[j - 1] == w:
                    continue  # only the first subword of each word
                if read.weights is None or read.contexts is None:
                    vector = read.summary[k]  # (D,), the same for every word
                else:
                    step = int(read.weights[k, :t_len, j].argmax())
                    vector = read.contexts[k, step]  # (D,)
                rows.append((vector, w, data.src_ids[i][j], i, words[-1] + 1))
    return Examples(
        torch.stack([r[0] for r in rows]).float(),
        *(torch.tensor([r[k] for r in rows]) for k in range(1, 5)),
    )


HIDDEN = 256  # the classifier's hidden width


class Classifier(nn.Module):
    """An MLP from [vector; position embedding] to the source vocabulary."""

    def __init__(self, dim: int, positions: int, vocab: int, hidden: int = HIDDEN):
        super().__init__()
        self.position = nn.Embedding(positions, 32)
        self.net = nn.Sequential(
            nn.Linear(dim + 32, hidden), nn.ReLU(), nn.Linear(hidden, vocab)
        )
        self.positions = positions

    def forward(self, vectors: Tensor, positions: Tensor) -> Tensor:
        p = self.position(positions.clamp(max=self.positions - 1))  # (N, 32)
        return self.net(torch.cat([vectors, p], dim=-1))  # (N, V)


def train_probe(
    train: Examples, vocab: int, epochs: int = 5, seed: int = 1, batch: int = 256
) -> Classifier:
    """Fit the classifier with Adam on ``train`` (the model stays frozen)."""
    torch.manual_seed(seed)
    probe = Classifier(train.vectors.size(1), int(train.positions.max()) + 1, vocab)
    opt = torch.optim.Adam(probe.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for rows in torch.randperm(len(train.targets), generator=g).split(batch):
            logits = probe(train.vectors[rows], train.positions[rows])
            loss = nn.functional.cross_entropy(logits, train.targets[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return probe.eval()


@torch.no_grad()
def correct(probe: Classifier, examples: Examples) -> Tensor:
    """(N,) bool: did the probe name each word's first subword?"""
    predicted = probe(examples.vectors, examples.positions).argmax(-1)
    return predicted == examples.targets


def by_position(hits: Tensor, positions: Tensor) -> tuple[PositionScore, ...]:
    """The accuracy at every position seen (1-based)."""
    out = []
    for p in sorted(set(positions.tolist())):
        pick = hits[positions == p]
        out.append(PositionScore(p + 1, len(pick), pick.float().mean().item()))
    return tuple(out)


def by_relative_position(
    hits: Tensor, positions: Tensor, words: Tensor, bins: int = 10
) -> tuple[RangeScore, ...]:
    """The accuracy over position / (words - 1) in ``bins`` equal
    bins from the first word (0) to the last (1); one-word sentences left out.
    With a bidirectional encoder the summary holds both ends: this is where a
    fading middle shows."""
    keep = words > 1
    rel = positions[keep].float() / (words[keep] - 1).float()  # (N',) in [0, 1]
    index = (rel * bins).long().clamp(max=bins - 1)
    out = []
    for k in range(bins):
        pick = hits[keep][index == k]
        acc = pick.float().mean().item() if len(pick) else None
        out.append(RangeScore(k / bins, (k + 1) / bins, len(pick), acc))
    return tuple(out)


def by_length(
    hits: Tensor, sentence: Tensor, src_words: Sequence[int], edges: Sequence[int]
) -> tuple[RangeScore, ...]:
    """The accuracy over the source-length buckets of ``evaluate``;
    n counts words, accuracy is over the words of the bucket's sentences."""
    words = [src_words[i] for i in sentence.tolist()]
    out = []
    for lo, hi, index in length_buckets(words, edges):
        pick = hits[index]
        acc = pick.float().mean().item() if index else None
        out.append(RangeScore(lo, hi, len(index), acc))
    return tuple(out)


def output_recall(
    hyps: Sequence[str], refs: Sequence[str]
) -> tuple[PositionScore, ...]:
    """For each reference word position j (1-based), the share of reference
    words at j that the hypothesis gets right: those in the longest matching
    blocks between the two word sequences (difflib, no junk heuristic)."""
    n: dict[int, int] = {}
    right: dict[int, int] = {}
    for hyp, ref in zip(hyps, refs, strict=True):
        h, r = hyp.split(), ref.split()
        matcher = difflib.SequenceMatcher(None, h, r, autojunk=False)
        matched = {
            b + k for _, b, size in matcher.get_matching_blocks() for k in range(size)
        }
        for j in range(len(r)):
            n[j] = n.get(j, 0) + 1
            right[j] = right.get(j, 0) + (j in matched)
    return tuple(PositionScore(j + 1, n[j], right[j] / n[j]) for j in sorted(n))


def train_examples(
    cfg: Config, model: Model, tok: Tokenizer, sentences: int
) -> Examples:
    """Probe training rows from the first ``sentences`` pairs of the train split."""
    train = build_split(cfg.data.train, "train")
    head = Split("train", train.src[:sentences], train.tgt[:sentences])
    return read_vectors(model, encode(head, tok), tok)


def probe(
    run_dir: Path,
    split: str = "test",
    sentences: int = 3000,
    epochs: int = 5,
    checkpoint: str = "best",
) -> ProbeResult:
    """Run both measurements on ``split``; write probe_<split>.json/.png and
    TensorBoard scalars into the run; return the result. A run in training
    can be probed: its files are held as evaluate holds its own
    (files.reading, files.exclusive on probe_<split>.json)."""
    run_dir = Path(run_dir)
    with (
        reading(run_dir),
        exclusive(run.probe_file(run_dir, split), "seq2seq probe"),
    ):
        return _probe(run_dir, split, sentences, epochs, checkpoint)


def _probe(
    run_dir: Path, split: str, sentences: int, epochs: int, checkpoint: str
) -> ProbeResult:
    opened = open_run(run_dir, checkpoint)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    torch.manual_seed(cfg.train.seed)
    train = train_examples(cfg, model, tok, sentences)
    data = encode(load_split(cfg.data, split), tok)
    test = read_vectors(model, data, tok)
    hits = correct(train_probe(train, tok.src_vocab_size, epochs), test)
    # the same classifier without the vector: what the position alone predicts
    blind = train_probe(train.without_vectors(), tok.src_vocab_size, epochs)
    blind_hits = correct(blind, test.without_vectors())
    evaluated = cached_evaluate(run_dir, split, opened=opened)  # the same step
    hyps = opened.hypotheses_file(split).read_text(encoding="utf-8").splitlines()
    result = ProbeResult(
        run=str(run_dir),
        split=split,
        mode=model.mode,
        family=model.family,
        vector="context at the aligned step" if model.has_alignment else "summary",
        step=opened.step,
        bleu=evaluated.bleu,
        probe=ProbeSetup(sentences, epochs, HIDDEN),
        accuracy=hits.float().mean().item(),
        baseline_accuracy=blind_hits.float().mean().item(),
        by_position=by_position(hits, test.positions),
        baseline_by_position=by_position(blind_hits, test.positions),
        by_relative_position=by_relative_position(hits, test.positions, test.words),
        by_length=by_length(hits, test.sentence, data.src_words(), cfg.eval.buckets),
        output_by_position=output_recall(hyps, data.split.tgt),
    )
    atomic_write(opened.probe_file(split), result.to_json())
    from seq2seq.training.board import (
        log_probe,  # matplotlib and TensorBoard, only here
    )

    log_probe(run_dir, result, opened.probe_file(split, ".png"))
    return result


def format_probe(result: ProbeResult, every: int = 5) -> str:
    """A few lines: overall accuracy, by length, and by position (every 5th)."""

    def picked(rows: Sequence[PositionScore]) -> str:
        return "  ".join(
            f"{p.position}: {p.accuracy:.2f}"
            for p in rows
            if p.position in (1, 2) or p.position % every == 0
        )

    lengths = "  ".join(
        f"{b.lo}-{b.hi}: {b.accuracy:.2f}"
        for b in result.by_length
        if b.accuracy is not None
    )
    r = result
    return "\n".join(
        [
            f"{r.run} [{r.mode}, probe on the {r.vector}"
            f"{'' if r.step is None else f', step {r.step}'}] "
            f"{r.split}: word accuracy {r.accuracy:.3f} "
            f"(position alone: {r.baseline_accuracy:.3f})",
            "  by source length: " + lengths,
            "  by source position: " + picked(r.by_position),
            "  output recall by target position: " + picked(r.output_by_position),
        ]
    )
