# ---
# jupyter:
#   jupytext:
#     formats: py:percent,ipynb
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. Why the dot product is scaled
#
# *About 5 minutes. Runs in seconds on a CPU.*
#
# `SingleHeadAttention` divides its scores by √d_k before the softmax. This
# notebook measures what happens without that division as the vectors get
# longer, using the module itself: its three projections are set to the
# identity, so the scores are plain dot products of the inputs, and its
# `scale` is switched between 1/√d and 1.
#
# The argument in one line: if q and k have d independent components of mean
# 0 and variance 1, then q · k is a sum of d such products and has variance
# d. Its spread grows like √d, so at large d one score towers over the others
# and the softmax becomes an argmax. Dividing by √d brings the variance back
# to 1 for every d (Vaswani et al. 2017, Sec. 3.2.1).

# %%
import math

import matplotlib.pyplot as plt
import torch

from seq2seq.model.attention import SingleHeadAttention

KEYS = 32  # keys per query
TRIALS = 500  # random queries per dimension
DIMS = (4, 16, 64, 256, 1024)


def identity_attention(d: int, scaled: bool) -> SingleHeadAttention:
    """The lab's module with Q = K = V = the inputs, scaled by 1/sqrt(d) or not."""
    attn = SingleHeadAttention(d_model=d, d_k=d)
    with torch.no_grad():
        for proj in (attn.w_q, attn.w_k, attn.w_v):
            proj.weight.copy_(torch.eye(d))
    attn.scale = d**-0.5 if scaled else 1.0
    return attn


def measure(d: int, scaled: bool) -> dict[str, float]:
    """Score spread, softmax entropy (nats), top weight and the size of the
    softmax's gradient, averaged over TRIALS random queries."""
    gen = torch.Generator().manual_seed(d)
    queries = torch.randn(TRIALS, 1, d, generator=gen)
    keys = torch.randn(TRIALS, KEYS, d, generator=gen)
    _, w = identity_attention(d, scaled)(queries, keys)  # (TRIALS, 1, KEYS)
    w = w.squeeze(1).detach()
    scores = (queries @ keys.transpose(1, 2)).squeeze(1) * (d**-0.5 if scaled else 1)
    entropy = -(w * w.clamp_min(1e-30).log()).sum(-1)
    # the softmax's Jacobian diag(w) - w w^T: how much a score can still move a weight
    jacobian = torch.diag_embed(w) - w.unsqueeze(2) * w.unsqueeze(1)
    return {
        "std": scores.std(-1).mean().item(),
        "entropy": entropy.mean().item(),
        "top": w.max(-1).values.mean().item(),
        "grad": jacobian.norm(dim=(1, 2)).mean().item(),
    }


rows = {(d, s): measure(d, s) for d in DIMS for s in (False, True)}
print(
    f"{KEYS} keys; uniform weights would have entropy ln {KEYS} = {math.log(KEYS):.2f}"
)
print(
    f"{'d':>5} | {'raw std':>7} {'entropy':>7} {'top':>5} {'grad':>5} |"
    f" {'scaled std':>10} {'entropy':>7} {'top':>5} {'grad':>5}"
)
for d in DIMS:
    r, s = rows[(d, False)], rows[(d, True)]
    raw = f"{r['std']:7.2f} {r['entropy']:7.2f} {r['top']:5.2f} {r['grad']:5.2f}"
    scaled = f"{s['std']:10.2f} {s['entropy']:7.2f} {s['top']:5.2f} {s['grad']:5.2f}"
    print(f"{d:>5} | {raw} | {scaled}")

# %% [markdown]
# What the table shows, asserted (the margins are wide: these are averages
# over 500 random queries, and the measured figures sit far from them):
#
# - raw scores spread like √d (std ≈ √d); scaled ones stay near 1;
# - raw attention collapses: at d = 1024 the top weight is nearly 1 and the
#   entropy nearly 0, an argmax in all but name;
# - scaled attention keeps the same softness at every d;
# - a saturated softmax barely passes gradient back to its scores, so the
#   model learns slowly or not at all where attention should be learned.

# %%
raw_big, scaled_big = rows[(1024, False)], rows[(1024, True)]
for d in DIMS:
    assert 0.8 * math.sqrt(d) < rows[(d, False)]["std"] < 1.2 * math.sqrt(d)
    assert 0.8 < rows[(d, True)]["std"] < 1.2
assert raw_big["top"] > 0.9 and raw_big["entropy"] < 0.5
assert scaled_big["top"] < 0.3 and scaled_big["entropy"] > 2.5
assert raw_big["grad"] < 0.5 * scaled_big["grad"]
spread = [rows[(d, True)]["entropy"] for d in DIMS]
assert max(spread) - min(spread) < 0.3  # the same softness whatever d

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
for scaled, style in ((False, "o-"), (True, "s--")):
    label = "scaled by 1/√d" if scaled else "raw q · k"
    axes[0].plot(DIMS, [rows[(d, scaled)]["entropy"] for d in DIMS], style, label=label)
    axes[1].plot(DIMS, [rows[(d, scaled)]["top"] for d in DIMS], style, label=label)
axes[0].axhline(math.log(KEYS), color="grey", lw=0.8, ls=":")
axes[0].set_ylabel("softmax entropy (nats)")
axes[1].set_ylabel("largest weight")
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_xticks(DIMS, labels=[str(d) for d in DIMS])  # plain labels
    ax.minorticks_off()
    ax.set_xlabel("dimension d")
    ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# **Try it:** keep the raw scores but divide by d instead of √d. The spread
# then *shrinks* like 1/√d, and the softmax flattens towards uniform weights
# (entropy ln 32 ≈ 3.47): just as useless, the other way round. Which d makes
# the two choices agree?
#
# The additive score of Bahdanau et al. (`additive` in this lab) has no such
# problem by construction: `v^T tanh(W q + U k)` passes through a tanh, which
# bounds every term. Notebook 3 uses it.
