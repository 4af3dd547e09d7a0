"""Self-check before blame: a round whose query ended short of the input the harness published for it.

A source that can tell what of its input a committed batch's offsets have not reached (``unread(sources, run)``:
Spark's Kafka source, read from the harness's topic) is asked after every job-trigger round (``availableNow``,
``once``, a processing-time query stopped once caught up) that ended without an error. Such a round must have
committed an offset that covers what the harness published; if it did not, the input never reached the query
(a topic it never advanced on, records that arrived after the round's snapshot) and the run ends as no
verdict naming the round's newest batch, the offsets reached and the records due. Without it such a run passes
vacuously (the Kafka oracle expects only the records the committed batches cover). DStream rounds have their
own check (:class:`harness.engine.dstream.FeedMissed`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessFailure
from harness.inspector import batch_ids, read_offsets

#: ``unread(sources)``: what of the published input the source offsets of the newest committed batch (every
#: source's entry of ``offsets/N``; ``None`` before any batch) have not reached, or ``""``.
Unread = Callable[[Sequence[Any] | None], str]


class InputUnread(HarnessFailure, RuntimeError):
    """A round's query ended without reading what the harness published for it: the harness's miss, so the run
    ends as no verdict (the runner reports the message)."""


def check_round_read(checkpoint: Path, unread: Unread) -> None:
    """Raise :class:`InputUnread` when the newest committed batch of ``checkpoint`` left published input
    unread."""
    committed = batch_ids(checkpoint / "commits")
    batch = committed[-1] if committed else None
    missed = unread(None if batch is None else read_offsets(checkpoint, batch).sources)
    if not missed:
        return
    where = "committed no batch" if batch is None else f"ended at batch {batch}"
    raise InputUnread(
        f"the round's query {where} and never read input the harness published for it ({missed}): the input "
        "never reached the query, a miss of the harness's feed, not the pipeline: no verdict (check that the "
        "pipeline reads the source the scenario names; run it again)"
    )
