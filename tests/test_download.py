"""seq2seq.data.download: mirror copies, HTTP downloads and failure cleanup."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MULTI30K_MIRROR

from seq2seq.data import download
from seq2seq.data.download import (
    CHECKSUMS,
    MIRROR_ENV,
    multi30k_files,
    prepare_multi30k,
)
from seq2seq.errors import UserError

REPO = Path(__file__).resolve().parent.parent
UNREACHABLE = "http://127.0.0.1:9/nothing-here"  # discard port: must not be used


MIRROR = MULTI30K_MIRROR
pytestmark = pytest.mark.skipif(
    MIRROR is None,
    reason=f"no Multi30k mirror: set {MIRROR_ENV} or provide ../shared/data/multi30k",
)


def _quiet(_msg: str) -> None:
    """A log callback that discards messages."""


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their source explicitly; the env var must not leak in."""
    monkeypatch.delenv(MIRROR_ENV, raising=False)


@pytest.fixture
def mirror_copy(tmp_path: Path) -> Path:
    """A writable copy of the mirror."""
    dest = tmp_path / "mirror"
    dest.mkdir()
    assert MIRROR is not None
    for name in CHECKSUMS:
        if (MIRROR / name).is_file():  # the optional test sets may be absent
            shutil.copyfile(MIRROR / name, dest / name)
    return dest


