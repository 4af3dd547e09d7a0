"""Results of conformance checks: one :class:`CheckOutcome` per check id, and a
:class:`ConformanceReport` that renders as text or JSON and maps to an exit code.

Statuses: ``pass``; ``fail`` (a violation of the contract the connector must
meet, or of the guarantee it declares, or a measured consequence); ``warn`` (the
check ran and found behaviour that only breaks a *stronger* guarantee than the
declared one, e.g. duplicates from a sink declared at-least-once); ``note`` (a
habit that correct connectors may have, e.g. an offset that depends on how often
it was asked, reported with its consequence as measured, never a failure);
``skip`` (not applicable, or nothing to compare, with the reason); ``error`` (the
kit could not run the check: an infrastructure problem, never a pass).
Exit codes: 0 conforming (notes allowed), 1 at least one ``fail``, 2 no
``fail`` but at least one ``error`` (could not run).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from harness.errors import Observed

Status = Literal["pass", "fail", "warn", "note", "skip", "error"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "warn", "note", "skip", "error")
MAX_DETAILS = 8


@dataclass(frozen=True)
class CheckOutcome:
    """The outcome of one check.

    ``summary`` is one line; ``details`` are the evidence (capped when
    rendered); ``fix`` says what the connector author should change.
    ``observed`` names anomaly kinds the check saw (``duplicate``, ``lost``,
    ``uncommitted-visible``, ...) so a guarantee can be derived from them.
    ``rows``: the disagreeing rows, the oracle's beside the sink's
    (:func:`harness.verdict.rowdiff.row_diff`), or ``""``."""

    id: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()
    fix: str = ""
    observed: tuple[str, ...] = ()
    duration_s: float = 0.0
    rows: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"check {self.id}: status must be one of {STATUSES}, got {self.status!r}")


class CheckFailed(Observed):
    """Raised inside a check to end it with ``fail`` (message = summary)."""

    def __init__(self, summary: str, details: Sequence[str] = (), fix: str = "", observed: Sequence[str] = ()):
        super().__init__(summary)
        self.summary = summary
        self.details = tuple(details)
        self.fix = fix
        self.observed = tuple(observed)


class CheckSkipped(Observed):
    """Raised inside a check to end it with ``skip`` (message = the reason)."""


def run_check(check_id: str, body: Callable[[], CheckOutcome | str]) -> CheckOutcome:
    """Run ``body``: a returned string is a ``pass`` summary, a returned result
    is kept under ``check_id`` (the registry's id wins over the one a check wrote);
    :class:`CheckFailed` / :class:`CheckSkipped` become ``fail`` /
    ``skip``; any other exception is the *connector's* code failing inside the
    check, reported as ``fail`` naming the exception (never a pass)."""
    t0 = time.monotonic()
    try:
        out = body()
        result = replace(out, id=check_id) if isinstance(out, CheckOutcome) else CheckOutcome(check_id, "pass", out)
    except CheckFailed as exc:
        result = CheckOutcome(check_id, "fail", exc.summary, exc.details, exc.fix, exc.observed)
    except CheckSkipped as exc:
        result = CheckOutcome(check_id, "skip", str(exc))
    except Exception as exc:  # the connector raised: that is a finding, with its type and message
        result = CheckOutcome(
            check_id,
            "fail",
            f"the connector raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "),
            fix="a conformant connector must not raise here; see the traceback by running the method yourself",
        )
    return replace(result, duration_s=round(time.monotonic() - t0, 3))


@dataclass
class ConformanceReport:
    """All checks of one connector. ``subject`` names it (``path.py:Class``);
    ``kind`` is ``source`` or ``sink``; ``guarantee`` (sinks) holds the declared
    and measured guarantee."""

    subject: str
    kind: str
    checks: list[CheckOutcome] = field(default_factory=list)
    guarantee: dict[str, Any] | None = None
    duration_s: float = 0.0
    #: Sinks: what ``crash-anywhere`` tried (census size, the steps a fault followed), empty if it did not run.
    steps: dict[str, Any] = field(default_factory=dict)

    def by_id(self, check_id: str) -> CheckOutcome:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(f"no check {check_id!r} in this report; ids: {[c.id for c in self.checks]}")

    @property
    def failed(self) -> list[CheckOutcome]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def exit_code(self) -> int:
        if self.failed:
            return 1
        return 2 if any(c.status == "error" for c in self.checks) else 0

    @property
    def conforming(self) -> bool:
        return self.exit_code == 0

    def summary_line(self) -> str:
        counts = {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}
        tally = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        if self.failed:
            head = f"{self.kind} NOT conforming: {', '.join(c.id for c in self.failed)} failed"
        elif self.exit_code == 2:
            head = f"{self.kind} conformance could not be decided (a check could not run)"
        else:
            head = f"{self.kind} conforms"
        return f"{head} ({tally}; {self.subject})"

    def render_text(self) -> str:
        """Summary line, one line per check, then evidence and fixes of every non-pass check."""
        lines = [self.summary_line()]
        width = max((len(c.id) for c in self.checks), default=10)
        marks = {"pass": "ok  ", "fail": "FAIL", "warn": "warn", "note": "note", "skip": "skip", "error": "ERR "}
        for c in self.checks:
            lines.append(f"  {marks[c.status]} {c.id:<{width}}  {c.summary}")
            if c.status in ("pass", "skip"):
                continue
            for d in c.details[:MAX_DETAILS]:
                lines.append(f"         {' ' * width}  - {d}")
            if len(c.details) > MAX_DETAILS:
                lines.append(f"         {' ' * width}  ... and {len(c.details) - MAX_DETAILS} more")
            if c.fix:
                lines.append(f"         {' ' * width}  fix: {c.fix}")
            lines += [f"         {line}" for line in c.rows.splitlines()]
        if self.guarantee:
            g = self.guarantee
            lines.append(f"guarantee: declared {g.get('declared')}, measured {g.get('measured')}")
            if g.get("evidence"):
                lines.append(f"  evidence: {g['evidence']}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "kind": self.kind,
            "conforming": self.conforming,
            "exit_code": self.exit_code,
            "summary": self.summary_line(),
            "checks": [asdict(c) for c in self.checks],
            "guarantee": self.guarantee,
            "steps": self.steps,
            "duration_s": round(self.duration_s, 2),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, default=str)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ConformanceReport:
        """The report :meth:`to_json` wrote (its derived fields are recomputed, not read)."""
        checks = [
            CheckOutcome(**{**c, "details": tuple(c.get("details", ())), "observed": tuple(c.get("observed", ()))})
            for c in doc["checks"]
        ]
        return cls(
            doc["subject"], doc["kind"], checks, doc.get("guarantee"), doc.get("duration_s", 0.0), doc.get("steps", {})
        )
