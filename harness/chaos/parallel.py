"""Parallel chaos campaigns: a campaign's examples split over worker processes.

Worker ``i`` of ``n`` runs :func:`harness.chaos.campaign.run_campaign` in its own
process, with its own driver pool (own JVMs), its own work directory
``<work_dir>/worker-<i>`` and the campaign seed :func:`worker_seed` ``(seed, i)``,
for its share of the examples. The merged result lists every example; its
failure (and bundle) is the one of the lowest-numbered worker that found one
(a violation stands even when another worker could not run; with none, a
worker's error makes the verdict ``unknown``). A worker's bundle
replays on its own (``harness replay``), whatever ``n`` was.

Pays off only with spare cores: each worker runs a JVM with ``local[2]``
tasks; on 2 cores two workers compete (see ``docs/chaos.md`` for the figure).
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from harness.chaos.campaign import run_campaign
from harness.chaos.profiles import Profile
from harness.chaos.result import CampaignResult
from harness.chaos.shards import block_seed

#: Campaign seed of worker ``index``: ``seed`` itself for worker 0. A worker runs its share as one Hypothesis run
#: of that seed (``one_run``), so the seeds of the workers never meet the seeds of a worker's own blocks.
worker_seed = block_seed


def shares(examples: int, workers: int) -> list[int]:
    """``examples`` split over at most ``workers`` workers, none empty, sizes differing by at most one."""
    n = max(1, min(workers, examples))
    return [examples // n + (1 if i < examples % n else 0) for i in range(n)]


def _worker(
    index: int, scenario: str, seed: int, profile: Profile, work_dir: Path, nemesis: tuple[str, ...], master: str
) -> CampaignResult:
    def echo(message: str) -> None:
        print(f"[w{index}] {message}", file=sys.stderr, flush=True)

    return run_campaign(scenario, seed_value=seed, profile=profile, work_dir=work_dir, echo=echo, nemesis=nemesis,
                        master=master, one_run=True)  # fmt: skip


def run_parallel_campaign(
    scenario: str,
    *,
    seed_value: int,
    profile: Profile,
    work_dir: Path,
    workers: int,
    nemesis: tuple[str, ...] = (),
    master: str = "local[2]",
) -> CampaignResult:
    """Run ``profile.examples`` examples over ``workers`` processes and merge the results
    (``duration_s`` is the wall time of the whole campaign)."""
    import time

    if workers < 1:
        raise ValueError("workers must be >= 1")
    started = time.monotonic()
    split = shares(profile.examples, workers)
    ctx = multiprocessing.get_context("spawn")  # no forked JVM handles or locks
    with ProcessPoolExecutor(max_workers=len(split), mp_context=ctx) as pool:
        futures = [
            pool.submit(
                _worker,
                i,
                scenario,
                worker_seed(seed_value, i),
                profile.with_examples(n),
                work_dir / f"worker-{i}",
                nemesis,
                master,
            )
            for i, n in enumerate(split)
        ]
        parts: list[CampaignResult | str] = []
        for i, future in enumerate(futures):
            try:
                parts.append(future.result())
            except Exception as exc:  # a crashed worker process, or an error it raised
                parts.append(f"worker {i} failed: {type(exc).__name__}: {exc}")
    guarantee = next((p.guarantee for p in parts if isinstance(p, CampaignResult)), "exactly-once")
    merged = CampaignResult(scenario, guarantee, seed_value, profile, workers=len(split), master=master)
    errors = []
    for part in parts:
        if isinstance(part, str):
            errors.append(part)
            continue
        merged.examples += part.examples
        merged.driver_starts += part.driver_starts
        if part.error:
            errors.append(part.error)
        if merged.failure is None and part.failure is not None:
            merged.failure, merged.failure_report, merged.bundle = part.failure, part.failure_report, part.bundle
            merged.fault_free = part.fault_free
    if errors:
        for error in errors:
            print(f"harness: {error.splitlines()[0]}", file=sys.stderr, flush=True)
        if merged.failure is None:  # a violation found by one worker stands even if another could not run
            merged.error = errors[0]
    merged.duration_s = time.monotonic() - started
    return merged
