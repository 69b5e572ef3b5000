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
# # 5. Knowledge check and exercises
#
# *About 15 minutes. Runs in seconds.*
#
# Ten questions about attention, each answered by running code against the
# lab's modules rather than by recalling a sentence; then three exercises,
# each with a cell that says whether your change worked.
#
# **You will be able to** answer the core questions about attention from
# code you can run, and change the lab's model through its config overrides
# to test an idea of your own.
#
# **Before this notebook**: notebooks 1-4. The answers to the exercises are
# in the teacher's notebook (`teacher_answers`), not here.

# %%
import math
import os
from pathlib import Path

import torch

from seq2seq import modes
from seq2seq.errors import UserError
from seq2seq.lab.demo import DEMO_FILE
from seq2seq.lab.evaluate import saved_evaluation
from seq2seq.lesson.attention import SingleHeadAttention, causal_mask
from seq2seq.lesson.checkout import Checkout
from seq2seq.model.attention import Additive, attend
from seq2seq.model.model import build_attention, build_model

home = Checkout.find()  # the lab's paths are spelled from the checkout
torch.set_grad_enabled(False)  # nothing here trains
torch.manual_seed(0)
attn = SingleHeadAttention(d_model=32, d_k=8)
x = torch.randn(1, 6, 32)

# %% [markdown]
# **1. In one line, what does Attention(Q, K, V) compute?** It scores the
# queries against the keys, turns the scores into weights with a softmax and
# mixes the values with them: softmax(score(Q, K)) V. Written out by hand, it
# is what the module returns:

# %%
q, k, v = attn.w_q(x), attn.w_k(x), attn.w_v(x)
by_hand = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(8), dim=-1) @ v
out, w = attn(x, x)
assert torch.allclose(out, by_hand, atol=1e-6)
print("softmax(Q K^T / sqrt(d_k)) V == SingleHeadAttention(x, x)")

# %% [markdown]
# **2. Does attention, as usually built, pick one position?** No: the
# softmax gives every key some weight. Count the keys each query reads:

# %%
print("keys with weight > 1e-3, per query:", (w[0] > 1e-3).sum(-1).tolist())
assert (w[0] > 1e-3).sum(-1).min() > 1

# %% [markdown]
# **3. What does a soft attention layer hand back: a position, a blend of
# the values, or the keys?** A blend: the output is the weights times the
# values.

# %%
assert torch.allclose(out, w @ v, atol=1e-6)

# %% [markdown]
# **4. What are the four steps, in order?** Project, score, softmax, mix.
# The lab's `Additive` attention exposes them: `project_keys` (U k, once per
# sentence), `scores` (W q and vᵀ tanh(W q + U k)), then the softmax and
# the module function `attend` (the mix). Chaining them by hand gives its
# forward:

# %%
additive = Additive(query_dim=16, key_dim=32, hidden_dim=8)
query, keys = torch.randn(1, 16), torch.randn(1, 6, 32)
mask = torch.ones(1, 6, dtype=torch.bool)
projected = additive.project_keys(keys, mask)  # 1. project (U k)
scores = additive.scores(query, projected)  # 2. score  v^T tanh(W q + U k)
weights = torch.softmax(scores, dim=-1)  # 3. softmax
context = attend(weights, keys)  # 4. mix
ref_context, ref_weights = additive(query, keys, mask)
assert torch.allclose(context, ref_context, atol=1e-6)
print("project -> score -> softmax -> mix == Additive.forward")

# %% [markdown]
# **5. In an encoder's self-attention, may a word read the words after
# it?** Yes, an encoder sees the whole sentence at once: with no causal mask
# the first position reads later ones; a decoder's causal mask forbids it.

# %%
_, w_enc = attn(x, x)
_, w_dec = attn(x, x, causal_mask(6))
print(
    "weight of query 0 on later keys:",
    round(float(w_enc[0, 0, 1:].sum()), 3),
    "unmasked;",
    float(w_dec[0, 0, 1:].sum()),
    "causal",
)
assert w_enc[0, 0, 1:].sum() > 0 and w_dec[0, 0, 1:].sum() == 0

# %% [markdown]
# **6. In cross-attention, which side asks?** The decoder: its states are
# the queries, the encoder's are the keys and values. The weights have one
# row per decoder position and one column per encoder position:

# %%
decoder_states, encoder_states = torch.randn(1, 4, 32), torch.randn(1, 9, 32)
_, w_cross = attn(decoder_states, encoder_states)
print("cross-attention weights:", tuple(w_cross.shape), "= (batch, target, source)")
assert w_cross.shape == (1, 4, 9)

# %% [markdown]
# **7. What did attention fix in RNN encoder–decoders?** The decoder no
# longer depends on one summary of the source: at every step it may look at
# every encoder state. Notebook 3 measured it on the demo's runs; if they are
# there, here are their scores on the shortest and the longest sentences:

# %%
demo_runs = home.run_dirs(Path(os.environ.get("LESSON_DEMO", DEMO_FILE)))
for mode, run_dir in demo_runs.items():
    if result := saved_evaluation(run_dir, "test"):
        first, last = result.buckets[0], result.buckets[-1]
        print(
            f"{mode}: BLEU {first.bleu:.1f} on {first.lo}-{first.hi} words,"
            f" {last.bleu:.1f} on {last.lo}-{last.hi}"
        )
    else:
        print(f"{mode}: not trained yet (make demo, or notebook 3)")

# %% [markdown]
# **8. Does a heatmap tell you why the model wrote a word?** Not by itself.
# Notebook 4 found a pair translated exactly right whose weights, on some of
# its words, point away from the gold alignment; the ablations showed that
# the model depends on where its weights point, which is a different claim.
#
# **9. How does the cost of full attention grow with the length n?** With
# n²: there is one weight per query-key pair, so doubling n quadruples the
# weight matrix:

