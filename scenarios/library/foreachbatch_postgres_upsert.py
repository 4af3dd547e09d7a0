"""Stateless map/filter into PostgreSQL through an idempotent ``foreachBatch`` upsert.

Purpose: the same exactly-once ``foreachBatch`` pattern as
``foreachbatch_sqlite_upsert`` against a real database server
(:func:`scenarios.sinks.postgres_upsert.upsert_into_postgres`): rows and batch id in
one transaction, ``INSERT ... ON CONFLICT DO NOTHING`` on the batch id making
a replayed batch a no-op. The server is a throw-away cluster the run starts
(the scenario's ``resource`` hook,
:func:`scenarios.sinks.pg_cluster.throwaway_postgres`); its DSN reaches the
sink as ``SinkContext.resources["dsn"]``.
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches (see
``foreachbatch_sqlite_upsert``); kills during the read of the batch cut the
driver's connection with a transaction open, which the server must roll back.
Guarantee checked: exactly-once.
Pass condition: the rows in the PostgreSQL table equal, as a multiset, the
same transform over exactly the input added.
Requirements: PostgreSQL server binaries (``initdb``, ``pg_ctl``,
``postgres``; Debian: ``apt-get install postgresql``) and ``psycopg``;
without them the run ends with no verdict and says what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.library.file_sink_stateless import transform
from scenarios.library.foreachbatch_sqlite_upsert import FOREACH_BATCH_POINTS
from scenarios.presets import PYTHON_SINK
from scenarios.sinks.pg_cluster import throwaway_postgres
from scenarios.sinks.postgres_upsert import read_postgres, upsert_into_postgres

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType


def dsn(ctx: SinkContext) -> str:
    if "dsn" not in ctx.resources:
        raise RuntimeError(
            "foreachbatch_postgres_upsert: no 'dsn' in the run's resources; run it through the harness "
            "(python -m harness run foreachbatch_postgres_upsert), which starts a throw-away PostgreSQL"
        )
    return ctx.resources["dsn"]


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(crash_injecting_foreach_batch(upsert_into_postgres(dsn(ctx)), ctx.faults))


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_postgres(dsn(ctx)), schema)


SCENARIO = Scenario(
    name="foreachbatch_postgres_upsert",
    summary="map/filter -> foreachBatch upsert into PostgreSQL keyed by batch id (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=FOREACH_BATCH_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    resource=throwaway_postgres,
    **PYTHON_SINK,
)
