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
# # 6. Where attention appears: self, causal and cross-attention
#
# *About 30 minutes of reading. The first code cell reads the three runs of
# `configs/experiments/families_synth_ende.yaml` if you have trained them;
# if not, it trains them first: about 10 minutes on 2 cores of an Intel
# Xeon, up to three times that on a slower CPU, and it tells you so. Every other cell runs in seconds, or
# says how long it takes: about 3 minutes for the whole notebook after that.*
#
# **You will be able to**
#
# - locate attention inside encoder and decoder stacks: self-attention over
#   the source, causal self-attention over the target prefix,
#   cross-attention from the decoder to the encoder, and the RNN's attention
#   as one more cross-attention;
# - show that the causal mask keeps the future out, and what happens when it
#   is taken away;
# - measure what attention costs as the input grows, and why it is n²;
# - say why a deep stack needs residual connections and normalisation, from
#   a measured loss and gradient;
# - answer "attention is only for translation alignment" with an output.
#
# **Before this notebook**: notebooks 1 (what attention computes) and 3 (the
# bottleneck). The corpus is the one the lab ships: synthetic
# English→German with the true word alignment of every pair.
#
# Where notebook 3 ended, attention rescued the RNN encoder–decoder from its
# single vector. The Transformer (Vaswani et al. 2017) then made attention
# the main layer: no recurrence at all, attention in every layer of both
# stacks, in three kinds.

# %% [markdown]
# ## Parameters
#
# `FAMILIES` is the experiment file of the runs read here: `none`,
# `additive` and a `transformer`, each with its own recipe. The test suite
# points `LESSON_FAMILY_RUNS` at small runs it has trained already
# (docs/lesson.md), so that the notebook runs in seconds there; the copy of
# this notebook you are reading was built with the defaults.

# %%
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from IPython.display import display

from seq2seq.data.batching import collate
from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.lab.evaluate import cached_evaluate
from seq2seq.lesson.alignments import forced_alignments
from seq2seq.lesson.attention import SingleHeadAttention
from seq2seq.lesson.checkout import Checkout
from seq2seq.lesson.pooling import GRID, SIDE, pictures, train_pooling
from seq2seq.lesson.toy import (
    GUESSING,
    reversal_accuracy,
    teacher_forced_loss,
    train_reversal,
)
from seq2seq.model.transformer.config import TransformerConfig
from seq2seq.training.checkpoint import open_run
from seq2seq.training.figures import bleu_length_figure
from seq2seq.training.scoring import aer_by_map

# %matplotlib inline
plt.rcParams.update({"font.size": 12, "figure.dpi": 90})  # legible on a slide

home = Checkout.find()  # the lab's paths are spelled from the checkout
FAMILIES = Path(
    os.environ.get("LESSON_FAMILIES", "configs/experiments/families_synth_ende.yaml")
)
if given := os.environ.get("LESSON_FAMILY_RUNS"):  # the test suite's runs
    runs = {name: Path(path) for name, path in json.loads(given).items()}
else:
    runs = home.run_dirs(FAMILIES)
    if not all(p.joinpath("best.pt").is_file() for p in runs.values()):
        print("The runs are not there yet: training them now (about 10 minutes).")
    home.experiment(FAMILIES)  # trains what is missing, evaluates, compares
print({name: str(path) for name, path in runs.items()})

# %% [markdown]
# ## 1. The stack, with every attention named
#
# A Transformer encoder layer is self-attention, then a position-wise
# feed-forward network; a decoder layer is causal self-attention,
# cross-attention, then the feed-forward network. Each sublayer sits inside
# a residual connection with a LayerNorm (section 6 shows why). All three
# attentions are the same computation, softmax(QKᵀ/√d_k)V; what differs is
# where Q, K and V come from and what the mask allows.

# %%
fig, ax = plt.subplots(figsize=(10, 5.2))
ax.set_axis_off()
ax.set_xlim(0, 10)
ax.set_ylim(0, 6)


