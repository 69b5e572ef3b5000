"""Shared fixtures: tiny models and corpora, fixed seeds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
import yaml
from torch import Tensor, nn

from seq2seq import modes
from seq2seq.config import DecoderConfig, EncoderConfig, RNNConfig
from seq2seq.data.download import MIRROR_ENV
from seq2seq.lesson.checkout import LESSON_FILE, Checkout
from seq2seq.lesson.corpus import write_short_corpus
from seq2seq.model.interface import EncoderDecoder, Maps
from seq2seq.model.model import Seq2Seq, build_model
from seq2seq.specials import PAD

REPO = Path(__file__).resolve().parent.parent

# The tests' vocabulary cache: their own, not the user's ~/.cache/seq2seq.
os.environ["SEQ2SEQ_CACHE_DIR"] = tempfile.mkdtemp(prefix="seq2seq-test-cache-")


def _find_mirror() -> Path | None:
    """The Multi30k mirror: $SEQ2SEQ_DATA_MIRROR, else ../shared/data/multi30k."""
    env = os.environ.get(MIRROR_ENV)
    if env:
        return Path(env) if Path(env).is_dir() else None
    default = REPO.parent / "shared" / "data" / "multi30k"
    return default if default.is_dir() else None


MULTI30K_MIRROR = _find_mirror()
MODES = list(modes.names())  # every registered attention mode (seq2seq/modes.py)


def tiny_model(mode: str, rnn: str = "gru", layers: int = 1, seed: int = 0) -> Seq2Seq:
    """Encoder 8 per direction (16 out), decoder 16: every mode's sizes fit."""
    torch.manual_seed(seed)
    cfg = RNNConfig(
        attention=mode,
        attention_dim=12,
        encoder=EncoderConfig(rnn=rnn, embed_dim=10, hidden_size=8, layers=layers),
        decoder=DecoderConfig(rnn=rnn, embed_dim=10, hidden_size=16, layers=layers),
    )
    return build_model(cfg, src_vocab=23, tgt_vocab=29)


# Rows of one sentence computed inside batches of two shapes. The CPU's GEMM
# kernels may block (so sum) by the batch's shape: on an AVX-512 AMD EPYC a
# row computed in a batch of 3 is not bitwise that row in a batch of 2. Each
# entry is a sum of at most 64 fp32 products of values of order 1 (tanh, the
# tiny models' init), so reassociation moves it by at most about
# 64 * 2**-24 = 4e-6; ROW_ATOL leaves 2.5x that. A wrong row is caught all
# the same: different sentences' rows must differ by DISTINCT, 100x ROW_ATOL.
ROW_ATOL = 1e-5
DISTINCT = 100 * ROW_ATOL


def assert_same_rows(got: Tensor, whole: Tensor, index: Tensor) -> None:
    """``got`` holds rows ``index`` of ``whole`` within rounding, and the rows
    of ``whole`` are different sentences' (so the tolerance cannot hide a row
    taken wrongly)."""
    torch.testing.assert_close(got, whole[index], rtol=0, atol=ROW_ATOL)
    flat = whole.flatten(1)
    for i in range(flat.size(0)):
        for j in range(i):
            assert (flat[i] - flat[j]).abs().max() > DISTINCT, (i, j)


@pytest.fixture
def toy_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two sources of lengths 5 and 3 (padded), targets of lengths 4 and 2."""
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    src_len = torch.tensor([5, 3])
    tgt_in = torch.tensor([[2, 11, 12, 13], [2, 14, 0, 0]])
    tgt_out = torch.tensor([[11, 12, 13, 3], [14, 3, 0, 0]])
    return src, src_len, tgt_in, tgt_out


def write_parallel(folder: Path, name: str, src: list[str], tgt: list[str]) -> tuple:
    s, t = folder / f"{name}.src", folder / f"{name}.tgt"
    s.write_text("".join(x + "\n" for x in src), encoding="utf-8")
    t.write_text("".join(x + "\n" for x in tgt), encoding="utf-8")
    return s, t


def lesson_recipe() -> list[str]:
    """The overrides of configs/experiments/lesson.yaml other than its corpus
    and budget: the small model the trained-outcome tests were calibrated on."""
    items = yaml.safe_load((REPO / LESSON_FILE).read_text())["overrides"]
    budget = ("data.", "train.max_steps=", "train.val_every=")
    return [item for item in items if not item.startswith(budget)]


def overrides(corpus: Path, runs: Path, name: str, steps: int) -> list[str]:
    """--set overrides training configs/synth_ende on a corpus folder with the
    lesson's recipe."""
    files = [
        f"data.{split}.{side}={corpus}/{split}.{lang}"
        for split in ("train", "val", "test")
        for side, lang in (("src", "en"), ("tgt", "de"))
    ]
    return [
        *files,
        f"data.val.align={corpus}/val.align",
        f"data.test.align={corpus}/test.align",
        f"runs_dir={runs}",
        f"name={name}",
        f"train.max_steps={steps}",
        f"train.val_every={steps // 2}",
        *lesson_recipe(),
    ]


