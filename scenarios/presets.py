"""Settings the built-in scenarios share, merged into ``Scenario(...)`` with ``**`` so each scenario module
states only what is its own (a key given twice is a ``TypeError``, never a silent override)::

    SCENARIO = Scenario(name=..., summary=..., guarantee=..., transform=..., identity=GROUP,
                        **EVENT_TIME, **STATEFUL_FILE_SINK)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scenarios.base import parquet_file_sink, read_parquet_output

#: Keyword arguments of :class:`~scenarios.base.Scenario`.
Preset = Mapping[str, Any]

#: Event time advances 1 s per offset over 4 keys; jitter stays below a 5 s watermark delay.
EVENT_TIME_SOURCE: Mapping[str, Any] = {"num_keys": 4, "event_time_step_ms": 1_000, "disorder_ms": 3_000}
#: Every crash point the replayable source reaches when every batch reads data (no-data batches off). The file
#: sink's ``sink.commit.after`` is not among them: only the checkpoint watcher reaches it, and it cannot ``raise``.
READ_POINTS = (
    "source.latest_offset",
    "after_offsets_logged",
    "source.read",
    "sink.write.start",
    "sink.write.mid",
    "sink.write.end",
    "after_commit_logged",
)
#: Batches only when data arrived: what the schedule predicts, and a source hook in every batch.
NO_DATA_BATCHES_OFF: Mapping[str, str] = {"spark.sql.streaming.noDataMicroBatches.enabled": "false"}

#: Event-time data for windowed and deduplicating queries: one partition, 2 rows per offset, batches of at
#: most 20 rows, 20-40 offsets a round.
EVENT_TIME: Preset = {
    "partitions": 1,
    "rows_per_offset": 2,
    "max_rows_per_batch": 20,
    "rows_per_round": (20, 40),
    "source_overrides": EVENT_TIME_SOURCE,
}
#: The parquet file sink (append), read back through its ``_spark_metadata``.
FILE_SINK: Preset = {"attach_sink": parquet_file_sink, "read_output": read_parquet_output}
#: A stateful query into the parquet file sink, killed at every point the source reaches in a batch.
STATEFUL_FILE_SINK: Preset = {
    **FILE_SINK,
    "kill_points": READ_POINTS,
    "confs": NO_DATA_BATCHES_OFF,
    "stateful": True,
}
#: A sink of Python code (a ``foreachBatch`` function or a ``DataSourceStreamWriter`` in a ``crash_injecting``
#: wrapper): campaigns draw ``sink.step`` faults inside it; batches of at most 20 rows, 30-50 offsets a round.
PYTHON_SINK: Preset = {"sink_steps": True, "max_rows_per_batch": 20, "rows_per_round": (30, 50)}


def _delta_versions(spark: Any, ctx: Any, identity: tuple[str, ...]) -> Any:
    from scenarios.delta.locate import delta_versions  # pyspark and the log reader only when a run checks

    return delta_versions(spark, ctx, identity)


#: A pipeline that writes a Delta table (``<output>/table``): needs the set-up's Delta jar set (checked before a run
#: starts); every anomaly names the Delta versions that hold its row and carry its batch.
DELTA: Preset = {"jars": ("delta-spark",), "sink_versions": _delta_versions}
