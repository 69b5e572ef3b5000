"""The type checker: mypy, configured in pyproject.toml ([tool.mypy]: the
model and training layers strict, the rest of the package at mypy's default
level), finds no error. `make check` runs the same."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the dev extra")

ROOT = Path(__file__).resolve().parents[1]
# From scratch, as on a fresh clone, and nothing written into the checkout.
FLAGS = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", "/dev/null"]


def test_the_package_type_checks() -> None:
    out, err, status = mypy_api.run([*FLAGS, str(ROOT / "seq2seq")])
    assert status == 0, out + err
    assert "Success: no issues found" in out


def test_a_type_error_fails_the_check(tmp_path: Path) -> None:
    # The same configuration reports a wrong type: the check above can fail.
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n", encoding="utf-8")
    out, _, status = mypy_api.run([*FLAGS, str(bad)])
    assert status == 1
    assert 'Incompatible return value type (got "int", expected "str")' in out
