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
# # 1. Attention from scratch
#
# *About 15 minutes. Runs in seconds on a CPU.*
#
# **You will be able to** read attention as a soft dictionary lookup;
# compute it by hand in four steps (project, score, softmax, mix); tell soft
# from hard attention, and say why sampled hard attention trains noisily;
# use the lab's `SingleHeadAttention` with padding and causal masks; check
# the properties every attention must have; and see mean-pooling as
# attention with fixed weights, max pooling as no weighting at all.
#
# **Before this notebook**: Python, PyTorch tensors and matrix products
# (`@`), and what a softmax is. No training, no data.
#
# Attention answers one question for every query: **which of these stored
# vectors should I read, and how much of each?** It does so in four steps:
#
# 1. **project** the inputs into queries Q, keys K and values V;
# 2. **score** every query against every key;
# 3. **softmax** each query's scores into weights that are positive and sum to 1;
# 4. **mix** the values with those weights.
#
# This notebook builds the four steps by hand on a handful of vectors, then
# uses the lab's own module, `SingleHeadAttention`
# ([seq2seq/lesson/attention.py](../../seq2seq/lesson/attention.py)), and checks
# what must always hold. Every `assert` in a cell is a property the lesson
# teaches; `make test` runs this notebook and fails if one breaks.

# %%
import matplotlib.pyplot as plt
import torch

from seq2seq.lesson.attention import SingleHeadAttention, causal_mask, padding_mask

_ = torch.manual_seed(0)

# %% [markdown]
# ## A soft dictionary lookup
#
# The names query, key and value come from a lookup table (Vaswani et al.
# 2017, Sec. 3.2). A Python dict answers a query with the value of the one
# key equal to it. Attention makes the lookup soft: the query is *scored*
# against every key, the softmax turns the scores into weights, and the
# answer is the values mixed by those weights. A query on one key gets
# (almost) that key's value; a query between two keys gets a blend of theirs.

# %%
table = {"cat": 1.0, "dog": 2.0, "car": 10.0}
keys = torch.eye(3)  # one key per entry, (3, 3)
values = torch.tensor(list(table.values()))  # (3,)
print("a dict, table['dog']:", table["dog"])
queries = {"dog's key": keys[1], "between cat and dog": (keys[0] + keys[1]) / 2}
answers = {}
for name, query in queries.items():
    weights = torch.softmax(8 * (keys @ query), dim=0)  # score, softmax (sharp)
    answers[name] = float(weights @ values)  # mix
    print(f"{name:>20}: weights {weights.numpy().round(3)} -> {answers[name]:.2f}")
assert abs(answers["dog's key"] - 2.0) < 0.01  # the dict's answer
assert 1.0 < answers["between cat and dog"] < 2.0  # a blend of cat's and dog's

# %% [markdown]
# Every key got some weight, even `car` for a query about cats and dogs:
# that small weight is why the blend sits a little above halfway between
# cat's 1 and dog's 2. The rest of this notebook is this lookup with learned
# projections making the queries, keys and values out of the same inputs.
#
# ## The four steps on five vectors
#
# Five input vectors of size 4 (think: five words), one query. The projections
# are random matrices here, scaled by 1/√d as a layer's initial weights are;
# in a trained model they are learned.

# %%
x = torch.randn(5, 4)  # five inputs (T, d)
w_q, w_k, w_v = (torch.randn(4, 3) / 4**0.5 for _ in range(3))  # d -> d_k = 3

q = x[2] @ w_q  # 1. project: the query is made from input 2   (d_k,)
k = x @ w_k  # keys, one per input                             (T, d_k)
v = x @ w_v  # values, one per input                           (T, d_k)
scores = k @ q  # 2. score: a dot product per key                (T,)
weights = torch.softmax(scores, dim=0)  # 3. softmax             (T,)
output = weights @ v  # 4. mix: a weighted average of values      (d_k,)

print("scores ", scores.numpy().round(2))
print("weights", weights.numpy().round(3), "sum", float(weights.sum()))
print("output ", output.numpy().round(3))
assert torch.all(weights > 0) and torch.isclose(weights.sum(), torch.tensor(1.0))

# %% [markdown]
# The output is a blend of the values: about half of value 0, a third of
# value 1, a tenth of value 2 and a little of the last two. It is never
# exactly one of them: that is what **soft** attention means. A *hard* lookup
# would take only the value with the highest score. Both are one line from
# the same scores:

# %%
hard = v[scores.argmax()]
print("soft output:", output.numpy().round(3))
print("hard output:", hard.numpy().round(3), "(value", int(scores.argmax()), ")")
# a blend: the top weight under 0.6, three weights of 0.09 or more
assert weights.max() < 0.6 and (weights >= 0.09).sum() == 3

