"""Reference sinks: the transactional patterns connector authors can copy, and
one deliberately broken sink the harness must catch.

- :class:`TransactionalFileSink` (format ``transactional_files``): a Python
  ``DataSourceStreamWriter`` that stages files in ``write()`` and publishes
  them atomically and idempotently in ``commit(messages, batchId)``;
  :func:`read_visible` returns what its readers may see.
- :func:`upsert_into_sqlite` / :func:`upsert_into_postgres`: ``foreachBatch`` functions
  that write a batch and its batch id in one transaction, so a replayed batch
  is a no-op; :func:`read_sqlite` / :func:`read_postgres` read them back;
  :func:`throwaway_postgres` starts a disposable local server for tests.
- :func:`delta_upsert`: a ``foreachBatch`` factory that ``MERGE``s each batch into
  a Delta table keyed by the rows' identity, with Delta's txn confs (a replayed
  batch is skipped); :func:`read_delta_upsert` reads the table without Spark.
  :func:`delta_append_naive` is its broken twin (a plain append: duplicates).
- :class:`PublishInWriteSink` (format ``publish_in_write_files``): makes rows
  visible inside ``write()``; at-least-once, duplicates when Spark replays a batch.
"""

from __future__ import annotations

from scenarios.sinks.delta_upsert import delta_append_naive, delta_upsert
from scenarios.sinks.delta_upsert import read_back as read_delta_upsert
from scenarios.sinks.pg_cluster import throwaway_postgres
from scenarios.sinks.postgres_upsert import read_postgres, upsert_into_postgres
from scenarios.sinks.publish_in_write import PublishInWriteSink, read_published
from scenarios.sinks.sqlite_upsert import read_sqlite, upsert_into_sqlite
from scenarios.sinks.transactional import TransactionalFileSink, read_visible, visible_files

__all__ = [
    "PublishInWriteSink",
    "TransactionalFileSink",
    "delta_append_naive",
    "delta_upsert",
    "read_delta_upsert",
    "read_postgres",
    "read_published",
    "read_sqlite",
    "read_visible",
    "throwaway_postgres",
    "upsert_into_postgres",
    "upsert_into_sqlite",
    "visible_files",
]
