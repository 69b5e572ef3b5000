"""A verse's OSIS markup as plain text, every word kept apart.

OSIS wraps words and phrases in elements (``<w lemma=...>``), adds notes,
headings, poetry lines and paragraph milestones between them, often with no
space around: ``God</w><note>...</note><w>created``. Taking the tags out
joins such words ("Godcreated"), so every tag is a possible word boundary:

- a note (its text too), a non-canonical heading and a glossary or
  introduction (milestone ``div`` from ``sID`` to ``eID``) are removed;
- a canonical heading (a psalm's "A Psalm by David.") is text of its verse,
  as the other translation has it;
- a tag of a word-level element (``w``) or of structure (``l``, ``lg``,
  ``div``, ``note`` ...) separates the text on its two sides with a space
  when a word or an opening quote follows and the left is not an opening
  quote; one that marks up part of a word (``transChange``, the translator's
  added letters: "preguntándo<transChange>le</transChange>") does not.
"""

from __future__ import annotations

import re

TAG = re.compile(r"<(/?)([A-Za-z]+)((?:[^>\"]|\"[^\"]*\")*?)(/?)>")
# elements that may stand inside a word: no boundary at their tags
INSIDE_WORDS = frozenset({"transChange", "hi", "seg", "divineName", "foreign", "q"})
DROPPED_DIVS = frozenset({"glossary", "introduction", "colophon"})
_OPENING = "“‘(¡¿«["
_GAP = "\0"  # where a tag separated text
_SPACE = re.compile(rf"(?<=[^\s{re.escape(_OPENING)}]){_GAP}(?=[\w{_OPENING}])")


def _attr(attrs: str, key: str) -> str | None:
    found = re.search(rf'\b{key}="([^"]*)"', attrs)
    return found.group(1) if found else None


def plain(markup: str) -> str:
    """The verse's words, single-spaced, with no markup."""
    out: list[str] = []
    removed: list[str] = []  # open elements whose text is removed
    milestones: set[str] = set()  # open glossaries and introductions
    gap = False
    pos = 0
    for tag in TAG.finditer(markup):
        text = markup[pos : tag.start()]
        pos = tag.end()
        if text and not removed and not milestones:
            out.extend((_GAP, text) if gap else (text,))
            gap = False
        close, name, attrs, empty = tag.groups()
        if name == "div" and _attr(attrs, "type") in DROPPED_DIVS:
            if start := _attr(attrs, "sID"):
                milestones.add(start)
            if end := _attr(attrs, "eID"):
                milestones.discard(end)
        elif name == "note" or (
            name == "title" and _attr(attrs, "canonical") != "true"
        ):
            if close and removed:
                removed.pop()
            elif not close and not empty:
                removed.append(name)
        gap = gap or name not in INSIDE_WORDS
    rest = markup[pos:]
    if rest and not removed and not milestones:
        out.extend((_GAP, rest) if gap else (rest,))
    joined = _SPACE.sub(" ", "".join(out)).replace(_GAP, "")
    return " ".join(joined.split())
