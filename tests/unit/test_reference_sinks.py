"""The reference sinks' commit logic, called directly (no Spark): the
transactional file sink's idempotent publish, the SQLite and PostgreSQL
batch-id upserts (including a real crash mid-transaction), and the broken
publish-in-write sink's duplicates."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from scenarios.base import ResourceUnavailable
from scenarios.sinks import pg_cluster, read_published, read_visible, visible_files
from scenarios.sinks import postgres_upsert as pgu  # the modules, not the functions
from scenarios.sinks import sqlite_upsert as sq
from scenarios.sinks import transactional as tx
from scenarios.sinks.publish_in_write import publish_rows
from tests.ci_skips import missing

SCHEMA = StructType(
    [StructField("partition", IntegerType()), StructField("offset", LongType()), StructField("t", TimestampType())]
)
T0 = datetime(2024, 1, 1, 12, 0, 0)  # naive local time, as PySpark hands TimestampType to Python


def rows(partition: int, start: int, end: int) -> list[dict[str, Any]]:
    return [{"partition": partition, "offset": o, "t": T0} for o in range(start, end)]


def keys(found: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return sorted((r["partition"], r["offset"]) for r in found)


def stage_batch(root: Path, batch: int, attempt: int = 0) -> list[tx.StagedFile]:
    return [tx.stage(root, SCHEMA, rows(p, 10 * batch, 10 * batch + 3), batch, p, attempt) for p in (0, 1)]


# -- transactional file sink ---------------------------------------------------------------------
def test_publish_makes_exactly_the_batch_visible_and_cleans_staging(tmp_path: Path) -> None:
    msgs = stage_batch(tmp_path, 0)
    assert read_visible(tmp_path) == []  # staged is invisible
    assert tx.publish(tmp_path, 0, msgs) is True
    assert keys(read_visible(tmp_path)) == [(p, o) for p in (0, 1) for o in range(3)]
    assert tx.committed_batches(tmp_path) == [0] and tx.is_committed(tmp_path, 0)
    assert not (tmp_path / "_staging" / "0").exists()
    manifest = json.loads((tmp_path / "_committed" / "0.json").read_text())
    assert manifest["rows"] == 6 and len(manifest["files"]) == 2


def test_timestamps_keep_their_instant(tmp_path: Path) -> None:
    tx.publish(tmp_path, 0, stage_batch(tmp_path, 0))
    assert {r["t"] for r in read_visible(tmp_path)} == {T0.astimezone(UTC)}


def test_replayed_batch_is_a_no_op_and_its_new_staging_is_removed(tmp_path: Path) -> None:
    tx.publish(tmp_path, 0, stage_batch(tmp_path, 0))
    before = visible_files(tmp_path)
    replay = stage_batch(tmp_path, 0)  # Spark re-runs batch 0: commits/0 was never written
    assert tx.publish(tmp_path, 0, replay) is False
    assert visible_files(tmp_path) == before and len(read_visible(tmp_path)) == 6
    assert not (tmp_path / "_staging" / "0").exists()
    assert tx.publish(tmp_path, 0, replay) is False  # and again


def test_publish_interrupted_before_its_marker_is_redone_without_leftovers(tmp_path: Path) -> None:
    first = stage_batch(tmp_path, 2)
    data = tmp_path / "data" / "batch=2"
    data.mkdir(parents=True)
    for m in first:  # the first commit moved its files, then the driver died before the marker
        assert m.file is not None
        (tmp_path / "_staging" / "2" / m.file).replace(data / m.file)
    assert read_visible(tmp_path) == []  # no marker: nothing visible
    retry = stage_batch(tmp_path, 2)
    assert tx.publish(tmp_path, 2, retry) is True
    assert keys(read_visible(tmp_path)) == [(p, o) for p in (0, 1) for o in range(20, 23)]
    assert sorted(f.name for f in data.iterdir()) == sorted(str(m.file) for m in retry)


def test_commit_repeated_with_the_same_messages_after_moving_files_completes(tmp_path: Path) -> None:
    msgs = stage_batch(tmp_path, 1)
    data = tmp_path / "data" / "batch=1"
    data.mkdir(parents=True)
    assert msgs[0].file is not None
    (tmp_path / "_staging" / "1" / msgs[0].file).replace(data / msgs[0].file)
    assert tx.publish(tmp_path, 1, msgs) is True
    assert len(read_visible(tmp_path)) == 6


def test_only_successful_attempts_are_published(tmp_path: Path) -> None:
    tx.stage(tmp_path, SCHEMA, rows(0, 0, 3), 0, 0, attempt=0)  # a failed attempt's file
    ok = [tx.stage(tmp_path, SCHEMA, rows(0, 0, 3), 0, 0, attempt=1), None]
    empty = tx.stage(tmp_path, SCHEMA, [], 0, 1, attempt=0)
    assert empty.file is None and empty.rows == 0
    assert tx.publish(tmp_path, 0, [*ok, empty]) is True
    assert keys(read_visible(tmp_path)) == [(0, 0), (0, 1), (0, 2)]
    assert not (tmp_path / "_staging").joinpath("0").exists()


def test_abort_discards_staging_and_publishes_nothing(tmp_path: Path) -> None:
    tx.publish(tmp_path, 0, stage_batch(tmp_path, 0))
    stage_batch(tmp_path, 1)
    tx.discard(tmp_path, 1)
    assert not (tmp_path / "_staging" / "1").exists()
    assert tx.committed_batches(tmp_path) == [0] and len(read_visible(tmp_path)) == 6


def test_messages_of_another_batch_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="commit of batch 1 got messages of batch"):
        tx.publish(tmp_path, 1, stage_batch(tmp_path, 0))


def test_a_half_written_marker_is_not_a_commit(tmp_path: Path) -> None:
    msgs = stage_batch(tmp_path, 0)
    (tmp_path / "_committed").mkdir()
    (tmp_path / "_committed" / ".0.json.tmp-dead").write_text('{"batch_id": 0, "fi')
    assert read_visible(tmp_path) == [] and tx.committed_batches(tmp_path) == []
    assert tx.publish(tmp_path, 0, msgs) is True


def test_publish_in_write_duplicates_a_replayed_batch(tmp_path: Path) -> None:
    publish_rows(tmp_path, SCHEMA, iter(rows(0, 0, 3)), 0, 0)
    assert len(read_published(tmp_path)) == 3  # visible before any commit
    publish_rows(tmp_path, SCHEMA, iter(rows(0, 0, 3)), 0, 0)  # Spark replays batch 0
    assert len(read_published(tmp_path)) == 6


# -- SQLite upsert -------------------------------------------------------------------------------
def never(*_: Any) -> Iterator[Any]:
    raise AssertionError("a replayed batch must not be computed")
    yield  # pragma: no cover


def test_sqlite_replayed_batch_is_a_no_op(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    conn = sq.connect(db)
    assert sq.write_batch(conn, "rows", SCHEMA, [tuple(r.values()) for r in rows(0, 0, 3)], 0) is True
    assert sq.write_batch(conn, "rows", SCHEMA, never(), 0) is False
    assert sq.write_batch(conn, "rows", SCHEMA, [tuple(r.values()) for r in rows(1, 0, 2)], 1) is True
    conn.close()
    found = sq.read_sqlite(db)
    assert keys(found) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert {r["t"] for r in found} == {T0.astimezone(UTC)}
    assert sq.committed_batches(db) == [0, 1]


def test_sqlite_failure_mid_batch_rolls_back_rows_and_batch_id(tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    def failing() -> Iterator[tuple[Any, ...]]:
        yield (0, 0, T0)
        raise RuntimeError("task failed")

    conn = sq.connect(db)
    with pytest.raises(RuntimeError, match="task failed"):
        sq.write_batch(conn, "rows", SCHEMA, failing(), 0)
    assert sq.read_sqlite(db) == [] and sq.committed_batches(db) == []
    assert sq.write_batch(conn, "rows", SCHEMA, [(0, 0, T0)], 0) is True
    conn.close()


CRASH_MID_TRANSACTION = """
import os, sys
from datetime import datetime
from pyspark.sql.types import IntegerType, LongType, StructField, StructType, TimestampType
from scenarios.sinks import sqlite_upsert as sq
schema = StructType([StructField("partition", IntegerType()), StructField("offset", LongType()),
                     StructField("t", TimestampType())])
