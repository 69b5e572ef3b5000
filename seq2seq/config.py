"""Configuration: YAML -> frozen, typed dataclasses, validated once at load.

Every key has a default except the corpus paths (``data.train.src`` ...), so a
config that only names its parallel files is valid. Unknown keys, wrong types
and out-of-range values raise :class:`UserError` naming the dotted key.
Dotted overrides (``--set train.lr=3e-4``) are applied before validation, so
they are checked exactly like the file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from seq2seq.errors import UserError
from seq2seq.typed_yaml import apply_override, build, read_yaml, to_dict

AttentionMode = Literal[
    "none", "context", "mean", "hard", "additive", "dot", "general", "scaled_dot"
]
RNNType = Literal["gru", "lstm"]


@dataclass(frozen=True)
class SplitFiles:
    src: str
    tgt: str
    align: str | None = None  # gold Pharaoh alignments (source-target), if any


@dataclass(frozen=True)
class DataConfig:
    train: SplitFiles
    val: SplitFiles
    test: SplitFiles | None = None
    max_src_words: int = 100  # training pairs longer than this are dropped
    max_tgt_words: int = 100
    join_train: int = 1  # >1: train on k = 1..N consecutive pairs joined (joined.py)
    join_val: int = 1  # >1: validate (early stopping, heatmaps) on joined val pairs

    def __post_init__(self) -> None:
        _check(self.join_train >= 1, "data.join_train", "must be >= 1 (1: off)")
        _check(self.join_val >= 1, "data.join_val", "must be >= 1 (1: off)")
        _check(self.max_src_words >= 1, "data.max_src_words", "must be >= 1")
        _check(self.max_tgt_words >= 1, "data.max_tgt_words", "must be >= 1")


@dataclass(frozen=True)
class TokenizerConfig:
    model_type: Literal["unigram", "bpe"] = "unigram"
    vocab_size: int = 8000
    joint: bool = True  # one vocabulary for source and target
    character_coverage: float = 1.0

    def __post_init__(self) -> None:
        _check(self.vocab_size >= 8, "tokenizer.vocab_size", "must be >= 8")
        _check(
            0.9 <= self.character_coverage <= 1.0,
            "tokenizer.character_coverage",
            "must be in [0.9, 1]",
        )


@dataclass(frozen=True)
class EncoderConfig:
    rnn: RNNType = "gru"
    embed_dim: int = 256
    hidden_size: int = 256  # per direction
    layers: int = 1
    bidirectional: bool = True
    dropout: float = 0.2
    reverse: bool = False  # read right to left (Sutskever 2014); unidirectional

    def __post_init__(self) -> None:
        _check_sizes("model.encoder", self.embed_dim, self.hidden_size, self.layers)
        _check_dropout("model.encoder.dropout", self.dropout)
        _check(
            not (self.reverse and self.bidirectional),
            "model.encoder.reverse",
            "a bidirectional encoder reads both ways already; set "
            "model.encoder.bidirectional=false to read the source reversed",
        )


@dataclass(frozen=True)
class DecoderConfig:
    rnn: RNNType = "gru"
    embed_dim: int = 256
    hidden_size: int = 256
    layers: int = 1
    dropout: float = 0.2
    input_feeding: bool = True  # Luong 2015 Sec. 3.3: feed the attentional vector

    def __post_init__(self) -> None:
        _check_sizes("model.decoder", self.embed_dim, self.hidden_size, self.layers)
        _check_dropout("model.decoder.dropout", self.dropout)


@dataclass(frozen=True)
class ModelConfig:
    attention: AttentionMode = "additive"
    attention_dim: int = 256  # hidden size of the additive score's MLP
    # RNN weights: PyTorch's uniform(+-1/sqrt(H)) and biases, or Xavier per
    # gate with zero biases (JoeyNMT's "xavier_uniform", used by its baseline)
    rnn_init: Literal["pytorch", "xavier"] = "pytorch"
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)

    def __post_init__(self) -> None:
        _check(self.attention_dim >= 1, "model.attention_dim", "must be >= 1")
        if self.attention in ("dot", "scaled_dot"):
            keys = self.encoder.hidden_size * (2 if self.encoder.bidirectional else 1)
            _check(
                keys == self.decoder.hidden_size,
                "model.attention",
                f"'{self.attention}' scores need decoder.hidden_size == encoder "
                f"output size ({keys}); set model.decoder.hidden_size={keys}",
            )


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 42
    lr: float = 1e-3
    schedule: Literal["constant", "plateau", "cosine"] = "constant"
    warmup_steps: int = 0
    plateau_factor: float = 0.5  # lr *= factor when the stop_metric stalls
    plateau_patience: int = 2  # validations without improvement
    min_lr: float = 1e-6
    clip_norm: float = 1.0
    label_smoothing: float = 0.0
    max_epochs: int = 10
    max_steps: int = 0  # 0 = no limit (epochs decide)
    max_minutes: float = 0.0  # 0 = no wall-clock budget
    batch_tokens: int = 4000  # padded tokens per batch (max of src/tgt side)
    batch_sentences: int = 0  # if > 0: fixed number of sentences per batch
    val_every: int = 500  # steps; 0 = once per epoch
    log_every: int = 50
    checkpoint_every: int = 200  # steps between last.pt saves (and at validations)
    patience: int = 0  # early stopping on the stop_metric; 0 = off
    # What early stopping, the plateau schedule and best.pt follow: validation
    # BLEU (greedy) or validation loss (lower is better; less noisy while a
    # model is still weak and its greedy output lengths swing).
    stop_metric: Literal["bleu", "loss"] = "bleu"
    val_max_sentences: int = 0  # 0 = the whole validation set
    num_probes: int = 4  # fixed validation sentences drawn as heatmaps
    # bf16: autocast matmuls to bfloat16 (fast on CPUs with AMX/AVX-512 BF16);
    # auto: bf16 on CUDA, fp32 on the CPU (see device.py)
    precision: Literal["auto", "fp32", "bf16"] = "auto"
    # Adam's fused kernel: one pass over each parameter instead of a dozen
    # (about 6x faster optimizer step on the CPU), the same update up to
    # rounding. Off by default so that the older runs made without it stay
    # reproducible bit for bit; the shipped corpus's base.yaml and the
    # benchmark config (bench_additive.yaml) turn it on.
    fused_adam: bool = False
    # The output layer and its cross-entropy in cache-sized row chunks, with
    # their gradients (seq2seq/loss.py): the same loss up to rounding, about a
    # third faster, and no (tokens, vocabulary) logits in memory. Off by default
    # for the same reason as fused_adam; the same configs turn it on.
    fused_loss: bool = False
    # Length curriculum (seq2seq/curriculum.py, Platanios et al. 2019): short
    # pairs first, all pairs from step curriculum_steps on; 0 = off. The
    # stopping rule (plateau halving, patience) counts only after that step.
    curriculum_steps: int = 0
    curriculum_start: float = 0.1  # the shortest fraction of the data at step 0

    def __post_init__(self) -> None:
        _check(self.lr > 0, "train.lr", "must be > 0")
        _check(
            0 < self.curriculum_start <= 1,
            "train.curriculum_start",
            "must be in (0, 1]",
        )
        _check(self.clip_norm >= 0, "train.clip_norm", "must be >= 0 (0 = off)")
        _check(
            0 <= self.label_smoothing < 1, "train.label_smoothing", "must be in [0, 1)"
        )
        _check(0 < self.plateau_factor < 1, "train.plateau_factor", "must be in (0, 1)")
        _check(self.plateau_patience >= 1, "train.plateau_patience", "must be >= 1")
        _check(
            0 <= self.min_lr <= self.lr,
            "train.min_lr",
            f"must be in [0, train.lr = {self.lr:g}]",
        )
        _check(
            self.schedule != "cosine" or self.max_steps > 0,
            "train.schedule",
            "cosine needs train.max_steps > 0 (the step where it ends)",
        )
        for name in ("max_epochs", "batch_tokens", "log_every"):
            _check(getattr(self, name) >= 1, f"train.{name}", "must be >= 1")
        for name in (
            "max_steps",
            "batch_sentences",
            "val_every",
            "patience",
            "checkpoint_every",
            "curriculum_steps",
        ):
            _check(getattr(self, name) >= 0, f"train.{name}", "must be >= 0")
        for name in ("warmup_steps", "val_max_sentences", "num_probes"):
            _check(getattr(self, name) >= 0, f"train.{name}", "must be >= 0")
        _check(self.max_minutes >= 0, "train.max_minutes", "must be >= 0")


@dataclass(frozen=True)
class EvalConfig:
    # Upper edges (inclusive, in source words) of the length buckets; a last
    # bucket holds everything longer.
    buckets: tuple[int, ...] = (10, 20, 30, 40)
    max_len_ratio: float = 2.0  # greedy output stops at ratio * source + 10 tokens
    batch_sentences: int = 100

    def __post_init__(self) -> None:
        ok = all(a < b for a, b in zip(self.buckets, self.buckets[1:], strict=False))
        _check(
            ok and all(b >= 1 for b in self.buckets),
            "eval.buckets",
            "must be increasing positive integers",
        )
        _check(self.max_len_ratio > 0, "eval.max_len_ratio", "must be > 0")
        _check(self.batch_sentences >= 1, "eval.batch_sentences", "must be >= 1")


@dataclass(frozen=True)
class Config:
    data: DataConfig
    name: str = "run"
    runs_dir: str = "runs"
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.name


def _check(ok: bool, key: str, why: str) -> None:
    if not ok:
        raise UserError(f"config key '{key}': {why}")


def _check_sizes(prefix: str, embed: int, hidden: int, layers: int) -> None:
    _check(embed >= 1, f"{prefix}.embed_dim", "must be >= 1")
    _check(hidden >= 1, f"{prefix}.hidden_size", "must be >= 1")
    _check(layers >= 1, f"{prefix}.layers", "must be >= 1")


def _check_dropout(key: str, p: float) -> None:
    _check(0 <= p < 1, key, f"must be in [0, 1), got {p}")


# --------------------------------------------------------------------- loading


def load_config(path: str | Path, overrides: list[str] | None = None) -> Config:
    """Read a YAML file (and its ``base:`` files), apply ``a.b=value``
    overrides, and validate."""
    path = Path(path)
    raw = read_yaml(path)
    for item in overrides or []:
        apply_override(raw, item)
    try:
        return build(Config, raw, "")
    except UserError as err:
        raise UserError(f"{path}: {err}") from None


# What ``--resume`` may change: how long to train, never what is trained.
RESUMABLE = (
    "train.max_steps",
    "train.max_epochs",
    "train.max_minutes",
    "train.patience",
)


def load_resume_config(run_dir: Path, overrides: list[str]) -> Config:
    """A run's saved config for ``--resume``, placed where the run now is,
    with budget overrides only."""
    if not (run_dir / "config.yaml").is_file():
        raise UserError(f"{run_dir}: not a run directory (no config.yaml)")
    for item in overrides:
        key = item.partition("=")[0]
        if key not in RESUMABLE:
            raise UserError(
                f"--set {key}: a resumed run keeps its config; only "
                f"{', '.join(RESUMABLE)} may change (start a new run for others)"
            )
    cfg = load_config(run_dir / "config.yaml", overrides)
    return dataclasses.replace(cfg, runs_dir=str(run_dir.parent), name=run_dir.name)


def config_from_dict(raw: dict[str, Any]) -> Config:
    return build(Config, raw, "")


def save_config(cfg: Config, path: Path) -> None:
    path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
