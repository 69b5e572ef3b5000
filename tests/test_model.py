"""Encoder, decoder and model: shapes of every mode, masks, gradients, greedy search."""

from __future__ import annotations

import pytest
import torch
from conftest import MODES, tiny_model

from seq2seq.config import DecoderConfig, EncoderConfig, ModelConfig
from seq2seq.model.model import build_model, loss_sum
from seq2seq.model.search import greedy
from seq2seq.specials import BOS, EOS
from seq2seq.training.decoding import decode_corpus


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("mode", MODES)
def test_forward_backward_shapes(mode: str, rnn: str, toy_batch) -> None:
    src, src_len, tgt_in, tgt_out = toy_batch
    model = tiny_model(mode, rnn, layers=2)
    attentional, weights = model(src, src_len, tgt_in)
    assert attentional.shape == (2, 4, 16)
    assert model.logits(attentional).shape == (2, 4, 29)
    assert model.has_alignment == (weights is not None)  # none, context: None
    if weights is not None:
        assert weights.shape == (2, 4, 5)
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4))
        assert torch.all(weights[1, :, 3:] == 0)  # padding of sentence 2
    loss, _ = loss_sum(model, src, src_len, tgt_in, tgt_out)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


def test_encoder_ignores_padding(toy_batch) -> None:
    """A sentence encodes the same alone and padded inside a batch."""
    src, src_len, tgt_in, _ = toy_batch
    model = tiny_model("additive").eval()
    memory = model.encode(src, src_len)
    alone = model.encode(src[1:, :3], src_len[1:])
    torch.testing.assert_close(memory.keys[1, :3], alone.keys[0])
    torch.testing.assert_close(memory.final[1], alone.final[0])
    assert torch.all(memory.keys[1, 3:] == 0)


def _encoder(reverse: bool, attention: str = "additive") -> torch.nn.Module:
    torch.manual_seed(0)
    cfg = ModelConfig(
        attention=attention,
        attention_dim=12,
        encoder=EncoderConfig(
            embed_dim=10, hidden_size=16, bidirectional=False, reverse=reverse
        ),
        decoder=DecoderConfig(embed_dim=10, hidden_size=16),
    )
    return build_model(cfg, src_vocab=23, tgt_vocab=29).eval()


def test_reversed_encoder_reads_right_to_left(toy_batch) -> None:
    """Sutskever et al. 2014: the state at j has read words j..n, the final
    state is the one after word 1, and padding changes nothing."""
    src, src_len, _, _ = toy_batch
    forward, backward = _encoder(False), _encoder(True)
    changed = src.clone()
    changed[0, 0] = 17  # another first word
    for model, later_same in ((forward, False), (backward, True)):
        a, b = model.encode(src, src_len), model.encode(changed, src_len)
        assert not torch.allclose(a.final[0], b.final[0])  # the summary sees word 1
        assert torch.allclose(a.keys[0, 1:], b.keys[0, 1:]) == later_same
    memory = backward.encode(src, src_len)
    alone = backward.encode(src[1:, :3], src_len[1:])
    torch.testing.assert_close(memory.keys[1, :3], alone.keys[0])
    torch.testing.assert_close(memory.final[1], memory.keys[1, 0])  # after word 1
    torch.testing.assert_close(memory.final[1], alone.final[0])
    assert torch.all(memory.keys[1, 3:] == 0)


@pytest.mark.parametrize("reverse", [False, True])
def test_context_reads_the_encoders_summary(toy_batch, reverse: bool) -> None:
    """`context` gives the decoder the same vector the bridge starts from (the
    state after the whole sentence), whichever way the encoder read it."""
    src, src_len, _, _ = toy_batch
    memory = _encoder(reverse, "context").encode(src, src_len)
    torch.testing.assert_close(memory.projected, memory.final)


def test_reverse_needs_a_unidirectional_encoder() -> None:
    from seq2seq.errors import UserError

    with pytest.raises(UserError, match="model.encoder.reverse"):
        EncoderConfig(reverse=True)


