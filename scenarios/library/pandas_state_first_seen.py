"""``applyInPandasWithState`` (PySpark's ``flatMapGroupsWithState``): every row, flagged when it is its key's first.

Purpose: the arbitrary-state operator that predates ``transformWithState``, under kills. Per ``key`` the state
holds how many rows of the key were seen (``STATE_DDL``, no timeout). Every input row is emitted with ``first``:
true for the first row of its key over the whole run, false for the others. A lost state update flags a key's
row first twice; a replayed one flags none. In append mode into the parquet file sink.
Determinism: one source partition, so batches are contiguous offset ranges, and within a batch the function takes
a key's rows in ``(offset, seq)`` order: the first row of a key is its smallest ``(offset, seq)``, whatever the
batch boundaries.
Faults: every crash point the replayable source reaches (no-data batches off, so each batch reads data).
Guarantee checked: exactly-once: each input row visible once, with the right ``first``.
Pass condition: the rows readable through the sink equal, as a multiset, the input rows with ``first`` computed in
batch mode (``row_number`` over the key in ``(offset, seq)`` order equals 1).
The next versions (``certify --upgrades``, the guide's ``[flat]mapGroupsWithState`` rows):
:data:`V2_STATE_SCHEMA` keeps the newest offset too (one more state field), :data:`V2_TIMEOUT` declares a
processing-time timeout it never sets, :data:`V2_FUNCTION` computes ``first`` another way (the same output).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import Window
from pyspark.sql import functions as F

from scenarios.base import OracleContext, Scenario
from scenarios.presets import EVENT_TIME, STATEFUL_FILE_SINK

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

OUTPUT_DDL = "partition INT, offset BIGINT, seq INT, key INT, value BIGINT, first BOOLEAN"
STATE_DDL = "rows BIGINT"
COLUMNS = ("partition", "offset", "seq", "key", "value")
HERE = "scenarios.library.pandas_state_first_seen"

Flagger = Callable[[Any, Iterator["pd.DataFrame"], Any], Iterator["pd.DataFrame"]]


def _rows_in_order(pdfs: Iterator[pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    frames = [pdf[list(COLUMNS)] for pdf in pdfs]
    return pd.concat(frames).sort_values(["offset", "seq"], kind="stable").reset_index(drop=True)


def flag_first(key: Any, pdfs: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
    """The key's rows of this batch in order, ``first`` on the key's first row ever; the state counts rows."""
    rows = _rows_in_order(pdfs)
    seen = int(state.get[0]) if state.exists else 0
    rows["first"] = [seen == 0 and i == 0 for i in range(len(rows))]
    state.update((seen + len(rows),))
    yield rows


def flag_first_and_newest(key: Any, pdfs: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
    """:func:`flag_first` keeping the key's newest offset in the state too (``rows``, ``newest``)."""
    rows = _rows_in_order(pdfs)
    seen = int(state.get[0]) if state.exists else 0
    rows["first"] = [seen == 0 and i == 0 for i in range(len(rows))]
    state.update((seen + len(rows), int(rows["offset"].max())))
    yield rows


def flag_first_by_rank(key: Any, pdfs: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
    """:func:`flag_first` written another way (a rank instead of a position): the same rows and state."""
    rows = _rows_in_order(pdfs)
    before = int(state.get[0]) if state.exists else 0
    rows["first"] = (rows.index.to_series() + before + 1 == 1).to_list()
    state.update((before + len(rows),))
    yield rows


def _applying(flagger: Flagger, state_ddl: str = STATE_DDL, timeout: str = "NoTimeout") -> Callable[..., Any]:
    def transform(df: DataFrame) -> DataFrame:
        return df.groupBy("key").applyInPandasWithState(flagger, OUTPUT_DDL, state_ddl, "append", timeout)

    return transform


def first_rows(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """Every input row, ``first`` where it is its key's smallest ``(offset, seq)``."""
    order = Window.partitionBy("key").orderBy("offset", "seq")
    return batch_input.select(*COLUMNS, (F.row_number().over(order) == 1).alias("first"))


SCENARIO = Scenario(
    name="pandas_state_first_seen",
    summary="applyInPandasWithState: each row flagged first-of-key, state a row count -> parquet file sink "
    "(expected: exactly-once)",
    guarantee="exactly-once",
    transform=_applying(flag_first),
    oracle=first_rows,
    **EVENT_TIME,
    **STATEFUL_FILE_SINK,
)
V2_STATE_SCHEMA = replace(
    SCENARIO, name="pandas_state_v2_schema", transform=_applying(flag_first_and_newest, "rows BIGINT, newest BIGINT")
)
V2_TIMEOUT = replace(
    SCENARIO, name="pandas_state_v2_timeout", transform=_applying(flag_first, timeout="ProcessingTimeTimeout")
)
V2_FUNCTION = replace(SCENARIO, name="pandas_state_v2_function", transform=_applying(flag_first_by_rank))
