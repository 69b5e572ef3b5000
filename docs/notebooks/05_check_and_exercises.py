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
# # 5. Write attention, check your knowledge, change the model
#
# *About 30 minutes. Every cell runs in seconds; nothing trains.*
#
# Three parts, each checked by a cell that says "done" (or "right") or what
# is not yet so, without showing the answer:
#
# 1. **Write attention yourself**: the single-head step, checked against the
#    lab's module on shapes, values, masks and gradients.
# 2. **The knowledge check**: fourteen questions, the lesson's ten and four on
#    self-, causal and cross-attention, cost and depth (notebook 6). Answer
#    each in its cell, then run the cell.
# 3. **Three exercises** on the lab's model, each a list of config overrides.
#
# **You will be able to** write scaled dot-product attention with its masks
# from its definition; answer the core questions about attention; and change
# the lab's model through its config to test an idea of your own.
#
# **Before this notebook**: notebooks 1-4 (questions 11-14: notebook 6). A
# wrong answer is told why it is wrong; try again. The answers are in the
# teacher's edition (`docs/teacher/`), not here.

# %%
import math

import torch

from seq2seq.errors import UserError
from seq2seq.lesson.checkout import Checkout
from seq2seq.lesson.exercise import check_attention
from seq2seq.lesson.quiz import ask, check
from seq2seq.model.model import build_attention, build_model
from seq2seq.specials import BOS

home = Checkout.find()  # the lab's paths are spelled from the checkout

# %% [markdown]
# ## Part 1: write attention
#
# Write `attention(x_q, x_kv, w_q, w_k, w_v, mask=None)` for one head, from
# its definition (notebook 1):
#
# 1. **project**: Q = x_q W_q, K = x_kv W_k, V = x_kv W_v, each matrix
#    (d_model, d_k), so Q is (B, Tq, d_k) and K, V are (B, Tk, d_k);
# 2. **score**: Q Kᵀ, one score per query and key, (B, Tq, Tk);
# 3. **scale**: divide the scores by √d_k (notebook 2 says why);
# 4. **mask**: where `mask == 0` (it broadcasts to (B, Tq, Tk); a boolean
#    mask's False counts as 0), set the score to −∞, so that the key gets
#    exactly zero weight after the softmax;
# 5. **softmax** over the keys: the weights, (B, Tq, Tk);
# 6. **mix**: the weights times V, (B, Tq, d_k).
#
# Return `(output, weights)`.
#
# One case needs a decision: a query whose keys are *all* masked (a padded
# position reading a fully padded sentence, say). Its softmax is over a row
# of −∞ only, which is 0 / 0: NaN. A NaN in one row spreads into the loss and
# every gradient, so give such a query zero weights and a zero output: it
# reads nothing, because nothing may be read.
#
# Use only tensor operations (`@`, `transpose`, `masked_fill`,
# `torch.softmax`, ...), not the lab's attention modules: the check compares
# yours with them.


# %%
def attention(x_q, x_kv, w_q, w_k, w_v, mask=None):
    """Single-head scaled dot-product attention: (output, weights)."""
    raise NotImplementedError("write attention() here")


# %%
print(check_attention(attention))

# %% [markdown]
# ## Part 2: the knowledge check
#
# Each cell asks one question. Set `ANSWER_<n>` to the letter of your
# answer (`"a"`, or `"t"`/`"f"` for true or false) and run the cell: it
# says whether it is right, and why, or why not yet. Every answer can be
# checked against something you ran in notebooks 1-4 and 6.

# %%
ask("1")
ANSWER_1 = None  # your answer: a letter
check("1", ANSWER_1)

# %%
ask("2")
ANSWER_2 = None  # your answer: a letter
check("2", ANSWER_2)

# %%
ask("3")
ANSWER_3 = None  # your answer: a letter
check("3", ANSWER_3)

# %%
ask("4")
ANSWER_4 = None  # your answer: a letter
check("4", ANSWER_4)

# %%
ask("5")
ANSWER_5 = None  # your answer: a letter
check("5", ANSWER_5)

# %%
ask("6")
ANSWER_6 = None  # your answer: a letter
check("6", ANSWER_6)

# %%
ask("7")
ANSWER_7 = None  # your answer: a letter
check("7", ANSWER_7)

# %%
ask("8")
ANSWER_8 = None  # your answer: a letter
check("8", ANSWER_8)

# %%
ask("9")
ANSWER_9 = None  # your answer: a letter
check("9", ANSWER_9)

