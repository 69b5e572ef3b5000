"""A third model family in one folder, for the tests only
(tests/test_family_folder.py): a bag of source embeddings read by a GRU
decoder through dot-product cross-attention, each source word first mixing
in the others by one self-attention (no order: there are no positions).
Nothing under seq2seq/ names it; :func:`register` is its one registration
line, which an in-tree family puts in seq2seq/model/registered.py
(docs/add-a-family.md)."""

from __future__ import annotations

from bag_family.config import BagConfig
from bag_family.model import build_bag, unsupported
from seq2seq import families


def register() -> None:
    """Add the family to the registry (once: a name is registered once)."""
    families.register(
        "bag", BagConfig, build_bag, unsupported, "a bag of embeddings and a GRU"
    )