def box(x: float, y: float, text: str, colour: str, w: float = 3.2) -> None:
    ax.add_patch(plt.Rectangle((x, y), w, 0.8, color=colour, alpha=0.85))
    ax.text(x + w / 2, y + 0.4, text, ha="center", va="center", fontsize=10)


def arrow(x0: float, y0: float, x1: float, y1: float, text: str = "") -> None:
    ax.annotate("", (x1, y1), (x0, y0), arrowprops={"arrowstyle": "->", "lw": 1.5})
    if text:
        ax.text((x0 + x1) / 2 + 0.1, (y0 + y1) / 2, text, fontsize=9)


ax.text(2.1, 5.6, "encoder layer (× L)", ha="center", fontsize=12)
ax.text(7.6, 5.6, "decoder layer (× L)", ha="center", fontsize=12)
box(0.5, 0.3, "source words + positions", "lightgrey")
box(0.5, 1.7, "self-attention\n(bidirectional: all source)", "tab:blue")
box(0.5, 3.1, "feed-forward", "lightgrey")
box(6.0, 0.3, "target prefix + positions", "lightgrey")
box(6.0, 1.5, "causal self-attention\n(position t reads ≤ t)", "tab:orange")
box(6.0, 2.8, "cross-attention\nQ: decoder · K, V: encoder", "tab:green")
box(6.0, 4.1, "feed-forward → next word", "lightgrey")
arrow(2.1, 1.1, 2.1, 1.7)
arrow(2.1, 2.5, 2.1, 3.1)
arrow(7.6, 1.1, 7.6, 1.5)
arrow(7.6, 2.3, 7.6, 2.8)
arrow(7.6, 3.6, 7.6, 4.1)
arrow(3.7, 3.5, 6.0, 3.2, "K, V")
box(
    0.5,
    4.5,
    "RNN: additive attention = cross-attention\n"
    "Q: decoder state h_t · K, V: encoder states",
    "tab:green",
    w=4.6,
)
ax.set_title("Where attention appears (residual + LayerNorm around every box)")
display(fig)
plt.close(fig)

# %% [markdown]
# Each box is one attribute in the lab's code. The cell below reads the
# files, so that a renamed attribute fails here instead of misleading you:
#
# | attention | where | Q from | K, V from | mask |
# |---|---|---|---|---|
# | encoder self | `EncoderLayer.self_attn` (1) | source | source | padding |
# | decoder self | `DecoderLayer.self_attn` (1) | target | target | padding, causal |
# | cross | `DecoderLayer.cross_attn` (1) | decoder | encoder | source padding |
# | the RNN's | `Decoder.attention` (2) | h_t | encoder states | source padding |
#
# (1) seq2seq/model/transformer/layers.py, (2) seq2seq/model/decoder.py
#
# The RNN's additive attention of notebooks 3 and 4 *is* a cross-attention:
# one query per decoder step, over the encoder's states. It has no
# self-attention: its recurrence carries each side's context instead.

# %%
layers_py = home.path("seq2seq/model/transformer/layers.py").read_text()
decoder_py = home.path("seq2seq/model/decoder.py").read_text()
for needle, text in [
    ("self.self_attn, self.sub_attn = spec.attention()", layers_py),
    ("self.cross_attn, self.sub_cross = spec.attention()", layers_py),
    ("self.attention = ", decoder_py),
]:
    assert needle in text, needle
print("every attention of the table is where it says")

# %% [markdown]
# ## 2. Three trained maps of one test sentence
#
# One test pair with its reference fed in (forced decoding), through the
# trained Transformer. Which layer and head to draw? The lab's rule (its
# *display policy*, docs/model.md) is the last layer with its heads
# averaged: the map that scores best against the gold word alignment. The
# cell measures that over 300 test pairs first: the AER (alignment error
# rate, lower is better) of each layer's cross-attention.

