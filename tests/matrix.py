"""The support matrix, measured: ``bin/test-matrix`` runs this with the project's interpreter.

For each PySpark release (``HARNESS_MATRIX``, default ``4.0.5 4.1.4 4.2.0 4.3.0``) it builds ``.venv-matrix/<release>``
once: a fresh environment with this checkout's wheel (with Delta's Python API where delta-spark supports the
release) and ``pyspark==<release>``, nothing else of the checkout (as a team installs it). There it runs ``harness
setup`` and one command per cell, from a scratch directory, and records the verdict line and exit code; then the
unit tier with that interpreter. The table goes to stdout and ``.harness/matrix.md``; the exit code is 1 when a
cell's exit code is not the one expected for that release: a reported bug the findings catalogue lists counts as
expected on its affected release, and a cell needing a jar set that ``harness setup`` found unserved for the
release must be refused (exit 2) in one line naming it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.spark.releases import DELTA_FOR_LINE
from tests.integration.userenv import clean_environ, make_venv

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".harness" / "matrix.md"


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
    Cell("kills: broken twin caught", ("run", "foreachbatch_append_naive", "--kills", "3", "--seed", "1"), 1),
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
    Cell("Kafka source", ("run", "kafka_file_sink", "--kills", "2", "--seed", "1"), 0, ("kafka-connector",)),
    Cell("DStreams", ("run", "dstream_foreach", "--kills", "2", "--seed", "1"), 0),
    Cell("Spark Connect", ("run", "file_sink_stateless", "--kills", "1", "--seed", "1", "--remote", "local"), 0),
)
#: The verdict line of a run: its first line that is not progress (``[  1.2s] ...``) or the seed banner.
VERDICT = re.compile(
    r"^(exactly-once|recovery failed|query failed|harness error|pipeline failed|verdict|upgrade|source |harness: )"
)
#: ``harness setup``'s line for a jar set the registries serve none of for the release.
UNSERVED = re.compile(r"^setup: (\S+) +not (?:served )?for PySpark", re.M)


def clean_env() -> dict[str, str]:
    """The environment the release's commands run in: the checkout's settings left out (tests.integration.userenv)."""
    return clean_environ() | {"SPARK_LOCAL_IP": "127.0.0.1", "NO_COLOR": "1"}


def build(release: str) -> Path:
    """``.venv-matrix/<release>`` with the wheel and ``pyspark==release`` (rebuilt when the checkout changed)."""
    venv = ROOT / ".venv-matrix" / release
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    stamp = venv / ".harness-stamp"
    if stamp.is_file() and stamp.read_text() == head:
        return venv
    print(f"matrix: building {venv} (PySpark {release} and this checkout's wheel; first time ~2 min)", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    wheels = venv.parent / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    # Delta's Python API exists for the lines Delta's jars are built for (delta-spark 4.4: PySpark <= 4.2.0).
    extras = "delta" if ".".join(release.split(".")[:2]) in DELTA_FOR_LINE else ""
    make_venv(venv, wheels, (f"pyspark=={release}",), clean_environ(), extras)
    stamp.write_text(head)
    return venv


def verdict_of(output: str) -> str:
    lines = [line for line in output.splitlines() if VERDICT.match(line)]
    return lines[0][:160] if lines else (output.strip().splitlines() or ["(no output)"])[-1][:160]


def _line(release: str) -> tuple[int, int]:
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


def expected(cell: Cell, release: str, unserved: set[str]) -> int:
    """``cell.expect``; 2 where it needs a jar set of ``unserved``; 1 where the findings catalogue lists a bug
    this cell's scenario hits on ``release``."""
    if set(cell.needs) & unserved or (cell.since and _line(release) < _line(cell.since)):
        return 2
    findings = tomllib.loads((ROOT / "docs" / "findings.toml").read_text())["finding"]
    for entry in findings:
        if entry["scenario"] == cell.argv[1] and entry["affected"]["pyspark"] == release:
            return 1
    return cell.expect


def measure(release: str, scratch: Path) -> list[tuple[str, str, bool, float]]:
    venv = build(release)
    harness = str(venv / "bin" / "harness")
    env = clean_env() | {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    scratch.mkdir(parents=True, exist_ok=True)
    setup = subprocess.run([harness, "setup"], cwd=scratch, env=env, capture_output=True, text=True)
    unserved = set(UNSERVED.findall(setup.stderr))
    last = setup.stderr.strip().splitlines()[-1][:120]
    said = f"; unserved: {', '.join(sorted(unserved))}" if unserved else ""
    rows = [("set-up", f"exit {setup.returncode}: {last}{said}", setup.returncode == 0, 0.0)]
    for cell in CELLS:
        t0 = time.monotonic()
        done = subprocess.run([harness, *cell.argv], cwd=scratch, env=env, capture_output=True, text=True)
        ok = done.returncode == expected(cell, release, unserved)
        if ok and done.returncode == 2:  # a refusal: one line, naming the unserved jar set where that is why
            lines = [line for line in done.stderr.splitlines() if line.startswith("harness: ")]
            missing = set(cell.needs) & unserved
            ok = len(lines) == 1 and (not missing or any(n in lines[0] for n in missing))
        rows.append((cell.name, f"exit {done.returncode}: {verdict_of(done.stdout + done.stderr)}", ok,
                     time.monotonic() - t0))  # fmt: skip
        print(f"matrix: {release} {cell.name}: {rows[-1][1]}", file=sys.stderr)
    t0 = time.monotonic()
    unit = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-m", "unit", "-q", "-p", "no:cacheprovider",
                           "-n", "2"], cwd=ROOT, env=env, capture_output=True, text=True)  # fmt: skip
    tail = (unit.stdout.strip().splitlines() or ["(no output)"])[-1]
    rows.append(("unit tier", f"exit {unit.returncode}: {tail}", unit.returncode == 0, time.monotonic() - t0))
    return rows


def main() -> int:
    releases = os.environ.get("HARNESS_MATRIX", "4.0.5 4.1.4 4.2.0 4.3.0").split()
    results = {r: measure(r, ROOT / ".harness" / "matrix-runs" / r) for r in releases}
    names = [name for name, *_ in next(iter(results.values()))]
    lines = ["| cell | " + " | ".join(f"PySpark {r}" for r in releases) + " |",
             "|---|" + "---|" * len(releases)]  # fmt: skip
    for i, name in enumerate(names):
        cells = []
        for r in releases:
            _, text, ok, secs = results[r][i]
            took = f" ({secs:.0f} s)" if secs else ""
            cells.append(f"{'' if ok else 'UNEXPECTED: '}{text.replace('|', '/')}{took}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(table + "\n")
    print(table)
    print(f"matrix: written to {OUT}", file=sys.stderr)
    return 0 if all(ok for rows in results.values() for _, _, ok, _ in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
