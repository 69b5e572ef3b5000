"""The Transformer family (seq2seq/model/transformer/): its attention against
the lesson's and the fused kernel against the reference; the mechanism's
promises stated as tests (no future leakage, padding changes nothing,
incremental decoding equals the full forward); its config's one-line
errors. Tiny models, fixed seeds, eval mode (no dropout) unless stated."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from conftest import (
    REPO,
    TRANSFORMER,
    torchrun,
    transformer_overrides,
    translates_aligned_and_drawn,
)
from torch import Tensor

from seq2seq.cli import main
from seq2seq.config import config_from_dict, load_config
from seq2seq.data.batching import bucket_batches
from seq2seq.data.corpus import load_split
from seq2seq.data.synth import write_corpus
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError
from seq2seq.lab.evaluate import evaluate
from seq2seq.lab.explore import layered
from seq2seq.lab.translate import translate_batch
from seq2seq.lesson.attention import SingleHeadAttention, causal_mask
from seq2seq.model.interface import Maps
from seq2seq.model.model import build_model, loss_sum
from seq2seq.model.search import GREEDY, Decoding, beam_search, greedy
from seq2seq.model.transformer.attention import MultiHeadAttention
from seq2seq.model.transformer.config import TransformerConfig
from seq2seq.model.transformer.model import Memory, State, Transformer
from seq2seq.specials import BOS, EOS, PAD
from seq2seq.training.checkpoint import open_run
from seq2seq.training.scoring import aer_by_map
from seq2seq.training.train import train

V = 23
SMALL = TransformerConfig(
    layers=2, heads=2, d_model=16, ffn=32, dropout=0.0, attention_dropout=0.0
)


def tiny(seed: int = 0, **changes: object) -> Transformer:
    torch.manual_seed(seed)
    model = build_model(dataclasses.replace(SMALL, **changes), V, V)
    assert isinstance(model, Transformer)
    return model.eval()


def batch() -> tuple[Tensor, Tensor, Tensor]:
    """Two sources of 5 and 3 tokens, targets of 4 and 2 (BOS first)."""
    src = torch.tensor([[5, 6, 7, 8, EOS], [9, 10, EOS, PAD, PAD]])
    tgt_in = torch.tensor([[BOS, 11, 12, 13], [BOS, 14, PAD, PAD]])
    return src, torch.tensor([5, 3]), tgt_in


# ---- the attention


def test_one_head_is_the_lessons_single_head_attention() -> None:
    """heads=1 with W^O = I and zero biases: the lesson's module, outputs and
    weights, under the lesson's mask convention (0 = may not look)."""
    torch.manual_seed(1)
    lesson = SingleHeadAttention(8, 8)
    ours = MultiHeadAttention(8, 1, 0.0, fused=False)
    with torch.no_grad():
        for mine, theirs in [(ours.q_proj, lesson.w_q), (ours.k_proj, lesson.w_k)]:
            mine.weight.copy_(theirs.weight)
        ours.v_proj.weight.copy_(lesson.w_v.weight)
        ours.out_proj.weight.copy_(torch.eye(8))
        for p in (ours.q_proj, ours.v_proj, ours.out_proj):
            p.bias.zero_()
    x = torch.randn(2, 5, 8)
    mask = torch.tril(torch.ones(5, 5)).expand(2, 5, 5)  # the lesson's 0/1 floats
    want, want_w = lesson(x, x, mask)
    got, got_w = ours(x, *ours.keys_values(x), mask[:, None], need_weights=True)
    torch.testing.assert_close(got, want)
    assert got_w is not None
    torch.testing.assert_close(got_w[:, 0], want_w)
    torch.testing.assert_close(causal_mask(5).squeeze(0).float(), mask[0])


def test_the_fused_kernel_equals_the_reference_forward_and_backward() -> None:
    torch.manual_seed(2)
    x = torch.randn(3, 6, 16, requires_grad=True)
    mask = torch.rand(3, 1, 6, 6) > 0.3
    mask[..., 0] = True  # every query may read at least one key
    outs = []
    for fused in (False, True):
        torch.manual_seed(3)
        att = MultiHeadAttention(16, 4, 0.0, fused)
        out, weights = att(x, *att.keys_values(x), mask)
        assert weights is None  # not asked for
        (grad,) = torch.autograd.grad(out.pow(2).sum(), [x])
        outs.append((out, grad))
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-5)


