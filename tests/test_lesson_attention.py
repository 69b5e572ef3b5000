"""The lesson's single-head attention (seq2seq/lesson/attention.py): shapes,
distributions, and its masks leaking nothing from padding or the future."""

from __future__ import annotations

import torch

from seq2seq.lesson.attention import SingleHeadAttention, causal_mask, padding_mask


def lesson_attention() -> SingleHeadAttention:
    torch.manual_seed(0)
    return SingleHeadAttention(d_model=64, d_k=16)


def test_single_head_self_attention_shapes_and_distribution() -> None:
    x = torch.randn(2, 7, 64)
    out, w = lesson_attention()(x, x)
    assert out.shape == (2, 7, 16) and w.shape == (2, 7, 7)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 7))
    layer = lesson_attention()
    assert all(m.bias is None for m in (layer.w_q, layer.w_k, layer.w_v))


def test_single_head_gives_zero_weight_to_padding() -> None:
    x = torch.randn(2, 7, 64)
    mask = padding_mask(torch.tensor([7, 4]))  # (2, 1, 7)
    assert mask.shape == (2, 1, 7) and mask[1, 0].tolist() == [1] * 4 + [0] * 3
    out, w = lesson_attention()(x, x, mask)
    assert torch.all(w[1, :, 4:] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 7))
    # what the padding holds does not matter
    y = x.clone()
    y[1, 4:] = 100.0
    torch.testing.assert_close(lesson_attention()(y, y, mask)[0][1, :4], out[1, :4])


def test_causal_mask_leaks_nothing_from_the_future() -> None:
    assert causal_mask(3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    x = torch.randn(2, 7, 64)
    layer, mask = lesson_attention(), causal_mask(7)
    out, w = layer(x, x, mask)
    assert torch.all(w.triu(diagonal=1) == 0)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 3, 64)
    torch.testing.assert_close(layer(changed, changed, mask)[0][:, :4], out[:, :4])
    both = padding_mask(torch.tensor([7, 3])) & mask  # (2, 7, 7)
    _, w = layer(x, x, both)
    assert torch.all(w[1, :, 3:] == 0) and torch.all(w.triu(diagonal=1) == 0)


def test_cross_attention_takes_keys_from_another_sequence() -> None:
    x_q, x_kv = torch.randn(2, 3, 64), torch.randn(2, 9, 64)
    out, w = lesson_attention()(x_q, x_kv)
    assert out.shape == (2, 3, 16) and w.shape == (2, 3, 9)


def test_a_query_equal_to_a_key_with_large_scale_is_a_hard_lookup() -> None:
    layer = SingleHeadAttention(d_model=16, d_k=16)
    with torch.no_grad():
        for proj in (layer.w_q, layer.w_k, layer.w_v):
            proj.weight.copy_(torch.eye(16))
        layer.w_q.weight.mul_(50.0)  # a sharp query: soft lookup becomes hard
    torch.manual_seed(2)
    keys = torch.nn.functional.normalize(torch.randn(1, 6, 16), dim=-1)
    out, w = layer(keys[:, 3:4], keys)
    assert w[0, 0, 3] > 0.99
    torch.testing.assert_close(out[0, 0], keys[0, 3], atol=0.02, rtol=0)


def test_a_query_with_every_key_masked_gets_zeros_not_nan() -> None:
    x = torch.randn(1, 2, 64)
    mask = torch.tensor([[[True, False], [False, False]]])
    out, w = lesson_attention()(x, x, mask)
    assert torch.all(w[0, 1] == 0) and torch.all(out[0, 1] == 0)
    assert torch.isfinite(out).all()


def test_the_lessons_0_1_masks_work_as_in_the_lesson() -> None:
    # The lesson's own call: a float 0/1 causal mask, masked where mask == 0.
    attn = lesson_attention()
    x = torch.randn(2, 7, 64)
    out, w = attn(x, x, mask=torch.tril(torch.ones(7, 7)))
    assert out.shape == (2, 7, 16) and w.shape == (2, 7, 7)
    assert torch.all(w.triu(diagonal=1) == 0)
    # The lesson's formula with the layer's own weights.
    scores = attn.w_q(x) @ attn.w_k(x).transpose(-2, -1) * attn.scale
    causal = torch.tril(torch.ones(7, 7))
    expected = torch.softmax(scores.masked_fill(causal == 0, float("-inf")), dim=-1)
    torch.testing.assert_close(w, expected)
    torch.testing.assert_close(out, expected @ attn.w_v(x))
    # integer, float and boolean masks with the same zeros give the same result
    for mask in (causal.long(), causal.to(torch.uint8), causal.bool(), causal * 3):
        torch.testing.assert_close(attn(x, x, mask)[1], w)