# %%
transformer = runs["transformer"]
opened = open_run(transformer, "best", torch.device("cpu"))
model, tok, cfg = opened.model, opened.tok, opened.cfg
pairs = load_split(cfg.data, "test")
data = encode(pairs, tok)
first = list(range(min(300, len(pairs))))
batches = [first[k : k + 50] for k in range(0, len(first), 50)]
with torch.no_grad():
    aer = aer_by_map(model, data, tok, batches, torch.device("cpu"))
layers = max(layer for layer, _ in aer) + 1
for layer in range(layers):
    heads = {h: v for (at, h), v in aer.items() if at == layer and h is not None}
    best = min(heads, key=heads.get)
    print(
        f"layer {layer + 1}: AER {aer[(layer, None)]:.3f} with its heads averaged, "
        f"{heads[best]:.3f} for its best head ({best + 1})"
    )
last = aer[(layers - 1, None)]
print(f"drawn below: layer {layers} (the last), heads averaged, AER {last:.3f}")

# %% [markdown]
# Now the three maps of that layer for one sentence: a test pair of 8 to 12
# words in which a word comes twice (you will see why in section 4).


# %%
def repeated(sentence: str) -> bool:
    words = sentence.lower().rstrip(".").split()
    return len(set(words)) < len(words)


candidates = [i for i, s in enumerate(pairs.src) if 8 <= len(s.split()) <= 12]
pick = next((i for i in candidates if repeated(pairs.src[i])), candidates[0])
(pair,) = forced_alignments(transformer, "test", [pick])
maps = pair.maps
print("source:   ", pair.source)
print("reference:", pair.reference)
cross_words, src_words, tgt_words = pair.words()  # the cross map by word
views = [
    ("encoder self-attention", maps.encoder_self[0, -1].mean(0), pair.src, pair.src),
    (
        "decoder self-attention (causal)",
        maps.decoder_self[0, -1].mean(0),
        pair.tgt,
        pair.tgt,
    ),
    ("cross-attention (by word; o: gold)", cross_words, src_words, tgt_words),
]
fig, axes = plt.subplots(1, 3, figsize=(17, 6.2))
for ax, (title, weights, keys, queries) in zip(axes, views, strict=True):
    ax.imshow(weights.numpy(), cmap="viridis", vmin=0, vmax=1)  # rows: queries
    ax.set_xticks(range(len(keys)), labels=keys, rotation=90, fontsize=8)
    ax.set_yticks(range(len(queries)), labels=queries, fontsize=8)
    ax.set_title(title, fontsize=11)
for s, t in pair.gold:  # (source word, target word)
    axes[2].plot(s, t, "o", mfc="none", mec="red", ms=9)
fig.tight_layout()
display(fig)
plt.close(fig)

# %% [markdown]
# Read them as rows: each row is one query's distribution over the keys.
#
# - **Encoder self-attention** (source × source) is a full square: every
#   source word may read every other, before and after it. That is what
#   "bidirectional" means here.
# - **Decoder self-attention** (target × target) is a lower triangle: the
#   word at position t reads the words at 1..t, never a later one. The cell
#   below checks that the upper triangle is exactly zero, not merely small.
# - **Cross-attention** (target × source) is the alignment: each German
#   word's row lights up at the English word it translates, as the RNN's
#   additive attention did in notebook 3. Its AER for this pair is below.

# %% tags=["causal-map"]
causal = maps.decoder_self[0]  # (layers, heads, T, T), every layer and head
above = torch.ones(causal.shape[-2:], dtype=torch.bool).triu(1)
print(f"decoder self-attention above the diagonal: max {causal[..., above].max():.1f}")
print(f"cross-attention AER on this pair: {pair.aer():.3f}")
assert causal[..., above].max() == 0.0

# %% [markdown]
# ## 3. No future leakage, and what the mask is for
#
# While training, the decoder reads the whole reference at once (teacher
# forcing), so nothing but the causal mask stops position t from reading
# the word it must predict. On the trained model: change the reference
# after position 3, and the outputs at positions 1..3 must not move at all.

