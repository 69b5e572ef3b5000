"""seq2seq: what does attention buy an RNN encoder-decoder?"""

__version__ = "0.1.0"
