"""The Transformer encoder-decoder (Vaswani et al. 2017) behind the model
interface (model/interface.py), and its builder and registration.

    encode:  x = Embedding(src)                    (B, S, d)
             x = EncoderLayer(x) x layers          self-attention over the source
    decode:  y = Embedding(target prefix)          (B, T, d)
             y = DecoderLayer(y, x) x layers       causal self-attn, cross-attention
             p(y_t) = softmax(W y_t)               W: the target embedding, if tied

Every attention map comes back as :class:`~seq2seq.model.interface.Maps`:
``encoder_self`` (B, layers, heads, S, S), ``decoder_self`` (B, layers,
heads, T, T) and ``cross`` (B, layers, heads, T, S). Search decodes one
token at a time with each layer's keys and values of the prefix kept
(:class:`State`), so a step costs one position, not the whole prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

import torch
from torch import Tensor, nn

from seq2seq import families
from seq2seq.errors import UserError
from seq2seq.model.ablation import Ablation, Rule
from seq2seq.model.interface import Display, EncoderDecoder, Maps
from seq2seq.model.loss import chunked_cross_entropy, cross_entropy
from seq2seq.model.masks import causal_mask
from seq2seq.model.transformer.config import TransformerConfig, label
from seq2seq.model.transformer.embedding import Embedding
from seq2seq.model.transformer.layers import KV, DecoderLayer, EncoderLayer, Spec
from seq2seq.specials import PAD

LayerT = TypeVar("LayerT", bound=nn.Module)


class Stack(nn.ModuleList, Generic[LayerT]):
    """A ModuleList of one kind of layer, typed as such when iterated."""

    def __init__(self, layers: Iterable[LayerT]) -> None:
        super().__init__(layers)

    def __iter__(self) -> Iterator[LayerT]:
        return cast(Iterator[LayerT], super().__iter__())


@dataclass
class Memory:
    """The encoded source as every decoder step reads it."""

    states: Tensor  # (B, S, d) the encoder's output
    mask: Tensor  # (B, 1, 1, S) True on real source positions
    cross: list[KV]  # per decoder layer: the source's keys and values (B, h, S, d_k)

    def select(self, index: Tensor) -> Memory:
        """Rows ``index`` of every tensor (beam search)."""
        rows = [
            (k.index_select(0, index), v.index_select(0, index)) for k, v in self.cross
        ]
        return Memory(
            self.states.index_select(0, index), self.mask.index_select(0, index), rows
        )


@dataclass
class State:
    """The target prefix as the next step needs it."""

    past: list[KV]  # per decoder layer: the prefix's keys and values (B, h, t, d_k)
    length: int  # tokens in the prefix: the next token's position

    def select(self, index: Tensor) -> State:
        rows = [
            (k.index_select(0, index), v.index_select(0, index)) for k, v in self.past
        ]
        return State(rows, self.length)


class Transformer(EncoderDecoder[Memory, State]):
    family = "transformer"

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        spec: Spec,
        layers: int,
        positions: int | None,
        causal: bool,
        tie: bool,
        share: bool,
        mode: str,
        display: Display,
    ) -> None:
        super().__init__()
        self.mode = mode  # the variant's name, for reports (TransformerConfig.variant)
        self.display = display
        self.causal = causal
        self.src_embed = Embedding(src_vocab, spec.d_model, spec.dropout, positions)
        self.tgt_embed = Embedding(tgt_vocab, spec.d_model, spec.dropout, positions)
        self.encoder = Stack(EncoderLayer(spec) for _ in range(layers))
        self.decoder = Stack(DecoderLayer(spec) for _ in range(layers))
        # pre-norm leaves the last sublayer's sum unnormalised: one norm on top
        pre = spec.norm == "pre"
        self.encoder_norm = nn.LayerNorm(spec.d_model) if pre else nn.Identity()
        self.decoder_norm = nn.LayerNorm(spec.d_model) if pre else nn.Identity()
        self.output = nn.Linear(spec.d_model, tgt_vocab)
        if tie:  # Press & Wolf 2017; Vaswani Sec. 3.4
            self.output.weight = self.tgt_embed.tokens.weight
        if share:  # one joint vocabulary: one matrix for both sides
            self.src_embed.tokens.weight = self.tgt_embed.tokens.weight

    # ---- the encoder

    def encode_maps(
        self, src: Tensor, need_weights: bool
    ) -> tuple[Memory, Tensor | None]:
        """The memory, and the encoder's self-attention (B, L, h, S, S) if asked."""
        mask = (src != PAD)[:, None, None, :]  # (B, 1, 1, S)
        x = self.src_embed(src)  # (B, S, d)
        maps: list[Tensor | None] = []
        for layer in self.encoder:
            x, weights = layer(x, mask, need_weights)
            maps.append(weights)
        x = self.encoder_norm(x)
        cross = [layer.cross_attn.keys_values(x) for layer in self.decoder]
        return Memory(x, mask, cross), stack(maps)

    def encode(self, src: Tensor, src_len: Tensor) -> Memory:
        return self.encode_maps(src, need_weights=False)[0]

    # ---- teacher forcing

    def forward(
        self, src: Tensor, src_len: Tensor, tgt_in: Tensor, maps: bool = True
    ) -> tuple[Tensor, Maps]:
        """The decoder's outputs (B, T, d) over the whole target at once, and
        every attention map where ``maps`` (else the fused kernel runs)."""
        memory, encoder_self = self.encode_maps(src, maps)
        steps = tgt_in.size(1)
        keys = (tgt_in != PAD)[:, None, None, :]  # (B, 1, 1, T)
        if self.causal:  # no position reads a later one (Sec. 3.2.3)
            keys = keys & causal_mask(steps, tgt_in.device)  # (B, 1, T, T)
        y = self.tgt_embed(tgt_in)  # (B, T, d)
        self_maps: list[Tensor | None] = []
        cross_maps: list[Tensor | None] = []
        for i, layer in enumerate(self.decoder):
            out = layer(y, keys, memory.cross[i], memory.mask, None, maps, self.causal)
            y = out.y
            self_maps.append(out.self_weights)
            cross_maps.append(out.cross_weights)
        found = Maps(stack(cross_maps), encoder_self, stack(self_maps))
        return self.decoder_norm(y), found

    # ---- search, one token at a time

    def init_state(self, memory: Memory) -> State:
        return State([], 0)

    def step(
        self, prev: Tensor, state: State, memory: Memory
    ) -> tuple[Tensor, State, Maps]:
        """The next position from the previous tokens (B,): its output (B, d),
        the prefix's keys and values grown by one, and this step's maps
        (one query each: cross (B, L, h, 1, S), decoder_self (B, L, h, 1, t))."""
        y = self.tgt_embed(prev.unsqueeze(1), start=state.length)  # (B, 1, d)
        past: list[KV] = []
        self_maps: list[Tensor | None] = []
        cross_maps: list[Tensor | None] = []
        for i, layer in enumerate(self.decoder):
            before = state.past[i] if state.past else None
            out = layer(y, None, memory.cross[i], memory.mask, before, True)
            y = out.y
            past.append(out.cache)
            self_maps.append(out.self_weights)
            cross_maps.append(out.cross_weights)
        maps = Maps(stack(cross_maps), None, stack(self_maps))
        return self.decoder_norm(y)[:, 0], State(past, state.length + 1), maps

    # ---- the output layer

    def logits(self, out: Tensor) -> Tensor:
        logits: Tensor = self.output(out)  # (..., V)
        return logits

    def token_loss(
        self, out: Tensor, tgt_out: Tensor, smoothing: float, chunked: bool
    ) -> Tensor:
        loss = chunked_cross_entropy if chunked else cross_entropy
        return loss(out.flatten(0, 1), self.output, tgt_out.flatten(), smoothing)

    @property
    def vocab_size(self) -> int:
        return self.output.out_features

    def ablate(self, ablation: Ablation) -> None:
        """Each chosen layer's attention of ``ablation.attention`` has its
        chosen heads' weights replaced (all heads of all layers by default)."""
        modules = {
            "encoder_self": [layer.self_attn for layer in self.encoder],
            "decoder_self": [layer.self_attn for layer in self.decoder],
            "cross": [layer.cross_attn for layer in self.decoder],
        }[ablation.attention]
        heads = modules[0].heads
        chosen = _chosen("--heads", ablation.heads, heads)
        for i in _chosen("--layers", ablation.layers, len(modules)):
            seed = ablation.seed + i  # each layer its own shuffles
            rule = Rule(ablation.how, None if len(chosen) == heads else chosen, seed)
            modules[i].ablated = rule


