"""The shipped corpus: a deterministic English-to-German corpus with gold word
alignments (data/synth_ende/README.md), generated, never downloaded.

- :mod:`~seq2seq.data.synth.lexicon`: the words and inflection tables;
- :mod:`~seq2seq.data.synth.tree`: sentence trees, rendered in English and
  German with the word alignments;
- :mod:`~seq2seq.data.synth.generate`: the sampler and :func:`write_corpus`.
"""

from seq2seq.data.synth.generate import VERSION, generate_pairs, write_corpus

__all__ = ["VERSION", "generate_pairs", "write_corpus"]
