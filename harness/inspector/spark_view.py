"""Optional Spark-backed view of state contents, through Spark's own readers.

``format("state-metadata")`` lists the stateful operators with their batch range;
``format("statestore")`` reads one operator's store as ``key``, ``value``,
``partition_id`` rows. This needs a running SparkSession, unlike the rest of the
inspector; the CLI starts one only for ``--spark-state``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessFailure

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class StoreView:
    """One store of one operator as Spark reads it at the newest committed batch."""

    operator_id: int
    store_name: str
    rows: int
    rows_per_partition: dict[int, int]
    #: The first rows, as ``{"key": {...}, "value": {...}, "partition_id": n}``.
    sample: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SparkStateView:
    operators: tuple[dict[str, Any], ...]
    stores: tuple[StoreView, ...]
    #: Readers that failed, as one line each (the view is best-effort).
    errors: tuple[str, ...] = field(default_factory=tuple)


def _one_line(exc: BaseException) -> str:
    """The exception's first line; for a Py4J error, whose first line only names the call, the Java exception
    that follows it (``java.lang.NumberFormatException: ...``)."""
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if len(text) > 1 and text[0].startswith("An error occurred while calling"):
        return f"{type(exc).__name__}: {text[0]} {text[1].lstrip(': ')}"
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def spark_state_view(spark: SparkSession, checkpoint: str | os.PathLike[str], sample: int = 5) -> SparkStateView:
    """Read state metadata and every store of ``checkpoint`` with ``spark``; never raises
    for a reader failure (it is listed in ``errors``)."""
    path = os.path.abspath(checkpoint)
    errors: list[str] = []
    if not os.path.isdir(os.path.join(path, "state")):
        return SparkStateView((), (), ("no state/ directory: the query is stateless",))
    try:
        meta_rows = spark.read.format("state-metadata").load(path).collect()
    except Exception as exc:  # Spark raises many exception types; the view is best-effort
        return SparkStateView((), (), (f"state-metadata: {_root_cause(exc)}",))
    operators = tuple(r.asDict(recursive=True) for r in meta_rows)
    stores = []
    for op in operators:
        op_id, store = int(op["operatorId"]), str(op.get("stateStoreName") or "default")
        try:
            df = spark.read.format("statestore").option("operatorId", op_id).option("storeName", store).load(path)
            counts = {int(r["partition_id"]): int(r["count"]) for r in df.groupBy("partition_id").count().collect()}
            first = tuple(r.asDict(recursive=True) for r in df.limit(sample).collect()) if sample > 0 else ()
            stores.append(StoreView(op_id, store, sum(counts.values()), counts, first))
        except Exception as exc:
            errors.append(f"statestore operator {op_id} store {store}: {_root_cause(exc)}")
    return SparkStateView(operators, tuple(stores), tuple(errors))


class StateUnreadable(HarnessFailure, RuntimeError):
    """Spark's ``statestore`` reader cannot read this state (the message says why). ``known``: for one of the
    measured limits of the reader (checkpoint format 2 snapshot names, reserved ``$`` names), not a wrong option
    or a broken checkpoint."""

    def __init__(self, message: str, known: bool) -> None:
        super().__init__(message)
        self.known = known


#: Causes of a reader failure measured on PySpark 4.3 that are the reader's limits, with what they mean.
KNOWN_LIMITS = {
    "NumberFormatException": (
        "Spark's reader cannot load a checkpoint format 2 snapshot, <version>_<uuid>.zip, on PySpark 4.3 "
        "(measured): run with checkpoint format 1 to check the final state"
    ),
    "STATE_STORE_CANNOT_CREATE_COLUMN_FAMILY_WITH_RESERVED_CHARS": (
        "Spark's reader cannot read internal state such as timers (names starting with $) on PySpark 4.3 (measured)"
    ),
}


def read_state_rows(spark: SparkSession, checkpoint: str | os.PathLike[str], operator_id: int, name: str) -> DataFrame:
    """One store or ``transformWithState`` variable (``name``; ``""``: the default store) at the newest committed
    batch, through Spark's ``statestore`` reader, as a DataFrame with each top-level struct column replaced by
    its fields and ``partition_id`` dropped; the rows are read here, so a reader failure raises
    :class:`StateUnreadable` now (see :data:`KNOWN_LIMITS` for the failures measured on PySpark 4.3)."""
    from pyspark.sql.types import StructType

    reader = spark.read.format("statestore").option("operatorId", operator_id)
    if name:
        reader = reader.option("stateVarName", name)
    try:
        df = reader.load(os.path.abspath(checkpoint))
        columns = [
            f"{f.name}.*" if isinstance(f.dataType, StructType) else f.name
            for f in df.schema.fields
            if f.name != "partition_id"
        ]
        flat = df.select(*columns)
        return spark.createDataFrame(flat.collect(), flat.schema)
    except Exception as exc:  # the reader raises many exception types; its first line names the cause
        cause = _root_cause(exc)
        known = [why for marker, why in KNOWN_LIMITS.items() if marker in str(exc)]
        where = f"statestore reader, operator {operator_id} {name or 'default'}"
        raise StateUnreadable(f"{where}: {cause}" + (f" ({known[0]})" if known else ""), bool(known)) from None


def _root_cause(exc: BaseException) -> str:
    """The most specific line of a Spark error: a ``Caused by:`` line if the JVM gave one, else the first line."""
    text = str(exc)
    causes = [line.strip() for line in text.splitlines() if line.strip().startswith("Caused by:")]
    return causes[-1][len("Caused by:") :].strip() if causes else _one_line(exc)


def _flat(value: Any, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _flat(v, f"{prefix}.{k}" if prefix else str(k))]
    return [f"{prefix or 'value'}={value}"]


def view_json(view: SparkStateView) -> dict[str, Any]:
    """The view as plain JSON-serializable data (values stringified where JSON has no type)."""
    return {
        "operators": [{k: str(v) if v is not None else None for k, v in op.items()} for op in view.operators],
        "stores": [
            {
                "operator_id": s.operator_id,
                "store_name": s.store_name,
                "rows": s.rows,
                "rows_per_partition": {str(p): n for p, n in s.rows_per_partition.items()},
                "sample": [" ".join(_flat(r.get("key"), "key") + _flat(r.get("value"), "value")) for r in s.sample],
            }
            for s in view.stores
        ],
        "errors": list(view.errors),
    }


def render_spark_view(view: SparkStateView) -> str:
    lines = ["state through Spark (state-metadata / statestore readers):"]
    for op in view.operators:
        lines.append(
            f"  operator {op.get('operatorId')} {op.get('operatorName')} store {op.get('stateStoreName')}: "
            f"{op.get('numPartitions')} partition(s), batches {op.get('minBatchId')}..{op.get('maxBatchId')}"
        )
    for s in view.stores:
        parts = ", ".join(f"p{p}={n}" for p, n in sorted(s.rows_per_partition.items()))
        lines.append(f"  operator {s.operator_id} store {s.store_name}: {s.rows} row(s) ({parts or 'empty'})")
        for r in s.sample:
            fields = _flat(r.get("key"), "key") + _flat(r.get("value"), "value")
            lines.append(f"    p{r.get('partition_id')}: " + " ".join(fields))
    lines += [f"  error: {e}" for e in view.errors]
    return "\n".join(lines)
