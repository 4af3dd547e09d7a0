"""Layout of a run directory: everything one harness run reads and writes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunPaths:
    """Named paths inside a run directory ``root``."""

    root: Path

    @property
    def spec(self) -> Path:
        return self.root / "spec.json"

    @property
    def source_run(self) -> Path:
        """A source run's spec (the source under test, its options and oracle), instead of ``spec.json``."""
        return self.root / "source_run.json"

    @property
    def tap(self) -> Path:
        return self.root / "tap.json"

    @property
    def input(self) -> Path:
        """Files a file-directory source reads (``scenarios.filedir``: one per partition and round)."""
        return self.root / "input"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def output(self) -> Path:
        return self.root / "output"

    @property
    def faults(self) -> Path:
        return self.root / "faults"

    @property
    def events(self) -> Path:
        return self.root / "events"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def oracle(self) -> Path:
        return self.root / "oracle"

    @property
    def history(self) -> Path:
        return self.root / "history.jsonl"

    @property
    def resources(self) -> Path:
        """Settings a scenario's resource hook provided (JSON object)."""
        return self.root / "resources.json"

    @property
    def deployed(self) -> Path:
        """An upgrade run's deploy record (``harness.engine.deploy``): the version running from which batch on."""
        return self.root / "deployed.json"

    @property
    def deploy_logs(self) -> Path:
        """An upgrade run's checkpoint logs as version 1 left them at the deploy (its oracle's checkpoint)."""
        return self.root / "deploy-checkpoint"

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    def create(self) -> None:
        """Create the directories a run writes into (idempotent)."""
        for d in (self.root, self.faults, self.events, self.logs, self.oracle):
            d.mkdir(parents=True, exist_ok=True)

    def driver_events(self, incarnation: int) -> Path:
        return self.events / f"driver-{incarnation}.jsonl"

    def driver_log(self, incarnation: int) -> Path:
        return self.logs / f"driver-{incarnation}.log"


def safe_name(text: str) -> str:
    """``text`` as a path component Spark's and Hadoop's path handling take: every character but letters,
    digits, ``.``, ``_`` and ``-`` becomes ``-``. A scenario reference ``module:ATTR`` in a directory name
    breaks Hadoop (``Relative path in absolute URI``: the ``:`` reads as a URI scheme); a glob or a file
    stream under it finds nothing."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in text)


#: Characters Spark's and Hadoop's path handling cannot take in a local directory. Measured on PySpark 4.2.0 (a
#: JSON file-source stream into the parquet sink, then a plain and a glob read): ``:`` fails ("Relative path in
#: absolute URI": it reads as a URI scheme), ``[`` and ``{`` fail, ``*`` and ``?`` match other directories;
#: a space, ``%``, ``#``, ``,``, ``=``, ``'``, ``&``, ``~``, ``@`` and ``+`` work. ``\\`` is a glob escape.
UNSAFE_PATH_CHARS = ":*?[]{}\\"


def path_problem(path: Path, what: str) -> str | None:
    """Why Spark cannot use ``path`` (absolute, resolved) as a directory of a run, naming ``what`` and the
    characters; ``None`` when it can. Spaces and other characters are fine."""
    full = str(path.expanduser().resolve())
    bad = sorted({c for c in full if c in UNSAFE_PATH_CHARS or not c.isprintable()})
    if not bad:
        return None
    shown = " ".join(repr(c) for c in bad)
    return (
        f"{what} {full} holds {shown}, which Spark's file paths cannot take (a ':' reads as a URI scheme, "
        "glob characters as a pattern); give a directory without it"
    )
