"""What files.py guards across commands, with real files, real second
processes and real signals: no output the user names may overwrite an input
or land in a run folder (files.check_output); no two processes write one run
or data folder at once, and a lock never outlives its process, SIGKILL
included (files.exclusive); a run in training is still evaluated and probed,
each output file held by one process, and never deleted under a reader
(files.reading)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, snapshot, tiny_additive, tiny_overrides

from seq2seq import files
from seq2seq.cli import main
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_additive(tmp_path_factory.mktemp("guards"), train_pairs=300)


def outputs_over_inputs(run: Path, d: Path) -> list[tuple[list[str], str]]:
    """Every command that writes where the user names, aimed at an input."""
    text = d / "in.txt"
    link = d / "link.txt"
    if not link.exists():
        os.link(text, link)  # a hard link: another name for the input
    tr = ["translate", str(run), "--input", str(text), "--device", "cpu"]
    into_run = "it lies in the run folder"
    return [
        ([*tr, "--output", str(run / "best.pt")], into_run),
        ([*tr, "--output", str(run / "notes.txt")], into_run),
        ([*tr, "--output", str(text)], "it is the input file"),
        ([*tr, "--output", str(link)], "it is the input file"),
        ([*tr, "--output", str(run / "spm" / "src.model")], into_run),
        ([*tr, "--plot", str(run / "heatmaps")], into_run),
        ([*tr, "--checkpoint", str(run / "last.pt"), "--output", str(run)], into_run),
        (["compare", str(run), "--out", str(run)], "it is a run folder compared"),
        (["compare", str(run), "--out", str(run / "cmp")], into_run),
        (["prepare", "synth_ende", "--out", str(run / "spm")], into_run),
        (["prepare", "multi30k", "--out", str(d), "--mirror", str(d)], "the mirror"),
        (["probe", str(run), "--plot", str(run / "probe.png")], into_run),
    ]


def test_no_output_may_overwrite_an_input(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """Refused before anything is written: one line naming both paths, exit
    2, the run and the input byte for byte as they were."""
    (tmp_path / "in.txt").write_text("the dog sleeps .\n", encoding="utf-8")
    cases = outputs_over_inputs(trained, tmp_path)
    before_run, before_dir = snapshot(trained), snapshot(tmp_path)
    for argv, needle in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if x.startswith("error:")]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "refused, nothing written" in lines[0] and needle in lines[0], lines
        assert snapshot(trained) == before_run, argv
        assert snapshot(tmp_path) == before_dir, argv


def test_an_output_beside_the_inputs_is_written(trained: Path, tmp_path: Path) -> None:
    """The guard refuses only what it must: a new file next to the input."""
    (tmp_path / "in.txt").write_text("the dog sleeps .\n", encoding="utf-8")
    argv = ["translate", str(trained), "--input", str(tmp_path / "in.txt")]
    assert main([*argv, "--output", str(tmp_path / "out.txt"), "--device", "cpu"]) == 0
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").count("\n") == 1


HOLD = """
import sys, time
from pathlib import Path
from seq2seq.files import exclusive
with exclusive(Path(sys.argv[1]), "a test holder"):
    print("held", flush=True)
    time.sleep(120)