def test_modes_share_everything_but_the_context_mechanism() -> None:
    sizes = {m: tiny_model(m).num_parameters() for m in MODES}
    # none/context/mean/dot/scaled_dot add no parameters of their own
    assert (
        len({sizes[m] for m in ("none", "context", "mean", "dot", "scaled_dot")}) == 1
    )
    assert sizes["general"] == sizes["none"] + 16 * 16
    assert sizes["additive"] == sizes["none"] + 16 * 12 + 16 * 12 + 12


def test_dot_needs_matching_sizes() -> None:
    from seq2seq.errors import UserError

    with pytest.raises(UserError, match="model.attention"):
        ModelConfig(attention="dot", encoder=EncoderConfig(hidden_size=256))


@pytest.mark.parametrize("mode", ["none", "additive"])
def test_greedy_matches_teacher_forcing_on_its_own_output(mode: str, toy_batch) -> None:
    """Feeding greedy's output back under teacher forcing gives the same argmax."""
    src, src_len, _, _ = toy_batch
    model = tiny_model(mode).eval()
    hyps = greedy(model, src, src_len, ratio=1.0)
    for b, hyp in enumerate(hyps):
        n = src_len[b : b + 1]
        tgt_in = torch.tensor([[2] + hyp.tokens])
        attentional, weights = model(src[b : b + 1, : int(n)], n, tgt_in)
        predicted = model.logits(attentional).argmax(-1)[0].tolist()
        assert predicted[: len(hyp.tokens)] == hyp.tokens
        if weights is not None:
            rows = hyp.weights.shape[0]
            torch.testing.assert_close(weights[0, :rows], hyp.weights)


@pytest.mark.parametrize("eos_bias", [2.0, -30.0])  # EOS likely / never chosen
def test_greedy_stops_at_eos_or_limit(toy_batch, eos_bias: float) -> None:
    """A hypothesis ends where the model's argmax is EOS (checked by teacher
    forcing it), or at the limit, ratio x source length + 10."""
    src, src_len, _, _ = toy_batch
    model = tiny_model("additive").eval()
    with torch.no_grad():
        model.decoder.output.bias[EOS] += eos_bias
    hyps = greedy(model, src, src_len, ratio=1.0)
    for b, hyp in enumerate(hyps):
        limit = int(src_len[b]) + 10
        assert EOS not in hyp.tokens and len(hyp.tokens) <= limit
        if len(hyp.tokens) == limit:
            continue
        tgt_in = torch.tensor([[BOS, *hyp.tokens]])
        n = src_len[b : b + 1]
        attentional, _ = model(src[b : b + 1, : int(n)], n, tgt_in)
        assert model.logits(attentional)[0, -1].argmax().item() == EOS
    stopped = sum(len(h.tokens) < int(src_len[b]) + 10 for b, h in enumerate(hyps))
    assert stopped == (len(hyps) if eos_bias > 0 else 0)


def test_decode_corpus_keeps_input_order(toy_batch) -> None:
    src, src_len, _, _ = toy_batch
    model = tiny_model("general").eval()
    ids = [[5, 6, 7, 8], [9, 10], [5, 9, 11]]
    together = decode_corpus(model, ids, 2, 1.0, torch.device("cpu"))
    for sentence, hyp in zip(ids, together, strict=True):
        alone = decode_corpus(model, [sentence], 1, 1.0, torch.device("cpu"))[0]
        assert hyp.tokens == alone.tokens


