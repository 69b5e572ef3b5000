"""Where the lesson's recipes, corpora and runs are: a seq2seq checkout, seen
from wherever the notebook runs.

JupyterLab starts a notebook's kernel in the notebook's own folder
(docs/notebooks/), while the lab's files spell their paths from the checkout
(``configs/synth_ende/none.yaml``, ``data/lesson/train.en``, ``runs/``). A
:class:`Checkout` reads every such path from its root instead of changing the
working folder, so the lesson works the same from an installed package or an
editable one, and a notebook's runs are the very runs ``make demo`` and
``seq2seq experiment`` make from the checkout (same folders, same configs).

    home = Checkout.find()                       # at or above the working folder
    exp_file = home.lesson_file(Path("runs/lesson.yaml"), Path("data/lesson"),
                                Path("runs"), ["none", "additive"])
    home.experiment(exp_file)                    # trains what is missing
    home.run_dirs(exp_file)        # {"none": <root>/runs/lesson/none-s1, ...}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from seq2seq.config import Config, load_config
from seq2seq.errors import UserError
from seq2seq.files import atomic_write, check_output
from seq2seq.lab.demo import DEMO_FILE, demo_results
from seq2seq.lab.experiment import Experiment, Job, experiment_in, load_experiment, plan
from seq2seq.results import Evaluation

LESSON_FILE = Path("configs/experiments/lesson.yaml")  # as the checkout spells it
CORPUS = "data/lesson"  # where that file's overrides expect the corpus


@dataclass(frozen=True)
class Checkout:
    """A seq2seq checkout: ``root`` holds configs/, and the data/ and runs/
    its files name. Every method takes paths as the checkout spells them
    (relative to ``root``) or absolute, and never changes the working folder."""

    root: Path

    def __post_init__(self) -> None:  # the children start there, not here
        object.__setattr__(self, "root", Path(self.root).resolve())

    @classmethod
    def find(cls, start: Path | None = None) -> Checkout:
        """The first folder at or above ``start`` (the working folder by
        default) that holds the lesson's experiment file."""
        here = Path(start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / LESSON_FILE).is_file():
                return cls(folder)
        raise UserError(
            f"{here}: not inside a seq2seq checkout (no {LESSON_FILE} here or "
            "above); open the notebook from the checkout's docs/notebooks/, or "
            "pass the checkout's folder: Checkout(Path('...'))"
        )

    def path(self, path: str | Path) -> Path:
        """``path`` read from the root (an absolute path stays as it is)."""
        return self.root / path

    def spelled(self, path: str | Path) -> str:
        """``path`` as the checkout's files write it: relative to the root
        when it is inside, else absolute. A run's config records it, so runs
        made here and from a terminal in the checkout compare equal."""
        full = self.path(path).resolve()
        if full.is_relative_to(self.root):
            return str(full.relative_to(self.root))
        return str(full)

    def config(self, path: str | Path, overrides: Sequence[str] = ()) -> Config:
        """A training config of the checkout, with ``--set`` overrides."""
        return load_config(self.path(path), list(overrides))

    def lesson_file(
        self,
        out: Path,
        corpus: Path,
        runs: Path,
        modes: Sequence[str] | None = None,
        source: Path = LESSON_FILE,
    ) -> Path:
        """Write ``source`` to ``out`` with its corpus at ``corpus``, its runs
        under ``runs`` and, given ``modes``, only those configs; return the
        written file (absolute)."""
        exp = yaml.safe_load(self.path(source).read_text(encoding="utf-8"))
        exp["runs_dir"] = self.spelled(runs)
        exp["overrides"] = [
            item.replace(f"={CORPUS}/", f"={self.spelled(corpus)}/")
            for item in exp["overrides"]
        ]
        if modes is not None:
            known = {Path(c).stem: c for c in exp["configs"]}
            if unknown := [m for m in modes if m not in known]:
                raise UserError(
                    f"{source}: no config for {', '.join(unknown)}; it has "
                    f"{', '.join(known)}"
                )
            exp["configs"] = [known[m] for m in modes]
        written = self.path(out)
        check_output(written, "{out}", [("the experiment file", self.path(source))])
        written.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(written, yaml.safe_dump(exp, sort_keys=False))
        return written

    def load_experiment(self, path: str | Path) -> Experiment:
        return load_experiment(self.path(path), self.root)

    def run_dirs(self, path: str | Path) -> dict[str, Path]:
        """{config stem: run folder} of an experiment file with one seed: the
        folders ``seq2seq experiment`` trains."""
        exp = self.load_experiment(path)
        if len(exp.seeds) != 1:
            raise UserError(f"{path}: {len(exp.seeds)} seeds; run_dirs takes one")
        return {job.config.stem: job.run_dir for job in plan(exp)}

    def experiment(self, path: str | Path) -> None:
        """``seq2seq experiment PATH`` run in the checkout, its output shown
        here: trains what is missing, evaluates and compares."""
        experiment_in(self.root, self.path(path))

    def demo(
        self, path: str | Path = DEMO_FILE
    ) -> tuple[Experiment, list[Job], list[Evaluation]]:
        """The demo's runs, read when trained and trained when not, in the
        checkout's folders (lab.demo.demo_results)."""
        return demo_results(self.path(path), root=self.root)
