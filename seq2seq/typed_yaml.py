"""YAML files into frozen, typed dataclasses: ``base:`` includes, dotted
overrides, and type checks whose errors name the dotted key.

The machinery under seq2seq.config (and the experiment files): nothing here
knows which keys a config has; the dataclasses say that.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from seq2seq import families
from seq2seq.errors import UserError, first_line


def read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file as a dict; ``base: other.yaml`` (relative to the file) is
    read first and this file's keys are merged over it."""
    if not path.is_file():
        raise UserError(f"{path}: config file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise UserError(f"{path}{where}: not valid YAML ({first_line(err)})") from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: a config must be a mapping of keys")
    base = raw.pop("base", None)
    if base is None:
        return raw
    base_path = (path.parent / str(base)).resolve()
    if base_path in seen:
        raise UserError(f"{path}: 'base' chain loops back to {base_path}")
    return merge(read_yaml(base_path, (*seen, base_path)), raw)


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, other values replace. A
    section of another family (its ``family`` key names another than its
    base's, seq2seq/families.py's default where the base names none)
    replaces the base's whole: a Transformer's file over an RNN's base
    keeps the data and the training, not the RNN's keys."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            ours = below.get(TAG, families.DEFAULT)
            other = TAG in value and value[TAG] != ours
            out[key] = value if other else merge(below, value)
        else:
            out[key] = value
    return out


def apply_override(raw: dict[str, Any], item: str) -> None:
    """Set ``a.b.c=value`` in a nested dict; the value is parsed as YAML."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise UserError(f"--set {item!r}: expected KEY=VALUE, e.g. train.lr=3e-4")
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise UserError(f"--set {item!r}: '{part}' is not a section")
    try:
        node[parts[-1]] = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise UserError(
            f"--set {item!r}: the value is not valid YAML ({first_line(err)}); quote it"
        ) from None


@dataclass(frozen=True)
class Range:
    """The values a numeric config key takes, declared beside its type
    (``key(..., rng=Range(lo=1))``) and checked wherever a config is loaded."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False  # lo itself excluded
    hi_open: bool = False

    def __contains__(self, x: float) -> bool:
        above = self.lo is None or (x > self.lo if self.lo_open else x >= self.lo)
        below = self.hi is None or (x < self.hi if self.hi_open else x <= self.hi)
        return above and below

    def __str__(self) -> str:
        lo, hi = self.lo, self.hi
        if lo is None:
            if hi is None:
                return "any number"
            return f"{'<' if self.hi_open else '<='} {number(hi)}"
        if hi is None:
            return f"{'>' if self.lo_open else '>='} {number(lo)}"
        left, right = "(" if self.lo_open else "[", ")" if self.hi_open else "]"
        return f"in {left}{number(lo)}, {number(hi)}{right}"


def number(x: float) -> str:
    """1, 4294967295, 0.9, 1e-05, 3e+38: whole numbers in full up to 16
    digits, others as %g."""
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e16):
        return str(int(x))
    return f"{x:g}"


def out_of_range(value: Any, rng: Range | None) -> str:
    """What is wrong with a number ('' when nothing): a float must be finite
    whatever its range, and lie in ``rng`` where there is one."""
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    if rng is not None and isinstance(value, int | float) and value not in rng:
        return f"must be {rng}"
    return ""


def check_range(f: dataclasses.Field, value: Any, key: str) -> None:
    """A value outside its field's declared :class:`Range` names key, value and
    range (a list: each element)."""
    for v in value if isinstance(value, tuple) else (value,):
        if why := out_of_range(v, f.metadata.get("range")):
            raise UserError(f"config key '{key}': {why}, got {number(v)}")


def check_choices(f: dataclasses.Field, value: Any, key: str) -> None:
    """A name outside its field's registry (``key(..., choices=names)``)."""
    names = f.metadata.get("choices")
    if names is not None and value not in names():
        raise not_one_of(value, names(), key)


def not_one_of(value: Any, choices: Sequence[Any], key: str) -> UserError:
    return UserError(
        f"config key '{key}': {value!r} is not one of {', '.join(map(str, choices))}"
    )


def build(cls: type, raw: Any, prefix: str) -> Any:
    """Turn a dict into dataclass ``cls``, checking keys and types."""
    if not isinstance(raw, dict):
        raise UserError(f"config key '{prefix or '<root>'}': expected a mapping")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in raw:
        if key not in fields:
            near = difflib.get_close_matches(str(key), fields, n=1)
            hint = f" (did you mean '{_join(prefix, near[0])}'?)" if near else ""
            valid = ", ".join(fields)
            raise UserError(
                f"unknown config key '{_join(prefix, key)}'{hint}; valid: {valid}"
            )
    kwargs = {}
    for name, f in fields.items():
        key = _join(prefix, name)
        if name in raw and f.metadata.get("sections"):
            kwargs[name] = build(pick_section(f, raw[name], key), raw[name], key)
        elif name in raw:
            kwargs[name] = _coerce(hints[name], raw[name], key)
            check_range(f, kwargs[name], key)
            check_choices(f, kwargs[name], key)
        elif (
            f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ):
            raise UserError(f"config key '{key}' is required")
    return cls(**kwargs)


TAG = "family"  # the key that says which section a section is


def pick_section(f: dataclasses.Field, raw: Any, key: str) -> type:
    """The dataclass of section ``key``, one of several (the field's
    ``sections``: name -> dataclass), named by its ``family`` key (the
    default's family where there is none). A key that only another family's
    section has says whose it is."""
    sections = f.metadata["sections"]()
    if not isinstance(raw, dict):
        return next(iter(sections.values()))  # build() names the key's type
    factory: Any = f.default_factory  # the section a config without one gets
    default = getattr(factory(), TAG)
    name = raw.get(TAG, default)
    if name not in sections:
        raise not_one_of(name, list(sections), _join(key, TAG))
    keys = {n: {g.name for g in dataclasses.fields(c)} for n, c in sections.items()}
    for k in raw:
        owners = [n for n in sections if k not in keys[name] and k in keys[n]]
        if owners:
            raise UserError(
                f"config key '{_join(key, k)}' is a key of {_join(key, TAG)} "
                f"{owners[0]}, and this section's {TAG} is {name}; remove it, or "
                f"set {_join(key, TAG)}={owners[0]}"
            )
    cls: type = sections[name]
    return cls


def _coerce(tp: Any, value: Any, key: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(inner[0], value, key)
    if origin is Literal:
        if value not in args:
            raise not_one_of(value, args, key)
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise UserError(f"config key '{key}': expected a list, got {value!r}")
        return tuple(_coerce(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return build(tp, value, key)
    return _scalar(tp, value, key)


def _scalar(tp: type, value: Any, key: str) -> Any:
    if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if tp is float and isinstance(value, str):  # YAML reads 1e-3 as a string
        try:
            return float(value)
        except ValueError:
            pass
    if isinstance(value, tp) and not (tp is int and isinstance(value, bool)):
        return value
    raise UserError(
        f"config key '{key}': expected {tp.__name__}, got {value!r} "
        f"({type(value).__name__})"
    )


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else str(name)


def to_dict(cfg: Any) -> dict[str, Any]:
    """Plain nested dict of a config (tuples as lists), for YAML and hparams."""

    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        return v

    return plain(dataclasses.asdict(cfg))