# %%
batch = collate(data.src_ids, data.tgt_ids, [pick])
changed = batch.tgt_in.clone()
changed[0, 4:] = torch.randint(4, tok.tgt_vocab_size, changed[0, 4:].shape)
with torch.no_grad():
    before, _ = model(batch.src, batch.src_len, batch.tgt_in)
    after, _ = model(batch.src, batch.src_len, changed)
moved = (after - before).abs().amax(-1)[0]  # (T,): how far each position moved
print("largest change at positions 1-4:", f"{moved[:4].max():.1e}")
print("largest change after them:      ", f"{moved[4:].max():.2f}")
assert moved[:4].max() < 1e-5 and moved[4:].max() > 1e-2

# %% [markdown]
# What is the mask for, then? Train the same small Transformer with and
# without it (`causal: false`, the lab's ablation) on two tasks that take
# seconds (seq2seq/lesson/toy.py): reversing a sequence of random symbols,
# and a *random* target, as many symbols as the source but drawn apart from
# it, which nothing can predict. Without the mask, position t may read the
# input at t + 1, which *is* the answer under teacher forcing. (About 20
# seconds on 2 cores.)

# %%
small = TransformerConfig(
    layers=2, heads=4, d_model=64, ffn=128, dropout=0.0, attention_dropout=0.0
)
runs_by_task = {
    task: {
        "causal mask": train_reversal(small, steps=300, target=task),
        "no causal mask": train_reversal(
            replace(small, causal=False), steps=300, target=task
        ),
    }
    for task in ("reversed", "random")
}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True)
for ax, (task, pair_of_runs) in zip(axes, runs_by_task.items(), strict=True):
    for name, run in pair_of_runs.items():
        ax.plot(run.losses, label=name)
    if task == "random":
        ax.axhline(GUESSING, color="grey", linestyle=":", label="guessing")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_title("target: " + ("the source reversed" if task == "reversed" else task))
    ax.legend()
axes[0].set_ylabel("training loss per token")
display(fig)
plt.close(fig)
loss = {
    (task, name): teacher_forced_loss(run.model, target=task)
    for task, pair_of_runs in runs_by_task.items()
    for name, run in pair_of_runs.items()
}
reversed_right = {
    name: reversal_accuracy(run.model) for name, run in runs_by_task["reversed"].items()
}
for name, right in reversed_right.items():
    print(
        f"{name:>15}: reversal: teacher-forced loss {loss['reversed', name]:.3f}, "
        f"reversed exactly by greedy search {right:.0%}; "
        f"random target: loss {loss['random', name]:.3f}"
    )
print(f"{'':>15}  guessing the random target scores {GUESSING:.2f}")

# %% [markdown]
# On the reversal both models reach a low loss (the task is easy either
# way), yet the one without the mask reverses nothing: it learned to copy
# the next input, which search never has (at step t only the words written
# so far exist). The random target shows what its loss measured: the
# masked model cannot beat guessing, as nothing that reads only the past
# can, while the other's loss falls near 0 by reading the answer. A loss
# under teacher forcing is only honest when the decoder cannot see what it
# predicts.

# %%
masked, leaky = "causal mask", "no causal mask"
assert reversed_right[leaky] < 0.1 < 0.5 < reversed_right[masked]
assert loss["random", leaky] < 0.5 < 2.0 < loss["random", masked]

# %% [markdown]
# ## 4. Self-attention before and after training
#
# Notebook 1 looked at one *untrained* self-attention layer: on random
# vectors every row is a different smear; on a sentence with a repeated
# word and no positions, the two copies get identical rows, because a layer
# that sees only word vectors cannot tell them apart. The trained encoder
# adds positions to the words. Compare the rows of the two copies of the
# repeated word in the sentence of section 2:

# %%
torch.manual_seed(0)
untrained = SingleHeadAttention(d_model=32, d_k=8)
words = pair.source.lower().rstrip(".").split()
table = {w: torch.randn(32) for w in words}
x = torch.stack([table[w] for w in words])[None]  # (1, n, 32): no positions
with torch.no_grad():
    _, w_untrained = untrained(x, x)
