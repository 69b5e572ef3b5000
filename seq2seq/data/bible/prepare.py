"""``seq2seq prepare bible``: two Bibles, verse-aligned, as a parallel
corpus split without leaks, written as plain text (one verse a line) with
each line's reference and a MANIFEST.json of what was read, left out and
kept."""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from seq2seq.data.bible import split as splitting
from seq2seq.data.bible.modules import BASE_URL, known, locate
from seq2seq.data.bible.osis import plain
from seq2seq.data.bible.pairs import Dropped, Pair, pair_verses
from seq2seq.data.bible.sword import Conf, read_module
from seq2seq.errors import UserError
from seq2seq.files import atomic_write, naming

MANIFEST = "MANIFEST.json"
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Side:
    lang: str
    module: str
    version: str
    versification: str
    verses: int  # with text


@dataclass(frozen=True)
class Manifest:
    src: Side
    tgt: Side
    seed: int
    paired: int
    dropped: Dropped
    near_copies: dict[str, int]  # held-out verses left out for a copy in train
    near_copy_share: dict[str, float]  # of the chapters drawn, before
    lines: dict[str, int]
    buckets: list[str]
    by_length: dict[str, list[int]]  # split -> verses per source-length bucket
    mean_src_words: dict[str, float]
    overlap: float = splitting.OVERLAP
    ngram: int = splitting.N


def default_out(src: str, tgt: str) -> Path:
    return Path("data") / f"bible_{src}{tgt}"


def prepare_bible(
    src: str,
    tgt: str,
    out: Path,
    mirror: Path | None = None,
    seed: int = 1,
    base_url: str = BASE_URL,
    log: Callable[[str], None] = print,
) -> Manifest:
    """Read, pair, split and write (module docstring); nothing is written
    until every check has passed."""
    if src == tgt:
        raise UserError(f"--src and --tgt are both {src!r}; name two languages")
    modules = known(src, "source"), known(tgt, "target")
    confs = [locate(m, mirror, base_url) for m in modules]
    texts = [_verses(c) for c in confs]
    pairs, dropped = pair_verses(*texts)
    if not pairs:
        raise UserError(f"{modules[0].name} and {modules[1].name} share no verse")
    parts = splitting.split_pairs(pairs, seed)
    if not (parts.train and parts.val and parts.test):
        raise UserError(
            f"{modules[0].name} and {modules[1].name} share {len(pairs)} verses, "
            "too few for training, validation and test; use fuller modules"
        )
    chosen = {"train": parts.train, "val": parts.val, "test": parts.test}
    manifest = Manifest(
        src=_side(src, confs[0], texts[0]),
        tgt=_side(tgt, confs[1], texts[1]),
        seed=seed,
        paired=len(pairs),
        dropped=dropped,
        near_copies=parts.near_copies,
        near_copy_share={k: round(v, 4) for k, v in parts.overlap_before.items()},
        lines={k: len(v) for k, v in chosen.items()},
        buckets=splitting.bucket_names(),
        by_length={k: splitting.counts_by_bucket(v) for k, v in chosen.items()},
        mean_src_words={
            k: round(statistics.mean(p.src_words for p in v), 2)
            for k, v in chosen.items()
        },
    )
    _write(out, src, tgt, chosen, manifest)
    log(summary(out, manifest))
    return manifest


def _verses(conf: Conf) -> dict:
    return {ref: plain(markup) for ref, markup in read_module(conf).items()}


def _side(lang: str, conf: Conf, verses: dict) -> Side:
    return Side(
        lang,
        conf.name,
        conf.version,
        conf.versification,
        sum(map(bool, verses.values())),
    )


def _write(
    out: Path, src: str, tgt: str, chosen: dict[str, list[Pair]], manifest: Manifest
) -> None:
    """Every split file is written whole into a staging folder first, so a
    full disk or a crash there leaves the old corpus as it was; the old
    MANIFEST.json goes before the files are moved in and the new one comes
    last, so a folder caught between the two has none (prepare again)."""
    staging = out / ".incoming"
    try:
        shutil.rmtree(staging, ignore_errors=True)  # what a crash left
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(
            f"cannot make {out} ({err.strerror}); name another --out"
        ) from None
    names = []
    try:
        for name, pairs in chosen.items():
            for suffix, lines in (
                (src, (p.src for p in pairs)),
                (tgt, (p.tgt for p in pairs)),
                ("refs", (str(p.ref) for p in pairs)),
            ):
                names.append(f"{name}.{suffix}")
                atomic_write(staging / names[-1], "".join(f"{x}\n" for x in lines))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    with naming(out / MANIFEST):
        (out / MANIFEST).unlink(missing_ok=True)
        for file in names:
            (staging / file).replace(out / file)
        staging.rmdir()
    atomic_write(out / MANIFEST, json.dumps(asdict(manifest), indent=2) + "\n")


def summary(out: Path, m: Manifest) -> str:
    """What was kept and left out, and the length table, as printed."""
    d = m.dropped
    lines = [
        f"{m.src.module} ({m.src.verses:,} verses) and {m.tgt.module} "
        f"({m.tgt.verses:,}): {m.paired:,} pairs kept; left out: {d.one_side:,} "
        f"on one side only or empty, {d.renumbered:,} in {len(d.chapters)} "
        f"chapters numbered differently ({', '.join(d.chapters) or 'none'}), "
        f"{d.out_of_proportion:,} of lengths out of proportion",
        f"held out with a near copy in train (over {m.overlap:.0%} of its "
        f"{m.ngram}-grams): val {m.near_copies['val']:,}, test "
        f"{m.near_copies['test']:,}",
        f"{'split':<6} {'verses':>7} {'mean':>5}  "
        + " ".join(f"{b:>6}" for b in m.buckets),
    ]
    for name in SPLITS:
        counts = " ".join(f"{n:>6,}" for n in m.by_length[name])
        lines.append(
            f"{name:<6} {m.lines[name]:>7,} {m.mean_src_words[name]:>5.1f}  {counts}"
        )
    lines.append(f"wrote {out}/{{train,val,test}}.{{{m.src.lang},{m.tgt.lang},refs}}")
    return "\n".join(lines)
