"""Decoding as functions outside the model: greedy search and batched beam search.

Both return, per sentence, hypotheses with the attention weights the model used
to write them (None for ``none``/``context``). Beam search keeps k hypotheses
per sentence in one (B*k)-row batch, so a corpus is decoded with the same few
large matmuls as greedy search; beam size 1 gives exactly the greedy output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from seq2seq.data import bucket_batches, collate
from seq2seq.decoder import DecoderState, Memory
from seq2seq.errors import UserError
from seq2seq.model import Seq2Seq
from seq2seq.tokenizer import BOS, EOS


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
            raise UserError(f"--beam {self.beam}: the beam size must be >= 1")
        if self.alpha < 0:
            raise UserError(f"--alpha {self.alpha}: the length penalty must be >= 0")

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


def top_words(logits: Tensor, n: int, chunk: int = 64) -> tuple[Tensor, Tensor]:
    """``logits.topk(n)`` over the vocabulary, about 2x faster on the CPU: the n
    best words lie in the n chunks (of ``chunk`` words) with the highest
    maxima, so topk runs over the chunk maxima and then over n * chunk words
    instead of all V. Rows (R, V) -> values and word ids, (R, n) each."""
    rows, vocab = logits.shape
    if vocab <= n * chunk:
        return logits.topk(n, dim=-1)
    pad = -vocab % chunk
    if pad:
        logits = nn.functional.pad(logits, (0, pad), value=float("-inf"))
    chunks = logits.view(rows, -1, chunk)  # (R, V / chunk, chunk)
    _, best_chunks = chunks.amax(dim=-1).topk(n, dim=-1)  # (R, n)
    index = best_chunks.unsqueeze(-1).expand(-1, -1, chunk)  # (R, n, chunk)
    values, pos = chunks.gather(1, index).view(rows, -1).topk(n, dim=-1)  # (R, n)
    return values, best_chunks.gather(1, pos // chunk) * chunk + pos % chunk


@torch.no_grad()
def greedy(
    model: Seq2Seq, src: Tensor, src_len: Tensor, ratio: float = 2.0, alpha: float = 1.0
) -> list[Hypothesis]:
    """Pick the most probable token at every step, for a batch of sources.
    Scores as in :func:`beam_search` (log p / |y| ** alpha). A sentence leaves
    the batch when it ends, so the steps after cost only what is still writing."""
    memory = model.encode(src, src_len)
    state = model.decoder.init_state(memory)
    batch, device = src.size(0), src.device
    limit = max_output_len(src_len, ratio).to(device)  # (B,)
    steps = int(limit.max())
    tokens = torch.full((batch, steps), EOS, dtype=torch.long, device=device)
    logps = torch.zeros(batch, steps, device=device)  # log p of each chosen token
    weights: Tensor | None = None  # (B, steps, S), made at the first step
    alive = torch.arange(batch, device=device)  # rows of the sentences still writing
    prev = torch.full((batch,), BOS, dtype=torch.long, device=device)
    for t in range(steps):
        attentional, state, w = model.decoder.step(prev, state, memory)
        logits = model.decoder.logits(attentional).float()  # (A, V)
        best, prev = logits.max(dim=-1)  # (A,)
        tokens[alive, t] = prev
        logps[alive, t] = best - torch.logsumexp(logits, dim=-1)  # log_softmax
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
        w = None if weights is None else weights[b, :rows, : int(src_len[b])].cpu()
        hyps.append(Hypothesis(out[:n], w, cumulative[b][rows - 1] / rows**alpha))
    return hyps


@dataclass
class _Beams:
    """The k hypotheses of each sentence still searching, k rows per sentence."""

    live: list[int]  # the batch index of each sentence still searching, (A,)
    scores: Tensor  # (A, k) log p of each hypothesis so far
    tokens: Tensor  # (A*k, t) their tokens
    history: Tensor | None  # (A*k, t, S) their attention weights
    state: DecoderState
    memory: Memory
    prev: Tensor  # (A*k,) the last token of each

    def select(self, still: list[int]) -> _Beams:
        """Only the sentences at positions ``still`` (of ``live``)."""
        k = self.scores.size(1)
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
    model: Seq2Seq,
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
    memory = memory.select(torch.arange(batch, device=device).repeat_interleave(k))
    # At t = 0 only the first copy of each sentence is alive; the others would
    # repeat it.
    scores = torch.full((batch, k), float("-inf"), device=device)  # (B, k)
    scores[:, 0] = 0.0
    prev = torch.full((batch * k,), BOS, dtype=torch.long, device=device)
    beams = _Beams(
        list(range(batch)),
        scores,
        prev.new_zeros(batch * k, 0),
        None,
        model.decoder.init_state(memory),
        memory,
        prev,
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
    return [sorted(f, key=lambda h: -h.score)[:nbest] for f in finished]


@dataclass
class _Search:
    """What beam search knows of each sentence of the batch (by batch index)."""

    k: int
    alpha: float
    src_len: list[int]
    limit: list[int]  # max_output_len of each sentence
    finished: list[list[Hypothesis]]

    def step(self, model: Seq2Seq, beams: _Beams, t: int) -> list[int]:
        """Extend ``beams`` in place by one token; the positions (in
        ``beams.live``) of the sentences that go on searching."""
        k, live = self.k, beams.live
        attentional, state, w = model.decoder.step(
            beams.prev, beams.state, beams.memory
        )
        logits = model.decoder.logits(attentional).float()  # (A*k, V)
        # A sentence's 2k best continuations are among its hypotheses' 2k best
        # words each, so only those are scored (log_softmax of just them).
        best, words = top_words(logits, 2 * k)  # (A*k, 2k)
        logp = best - torch.logsumexp(logits, dim=-1, keepdim=True)
        cand = (beams.scores.view(-1, 1) + logp).view(len(live), 2 * k * k)
        # 2k candidates: at most k end with EOS, so k can always continue.
        top, pos = cand.topk(2 * k, dim=1)  # (A, 2k)
        word = words.view(len(live), 2 * k * k).gather(1, pos)
        offset = torch.arange(len(live), device=top.device).unsqueeze(1) * k
        parent = pos // (2 * k) + offset  # parent row in A*k
        history = beams.history
        if w is not None:
            w = w.float().unsqueeze(1)  # (A*k, 1, S)
            history = w if history is None else torch.cat([history, w], dim=1)
        for a, j in (word[:, :k] == EOS).nonzero().tolist():  # EOS among the top k
            if top[a, j] > float("-inf"):
                row, b = int(parent[a, j]), live[a]
                hyp = _finish(
                    beams.tokens[row],
                    history,
                    row,
                    self.src_len[b],
                    top[a, j],
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
                for r, score in zip(rows, beams.scores[a], strict=True)
                if score > float("-inf")
            ]
        return len(self.finished[b]) >= self.k or t + 1 >= self.limit[b]


def _finish(
    tokens: Tensor,
    history: Tensor | None,
    row: int,
    n_src: int,
    logp: Tensor,
    alpha: float,
    eos: bool = True,
) -> Hypothesis:
    """A finished hypothesis: its tokens, weights (tokens and EOS) and score."""
    n = len(tokens) + 1 if eos else len(tokens)  # rows of weights, |y|
    weights = None if history is None else history[row, :n, :n_src].cpu()
    return Hypothesis(tokens.tolist(), weights, float(logp) / n**alpha)


def decode_corpus(
    model: Seq2Seq,
    src_ids: list[list[int]],
    batch_sentences: int,
    ratio: float,
    device: torch.device,
    decoding: Decoding = GREEDY,
) -> list[Hypothesis]:
    """Decode many sentences in length-sorted batches, greedily (beam 1) or
    with beam search (the best hypothesis); input order kept."""
    model.eval()
    lengths = [(len(s) + 1, 0) for s in src_ids]
    out: list[Hypothesis | None] = [None] * len(src_ids)
    for index in bucket_batches(
        lengths, max_tokens=10**9, max_sentences=batch_sentences
    ):
        batch = collate(src_ids, None, index)
        src, src_len = batch.src.to(device), batch.src_len
        if decoding.beam == 1:
            hyps = greedy(model, src, src_len, ratio, decoding.alpha)
        else:
            k, alpha = decoding.beam, decoding.alpha
            hyps = [n[0] for n in beam_search(model, src, src_len, k, alpha, ratio)]
        for i, hyp in zip(index, hyps, strict=True):
            out[i] = hyp
    return out  # type: ignore[return-value]