twice = next((w for w in words if words.count(w) > 1), None)
if twice is not None:
    a, b = [k for k, w in enumerate(words) if w == twice][:2]
    pieces = [p.lstrip("▁").lower() for p in pair.src]
    pa, pb = [k for k, p in enumerate(pieces) if p == twice][:2]
    enc = maps.encoder_self[0, -1].mean(0)  # (S, S)
    same = (w_untrained[0, a] - w_untrained[0, b]).abs().max()
    apart = (enc[pa] - enc[pb]).abs().max()
    print(f"'{twice}' at words {a + 1} and {b + 1}:")
    print(f"  untrained, no positions: rows differ by at most {same:.1e}")
    print(f"  trained encoder, layer {layers}: rows differ by up to {apart:.2f}")
    assert same < 1e-6 and apart > same
else:
    print("this sentence has no repeated word (a small corpus in the test suite)")

# %% [markdown]
# In the trained encoder's map (section 2, left) the structure is not a
# smear: most rows put their weight on a few nearby words, the words of the
# same phrase, and the two copies of the repeated word read different
# neighbours. The encoder builds each word's vector from its context, which
# is what the decoder's cross-attention then reads.

# %% [markdown]
# ## 5. What attention costs: n² in the input's length
#
# Every query meets every key, so one self-attention layer over n positions
# forms n × n weights: doubling the input quadruples them. An RNN encoder
# reads the positions one after another: twice the input, twice the work.
# The cell runs the lab's measurement (scripts/bench/attention_cost.py, the
# table of docs/speed.md): one forward pass of each encoder over 8 inputs of
# n = 64 ... 2048 positions, each in a process of its own, and fits the
# slope of log(cost) against log(n) from 256 on. (About 10 seconds on 2
# cores.)

# %% tags=["cost-slopes"]
script = home.path("scripts/bench/attention_cost.py")
done = subprocess.run(
    [sys.executable, str(script), "--json", "--repeats", "3"]
    + ["--threads", str(torch.get_num_threads())],  # as the cells above
    capture_output=True,
    text=True,
    check=True,
    cwd=home.root,
)
cost = json.loads(done.stdout)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for kind, by_length in cost["rows"].items():
    n = sorted(by_length, key=int)
    slope = cost["slopes"][kind]
    for ax, what in ((left, "ms"), (right, "peak_mib")):
        label = f"{kind} (slope {slope[what]:.2f})"
        ax.plot([int(k) for k in n], [by_length[k][what] for k in n], "o-", label=label)
for ax, what in ((left, "time of one pass (ms)"), (right, "memory at its peak (MiB)")):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("input length n")
    ax.set_ylabel(what)
    ax.legend(fontsize=9)
fig.tight_layout()
display(fig)
plt.close(fig)
for kind, slope in cost["slopes"].items():
    print(
        f"{kind:>22}: time slope {slope['ms']:.2f}, "
        f"memory slope {slope['peak_mib']:.2f}"
    )

# %% [markdown]
# A slope of 2 on a log–log plot is n², a slope of 1 is n. The attention
# layer that keeps its weights (as drawing them needs) grows about as n² in
# time, the RNN about as n. Its memory slope is lower than 2 over this range
# (the process's fixed buffers weigh at the shorter lengths) but well above
# the RNN's: the n × n weights of every head are kept. Torch's fused kernel
# computes the same output without keeping them, so its memory grows like
# the RNN's, while its time still grows faster. At sentence lengths (under
# about 256) attention is the *cheaper* encoder: the cost bites on long
# inputs (documents, audio, images cut into many patches).

# %%
slopes = cost["slopes"]
assert slopes["self-attention"]["ms"] >= 1.6 and slopes["biGRU"]["ms"] <= 1.3
assert slopes["self-attention"]["peak_mib"] > slopes["biGRU"]["peak_mib"] + 0.3

