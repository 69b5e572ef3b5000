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
# # 4. Heatmaps as hypotheses, not proofs
#
# *About 10 minutes. Reads the runs of notebook 3 (and trains them first if
# they are missing); about a minute of decoding.*
#
# An attention heatmap is tempting to read as *the reason* for a
# translation: "it wrote *Hund* because it looked at *dog*". That is a
# hypothesis about the model, and like any hypothesis it can be tested. Two
# tests here:
#
# 1. **Intervene.** Replace the trained weights while decoding and measure
#    what the translation loses. If the model did not use its weights, BLEU
#    would not move.
# 2. **Compare with ground truth.** The shipped corpus knows the true word
#    alignment of every pair. Where do the model's weights and the truth
#    part ways, and does the translation suffer there?

# %%
import os
import statistics
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import display

from seq2seq.data.lesson import write_short_corpus
from seq2seq.lab.evaluate import evaluate, saved_evaluation
from seq2seq.lab.experiment import experiment
from seq2seq.lab.lesson import at_repository_root, forced_alignments, lesson_experiment
from seq2seq.training.board import heatmap, word_view

# %matplotlib inline
from seq2seq.training.metrics import sentence_bleu

at_repository_root()  # the lab's paths are relative to the checkout
DATA = Path(os.environ.get("LESSON_DATA", "data/lesson"))
RUNS = Path(os.environ.get("LESSON_RUNS", "runs"))
MODES = os.environ.get("LESSON_MODES", "none,context,hard,additive").split(",")

write_short_corpus(DATA)
experiment(
    lesson_experiment(RUNS / "lesson.yaml", DATA, RUNS, MODES)
)  # skips finished runs
run_dir = RUNS / "lesson" / "additive-s1"
trained = saved_evaluation(run_dir, "test")
print(f"additive, trained weights: BLEU {trained['bleu']:.1f}")

# %% [markdown]
# ## 1. Intervene: ablations
#
# `evaluate(..., ablation=HOW)` (the same as `seq2seq evaluate RUN --ablate
# HOW`) decodes the test set with the weights replaced at every step by:
#
# - `uniform`: the same weight on every source word (mean-pooling);
# - `shuffle`: the model's own weights, moved to random source positions
#   (just as sharp, in the wrong places);
# - `none`: no context vector at all.

# %%
ablated = {
    how: evaluate(run_dir, "test", ablation=how)
    for how in ("uniform", "shuffle", "none")
}
names = ["trained", *ablated]
scores = [trained["bleu"], *(r["bleu"] for r in ablated.values())]
fig, ax = plt.subplots(figsize=(5.5, 3))
ax.bar(names, scores, color=["tab:green", "tab:grey", "tab:grey", "tab:grey"])
ax.set_ylabel("test BLEU")
ax.set_title("additive, decoded with its weights replaced")
display(fig)
plt.close(fig)
for how, r in ablated.items():
    print(f"{how:>8}: BLEU {r['bleu']:5.1f}  (drop {r['bleu_drop']:5.1f})")

# %% [markdown]
# Every replacement costs most of the BLEU: the model really does read the
# source through where its weights point. The shuffled weights are as sharp
# as the trained ones and still fail, so it is the *position* of the weight
# that matters, not just its shape. (Asserted with a wide margin: each
# ablation must lose at least half of the trained model's BLEU.)

# %%
for how, r in ablated.items():
    assert r["bleu"] < 0.5 * trained["bleu"], (how, r["bleu"], trained["bleu"])

# %% [markdown]
# ## 2. Compare with the gold alignment
#
# Feed every test reference through the model, take each target word's
# most-weighted source word, and score those links against the gold ones
# (AER, 0 = all on gold links). Then look for the pair where the two disagree
# most **although the model translates it well**.

# %%
aligned = forced_alignments(run_dir, "test")
hyps = (run_dir / "hyp_test.txt").read_text(encoding="utf-8").splitlines()
refs = (DATA / "test.de").read_text(encoding="utf-8").splitlines()
quality = [sentence_bleu(h, r) for h, r in zip(hyps, refs, strict=True)]
aers = [a.aer() for a in aligned]
print(f"{len(aligned)} pairs, mean AER {sum(aers) / len(aers):.3f}")

good = [i for i, q in enumerate(quality) if q >= max(quality) - 1e-9]
worst = max(good, key=lambda i: aers[i])
print(f"pair {worst}: sentence BLEU {quality[worst]:.1f}, AER {aers[worst]:.2f}")
print("source   :", (DATA / "test.en").read_text(encoding="utf-8").splitlines()[worst])
print("reference:", refs[worst])
print("model    :", hyps[worst])

a = aligned[worst]
words, src, tgt = word_view(a.weights, a.src, a.tgt)
fig = heatmap(words, src, tgt, f"pair {worst}: weights, and gold links as white dots")
fig.axes[0].scatter([s for s, _ in a.gold], [t for _, t in a.gold], c="white", s=12)
display(fig)
plt.close(fig)

# %% [markdown]
# The model wrote this translation as well as it writes any, yet where its
# weights point is not where the words correspond. Common reasons: the
# model reads the *next* source word it will need, or a neighbour whose
# encoder state (bidirectional, so it knows both sides) carries the same
# information, or a word that decides the form of the target word (an
# article looking at its noun). The heatmap shows where the model *read*,
# which is evidence about its computation, not a statement of which words
# translate which.
#
# Across the test set the link between the two is real but loose:

# %%
order = sorted(range(len(aers)), key=lambda i: aers[i])
third = len(order) // 3
low, high = order[:third], order[-third:]
q_low = statistics.mean(quality[i] for i in low)
q_high = statistics.mean(quality[i] for i in high)
print(f"sentence BLEU, best-aligned third : {q_low:.1f}")
print(f"sentence BLEU, worst-aligned third: {q_high:.1f}")

# %% [markdown]
# **Try it:** run the ablations on the `hard` run (`RUNS / "lesson" /
# "hard-s1"`). Its weights are one-hot by construction: which ablation hurts
# it most, and why does `uniform` hurt a hard model in a different way?