def rows():
    for o in range(5):
        yield (0, o, datetime(2024, 1, 1))
    os._exit(9)  # the driver dies with the transaction open
sq.write_batch(sq.connect(sys.argv[1]), "rows", schema, rows(), 0)
"""


def test_sqlite_process_killed_mid_transaction_leaves_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    conn = sq.connect(db)
    sq.write_batch(conn, "rows", SCHEMA, [(9, 9, T0)], 7)
    conn.close()
    proc = subprocess.run([sys.executable, "-c", CRASH_MID_TRANSACTION, str(db)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert keys(sq.read_sqlite(db)) == [(9, 9)] and sq.committed_batches(db) == [7]


def test_sqlite_types_round_trip(tmp_path: Path) -> None:
    schema = StructType(
        [
            StructField("b", BooleanType()),
            StructField("d", DateType()),
            StructField("m", DecimalType(10, 2)),
            StructField("s", StringType()),
        ]
    )
    db = tmp_path / "s.db"
    conn = sq.connect(db)
    sq.write_batch(conn, "typed", schema, [(True, date(2024, 2, 29), Decimal("12.50"), None)], 0)
    conn.close()
    assert sq.read_sqlite(db, "typed") == [{"b": True, "d": date(2024, 2, 29), "m": Decimal("12.50"), "s": None}]


def test_sqlite_refuses_a_table_with_other_columns(tmp_path: Path) -> None:
    conn = sq.connect(tmp_path / "s.db")
    sq.write_batch(conn, "rows", SCHEMA, [], 0)
    other = StructType([StructField("x", StringType())])
    with pytest.raises(ValueError, match="use a new table name or drop the old table"):
        sq.write_batch(conn, "rows", other, [], 1)
    conn.close()


# -- PostgreSQL upsert ---------------------------------------------------------------------------
def test_missing_postgres_binaries_say_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_cluster, "find_pg_bin", lambda: None)
    hint = r"apt-get install postgresql"
    with pytest.raises(ResourceUnavailable, match=hint), pg_cluster.throwaway_postgres(tmp_path):
        pass


PG_CRASH_MID_TRANSACTION = """
import os, sys
from datetime import datetime
from pyspark.sql.types import IntegerType, LongType, StructField, StructType, TimestampType
from scenarios.sinks import postgres_upsert as pgu  # the modules, not the functions
schema = StructType([StructField("partition", IntegerType()), StructField("offset", LongType()),
                     StructField("t", TimestampType())])
