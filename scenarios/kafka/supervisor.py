"""A supervisor for a Kafka broker the harness started: restarts it when it dies, as a service manager would.

A ``kill_broker`` fault (:mod:`fault_injectors.servers`) SIGKILLs the broker from inside a driver; the process
that owns the broker (the runner for a run's own broker, a campaign or a pytest module for a shared one) runs
this supervisor, a thread that notices the broker gone within :data:`POLL_S`, waits :data:`RESTART_DELAY_S`
and starts it again on the same ports and log dirs (:meth:`~scenarios.kafka.broker.KafkaBroker.start`), so
acknowledged records survive and clients reconnect to the same address. A broker that does not start is
tried :data:`ATTEMPTS` times, then given up (:attr:`BrokerSupervisor.broken` says why; the run then fails on
an unreachable broker, whose message names it). Each restart is logged in the broker's log.

Use it inside the broker's ``with`` block, so it stops before the broker does::

    with throwaway_kafka(workdir) as broker, supervised(broker):
        ...
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scenarios.base import ResourceUnavailable

if TYPE_CHECKING:
    from scenarios.kafka.broker import KafkaBroker

#: How often the supervisor looks at the broker.
POLL_S = 0.1
#: How long a killed broker stays down before the supervisor starts it again.
RESTART_DELAY_S = 1.0
#: Starts tried after one death before the broker is given up.
ATTEMPTS = 3


@dataclass(frozen=True)
class Restart:
    """One restart: how long the broker was down (seen dead -> serving again) and its start-up time."""

    down_s: float
    startup_s: float


class BrokerSupervisor:
    """Restarts ``broker`` whenever it is seen dead, after ``delay_s`` (see the module docstring)."""

    def __init__(self, broker: KafkaBroker, delay_s: float = RESTART_DELAY_S) -> None:
        self.broker, self.delay_s = broker, delay_s
        self.restarts: list[Restart] = []
        #: Why the broker was given up (it did not start again); ``None`` while it is fine.
        self.broken: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="kafka-broker-supervisor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop supervising (waits for a restart under way to finish); the broker is left as it is."""
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            if self.broker.pid is not None or self.broken is not None:
                continue
            seen = time.monotonic()
            self._log(f"broker exited; restarting it in {self.delay_s:.1f} s on the same ports and data")
            for attempt in range(1, ATTEMPTS + 1):
                if self._stop.wait(self.delay_s):
                    return
                try:
                    self.broker.kill()  # reap the dead incarnation and anything left in its group
                    self.broker.start()
                except ResourceUnavailable as exc:
                    self._log(f"restart {attempt}/{ATTEMPTS} failed: {exc}")
                    if attempt == ATTEMPTS:
                        self.broken = f"the Kafka broker did not start again after {ATTEMPTS} attempts: {exc}"
                    continue
                startup = self.broker.startup_s or 0.0
                self.restarts.append(Restart(round(time.monotonic() - seen, 2), round(startup, 2)))
                self._log(f"broker serving again (pid {self.broker.pid}) {time.monotonic() - seen:.1f} s after exiting")
                break

    def _log(self, message: str) -> None:
        with contextlib.suppress(OSError), open(self.broker.log_file, "a") as log:
            log.write(f"harness supervisor: {message}\n")


@contextlib.contextmanager
def supervised(broker: KafkaBroker, delay_s: float = RESTART_DELAY_S) -> Iterator[BrokerSupervisor]:
    """Supervise the running ``broker`` until the block ends (see the module docstring)."""
    supervisor = BrokerSupervisor(broker, delay_s)
    supervisor.start()
    try:
        yield supervisor
    finally:
        supervisor.close()