def _chosen(flag: str, picked: tuple[int, ...] | None, count: int) -> tuple[int, ...]:
    """1-based choices as 0-based indices, all of them for None."""
    if picked is None:
        return tuple(range(count))
    wrong = [n for n in picked if not 1 <= n <= count]
    if wrong:
        raise UserError(
            f"{flag} {wrong[0]}: this model has {count}; choose from 1 to {count}"
        )
    return tuple(sorted({n - 1 for n in picked}))


def stack(maps: list[Tensor | None]) -> Tensor | None:
    """Per-layer weights (B, h, Q, K) as one (B, L, h, Q, K), None if not asked."""
    if not maps or maps[0] is None:
        return None
    return torch.stack([m for m in maps if m is not None], dim=1)


def build_transformer(
    cfg: TransformerConfig, src_vocab: int, tgt_vocab: int, recurrence: str = "auto"
) -> Transformer:
    """The Transformer of the section ``cfg`` (``recurrence``: an RNN's
    training path, nothing here)."""
    if cfg.share_embeddings and src_vocab != tgt_vocab:
        raise UserError(
            f"model.share_embeddings: the vocabularies differ ({src_vocab:,} "
            f"and {tgt_vocab:,} pieces); train with tokenizer.joint=true"
        )
    spec = Spec(
        cfg.d_model,
        cfg.heads,
        cfg.ffn,
        cfg.dropout,
        cfg.attention_dropout,
        cfg.norm,
        cfg.residual,
        cfg.fused_attention,
    )
    model = Transformer(
        src_vocab,
        tgt_vocab,
        spec,
        cfg.layers,
        cfg.max_positions if cfg.positions == "learned" else None,
        cfg.causal,
        cfg.tie_embeddings,
        cfg.share_embeddings,
        cfg.variant,
        DISPLAY,
    )
    _init(model, cfg.d_model)
    return model


# The map that stands for a Transformer where one matrix is wanted (heatmaps,
# AER, translate --alignments): the last layer's cross-attention, its heads
# averaged (docs/model.md gives every layer's AER beside it).
DISPLAY = Display("cross", -1, None)


def _init(model: nn.Module, d_model: int) -> None:
    """Xavier for every projection, zero biases (as the Annotated Transformer
    and fairseq); embeddings N(0, d^-1/2), so that times sqrt(d) they start
    near unit scale, PAD's row zero."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
    for module in model.modules():  # after: a tied output shares this weight
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=d_model**-0.5)
            if module.padding_idx is not None:
                nn.init.zeros_(module.weight[module.padding_idx])


def unsupported(cfg: TransformerConfig, path: str) -> str | None:
    """``train.recurrence`` names an RNN's paths: a Transformer trains the
    same way under auto and steps, and has nothing to run as one node."""
    if path in ("auto", "steps"):
        return None
    return f"{path}: a transformer has no recurrence to run as one node"


families.register(
    "transformer",
    TransformerConfig,
    build_transformer,
    unsupported,
    "a Transformer encoder-decoder: self-attention in both stacks, "
    "cross-attention between them (Vaswani et al. 2017)",
    label,
)
