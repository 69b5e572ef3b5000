"""Configuration: YAML -> frozen, typed dataclasses, validated once at load.

Every key has a default except the corpus paths (``data.train.src`` ...), so a
config that only names its parallel files is valid. Unknown keys, wrong types
and out-of-range values raise :class:`UserError` naming the dotted key.
Dotted overrides (``--set train.lr=3e-4``) are applied before validation, so
they are checked exactly like the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from seq2seq import families, modes, run
from seq2seq.errors import UserError
from seq2seq.files import atomic_write
from seq2seq.typed_yaml import Range, apply_override, build, read_yaml, to_dict

RNNType = Literal["gru", "lstm"]


def key(
    default: Any = MISSING,
    help: str = "",
    factory: Any = MISSING,
    rng: Range | None = None,
    choices: Callable[[], tuple[str, ...]] | None = None,
    sections: Callable[[], dict[str, type]] | None = None,
) -> Any:
    """A config field with its one-line meaning and, for a number, the range it
    takes (checked at load: typed_yaml.check_range); for a name looked up in a
    registry, the registry's names (checked at load too); for a section that
    is one of several, chosen by its ``family`` key, the registry's sections
    (typed_yaml.pick_section). docs/config.md lists them (``python
    scripts/config_reference.py`` writes that page from these)."""
    meta = {"help": help, "range": rng, "choices": choices, "sections": sections}
    return field(default=default, default_factory=factory, metadata=meta)


# Every number has a ceiling as well as a floor: a value no machine can hold
# gets the same one-line error as one below the floor, before anything is
# built, and no size multiplied later (the memory check, an embedding table)
# can overflow. The ceilings are far above any sensible setting.
MAX_COUNT = 10**9  # steps, sentences, intervals
COUNT = Range(lo=1, hi=MAX_COUNT)
COUNT_OR_0 = Range(lo=0, hi=MAX_COUNT)  # where 0 means "off" or "no limit"
WIDTH = Range(lo=1, hi=65_536)  # embedding, state and score widths
LAYERS = Range(lo=1, hi=64)
WORDS = Range(lo=1, hi=100_000)  # a sentence's length in words
JOINED = Range(lo=1, hi=64)  # pairs joined into one
BELOW_1 = Range(lo=0, hi=1, hi_open=True)  # dropout, label smoothing
SEED = Range(lo=0, hi=2**32 - 1)  # what numpy's and torch's seeding take
LEARNING_RATE = Range(lo=0, hi=10, lo_open=True)  # Adam's step; above 10, inf


@dataclass(frozen=True)
class SplitFiles:
    src: str = key(help="source-side text, one sentence a line (.gz read as gzip)")
    tgt: str = key(help="target-side text, line for line with src")
    align: str | None = key(
        None, "gold Pharaoh alignments (src-tgt word links) a line; scores AER"
    )


@dataclass(frozen=True)
class DataConfig:
    train: SplitFiles = key(help="the training pair of files")
    val: SplitFiles = key(help="validation: early stopping, BLEU curve, heatmaps")
    test: SplitFiles | None = key(None, "what `seq2seq evaluate --split test` scores")
    max_src_words: int = key(
        100, "training pairs with a longer source are dropped", rng=WORDS
    )
    max_tgt_words: int = key(
        100, "training pairs with a longer target are dropped", rng=WORDS
    )
    join_train: int = key(
        1,
        "> 1: train on 1..N consecutive pairs joined into one (long inputs)",
        rng=JOINED,
    )
    join_val: int = key(
        1,
        "> 1: validate (stopping, heatmaps) on val pairs joined the same way",
        rng=JOINED,
    )


@dataclass(frozen=True)
class TokenizerConfig:
    model_type: Literal["unigram", "bpe"] = key(
        "unigram", "sentencepiece's subword model"
    )
    vocab_size: int = key(
        8000,
        "subwords per vocabulary; a small corpus supports only so many",
        rng=Range(lo=8, hi=1_000_000),
    )
    joint: bool = key(True, "one vocabulary for both languages (else one each)")
    character_coverage: float = key(
        1.0,
        "share of characters sentencepiece keeps; rarer ones become <unk>",
        rng=Range(lo=0.9, hi=1),
    )


@dataclass(frozen=True)
class EncoderConfig:
    rnn: RNNType = key("gru", "the recurrent cell")
    embed_dim: int = key(256, "source embedding width", rng=WIDTH)
    hidden_size: int = key(256, "state width per direction", rng=WIDTH)
    layers: int = key(1, "stacked recurrent layers", rng=LAYERS)
    bidirectional: bool = key(True, "read both ways; states are [forward; backward]")
    dropout: float = key(0.2, "on embeddings and between layers", rng=BELOW_1)
    reverse: bool = key(
        False, "read right to left (Sutskever 2014); unidirectional encoders only"
    )

    def __post_init__(self) -> None:
        check_key(
            not (self.reverse and self.bidirectional),
            "model.encoder.reverse",
            "a bidirectional encoder reads both ways already; set "
            "model.encoder.bidirectional=false to read the source reversed",
        )


@dataclass(frozen=True)
class DecoderConfig:
    rnn: RNNType = key("gru", "the recurrent cell")
    embed_dim: int = key(256, "target embedding width", rng=WIDTH)
    hidden_size: int = key(
        256, "state width (dot, scaled_dot: the encoder's)", rng=WIDTH
    )
    layers: int = key(1, "stacked recurrent layers", rng=LAYERS)
    dropout: float = key(
        0.2, "on embeddings, between layers, before the output", rng=BELOW_1
    )
    input_feeding: bool = key(
        True, "feed the last attentional vector back in (Luong 2015, Sec. 3.3)"
    )


class ModelConfig:
    """What every family's ``model`` section is: a frozen dataclass of this
    class whose first key, ``family``, has its family's name as its only
    value (families.py registers it beside the family's builder, so that
    typed_yaml picks it by that key). The RNN's is below; another family's
    lives in its own folder (model/transformer/config.py). The two methods
    have defaults a family may override."""

    family: str

    def hparams(self) -> dict[str, str | int | float]:
        """The settings TensorBoard's HPARAMS tab compares runs by: by default
        every top-level name, number and switch of the section."""
        plain = to_dict(self).items()
        return {k: v for k, v in plain if isinstance(v, str | int | float)}

    def check_with(self, cfg: Config) -> None:
        """Check this section against the rest of ``cfg`` when it loads (a
        key that needs another section's), raising a one-line UserError."""


@dataclass(frozen=True)
class RNNConfig(ModelConfig):
    """The RNN family's model section (model/model.py builds it), the
    default: a config that names no family is an RNN."""

    family: Literal["rnn"] = key(
        "rnn", "the model family (seq2seq/families.py); the keys below are its own"
    )
    attention: str = key(
        "additive",
        "what the decoder sees of the source (docs/model.md)",
        choices=modes.names,  # the registry of attention modes (modes.py)
    )
    attention_dim: int = key(256, "hidden width of the additive score's MLP", rng=WIDTH)
    # JoeyNMT's "xavier_uniform" is Xavier per gate with zero biases.
    rnn_init: Literal["pytorch", "xavier"] = key(
        "pytorch", "RNN weights: PyTorch's uniform(1/sqrt(H)), or Xavier per gate"
    )
    encoder: EncoderConfig = key(factory=EncoderConfig, help="the source reader")
    decoder: DecoderConfig = key(factory=DecoderConfig, help="the target writer")

    def __post_init__(self) -> None:
        mode = modes.registry().get(self.attention)
        if mode is not None and mode.query_is_key:
            keys = self.encoder.hidden_size * (2 if self.encoder.bidirectional else 1)
            check_key(
                keys == self.decoder.hidden_size,
                "model.attention",
                f"'{self.attention}' scores need decoder.hidden_size == encoder "
                f"output size ({keys}); set model.decoder.hidden_size={keys}",
            )

    def hparams(self) -> dict[str, str | int | float]:
        return {
            "mode": self.attention,
            "rnn": self.encoder.rnn,
            "embed_dim": self.encoder.embed_dim,
            "enc_hidden": self.encoder.hidden_size,
            "dec_hidden": self.decoder.hidden_size,
        }


@dataclass(frozen=True)
class TrainConfig:
    seed: int = key(
        42, "weights, dropout and batch order; same machine: same run", rng=SEED
    )
    lr: float = key(1e-3, "Adam's peak learning rate", rng=LEARNING_RATE)
    # noam: Vaswani et al. 2017 (5.3), lr peaking at train.lr after the
    # warmup, as JoeyNMT's, fairseq's inverse_sqrt and Marian's schedules do.
    schedule: Literal["constant", "plateau", "cosine", "noam"] = key(
        "constant",
        "cosine to min_lr at max_steps, halve-on-plateau, or noam: "
        "lr x sqrt(warmup_steps / step) after the warmup",
    )
    warmup_steps: int = key(0, "steps of linear warmup to lr", rng=COUNT_OR_0)
    accumulate: int = key(
        1,
        "batches whose gradients make one update (an N x larger batch)",
        rng=Range(lo=1, hi=10_000),
    )
    # Checkpoint averaging (Vaswani et al. 2017, Sec. 6.1: the last 5 or 20
    # checkpoints; JoeyNMT's and fairseq's average_checkpoints).
    average_last: int = key(
        0,
        "keep the weights of the last N validations (step_N.pt) and write "
        "averaged.pt, their mean, at the end; 0 = off",
        rng=Range(lo=0, hi=1000),
    )
    plateau_factor: float = key(
        0.5,
        "plateau: lr *= this when stop_metric stalls",
        rng=Range(lo=0, hi=1, lo_open=True, hi_open=True),
    )
    plateau_patience: int = key(2, "plateau: validations without a new best", rng=COUNT)
    min_lr: float = key(1e-6, "floor of every schedule", rng=Range(lo=0, hi=10))
    clip_norm: float = key(
        1.0, "gradient norm clipping; 0 = off", rng=Range(lo=0, hi=1e6)
    )
    label_smoothing: float = key(0.0, "mass spread over the vocabulary", rng=BELOW_1)
    max_epochs: int = key(10, "passes over the training pairs", rng=COUNT)
    max_steps: int = key(
        0, "updates; 0 = no limit (max_epochs decides)", rng=COUNT_OR_0
    )
    max_minutes: float = key(
        0.0, "wall-clock budget; 0 = none", rng=Range(lo=0, hi=1e7)
    )
    batch_tokens: int = key(
        4000,
        "padded tokens per batch (the longer side of each pair)",
        rng=Range(lo=1, hi=10_000_000),
    )
    batch_sentences: int = key(
        0, "> 0: exactly this many pairs per batch instead", rng=COUNT_OR_0
    )
    val_every: int = key(
        500, "steps between validations; 0 = once per epoch", rng=COUNT_OR_0
    )
    log_every: int = key(
        50, "steps between loss/lr lines and TensorBoard scalars", rng=COUNT
    )
    checkpoint_every: int = key(
        200, "steps between last.pt saves (and each val)", rng=COUNT_OR_0
    )
    patience: int = key(
        0, "stop after this many validations without a best; 0 = off", rng=COUNT_OR_0
    )
    # Validation loss is less noisy than greedy BLEU while a model is still
    # weak and its output lengths swing.
    stop_metric: Literal["bleu", "loss"] = key(
        "bleu", "what early stopping, the plateau schedule and best.pt follow"
    )
    val_max_sentences: int = key(
        0,
        "greedy BLEU/chrF on the first N val pairs (loss: all); 0 = all",
        rng=COUNT_OR_0,
    )
    num_probes: int = key(
        4,
        "fixed val sentences drawn as heatmaps each validation",
        rng=Range(lo=0, hi=64),
    )
    precision: Literal["auto", "fp32", "bf16"] = key(
        "auto", "auto: bf16 autocast on CUDA, fp32 on the CPU (device.py)"
    )
    # Off by default so that runs made without them reproduce bit for bit: the
    # same update or loss up to rounding, in another kernel (docs/speed.md).
    fused_adam: bool = key(False, "Adam's fused kernel: one pass per parameter")
    chunked_loss: bool = key(
        False,
        "output layer + cross-entropy in cache-sized chunks (model/loss.py)",
    )
    # A run's config.yaml keeps the path it asked for, and an
    # older one's fused_recurrence reads as steps or sequence (RENAMED).
    recurrence: Literal["auto", "compiled", "sequence", "steps"] = key(
        "auto",
        "how the recurrences train: steps (the cells step by step, the "
        "reference), sequence (each layer over all steps as one node, "
        "model/fast/recurrence.py), compiled (the same with C++ loops), auto (the "
        "fastest this machine and model support; model/fast/)",
    )
    # Platanios et al. 2019; the stopping rule counts only once every pair is open.
    curriculum_steps: int = key(
        0,
        "length curriculum: short pairs first, all from this step; 0 = off",
        rng=COUNT_OR_0,
    )
    curriculum_start: float = key(
        0.1,
        "curriculum: the shortest fraction of the pairs open at step 0",
        rng=Range(lo=0, hi=1, lo_open=True),
    )

    def __post_init__(self) -> None:
        check_key(
            self.min_lr <= self.lr,
            "train.min_lr",
            f"must be <= train.lr = {self.lr:g}, got {self.min_lr:g}",
        )
        check_key(
            self.schedule != "cosine" or self.max_steps > 0,
            "train.schedule",
            "cosine needs train.max_steps > 0 (the step where it ends)",
        )
        check_key(
            self.schedule != "noam" or self.warmup_steps > 0,
            "train.schedule",
            "noam needs train.warmup_steps > 0 (the step where lr peaks)",
        )


@dataclass(frozen=True)
class EvalConfig:
    buckets: tuple[int, ...] = key(
        (10, 20, 30, 40),
        "upper edges of the length buckets in source words",
        rng=WORDS,
    )
    max_len_ratio: float = key(
        2.0,
        "an output stops at ratio x source length + 10 tokens",
        rng=Range(lo=0, hi=100, lo_open=True),
    )
    batch_sentences: int = key(
        100, "sentences decoded together", rng=Range(lo=1, hi=1_000_000)
    )

    def __post_init__(self) -> None:
        ok = all(a < b for a, b in zip(self.buckets, self.buckets[1:], strict=False))
        check_key(ok, "eval.buckets", f"must be increasing, got {list(self.buckets)}")


@dataclass(frozen=True)
class Config:
    data: DataConfig = key(help="the corpus")
    name: str = key("run", "the run folder, under runs_dir")
    runs_dir: str = key("runs", "where run folders go")
    tokenizer: TokenizerConfig = key(factory=TokenizerConfig, help="sentencepiece")
    model: ModelConfig = key(
        factory=RNNConfig, help="build_model's parts", sections=families.sections
    )
    train: TrainConfig = key(factory=TrainConfig, help="the loop")
    eval: EvalConfig = key(factory=EvalConfig, help="evaluate and validation")

    def __post_init__(self) -> None:
        check_run_name(self.name, "name")
        self.model.check_with(self)
        family = families.family(self.model.family)
        why = family.unsupported(self.model, self.train.recurrence)
        check_key(why is None, "train.recurrence", f"{why}; use auto or steps")

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.name


def check_run_name(name: str, key: str) -> None:
    """A run's name is a relative path of plain components, so that its folder
    lies inside runs_dir (and ``--overwrite`` can delete nothing else)."""
    parts = name.split("/")
    plain = all(p not in ("", ".", "..") and "\\" not in p for p in parts)
    check_key(
        bool(name.strip()) and plain and "\0" not in name,
        key,
        f"{name!r} is not a run name: use a relative path of plain folder names "
        "(e.g. multi30k/additive), without '..', '.', a leading '/' or empty parts",
    )


def check_key(ok: bool, key: str, why: str) -> None:
    if not ok:
        raise UserError(f"config key '{key}': {why}")


# --------------------------------------------------------------------- loading


# Keys that were renamed, with how their old values read now (None: as they
# were): a run's saved config.yaml keeps loading, and keeps the path it
# trained with.
RENAMED: dict[tuple[str, str], tuple[str, dict[bool, object] | None]] = {
    ("train", "fused_recurrence"): ("recurrence", {False: "steps", True: "sequence"}),
    ("train", "fused_loss"): ("chunked_loss", None),
}


def upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with renamed keys under their new names (see RENAMED)."""
    for (section, old), (new, values) in RENAMED.items():
        part = raw.get(section)
        if not isinstance(part, dict) or old not in part:
            continue
        if new in part:
            raise UserError(
                f"config keys '{section}.{old}' and '{section}.{new}': the first "
                "is the second's old name; keep only the second"
            )
        value = part.pop(old)
        if not isinstance(value, bool):
            raise UserError(
                f"config key '{section}.{old}' (now '{section}.{new}'): expected "
                f"true or false, got {value!r}"
            )
        part[new] = value if values is None else values[value]
    return raw


def load_config(path: str | Path, overrides: list[str] | None = None) -> Config:
    """Read a YAML file (and its ``base:`` files), apply ``a.b=value``
    overrides, and validate."""
    path = Path(path)
    raw = read_yaml(path)
    for item in overrides or []:
        apply_override(raw, item)
    try:
        return build(Config, upgrade(raw), "")
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
    run.check_run(run_dir)
    for item in overrides:
        key = item.partition("=")[0]
        if key not in RESUMABLE:
            raise UserError(
                f"--set {key}: a resumed run keeps its config; only "
                f"{', '.join(RESUMABLE)} may change (start a new run for others)"
            )
    cfg = load_config(run.config_file(run_dir), overrides)
    here = run_dir.resolve()  # "." has no name of its own
    return dataclasses.replace(cfg, runs_dir=str(here.parent), name=here.name)


def config_from_dict(raw: dict[str, Any]) -> Config:
    return build(Config, upgrade(raw), "")


def save_config(cfg: Config, path: Path) -> None:
    atomic_write(path, yaml.safe_dump(to_dict(cfg), sort_keys=False))
