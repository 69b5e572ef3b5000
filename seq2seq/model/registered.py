"""Every model family's registration (seq2seq/families.py imports this the
first time a family is looked up): the RNN's at the end of model.py, the
Transformer's at the end of transformer/model.py."""

from seq2seq.model import model  # noqa: F401  (registers rnn)
from seq2seq.model.transformer import model as transformer  # noqa: F401
