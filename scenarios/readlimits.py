"""Read limits of Python streaming sources (admission control), by PySpark release: the same names on every release.

PySpark 4.2 added ``pyspark.sql.streaming.datasource``: Spark hands a Python source its read limit
(``latestOffset(start, limit)``, ``getDefaultReadLimit``) and ``availableNow`` (``SupportsTriggerAvailableNow``).
PySpark 4.0 and 4.1 call ``latestOffset()`` with no argument and run ``availableNow`` through Spark's wrapper
for sources without it (all data available at the start, in one batch). Here are PySpark's own classes where
it has them, plain stand-ins otherwise; ``ADMISSION_CONTROL`` says which.
"""

from __future__ import annotations

from dataclasses import dataclass

try:
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )

    #: Whether the installed PySpark passes Python streaming sources a read limit (4.2 and later).
    ADMISSION_CONTROL = True
except ImportError:  # PySpark 4.0, 4.1
    ADMISSION_CONTROL = False

    class ReadLimit:  # type: ignore[no-redef]
        """Stand-in: a limit Spark never passes on this release."""

    class ReadAllAvailable(ReadLimit):  # type: ignore[no-redef]
        """Stand-in: every available row."""

    @dataclass(frozen=True)
    class ReadMaxRows(ReadLimit):  # type: ignore[no-redef]
        """Stand-in: at most ``max_rows`` rows a batch."""

        max_rows: int

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: Spark never calls ``prepareForTriggerAvailableNow`` on this release."""

        def prepareForTriggerAvailableNow(self) -> None:
            """Nothing to prepare."""


__all__ = ["ADMISSION_CONTROL", "ReadAllAvailable", "ReadLimit", "ReadMaxRows", "SupportsTriggerAvailableNow"]
