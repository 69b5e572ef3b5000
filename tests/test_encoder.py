"""The encoder (seq2seq/model/encoder.py): padding changes nothing, a
reversed unidirectional encoder reads right to left, and the summary the
decoder starts from."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model

from seq2seq.config import DecoderConfig, EncoderConfig, RNNConfig
from seq2seq.errors import UserError
from seq2seq.model.model import build_model


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
    cfg = RNNConfig(
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
    with pytest.raises(UserError, match="model.encoder.reverse"):
        EncoderConfig(reverse=True)
