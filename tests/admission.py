"""Tests whose subjects are written against PySpark 4.2's admission control for Python sources.

Most example connectors under ``examples/connectors`` import ``pyspark.sql.streaming.datasource`` (a read limit
in ``latestOffset``, ``SupportsTriggerAvailableNow``), which PySpark 4.2 added. Below 4.2 their tests are
skipped with this reason, never silently: the support matrix (README) lists the cell as needing 4.2.
"""

from __future__ import annotations

import pytest

REASON = "its subject uses PySpark 4.2's admission control for Python sources (pyspark.sql.streaming.datasource)"

#: Mark a test (or a module, as ``pytestmark``) whose subject needs PySpark 4.2.
needs_admission_control = pytest.mark.pyspark_min("4.2", reason=REASON)


def require_admission_control() -> None:
    """Skip the calling test module below PySpark 4.2; call it before the module imports such a subject."""
    pytest.importorskip("pyspark.sql.streaming.datasource", reason=f"needs PySpark 4.2: {REASON}")

#: Mark a test whose expectation counts batches of a size: the replayable source sizes batches through
#: PySpark 4.2's read limits; before 4.2 Spark asks it for everything available, so a round is one batch.
needs_read_limits = pytest.mark.pyspark_min(
    "4.2", reason="batch sizes take effect through PySpark 4.2's read limits; before 4.2 a round is one batch"
)
