"""``python -m harness upgrade-check`` end to end (issue 29 point 3): a checkpoint written by a real query, the
next version given as production's query builder (``path.py:NAME``), one probe per answer, exit codes 0/1/2, and
the checkpoint left as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.integration import upgrade_pipelines
from tests.integration.clirun import harness

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINES = Path(upgrade_pipelines.__file__)


@pytest.fixture(scope="module")
def production(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkpoint of ``current`` after three batches (complete mode into noop, as a probe of its own)."""
    checkpoint = tmp_path_factory.mktemp("prod") / "checkpoint"
    for _ in range(3):
        query = (
            upgrade_pipelines.current(spark)
            .writeStream.outputMode("complete")
            .format("noop")
            .option("checkpointLocation", str(checkpoint))
            .trigger(once=True)
            .start()
        )
        query.awaitTermination()
    return checkpoint


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).encode() + f.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize(
    ("version", "code", "words"),
    [
        ("filtered", 0, "resumable as is"),
        ("max_for_sum", 1, "value fields renamed at the same types (sum -> max)"),
        ("more_keys", 1, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),
    ],
)
def test_upgrade_check_answers_from_a_probe_and_leaves_the_checkpoint_alone(
    production: Path, tmp_path: Path, version: str, code: int, words: str
) -> None:
    before = _digest(production)
    rc, out, err = harness(
        "upgrade-check", str(production), f"{PIPELINES}:{version}", "--json", str(tmp_path / "a.json")
    )
    assert rc == code and words in out, out + err[-3000:]
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["exit_code"] == code and doc["new"].endswith(version)
    assert _digest(production) == before  # probes ran on copies
    # Spark's log (a refusal's Java stack trace among it) is in the file the first line names, not in the output.
    assert "\tat org.apache" not in out + err and "WARN" not in err, err
    log = Path(err.split("Spark's log: ", 1)[1].split()[0])
    spark_refused = words.startswith("STATE_STORE_")  # Spark's own refusal, with its Java stack trace
    assert log.is_file() and (not spark_refused or "\tat org.apache.spark" in log.read_text())
    log.unlink()


def test_bad_input_is_one_line_and_exit_2(production: Path, tmp_path: Path) -> None:
    rc, _out, err = harness("upgrade-check", str(tmp_path), f"{PIPELINES}:filtered")
    assert rc == 2 and "not a streaming checkpoint (no offsets/ directory)" in err and "Traceback" not in err
    rc, _out, err = harness("upgrade-check", str(production), "upgrade_filter")
    assert rc == 2 and "is not a harness run directory" in err and "Traceback" not in err
    rc, _out, err = harness("upgrade-check", str(production), f"{PIPELINES}:nope")
    assert rc == 2 and "nope" in err and "Traceback" not in err
    rc, out, err = harness("upgrade-check", str(production), f"{PIPELINES}:broken")
    assert rc == 2 and "not checked: no answer" in out and "orders topic not configured" in out, out + err[-2000:]
    assert "Traceback" not in out + err
