"""The broken twin of ``tws_sessions``: the open session is kept outside Spark's state store.

Purpose: a ``transformWithStateInPandas`` processor that keeps part of its state in a store of its own (here a
JSON file per key in ``<output>/side-store/``, as a user might keep it in a key-value store or a dict on the
executor) instead of in a ``ValueState``. Spark rolls its own state back to the last committed batch when it
replays a batch; the side store is not rolled back, so after a crash between the batch's state update and
``commits/N`` the replayed rows are counted into the session a second time. Everything else (map and list
state, timers, the sink) is ``tws_sessions``'s.
Faults: as ``tws_sessions``. Only a fault after the processor ran and before ``commits/N`` shows the bug: inside
the ``foreachBatch`` function once it has read the batch (``sink.step``), or ``sink.commit.after``; a run
without such a fault is correct.
Guarantee checked: exactly-once, which it does not have (expected: wrong ``rows``/``total`` in the records of a
replayed batch's keys, from that batch on).
Pass condition: as ``tws_sessions``.
Requirements: as ``tws_sessions``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from scenarios.base import Scenario, run_output
from scenarios.library.tws_sessions import SESSIONS, Session, SessionProcessor, oracle, sessions_with
from scenarios.sinks._files import atomic_write_text

SIDE_STORE = "side-store"


class SideStoreProcessor(SessionProcessor):
    """:class:`SessionProcessor` with the open session in ``<root>/<key>.json`` instead of a ``ValueState``."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def load_session(self, key: int) -> Session | None:
        path = self.root / f"{key}.json"
        return Session(**json.loads(path.read_text())) if path.exists() else None

    def save_session(self, key: int, session: Session | None) -> None:
        path = self.root / f"{key}.json"
        if session is None:
            path.unlink(missing_ok=True)
        else:
            self.root.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(session.__dict__))


def side_store_processor() -> SideStoreProcessor:
    return SideStoreProcessor(os.path.join(run_output(), SIDE_STORE))


SCENARIO = Scenario(
    name="tws_sessions_side_store",
    summary="tws_sessions keeping the open session outside Spark's state (expected: wrong totals after a replay)",
    guarantee="at-least-once",
    transform=sessions_with(side_store_processor),
    oracle=oracle,
    **SESSIONS,
)
