"""A registry of named parts, filled by the layer that builds them and read
below it: the one mechanism behind ``model.attention``'s modes (modes.py)
and ``model.family``'s families (families.py).

The config sits below the model layer, yet must check a name when it loads;
so the model layer registers its parts by name, and a reader gets them
through :meth:`Registry.all`, which imports the registering module the first
time (by name, not a static import, so the layers keep their direction).
"""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

from seq2seq.errors import UserError

T = TypeVar("T")


class Registry(Generic[T]):
    """Parts by name, in registration order: each ``what`` (one line of
    errors) is chosen by config key ``key`` and registered by ``module``."""

    def __init__(self, what: str, key: str, module: str) -> None:
        self.what, self.key, self.module = what, key, module
        self.items: dict[str, T] = {}

    def add(self, name: str, item: T) -> None:
        """Register ``item``; a name is registered once."""
        if name in self.items:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self.items[name] = item

    def all(self) -> dict[str, T]:
        """Every part, ``module``'s registrations made first."""
        importlib.import_module(self.module)
        return self.items

    def get(self, name: str) -> T:
        """The part ``name``, or one line listing the known ones."""
        known = self.all()
        if name not in known:
            raise UserError(
                f"config key '{self.key}': {name!r} is not one of {', '.join(known)}"
            )
        return known[name]