"""


def holder(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder`` until it is killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_folder_is_refused_and_freed_by_sigkill(tmp_path: Path) -> None:
    other = holder(tmp_path)
    try:
        with pytest.raises(UserError, match=rf"process {other.pid} \(a test holder\)"):
            with files.exclusive(tmp_path, "me"):
                pass
        assert files.busy(tmp_path) == f"process {other.pid} (a test holder)"
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    assert files.lock_file(tmp_path).is_file()  # the file stays: it blocks nobody
    assert files.busy(tmp_path) == ""
    with files.exclusive(tmp_path, "me"), files.exclusive(tmp_path, "me again"):
        assert files.lock_file(tmp_path).read_text().startswith(f"{os.getpid()} me")


def test_every_writer_of_a_held_run_is_refused(trained: Path, capsys) -> None:
    """resume and --overwrite wait for no one: one line naming the holder,
    and the run as it was."""
    other = holder(trained)
    try:
        before = snapshot(trained)
        for argv in (
            ["train", "--resume", str(trained), "--set", "train.max_steps=32"],
            ["train", "--config", str(trained / "config.yaml"), "--overwrite"],
        ):
            assert main(argv) == 2, argv
            err = capsys.readouterr().err
            assert f"process {other.pid} (a test holder) is using it" in err, err
            assert snapshot(trained) == before, argv
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


def test_a_held_run_is_still_evaluated_and_probed(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """Its training holds the run; evaluate and probe read its checkpoint
    and write their own files, and translate reads it, each saying which
    step it used."""
    run = copy_run(trained, tmp_path / "runs" / "held")
    step = files_step(run / "best.pt")
    other = holder(run)
    try:
        assert main(["evaluate", str(run), "--device", "cpu"]) == 0
        assert f"best at step {step}]" in capsys.readouterr().out
        argv = ["probe", str(run), "--sentences", "10", "--epochs", "1"]
        assert main(argv) == 0
        assert f"step {step}]" in capsys.readouterr().out
        (tmp_path / "in.txt").write_text("the dog sleeps .\n", encoding="utf-8")
        argv = ["translate", str(run), "--input", str(tmp_path / "in.txt")]
        assert main([*argv, "--device", "cpu"]) == 0
        assert f"{run}: best at step {step}\n" in capsys.readouterr().err
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


def files_step(checkpoint: Path) -> int:
    from seq2seq.training.checkpoint import saved_step

    step = saved_step(checkpoint)
    assert step is not None
    return step


def test_two_evaluations_of_one_split_cannot_interleave(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """A process holds eval_test.json: a second evaluation of the test split
    is refused, naming it, and writes nothing; another decoding, or an
    ablation that reads the saved scores, goes on. The same for a probe."""
    run = copy_run(trained, tmp_path / "runs" / "twice")
    assert main(["evaluate", str(run), "--device", "cpu"]) == 0
    other = holder(run / "eval_test.json")
    try:
        before = snapshot(run)
        assert main(["evaluate", str(run), "--device", "cpu"]) == 2
        err = capsys.readouterr().err
        assert f"eval_test.json: process {other.pid} (a test holder)" in err, err
        assert snapshot(run) == before
        assert main(["evaluate", str(run), "--device", "cpu", "--beam", "3"]) == 0
        assert (run / "eval_test_beam3.json").is_file()
        # an ablation reads the saved evaluation (whole: it is replaced whole)
        argv = ["evaluate", str(run), "--device", "cpu", "--ablate", "uniform"]
        assert main(argv) == 0
        assert (run / "eval_test_ablate-uniform.json").is_file()
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    probe_file = run / "probe_test.json"
    other = holder(probe_file)
    try:
        argv = ["probe", str(run), "--sentences", "10", "--epochs", "1"]
        assert main(argv) == 2
        assert "probe_test.json: process" in capsys.readouterr().err
        assert not probe_file.exists()
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


READ = """
import sys, time
from pathlib import Path
from seq2seq.files import reading
with reading(Path(sys.argv[1])):
    print("reading", flush=True)
    time.sleep(120)
