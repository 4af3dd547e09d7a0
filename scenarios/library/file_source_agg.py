"""Stateful pipelines over Spark's own JSON file source: the windowed aggregation, plus dedup and join twins.

Purpose: the stateful queries of the library (``agg_watermark_append``, ``dedup_stream``,
``stream_stream_join``) with their transforms, oracles and sinks unchanged, reading files the harness publishes
(:mod:`scenarios.filedir`) instead of the replayable source. Spark's file source is in every PySpark, so an
older PySpark (3.5, 4.0) can write these checkpoints and the project's resume them: the Spark upgrade runs
(``RunSpec.old_pyspark``, ``bin/test-spark-upgrade``, docs/upgrades.md). :data:`SCENARIO` is the aggregation;
:data:`DEDUP` and :data:`JOIN` are referred to as ``scenarios.library.file_source_agg:DEDUP`` / ``:JOIN``.
Faults: SIGKILL of the driver's process groups after ``offsets/N`` and after ``commits/N`` (the checkpoint
watcher; Spark's file source has no hook of the harness). Each run of the query is one batch.
Guarantee checked: exactly-once, with the oracle of the pipeline it copies (closed windows, distinct dedup keys,
every matching pair once).
Pass condition: as the copied pipeline's; a batch's rows are located through the file-source log, which lists
the files it read (:func:`harness.verdict.check.file_source_spans`).
"""

from __future__ import annotations

import dataclasses

from scenarios.base import Scenario
from scenarios.library import agg_watermark_append, dedup_stream, stream_stream_join
from scenarios.sources import FileDirectory

#: Reached by the checkpoint watcher (SIGKILL only), as in ``file_source_json`` (not imported from there: its
#: naive twin's sink needs ``pyspark.sql.datasource``, which an older PySpark lacks).
WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")


def _over_files(base: Scenario, name: str, summary: str) -> Scenario:
    """``base`` reading JSON files the harness publishes, killed where the checkpoint watcher reaches."""
    return dataclasses.replace(
        base, name=name, summary=summary, source=FileDirectory("json"), kill_points=WATCHED_POINTS
    )


SCENARIO = _over_files(
    agg_watermark_append.SCENARIO,
    "file_source_agg",
    "JSON file source -> 10 s windowed count/sum, watermark, append -> parquet file sink (exactly-once)",
)
DEDUP = _over_files(
    dedup_stream.SCENARIO,
    "file_source_dedup",
    "JSON file source -> dropDuplicates with watermark -> parquet file sink (expected: exactly-once)",
)
JOIN = _over_files(
    stream_stream_join.SCENARIO,
    "file_source_join",
    "JSON file source -> inner join p0 x p1, watermarks -> parquet file sink (expected: exactly-once)",
)
