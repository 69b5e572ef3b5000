"""Write docs/config.md, the config reference, from the config dataclasses.

    python scripts/config_reference.py   # rewrites docs/config.md

Every key's type, default and one line of meaning come from ``seq2seq/config.py``
(``key(default, help)``); tests/test_docs.py fails when the page is stale.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from pathlib import Path

from seq2seq.config import Config

PAGE = Path(__file__).resolve().parent.parent / "docs" / "config.md"

HEAD = """# Config reference

Every key of a run's YAML config, generated from `seq2seq/config.py` by
`python scripts/config_reference.py` (a test fails when this page is stale).
A config names its corpus files and may set any other key; `base: other.yaml`
(relative to the file) reads another config first, and the file's keys
override it. `--set train.lr=3e-4` overrides a key on the command line and is
checked like the file: an unknown key, a wrong type, a number that is not
finite or a value out of its range (the second column) is a one-line error
that names the key, the value and the range. The resolved config is saved as
`config.yaml` in the run folder. Back to the [README](../README.md); how to
write one for your own corpus: [own-corpus.md](own-corpus.md).

Keys without a default (`data.train.src` ...) are required. Under `data`,
`train` and `val` are required and `test` optional; each takes `src`, `tgt`
and an optional `align`.
"""


def type_name(tp: object) -> str:
    """``int``, ``one of gru, lstm``, ``list of int``, ``str or null``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return " or ".join(type_name(a) for a in kept) + " or null"
    if origin is tuple:
        return f"list of {type_name(args[0])}"
    return getattr(tp, "__name__", str(tp))


def default_text(f: dataclasses.Field) -> str:
    if f.default is dataclasses.MISSING:
        return "required"
    value = f.default
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


Row = tuple[str, str, str, str]  # dotted key, type with its range, default, meaning


def sections(cls: type) -> Iterator[tuple[str, list[Row]]]:
    """(section title, its rows): the top-level keys, then one section per
    nested dataclass; a section that is one of several, chosen by its
    ``family`` key (the model section: one dataclass per registered family),
    once for each of them."""
    hints = typing.get_type_hints(cls)
    top = [r for f in dataclasses.fields(cls) for r in leaf(f, hints[f.name], "")]
    yield "Top level", top
    for f in dataclasses.fields(cls):
        members = [a for a in held(f, hints[f.name]) if dataclasses.is_dataclass(a)]
        for member in members:
            title = f"`{f.name}`"
            if len(members) > 1:
                title += f" (`{f.name}.family: {family_of(member)}`)"
            yield title, list(rows(member, f.name + "."))


def member_types(tp: object) -> tuple:
    """The types a field may hold: a union's members, else the type itself."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def held(f: dataclasses.Field, tp: object) -> tuple:
    """The types field ``f`` (annotated ``tp``) may hold: for a section that
    is one of several (the model section), every registered family's
    dataclass (config.key's ``sections``), else the annotation's types."""
    sections = f.metadata.get("sections")
    return tuple(sections().values()) if sections else member_types(tp)


def family_of(cls: type) -> str:
    """A family section's ``family`` key's default: the family it is for."""
    (f,) = [f for f in dataclasses.fields(cls) if f.name == "family"]
    return str(f.default)


def leaf(f: dataclasses.Field, tp: object, prefix: str) -> list[Row]:
    """The row of a field that holds no dataclass, else none."""
    if any(dataclasses.is_dataclass(a) for a in held(f, tp)):
        return []
    help_ = f.metadata.get("help", "")
    rng, choices = f.metadata.get("range"), f.metadata.get("choices")
    typed = type_name(typing.Literal[choices()] if choices else tp)
    typed += f", {rng}" if rng is not None else ""
    return [(prefix + f.name, typed, default_text(f), help_)]


def rows(cls: type, prefix: str = "") -> Iterator[Row]:
    """Every leaf key of ``cls`` (of every family, for a family union)."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        name, tp = prefix + f.name, hints[f.name]
        nested = [a for a in held(f, tp) if dataclasses.is_dataclass(a)]
        if nested and f.name in ("train", "val", "test") and prefix:
            continue  # the three SplitFiles, listed once on their own
        if nested:
            for member in nested:
                yield from rows(member, name + ".")
            continue
        help_ = f.metadata.get("help", "")
        rng, choices = f.metadata.get("range"), f.metadata.get("choices")
        typed = type_name(typing.Literal[choices()] if choices else tp)
        typed += f", {rng}" if rng is not None else ""
        yield name, typed, default_text(f), help_


def page() -> str:
    from seq2seq.config import SplitFiles

    out = [HEAD]
    split_rows = [
        (f"data.{{train,val,test}}.{k}", t, d, h) for k, t, d, h in rows(SplitFiles)
    ]
    for title, found in sections(Config):
        if title == "`data`":
            found = split_rows + found
        out.append(f"\n## {title}\n")
        out.append("| key | type, range | default | meaning |\n|---|---|---|---|")
        out += [f"| `{n}` | {tp} | `{d}` | {h} |" for n, tp, d, h in found]
    return "\n".join(out + modes_table()) + "\n"


def modes_table() -> list[str]:
    """The registered attention modes (seq2seq/modes.py), one line each."""
    from seq2seq import modes

    out = [
        "\n## Attention modes\n",
        "The values of `model.attention`, as model/attention.py registers them "
        "(how to add one: [add-a-mode.md](add-a-mode.md)).\n",
        "| mode | what the decoder sees |\n|---|---|",
    ]
    for m in modes.registry().values():
        size = " Needs decoder size = encoder output size." if m.query_is_key else ""
        out.append(f"| `{m.name}` | {m.summary}.{size} |")
    return out


if __name__ == "__main__":
    PAGE.write_text(page(), encoding="utf-8")
    print(f"wrote {PAGE}")
