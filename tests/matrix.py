"""The support matrix, measured: ``bin/test-matrix`` runs this with the project's interpreter.

For each PySpark release (``HARNESS_MATRIX``, default :data:`RELEASES`) it builds ``.venv-matrix/<release>``
once per commit: a fresh environment holding ``pyspark==<release>`` first, then this checkout's wheel (with
Delta's Python API where delta-spark supports the release), nothing else of the checkout, as a team adds the
harness to a project that pins its Spark; the build fails if pip replaced the release. There it runs ``harness
setup`` and one command per cell, from a scratch directory, and records the verdict line and exit code; then
the unit tier with that interpreter. The table goes to stdout and ``.harness/matrix.md``; on the default
releases the README's matrix is written too (``--readme``: again from ``.harness/matrix.md``). The exit code
is 1 when a cell's exit code is not the one expected for that release: a reported bug the findings catalogue
lists counts as expected on its affected release where the cell's command has its campaign's trigger and
nemesis, and a cell needing a jar set that ``harness setup`` found unserved for the release must be refused
(exit 2) in one line naming it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from tests.matrix_env import build, harness_env
from tests.matrix_table import Measured, full, parse_full, readme_block, replace_block

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".harness" / "matrix.md"
#: The releases measured by default, oldest first: the README's columns. The CI smoke takes the first and last.
RELEASES = ("4.0.5", "4.1.4", "4.2.0", "4.3.0")


@dataclass(frozen=True)
class Cell:
    """One measured cell: a ``harness`` command and the exit code a correct harness gives on a sound release."""

    name: str
    argv: tuple[str, ...]
    expect: int
    #: Jar sets the cell's scenario needs (``harness.spark.releases``): refused where the registries serve none.
    needs: tuple[str, ...] = ()
    #: The first release whose Python API the cell's subject is written against (the example connectors use
    #: 4.2's admission-control API): below it the command refuses in one line (exit 2).
    since: str = ""


CONNECTORS = ROOT / "examples" / "connectors"
CELLS = (
    Cell("kills: file sink", ("run", "file_sink_stateless", "--kills", "2", "--seed", "1"), 0),
    Cell(
        "kills: broken twin caught",
        ("run", "foreachbatch_append_naive", "--kill", "sink.commit.after:1", "--seed", "1"),
        1,
    ),
    Cell(
        "Python source checks",
        (
            "check-source",
            f"{CONNECTORS / 'jsonl_source.py'}:JsonlSource",
            "--context",
            f"{CONNECTORS / '_jsonl.py'}:log_context",
        ),
        0,
        since="4.2",
    ),
    Cell(
        "Python source, broken one caught",
        (
            "check-source",
            f"{CONNECTORS / 'overlapping_partitions.py'}:OverlappingPartitionsSource",
            "--context",
            f"{CONNECTORS / '_jsonl.py'}:log_context",
            "--skip",
            "end-to-end",
        ),
        1,
        since="4.2",
    ),
    Cell("Delta MERGE", ("run", "foreachbatch_delta_merge", "--kills", "2", "--seed", "1"), 0, ("delta-spark",)),
    # The twins' kill is named: a replay of batch 1 after its MERGE or append is what they get wrong.
    Cell(
        "Delta MERGE, broken twin caught",
        ("run", "foreachbatch_delta_merge_no_txn", "--kill", "sink.commit.after:1", "--seed", "1"),
        1,
        ("delta-spark",),
    ),
    Cell("Kafka source", ("run", "kafka_file_sink", "--kills", "2", "--seed", "1"), 0, ("kafka-connector",)),
    Cell(
        "Kafka source, broken twin caught",
        ("run", "scenarios.library.kafka_file_sink:NAIVE_APPEND", "--kill", "sink.commit.after:1", "--seed", "1"),
        1,
        ("kafka-connector",),
    ),
    Cell("DStreams", ("run", "dstream_foreach", "--kills", "2", "--seed", "1"), 0),
    Cell("Spark Connect", ("run", "file_sink_stateless", "--kills", "1", "--seed", "1", "--remote", "local"), 0),
)
#: The verdict line of a run: its first line that is not progress (``[  1.2s] ...``) or the seed banner.
VERDICT = re.compile(
    r"^(exactly-once|recovery failed|query failed|harness error|pipeline failed|verdict|upgrade|source |harness: )"
)
#: ``harness setup``'s line for a jar set the registries serve none of for the release.
UNSERVED = re.compile(r"^setup: (\S+) +not (?:served )?for PySpark", re.M)


def verdict_of(output: str) -> str:
    lines = [line for line in output.splitlines() if VERDICT.match(line)]
    return lines[0][:400] if lines else (output.strip().splitlines() or ["(no output)"])[-1][:400]


def _line(release: str) -> tuple[int, int]:
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


#: A finding's campaign options that only size it; any other (a trigger, a nemesis) is a condition of the bug.
_SIZING = {"--examples", "--seed"}


def finding_for(cell: Cell, release: str) -> str | None:
    """The id of the bug the findings catalogue lists on ``release`` for this cell's pipeline (its scenario, or
    a twin in the same library module) under this cell's conditions: every trigger or nemesis the finding's
    campaign needs is in the cell's command too."""
    findings = tomllib.loads((ROOT / "docs" / "findings.toml").read_text())["finding"]
    pairs = set(zip(cell.argv, cell.argv[1:], strict=False))
    for entry in findings:
        ours = (entry["scenario"], f"scenarios.library.{entry['scenario']}:")
        if not (cell.argv[1] == ours[0] or cell.argv[1].startswith(ours[1])) or entry["affected"]["pyspark"] != release:
            continue
        options = entry["campaign"]
        # Every campaign option of the catalogue takes a value (a flag would shift the pairs).
        assert len(options) % 2 == 0 and all(o.startswith("--") for o in options[::2]), entry["id"]
        needs = {(o, v) for o, v in zip(options[::2], options[1::2], strict=True) if o not in _SIZING}
        if needs <= pairs:
            return str(entry["id"])
    return None


