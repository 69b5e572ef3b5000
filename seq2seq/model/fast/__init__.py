"""The fast paths: the same RNN encoder-decoder trained in fewer, larger
operations. The reference modules (encoder.py, decoder.py, attention.py) are
the papers' parts step by step and never import this package; a path is
chosen once, when a model is built (path.py's :func:`choose_path`, read by
model.py's ``build_rnn``), and the model calls it through its
:class:`path.RecurrencePath`.

- ``steps``: the reference: the cells step by step (decoder.py's
  ``advance``), the packed ``nn.GRU``/``nn.LSTM`` encoder. Every model.
- ``sequence``: each GRU or LSTM layer over all steps as one autograd node
  with backward written by hand, its step loops in Python (recurrence.py;
  the encoder: encoding.py), then every step's attention at once (steps.py)
  and Eq. 5 for all steps (decoding.py). The decoder with input feeding runs
  this way only as a one-layer GRU with ``additive`` attention, the whole
  step one node (feeding.py).
- ``compiled``: the same nodes with the step loops in C++ (compiled.py,
  csrc/, built by ``make install``); on a GPU, or in bf16, the Python loops.
- ``auto``: ``compiled`` where it is built and runs on this CPU, else
  ``sequence``; ``steps`` for a model the others do not support.

In every path an LSTM encoder stays the packed ``nn.LSTM`` (its oneDNN
kernel is faster on the CPU, docs/speed.md), and search decodes step by
step: the paths differ in training speed, not in what they compute (the same
weights and mathematics, equal to rounding: tests/test_recurrence.py and
tests/test_attention.py compare each with the reference, forward and
backward, so a reference step that changes without its fast path fails
there).
"""