# %% [markdown]
# ## 6. Why deep stacks need residuals and LayerNorm
#
# A sublayer's output is added to its input (the residual connection, He et
# al. 2016) and normalised (LayerNorm, Ba et al. 2016); the lab puts the
# norm before each sublayer (pre-norm). Take them away one at a time from a
# deeper stack, 4 encoder and 4 decoder layers, and train each version on
# the reversal task for 300 steps. Two things are measured: the training
# loss, and the size of the gradient that reaches each layer at the first
# step. (About 25 seconds on 2 cores.)

# %% tags=["deep-stack"]
deep = replace(small, layers=4)
versions = {
    "residual + norm": train_reversal(deep, steps=300),
    "no residual": train_reversal(replace(deep, residual=False), steps=300),
    "no norm": train_reversal(replace(deep, norm="none"), steps=300),
}
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
for name, run in versions.items():
    left.plot(run.losses, label=name)
    names = list(run.gradients)
    right.plot(
        range(len(names)),
        [max(g, 1e-12) for g in run.gradients.values()],
        "o-",
        label=name,
    )
right.set_xticks(range(len(names)), labels=names, rotation=45, fontsize=9)
left.set(yscale="log", xlabel="step", ylabel="training loss per token")
right.set(yscale="log", ylabel="gradient norm at step 1")
left.legend()
fig.tight_layout()
display(fig)
plt.close(fig)
for name, run in versions.items():
    g = run.gradients
    print(
        f"{name:>16}: loss {sum(run.losses[:20]) / 20:8.3f} over the first 20 "
        f"steps, {sum(run.losses[-20:]) / 20:8.3f} over the last 20, "
        f"reversed {reversal_accuracy(run.model):4.0%}, gradient at decoder "
        f"layer 1 {g['decoder 1']:.1e}, largest {max(g.values()):.1e}"
    )

# %% [markdown]
# - **Without residuals**, the decoder's first layer gets next to no
#   gradient (under a thousandth of the full stack's, asserted below; none at
#   all in the copy you are reading): with no identity path, a decoder layer
#   reaches the next only through that layer's attention scores, and the
#   signal from the loss fades to nothing on its way down. (The encoder's layers still
#   get theirs: every decoder layer reads the encoder's output directly, as
#   its cross-attention's keys and values.) The loss stays near where it
#   started.
# - **Without the norm**, the residual stream grows with every layer and
#   the gradients are over a hundred times larger (the largest, printed above).
#   The loss does not blow up: it starts far above the others' (the outputs'
#   scores are huge, so wrong words get confident probabilities) and falls
#   (asserted below), but after 300 steps it is still many times the full
#   stack's, and the task is not learned.
# - **With both**, each layer adds a correction to an identity path the
#   gradient can travel unchanged, at a size the norm keeps in range: it is
#   the only version that learns the task.

# %%
ok, no_res, no_norm = versions.values()
final = {name: sum(run.losses[-20:]) / 20 for name, run in versions.items()}
first = {name: sum(run.losses[:20]) / 20 for name, run in versions.items()}
# It falls (71 to 37 in the first and last 20 steps on an AMD EPYC Zen 3).
assert first["no norm"] > 1.3 * final["no norm"], (first, final)
assert final["residual + norm"] < 0.5 * min(final["no residual"], final["no norm"])
assert no_res.gradients["decoder 1"] < 1e-3 * ok.gradients["decoder 1"]
assert max(no_norm.gradients.values()) > 100 * max(ok.gradients.values())

# %% [markdown]
# ## 7. The end of the bottleneck's story
#
# BLEU by source length for the three runs on the shipped corpus: the RNN
# with one vector (`none`), the RNN with attention (`additive`) and the
# Transformer, attention everywhere (docs/results.md has the same table
# with its command and metadata).