# %% [markdown]
# Sharper scores push the soft output towards the hard one. Multiplying the
# scores by a growing factor (an "inverse temperature") shows it:

# %%
for sharpness in (1, 4, 16, 64):
    w = torch.softmax(sharpness * scores, dim=0)
    gap = float((w @ v - hard).norm())
    print(
        f"x{sharpness:>2}: top weight {float(w.max()):.3f}, distance to hard {gap:.4f}"
    )
assert float((torch.softmax(64 * scores, 0) @ v - hard).norm()) < 1e-3

# %% [markdown]
# Hard attention can also be **sampled** (Xu et al. 2015, "Show, Attend and
# Tell"): draw one position from the weights and read only its value. On
# average the sampled output is the soft one, but each draw is one of five
# vectors, far from that average. Training suffers the same way: an argmax
# or a draw has no gradient, and the REINFORCE estimate (the loss of the
# drawn position times the gradient of its log-probability) is right on
# average but noisy draw by draw. Below, the loss is the squared length of
# the output, its exact gradient with respect to the scores is taken by
# autograd, and 20,000 draws estimate it. (The lab's `hard` mode takes the
# argmax instead and passes the soft weights' gradient through:
# straight-through, notebook 3.)

# %%
dice = torch.Generator().manual_seed(0)  # its own, so later cells draw as before
draws = torch.multinomial(weights, 20_000, replacement=True, generator=dice)  # (N,)
sampled = v[draws]  # one value per draw (N, d_k)
print("soft output            ", output.numpy().round(3))
print("mean of sampled outputs", sampled.mean(0).numpy().round(3))
print("spread of one draw     ", sampled.std(0).numpy().round(3))

s = scores.clone().requires_grad_(True)
loss_of = (v**2).sum(-1)  # the loss if position i is read (T,)
(exact,) = torch.autograd.grad((torch.softmax(s, 0) * loss_of).sum(), s)
one_hot = torch.nn.functional.one_hot(draws, len(v)).float()
reinforce = loss_of[draws, None] * (one_hot - weights)  # per draw (N, T)
print("exact gradient         ", exact.numpy().round(3))
print("REINFORCE, mean        ", reinforce.mean(0).numpy().round(3))
print("REINFORCE, one draw's sd", reinforce.std(0).numpy().round(3))
assert torch.allclose(sampled.mean(0), output, atol=0.05)  # right on average
assert torch.allclose(reinforce.mean(0), exact, atol=0.08)  # unbiased
assert reinforce.std(0).max() > exact.abs().max()  # one draw: noise > signal

# %% [markdown]
# ## The lab's module: self-attention on `(2, 7, 64)`
#
# `SingleHeadAttention(d_model, d_k)` does the same for whole batches of
# sequences, with the scores divided by √d_k (notebook 2 says why). In
# *self*-attention the queries, keys and values all come from the same
# sequence.

# %%
attn = SingleHeadAttention(d_model=64, d_k=16)
x = torch.randn(2, 7, 64)  # a batch of 2 sequences of 7 vectors
out, w = attn(x, x)  # self-attention: queries and keys from x
print("output", tuple(out.shape), "weights", tuple(w.shape))
assert out.shape == (2, 7, 16) and w.shape == (2, 7, 7)
# every row of weights is a distribution over the 7 keys
assert torch.allclose(w.sum(-1), torch.ones(2, 7))

# %% [markdown]
# ## Masks: padding and the future
#
# Sequences in a batch have different lengths, so the short ones are padded.
# A padded position is not a word: no query may read it. A **padding mask**
# marks the real keys; masked keys get a score of −∞ and therefore a weight of
# exactly 0. Say the second sequence has only 4 real positions:

# %%
lengths = torch.tensor([7, 4])
pad = padding_mask(lengths, 7)  # (B, 1, T): True on real keys
out, w = attn(x, x, pad)
print(w[1].detach().numpy().round(2))
assert torch.all(w[1, :, 4:] == 0)  # exactly zero, not just small
assert torch.allclose(w.sum(-1), torch.ones(2, 7))  # rows still sum to 1

# %% [markdown]
# Changing what sits in the padding cannot change the output of the real
# positions:

# %%
x_noisy = x.clone()
x_noisy[1, 4:] = 100 * torch.randn(3, 64)
out_noisy, _ = attn(x_noisy, x_noisy, pad)
assert torch.allclose(out[1, :4], out_noisy[1, :4], atol=1e-6)
print("padding content does not leak into the real positions")