def _serve(directory: Path) -> Iterator[str]:
    """Serve directory over HTTP on localhost; yield its base URL."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Handler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def server_for(tmp_path: Path) -> Iterator:
    """Factory: start an HTTP server for a directory; all stopped at teardown."""
    running: list[Iterator[str]] = []

    def start(directory: Path) -> str:
        gen = _serve(directory)
        running.append(gen)
        return next(gen)

    yield start
    for gen in running:
        gen.close()


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def _mtimes(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in directory.iterdir()}


def _assert_verified(paths: list[Path]) -> None:
    """Check each file independently against the published table."""
    for path in paths:
        sha, lines = CHECKSUMS[path.name]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            assert sum(1 for _ in fh) == lines


def test_table_sizes() -> None:
    assert len(CHECKSUMS) == 18
    assert CHECKSUMS["test_2017_mscoco.en.gz"][1] == 461
    assert CHECKSUMS["train.en.gz"][1] == 29000
    assert CHECKSUMS["val.cs.gz"][1] == 1014
    assert CHECKSUMS["test_2017_flickr.fr.gz"][1] == 1000


def test_multi30k_files() -> None:
    assert multi30k_files("de", "en") == [
        "train.de.gz",
        "train.en.gz",
        "val.de.gz",
        "val.en.gz",
        "test_2016_flickr.de.gz",
        "test_2016_flickr.en.gz",
        "test_2017_flickr.de.gz",
        "test_2017_flickr.en.gz",
        "test_2017_mscoco.de.gz",
        "test_2017_mscoco.en.gz",
    ]
    cs = multi30k_files("en", "cs")
    assert len(cs) == 6 and not any("2017" in name for name in cs)


def test_prepare_de_en_from_mirror(tmp_path: Path) -> None:
    out = tmp_path / "out"
    logs: list[str] = []
    paths = prepare_multi30k("de", "en", out, mirror=MIRROR, log=logs.append)
    held = [n for n in multi30k_files("de", "en") if (MIRROR / n).is_file()]
    assert paths == [out / name for name in held]
    assert out / "test_2017_flickr.en.gz" in paths
    _assert_verified(paths)
    assert _listing(out) == {p.name for p in paths} | {"MANIFEST.json"}
    manifest = json.loads((out / "MANIFEST.json").read_text())
    entries = {e["file"]: e for e in manifest["files"]}
    assert set(entries) == {p.name for p in paths}
    for name, entry in entries.items():
        assert (entry["sha256"], entry["lines"]) == CHECKSUMS[name]
        assert entry["source"] == str(MIRROR / name)
    assert logs


def test_prepare_cs_en_has_no_2017(tmp_path: Path) -> None:
    paths = prepare_multi30k("cs", "en", tmp_path, mirror=MIRROR, log=_quiet)
    _assert_verified(paths)
    assert len(paths) == 6
    assert not any("2017" in name for name in _listing(tmp_path))


def test_second_run_is_noop(tmp_path: Path) -> None:
    first = prepare_multi30k("de", "en", tmp_path, mirror=MIRROR, log=_quiet)
    before = _mtimes(tmp_path)
    logs: list[str] = []
    # No mirror and an unusable URL: any fetch attempt would fail.
    second = prepare_multi30k(
        "de", "en", tmp_path, base_url=UNREACHABLE, log=logs.append
    )
    assert second == first
    assert _mtimes(tmp_path) == before
    held = [line for line in logs if "mscoco" not in line]  # the mirror lacks it
    assert held and all("already present" in line for line in held)
    # an extra test set that cannot be fetched is skipped, in a line, offline too
    skipped = [line for line in logs if "skipped" in line]
    assert len(skipped) == 2 and all("test_2017_mscoco" in x for x in skipped)


def test_shared_out_dir_keeps_other_pairs_in_manifest(tmp_path: Path) -> None:
    prepare_multi30k("de", "en", tmp_path, mirror=MIRROR, log=_quiet)
    prepare_multi30k("fr", "en", tmp_path, mirror=MIRROR, log=_quiet)
    manifest = json.loads((tmp_path / "MANIFEST.json").read_text())
    names = {e["file"] for e in manifest["files"]}
    wanted = set(multi30k_files("de", "en")) | set(multi30k_files("fr", "en"))
    assert names == {n for n in wanted if (MIRROR / n).is_file()}


def test_env_var_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MIRROR_ENV, str(MIRROR))
    paths = prepare_multi30k("en", "fr", tmp_path, base_url=UNREACHABLE, log=_quiet)
    _assert_verified(paths)


def test_env_var_missing_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nope"
    monkeypatch.setenv(MIRROR_ENV, str(missing))
    with pytest.raises(UserError, match=MIRROR_ENV) as info:
        prepare_multi30k("de", "en", tmp_path / "out", log=_quiet)
    assert str(missing) in str(info.value)
    assert not (tmp_path / "out").exists()


def test_missing_mirror_dir(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(UserError, match="mirror") as info:
        prepare_multi30k("de", "en", tmp_path / "out", mirror=missing, log=_quiet)
    assert str(missing) in str(info.value)


def test_mirror_lacking_a_file(tmp_path: Path, mirror_copy: Path) -> None:
    (mirror_copy / "val.en.gz").unlink()
    out = tmp_path / "out"
    with pytest.raises(UserError, match="val.en.gz") as info:
        prepare_multi30k("de", "en", out, mirror=mirror_copy, log=_quiet)
    assert str(mirror_copy) in str(info.value)
    assert "val.en.gz" not in _listing(out)
    assert not any(name.endswith(".part") for name in _listing(out))


def test_corrupt_mirror_file(tmp_path: Path, mirror_copy: Path) -> None:
    out = tmp_path / "out"
    prepare_multi30k("de", "en", out, mirror=mirror_copy, log=_quiet)
    (out / "val.de.gz").unlink()
    good_before = _mtimes(out)
    _truncate(mirror_copy / "val.de.gz")
    with pytest.raises(UserError, match=r"val\.de\.gz") as info:
        prepare_multi30k("de", "en", out, mirror=mirror_copy, log=_quiet)
    assert "expected" in str(info.value) and "got" in str(info.value)
    assert _listing(out) == set(good_before)  # no temp file, no val.de.gz
    assert _mtimes(out) == good_before  # previously good files untouched
    _assert_verified([out / n for n in good_before if n.endswith(".gz")])


def test_bad_existing_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "train.en.gz").write_bytes(b"not the real file")
    paths = prepare_multi30k("de", "en", tmp_path, mirror=MIRROR, log=_quiet)
    _assert_verified(paths)


def test_interrupt_removes_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(path: Path, name: str) -> str | None:
        raise KeyboardInterrupt

    monkeypatch.setattr(download, "_problems", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prepare_multi30k("de", "en", tmp_path, mirror=MIRROR, log=_quiet)
    assert _listing(tmp_path) == set()


@pytest.mark.parametrize(
    ("src", "tgt"), [("de", "de"), ("de", "xx"), ("ja", "en"), ("DE", "en")]
)
def test_bad_language_pair(tmp_path: Path, src: str, tgt: str) -> None:
    with pytest.raises(UserError, match="de, en, fr, cs"):
        prepare_multi30k(src, tgt, tmp_path / "out", mirror=MIRROR, log=_quiet)
    with pytest.raises(UserError):
        multi30k_files(src, tgt)
    assert not (tmp_path / "out").exists()


def test_download_over_http(tmp_path: Path, mirror_copy: Path, server_for) -> None:
    base_url = server_for(mirror_copy)
    out = tmp_path / "out"
    logs: list[str] = []
    paths = prepare_multi30k("de", "en", out, base_url=base_url, log=logs.append)
    _assert_verified(paths)
    assert _listing(out) == {p.name for p in paths} | {"MANIFEST.json"}
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert {e["source"] for e in manifest["files"]} == {
        f"{base_url}/{p.name}" for p in paths
    }
    assert any("downloading" in line for line in logs)


def test_download_corrupt_file(tmp_path: Path, mirror_copy: Path, server_for) -> None:
    _truncate(mirror_copy / "train.de.gz")
    base_url = server_for(mirror_copy)
    out = tmp_path / "out"
    with pytest.raises(UserError, match=r"train\.de\.gz.*expected") as info:
        prepare_multi30k("de", "en", out, base_url=base_url, log=_quiet)
    assert "re-run" in str(info.value)
    assert _listing(out) == set()


def test_download_missing_file(tmp_path: Path, mirror_copy: Path, server_for) -> None:
    (mirror_copy / "val.en.gz").unlink()
    base_url = server_for(mirror_copy)
    out = tmp_path / "out"
    with pytest.raises(UserError, match=r"val\.en\.gz.*404"):
        prepare_multi30k("de", "en", out, base_url=base_url, log=_quiet)
    assert "val.en.gz" not in _listing(out)
    assert not any(name.endswith(".part") for name in _listing(out))


def test_an_extra_test_set_the_mirror_lacks_is_skipped_in_a_line(
    tmp_path: Path,
) -> None:
    """test_2017_mscoco is optional: a mirror without it prepares the rest;
    a mirror holding a wrong copy of it is refused like any file."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for name in multi30k_files("de", "en"):
        if "mscoco" not in name:
            (mirror / name).write_bytes((MIRROR / name).read_bytes())
    logs: list[str] = []
    paths = prepare_multi30k("de", "en", tmp_path / "a", mirror=mirror, log=logs.append)
    assert not any("mscoco" in p.name for p in paths) and len(paths) == 8
    skipped = [line for line in logs if "skipped" in line]
    assert len(skipped) == 2 and all("test_2017_mscoco" in line for line in skipped)
    with gzip.open(mirror / "test_2017_mscoco.de.gz", "wt") as fh:
        fh.write("ein Hund\n" * 461)
    with pytest.raises(UserError, match="test_2017_mscoco.de.gz from .* is corrupt"):
        prepare_multi30k("de", "en", tmp_path / "b", mirror=mirror, log=_quiet)
    assert not any("mscoco" in n for n in _listing(tmp_path / "b"))