# What a gloo rank prints when it aborts in the process group's teardown, after
# the work is done (docs/reliability.md): a race inside gloo, not in this
# code. The barrier before leaving the group made it rare (none in 65
# two-process runs of the benchmark on one machine), but CI still met it.
GLOO_TEARDOWN_ABORT = "terminate called without an active exception"


def torchrun(args: list[str], fresh: tuple[Path, ...] = (), **env: str) -> str:
    """``python -m torch.distributed.run --nproc_per_node 2 ARGS``; its stdout.
    A run that fails only by gloo's teardown abort is run once more, with the
    folders in ``fresh`` removed first (any other failure, or that one twice,
    fails the test), and the abort is reported as a warning; every rank dumps
    its Python stack on the abort (PYTHONFAULTHANDLER), to show where it was."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2"]
    environ = os.environ | {"PYTHONFAULTHANDLER": "1"} | env

    def once() -> subprocess.CompletedProcess:
        for folder in fresh:
            shutil.rmtree(folder, ignore_errors=True)
        return subprocess.run(
            [*command, *args], capture_output=True, text=True, env=environ, timeout=300
        )

    proc = once()
    if proc.returncode != 0 and GLOO_TEARDOWN_ABORT in proc.stderr:
        message = f"gloo aborted a rank at teardown: {proc.stderr[-2000:]}"
        warnings.warn(message, stacklevel=2)
        proc = once()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


LESSON_TRAINED = ("none", "additive")  # what the suite trains of the lesson


@pytest.fixture(scope="session")
def lesson_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`none` and `additive` of configs/experiments/lesson.yaml (800 steps on
    the lesson's corpus, both side by side on one thread each, evaluated on
    test), shared by test_train.py and the notebooks' test (a minute or two)."""
    root = tmp_path_factory.mktemp("lesson")
    sizes = write_short_corpus(root / "corpus")
    home = Checkout(REPO)
    path = home.lesson_file(
        root / "lesson.yaml", root / "corpus", root / "runs", LESSON_TRAINED
    )
    done = subprocess.run(
        [sys.executable, "-m", "seq2seq", "experiment", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = home.run_dirs(path)  # none, additive
    files = {"file": path, "corpus": root / "corpus", "root": root / "runs"}
    return {"sizes": sizes, **files, **runs}


def tiny_overrides(corpus: Path, runs: Path, name: str) -> list[str]:
    """The same for a tiny model trained for 16 steps (seconds)."""
    return [
        *overrides(corpus, runs, name, steps=16),
        "tokenizer.vocab_size=300",
        "model.attention_dim=8",
        "model.encoder.embed_dim=8",
        "model.encoder.hidden_size=8",
        "model.decoder.embed_dim=8",
        "model.decoder.hidden_size=16",
        "train.batch_tokens=400",
        "train.num_probes=1",
    ]


def tiny_runs(root: Path, test_pairs: int) -> dict[str, Path]:
    """Tiny `none` and `additive` runs on a small synth_ende corpus (seconds)."""
    from seq2seq.config import load_config
    from seq2seq.data.synth import write_corpus
    from seq2seq.training.train import train

    sizes = {"train": 300, "val": 20, "test": test_pairs}
    write_corpus(root / "corpus", seed=5, sizes=sizes)
    out = {}
    for mode in ("none", "additive"):
        items = tiny_overrides(root / "corpus", root / "runs", mode)
        cfg = load_config(REPO / f"configs/synth_ende/{mode}.yaml", items)
        out[mode] = train(cfg, "cpu")
    return out


@pytest.fixture(scope="session")
def tiny_transformer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Transformer (2 layers, 2 heads, width 16) of
    configs/synth_ende/transformer.yaml trained for 24 steps through
    ``train`` on a small synth_ende corpus, one watched sentence (seconds);
    its run folder, shared by test_transformer.py and the browser test."""
    from seq2seq.config import load_config
    from seq2seq.data.synth import write_corpus
    from seq2seq.training.train import train

    root = tmp_path_factory.mktemp("transformer")
    sizes = {"train": 300, "val": 20, "test": 20}
    write_corpus(root / "corpus", seed=5, sizes=sizes)
    sets = transformer_overrides(root / "corpus", root / "runs", "tf", steps=24)
    cfg = load_config(TRANSFORMER, sets)
    return train(cfg, "cpu", progress="off")


TRANSFORMER = REPO / "configs/synth_ende/transformer.yaml"


def transformer_overrides(corpus: Path, runs: Path, name: str, steps: int) -> list[str]:
    """--set overrides training configs/synth_ende/transformer.yaml as a tiny
    model (2 layers, 2 heads, width 16) on a corpus folder for ``steps``."""
    sets = overrides(corpus, runs, name, steps=steps)
    sets = [s for s in sets if not s.startswith("model.")]
    sets += ["tokenizer.vocab_size=300", "train.batch_tokens=400"]
    sets += ["train.num_probes=1", "model.d_model=16", "model.heads=2"]
    return [*sets, "model.ffn=32", "model.layers=2"]


def tiny_additive(root: Path, train_pairs: int = 300) -> Path:
    """A tiny `additive` run on a small synth_ende corpus under ``root``
    (seconds); its run folder."""
    from seq2seq.config import load_config
    from seq2seq.data.synth import write_corpus
    from seq2seq.training.train import train

    sizes = {"train": train_pairs, "val": 20, "test": 20}
    write_corpus(root / "corpus", seed=5, sizes=sizes)
    cfg = load_config(
        REPO / "configs/synth_ende/additive.yaml",
        tiny_overrides(root / "corpus", root / "runs", "tiny"),
    )
    return train(cfg, "cpu")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its bytes."""
    import hashlib

    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_refused(argv: list[str], needle: str, folder: Path, capsys) -> None:  # noqa: ANN001
    """``seq2seq ARGV`` in this process: exit 2, one ``error:`` line holding
    ``needle``, no traceback, and no file under ``folder`` changed or lost."""
    from seq2seq.cli import main

    before = snapshot(folder)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    after = snapshot(folder)
    assert {k: after.get(k) for k in before} == before  # nothing changed or lost


class Tunnel:
    """What ``ssh -L PORT:localhost:TARGET`` does, on one machine: every
    connection to localhost:``port`` is relayed, bytes unchanged both ways, to
    127.0.0.1:``target`` (the browser then names localhost:PORT in Host)."""

    def __init__(self, target: int) -> None:
        import socket
        import threading

        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return  # closed
            far = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst) -> None:
        """One direction; its end is passed on as ssh passes it (half-close)."""
        import socket

        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


# A second model family in a few lines, for the tests of the seams (test_interface,
# test_families): a decoder that ignores the source (a target language model),
# written against model/interface.py only. It "attends" evenly over the real
# source positions with two heads, so that its attention is drawn, aligned
# and scored through the same code as the RNN's.


@dataclass
class Nothing:
    """The toy's memory: which source positions are real, nothing of them."""

    mask: Tensor  # (B, S)

    def select(self, index: Tensor) -> Nothing:
        return Nothing(self.mask.index_select(0, index))


@dataclass
class LastToken:
    h: Tensor  # (B, H)

    def select(self, index: Tensor) -> LastToken:
        return LastToken(self.h.index_select(0, index))


def even(mask: Tensor, queries: int) -> Maps:
    """Cross-attention spread evenly over the real positions: (B, 1, 2, Q, S)."""
    weights = mask.float() / mask.sum(dim=1, keepdim=True)  # (B, S)
    return Maps(cross=weights[:, None, None, None].expand(-1, 1, 2, queries, -1))


class SourceBlind(EncoderDecoder[Nothing, LastToken]):
    family, mode = "toy", "even"

    def __init__(self, vocab: int, hidden: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, padding_idx=PAD)
        self.out = nn.Linear(hidden, vocab)

    def encode(self, src: Tensor, src_len: Tensor) -> Nothing:
        return Nothing(src != PAD)

    def init_state(self, memory: Nothing) -> LastToken:
        rows = memory.mask.size(0)
        return LastToken(self.out.weight.new_zeros(rows, self.embed.embedding_dim))

    def step(self, prev: Tensor, state: LastToken, memory: Nothing):  # noqa: ANN201
        h = torch.tanh(self.embed(prev))  # (B, H)
        return h, LastToken(h), even(memory.mask, 1)

    def forward(self, src: Tensor, src_len: Tensor, tgt_in: Tensor, maps=True):  # noqa: ANN201
        maps = even(src != PAD, tgt_in.size(1))
        return torch.tanh(self.embed(tgt_in)), maps  # (B, T, H)

    def logits(self, out: Tensor) -> Tensor:
        return self.out(out)

    def token_loss(self, out, tgt_out, smoothing, chunked) -> Tensor:  # noqa: ANN001
        logits = self.logits(out).flatten(0, 1)
        return nn.functional.cross_entropy(
            logits, tgt_out.flatten(), ignore_index=PAD, reduction="sum"
        )

    @property
    def vocab_size(self) -> int:
        return self.out.out_features


def translates_aligned_and_drawn(run_dir: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """``translate RUN --beam 3 --json --alignments --plot`` on one line: its
    weights are distributions over the source (the display map's, drawn and
    aligned as the RNN's are) and the heatmap is written."""
    import json

    from seq2seq.cli import main

    capsys.readouterr()  # what came before
    source = tmp_path / "in.txt"
    source.write_text("the dog sleeps .\n", encoding="utf-8")
    argv = ["translate", str(run_dir), "--input", str(source), "--beam", "3"]
    plots = tmp_path / "plots"
    assert main([*argv, "--json", "--alignments", "--plot", str(plots)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    weights = json.loads(line)["weights"]
    assert weights and all(abs(sum(row) - 1) < 1e-5 for row in weights)
    assert (plots / "line00001.png").stat().st_size > 0