def test_build_model_reads_rnn_type() -> None:
    cfg = ModelConfig(
        attention="none", encoder=EncoderConfig(rnn="lstm", hidden_size=8, embed_dim=4)
    )
    model = build_model(cfg, 10, 10)
    assert isinstance(model.encoder.rnn, torch.nn.LSTM)
    assert isinstance(model.decoder.cells[0], torch.nn.GRUCell)


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_xavier_rnn_init_is_per_gate_with_zero_biases(rnn: str) -> None:
    enc = EncoderConfig(rnn=rnn, hidden_size=64, embed_dim=32)
    dec = DecoderConfig(rnn=rnn, hidden_size=64, embed_dim=32)
    torch.manual_seed(0)
    default = build_model(ModelConfig(encoder=enc, decoder=dec), 50, 50)
    torch.manual_seed(0)
    xavier = build_model(
        ModelConfig(encoder=enc, decoder=dec, rnn_init="xavier"), 50, 50
    )
    gates = 4 if rnn == "lstm" else 3
    rnns = [xavier.encoder.rnn, *xavier.decoder.cells]
    for name, p in (kv for m in rnns for kv in m.named_parameters()):
        if name.startswith("bias"):
            assert torch.all(p == 0), name
            continue
        for block in p.detach().chunk(gates, dim=0):  # (H, in): Glorot's bound
            bound = (6 / (block.size(0) + block.size(1))) ** 0.5
            assert block.abs().max() <= bound
            assert block.abs().max() > 0.9 * bound  # uniform up to the bound
    # The default keeps PyTorch's RNN init: non-zero biases within 1/sqrt(H).
    assert default.encoder.rnn.bias_ih_l0.abs().max() > 0
    assert default.encoder.rnn.weight_hh_l0.abs().max() <= 64**-0.5


def _reverse_batch(g: torch.Generator, size: int, symbols: int = 8) -> tuple:
    """Sources of 2..6 symbols (ids 4..4+symbols) + EOS, targets reversed."""
    lengths = torch.randint(2, 7, (size,), generator=g)
    src = torch.zeros(size, 7, dtype=torch.long)
    tgt_in, tgt_out = torch.zeros_like(src), torch.zeros_like(src)
    for b, n in enumerate(lengths.tolist()):
        x = torch.randint(4, 4 + symbols, (n,), generator=g)
        src[b, :n], src[b, n] = x, EOS
        tgt_in[b, 0], tgt_in[b, 1 : n + 1] = 2, x.flip(0)  # BOS = 2
        tgt_out[b, :n], tgt_out[b, n] = x.flip(0), EOS
    return src, lengths + 1, tgt_in, tgt_out


def test_a_tiny_none_model_learns_to_reverse_short_sequences() -> None:
    """The single vector carries content: with no attention at all, h_0 alone
    lets a 64-unit decoder reverse up to 6 symbols (Sutskever et al. 2014's
    reversal intuition, as a toy task), exactly, for most sequences.

    Margin: trained to convergence (1,000 steps, the rate decaying linearly to
    0), every one of seeds 0-4 reversed 200 of 200 sequences at 1 and at 2
    threads on an Intel Xeon; the test asks for 90 %. (At a constant rate for
    500 steps it had reached 0.78-0.96 depending on the CPU and seed.)"""
    torch.manual_seed(0)
    cfg = ModelConfig(
        attention="none",
        encoder=EncoderConfig(embed_dim=64, hidden_size=32, dropout=0.0),
        decoder=DecoderConfig(
            embed_dim=64, hidden_size=64, dropout=0.0, input_feeding=False
        ),
    )
    model = build_model(cfg, src_vocab=12, tgt_vocab=12)
    steps = 1000
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    decay = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1 - i / steps)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        src, src_len, tgt_in, tgt_out = _reverse_batch(g, 64)
        loss, _ = loss_sum(model, src, src_len, tgt_in, tgt_out)
        opt.zero_grad()
        (loss / (tgt_out != 0).sum()).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        decay.step()
    src, src_len, _, tgt_out = _reverse_batch(torch.Generator().manual_seed(9), 200)
    hyps = greedy(model.eval(), src, src_len, ratio=2.0)
    exact = [
        h.tokens == tgt_out[b, : int(src_len[b]) - 1].tolist()
        for b, h in enumerate(hyps)
    ]
    assert sum(exact) / len(exact) > 0.9, sum(exact) / len(exact)