def expected(cell: Cell, release: str, unserved: set[str]) -> int:
    """``cell.expect``; 2 where it needs a jar set of ``unserved``; 1 where the findings catalogue lists a bug
    this cell's pipeline hits on ``release``."""
    if set(cell.needs) & unserved or (cell.since and _line(release) < _line(cell.since)):
        return 2
    return 1 if finding_for(cell, release) else cell.expect


def run_cells(
    release: str, venv: Path, cells: Sequence[Cell], scratch: Path, env: Mapping[str, str], unserved: set[str]
) -> list[Measured]:
    """Each of ``cells`` run with ``venv``'s ``harness`` from ``scratch``: its row, and whether its exit code (and,
    for a refusal, its one line naming what is missing) is the one :func:`expected` says."""
    rows: list[Measured] = []
    scratch.mkdir(parents=True, exist_ok=True)
    for cell in cells:
        t0 = time.monotonic()
        done = subprocess.run([str(venv / "bin" / "harness"), *cell.argv], cwd=scratch, env=dict(env),
                              capture_output=True, text=True)  # fmt: skip
        ok = done.returncode == expected(cell, release, unserved)
        if ok and done.returncode == 2:  # a refusal: one line, naming the unserved jar set where that is why
            lines = [line for line in done.stderr.splitlines() if line.startswith("harness: ")]
            missing = set(cell.needs) & unserved
            ok = len(lines) == 1 and (not missing or any(n in lines[0] for n in missing))
        rows.append((cell.name, f"exit {done.returncode}: {verdict_of(done.stdout + done.stderr)}", ok,
                     time.monotonic() - t0))  # fmt: skip
        print(f"matrix: {release} {cell.name}: {rows[-1][1]}", file=sys.stderr)
    return rows