def test_asked_for_weights_the_fused_model_returns_the_references() -> None:
    src, src_len, tgt_in = batch()
    fused, plain = tiny(fused_attention=True), tiny(fused_attention=False)
    out_f, maps_f = fused(src, src_len, tgt_in)
    out_p, maps_p = plain(src, src_len, tgt_in)
    torch.testing.assert_close(out_f, out_p)
    for kind in ("cross", "encoder_self", "decoder_self"):
        torch.testing.assert_close(maps_f.of(kind), maps_p.of(kind))
    out_t, none = fused(src, src_len, tgt_in, maps=False)  # training's call
    # Training's call masks the decoder's self-attention with is_causal: at a
    # padded position (no loss reads it) it may read padded keys, so the
    # real positions are the ones held equal.
    real = tgt_in != PAD
    torch.testing.assert_close(out_t[real], out_p[real], rtol=1e-5, atol=1e-6)
    assert none.kinds == ()


def test_trained_with_is_causal_the_loss_and_gradients_are_the_references() -> None:
    """The fast path's causal self-attention (is_causal: no mask tensor) and
    the reference's (the causal and padding mask written out) give the same
    loss and the same gradients, padded targets included."""
    src, src_len, tgt_in = batch()
    tgt_out = torch.tensor([[11, 12, 13, EOS], [14, EOS, PAD, PAD]])
    grads = []
    for fused in (True, False):
        model = tiny(fused_attention=fused).train()
        model.zero_grad()
        loss, _ = loss_sum(model, src, src_len, tgt_in, tgt_out, maps=False)
        loss.backward()
        grads.append((loss.detach(), [p.grad for p in model.parameters()]))
    torch.testing.assert_close(grads[0][0], grads[1][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(grads[0][1], grads[1][1], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


# ---- the mechanism


def test_maps_have_every_kind_layers_by_heads() -> None:
    src, src_len, tgt_in = batch()
    _, maps = tiny()(src, src_len, tgt_in)
    assert maps.kinds == ("cross", "encoder_self", "decoder_self")
    assert maps.cross.shape == (2, 2, 2, 4, 5)  # (B, L, h, T, S)
    assert maps.encoder_self.shape == (2, 2, 2, 5, 5)
    assert maps.decoder_self.shape == (2, 2, 2, 4, 4)
    for kind in maps.kinds:  # distributions over the keys
        rows = maps.of(kind).sum(-1)
        torch.testing.assert_close(rows, torch.ones_like(rows))


@pytest.mark.parametrize("t", [0, 1, 2])
def test_no_future_leakage(t: int) -> None:
    """Changing the target after position t changes no output or weight at
    positions <= t; the non-causal ablation is the control that does leak."""
    src, src_len, tgt_in = batch()
    changed = tgt_in.clone()
    changed[0, t + 1 :] = torch.tensor([17, 18, 19])[: 3 - t]
    model = tiny()
    (a, ma), (b, mb) = model(src, src_len, tgt_in), model(src, src_len, changed)
    torch.testing.assert_close(a[0, : t + 1], b[0, : t + 1])
    assert ma.decoder_self is not None and mb.decoder_self is not None
    torch.testing.assert_close(ma.cross[0, :, :, : t + 1], mb.cross[0, :, :, : t + 1])
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    assert not ma.decoder_self[..., upper].any()  # exactly zero on the future
    leaky = tiny(causal=False)
    (c, _), (d, _) = leaky(src, src_len, tgt_in), leaky(src, src_len, changed)
    assert not torch.allclose(c[0, : t + 1], d[0, : t + 1])


def test_padding_changes_nothing_and_gets_zero_weight() -> None:
    """Three more PAD columns on the source and two on the target change no
    sentence's outputs or weights; PAD keys get exactly 0 in all three kinds."""
    src, src_len, tgt_in = batch()
    model = tiny()
    out, maps = model(src, src_len, tgt_in)
    wide_src = torch.cat([src, torch.full((2, 3), PAD)], dim=1)
    wide_tgt = torch.cat([tgt_in, torch.full((2, 2), PAD)], dim=1)
    out2, maps2 = model(wide_src, src_len, wide_tgt)
    torch.testing.assert_close(out2[:, :4], out)
    for kind in maps.kinds:
        small, big = maps.of(kind), maps2.of(kind)
        q, k = small.shape[-2:]
        torch.testing.assert_close(big[..., :q, :k], small)
        assert not big[..., :q, k:].any()  # the added keys: zero weight
    assert not maps.cross[1, ..., 3:].any() and not maps.encoder_self[1, ..., 3:].any()
    assert not maps.decoder_self[1, ..., 2:].any()


def test_incremental_decoding_equals_the_full_forward() -> None:
    """Feeding the target one token at a time through the cached keys and
    values gives the full forward's outputs and maps at every position, also
    after the batch's rows are reordered (beam search's select)."""
    src, src_len, tgt_in = batch()
    model = tiny()
    out, maps = model(src, src_len, tgt_in)
    memory = model.encode(src, src_len)
    state = model.init_state(memory)
    for t in range(tgt_in.size(1)):
        step_out, state, step_maps = model.step(tgt_in[:, t], state, memory)
        torch.testing.assert_close(step_out[0], out[0, t], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(
            step_maps.cross[0, ..., 0, :], maps.cross[0, ..., t, :]
        )
        got = step_maps.decoder_self[0, ..., 0, :]
        torch.testing.assert_close(got, maps.decoder_self[0, ..., t, : t + 1])
    swap = torch.tensor([1, 0])
    again = model.step(tgt_in[swap, -1], state.select(swap), memory.select(swap))[0]
    torch.testing.assert_close(again[1], model.step(tgt_in[:, -1], state, memory)[0][0])


class WithoutCache(Transformer):
    """Search's reference: each step runs the full forward over the prefix."""

    def init_state(self, memory: Memory) -> State:  # the prefix, as tokens
        return PrefixState(torch.empty(memory.states.size(0), 0, dtype=torch.long))

    def step(self, prev: Tensor, state: State, memory: Memory):  # noqa: ANN201
        prefix = torch.cat([state.tokens, prev[:, None]], dim=1)  # (B, t + 1)
        y = self.tgt_embed(prefix)
        keys = torch.ones(prefix.size(1), prefix.size(1), dtype=torch.bool).tril()
        for i, layer in enumerate(self.decoder):
            y = layer(y, keys, memory.cross[i], memory.mask, None, False).y
        return self.decoder_norm(y)[:, -1], PrefixState(prefix), Maps()


@dataclasses.dataclass
class PrefixState:
    tokens: Tensor

    def select(self, index: Tensor) -> PrefixState:
        return PrefixState(self.tokens.index_select(0, index))


def test_greedy_and_beam_with_the_cache_equal_them_without() -> None:
    model = tiny(seed=4)
    plain = copy.deepcopy(model)  # the same weights, searched without the cache
    plain.__class__ = WithoutCache
    src = torch.tensor([[5, 6, 7, 8, 9, 10, EOS], [9, 10, 11, EOS, PAD, PAD, PAD]])
    src_len = torch.tensor([7, 4])
    pairs = zip(greedy(model, src, src_len), greedy(plain, src, src_len), strict=True)
    for a, b in pairs:
        assert a.tokens == b.tokens and a.score == pytest.approx(b.score, abs=1e-5)
    got = beam_search(model, src, src_len, beam=3, nbest=3)
    want = beam_search(plain, src, src_len, beam=3, nbest=3)
    for ours, theirs in zip(got, want, strict=True):
        assert [h.tokens for h in ours] == [h.tokens for h in theirs]
        assert [h.score for h in ours] == pytest.approx(
            [h.score for h in theirs], abs=1e-5
        )


# ---- the config


def load(model: dict) -> object:
    data = {"train": {"src": "a", "tgt": "b"}, "val": {"src": "c", "tgt": "d"}}
    return config_from_dict({"data": data, "model": model})


def test_tied_and_shared_embeddings_are_one_matrix() -> None:
    model = tiny(share_embeddings=True)
    weight = model.tgt_embed.tokens.weight
    assert model.output.weight is weight and model.src_embed.tokens.weight is weight
    untied = tiny(tie_embeddings=False)
    assert untied.output.weight is not untied.tgt_embed.tokens.weight
    assert untied.num_parameters() - tiny().num_parameters() == V * 16
    with pytest.raises(UserError, match="model.share_embeddings.*joint"):
        build_model(dataclasses.replace(SMALL, share_embeddings=True), V, V + 1)
    with pytest.raises(UserError, match="model.share_embeddings.*tokenizer.joint"):
        config_from_dict(
            {
                "data": {
                    "train": {"src": "a", "tgt": "b"},
                    "val": {"src": "c", "tgt": "d"},
                },
                "tokenizer": {"joint": False},
                "model": {"family": "transformer", "share_embeddings": True},
            }
        )


def test_the_section_reads_and_names_its_variant() -> None:
    cfg = load({"family": "transformer", "heads": 8, "norm": "post"}).model
    assert isinstance(cfg, TransformerConfig) and cfg.heads == 8
    assert cfg.variant == "post-norm"
    assert TransformerConfig().variant == "multihead"
    both = TransformerConfig(residual=False, causal=False).variant
    assert both == "no-residual+non-causal"


@pytest.mark.parametrize(
    "model, words",
    [
        ({"family": "transformer", "d_model": 30, "heads": 4}, "model.heads.*divide"),
        ({"family": "transformer", "attention": "additive"}, "model.attention.*rnn"),
        ({"family": "transformer", "encoder": {"rnn": "gru"}}, "model.encoder.*rnn"),
        ({"family": "transformer", "layers": 0}, "model.layers"),
        ({"family": "transformer", "norm": "mid"}, "model.norm"),
        ({"family": "rnn", "heads": 4}, "model.heads.*transformer"),
        ({"family": "transformr"}, "model.family.*rnn, transformer"),
    ],
)
def test_bad_sections_are_one_line_naming_the_key(model: dict, words: str) -> None:
    with pytest.raises(UserError, match=words) as err:
        load(model)
    assert "\n" not in str(err.value)


# ---- the lab


def test_a_transformer_trains_evaluates_translates_and_draws(
    tiny_transformer: Path, tmp_path: Path, capsys
) -> None:
    """Through the same commands as the RNN: trained with the watched
    sentences' maps drawn per kind, layer and head; evaluated greedy and
    with a beam (AER of its cross-attention); translated with --json
    --alignments and --plot; the explorer's maps; a head's cross-attention
    ablated; the probe refused in one line."""
    run_dir = tiny_transformer
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["model"]["family"] == "transformer" and "encoder" not in saved["model"]
    (events,) = run_dir.glob("events.out.tfevents.*")
    data = events.read_bytes()
    for kind in ("cross", "encoder_self", "decoder_self"):
        for view in ("layer1", "layer2", "head1", "head2"):
            assert f"{kind}/{view}/probe0".encode() in data, (kind, view)
    assert b"forced/probe0" in data and b"alignment/probe0" in data
    greedy = evaluate(run_dir, "test", "best", "cpu")
    beam = evaluate(run_dir, "test", "best", "cpu", Decoding(3))
    assert (greedy.family, greedy.mode, greedy.label()) == (
        "transformer",
        "multihead",
        "transformer",
    )
    assert greedy.aer is not None and 0 <= greedy.aer <= 1
    assert beam.scores.n == greedy.scores.n == 20
    by_map = maps_aer(run_dir)
    assert sorted(by_map, key=str) == sorted(
        [(layer, head) for layer in (0, 1) for head in (None, 0, 1)], key=str
    )
    assert by_map[(1, None)] == pytest.approx(greedy.aer)  # the display policy's
    capsys.readouterr()
    translates_aligned_and_drawn(run_dir, tmp_path, capsys)
    explorer_maps(run_dir)
    assert main(["probe", str(run_dir), "--sentences", "10", "--epochs", "1"]) == 2
    assert "reads the source through no single vector" in capsys.readouterr().err
    ablated = ["evaluate", str(run_dir), "--ablate", "none", "--layers", "2"]
    assert main([*ablated, "--heads", "1", "--device", "cpu"]) == 0
    assert "BLEU drop against the trained attention" in capsys.readouterr().out
    assert (run_dir / "eval_test_ablate-none-cross-layer2-head1.json").is_file()


def explorer_maps(run_dir: Path) -> None:
    """The explorer's answer carries every kind, layer and head over the
    run's own translation fed back in, labelled, each row a distribution."""
    cpu = torch.device("cpu")
    r = open_run(run_dir, "best", cpu)
    (t,) = translate_batch(
        r.model, r.tok, [(1, "the dog sleeps .")], GREEDY, 1, 2.0, cpu
    )
    maps = layered(r, t, cpu)
    assert maps is not None and list(maps) == ["cross", "encoder_self", "decoder_self"]
    hyp = r.tok.tgt_pieces(t.nbest[0].tokens)
    assert maps["cross"]["rows"] == [*hyp, "</s>"]
    assert maps["cross"]["cols"] == maps["encoder_self"]["rows"] == [*t.pieces, "</s>"]
    assert maps["decoder_self"]["cols"] == ["<s>", *hyp]
    for kind, m in maps.items():
        weights = torch.tensor(m["weights"])  # (L, h, rows, cols)
        assert weights.shape == (2, 2, len(m["rows"]), len(m["cols"])), kind
        sums = weights.sum(-1)
        torch.testing.assert_close(sums, torch.ones_like(sums), atol=0.01, rtol=0)


def maps_aer(run_dir: Path) -> dict:
    """scripts/aer_by_layer.py's figures of the run's test split."""
    r = open_run(run_dir, "best", torch.device("cpu"))
    data = encode(load_split(r.cfg.data, "test"), r.tok)
    batches = bucket_batches(data.lengths(), 10**9, 64)
    return aer_by_map(r.model, data, r.tok, batches, torch.device("cpu"))


def test_the_aer_by_layer_script_prints_every_layer(tiny_transformer: Path) -> None:
    done = subprocess.run(
        [sys.executable, "scripts/aer_by_layer.py", str(tiny_transformer)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [r for r in done.stdout.splitlines() if r[:4] in ("| 1 ", "| 2 ")]
    want = maps_aer(tiny_transformer)
    assert [r.split(" | ")[1] for r in rows] == [
        f"{want[(layer, None)]:.3f}" for layer in (0, 1)
    ]


# ---- resume and two processes, as for the RNN


# Weights are what these tests compare: drawing every kind, layer and head at
# each validation (most of a tiny Transformer's training time) is
# test_a_transformer_trains_evaluates_translates_and_draws's to check.
NO_HEATMAPS = "train.num_probes=0"


def test_stopped_and_resumed_equals_straight_bitwise(tmp_path: Path) -> None:
    """12 steps, against 6 then ``train --resume`` to 12: the same weights
    bit for bit, dropout on (its random state is in the checkpoint)."""
    corpus, runs = tmp_path / "corpus", tmp_path / "runs"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 20})

    def sets(name: str, steps: int) -> list[str]:
        extra = ["model.dropout=0.2", "train.checkpoint_every=3"]
        extra += [NO_HEATMAPS]
        return [*transformer_overrides(corpus, runs, name, steps), *extra]

    straight = train(
        load_config(TRANSFORMER, sets("straight", 12)), "cpu", progress="off"
    )
    half = train(load_config(TRANSFORMER, sets("half", 6)), "cpu", progress="off")
    resume = ["train", "--resume", str(half), "--set", "train.max_steps=12"]
    assert main([*resume, "--progress", "off"]) == 0
    a = torch.load(straight / "last.pt", weights_only=True)
    b = torch.load(half / "last.pt", weights_only=True)
    assert a["state"]["step"] == b["state"]["step"] == 12
    for key, value in a["model"].items():
        assert torch.equal(value, b["model"][key]), key


def test_two_processes_match_one(tmp_path: Path) -> None:
    """torchrun with 2 gloo processes on the same global batches: the
    weights of one process within tests/test_distributed.py's tolerance."""
    corpus, runs = tmp_path / "corpus", tmp_path / "runs"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 20})
    same = ["model.dropout=0", "train.batch_sentences=16", "train.val_every=6"]
    same += ["train.checkpoint_every=0", NO_HEATMAPS]

    def sets(name: str) -> list[str]:
        return [*transformer_overrides(corpus, runs, name, 12), *same]

    one = train(load_config(TRANSFORMER, sets("one")), "cpu")
    args = ["--config", str(TRANSFORMER)]
    for item in sets("two"):
        args += ["--set", item]
    torchrun(["-m", "seq2seq", "train", *args], (runs / "two",), OMP_NUM_THREADS="1")
    a = torch.load(one / "last.pt", weights_only=True)["model"]
    b = torch.load(runs / "two" / "last.pt", weights_only=True)
    assert b["state"]["world"] == 2 and b["state"]["step"] == 12
    for key, value in a.items():
        torch.testing.assert_close(b["model"][key], value, rtol=0, atol=1e-5)


def test_bf16_autocast_runs_both_kernels_alike() -> None:
    """Under bf16 autocast (what --device cuda trains with; here the CPU's)
    the fused kernel and the reference agree to bf16's precision, and the
    loss is finite."""
    src, src_len, tgt_in = batch()
    outs = []
    for fused in (True, False):
        model = tiny(fused_attention=fused)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = model(src, src_len, tgt_in, maps=False)
            loss = model.token_loss(out, tgt_in.roll(-1, 1), 0.1, False)
        assert torch.isfinite(loss)
        outs.append(out.float())
    real = tgt_in != PAD  # is_causal lets a padded position read padding
    torch.testing.assert_close(outs[0][real], outs[1][real], rtol=0.05, atol=0.05)
