"""Which Delta version holds each row of a run's table and carries each batch (``Scenario.sink_versions``).

Rows: the table's current version read with Spark's ``_metadata.file_path`` column, each file mapped to the
version whose commit added it (:func:`scenarios.delta.log.adding_versions`).
Batches: a commit with a ``txn`` belongs to the batch its ``version`` names (the batch id, for Delta's
streaming sink, app id = the query id, and for the library's ``foreachBatch`` writers). A commit without one
(a write with no txn options) belongs to the first batch whose ``commits/N`` was written after it
(``commitInfo.timestamp`` against the file's modification time, one clock on one machine): Spark writes
``commits/N`` only after the sink returned, and a batch killed after its Delta commit is re-run under the same
id, so both of a replayed batch's commits are named by it. Commits that add no file and carry no txn (the
table's creation) belong to no batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from scenarios.base import VERSION_COLUMN, SinkContext, SinkVersions
from scenarios.delta.log import adding_versions, read_log
from scenarios.delta.sinks import has_log, table_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _relative(file_uri: str, table: Path) -> str:
    """A data file's path relative to the table (how the log names it), from Spark's ``file:/...`` URI."""
    path = Path(unquote(urlparse(file_uri).path))
    try:
        return str(path.relative_to(table))
    except ValueError:
        return str(path)


def delta_versions(spark: SparkSession, ctx: SinkContext, identity: tuple[str, ...]) -> SinkVersions:
    """:class:`SinkVersions` of the run's table (:func:`scenarios.delta.sinks.table_path`)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    table = Path(table_path(ctx)).resolve()
    if not has_log(str(table)):
        return SinkVersions("Delta", pa.table({VERSION_COLUMN: pa.array([], pa.int64())}), {})
    commits = read_log(table)
    added = adding_versions(commits)
    read = spark.read.format("delta").load(str(table)).select(*identity, F.col("_metadata.file_path").alias("__f"))
    rows = read.toArrow()
    files = rows.column("__f").to_pylist()
    versions = pa.array([added.get(_relative(f, table), -1) for f in files], pa.int64())
    rows = rows.drop_columns(["__f"]).append_column(VERSION_COLUMN, versions)
    committed = _commit_times(Path(ctx.checkpoint))
    batches: dict[int, list[int]] = {}
    for commit in commits:
        if commit.from_checkpoint:  # which commit carried those txns is gone with the cleaned-up history
            continue
        owners = {batch for _app, batch in commit.txns}
        if not owners and commit.adds and commit.timestamp_ms is not None:
            after = [b for b, t in committed if t >= commit.timestamp_ms]
            owners = {after[0]} if after else set()
        for batch in owners:
            batches.setdefault(batch, []).append(commit.version)
    return SinkVersions("Delta", rows, {b: tuple(v) for b, v in batches.items()})


def _commit_times(checkpoint: Path) -> list[tuple[int, float]]:
    """``(batch id, modification time of commits/N in ms)`` in batch order."""
    out = []
    directory = checkpoint / "commits"
    for entry in directory.iterdir() if directory.is_dir() else ():
        if entry.name.isdigit():
            out.append((int(entry.name), entry.stat().st_mtime_ns / 1e6))
    return sorted(out)
