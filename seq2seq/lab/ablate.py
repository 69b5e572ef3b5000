"""``seq2seq evaluate --ablate HOW``: decode with a trained model's attention
weights replaced (uniform, shuffled, none; model/ablation.py has the rules
and the reasons) and report the BLEU drop against the model as trained.

By default the whole cross-attention is replaced: an RNN's one attention,
every layer and head of a Transformer's. ``--attention``, ``--layers`` and
``--heads`` narrow it for a Transformer: one kind of its attention
(``encoder_self``, ``decoder_self``), some layers, some heads, each counted
from 1 as TensorBoard's tags count them.
"""

from __future__ import annotations

from seq2seq.errors import UserError
from seq2seq.families import ATTENTION_KINDS
from seq2seq.model.ablation import HOWS, Ablation


def parse(
    how: str | None,
    attention: str | None = None,
    layers: str | None = None,
    heads: str | None = None,
) -> Ablation | None:
    """evaluate's flags as an :class:`Ablation` (None without ``--ablate``);
    ``layers`` and ``heads`` are comma-separated numbers (``1,3``)."""
    if how is None:
        flags = {"--attention": attention, "--layers": layers, "--heads": heads}
        given = [flag for flag, value in flags.items() if value is not None]
        if given:
            raise UserError(f"{given[0]} says where --ablate acts: add --ablate HOW")
        return None
    if how not in HOWS:
        raise UserError(f"--ablate {how}: choose one of {', '.join(HOWS)}")
    if attention is not None and attention not in ATTENTION_KINDS:
        raise UserError(
            f"--attention {attention}: choose one of {', '.join(ATTENTION_KINDS)}"
        )
    return Ablation(
        how,
        attention or "cross",
        _numbers("--layers", layers),
        _numbers("--heads", heads),
    )


def _numbers(flag: str, text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        numbers = sorted({int(part) for part in text.split(",")})
    except ValueError:
        raise UserError(
            f"{flag} {text}: give numbers from 1, separated by commas (1,3)"
        ) from None
    return tuple(numbers)
