"""Which path trains a model's recurrences (``train.recurrence``, the
package's docstring lists them), what each supports, and the choice, made
once when the model is built."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from seq2seq.config import RNNConfig
from seq2seq.errors import UserError
from seq2seq.model.decoder import Decoder, Memory
from seq2seq.model.encoder import Encoder
from seq2seq.model.fast import compiled
from seq2seq.model.fast.decoding import teacher_forcing
from seq2seq.model.fast.encoding import encode_sequence
from seq2seq.model.fast.recurrence import PYTHON, Loops

PATHS = ("auto", "compiled", "sequence", "steps")


def unsupported(model: RNNConfig, path: str) -> str | None:
    """Why ``path`` cannot train ``model`` (the RNN family's section,
    config.RNNConfig), or None."""
    if path in ("steps", "auto"):
        return None
    dec = model.decoder
    feeding = dec.rnn == "gru" and dec.layers == 1 and model.attention == "additive"
    if dec.input_feeding and not feeding:
        return (
            f"{path}: with model.decoder.input_feeding it needs a one-layer GRU "
            "decoder with additive attention (model/fast/feeding.py)"
        )
    return None


@dataclass(frozen=True)
class RecurrencePath:
    """The path a model's recurrences train on, and the two calls it changes:
    the encoder's pass and the decoder's under teacher forcing. Search steps
    through the reference decoder on every path."""

    name: str  # steps, sequence or compiled
    loops: Loops | None  # None: the reference, step by step
    note: str = ""  # why auto chose it, when not the fastest

    def encode(
        self, encoder: Encoder, src: Tensor, src_len: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """The annotations (B, S, D) and summary (B, D); a GRU encoder on a
        fast path as encoding.py's nodes, an LSTM always packed."""
        if self.loops is None or not isinstance(encoder.rnn, nn.GRU):
            states, final = encoder(src, src_len, mask)
            return states, final
        return encode_sequence(encoder, src, src_len, mask, self.loops)

    def teacher_forcing(
        self, decoder: Decoder, tgt_in: Tensor, memory: Memory
    ) -> tuple[Tensor, Tensor | None]:
        """h~ (B, T, H) and the weights (B, T, S) or None over the inputs
        (B, T): the reference's step loop, or decoding.py's nodes."""
        if self.loops is None:
            out, weights = decoder(tgt_in, memory)
            return out, weights
        return teacher_forcing(decoder, tgt_in, memory, self.loops)


def choose_path(cfg: RNNConfig, requested: str) -> RecurrencePath:
    """``requested`` (train.recurrence) for the RNN section ``cfg`` on this
    machine: ``compiled`` needs the compiled loops (an error without them),
    ``auto`` takes them where they load and the model is supported, else the
    Python loops, else steps."""
    if requested == "steps":
        return RecurrencePath("steps", None)
    if why := unsupported(cfg, "sequence"):  # compiled: the same model
        if requested == "auto":
            return RecurrencePath("steps", None, why)
        raise UserError(f"train.recurrence {why}; use auto or steps")
    if requested == "sequence":
        return RecurrencePath("sequence", PYTHON)
    module, why = compiled.load()
    if module is not None:
        return RecurrencePath("compiled", compiled.CompiledLoops(module))
    if requested == "compiled":
        raise UserError(f"train.recurrence compiled: {why}; use auto or sequence")
    return RecurrencePath("sequence", PYTHON, why)