def measure(release: str, scratch: Path) -> list[Measured]:
    """Set-up, every cell and the unit tier on ``release``."""
    venv = build(release)
    env = harness_env(venv)
    scratch.mkdir(parents=True, exist_ok=True)
    setup = subprocess.run([str(venv / "bin" / "harness"), "setup"], cwd=scratch, env=env, capture_output=True,
                           text=True)  # fmt: skip
    unserved = set(UNSERVED.findall(setup.stderr))
    last = setup.stderr.strip().splitlines()[-1][:120]
    said = f"; unserved: {', '.join(sorted(unserved))}" if unserved else ""
    rows: list[Measured] = [("set-up", f"exit {setup.returncode}: {last}{said}", setup.returncode == 0, 0.0)]
    rows += run_cells(release, venv, CELLS, scratch, env, unserved)
    t0 = time.monotonic()
    unit = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-m", "unit", "-q", "-p", "no:cacheprovider",
                           "-n", "2"], cwd=ROOT, env=env, capture_output=True, text=True)  # fmt: skip
    tail = (unit.stdout.strip().splitlines() or ["(no output)"])[-1]
    rows.append(("unit tier", f"exit {unit.returncode}: {tail}", unit.returncode == 0, time.monotonic() - t0))
    return rows


def measure_or_say(release: str, scratch: Path) -> list[Measured]:
    """:func:`measure`, or, when the release's environment cannot be built, every row failed saying why: the
    other releases' measurements are kept."""
    try:
        return measure(release, scratch)
    except (SystemExit, AssertionError, OSError, subprocess.SubprocessError) as exc:
        why = f"exit 2: the environment could not be built: {exc or type(exc).__name__}"
        print(f"matrix: {release}: {why}", file=sys.stderr)
        names = ["set-up", *(cell.name for cell in CELLS), "unit tier"]
        return [(name, why, False, 0.0) for name in names]


def write_readme(releases: Sequence[str], results: Mapping[str, Sequence[Measured]], stamp: str) -> None:
    """The README's block, each cell whose failure is a catalogued bug linked to its finding."""
    notes = {}
    for cell in CELLS:
        for release in releases:
            if found := finding_for(cell, release):
                notes[(release, cell.name)] = f"a reported bug: [{found}](docs/findings.md#{found})"
    readme = ROOT / "README.md"
    readme.write_text(replace_block(readme.read_text(), readme_block(releases, results, stamp, notes)))
    print("matrix: README.md's support matrix rewritten", file=sys.stderr)


def main(argv: Sequence[str]) -> int:
    if list(argv) == ["--readme"]:  # the README's block again from the last full table: nothing is measured
        try:
            stamp, columns, measured = parse_full(OUT.read_text())
        except (OSError, ValueError) as exc:
            print(f"matrix: cannot read {OUT}: {exc}; run bin/test-matrix", file=sys.stderr)
            return 2
        if columns != list(RELEASES):
            print(f"matrix: {OUT} measured {' '.join(columns)}, the README shows {' '.join(RELEASES)}: run "
                  "bin/test-matrix without HARNESS_MATRIX", file=sys.stderr)  # fmt: skip
            return 2
        write_readme(columns, measured, stamp)
        return 0
    if argv:
        print("usage: bin/test-matrix [--readme]  (HARNESS_MATRIX='4.1.4 4.3.0' picks releases)", file=sys.stderr)
        return 2
    releases = tuple(os.environ.get("HARNESS_MATRIX", " ".join(RELEASES)).split())
    t0 = time.monotonic()
    results = {r: measure_or_say(r, ROOT / ".harness" / "matrix-runs" / r) for r in releases}
    minutes = (time.monotonic() - t0) / 60
    stamp = (f"Measured by `bin/test-matrix` on {date.today().isoformat()} ({os.cpu_count()} cores, "
             f"{minutes:.0f} min for the {len(releases)} releases, each in a fresh environment with this "
             "project's wheel); commands: `tests/matrix.py`; verdict lines: `.harness/matrix.md` (local).")  # fmt: skip
    table = full(releases, results)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(f"{stamp}\n\n{table}\n")
    print(table)
    print(f"matrix: written to {OUT}", file=sys.stderr)
    if releases == RELEASES:
        write_readme(releases, results, stamp)
    else:
        print(f"matrix: README.md left as it was (it shows {' '.join(RELEASES)}, not {' '.join(releases)})",
              file=sys.stderr)  # fmt: skip
    return 0 if all(ok for rows in results.values() for _, _, ok, _ in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
