"""Data: parallel text, the shipped synthetic corpus, Multi30k, long joined
inputs, curriculum, batching and the tokenizer. Imports nothing above it and
nothing from ``seq2seq.model``.
"""
