"""Fetch and verify the Multi30k task-1 raw files.

Files come from a local mirror directory (argument, else ``$SEQ2SEQ_DATA_MIRROR``)
or are downloaded from :data:`BASE_URL`. Every file is written to a temporary
file next to its destination, checked against the published sha256 and line
count below, and only then moved into place, so ``out_dir`` never holds a
half-written or unverified file. A ``MANIFEST.json`` records what was prepared.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from seq2seq.errors import SettingError, UserError, literal
from seq2seq.files import atomic_write, check_output, naming

BASE_URL = "https://github.com/multi30k/dataset/raw/master/data/task1/raw"
MIRROR_ENV = "SEQ2SEQ_DATA_MIRROR"
MANIFEST = "MANIFEST.json"
LANGS = ("de", "en", "fr", "cs")
SPLITS = ("train", "val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco")
# Test sets a mirror may lack (an older copy of the dataset): skipped with a
# line, not an error; a download fetches them.
OPTIONAL_SPLITS = ("test_2017_mscoco",)
TIMEOUT_S = 60.0
_CHUNK = 1 << 16
_Log = Callable[[str], None]

# Published files: name -> (sha256 of the .gz file, lines of decompressed text).
CHECKSUMS: dict[str, tuple[str, int]] = {
    "train.de.gz": (
        "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
        29000,
    ),
    "train.en.gz": (
        "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
        29000,
    ),
    "train.fr.gz": (
        "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
        29000,
    ),
    "train.cs.gz": (
        "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
        29000,
    ),
    "val.de.gz": (
        "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
        1014,
    ),
    "val.en.gz": (
        "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
        1014,
    ),
    "val.fr.gz": (
        "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
        1014,
    ),
    "val.cs.gz": (
        "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
        1014,
    ),
    "test_2016_flickr.de.gz": (
        "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
        1000,
    ),
    "test_2016_flickr.en.gz": (
        "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
        1000,
    ),
    "test_2016_flickr.fr.gz": (
        "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
        1000,
    ),
    "test_2016_flickr.cs.gz": (
        "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
        1000,
    ),
    "test_2017_flickr.de.gz": (
        "a2c89666db00c495cd8513b9d708d5a3acc205d7de312ef2bf5fb7ebc1540aee",
        1000,
    ),
    "test_2017_flickr.en.gz": (
        "76a444ee25172e72695cddb13ae4a3bda59430617be88e0bb46b60504f054074",
        1000,
    ),
    "test_2017_flickr.fr.gz": (
        "3ba671ceb2299f3304ffafefea7a833d08632fbaf0ba18546f8a2ec2391af496",
        1000,
    ),
    # The WMT 2017 ambiguous COCO test set: captions of MS COCO images, out of
    # Flickr30k's domain (Elliott et al. 2017); no Czech.
    "test_2017_mscoco.de.gz": (
        "799e4854c25d601cb6cb6be29eabe5667734c61ace2f495e03e429031a0bc338",
        461,
    ),
    "test_2017_mscoco.en.gz": (
        "aab300bfb4427697987e02cd0aacd44bfe8aa50456231b6474c08038bbed2b58",
        461,
    ),
    "test_2017_mscoco.fr.gz": (
        "754f3072ba9f124569ba5258b32730fc1d214bbf8e0c6dfb2b74401676220db0",
        461,
    ),
}


def _check_pair(src: str, tgt: str) -> None:
    """Raise UserError unless src/tgt are two different Multi30k languages."""
    choices = ", ".join(LANGS)
    for role, lang in (("source", src), ("target", tgt)):
        if lang not in LANGS:
            raise UserError(
                f"Multi30k has no {role} language {lang!r}; choose one of {choices}"
            )
    if src == tgt:
        raise UserError(
            f"source and target language are both {src!r}; choose two different "
            f"languages among {choices}"
        )


def multi30k_files(src: str, tgt: str) -> list[str]:
    """File names needed for the pair ``src``-``tgt``, split by split."""
    _check_pair(src, tgt)
    names = []
    for split in SPLITS:
        pair = [f"{split}.{src}.gz", f"{split}.{tgt}.gz"]
        if all(name in CHECKSUMS for name in pair):
            names.extend(pair)
    return names


class _Unavailable(Exception):
    """The source cannot give the file (a mirror without it, a download that
    failed): ``error`` says so, unless the file is of an optional test set,
    which is then skipped in a line."""

    def __init__(self, error: UserError) -> None:
        super().__init__(str(error))
        self.error = error


def _optional(name: str) -> bool:
    return name.rsplit(".", 2)[0] in OPTIONAL_SPLITS


def _resolve_mirror(mirror: Path | None) -> Path | None:
    """The mirror directory to copy from (argument, else env var), or None."""
    if mirror is not None:
        where = "the mirror option"
    else:
        env = os.environ.get(MIRROR_ENV, "")
        if not env:
            return None
        mirror, where = Path(env), f"${MIRROR_ENV}"
    mirror = Path(mirror).expanduser()
    if not mirror.is_dir():
        raise SettingError(
            f"data mirror {literal(mirror)} (from {literal(where)}) is not a "
            f"directory; fix {{mirror}}/{MIRROR_ENV} or unset both to download "
            "from the internet"
        )
    return mirror


def _sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _count_lines(path: Path) -> int:
    """Number of lines in the decompressed text of a .gz file."""
    lines, last = 0, b"\n"
    with gzip.open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _good(out_dir: Path, name: str) -> bool:
    """Whether out_dir holds ``name`` with the published sha256."""
    path = out_dir / name
    return path.is_file() and _sha256(path) == CHECKSUMS[name][0]


def _problems(path: Path, name: str) -> str | None:
    """Describe how ``path`` differs from the published ``name``, or None."""
    want_sha, want_lines = CHECKSUMS[name]
    got_sha = _sha256(path)
    try:
        got_lines: int | str = _count_lines(path)
    except (OSError, EOFError, zlib.error) as exc:
        got_lines = f"unreadable gzip ({exc})"
    found = []
    if got_sha != want_sha:
        found.append(f"sha256 expected {want_sha[:16]}..., got {got_sha[:16]}...")
    if got_lines != want_lines:
        found.append(f"lines expected {want_lines}, got {got_lines}")
    return "; ".join(found) or None


def _copy_stream(src: BinaryIO, dst: BinaryIO) -> int:
    """Copy src to dst in chunks; return the number of bytes copied."""
    total = 0
    for chunk in iter(lambda: src.read(_CHUNK), b""):
        dst.write(chunk)
        total += len(chunk)
    return total


def _fetch(
    name: str, dst: BinaryIO, mirror: Path | None, base_url: str, log: _Log
) -> str:
    """Write the raw bytes of ``name`` into dst; return where they came from."""
    if mirror is not None:
        source = mirror / name
        if not source.is_file():
            raise _Unavailable(
                SettingError(
                    f"data mirror {literal(mirror)} lacks {name}; add it there or "
                    f"fix {{mirror}}/{MIRROR_ENV}"
                )
            )
        log(f"{name}: copying {source}")
        with open(source, "rb") as fh:
            _copy_stream(fh, dst)
        return str(source)
    url = f"{base_url.rstrip('/')}/{name}"
    log(f"{name}: downloading {url}")
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            _copy_stream(response, dst)
    except (OSError, http.client.HTTPException) as exc:
        raise _Unavailable(
            UserError(
                f"could not download {name} from {url} ({exc}); check the network "
                f"and re-run, or set {MIRROR_ENV} to a directory holding the files"
            )
        ) from exc
    return url


def _prepare_file(
    name: str, out_dir: Path, mirror: Path | None, base_url: str, log: _Log
) -> str:
    """Fetch ``name`` into a temp file in out_dir, verify it, move it in place."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=out_dir)
    tmp = Path(tmp_name)
    try:
        with naming(out_dir / name), os.fdopen(fd, "wb") as fh:
            source = _fetch(name, fh, mirror, base_url, log)
        problems = _problems(tmp, name)
        if problems:
            hint = "replace it in the mirror" if mirror else "re-run to download again"
            raise UserError(
                f"{name} from {source} is corrupt ({problems}); bad copy discarded, "
                f"{hint}"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_dir / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return source


def _read_manifest(out_dir: Path) -> dict[str, dict]:
    """Entries of an existing manifest by file name (empty if none or invalid)."""
    try:
        data = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        return {entry["file"]: entry for entry in data["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _write_manifest(out_dir: Path, entries: dict[str, dict]) -> None:
    """Atomically write MANIFEST.json listing ``entries`` (unless unchanged)."""
    body = {
        "dataset": "multi30k task1 raw",
        "files": [entries[name] for name in sorted(entries)],
    }
    text = json.dumps(body, indent=2) + "\n"
    try:
        if (out_dir / MANIFEST).read_text(encoding="utf-8") == text:
            return
    except (OSError, ValueError):
        pass
    atomic_write(out_dir / MANIFEST, text)


def prepare_multi30k(
    src: str,
    tgt: str,
    out_dir: Path,
    mirror: Path | None = None,
    base_url: str = BASE_URL,
    log: Callable[[str], None] = print,
) -> list[Path]:
    """Make the verified Multi30k files for ``src``-``tgt`` present in out_dir.

    Returns the paths of the .gz files, in :func:`multi30k_files` order,
    without an :data:`OPTIONAL_SPLITS` test set that the mirror lacks.
    """
    names = multi30k_files(src, tgt)
    mirror = _resolve_mirror(mirror)
    out_dir = Path(out_dir)
    check_output(out_dir, "{out}", [("the mirror", mirror)] if mirror else [], True)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create data directory {out_dir} ({exc}); choose another one"
        ) from exc
    old = _read_manifest(out_dir)
    entries = {name: entry for name, entry in old.items() if name in CHECKSUMS}
    kept = []
    for name in names:
        sha, lines = CHECKSUMS[name]
        dest = out_dir / name
        if _good(out_dir, name):
            log(f"{name}: already present and verified")
            source = old.get(name, {}).get("source", "already present")
        else:
            if dest.exists():
                log(f"{name}: existing file fails its checksum; fetching again")
            try:
                source = _prepare_file(name, out_dir, mirror, base_url, log)
            except _Unavailable as gone:
                if not _optional(name):
                    raise gone.error from None
                log(f"{name}: skipped, an extra test set ({gone.error})")
                continue
            log(f"{name}: {dest.stat().st_size} bytes, {lines} lines, sha256 ok")
        entries[name] = {"file": name, "sha256": sha, "lines": lines, "source": source}
        kept.append(name)
    entries = {n: e for n, e in entries.items() if n in kept or _good(out_dir, n)}
    _write_manifest(out_dir, entries)
    return [out_dir / name for name in kept]
