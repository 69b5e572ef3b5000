"""seq2seq/model/interface.py: the encoder-decoder's interface. The RNN
model keeps it for every mode (stepping equals teacher forcing; a memory's
and a state's rows follow ``select``; the loss is the loss of the logits);
and a toy model of another family, written against the interface alone (a
decoder that ignores the source), trains with loss_sum and decodes with the
lab's greedy and beam search unchanged."""

from __future__ import annotations

import pytest
import torch
from conftest import LastToken, Nothing, SourceBlind, assert_same_rows, tiny_model
from torch import Tensor, nn

from seq2seq import modes
from seq2seq.errors import UserError
from seq2seq.model.ablation import Ablation
from seq2seq.model.interface import Display, EncoderDecoder, Maps, Reading
from seq2seq.model.model import loss_sum
from seq2seq.model.search import Decoding, search
from seq2seq.specials import PAD


@pytest.mark.parametrize("mode", modes.names())
def test_stepping_through_the_interface_is_teacher_forcing(
    mode: str, toy_batch
) -> None:
    model = tiny_model(mode).eval()
    src, src_len, tgt_in, _ = toy_batch
    with torch.no_grad():
        forced, maps = model(src, src_len, tgt_in)
        weights = model.shown(maps)
        memory = model.encode(src, src_len)
        state = model.init_state(memory)
        outs, rows = [], []
        for t in range(tgt_in.size(1)):
            out, state, step_maps = model.step(tgt_in[:, t], state, memory)
            outs.append(out)
            w = model.shown(step_maps)  # (B, 1, S): this step's one query
            rows.append(None if w is None else w[:, 0])
    assert torch.allclose(torch.stack(outs, 1), forced, atol=1e-6)
    if weights is None:
        assert all(w is None for w in rows) and not model.has_alignment
    else:
        assert torch.allclose(torch.stack(rows, 1), weights, atol=1e-6)
    assert model.logits(forced).size(-1) == model.vocab_size


@pytest.mark.parametrize("mode", ["none", "additive"])
def test_select_keeps_the_rows_asked_for(mode: str, toy_batch) -> None:
    """Reordering, then stepping, is stepping, then reordering (up to the
    rounding of a batch of another shape: conftest.ROW_ATOL)."""
    model = tiny_model(mode, rnn="lstm", layers=2).eval()
    src, src_len, tgt_in, _ = toy_batch
    index = torch.tensor([1, 1, 0])
    with torch.no_grad():
        memory = model.encode(src, src_len)
        state = model.init_state(memory)
        out, state, _ = model.step(tgt_in[:, 0], state, memory)
        later, _, _ = model.step(
            tgt_in[index, 1], state.select(index), memory.select(index)
        )
        whole, _, _ = model.step(tgt_in[:, 1], state, memory)
    assert_same_rows(later, whole, index)


def test_the_token_loss_is_the_cross_entropy_of_the_logits(toy_batch) -> None:
    model = tiny_model("additive").eval()
    src, src_len, tgt_in, tgt_out = toy_batch
    with torch.no_grad():
        loss, _ = loss_sum(model, src, src_len, tgt_in, tgt_out)
        out, _ = model(src, src_len, tgt_in)
        logits = model.logits(out)
    want = nn.functional.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD, reduction="sum"
    )
    assert torch.allclose(loss, want, rtol=1e-5)


def test_the_probe_reads_contexts_or_the_summary(toy_batch) -> None:
    src, src_len, tgt_in, _ = toy_batch
    with torch.no_grad():
        plain = tiny_model("none").eval().read_source(src, src_len, tgt_in)
        attending = tiny_model("additive").eval().read_source(src, src_len, tgt_in)
    assert plain.weights is None and plain.contexts is None
    b, t = tgt_in.shape
    assert attending.weights is not None and attending.contexts is not None
    assert attending.weights.shape == (b, t, src.size(1))
    assert attending.contexts.shape[:2] == (b, t)
    assert attending.summary.shape[0] == b


def test_ablating_the_attention_changes_what_the_decoder_reads(toy_batch) -> None:
    model = tiny_model("additive").eval()
    src, src_len, tgt_in, _ = toy_batch
    with torch.no_grad():
        before, _ = model(src, src_len, tgt_in)
        model.ablate(Ablation("none"))  # c_t = 0
        after, maps = model(src, src_len, tgt_in)
    assert maps.kinds == () and not torch.allclose(before, after)


def test_a_second_family_trains_and_decodes_through_the_interface(toy_batch) -> None:
    torch.manual_seed(0)
    src, src_len, tgt_in, tgt_out = toy_batch
    vocab = int(max(tgt_in.max(), tgt_out.max())) + 1
    model = SourceBlind(vocab)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss, _ = loss_sum(model, src, src_len, tgt_in, tgt_out)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # It learns the targets' bigrams: the loss falls to 0.086 of its first
    # value at 1 and at 2 threads (Intel Xeon), the bound is 0.5; six target
    # bigrams in 30 Adam steps leave rounding no room to eat that.
    assert losses[-1] < losses[0] / 2
    model.eval()
    greedy = search(model, src, src_len, Decoding(1))
    beam = search(model, src, src_len, Decoding(3), nbest=2)
    assert len(greedy) == len(beam) == src.size(0)
    # its display policy's map, heads averaged, one row per token and EOS
    for hyps, n in zip(greedy, src_len.tolist(), strict=True):
        w = hyps[0].weights
        assert w is not None and w.shape == (len(hyps[0].tokens) + 1, n)
        torch.testing.assert_close(w, torch.full_like(w, 1 / n))
    # beam 1 is greedy search, for any family
    assert [h[0].tokens for h in search(model, src, src_len, Decoding(1))] == [
        h[0].tokens for h in greedy
    ]
    with pytest.raises(UserError, match="toy model reads the source through no"):
        model.read_source(src, src_len, tgt_in)
    with pytest.raises(UserError, match="no attention to ablate"):
        model.ablate(Ablation("uniform"))


def test_a_family_that_leaves_out_a_method_cannot_be_built() -> None:
    class Half(EncoderDecoder[Nothing, LastToken]):
        def encode(self, src: Tensor, src_len: Tensor) -> Nothing:
            return Nothing(src != 0)

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]
    assert Reading(None, None, torch.zeros(1)).weights is None


def test_the_display_policy_picks_a_kind_a_layer_and_heads() -> None:
    """(B, layers, heads, queries, keys): the last layer, heads averaged, by
    default; or a layer and a head named; another kind; none at all."""
    cross = torch.arange(1 * 2 * 3 * 2 * 4, dtype=torch.float).view(1, 2, 3, 2, 4)
    own = torch.rand(1, 2, 3, 4, 4)
    maps = Maps(cross=cross, encoder_self=own)
    assert maps.kinds == ("cross", "encoder_self")
    assert torch.equal(Display().of(maps), cross[:, -1].mean(dim=1))
    assert torch.equal(Display(layer=0, head=2).of(maps), cross[:, 0, 2])
    assert torch.equal(Display("encoder_self", 1, 0).of(maps), own[:, 1, 0])
    assert Display("decoder_self").of(maps) is None and Display().of(Maps()) is None
    with pytest.raises(ValueError, match="one of cross, encoder_self"):
        Display("self").of(maps)
    one = torch.rand(2, 5, 7)  # the RNN's: one layer, one head, averaging is exact
    assert torch.equal(Display().of(Maps(cross=one[:, None, None])), one)
