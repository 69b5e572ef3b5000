"""The lesson's code: what the notebooks (docs/notebooks/, docs/lesson.md)
use beyond the lab's commands, in one place.

- :mod:`~seq2seq.lesson.attention`: single-head scaled dot-product attention
  over whole sequences, with padding and causal masks (notebooks 1, 2, 5);
- :mod:`~seq2seq.lesson.corpus`: the shipped corpus cut to short pairs, which
  the lesson's runs train on;
- :mod:`~seq2seq.lesson.checkout`: the checkout whose recipes, corpora and runs
  the notebooks use, found from the notebook's folder without changing the
  working folder;
- :mod:`~seq2seq.lesson.alignments`: a run's attention on reference
  translations beside the gold word alignments;
- :mod:`~seq2seq.lesson.names`: each mode in a student's words;
- :mod:`~seq2seq.lesson.exercise` and :mod:`~seq2seq.lesson.quiz`: notebook
  5's checks of the student's attention and of the knowledge check's
  answers, which say right or not yet without showing the answer;
- :mod:`~seq2seq.lesson.toy` and :mod:`~seq2seq.lesson.pooling`: notebook 6's
  experiments trained in seconds (a Transformer reversing symbols, with and
  without its causal mask, residuals and norm; attention pooling over a
  picture's patches).

It sits on top of the lab (import-linter's layers), beside the CLI: nothing
else in the package imports it. Importing the package imports none of its
modules: notebook 1 needs the attention module only, and the lab's figures
switch matplotlib to a backend that draws no inline plots.
"""