# %%
ask("10")
ANSWER_10 = None  # your answer: a letter
check("10", ANSWER_10)

# %%
ask("11")
ANSWER_11 = None  # your answer: a letter
check("11", ANSWER_11)

# %%
ask("12")
ANSWER_12 = None  # your answer: a letter
check("12", ANSWER_12)

# %%
ask("13")
ANSWER_13 = None  # your answer: a letter
check("13", ANSWER_13)

# %%
ask("14")
ANSWER_14 = None  # your answer: a letter
check("14", ANSWER_14)

# %% [markdown]
# ## Part 3: exercises
#
# Each exercise is a list of config overrides, the same strings you would
# pass to `seq2seq train --set`. Edit the list, run the cell below it, and
# read the verdict. Nothing trains here. To see what your change does to
# BLEU, train it: first `seq2seq prepare synth_ende` (the shipped corpus, in
# seconds), then `seq2seq train --config configs/synth_ende/additive.yaml
# --set ...` with your overrides, one `--set` each. Expect minutes, not
# seconds: the demo trains two such runs in 3.5-12 minutes on 2 cores (by the
# CPU; `configs/experiments/demo.yaml`), a wider model takes longer (the
# widest of the capacity sweep,
# `configs/experiments/capacity_synth_ende.yaml`, took 101 minutes; the sweep
# about 2 hours). Or copy an experiment file (say
# `configs/experiments/lesson.yaml`) to a new name, give the copy a `name:`
# of its own and your overrides, and run `seq2seq experiment` on the copy.
# The shipped experiment files stay as they are: the demo, the notebooks
# and the test suite read them.

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
# ### Exercise 1: score by a scaled dot product
#
# Make the decoder score each encoder state by h_tᵀ h_s / √d (Vaswani et
# al. 2017) instead of the additive score. `docs/config.md` lists the
# values of `model.attention`. A dot product needs queries and keys of one
# width: here the decoder state (256) already matches the encoder's two
# directions (2 × 128). Try a decoder of another width as well and read the
# loader's message.

# %%
EXERCISE_1 = []  # your overrides, e.g. ["model.x=y"]

cfg, model, error = built(EXERCISE_1)
if error:
    print("not yet, the config is refused:", error)
elif cfg.model.attention != "scaled_dot":
    print(f"not yet: the decoder scores with {cfg.model.attention!r}")
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
# ### Exercise 2: a single vector, read backwards
#
# Sutskever et al. (2014) found that reading the source backwards helps a
# model with no attention: the first source words, which the decoder needs
# first, are then the last ones the encoder read. Make a model without
# attention whose encoder reads the source once, from its last word to its
# first (docs/config.md has the encoder's keys).

# %%
EXERCISE_2 = []

cfg, model, error = built(EXERCISE_2)
if error:
    print("not yet, the config is refused:", error)
elif cfg.model.attention != "none":
    print("not yet: the decoder still attends to the encoder states")
elif cfg.model.encoder.bidirectional or not cfg.model.encoder.reverse:
    print("not yet: the encoder does not read the source once, right to left")
else:
    print("done: the encoder reads right to left; word 1 is the last it reads")

# %% [markdown]
# ### Exercise 3: a wider vector
#
# Is the bottleneck only a matter of size? Make a model without attention
# whose sentence vector, and the decoder state it starts, are twice as wide
# as in `configs/synth_ende/additive.yaml`. (The summary is the encoder's
# two directions, side by side; the decoder state has its own width.)

# %%
EXERCISE_3 = []

cfg, model, error = built(EXERCISE_3)
base_cfg, base_model, _ = built(["model.attention=none"])
if error:
    print("not yet, the config is refused:", error)
else:
    src = torch.tensor([[5, 6, 7, 8]])
    start = torch.tensor([[BOS]])  # the decoder's first input: all it needs
    width = model.read_source(src, torch.tensor([4]), start).summary.size(-1)
    base = base_model.read_source(src, torch.tensor([4]), start).summary.size(-1)
    state, base_state = (
        cfg.model.decoder.hidden_size,
        base_cfg.model.decoder.hidden_size,
    )
    if cfg.model.attention != "none":
        print("not yet: the decoder still attends to the encoder states")
    elif width != 2 * base or state != 2 * base_state:
        print(
            f"not yet: the summary is {width} wide and the decoder state "
            f"{state}: both should be twice the base config's"
        )
    else:
        print(
            f"done: a {width}-wide vector, {model.num_parameters():,} parameters "
            f"against {base_model.num_parameters():,}"
        )
