"""``seq2seq score --hyp F [--hyp F2 ...] --ref R [--ref R2 ...] [--src S]``:
score any system's output, no model needed.

The numbers are sacreBLEU's, as its CLI computes them (``sacrebleu R R2 -i
F -m bleu chrf``: every line scored, an empty hypothesis too), so that a
figure here can be checked there (tests/test_score.py does). With ``--src``,
BLEU and chrF by source length in the buckets evaluate uses; with two or more
hypothesis files (the same source translated by several systems), the paired
bootstrap (Koehn 2004) of each against the first, overall and per bucket.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from seq2seq.data.parallel import read_lines
from seq2seq.errors import UserError
from seq2seq.results import ScoredSystem, ScoreReport
from seq2seq.results.comparison import VsBaseline
from seq2seq.training.metrics import bootstrap_by_length
from seq2seq.training.scoring import text_scores


def score(
    hyps: Sequence[Path],
    refs: Sequence[Path],
    src: Path | None,
    edges: Sequence[int],
    names: Sequence[str] = (),
) -> ScoreReport:
    """Every file in ``hyps`` against the references ``refs`` (line for line),
    by the source length of ``src`` in buckets with upper ``edges``; the
    systems are called ``names`` (default: their paths as given)."""
    names = system_names(hyps, names)
    streams = [read_lines(path) for path in refs]
    outputs = [read_lines(path) for path in hyps]
    lengths = None if src is None else source_lengths(src)
    named = [*zip(refs, streams, strict=True), *zip(hyps, outputs, strict=True)]
    check_lines(named, src, lengths)
    ref, more = streams[0], streams[1:]
    groups = [[i] for i in range(len(ref))]  # one sentence a line
    systems: list[ScoredSystem] = []
    signature = None
    for name, path, out in zip(names, hyps, outputs, strict=True):
        vs = None
        if systems:
            test, buckets, signature = bootstrap_by_length(
                outputs[0], out, ref, lengths, edges, more
            )
            vs = VsBaseline(names[0], test, buckets)
        scores = text_scores(out, ref, lengths, groups, edges, more)
        systems.append(ScoredSystem(name, str(path), scores, vs))
    src_name = None if src is None else str(src)
    return ScoreReport(tuple(map(str, refs)), src_name, tuple(systems), signature)


def system_names(hyps: Sequence[Path], names: Sequence[str]) -> list[str]:
    """The systems' names: ``names`` (one per file), or the paths; each once."""
    if names and len(names) != len(hyps):
        raise UserError(
            f"score: {len(names)} --hyp-name for {len(hyps)} --hyp; name every "
            "hypothesis file, in the same order, or none"
        )
    out = list(names) or [str(h) for h in hyps]
    for i, name in enumerate(out):
        if name in out[:i]:
            raise UserError(
                f"score: two systems are called {name!r}; give each --hyp its own "
                "--hyp-name"
            )
    return out


def source_lengths(src: Path) -> list[int]:
    """Words in each line of ``src`` (evaluate's measure of length); a line
    without any has no bucket, and is refused."""
    lengths = [len(line.split()) for line in read_lines(src)]
    if 0 in lengths:
        raise UserError(
            f"{src}:{lengths.index(0) + 1}: an empty source line; BLEU by length "
            "needs words on every source line (drop the line from every file, "
            "or leave out --src)"
        )
    return lengths


def check_lines(
    files: Sequence[tuple[Path, list[str]]],
    src: Path | None,
    lengths: list[int] | None,
) -> None:
    """Every file (and the source) has the first reference's lines, one or
    more of them."""
    first, ref = files[0]
    if not ref:
        raise UserError(f"{first}: empty; nothing to score")
    counts = [(path, len(lines)) for path, lines in files[1:]]
    if src is not None and lengths is not None:
        counts.append((src, len(lengths)))
    for path, n in counts:
        if n != len(ref):
            raise UserError(
                f"{path} has {n:,} lines but {first} has {len(ref):,}; "
                "score needs one line per reference line in every file"
            )


def format_report(report: ScoreReport) -> str:
    """The scores as markdown tables: one row per system, then the paired
    bootstrap against the first."""
    first = report.systems[0].scores
    refs = len(report.refs)
    lines = [
        f"{first.n:,} lines against {', '.join(report.refs)} "
        f"({refs} reference{'s' if refs > 1 else ''})",
        f"  BLEU: {first.signature}",
        f"  chrF: {first.chrf_signature}",
        "",
    ]
    filled = first.filled()
    head = ["system", "BLEU", "chrF"]
    head += [f"BLEU {b.lo}-{b.hi} (n={b.n})" for b in filled]
    head += [f"chrF {b.lo}-{b.hi}" for b in filled]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for system in report.systems:
        s = system.scores
        cells = [system.name, f"{s.bleu:.2f}", f"{s.chrf:.2f}"]
        cells += [f"{b.bleu:.1f}" for b in s.filled() if b.bleu is not None]
        cells += [f"{b.chrf:.1f}" for b in s.filled() if b.chrf is not None]
        lines.append("| " + " | ".join(cells) + " |")
    if report.bootstrap_signature is not None:
        lines += ["", bootstrap_markdown(report, report.bootstrap_signature)]
    return "\n".join(lines)


def bootstrap_markdown(report: ScoreReport, signature: str) -> str:
    base = report.systems[0]
    filled = base.scores.filled()
    head = ["system", "BLEU (mean ± 95% CI)", f"p vs {base.name}"]
    head += [f"p {b.lo}-{b.hi}" for b in filled]
    lines = [
        f"Paired bootstrap against {base.name}; {signature}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for system in report.systems[1:]:
        vs = system.vs_first
        assert vs is not None  # score() paired every system after the first
        cells = [system.name, f"{vs.test.mean:.2f} ± {vs.test.ci:.2f}"]
        cells.append(f"{vs.test.p_value:.4f}")
        cells += [f"{b.test.p_value:.4f}" if b.test else "-" for b in vs.buckets if b.n]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
