"""A ``transformWithStateInPandas`` processor whose timer ends a session but leaks part of its state.

``tws_sessions``'s processor with one bug: when a session's event-time timer ends it, the processor emits the
``session`` record and clears the open session, but forgets the session's map and list state (rows per bucket,
last values). Nothing of that shows in the output until the key comes back (its next session then starts with
the stale buckets); a key that never comes back keeps the leaked state for good. So the output can be exactly
right while Spark's state is not: only ``tws_sessions``'s final-state check (Spark's ``statestore`` reader
against the oracle's sessions) sees it, as ``state-mismatch`` rows in ``buckets`` and ``recent``.

Run it::

    .venv/bin/python -m harness run examples.pipelines.tws_leaky_timer:SCENARIO --seed 1 --kills 0 --rounds 2
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from scenarios.library.tws_sessions import OUTPUT_COLUMNS, SessionProcessor, sessions_with
from scenarios.library.tws_sessions import SCENARIO as SESSIONS_SCENARIO


class LeakyTimerProcessor(SessionProcessor):
    """:class:`SessionProcessor` whose timer handler leaves the map and list state behind."""

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        import pandas as pd

        k = int(key[0])
        state = self._load(k)
        out = [state.close(k)] if state.session is not None else []
        self.save_session(k, None)  # the bug: self.bucket_state and self.recent_state are not cleared
        yield pd.DataFrame(out, columns=list(OUTPUT_COLUMNS))


SCENARIO = dataclasses.replace(
    SESSIONS_SCENARIO,
    name="tws_leaky_timer",
    summary="tws_sessions whose timer leaves the ended session's map and list state behind (expected: caught)",
    guarantee="at-least-once",
    transform=sessions_with(LeakyTimerProcessor),
)
