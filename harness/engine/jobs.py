"""Scheduled job runs (``trigger available-now`` / ``once``): each round's query is one job, ending by itself.

A job that a planned fault kills (or fails) is over, as a scheduled job killed halfway is: nothing restarts
it; the next round's job starts on the same checkpoint, with the data that arrived meanwhile, and must finish
what the killed one began. After the last round, jobs are started until one ends by itself (the schedule's
next run after a failure) and finds nothing left to read (a ``once`` job that re-ran a killed batch read
nothing newer), so every row added is due in the sink when the run is judged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.engine.conductor import Conductor, HarnessError


def run_job(conductor: Conductor, echo: Callable[[str], None], job: int, final: bool) -> dict[str, Any]:
    """Job run number ``job``: one attempt, or with ``final`` as many as it takes for one to end by itself having
    read nothing (at most the conductor's restart limit and two). The last attempt's answer (``caught_up``,
    ``killed``, ``job_failed``)."""
    attempts = conductor.limit() + 3 if final else 1  # room for the job that finds nothing left
    for attempt in range(attempts):
        msg = conductor.drive("run", retry=False)
        label = f"job run {job}" + (f" (attempt {attempt + 1} after the last round)" if attempt else "")
        if msg.get("event") == "caught_up":
            echo(f"{label} ended by itself ({len(msg.get('batches', []))} batch(es))")
            # After the last round, a job that read rows may have re-run a killed batch only (once): go on
            # until a job finds nothing left.
            if not final or not msg.get("batches"):
                return msg
            continue
        how = "killed" if msg.get("event") == "killed" else "failed by an injected fault"
        conductor.record("info", "runner", "job_over", {"job": job, "how": msg.get("event"), **msg})
        then = "retrying" if final else "the next job goes on"
        echo(f"{label} {how} ({', '.join(msg.get('faults', []))}); {then}")
    if final:
        raise HarnessError(
            f"no job run ended by itself with nothing left after the last round in {attempts} attempts: "
            "a fault that fires on every attempt (times=null) keeps the schedule from finishing"
        )
    return msg
