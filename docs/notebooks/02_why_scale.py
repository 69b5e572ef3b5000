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
# *About 10 minutes. Runs in seconds on a CPU.*
#
# **You will be able to** say why raw dot-product scores grow with the
# vectors' dimension d, what that does to a softmax and its gradient, what
# dividing by √d changes, and why the danger depends on where the scores
# come from (as the lab's trained models, measured in docs/results.md, show).
#
# **Before this notebook**: notebook 1; mean and variance of a sum of
# independent random numbers; what a softmax does to a list of scores.
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

from seq2seq.lesson.attention import SingleHeadAttention

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
# - once saturated, the softmax passes little gradient back to its scores
#   (the grad column: at d = 1024 a quarter of the scaled softmax's), so
#   training can hardly move attention off the one key it picked. At small d
#   (4 and 16) the raw scores are not saturated yet and pass as much
#   gradient as the scaled ones, or more.

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
axes[0].axhline(math.log(KEYS), color="grey", lw=0.8, ls=":", label="uniform")
axes[0].set_ylabel("softmax entropy (nats)")
axes[1].set_ylabel("largest weight")
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_xticks(DIMS, labels=[str(d) for d in DIMS])  # plain labels
    ax.minorticks_off()
    ax.set_xlabel("dimension d")
    ax.legend()
fig.suptitle(f"Softmax over {KEYS} random keys: raw against scaled dot products")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## What the lab's trained models say
#
# The argument above assumes q and k have independent components of variance
# 1. A trained translation model's vectors are not like that. The lab trained
# every score function alike, on the shipped corpus
# (`seq2seq experiment configs/experiments/bottleneck_synth_ende.yaml`) and on
# Multi30k de→en (`seq2seq experiment
# configs/experiments/bottleneck_multi30k_deen.yaml`); the figures are in
# docs/results.md, not run here, and they say that the danger depends on
# where the scores come from:
#
# - `dot` (h_tᵀ h_s, unscaled) learned as well as `scaled_dot` (h_tᵀ h_s /
#   √d) on both, with d = 256 and 512. Its inputs are GRU states: every
#   component lies between -1 and 1 and most sit near 0, so their dot
#   products spread far less than √d.
# - `general` (h_tᵀ W h_s, unscaled, W learned) fell far behind on both, and
#   on Multi30k its attention put nearly all its weight on one source
#   position and never recovered. Nothing bounds W. A likely reading (the
#   runs do not record W's size): as training grows W, the scores grow with
#   it and the softmax saturates on whatever it attends to early, where
#   little gradient is left to move it.
#
# The cell below measures the first half of that story with bounded vectors
# like a GRU's: components tanh(x) of a small x.

# %%
d = 256
gen = torch.Generator().manual_seed(0)
q = torch.tanh(0.5 * torch.randn(TRIALS, 1, d, generator=gen))  # GRU-like (B, 1, d)
k = torch.tanh(0.5 * torch.randn(TRIALS, KEYS, d, generator=gen))  # (B, S, d)
bounded = (q @ k.transpose(1, 2)).squeeze(1)  # raw dot products (B, S)
unit = rows[(d, False)]
print(f"d = {d}, N(0, 1) vectors: score std {unit['std']:.1f}, top {unit['top']:.2f}")
print(f"d = {d}, tanh(0.5 x) vectors: score std {bounded.std(-1).mean():.1f}")
top = {}
for growth in (1, 4, 16):  # W = growth x the identity: a W that training enlarged
    w = torch.softmax(growth * bounded, dim=-1)
    top[growth] = w.max(-1).values.mean().item()
    print(f"  scores through W = {growth:>2} I: largest weight {top[growth]:.2f}")
assert bounded.std(-1).mean() < 0.25 * unit["std"]
assert top[1] < unit["top"] - 0.2 and top[16] > 0.95

# %% [markdown]
# The bounded vectors' dot products spread about a sixth as much as the
# unit-variance ones, and their softmax keeps about half of its weight off
# the top key, where the unit-variance one is close to an argmax. Put a
# growing W between them and it saturates all the same (0.97 at 16 I). Scaling
# by 1/√d protects against the first cause, the dimension; it cannot stop a
# learned W from growing, which is one reason to prefer the additive score or
# a scaled, normalised one when a score has weights of its own.

# %% [markdown]
# **Try it:** keep the raw scores but divide by d instead of √d. Predict
# what happens to the spread and the entropy as d grows, then measure it.
# Which d makes the two choices agree?
#
# The additive score of Bahdanau et al. (`additive` in this lab),
# `vᵀ tanh(W q + U k)`, passes every component through a tanh, so each lies
# between -1 and 1 whatever the dimension; the score is bounded by the sum of
# |v|'s entries, which training learns but the dimension alone does not
# inflate. Notebook 3 uses it.
