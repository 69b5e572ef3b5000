"""Decoding as functions outside the model: greedy search and batched beam search.

Both return, per sentence, hypotheses with the attention weights the model used
to write them (None for ``none``/``context``). Beam search keeps k hypotheses
per sentence in one (B*k)-row batch, so a corpus is decoded with the same few
large matmuls as greedy search; beam size 1 gives exactly the greedy output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from seq2seq.data import bucket_batches, collate
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


@torch.no_grad()
def greedy(
    model: Seq2Seq, src: Tensor, src_len: Tensor, ratio: float = 2.0, alpha: float = 1.0
) -> list[Hypothesis]:
    """Pick the most probable token at every step, for a batch of sources.
    Scores as in :func:`beam_search` (log p / |y| ** alpha)."""
    memory = model.encode(src, src_len)
    state = model.decoder.init_state(memory)
    batch = src.size(0)
    limit = max_output_len(src_len, ratio).to(src.device)  # (B,)
    prev = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
    done = torch.zeros(batch, dtype=torch.bool, device=src.device)
    tokens, weights, logps = [], [], []
    for t in range(int(limit.max())):
        attentional, state, w = model.decoder.step(prev, state, memory)
        logits = model.decoder.logits(attentional).float()  # (B, V)
        prev = logits.argmax(dim=-1)  # (B,)
        logp = torch.log_softmax(logits, dim=-1).gather(1, prev.unsqueeze(1))
        tokens.append(prev)
        weights.append(w)
        logps.append(logp.squeeze(1))
        done |= (prev == EOS) | (t + 1 >= limit)
        if bool(done.all()):
            break
    steps = torch.stack(tokens, dim=1).tolist()  # (B, T)
    cumulative = torch.stack(logps, dim=1).cumsum(dim=1).tolist()  # (B, T)
    alignment = None if weights[0] is None else torch.stack(weights, dim=1).float()
    hyps = []
    for b in range(batch):
        out = steps[b][: int(limit[b])]
        n = out.index(EOS) if EOS in out else len(out)
        rows = min(n + 1, len(out))  # keep the EOS row when there is one
        w = None if alignment is None else alignment[b, :rows, : int(src_len[b])]
        score = cumulative[b][rows - 1] / rows**alpha
        hyps.append(Hypothesis(out[:n], None if w is None else w.cpu(), score))
    return hyps


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
    finished once ``beam`` hypotheses have ended with EOS among its top ``beam``
    candidates, or at its length limit (``max_output_len``), where the
    hypotheses still alive end unfinished, as greedy search's do.
    """
    if not 1 <= nbest <= beam:
        raise ValueError(f"need 1 <= nbest ({nbest}) <= beam ({beam})")
    batch, k, device = src.size(0), beam, src.device
    memory = model.encode(src, src_len)
    rows = torch.arange(batch, device=device).repeat_interleave(k)  # (B*k,)
    memory = memory.select(rows)
    state = model.decoder.init_state(memory)
    limit = max_output_len(src_len, ratio).tolist()
    # At t = 0 only the first copy of each sentence is alive; the others would
    # repeat it.
    scores = torch.full((batch, k), float("-inf"), device=device)  # (B, k)
    scores[:, 0] = 0.0
    prev = torch.full((batch * k,), BOS, dtype=torch.long, device=device)
    tokens = prev.new_zeros(batch * k, 0)  # (B*k, t) tokens so far
    history: Tensor | None = None  # (B*k, t, S) their attention weights
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    done = [False] * batch
    offset = torch.arange(batch, device=device).unsqueeze(1) * k  # (B, 1)
    for t in range(max(limit)):
        attentional, state, w = model.decoder.step(prev, state, memory)
        logp = torch.log_softmax(model.decoder.logits(attentional).float(), dim=-1)
        vocab = logp.size(-1)
        cand = (scores.view(-1, 1) + logp).view(batch, k * vocab)  # (B, k*V)
        # 2k candidates: at most k end with EOS, so k can always continue.
        top, pos = cand.topk(2 * k, dim=1)  # (B, 2k)
        word, parent = pos % vocab, pos // vocab + offset  # parent row in B*k
        if w is not None:
            w = w.float().unsqueeze(1)  # (B*k, 1, S)
            history = w if history is None else torch.cat([history, w], dim=1)
        ending = (word[:, :k] == EOS).nonzero().tolist()  # EOS among the top k
        for b, j in ending:
            if not done[b] and top[b, j] > float("-inf"):
                row, n_src = int(parent[b, j]), int(src_len[b])
                hyp = _finish(tokens[row], history, row, n_src, top[b, j], alpha)
                finished[b].append(hyp)
        # The k best candidates that do not end with EOS continue.
        rank = torch.arange(2 * k, device=device).expand(batch, -1)
        keep = torch.argsort(rank + (word == EOS) * 2 * k, dim=1)[:, :k]  # (B, k)
        parent, word = parent.gather(1, keep).view(-1), word.gather(1, keep)
        scores = top.gather(1, keep)
        tokens = torch.cat([tokens[parent], word.view(-1, 1)], dim=1)
        history = None if history is None else history[parent]
        state, prev = state.select(parent), word.view(-1)
        for b in range(batch):
            if not done[b] and len(finished[b]) < k and t + 1 >= limit[b]:
                rows = range(b * k, b * k + k)  # out of length: end unfinished
                finished[b] += [
                    _finish(tokens[r], history, r, int(src_len[b]), score, alpha, False)
                    for r, score in zip(rows, scores[b], strict=True)
                    if score > float("-inf")
                ]
            done[b] = done[b] or len(finished[b]) >= k or t + 1 >= limit[b]
        if all(done):
            break
    return [sorted(f, key=lambda h: -h.score)[:nbest] for f in finished]


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
