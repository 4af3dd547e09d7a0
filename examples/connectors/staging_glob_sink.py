"""BROKEN on purpose: the streamed-staging sink whose ``commit()`` publishes every staged file.

One bug away from :mod:`examples.connectors.streamed_staging_sink`: ``commit``
publishes every file in the batch's staging directory instead of the files the
commit messages name. A task attempt that died mid-write left a partial
staging file there (its rows were streamed to disk as they arrived); Spark
retried the task and sent ``commit`` only the successful attempts' messages,
but the glob picks up the dead attempt's file too, so its rows are published
beside the retry's: duplicates.

Check that must catch it: ``task-retry`` (3 rows of the failed attempt are
visible next to the retried attempt's rows); every other protocol check passes::

    python -m harness check-sink examples/connectors/staging_glob_sink.py:StagingGlobSink \\
        --read-back examples/connectors/staging_glob_sink.py:read_back
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage

from examples.connectors.streamed_staging_sink import StreamedStagingSink, StreamedStagingWriter, read_back

__all__ = ["StagingGlobSink", "read_back"]


class StagingGlobWriter(StreamedStagingWriter):
    def to_publish(self, messages: Sequence[WriterCommitMessage | None], batch_id: int) -> list[str]:
        staged = self.staging(batch_id)
        return sorted(f.name for f in staged.glob("*.jsonl")) if staged.is_dir() else []  # BUG: not the messages'


class StagingGlobSink(StreamedStagingSink):
    """Format ``jsonl_staging_glob``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_staging_glob"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return StagingGlobWriter(str(self.options["path"]))
