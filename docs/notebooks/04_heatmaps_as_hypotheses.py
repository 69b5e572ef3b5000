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
# *About 10 minutes. Reads the short recipe's runs of notebook 3; if they are
# missing, the first code cell writes the corpus slice (seconds) and trains
# them (4-15 minutes on 2 CPU cores, by the CPU), and says so. Then about a
# minute of decoding.*
#
# **You will be able to** test what an attention heatmap claims in two ways
# (intervene on the weights; compare them with a known alignment), tell
# subword from word alignment, and say what a correlation between alignment
# and translation quality does and does not show.
#
# **Before this notebook**: notebook 3 (the runs, heatmaps, gold alignment,
# AER); sentence BLEU as a score of one translation against its reference.
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

from seq2seq import run
from seq2seq.lab.evaluate import evaluate, saved_evaluation
from seq2seq.lesson.alignments import forced_alignments
from seq2seq.lesson.checkout import Checkout
from seq2seq.lesson.corpus import write_short_corpus
from seq2seq.training.figures import FORCED_ROWS, heatmap
from seq2seq.training.metrics import sentence_bleu

# %matplotlib inline
plt.rcParams.update({"font.size": 12, "figure.dpi": 90})  # legible on a slide

home = Checkout.find()  # the lab's paths are spelled from the checkout
DATA = Path(os.environ.get("LESSON_DATA", "data/lesson"))
RUNS = Path(os.environ.get("LESSON_RUNS", "runs"))
MODES = os.environ.get("LESSON_MODES", "none,context,mean,hard,additive").split(",")

write_short_corpus(home.path(DATA))
exp_file = home.lesson_file(RUNS / "lesson.yaml", DATA, RUNS, MODES)
if not all(p.joinpath("best.pt").is_file() for p in home.run_dirs(exp_file).values()):
    print("The short recipe's runs are not there yet: training them (4-15 minutes).")
home.experiment(exp_file)  # skips finished runs
run_dir = home.run_dirs(exp_file)["additive"]
trained = saved_evaluation(run_dir, "test")
print(f"additive, trained weights: BLEU {trained.bleu:.1f}")

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
scores = [trained.bleu, *(r.bleu for r in ablated.values())]
fig, ax = plt.subplots(figsize=(5.5, 3))
labels = ["trained", "uniform", "shuffled", "no context"]
ax.bar(labels, scores, color=["tab:green", "tab:grey", "tab:grey", "tab:grey"])
ax.set_ylabel("test BLEU")
ax.set_title("Additive attention, decoded with its weights replaced")
display(fig)
plt.close(fig)
for how, r in ablated.items():
    print(f"{how:>8}: BLEU {r.bleu:5.1f}  (drop {r.bleu_drop:5.1f})")

# %% [markdown]
# Every replacement costs most of the BLEU: the model really does read the
# source through where its weights point. The shuffled weights are as sharp
# as the trained ones and still fail, so it is the *position* of the weight
# that matters, not just its shape. (Asserted with a wide margin: each
# ablation must lose at least half of the trained model's BLEU.)

# %%
for how, r in ablated.items():
    assert r.bleu < 0.5 * trained.bleu, (how, r.bleu, trained.bleu)

# %% [markdown]
# ## 2. Compare with the gold alignment
#
# Feed every test reference through the model, take each target word's
# most-weighted source word, and score those links against the gold ones
# (AER, 0 = all on gold links). Then look for a pair the model translates
# **exactly right** whose weights, word by word, still leave the gold
# alignment.
#
# One detail decides what "word by word" means. The model reads and writes
# *subwords* (`▁Schul` `bus`), and the gold alignment links *words*. The AER
# takes the brightest source word of every target subword, so a word made
# of three pieces casts three votes. A word heatmap merges the pieces first
# (a source word's column is the sum of its pieces' weights, a target word's
# row the mean of its pieces' rows) and shows the brightest cell of that
# merged row. The two can differ: a word's last piece (often just a comma or
# an ending) may look anywhere while the word as a whole looks at its gold
# source. Below, the listed words are read off the merged rows, so the list
# and the picture agree.
#
# The cell prints two AERs, and they differ for a reason. The table's (the
# run's evaluation, AER = 1 − 2|A ∩ G| / (|A| + |G|), notebook 3) pools
# every pair's links before dividing, so a long sentence, with many links,
# weighs more than a short one. The mean of the pairs' own AERs counts each
# pair once, so the many short pairs weigh as much as the few long ones.
# When the second is lower, short pairs are aligned better than long ones.

