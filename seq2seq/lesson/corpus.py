"""The corpus the lesson's notebooks and the integration tests train on: the
shipped synthetic corpus (seq2seq.data.synth) cut to short pairs, so that a
small model learns it in about a thousand steps and still shows the
bottleneck.

    write_short_corpus(Path("data/lesson"))   # seconds

writes ``{train,val,test}.{en,de,align}`` (pairs of at most ``max_words``
English words) and keeps the whole corpus in ``<out>/full``.
"""

from __future__ import annotations

import json
from pathlib import Path

from seq2seq.data.synth import VERSION, write_corpus
from seq2seq.files import atomic_write

MAX_WORDS = 30  # short enough to train in minutes, long enough to show the bottleneck
SEED = 3
SIZES = {"train": 16000, "val": 300, "test": 900}  # before the cut
EXTENSIONS = ("en", "de", "align")


def write_short_corpus(
    out_dir: Path, max_words: int = MAX_WORDS, seed: int = SEED
) -> dict[str, int]:
    """The corpus of ``write_corpus(out_dir / "full", seed, SIZES)``, keeping
    pairs of at most ``max_words`` English words; returns the pairs kept per
    split. Written again when a file is missing or the slice was made by
    another generator or with other settings."""
    out_dir = Path(out_dir)
    stamp = out_dir / "SLICE.json"
    made = {"version": VERSION, "seed": seed, "sizes": SIZES, "max_words": max_words}
    paths = [out_dir / f"{split}.{ext}" for split in SIZES for ext in EXTENSIONS]
    if stamp.is_file() and all(f.is_file() for f in paths):
        saved = json.loads(stamp.read_text(encoding="utf-8"))
        if saved.get("made") == made:
            return dict(saved["kept"])
    stamp.unlink(missing_ok=True)
    write_corpus(out_dir / "full", seed=seed, sizes=SIZES)
    kept = {}
    for split in SIZES:
        files = {
            ext: (out_dir / "full" / f"{split}.{ext}")
            .read_text(encoding="utf-8")
            .splitlines()
            for ext in EXTENSIONS
        }
        keep = [i for i, en in enumerate(files["en"]) if len(en.split()) <= max_words]
        for ext, lines in files.items():
            text = "".join(lines[i] + "\n" for i in keep)
            atomic_write(out_dir / f"{split}.{ext}", text)
        kept[split] = len(keep)
    # last: marks a complete slice
    atomic_write(stamp, json.dumps({"made": made, "kept": kept}) + "\n")
    return kept
