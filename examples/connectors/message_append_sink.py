"""BROKEN on purpose: the message-carried sink whose ``commit()`` appends to one log.

One bug away from :mod:`examples.connectors.message_carried_sink`: the rows
still travel in the commit messages, but ``commit(messages, batchId)`` appends
them to a single ``data/rows.jsonl`` instead of writing the batch's own file,
and never looks at ``batchId``. When the driver dies after the sink's commit
and before Spark writes ``commits/N``, Spark runs batch N again and its rows
are appended a second time: duplicates (at-least-once at best).

Checks that must catch it: ``idempotent-commit`` (batch 0 committed twice is
there twice) and ``keys-on-batch-id`` (batch 1 replayed with new task attempts
is there twice); with Spark, ``crash-points`` (duplicates after
``sink.commit.after``)::

    python -m harness check-sink examples/connectors/message_append_sink.py:MessageAppendSink \\
        --read-back examples/connectors/message_append_sink.py:read_back
"""

from __future__ import annotations

import json
import os
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage

from examples.connectors.message_carried_sink import (
    MessageCarriedSink,
    MessageCarriedWriter,
    carried_rows,
    read_back,
)

__all__ = ["MessageAppendSink", "read_back"]


class MessageAppendWriter(MessageCarriedWriter):
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log = self.root / "data" / "rows.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as f:  # BUG: appends whatever batch comes, replays included
            f.writelines(json.dumps(r) + "\n" for r in carried_rows(messages))
            f.flush()
            os.fsync(f.fileno())


class MessageAppendSink(MessageCarriedSink):
    """Format ``jsonl_message_append``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_message_append"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return MessageAppendWriter(str(self.options["path"]))