# %%
aligned = forced_alignments(run_dir, "test")
hyps = run.hypotheses_file(run_dir, "test").read_text(encoding="utf-8").splitlines()
refs = [a.reference for a in aligned]
quality = [sentence_bleu(h, r) for h, r in zip(hyps, refs, strict=True)]
aers = [a.aer() for a in aligned]
print(f"{len(aligned)} pairs")
print(f"AER of the split, every pair's links pooled (the table's): {trained.aer:.3f}")
print(
    f"mean of the pairs' own AERs, each pair counted once: {statistics.mean(aers):.3f}"
)

# pairs translated exactly right; the one with the most words read off gold
src_text = [a.source for a in aligned]
right = [i for i, (h, r) in enumerate(zip(hyps, refs, strict=True)) if h == r]
case = max(right, key=lambda i: (len(aligned[i].misreads()), -len(refs[i])))
a = aligned[case]
print(f"{len(right)} of {len(aligned)} test pairs translated exactly right")
print(f"pair {case}: sentence BLEU {quality[case]:.1f}, AER {aers[case]:.2f}")
print("source   :", src_text[case])
print("reference:", refs[case])
print("model    :", hyps[case])
words, src, tgt = a.words()
for s, t, weight, best in a.misreads():
    gold = [src[g] for g, u in sorted(a.gold) if u == t] or ["no word"]
    print(
        f"  {tgt[t]!r} reads {src[s]!r} most ({weight:.2f}); "
        f"its gold source {gold} gets {best:.2f}"
    )
assert hyps[case] == refs[case] and a.misreads()

fig = heatmap(words, src, tgt, f"Test pair {case}: weights by word", FORCED_ROWS)
fig.axes[0].scatter([s for s, _ in a.gold], [t for _, t in a.gold], c="white", s=14)
fig.axes[0].set_xlabel("source (English); white dots: gold alignment")
display(fig)
plt.close(fig)

# %% [markdown]
# The model translated this pair exactly right, yet for the words listed the
# brightest cell of the row is not the word they translate, and not by a
# hair: it outweighs every gold link of the row by 0.1 or more (a near tie
# is not counted as a misread; `Aligned.misreads` in
# seq2seq/lesson/alignments.py). In those rows the white dot is off the
# bright cell. Common reasons: the model
# reads the *next* source word it will need, or a neighbour whose encoder
# state (bidirectional, so it knows both sides) carries the same
# information, or a word that decides the target word's form (an auxiliary
# reading the verb it goes with, an article its noun). The heatmap shows
# where the model *read*, which is evidence about its computation, not a
# statement of which words translate which.
#
# Over the whole test set the two do go together. Longer sentences are
# harder both to align and to translate, so compare sentences of one length
# with each other: the best-aligned third of each length bucket against its
# worst-aligned third.

# %%
src_len = [len(x.split()) for x in src_text]
for lo, hi in ((1, 10), (11, 20), (21, 30)):
    pairs = [i for i in range(len(aers)) if lo <= src_len[i] <= hi]
    pairs.sort(key=lambda i: aers[i])
    third = len(pairs) // 3
    best = statistics.mean(quality[i] for i in pairs[:third])
    worst = statistics.mean(quality[i] for i in pairs[-third:])
    scores = f"{best:5.1f} best-aligned, {worst:5.1f} worst"
    print(f"{lo:>2}-{hi} words: sentence BLEU {scores}")

# %% [markdown]
# Better-aligned pairs translate better, at every length: a correlation over
# hundreds of sentences. It does not explain any one sentence, as the pair
# above shows, and it does not say which causes which.

# %% [markdown]
# **Try it:** run the ablations on the `hard` run
# (`home.run_dirs(exp_file)["hard"]`). Its weights are one-hot by construction:
# which ablation hurts it most, and why does `uniform` hurt a hard model in a
# different way?