# %% tags=["families-table"]
results = {name: cached_evaluate(path, "test", "cpu") for name, path in runs.items()}
print("test BLEU by source length (words):")
buckets = results["none"].buckets
print(f"{'':<12}" + "".join(f"{b.lo:>4}-{b.hi:<3}" for b in buckets))
for name, r in results.items():
    print(f"{name:<12}" + "".join(f"{b.bleu:>8.1f}" for b in r.buckets))
fig = bleu_length_figure([(name, r.buckets) for name, r in results.items()])
display(fig)
plt.close(fig)

# %% [markdown]
# One vector falls with length; attention, in either family, loses little:
# compare each row's first and last figures above. The Transformer reaches
# the RNN-with-attention's quality with no recurrence at all, and its
# attention is the whole model.

# %% [markdown]
# ## 8. Not only for translation
#
# A common misconception: attention is a trick for aligning words in
# translation. It is a general layer: a learned, differentiable choice of
# what to read from a set. Here it reads a picture (seq2seq/lesson/
# pooling.py): a 3 × 3 grid of patches, each with a bar, upright or lying;
# one patch has a frame, and the label is the framed patch's bar. Two
# classifiers see the same patch embeddings and differ only in how they
# pool them into one vector: their mean, or attention with one learned
# query. (About 5 seconds on 2 cores.)

# %%
mean = train_pooling(attention=False)
attending = train_pooling(attention=True)
print(f"mean pooling:      accuracy {mean.accuracy:.0%}")
print(
    f"attention pooling: accuracy {attending.accuracy:.0%}, weight on the framed "
    f"patch {attending.on_frame:.2f} (the mean gives every patch {1 / GRID**2:.2f})"
)
image, label, framed = pictures(4, torch.Generator().manual_seed(7))
with torch.no_grad():
    _, weights = attending.model(image)
fig, axes = plt.subplots(1, 4, figsize=(12, 3.4))
for k, ax in enumerate(axes):
    ax.imshow(image[k].numpy(), cmap="gray")
    for p in range(GRID * GRID):
        row, col = divmod(p, GRID)
        w = float(weights[k, p])
        ax.text(
            col * SIDE + SIDE / 2,
            row * SIDE + SIDE / 2,
            f"{w:.2f}",
            ha="center",
            va="center",
            color="red",
            fontsize=9,
        )
    ax.set_title("upright" if label[k] else "lying", fontsize=10)
    ax.set_axis_off()
fig.suptitle("attention pooling: its weight on each patch")
display(fig)
plt.close(fig)

# %% [markdown]
# The mean sees nine bars at once and does little better than a guess; the
# attention puts nearly all its weight on the framed patch, wherever it is,
# and reads its bar. No words, no alignment: the same weighted sum. This is
# how a Vision Transformer reads images (as patches), and how attention
# pools sets, graphs and audio.

# %%
assert attending.accuracy > 0.95 and mean.accuracy < 0.8
assert attending.on_frame > 0.9

# %% [markdown]
# ## 9. Summary
#
# **Strengths**
#
# - *Adaptive focus*: each query chooses what to read, per input (section 2,
#   the cross-attention's alignment; section 8, the framed patch).
# - *Differentiable*: the choice is a softmax, trained by gradient descent
#   with everything else (every section that trains).
# - *Short paths*: any position reaches any other in one step, which is why
#   the Transformer and the RNN with attention lose little with length while
#   one vector loses most of its score (section 7; notebook 3).
#
# **Tradeoffs**
#
# - *Quadratic cost*: n × n weights per layer and head (section 5).
# - *Masks*: padding must be masked and, in a decoder, the future too, or
#   training measures a model search cannot run (section 3).
# - *Depth needs residuals and norm* (section 6).
#
# **Takeaways**
#
# - Attention appears three ways in a Transformer: encoder self-attention
#   (bidirectional), decoder self-attention (causal), cross-attention
#   (decoder asks, encoder answers); an RNN's attention is the third
#   (section 1).
# - A map is a hypothesis about what the model read; ablations test it
#   (notebook 4; `seq2seq evaluate --ablate none --layers 2 --heads 1`).
# - Attention is a general layer for choosing what to read (section 8).
