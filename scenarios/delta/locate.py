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

The table is found where the sink wrote it: the one Delta table at or under the run's output
(:func:`locate_table`), or the one :func:`delta_versions_at` names (a table elsewhere). When
there is none or more than one, every anomaly says so instead of naming versions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from scenarios.base import VERSION_COLUMN, SinkContext, SinkVersions, SinkVersionsHook
from scenarios.delta.log import adding_versions, read_log
from scenarios.delta.sinks import delta_tables, has_log

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: How a table you name is given to :func:`delta_versions_at`: its path, or a function of the run's
#: context.
TableRef = str | Callable[[SinkContext], str]


def _relative(file_uri: str, table: Path) -> str:
    """A data file's path relative to the table (how the log names it), from Spark's ``file:/...`` URI."""
    path = Path(unquote(urlparse(file_uri).path))
    try:
        return str(path.relative_to(table))
    except ValueError:
        return str(path)


def locate_table(output: str | Path) -> Path | str:
    """The one Delta table at or under ``output`` (resolved); else a one-line reason."""
    tables = delta_tables(output)
    if len(tables) == 1:
        return tables[0].resolve()
    if not tables:
        return f"no Delta table (a _delta_log with a commit) at or under {output}"
    names = ", ".join(str(t.relative_to(output)) for t in tables)
    return f"{len(tables)} Delta tables under {output} ({names})"


def not_named(why: str, identity: Sequence[str]) -> SinkVersions:
    """:class:`SinkVersions` of no row labelled ``why``: each anomaly's report line says it."""
    import pyarrow as pa

    label = f"Delta table not located ({why}; name it: sink_versions=delta_versions_at(PATH))"
    empty = {c: pa.array([], pa.null()) for c in identity}
    return SinkVersions(label, pa.table({**empty, VERSION_COLUMN: pa.array([], pa.int64())}), {})


def delta_versions(spark: SparkSession, ctx: SinkContext, identity: tuple[str, ...]) -> SinkVersions:
    """:class:`SinkVersions` of the one Delta table under ``ctx.output`` (:func:`locate_table`)."""
    table = locate_table(ctx.output)
    if isinstance(table, str):
        return not_named(table, identity)
    return table_versions(spark, ctx, identity, table)


def delta_versions_at(table: TableRef) -> SinkVersionsHook:
    """A ``Scenario.sink_versions`` hook for the table you name: a path, or ``table(ctx)`` of the
    run's :class:`SinkContext` (a table outside ``ctx.output``, or one of several under it)."""

    def hook(spark: SparkSession, ctx: SinkContext, identity: tuple[str, ...]) -> SinkVersions:
        path = Path(table(ctx) if callable(table) else table).resolve()
        if not has_log(str(path)):
            return not_named(f"no Delta table (a _delta_log with a commit) at {path}", identity)
        return table_versions(spark, ctx, identity, path)

    return hook


def table_versions(spark: SparkSession, ctx: SinkContext, identity: tuple[str, ...], table: Path) -> SinkVersions:
    """:class:`SinkVersions` of the Delta table at ``table`` (a resolved path with a commit)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

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
