"""seq2seq: what does attention buy an RNN encoder-decoder?

The package's floor plan is docs/architecture.md. Importing it imports
nothing else (so `seq2seq --help` answers without loading torch); the
attention modes register themselves the first time the registry is read
(seq2seq/modes.py).
"""

__version__ = "0.1.0"
