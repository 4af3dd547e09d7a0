"""The Delta upsert reference sink's pure parts, without Spark: its app id, key columns, merge condition,
table options, and ``read_back`` through delta-rs (a table written here by delta-rs itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scenarios.sinks.delta_upsert import (
    APP_ID_PREFIX,
    DEFAULT_KEYS,
    canonical_path,
    default_app_id,
    delta_upsert,
    key_columns,
    merge_condition,
    read_back,
    table_properties,
)

pytestmark = pytest.mark.unit


def test_app_id_is_one_per_table_whatever_the_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "t"
    ids = {default_app_id(str(table)), default_app_id(f"{table}/"), default_app_id(f"{tmp_path}/./t")}
    monkeypatch.chdir(tmp_path)
    ids.add(default_app_id("t"))
    assert len(ids) == 1
    (only,) = ids
    assert only.startswith(APP_ID_PREFIX) and len(only) == len(APP_ID_PREFIX) + 16
    assert default_app_id(str(tmp_path / "other")) != only


def test_app_id_is_the_same_in_another_process(tmp_path: Path) -> None:
    """A restarted driver derives the same id (no hash seed, no process state in it)."""
    code = "import sys; from scenarios.sinks.delta_upsert import default_app_id; print(default_app_id(sys.argv[1]))"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "t")], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == default_app_id(str(tmp_path / "t"))


def test_uris_keep_their_scheme() -> None:
    assert canonical_path("s3://bucket/tables/t/") == "s3://bucket/tables/t"
    assert default_app_id("s3://bucket/tables/t/") == default_app_id("s3://bucket/tables/t")


def test_keys_from_a_sequence_or_an_option_string() -> None:
    assert key_columns(DEFAULT_KEYS) == ("partition", "offset", "seq")
    assert key_columns(" key, seq ") == ("key", "seq")
    with pytest.raises(ValueError, match="identify a row"):
        key_columns(" , ")


def test_merge_condition_is_null_safe_and_quoted() -> None:
    assert merge_condition(("partition", "offset")) == "t.`partition` <=> s.`partition` AND t.`offset` <=> s.`offset`"


def test_options_are_table_properties_only() -> None:
    assert table_properties({"delta.enableChangeDataFeed": "true"}) == {"delta.enableChangeDataFeed": "true"}
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['key'\]"):
        delta_upsert("/tmp/x", key="partition")


def test_read_back_without_a_table(tmp_path: Path) -> None:
    assert read_back(str(tmp_path / "absent")) == []
    (tmp_path / "empty" / "_delta_log").mkdir(parents=True)  # a create killed before its first commit
    assert read_back(str(tmp_path / "empty")) == []


def test_read_back_sees_committed_versions_only(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    rows = [{"partition": 0, "offset": i, "seq": 0, "key": i % 3, "value": 10 * i} for i in range(3)]
    write_deltalake(path, pa.Table.from_pylist(rows))
    (tmp_path / "t" / "part-orphan.parquet").write_bytes(b"a file no commit names")
    assert sorted(read_back(path), key=lambda r: r["offset"]) == rows