# %% [markdown]
# A decoder that writes a sentence left to right must not look at words it
# has not written yet. A **causal mask** lets position *i* read positions
# 0..*i* only. The lesson writes it as a 0/1 float matrix,
# `torch.tril(torch.ones(n, n))`; the lab also takes a boolean one
# (`causal_mask(n)`). Both mean the same:

# %%
float_mask = torch.tril(torch.ones(7, 7))  # 1 = may look, 0 = may not
_, w_float = attn(x, x, float_mask)
_, w_bool = attn(x, x, causal_mask(7))
assert torch.equal(w_float, w_bool)
assert torch.all(w_bool.triu(diagonal=1) == 0)  # nothing above the diagonal
# output i does not change when the inputs after i change
x_future = x.clone()
x_future[:, 5:] = torch.randn(2, 2, 64)
out_a, _ = attn(x, x, causal_mask(7))
out_b, _ = attn(x_future, x_future, causal_mask(7))
assert torch.allclose(out_a[:, :5], out_b[:, :5], atol=1e-6)
print(w_bool[0].detach().numpy().round(2))

# %% [markdown]
# The two masks combine with `&`: a query may read a key only if the key is
# real *and* not in the future.

# %%
both = pad & causal_mask(7)  # (B, 7, 7)
_, w = attn(x, x, both)
assert torch.all(w[1, :, 4:] == 0) and torch.all(w[1].triu(1) == 0)

# %% [markdown]
# ## Look at `w[0]`: random inputs, then repeated tokens
#
# A heatmap of the weights shows who reads whom. On random inputs the
# pattern has no structure to find. Now build a sequence in which the same
# token occurs several times: identical inputs make identical queries and
# keys, so **their rows of weights are identical**, and every query gives the
# copies of a token the same weight.

# %%
torch.manual_seed(1)
vocab = torch.randn(3, 64)  # three distinct "tokens"
ids = torch.tensor([0, 1, 0, 2, 1, 0, 2])  # token 0 at 0, 2, 5; 1 at 1, 4; 2 at 3, 6
repeated = vocab[ids].unsqueeze(0)
random = torch.randn(1, 7, 64)
_, w_random = attn(random, random)  # self-attention: queries and keys from one input
_, w_repeat = attn(repeated, repeated)

fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
top = float(max(w_random.max(), w_repeat.max()).detach())  # one colour scale
for ax, weights, title in (
    (axes[0], w_random[0], "seven random vectors"),
    (axes[1], w_repeat[0], "tokens " + " ".join(map(str, ids.tolist()))),
):
    image = ax.imshow(weights.detach(), cmap="viridis", vmin=0, vmax=top)
    ax.set_title(title)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
fig.colorbar(image, ax=axes, label="attention weight")
fig.suptitle("Self-attention weights: each row sums to 1")
plt.show()

rows = w_repeat[0]
assert torch.allclose(rows[0], rows[2]) and torch.allclose(rows[0], rows[5])
assert torch.allclose(rows[:, 0], rows[:, 2]) and torch.allclose(rows[:, 1], rows[:, 4])
assert not torch.allclose(w_random[0, 0], w_random[0, 1], atol=0.05)

# %% [markdown]
# Self-attention on its own cannot tell the three copies of token 0 apart:
# it sees a **set**, not a sequence. That is why transformers add position
# information to their inputs, and why an RNN encoder (which reads in order)
# needs none.
#
# ## Mean-pooling is attention too
#
# Averaging the values is attention with fixed weights: `1/T` on every key,
# whatever the query. The lab's `mean` mode is exactly that. With all
# scores equal, the softmax gives uniform weights:

# %%
values = torch.randn(1, 7, 16)
uniform = torch.softmax(torch.zeros(1, 1, 7), dim=-1)  # equal scores
assert torch.allclose(uniform, torch.full((1, 1, 7), 1 / 7))
assert torch.allclose(uniform @ values, values.mean(dim=1, keepdim=True))
print("softmax of equal scores, then mix = the mean of the values")

# %% [markdown]
# **Max pooling** is not attention at all: it weighs no position. Each
# feature takes its largest value over the positions, so the pooled vector
# is pieced together from several positions at once, feature by feature,
# and no weights over whole positions give it back (unless one position
# holds every maximum):

# %%
pooled, source = values[0].max(dim=0)  # (16,): each feature's maximum, and where
print("position each feature's maximum came from:", source.tolist())
assert len(set(source.tolist())) > 1  # several positions at once
assert not any(torch.equal(pooled, row) for row in values[0])  # no single position

# %% [markdown]
# What attention adds over the mean is that the weights *depend on the
# query*: each decoder step can read a different part of the source.
# Notebook 3 measures what that buys a translation model.
#
# **Try it:** change `ids` above so that one token appears four times, or
# make every id the same token, and predict the heatmap before you run it.
