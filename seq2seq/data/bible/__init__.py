"""A verse-aligned parallel corpus from two SWORD Bible modules: the
modules read (sword.py), their OSIS markup made plain text (osis.py), the
verses paired and checked (pairs.py), split by whole chapters without leaks
(split.py), and written by ``seq2seq prepare bible`` (prepare.py)."""
