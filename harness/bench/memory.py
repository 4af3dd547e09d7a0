"""Peak memory of a bench: summed RSS of a process tree, sampled in a thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path


class MemorySampler(threading.Thread):
    """Peak summed RSS of this process, its descendants and every process whose
    run token starts with ``token_prefix`` (killed drivers' orphans included)."""

    def __init__(self, token_prefix: str, interval_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.needle = f"HARNESS_RUN_TOKEN={token_prefix}".encode()
        self.interval_s = interval_s
        self.peak_mb = 0.0
        self._halt = threading.Event()

    def _sample(self) -> float:
        me, parents, rss, tagged = os.getpid(), {}, {}, set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat_line = (entry / "stat").read_text()
                fields = stat_line[stat_line.rindex(")") + 2 :].split()
                parents[int(entry.name)] = int(fields[1])
                rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
                if any(e.startswith(self.needle) for e in (entry / "environ").read_bytes().split(b"\0")):
                    tagged.add(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
        total = 0
        for pid, size in rss.items():
            p, hops = pid, 0
            while p not in (me, 0, 1) and p in parents and hops < 64:
                p, hops = parents[p], hops + 1
            if p == me or pid in tagged:
                total += size
        return total / 2**20

    def run(self) -> None:
        while not self._halt.wait(self.interval_s):
            self.peak_mb = max(self.peak_mb, self._sample())

    def stop(self) -> float:
        self._halt.set()
        return self.peak_mb

    def reset(self) -> None:
        """Start a new peak (from the next sample on)."""
        self.peak_mb = 0.0

    def peak(self) -> float:
        """The peak since the start or the last :meth:`reset`, including a sample taken now (MB)."""
        self.peak_mb = max(self.peak_mb, self._sample())
        return self.peak_mb
