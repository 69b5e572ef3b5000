"""seq2seq/registry.py: named parts in registration order, each name once,
filled by importing the registering module on the first read, an unknown
name one line naming the config key and the known names (the modes' and the
families' registries are this one: test_modes.py, test_families.py)."""

from __future__ import annotations

import pytest

from seq2seq.errors import UserError
from seq2seq.registry import Registry


def test_parts_by_name_in_order_each_once() -> None:
    reg = Registry[int]("number", "x.number", "seq2seq.errors")
    reg.add("one", 1)
    reg.add("two", 2)
    assert list(reg.all()) == ["one", "two"] and reg.get("two") == 2
    with pytest.raises(ValueError, match="number 'one' is registered twice"):
        reg.add("one", 3)
    with pytest.raises(UserError) as err:
        reg.get("three")
    assert str(err.value) == "config key 'x.number': 'three' is not one of one, two"


def test_the_first_read_imports_the_registering_module() -> None:
    reg = Registry[int]("part", "x", "no.such.module")
    with pytest.raises(ModuleNotFoundError):
        reg.all()
