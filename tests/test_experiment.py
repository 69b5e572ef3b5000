"""seq2seq experiment: trains a list of configs alike, resumes, compares."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides

from seq2seq import files
from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.lab import experiment as experiment_module
from seq2seq.lab.experiment import (
    Job,
    commands,
    experiment,
    experiment_in,
    load_experiment,
    plan,
    run_jobs,
)
from seq2seq.results import TrainingState


def write_experiment(tmp_path: Path) -> Path:
    write_corpus(
        tmp_path / "corpus", seed=7, sizes={"train": 300, "val": 20, "test": 30}
    )
    items = tiny_overrides(tmp_path / "corpus", tmp_path / "unused", "unused")
    items = [i for i in items if not i.startswith(("runs_dir=", "name="))]
    spec = {
        "name": "tiny",
        "runs_dir": str(tmp_path / "runs"),
        "configs": [
            str(REPO / f"configs/synth_ende/{m}.yaml") for m in ("none", "dot")
        ],
        "seeds": [1],
        "overrides": items,
        "jobs": 2,
    }
    path = tmp_path / "exp.yaml"
    path.write_text(json.dumps(spec))  # JSON is YAML
    return path


def test_experiment_trains_compares_and_resumes(tmp_path: Path, capsys) -> None:
    path = write_experiment(tmp_path)
    results = experiment(path)["test"]
    assert [r.mode for r in results] == ["none", "dot"]
    root = tmp_path / "runs" / "tiny"
    for name in ("none-s1", "dot-s1"):
        assert (root / name / "eval_test.json").is_file()
    assert (root / "compare" / "compare.json").is_file()
    before = (root / "dot-s1" / "best.pt").stat().st_mtime_ns
    experiment(path)  # everything finished: nothing is retrained
    assert "2 already finished" in capsys.readouterr().out
    assert (root / "dot-s1" / "best.pt").stat().st_mtime_ns == before
    # A split added later is evaluated on the trained runs, not retrained.
    spec = json.loads(path.read_text())
    path.write_text(json.dumps(spec | {"splits": ["test", "test_joined"]}))
    results = experiment(path)
    assert "0 already finished" in capsys.readouterr().out
    assert (root / "dot-s1" / "best.pt").stat().st_mtime_ns == before
    assert [r.mode for r in results["test_joined"]] == ["none", "dot"]
    scored = json.loads((root / "dot-s1" / "eval_test_joined.json").read_text())
    assert scored["n"] == 12  # 30 pairs joined in groups of 1, 2, 3, 4, 1, 2, ...
    assert [(b["k"], b["n"]) for b in scored["by_sentences"]] == [
        (1, 3),
        (2, 3),
        (3, 3),
        (4, 3),
    ]
    assert (root / "compare_test_joined" / "compare.json").is_file()
    # An edited experiment file does not mix old runs into a new table.
    spec = json.loads(path.read_text())
    path.write_text(
        json.dumps(spec | {"overrides": [*spec["overrides"], "train.lr=0.01"]})
    )
    with pytest.raises(
        UserError, match=r"none-s1: made with other settings \(train.lr"
    ):
        experiment(path)
    assert (root / "dot-s1" / "best.pt").stat().st_mtime_ns == before


def test_only_runs_the_named_runs_and_compares_once_all_are_done(
    tmp_path: Path, capsys
) -> None:
    path = write_experiment(tmp_path)
    root = tmp_path / "runs" / "tiny"
    assert experiment(path, only=["dot"]) == {}  # by config stem
    assert "not compared: none-s1 not done yet" in capsys.readouterr().out
    assert (root / "dot-s1" / "eval_test.json").is_file()
    assert not (root / "none-s1").exists() and not (root / "compare").exists()
    before = (root / "dot-s1" / "best.pt").stat().st_mtime_ns
    results = experiment(path, only=["none-s1"])  # by run folder
    assert [r.mode for r in results["test"]] == ["none", "dot"]
    assert (root / "compare" / "compare.json").is_file()
    assert (root / "dot-s1" / "best.pt").stat().st_mtime_ns == before
    with pytest.raises(UserError, match=r"--only hard: not a run .*\(dot, dot-s1"):
        experiment(path, only=["hard"])


def test_interrupted_trainings_resume_and_finished_ones_are_kept(
    tmp_path: Path,
) -> None:
    job = Job(Path("c.yaml"), 1, tmp_path / "run", ["--config", "c.yaml"])
    assert " train --config c.yaml --progress auto" in commands(job, ["test"])
    # runs that share a terminal print labelled lines, not overwriting bars
    assert " train --config c.yaml --progress log" in commands(job, ["test"], "log")
    job.run_dir.mkdir()
    for finished, expected in ((False, f"train --resume {job.run_dir}"), (True, "")):
        state = TrainingState(5, 1, 5, None, 0, 5, 1.0, 1, finished).to_dict()
        torch.save({"model": {}, "state": state}, job.run_dir / "last.pt")
        train = commands(job, ["test"]).split(" && ")[0]
        assert (expected in train) if expected else (" train " not in train)
    # An evaluation made while it trained neither ends the training nor stands
    # for the final model: resumed, then evaluated again.
    scored = {"run": "run", "split": "test", "mode": "dot", "params": 1, "n": 1}
    scored |= {"bleu": 1.0, "chrf": 1.0, "signature": "", "buckets": [], "step": 5}
    (job.run_dir / "eval_test.json").write_text(json.dumps(scored))
    (job.run_dir / "hyp_test.txt").write_text("a\n")
    assert job.evaluated("test") and job.done(["test"])
    state = TrainingState(5, 1, 5, None, 0, 5, 1.0, 1, finished=False).to_dict()
    torch.save({"model": {}, "state": state}, job.run_dir / "last.pt")
    assert not job.done(["test"])
    train, evaluate = commands(job, ["test"]).split(" && ")
    assert f"train --resume {job.run_dir}" in train and "--split test" in evaluate
    # with its checkpoints deleted, the saved results stand
    (job.run_dir / "last.pt").unlink()
    assert job.done(["test"]) and commands(job, ["test"]) == ""


def test_an_unreadable_last_checkpoint_is_not_trained_over(
    tmp_path: Path, monkeypatch
) -> None:
    """Training anew would delete the run folder: refuse, name the file, and
    before any job has started (not with the first one already running)."""
    started = []
    monkeypatch.setattr(
        experiment_module.subprocess, "Popen", lambda *a, **k: started.append(a)
    )
    fine = Job(Path("c.yaml"), 1, tmp_path / "fine", ["--config", "c.yaml"])
    job = Job(Path("c.yaml"), 2, tmp_path / "run", ["--config", "c.yaml"])
    job.run_dir.mkdir()
    (job.run_dir / "last.pt").write_bytes(b"not a checkpoint")
    (job.run_dir / "best.pt").write_bytes(b"kept")
    with pytest.raises(UserError, match="last.pt: cannot be read.*move the folder"):
        run_jobs([fine, job], ["test"], 1)
    assert started == []
    assert (job.run_dir / "best.pt").read_bytes() == b"kept"


def test_two_configs_with_one_name_are_refused(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "none.yaml").write_text(
            f"base: {REPO / 'configs/synth_ende/none.yaml'}\n"
        )
    path = tmp_path / "e.yaml"
    path.write_text(
        f"name: x\nconfigs: [{tmp_path / 'a/none.yaml'}, {tmp_path / 'b/none.yaml'}]\n"
    )
    with pytest.raises(UserError, match="two configs named none.yaml"):
        plan(load_experiment(path))


def test_bad_experiment_files(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("name: x\nconfigs: [nope.yaml]\n")
    with pytest.raises(UserError, match="nope.yaml not found"):
        load_experiment(path)
    path.write_text("name: x\nconfigs: []\nseedz: [1]\n")
    with pytest.raises(UserError, match="did you mean 'seeds'"):
        load_experiment(path)
    path.write_text(f"name: x\nconfigs: [{REPO / 'configs/synth_ende/none.yaml'}]\n")
    with pytest.raises(UserError, match=r"--jobs 0: must be in \[1, 1024\]"):
        experiment(path, jobs=0)
    # a missing experiment file is named once, not twice
    with pytest.raises(UserError) as err:
        load_experiment(tmp_path / "gone.yaml")
    assert str(err.value).count("gone.yaml") == 1


def test_shipped_experiments_load() -> None:
    """Every run of every shipped experiment is a valid config, overrides and all."""
    for path in sorted((REPO / "configs/experiments").glob("*.yaml")):
        exp = load_experiment(path)
        assert exp.configs
        for config in exp.configs:
            load_config(REPO / config, list(exp.overrides))


def fake_jobs(tmp_path: Path, monkeypatch, scripts: dict[str, str]) -> list[Job]:
    """Jobs whose command is the given shell script, not a training."""
    monkeypatch.setattr(
        experiment_module,
        "commands",
        lambda job, splits, progress: scripts[job.run_dir.name],
    )
    return [Job(Path("c.yaml"), 1, tmp_path / name) for name in scripts]


def test_a_new_job_starts_when_any_running_one_ends(
    tmp_path: Path, monkeypatch
) -> None:
    marker = tmp_path / "c-started"
    scripts = {
        # a waits (up to 20 s) for c, which can only start once b has ended
        "a": f"for i in $(seq 200); do [ -e {marker} ] && exit 0; sleep 0.1; done; "
        "exit 1",
        "b": "exit 0",
        "c": f"touch {marker}",
    }
    run_jobs(fake_jobs(tmp_path, monkeypatch, scripts), ["test"], parallel=2)
    assert marker.exists()


def test_after_a_failure_running_jobs_finish_and_no_new_one_starts(
    tmp_path: Path, monkeypatch
) -> None:
    scripts = {
        "bad": "exit 3",
        "slow": f"sleep 0.5 && touch {tmp_path / 'slow-done'}",
        "never": f"touch {tmp_path / 'never-ran'}",
    }
    with pytest.raises(UserError, match="bad: training or evaluation failed"):
        run_jobs(fake_jobs(tmp_path, monkeypatch, scripts), ["test"], parallel=2)
    assert (tmp_path / "slow-done").exists()
    assert not (tmp_path / "never-ran").exists()


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_experiment_stops_its_running_jobs(
    tmp_path: Path, monkeypatch, capsys, signum: int
) -> None:
    pid_file = tmp_path / "pid"
    # The shell's child (sleep) is what must die, not only the shell.
    scripts = {
        "long": f"sleep 60 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp "
        f"{pid_file}; wait"
    }

    def unhandled(*_: object) -> None:
        raise RuntimeError(f"run_jobs did not handle signal {signum}")

    def stop_when_started() -> None:
        for _ in range(300):  # the job has started once it wrote its pid
            if pid_file.exists():
                break
            time.sleep(0.1)
        os.kill(os.getpid(), signum)

    previous = {s: signal.signal(s, unhandled) for s in (signal.SIGTERM, signal.SIGHUP)}
    # Ctrl-C as in a terminal: a suite started in the background (`cmd &` in a
    # script) inherits SIGINT ignored, and Python then leaves it ignored.
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    thread = threading.Thread(target=stop_when_started)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_jobs(fake_jobs(tmp_path, monkeypatch, scripts), ["test"], parallel=1)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            assert signal.getsignal(sig) is unhandled  # restored
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        thread.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    pid = int(pid_file.read_text())
    for _ in range(50):  # init reaps the orphaned sleep shortly after
        if not _running(pid):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the job's process {pid} still runs")
    assert "stopped 1 running job(s)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "bad, needle",
    [
        ("model:\n  hidden_sise: 8\n", "unknown config key 'model.hidden_sise'"),
        ("train:\n  label_smoothing: 1.5\n", "smoothing': must be in [0, 1), got 1.5"),
    ],
)
def test_every_member_is_checked_before_any_trains(
    tmp_path: Path, bad: str, needle: str
) -> None:
    path = write_experiment(tmp_path)
    second = tmp_path / "dot.yaml"  # the second config, broken
    second.write_text(f"base: {REPO / 'configs/synth_ende/dot.yaml'}\n{bad}")
    spec = json.loads(path.read_text())
    spec["configs"][1] = str(second)
    path.write_text(json.dumps(spec))
    with pytest.raises(UserError) as err:
        experiment(path)
    assert needle in str(err.value) and str(second) in str(err.value)
    assert not (tmp_path / "runs").exists()  # nothing trained, nothing made


def test_a_split_the_config_has_no_files_for_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("data:\n  train: {src: a, tgt: b}\n  val: {src: a, tgt: b}\n")
    with pytest.raises(UserError, match="scores test_joined, but this config has no"):
        Job(config, 1, tmp_path / "run").check(["val", "test_joined"])
    Job(config, 1, tmp_path / "run").check(["val"])  # val alone: fine


def test_an_interrupted_experiment_in_a_folder_stops_its_jobs(
    tmp_path: Path, capsys
) -> None:
    """experiment_in (the lesson's way to train from a notebook's folder): a
    Ctrl-C or kernel interrupt while a job trains reaches the child once,
    and the child stops its job; nothing is left holding the run."""
    spec = json.loads(write_experiment(tmp_path).read_text())
    spec["configs"], spec["jobs"] = spec["configs"][:1], 1
    spec["overrides"] += ["train.max_steps=100000", "train.val_every=100000"]
    path = tmp_path / "long.yaml"
    path.write_text(json.dumps(spec))
    run_dir = tmp_path / "runs" / "tiny" / "none-s1"

    def interrupt_once_training() -> None:
        for _ in range(600):  # the job holds its run folder once it trains
            if run_dir.is_dir() and files.busy(run_dir):
                break
            time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    thread = threading.Thread(target=interrupt_once_training)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            experiment_in(tmp_path, path)
    finally:
        thread.join()
        signal.signal(signal.SIGINT, previous)
    assert files.busy(run_dir) == ""
    assert "stopped 1 running job(s)" in capsys.readouterr().out
