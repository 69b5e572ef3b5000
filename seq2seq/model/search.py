"""Decoding as functions outside the model: greedy search and batched beam search.

Both return, per sentence, hypotheses with the attention weights the model used
to write them: the map its family's display policy picks (interface.Display;
the RNN's one attention), None for ``none``/``context``. Beam search keeps k hypotheses
per sentence in one (B*k)-row batch, so a corpus is decoded with the same few
large matmuls as greedy search; beam size 1 gives exactly the greedy output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from seq2seq.errors import UserError
from seq2seq.model.interface import Maps, Model, Rows
from seq2seq.specials import BOS, EOS


@dataclass
class Hypothesis:
    tokens: list[int]  # without BOS/EOS
    weights: Tensor | None  # (len(tokens) + 1, S_real): rows for tokens and EOS
    score: float | None = None  # beam search: log p / length ** alpha


@dataclass(frozen=True)
class Decoding:
    """How to search: greedy (beam 1) or beam search with length penalty alpha."""

    beam: int = 1
    alpha: float = 1.0

    def __post_init__(self) -> None:
        if self.beam < 1:
            raise UserError(f"beam size {self.beam}: must be >= 1")
        if self.alpha < 0:
            raise UserError(f"length penalty alpha {self.alpha}: must be >= 0")

    @property
    def tag(self) -> str:
        """Suffix of result files: '' for greedy, '_beam5' for beam 5."""
        return "" if self.beam == 1 else f"_beam{self.beam}"

    def describe(self) -> str:
        return "greedy" if self.beam == 1 else f"beam {self.beam}, alpha {self.alpha}"


GREEDY = Decoding()


def max_output_len(src_len: Tensor, ratio: float) -> Tensor:
    """Per-sentence output limit: ratio * source length + 10 tokens."""
    return (src_len.float() * ratio).long() + 10


def best_continuations(
    logits: Tensor, scores: Tensor, n: int, chunk: int = 64
) -> tuple[Tensor, Tensor, Tensor]:
    """The n best one-word continuations of each sentence's hypotheses.

    ``logits`` (A*r, V) are the next-word logits of the r hypotheses of each of
    A sentences (rows a*r ... a*r + r - 1), ``scores`` (A, r) their log p so
    far. Returns, best first, (A, n) each: score + log p(word), the parent row
    (in A*r) and the word. log p = logit - logsumexp, for the chosen words only.

    Not all r * V candidates are ranked: the n best lie in the n chunks (of
    ``chunk`` words) whose best candidates are highest, so topk runs over the
    chunk maxima and then over n * chunk candidates, several times faster than
    ``max``/``topk`` over the vocabulary on the CPU. Fewer than n candidates
    (a tiny vocabulary) are padded with -inf.
    """
    rows, vocab = logits.shape
    a, r = scores.shape
    lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # (A*r, 1)
    offset = scores.reshape(-1, 1)  # (A*r, 1)
    first = torch.arange(a, device=logits.device).unsqueeze(1) * r  # (A, 1)
    if vocab <= n * chunk:  # small vocabularies: rank every candidate
        cand = ((logits - lse) + offset).view(a, r * vocab)
        top, pos = cand.topk(min(n, r * vocab), dim=1)  # (A, n)
        top, pos = _pad(top, n, float("-inf")), _pad(pos, n, 0)
        return top, pos // vocab + first, pos % vocab
    pad = -vocab % chunk
    if pad:
        logits = nn.functional.pad(logits, (0, pad), value=float("-inf"))
    chunks = logits.view(rows, -1, chunk)  # (A*r, C, chunk)
    n_chunks = chunks.size(1)
    bound = (chunks.amax(dim=-1) - lse) + offset  # (A*r, C) best of each chunk
    _, best = bound.view(a, r * n_chunks).topk(n, dim=1)  # (A, n)
    row, col = best // n_chunks + first, best % n_chunks  # (A, n) each
    cand = (chunks[row, col] - lse[row]) + offset[row]  # (A, n, chunk)
    top, pos = cand.view(a, n * chunk).topk(n, dim=1)  # (A, n)
    j = pos // chunk  # which of the n chunks
    return top, row.gather(1, j), col.gather(1, j) * chunk + pos % chunk


def _pad(x: Tensor, n: int, value: float) -> Tensor:
    """Columns up to n, filled with value."""
    return nn.functional.pad(x, (0, n - x.size(1)), value=value)


@torch.no_grad()
def greedy(
    model: Model, src: Tensor, src_len: Tensor, ratio: float = 2.0, alpha: float = 1.0
) -> list[Hypothesis]:
    """Pick the most probable token at every step, for a batch of sources.
    Scores as in :func:`beam_search` (log p / |y| ** alpha). A sentence leaves
    the batch when it ends, so the steps after cost only what is still writing."""
    memory = model.encode(src, src_len)
    state = model.init_state(memory)
    batch, device = src.size(0), src.device
    limit = max_output_len(src_len, ratio).to(device)  # (B,)
    steps = int(limit.max())
    tokens = torch.full((batch, steps), EOS, dtype=torch.long, device=device)
    logps = torch.zeros(batch, steps, device=device)  # log p of each chosen token
    weights: Tensor | None = None  # (B, steps, S), made at the first step
    alive = torch.arange(batch, device=device)  # rows of the sentences still writing
    prev = torch.full((batch,), BOS, dtype=torch.long, device=device)
    for t in range(steps):
        attentional, state, maps = model.step(prev, state, memory)
        w = shown_row(model, maps)  # (A, S) or None
        logits = model.logits(attentional).float()  # (A, V)
        start = logits.new_zeros(len(alive), 1)  # (A, 1): one row per sentence
        best, _, words = best_continuations(logits, start, 1)  # (A, 1) each
        prev = words.squeeze(1)  # (A,)
        tokens[alive, t] = prev
        logps[alive, t] = best.squeeze(1)  # log p of the chosen word
        if w is not None:
            if weights is None:
                weights = w.new_zeros(batch, steps, w.size(-1), dtype=torch.float)
            weights[alive, t] = w.float()
        ended = (prev == EOS) | (t + 1 >= limit[alive])
        if bool(ended.any()):
            keep = (~ended).nonzero().squeeze(1)
            if keep.numel() == 0:
                break
            alive, prev = alive[keep], prev[keep]
            state, memory = state.select(keep), memory.select(keep)
    return _greedy_hypotheses(tokens, logps, weights, limit, src_len, alpha)


def _greedy_hypotheses(
    tokens: Tensor,
    logps: Tensor,
    weights: Tensor | None,
    limit: Tensor,
    src_len: Tensor,
    alpha: float,
) -> list[Hypothesis]:
    """Cut each row at its EOS (kept in the weights) or at its length limit."""
    rows_tokens = tokens.tolist()  # (B, T)
    cumulative = logps.cumsum(dim=1).tolist()  # (B, T)
    hyps = []
    for b, row in enumerate(rows_tokens):
        out = row[: int(limit[b])]
        n = out.index(EOS) if EOS in out else len(out)
        rows = min(n + 1, len(out))  # keep the EOS row when there is one
        w = None if weights is None else _own(weights[b, :rows, : int(src_len[b])])
        hyps.append(Hypothesis(out[:n], w, cumulative[b][rows - 1] / rows**alpha))
    return hyps


@dataclass
class _Beams:
    """The hypotheses of each sentence still searching: r rows per sentence,
    r = 1 before the first step and k after it."""

    live: list[int]  # the batch index of each sentence still searching, (A,)
    scores: Tensor  # (A, r) log p of each hypothesis so far
    tokens: Tensor  # (A*r, t) their tokens
    history: Tensor | None  # (A*r, t, S) their attention weights
    state: Rows  # the model's decoder state
    memory: Rows  # and its memory of the sources
    prev: Tensor  # (A*r,) the last token of each

    def select(self, still: list[int]) -> _Beams:
        """Only the sentences at positions ``still`` (of ``live``)."""
        k = self.scores.size(1)  # rows per sentence
        index = torch.tensor(still, device=self.prev.device)
        rows = (index.unsqueeze(1) * k + torch.arange(k, device=index.device)).view(-1)
        history = None if self.history is None else self.history[rows]
        return _Beams(
            [self.live[a] for a in still],
            self.scores[index],
            self.tokens[rows],
            history,
            self.state.select(rows),
            self.memory.select(rows),
            self.prev[rows],
        )


@torch.no_grad()
def beam_search(
    model: Model,
    src: Tensor,
    src_len: Tensor,
    beam: int = 5,
    alpha: float = 1.0,
    ratio: float = 2.0,
    nbest: int = 1,
) -> list[list[Hypothesis]]:
    """The ``nbest`` best of ``beam`` hypotheses for each source, best first.

    A hypothesis scores log p(y | x) / |y| ** alpha, |y| counting EOS (alpha = 0
    ranks by raw log-probability, which favours short outputs). A sentence is
    finished once ``beam`` hypotheses have ended with EOS among its top
    ``beam`` candidates (fairseq's rule), or at its length limit
    (``max_output_len``), where the hypotheses still alive end unfinished, as
    greedy search's do. (OpenNMT's and JoeyNMT's rule, stop when the best
    candidate ends, was tried: it shortens outputs and cost 0.4 beam-5 BLEU on
    the test set of the 3-epoch Multi30k additive run.) A finished sentence
    leaves the batch, so later steps cost only what is still searching.
    """
    if not 1 <= nbest <= beam:
        raise ValueError(f"need 1 <= nbest ({nbest}) <= beam ({beam})")
    batch, k, device = src.size(0), beam, src.device
    memory = model.encode(src, src_len)
    # One row per sentence at the first step (k copies would all repeat it);
    # the first step's k best words make the k rows of each sentence.
    beams = _Beams(
        list(range(batch)),
        torch.zeros(batch, 1, device=device),  # (B, 1)
        torch.zeros(batch, 0, dtype=torch.long, device=device),
        None,
        model.init_state(memory),
        memory,
        torch.full((batch,), BOS, dtype=torch.long, device=device),
    )
    limit = max_output_len(src_len, ratio).tolist()
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    search = _Search(k, alpha, [int(n) for n in src_len], limit, finished)
    for t in range(max(limit)):
        still = search.step(model, beams, t)
        if not still:
            break
        if len(still) < len(beams.live):
            beams = beams.select(still)
    # every finished beam hypothesis carries its score
    return [sorted(f, key=lambda h: -(h.score or 0.0))[:nbest] for f in finished]


@dataclass
class _Search:
    """What beam search knows of each sentence of the batch (by batch index)."""

    k: int
    alpha: float
    src_len: list[int]
    limit: list[int]  # max_output_len of each sentence
    finished: list[list[Hypothesis]]

    def step(self, model: Model, beams: _Beams, t: int) -> list[int]:
        """Extend ``beams`` in place by one token; the positions (in
        ``beams.live``) of the sentences that go on searching."""
        k, live = self.k, beams.live
        rows = beams.scores.size(1)  # per sentence: 1 at the first step, then k
        attentional, state, maps = model.step(beams.prev, beams.state, beams.memory)
        w = shown_row(model, maps)  # (A*rows, S) or None
        logits = model.logits(attentional).float()  # (A*rows, V)
        # 2k candidates: at most k end with EOS, so k can always continue.
        top, parent, word = best_continuations(logits, beams.scores, 2 * k)
        history = beams.history
        if w is not None:
            w = w.float().unsqueeze(1)  # (A*rows, 1, S)
            history = w if history is None else torch.cat([history, w], dim=1)
        ended = (word[:, :k] == EOS).nonzero().tolist()  # EOS among the top k
        if ended:  # Python numbers: no tensor op per hypothesis
            tops, parents = top.tolist(), parent.tolist()
            for a, j in ended:
                if tops[a][j] > float("-inf"):
                    row, b = parents[a][j], live[a]
                    hyp = _finish(
                        beams.tokens[row],
                        history,
                        row,
                        self.src_len[b],
                        tops[a][j],
                        self.alpha,
                    )
                    self.finished[b].append(hyp)
        # The k best candidates that do not end with EOS continue.
        rank = torch.arange(2 * k, device=top.device).expand(len(live), -1)
        keep = torch.argsort(rank + (word == EOS) * 2 * k, dim=1)[:, :k]  # (A, k)
        parent, word = parent.gather(1, keep).view(-1), word.gather(1, keep)
        beams.scores = top.gather(1, keep)
        beams.tokens = torch.cat([beams.tokens[parent], word.view(-1, 1)], dim=1)
        beams.history = None if history is None else history[parent]
        beams.state, beams.prev = state.select(parent), word.view(-1)
        if rows < k:  # the first step: the sentence's memory, k times
            beams.memory = beams.memory.select(parent)
        return [a for a, b in enumerate(live) if not self.ends(beams, a, b, t)]

    def ends(self, beams: _Beams, a: int, b: int, t: int) -> bool:
        """Whether sentence b (position a) is done after step t: ``k``
        hypotheses have ended, or it is at its length limit, where the
        hypotheses still alive end unfinished."""
        if len(self.finished[b]) < self.k and t + 1 >= self.limit[b]:
            rows = range(a * self.k, a * self.k + self.k)
            self.finished[b] += [
                _finish(
                    beams.tokens[r],
                    beams.history,
                    r,
                    self.src_len[b],
                    score,
                    self.alpha,
                    False,
                )
                for r, score in zip(rows, beams.scores[a].tolist(), strict=True)
                if score > float("-inf")
            ]
        return len(self.finished[b]) >= self.k or t + 1 >= self.limit[b]


def _finish(
    tokens: Tensor,
    history: Tensor | None,
    row: int,
    n_src: int,
    logp: float,
    alpha: float,
    eos: bool = True,
) -> Hypothesis:
    """A finished hypothesis: its tokens, weights (tokens and EOS) and score."""
    n = len(tokens) + 1 if eos else len(tokens)  # rows of weights, |y|
    weights = None if history is None else _own(history[row, :n, :n_src])
    return Hypothesis(tokens.tolist(), weights, logp / n**alpha)


def shown_row(model: Model, maps: Maps) -> Tensor | None:
    """One step's map that stands for the model (its display policy), the
    step's one query: (B, S), or None."""
    shown = model.shown(maps)  # (B, 1, S)
    return None if shown is None else shown[:, 0]


def _own(weights: Tensor) -> Tensor:
    """A hypothesis's weights in memory of their own on the CPU: a view would
    keep the whole batch's (B x k, T, S) tensor alive as long as the
    hypothesis lives."""
    return weights.to("cpu", copy=True)


def search(
    model: Model,
    src: Tensor,
    src_len: Tensor,
    decoding: Decoding,
    ratio: float = 2.0,
    nbest: int = 1,
) -> list[list[Hypothesis]]:
    """The one choice between the two searches: greedy for beam 1, else beam
    search; the ``nbest`` best hypotheses of each source (greedy has one)."""
    if decoding.beam == 1:
        return [[h] for h in greedy(model, src, src_len, ratio, decoding.alpha)]
    k, alpha = decoding.beam, decoding.alpha
    return beam_search(model, src, src_len, k, alpha, ratio, nbest)