# %%
sizes = {}
for n in (64, 128, 256):
    _, w_n = attn(torch.randn(1, n, 32), torch.randn(1, n, 32))
    sizes[n] = w_n.numel()
print(sizes)
assert sizes[128] == 4 * sizes[64] and sizes[256] == 4 * sizes[128]

# %% [markdown]
# **10. Which part of attention does the next lesson open up?** The
# comparison of a query with a key: the score function. The lab has one
# registry of them (`seq2seq/modes.py`); each is a value of
# `model.attention`:

# %%
print(", ".join(modes.names()))
assert {"additive", "dot", "scaled_dot", "general"} <= set(modes.names())

# %% [markdown]
# ## Exercises
#
# Each exercise is a list of config overrides, the same strings you would
# pass to `seq2seq train --set`. Edit the list, run the cell below it, and
# read the verdict. Nothing trains here. To see what your change does to
# BLEU, train it: `seq2seq train --config configs/synth_ende/additive.yaml
# --set ...` with your overrides, one `--set` each; or copy an experiment
# file (say `configs/experiments/lesson.yaml`) to a new name, give the copy a
# `name:` of its own and your overrides, and run `seq2seq experiment` on the
# copy. The shipped experiment files stay as they are: the demo, the
# notebooks and the test suite read them.

# %%
BASE = "configs/synth_ende/additive.yaml"


def built(overrides: list[str]):
    """The config and model these overrides give, or the config error."""
    try:
        cfg = home.config(BASE, overrides)
    except UserError as err:
        return None, None, str(err)
    return cfg, build_model(cfg.model, 1300, 1300), None


# %% [markdown]
# ### Exercise 1: swap `additive` for `scaled_dot`
#
# Change `model.attention`. A dot product needs queries and keys of one
# width: here the decoder state (256) already matches the encoder's two
# directions (2 × 128). Try `model.decoder.hidden_size=128` as well and read
# the loader's message.

# %%
EXERCISE_1 = ["model.attention=additive"]

cfg, model, error = built(EXERCISE_1)
if error:
    print("not yet, the config is refused:", error)
elif cfg.model.attention != "scaled_dot":
    print(f"not yet: the decoder still uses {cfg.model.attention!r}")
else:
    query_dim, key_dim = (
        cfg.model.decoder.hidden_size,
        2 * cfg.model.encoder.hidden_size,
    )
    att = build_attention(cfg.model, query_dim, key_dim)  # the part the model holds
    keys = torch.randn(2, 5, key_dim)  # (B, S, 2H)
    _, w = att(torch.randn(2, query_dim), keys, torch.ones(2, 5, dtype=torch.bool))
    assert torch.allclose(w.sum(-1), torch.ones(2))
    print(
        f"done: {type(att).__name__}, weights sum to 1; scores divided by "
        f"sqrt({keys.size(-1)}) = {math.sqrt(keys.size(-1)):.1f}"
    )

# %% [markdown]
# ### Exercise 2: train `none` with a reversed source
#
# Sutskever et al. (2014) found that reading the source backwards helps a
# model with no attention: the first source words, which the decoder needs
# first, are then the last ones the encoder read. Make the model `none` with
# a unidirectional encoder that reads right to left.

# %%
EXERCISE_2 = ["model.attention=none"]

cfg, model, error = built(EXERCISE_2)
if error:
    print("not yet, the config is refused:", error)
elif cfg.model.attention != "none":
    print("not yet: use model.attention=none")
elif not cfg.model.encoder.reverse:
    print("not yet: the encoder reads left to right (see model.encoder.reverse)")
else:
    # reading right to left, the state at word j has seen words j..n only:
    # changing word 1 may change the summary but no later state
    one, other = torch.tensor([[5, 6, 7, 8]]), torch.tensor([[9, 6, 7, 8]])
    states = [model.encode(src, torch.tensor([4])).keys for src in (one, other)]
    later_same = torch.allclose(states[0][:, 1:], states[1][:, 1:])
    if later_same:
        print("done: the encoder reads right to left; word 1 is the last it reads")
    else:
        print(
            "not yet: changing word 1 changed later states, so it reads left to right"
        )

# %% [markdown]
# ### Exercise 3: double the vector
#
# Is the bottleneck only a matter of size? Give `none` a sentence vector
# twice as wide. (In this config the summary is the encoder's two directions,
# 2 × `model.encoder.hidden_size`, and the decoder state is
# `model.decoder.hidden_size`.)

# %%
EXERCISE_3 = ["model.attention=none"]

cfg, model, error = built(EXERCISE_3)
base_cfg, base_model, _ = built(["model.attention=none"])
if error:
    print("not yet, the config is refused:", error)
else:
    src = torch.tensor([[5, 6, 7, 8]])
    width = model.encode(src, torch.tensor([4])).final.size(-1)
    base = base_model.encode(src, torch.tensor([4])).final.size(-1)
    state, base_state = (
        cfg.model.decoder.hidden_size,
        base_cfg.model.decoder.hidden_size,
    )
    if cfg.model.attention != "none":
        print("not yet: keep model.attention=none")
    elif width != 2 * base or state != 2 * base_state:
        print(
            f"not yet: the summary is {width} wide (asked: {2 * base}), "
            f"the decoder state {state} (asked: {2 * base_state})"
        )
    else:
        print(
            f"done: a {width}-wide vector, {model.num_parameters():,} parameters "
            f"against {base_model.num_parameters():,}"
        )
