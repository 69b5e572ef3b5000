"""The decoder (seq2seq/model/decoder.py): one step at a time, as search
runs it, equals teacher forcing over the whole target, for every mode and
cell, with and without input feeding; beam search's row selection."""

from __future__ import annotations

import pytest
import torch
from conftest import MODES, assert_same_rows

from seq2seq.config import DecoderConfig, EncoderConfig, RNNConfig
from seq2seq.model.decoder import DecoderState
from seq2seq.model.model import Seq2Seq, build_model


def small(mode: str, rnn: str, feeding: bool, layers: int = 1) -> Seq2Seq:
    torch.manual_seed(0)
    cfg = RNNConfig(
        attention=mode,
        attention_dim=12,
        encoder=EncoderConfig(rnn=rnn, embed_dim=10, hidden_size=8),
        decoder=DecoderConfig(
            rnn=rnn,
            embed_dim=10,
            hidden_size=16,
            layers=layers,
            input_feeding=feeding,
        ),
    )
    # the steps path: Decoder.forward is the step loop itself (the other
    # paths are tested against it in test_recurrence.py)
    return build_model(cfg, src_vocab=23, tgt_vocab=29, recurrence="steps").eval()


@pytest.mark.parametrize("feeding", [False, True])
@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("mode", MODES)
def test_stepping_equals_teacher_forcing(mode, rnn, feeding, toy_batch) -> None:
    src, src_len, tgt_in, _ = toy_batch
    model = small(mode, rnn, feeding, layers=2)
    with torch.no_grad():
        memory = model.encode(src, src_len)
        forced, forced_weights = model.decoder(tgt_in, memory)  # (B, T, H)
        state = model.decoder.init_state(memory)
        for t in range(tgt_in.size(1)):
            out, state, w = model.decoder.step(tgt_in[:, t], state, memory)
            torch.testing.assert_close(out, forced[:, t])
            assert (w is None) == (forced_weights is None)
            if w is not None and forced_weights is not None:
                torch.testing.assert_close(w, forced_weights[:, t])
            if feeding:
                torch.testing.assert_close(state.feed, out)  # h~_t fed to t + 1


def test_selected_rows_continue_as_those_sentences_would(toy_batch) -> None:
    """Beam search keeps hypotheses by index: the state and memory of rows
    [1, 1, 0] step as rows 1, 1 and 0 do (up to the rounding of a batch of
    another shape: conftest.ROW_ATOL)."""
    src, src_len, tgt_in, _ = toy_batch
    model = small("additive", "lstm", feeding=True)
    index = torch.tensor([1, 1, 0])
    with torch.no_grad():
        memory = model.encode(src, src_len)
        state = model.decoder.init_state(memory)
        out, state, _ = model.decoder.step(tgt_in[:, 0], state, memory)
        picked: DecoderState = state.select(index)
        assert picked.cell is not None and picked.hidden.shape == (1, 3, 16)
        again, _, w = model.decoder.step(tgt_in[index, 1], picked, memory.select(index))
        whole, _, w_all = model.decoder.step(tgt_in[:, 1], state, memory)
    assert_same_rows(again, whole, index)
    assert w is not None and w_all is not None
    assert_same_rows(w, w_all, index)