"""


def test_a_run_being_read_is_not_deleted(trained: Path, tmp_path: Path, capsys):
    """train --overwrite while an evaluation reads the run: refused, nothing
    deleted; once the reader ends it goes ahead."""
    run = copy_run(trained, tmp_path / "runs" / trained.name)  # its config names it
    proc = subprocess.Popen(
        [sys.executable, "-c", READ, str(run)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "reading"
    argv = ["train", "--config", str(run / "config.yaml"), "--overwrite"]
    try:
        before = snapshot(run)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "--overwrite" in err and "is reading it" in err, err
        assert snapshot(run) == before
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert main([*argv, "--set", "train.max_steps=2"]) == 0


def test_a_run_in_training_is_evaluated_beside_it(tmp_path: Path) -> None:
    """Real processes: a training in the background, four evaluations of it
    meanwhile (a probe beside a training is test_a_held_run_is_still_...).
    Each exits 0 and names the step it scored (that of a best.pt the training
    wrote), and the training goes on undisturbed: its history holds each step
    once, in order, past the last step scored."""
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 300, "val": 20, "test": 20}
    )
    sets = tiny_overrides(tmp_path / "corpus", tmp_path / "runs", "live")
    sets = [s for s in sets if not s.startswith(("train.max_steps", "train.val_every"))]
    sets += ["train.max_steps=100000", "train.val_every=5", "train.checkpoint_every=5"]
    config = str(REPO / "configs/synth_ende/additive.yaml")
    run = tmp_path / "runs" / "live"
    # one thread each, so that the training and an evaluation share the two
    # cores without slowing each other down
    one = {**os.environ, "OMP_NUM_THREADS": "1"}
    training = seq2seq(
        "train", "--config", config, *[f"--set={s}" for s in sets], env=one
    )
    try:
        wait_for(lambda: (run / "best.pt").is_file())
        scored = []
        for _ in range(4):
            proc = seq2seq("evaluate", str(run), "--device", "cpu", env=one)
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-2000:]
            found = re.search(r"at step (\d+)\]", out)
            assert found, out
            scored.append(int(found.group(1)))
        assert training.poll() is None  # still training
        wait_for(lambda: history_steps(run)[-1] > max(scored))  # it went on
    finally:
        training.send_signal(signal.SIGINT)
        _, err = training.communicate(timeout=120)
    assert "Traceback" not in err, err[-3000:]
    steps = history_steps(run)
    assert steps == sorted(set(steps)), steps
    assert set(scored) <= set(steps), (scored, steps)  # a validated best.pt each


def history_steps(run: Path) -> list[int]:
    path = run / "history.jsonl"
    if not path.is_file():
        return [0]
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(x)["step"] for x in lines if x.endswith("}")] or [0]


def experiment_file(tmp_path: Path, steps: int) -> Path:
    """One tiny member that checkpoints every 5 steps."""
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 300, "val": 20, "test": 20}
    )
    sets = [
        s
        for s in tiny_overrides(tmp_path / "corpus", tmp_path, "x")
        if "name=" not in s
    ]
    sets = [s for s in sets if not s.startswith(("runs_dir=", "train.max_steps"))]
    sets += [
        f"train.max_steps={steps}",
        "train.checkpoint_every=5",
        "train.val_every=0",
    ]
    exp = {
        "name": "race",
        "runs_dir": str(tmp_path / "runs"),
        "configs": [str(REPO / "configs/synth_ende/none.yaml")],
        "overrides": sets,
        "jobs": 1,
    }
    path = tmp_path / "race.yaml"
    path.write_text(yaml.safe_dump(exp), encoding="utf-8")
    return path


def seq2seq(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "seq2seq", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: a kill reaches its children
        preexec_fn=default_sigint,
        **kw,
    )


def default_sigint() -> None:
    """Ctrl-C as a terminal delivers it: a test run in the background (CI)
    has SIGINT ignored, the child would inherit that, and Python would leave
    it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(check, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_an_experiment_started_twice_trains_each_run_once(tmp_path: Path) -> None:
    """The second `experiment` of a file is refused while the first runs; a
    member another process trains is refused too; after kill -9 of the whole
    first experiment, the next one resumes without clean-up, and the run's
    history holds every step once."""
    path = experiment_file(tmp_path, steps=600)
    member = tmp_path / "runs" / "race" / "none-s1"
    first = seq2seq("experiment", str(path))
    try:
        wait_for(lambda: (member / "last.pt").is_file())
        second = seq2seq("experiment", str(path))
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2 and "seq2seq experiment" in err, err
        assert "is using it" in err and err.count("error:") == 1, err
        resume = seq2seq("train", "--resume", str(member))
        _, err = resume.communicate(timeout=120)
        assert resume.returncode == 2, err
        assert "is using it" in err, err  # by its training, or its evaluation
    finally:  # kill -9 the experiment and its training (a session of its own)
        trainer = int(files.lock_file(member).read_text().split()[0])
        for pid in (first.pid, trainer):
            os.kill(pid, signal.SIGKILL)
        first.wait()
        wait_for(lambda: not files.busy(member))
    again = seq2seq("experiment", str(path))
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "1 runs, 0 already finished" in out and "skipped" not in out, out
    steps = [
        json.loads(line)["step"]
        for line in (member / "history.jsonl").read_text().splitlines()
    ]
    assert steps and steps == sorted(set(steps)), steps  # each step once, in order


def copy_run(trained: Path, run: Path) -> Path:
    """A copy of the trained run at ``run``, its config pointing there."""
    shutil.copytree(trained, run)
    config = run / "config.yaml"
    config.write_text(config.read_text().replace(str(trained.parent), str(run.parent)))
    return run


def test_ctrl_c_during_evaluate_keeps_the_previous_scores(
    trained: Path, tmp_path: Path
) -> None:
    """SIGINT while `evaluate` decodes: the earlier eval_test.json stays as it
    was (it is replaced whole or not at all), and no temporary file is left.
    The test split is made 200,000 lines long first, and the signal sent a
    second after the evaluation holds its file, so that it lands mid-way on
    any machine."""
    run = copy_run(trained, tmp_path / "runs" / "big")
    assert main(["evaluate", str(run), "--device", "cpu"]) == 0  # 20 sentences
    before = snapshot(run)
    big = tmp_path / "big"
    for side, text in (("en", "the dog sleeps ."), ("de", "der Hund schläft .")):
        (big.with_suffix(f".{side}")).write_text(f"{text}\n" * 200_000)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["data"]["test"] = {
        "src": str(big.with_suffix(".en")),
        "tgt": str(big.with_suffix(".de")),
    }
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = seq2seq("evaluate", str(run), "--device", "cpu")
    wait_for(lambda: f"process {proc.pid} " in files.busy(run / "eval_test.json"))
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode not in (0, None) and "Traceback" not in err, err
    after = snapshot(run)
    assert after["eval_test.json"] == before["eval_test.json"]
    assert after["hyp_test.txt"] == before["hyp_test.txt"]
    assert not [name for name in after if name.endswith(".tmp")], after


def test_a_torn_last_history_line_resumes_and_compares(
    trained: Path, tmp_path: Path
) -> None:
    """A crash mid-append leaves half a line: resume goes on from last.pt, and
    compare reads the history."""
    run = copy_run(trained, tmp_path / "runs" / "torn")
    with open(run / "history.jsonl", "a", encoding="utf-8") as f:
        f.write('{"step": 99, "val_lo')  # torn mid-line
    assert main(["train", "--resume", str(run), "--set", "train.max_steps=24"]) == 0
    lines = (run / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["step"] for x in lines][-1] == 24
    assert main(["compare", str(run), "--out", str(tmp_path / "cmp")]) == 0
    assert (tmp_path / "cmp" / "compare.md").is_file()


def test_a_loop_of_links_is_one_line(trained: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "in.txt").write_text("the dog sleeps .\n", encoding="utf-8")
    tr = ["translate", str(trained), "--input", str(tmp_path / "in.txt")]
    for argv in (
        [*tr, "--output", str(tmp_path / "a" / "x.txt")],
        [*tr, "--plot", str(tmp_path / "a")],
        ["compare", str(trained), "--out", str(tmp_path / "a" / "c")],
        ["prepare", "synth_ende", "--out", str(tmp_path / "a")],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "a loop of symbolic links" in err and "Traceback" not in err, err


def test_what_a_command_writes_into_a_folder_spares_its_inputs(
    trained: Path, tmp_path: Path, capsys
) -> None:
    """translate --plot DIR writes line00001.png ... into DIR: a DIR holding
    the input is refused; probe --plot may not name the checkpoint or a corpus
    file it reads, nor a format it cannot write."""
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "line00001.png").write_text("my input\n", encoding="utf-8")
    shutil.copy(trained / "best.pt", tmp_path / "ck.png")
    corpus = yaml.safe_load((trained / "config.yaml").read_text())["data"]["train"]
    before = snapshot(tmp_path)
    tr = ["translate", str(trained), "--input", str(plots / "line00001.png")]
    probe = ["probe", str(trained), "--sentences", "10", "--epochs", "1"]
    for argv, needle in (
        ([*tr, "--plot", str(plots)], "it holds the input file"),
        (
            [
                *probe,
                "--checkpoint",
                str(tmp_path / "ck.png"),
                "--plot",
                str(tmp_path / "ck.png"),
            ],
            "it is the checkpoint read",
        ),
        ([*probe, "--plot", corpus["src"]], "name a .png, .pdf, .svg file"),
        ([*probe, "--plot", str(tmp_path / "p.en")], "name a .png, .pdf, .svg file"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("error:") == 1, err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("seeds: []\n", "name 1 to 1000 seeds"),
        ("seeds: [1, 2, 1]\n", "seed 1 is named twice"),
        ("splits: [nope]\n", "'nope' is not a split"),
    ],
)
def test_an_experiment_file_is_checked_before_anything_runs(
    text: str, needle: str, tmp_path: Path
) -> None:
    from seq2seq.lab.experiment import load_experiment

    path = tmp_path / "e.yaml"
    config = REPO / "configs/synth_ende/none.yaml"
    path.write_text(f"name: e\nconfigs: [{config}]\n{text}", encoding="utf-8")
    with pytest.raises(UserError, match=needle):
        load_experiment(path)
    assert list(tmp_path.iterdir()) == [path]


def test_an_unwritable_cache_is_one_line(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache folder should be")
    monkeypatch.setenv(files.CACHE_ENV, str(cache))
    with pytest.raises(UserError, match="set SEQ2SEQ_CACHE_DIR to a writable"):
        with files.exclusive(tmp_path, "me"):
            pass
