"""TensorBoard: a tiny run logs every heatmap view of its watched sentences."""

from __future__ import annotations

from conftest import REPO, tiny_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.training.train import train


def test_a_tiny_run_logs_every_heatmap_view_and_the_aer(tmp_path) -> None:
    write_corpus(
        tmp_path / "corpus", seed=4, sizes={"train": 200, "val": 12, "test": 4}
    )
    cfg = load_config(
        REPO / "configs/synth_ende/additive.yaml",
        tiny_overrides(tmp_path / "corpus", tmp_path / "runs", "views"),
    )
    run = train(cfg, "cpu")
    events = EventAccumulator(str(run), size_guidance={"images": 0})
    events.Reload()
    images = events.Tags()["images"]
    for view in ("alignment", "alignment_words", "forced", "forced_words"):
        assert f"{view}/probe0" in images, view
        assert [e.step for e in events.Images(f"{view}/probe0")] == [8, 16]
    assert "attention/aer" in events.Tags()["scalars"]
    aer = [e.value for e in events.Scalars("attention/aer")]
    assert len(aer) == 2 and all(0.0 <= a <= 1.0 for a in aer)
