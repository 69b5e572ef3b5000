"""Notebook 6's small experiments (seq2seq/lesson/toy.py, pooling.py): the
data are what they say, and the measurements read what they claim. The
trained findings are asserted in the notebook itself, in full, and in its
committed copy (test_notebooks.py)."""

from __future__ import annotations

import dataclasses

import torch

from seq2seq.lesson import pooling, toy
from seq2seq.model.model import build_model
from seq2seq.model.transformer.config import TransformerConfig
from seq2seq.specials import BOS, EOS, PAD

SMALL = TransformerConfig(
    layers=2, heads=2, d_model=16, ffn=32, dropout=0.0, attention_dropout=0.0
)


def test_a_reversal_batch_is_its_source_backwards() -> None:
    src, src_len, tgt_in, tgt_out = toy.reversal_batch(
        5, (2, 6), torch.Generator().manual_seed(0)
    )
    for b in range(5):
        n = int(src_len[b]) - 1  # symbols, then EOS
        words = src[b, :n]
        assert src[b, n] == EOS and torch.all(src[b, n + 1 :] == PAD)
        assert torch.equal(tgt_out[b, :n], words.flip(0)) and tgt_out[b, n] == EOS
        assert tgt_in[b, 0] == BOS and torch.equal(tgt_in[b, 1 : n + 1], words.flip(0))
        assert words.min() >= toy.FIRST and words.max() < toy.VOCAB


def test_a_random_target_is_unrelated_to_its_source() -> None:
    """As many symbols as the source, drawn apart from it; the guessing loss
    is what knowing only that (and the length, for EOS) scores on them."""
    src, src_len, tgt_in, tgt_out = toy.reversal_batch(
        4000, toy.LENGTHS, torch.Generator().manual_seed(0), "random"
    )
    n = src_len - 1  # (B,) symbols in each source and target
    rows = torch.arange(src.size(0))
    assert torch.all(tgt_out[rows, n] == EOS) and torch.all(tgt_in[:, 0] == BOS)
    assert torch.equal(tgt_in[:, 1:], torch.where(tgt_out == EOS, PAD, tgt_out)[:, :-1])
    symbols = (tgt_out != PAD) & (tgt_out != EOS)
    assert tgt_out[symbols].min() >= toy.FIRST and tgt_out[symbols].max() < toy.VOCAB
    backwards = [torch.equal(tgt_out[b, : n[b]], src[b, : n[b]].flip(0)) for b in rows]
    assert sum(backwards) == 0  # 20^-4 a row, at most
    tokens = (tgt_out != PAD).sum()  # each symbol guessed at 1/20, EOS for sure
    guessing = float(symbols.sum() * torch.log(torch.tensor(20.0)) / tokens)
    assert abs(guessing - toy.GUESSING) < 0.01


def test_training_records_every_step_and_every_layers_gradient() -> None:
    run = toy.train_reversal(SMALL, steps=3, batch=8)
    assert len(run.losses) == 3 and all(loss > 0 for loss in run.losses)
    layers = ["encoder 1", "encoder 2", "decoder 1", "decoder 2"]
    assert sorted(run.gradients) == sorted(layers)
    assert all(g > 0 for g in run.gradients.values())
    again = toy.train_reversal(SMALL, steps=3, batch=8)
    assert again.losses == run.losses  # same seed, same batches, same steps
    assert 0.0 <= toy.reversal_accuracy(run.model, size=10) <= 1.0


def test_without_the_causal_mask_the_answer_is_in_the_input() -> None:
    """The control behind notebook 6's claim: a non-causal decoder's output
    at position t changes when the input after t does."""
    torch.manual_seed(0)
    leaky = build_model(dataclasses.replace(SMALL, causal=False), 24, 24).eval()
    src, src_len, tgt_in, _ = toy.reversal_batch(
        1, (6, 6), torch.Generator().manual_seed(1)
    )
    changed = tgt_in.clone()
    changed[0, 3] = (changed[0, 3] - toy.FIRST + 1) % 20 + toy.FIRST
    with torch.no_grad():
        a, _ = leaky(src, src_len, tgt_in, maps=False)
        b, _ = leaky(src, src_len, changed, maps=False)
    assert not torch.allclose(a[0, :3], b[0, :3])


def test_a_pictures_label_is_its_framed_bar() -> None:
    image, labels, framed = pooling.pictures(6, torch.Generator().manual_seed(0))
    patches = pooling.patches(image).view(6, 9, 8, 8)
    for b in range(6):
        patch = patches[b, int(framed[b])]
        assert torch.all(patch[0] == 1.0) and torch.all(patch[:, 0] == 1.0)
        upright = bool(torch.all(patch[1:-1, 3:5] == 1.0))
        assert upright == bool(labels[b])
        others = [p for p in range(9) if p != int(framed[b])]
        assert not any(torch.all(patches[b, p][0] == 1.0) for p in others)


def test_mean_pooling_weighs_every_patch_alike() -> None:
    model = pooling.Classifier(attention=False)
    image, _, _ = pooling.pictures(3, torch.Generator().manual_seed(0))
    logits, weights = model(image)
    assert logits.shape == (3, 2)
    torch.testing.assert_close(weights, torch.full((3, 9), 1 / 9))
    _, attended = pooling.Classifier(attention=True)(image)
    torch.testing.assert_close(attended.sum(-1), torch.ones(3))
