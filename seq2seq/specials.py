"""The special token ids, the one thing the model and data layers both need.

The tokenizer (data/tokenizer.py) trains its sentencepiece models with these
ids; the model pads with PAD (masked out of attention and of the loss), starts
decoding from BOS and stops at EOS.
"""

PAD, UNK, BOS, EOS = 0, 1, 2, 3