def rows():
    for o in range(5):
        yield (0, o, datetime(2024, 1, 1))
    os._exit(9)
pgu.write_batch(pgu.connect(sys.argv[1]), "rows", schema, rows(), 0)
"""


@pytest.mark.skipif(pg_cluster.unavailable_reason() is not None, reason=missing(str(pg_cluster.unavailable_reason())))
def test_postgres_upsert_is_idempotent_and_a_dropped_connection_rolls_back(tmp_path: Path) -> None:
    with pg_cluster.throwaway_postgres(tmp_path) as res:
        dsn = res["dsn"]
        proc = subprocess.run([sys.executable, "-c", PG_CRASH_MID_TRANSACTION, dsn], capture_output=True, text=True)
        assert proc.returncode == 9, proc.stderr
        assert pgu.read_postgres(dsn) == [] and pgu.committed_batches(dsn) == []
        with pgu.connect(dsn) as conn:
            assert pgu.write_batch(conn, "rows", SCHEMA, [tuple(r.values()) for r in rows(0, 0, 3)], 0) is True
            assert pgu.write_batch(conn, "rows", SCHEMA, never(), 0) is False
        found = pgu.read_postgres(dsn)
        assert keys(found) == [(0, 0), (0, 1), (0, 2)] and pgu.committed_batches(dsn) == [0]
        assert {r["t"] for r in found} == {T0.astimezone(UTC)}
    cluster = json.loads((tmp_path / "cluster.json").read_text())
    assert (tmp_path / "postgres.log").exists() and not Path(cluster["base_dir"]).exists()
    assert not pg_cluster.serves(cluster["pid"], cluster["base_dir"])
