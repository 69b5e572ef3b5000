"""The SWORD modules a corpus can be made from, by language, with the
sha256 of each text file of the version it was measured on; and where a
module is found: a folder the user names, ``$SEQ2SEQ_SWORD_MIRROR``,
Debian's ``/usr/share/sword`` (packages ``sword-text-sparv``,
``sword-text-web``), else CrossWire's module zip, downloaded into the cache
and checked before it is kept."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from seq2seq.data.bible.sword import Conf, check_files, read_conf
from seq2seq.errors import UserError, literal
from seq2seq.files import cache_dir

MIRROR_ENV = "SEQ2SEQ_SWORD_MIRROR"
DEBIAN = Path("/usr/share/sword")
BASE_URL = "https://www.crosswire.org/ftpmirror/pub/sword/packages/rawzip"
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Known:
    name: str  # the module's name in SWORD
    title: str
    licence: str
    sums: dict[str, str]  # text file (ot.bzs ...) -> sha256


# sha256 of each module's text files, as CrossWire publishes them
RV1909_SUMS = {
    "nt.bzs": "b88dda1e9ab50d158262ab141af7823269acb19c581621683298be5b6e154d58",
    "nt.bzv": "a9583ba1b4c66dfdd8bfb6a0b1833bdaa02f9e2cc3465c5a802cf19cbc2f2533",
    "nt.bzz": "7baf6b1e798b193315fed89d0e84e8e1a033d035316f66c78d456f5fb8c87e20",
    "ot.bzs": "0e39106ae15a29cef56feac683f8482be380536a1c456e006867f9fa94c0338e",
    "ot.bzv": "0f23b1ebff5ecdd352a64feda5bb047cba27ce3624fa7b00717f763835d96e20",
    "ot.bzz": "daae868e179e6cc884ad2c9429a9dfaf9745d61caa6dbb9da2a8b24ec3c01337",
}
WEB2015_SUMS = {
    "nt.bzs": "bec87a360bbc6bfbcd7de513edf928ceebb428dd2baff813aebf521bb0c6cc83",
    "nt.bzv": "bb7a522d8323ccd7be462fca4dcd53c06d966c140fe260a6295e05393d259338",
    "nt.bzz": "5429389d9331b7a86901a73afa74f32d089cae3d5bd8dfe304b11808714a69ba",
    "ot.bzs": "2c16645bb829c05b20f39769e1fa23212743335143833a819f29e412c6def8ce",
    "ot.bzv": "dbd3b762b7159c5dd4b535f75b6ab643fb62ae44f4655aff3c5098a955a1ae57",
    "ot.bzz": "4633066d3872f1a3e600d2d10e667a13cd6c32bf116ca971d3c8f288bc3ea453",
}


MODULES = {
    "es": Known("spaRV1909eb", "Reina-Valera 1909", "public domain", RV1909_SUMS),
    "en": Known("engWEB2015eb", "World English Bible", "public domain", WEB2015_SUMS),
}


def known(lang: str, role: str) -> Known:
    if lang not in MODULES:
        have = ", ".join(sorted(MODULES))
        raise UserError(
            f"no Bible module for the {role} language {lang!r}; choose one of {have}"
        )
    return MODULES[lang]


def checked(library: Path, module: Known) -> Conf:
    """The module's conf in ``library``, its text files checked."""
    conf = read_conf(library, module.name)
    rel = (
        conf.data.relative_to(library)
        if conf.data.is_relative_to(library)
        else conf.data
    )
    check_files(library, {str(rel / f): s for f, s in module.sums.items()})
    return conf


def locate(module: Known, mirror: Path | None, base_url: str = BASE_URL) -> Conf:
    """The module from the first place that has it (module docstring)."""
    if mirror is None and os.environ.get(MIRROR_ENV):
        mirror = Path(os.environ[MIRROR_ENV])
    if mirror is not None:
        if not mirror.is_dir():
            raise UserError(
                f"SWORD mirror {literal(mirror)} is not a folder; name the folder "
                f"holding mods.d/ and modules/ (--mirror or ${MIRROR_ENV})"
            )
        return checked(mirror, module)
    cache = cache_dir() / "sword"
    for library in (DEBIAN, cache):
        if _has(library, module):
            try:
                return checked(library, module)
            except UserError as err:  # another version: fetch the one we know
                print(f"{module.name}: {err}")
    return checked(download(module, cache, base_url), module)


def _has(library: Path, module: Known) -> bool:
    mods = library / "mods.d"
    return any(
        (mods / f"{n}.conf").is_file() for n in (module.name, module.name.lower())
    )


def download(module: Known, library: Path, base_url: str) -> Path:
    """CrossWire's zip of ``module`` unpacked into ``library``, its text files
    checked in a temporary folder first (nothing kept from a bad download)."""
    url = f"{base_url.rstrip('/')}/{module.name}.zip"
    library.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=library, prefix=".download-") as tmp:
        archive = Path(tmp) / "module.zip"
        print(f"{module.name}: downloading {url}")
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as got:
                with archive.open("wb") as out:
                    shutil.copyfileobj(got, out)
            with zipfile.ZipFile(archive) as z:
                for member in z.namelist():
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise UserError(f"{url}: unsafe path {member!r} in the zip")
                z.extractall(Path(tmp) / "lib")
        except (OSError, zipfile.BadZipFile) as err:
            raise UserError(
                f"could not download {url} ({err}); check the network, or "
                f"install the module and name its folder with --mirror"
            ) from None
        staged = Path(tmp) / "lib"
        checked(staged, module)
        files = [f for f in staged.rglob("*") if f.is_file()]
        # the text first, the .conf last: a module is found by its .conf
        for path in sorted(files, key=lambda f: (f.parts[-2] == "mods.d", f)):
            dest = library / path.relative_to(staged)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
    return library
