"""The model: what a student reads, in this order.

attention.py (every score function), encoder.py, decoder.py (with attention
or without), model.py (``build_model``), loss.py, search.py (greedy, beam).
Imports nothing above it and nothing from ``seq2seq.data``.
"""
