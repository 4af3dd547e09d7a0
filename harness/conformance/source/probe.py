"""The observations the source checks judge, gathered once per source.

A probe plays a short, fixed story against fresh reader instances, feeding
data through the external context, and records every offset it is given:

1. reader ``r1``: ``i = initialOffset()``; the context adds data;
   ``b = latest(i)`` twice; reader ``r2`` (no new data): ``initialOffset()``
   and ``latest(i)`` again;
2. the context adds more data; ``c = r1.latest(b)``; reader ``r3`` (a restart
   from the checkpointed offset ``b``): ``latest(b)``; then ``ADVANCES`` more
   rounds of data and ``r1.latest``, reaching ``d``, and reader ``r4`` (a restart
   from ``d``, far enough in that a reader counting from its own start falls
   behind): ``latest(d)``;
3. a fresh reader reads ``[i,b)``, ``[b,c)``, ``[i,c)``, ``[b,b)``; another
   fresh reader reads ``[i,c)`` again; a child process with another hash seed
   reads ``[i,c)`` itself and from the parent's pickled partitions;
4. with the limit of ``getDefaultReadLimit()`` (when it is not
   ``ReadAllAvailable``, the only case where Spark passes a limit):
   ``latest(o, limit)`` from ``i`` until it reaches ``d``;
5. (a reader implementing ``SupportsTriggerAvailableNow``) an ``availableNow`` job: a fresh reader's
   ``latest(i)`` says what is available; reader ``r5`` gets ``prepareForTriggerAvailableNow()`` and walks
   ``latest(o, limit)`` from ``i`` until it stops (the job's target); the context adds data, as if it
   arrived during the job; ``r5.latest(target, limit)`` once more.

A step that raises stores the exception; every check needing that step
reports it (a connector that raises is a finding, not a kit error).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.conformance.source.crossproc import other_hash_seeds, read_elsewhere
from harness.conformance.source.offsets import dumps
from harness.errors import Observed
from harness.sources.contexts import SourceContext, feeds_data
from harness.sources.loading import Ref
from harness.sources.reader import Reader, Rows, SourceUnderTest
from scenarios.readlimits import ReadAllAvailable, ReadLimit

T = TypeVar("T")
MAX_ADMISSION_STEPS = 200
#: latestOffset calls (each after the context added data) between ``c`` and the restart from ``d``.
ADVANCES = 5


class StepFailed(Observed):
    """A probe step raised; ``step`` names the method, ``cause`` is the connector's exception."""

    def __init__(self, step: str, cause: BaseException) -> None:
        super().__init__(f"{step} raised {type(cause).__name__}: {cause}")
        self.step = step
        self.cause = cause


def step(name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Memoise a probe step; a raised exception is stored and re-raised as :class:`StepFailed`."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def run(self: SourceProbe) -> T:
            if name not in self._done:
                try:
                    self._done[name] = ("ok", fn(self))
                except StepFailed as exc:
                    self._done[name] = ("err", exc)
                except Exception as exc:
                    self._done[name] = ("err", StepFailed(name, exc))
            kind, value = self._done[name]
            if kind == "err":
                raise value
            return value  # type: ignore[no-any-return]

        return run

    return wrap


@dataclass
class Offsets:
    i: Any
    b: Any
    b_again: Any
    i2: Any
    b2: Any
    c: Any
    c_restart: Any
    d: Any = None
    d_restart: Any = None
    seen: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Admission:
    limit: ReadLimit
    chosen: str
    steps: list[Any]
    reached: bool


@dataclass
class AvailableNow:
    """An ``availableNow`` job: ``available`` (a fresh reader's ``latest(initial)`` when it starts), ``steps``
    (``initial``, then each ``latest`` after ``prepareForTriggerAvailableNow`` until it stopped), ``after``
    (``latest(target)`` once data arrived during the job) and ``newer`` (a fresh reader's ``latest(target)``)."""

    initial: Any
    available: Any
    steps: list[Any]
    after: Any
    newer: Any

    @property
    def target(self) -> Any:
        return self.steps[-1]


class SourceProbe:
    """Lazily gathered observations of one source (see the module docstring)."""

    def __init__(self, source: SourceUnderTest, ref: Ref, ctx: SourceContext, batch_rows: int = 30) -> None:
        self.source, self.ref, self.ctx, self.batch_rows = source, ref, ctx, batch_rows
        self.options = {**{str(k): str(v) for k, v in ctx.options().items()}, **source.options}
        self.source = SourceUnderTest(source.source_cls, self.options)
        self.feeds_data = feeds_data(ctx)
        self._done: dict[str, tuple[str, Any]] = {}
        self._readers: list[Reader] = []

    def reader(self) -> Reader:
        r = self.source.reader()
        self._readers.append(r)
        return r

    @property
    def kind(self) -> str:
        return self.first_reader().kind

    @step("creating the reader (DataSource(options).streamReader / simpleStreamReader)")
    def first_reader(self) -> Reader:
        return self.reader()

    @step("the offset story (initialOffset / latestOffset with fresh readers)")
    def offsets(self) -> Offsets:
        r1 = self.first_reader()
        i = r1.initial()
        self.ctx.add_data(self.batch_rows)
        b = r1.latest(i)
        b_again = r1.latest(i)
        r2 = self.reader()
        i2, b2 = r2.initial(), r2.latest(i)
        self.ctx.add_data(self.batch_rows)
        c = r1.latest(b)
        c_restart = self.reader().latest(b)
        d = c
        for _ in range(ADVANCES):
            self.ctx.add_data(self.batch_rows)
            d = r1.latest(d)
        d_restart = self.reader().latest(d)
        seen = [
            ("initialOffset()", i),
            ("latestOffset(initial) after adding data", b),
            ("latestOffset(initial) again, no new data", b_again),
            ("initialOffset() of a second reader", i2),
            ("latestOffset(initial) of a second reader", b2),
            ("latestOffset(b) after adding more data", c),
            ("latestOffset(b) of a reader restarted from offset b", c_restart),
            (f"latestOffset after {ADVANCES} more advances (d)", d),
            ("latestOffset(d) of a reader restarted from offset d", d_restart),
        ]
        return Offsets(i, b, b_again, i2, b2, c, c_restart, d, d_restart, seen)

    @step("reading ranges (partitions + read, or readBetweenOffsets)")
    def ranges(self) -> dict[str, Rows]:
        o = self.offsets()
        r = self.reader()
        out = {"i_b": r.rows(o.i, o.b), "b_c": r.rows(o.b, o.c), "i_c": r.rows(o.i, o.c), "b_b": r.rows(o.b, o.b)}
        out["i_d"] = r.rows(o.i, o.d)
        out["i_c_again"] = self.reader().rows(o.i, o.c)
        return out

    @step("reading [initial, latest) in other processes")
    def elsewhere(self) -> list[dict[str, Any]]:
        """Answers of child processes with different hash seeds (two: a set- or
        hash-ordered result agrees with the parent's by chance far less often)."""
        from pyspark import cloudpickle

        o = self.offsets()
        dumps: Callable[[Any], bytes] = cloudpickle.dumps  # pyspark's vendored cloudpickle has no annotations
        blob = dumps(self.reader().partitions(o.i, o.c)) if self.kind == "stream" else None
        answers = []
        for seed in other_hash_seeds():
            answer = read_elsewhere(self.ref, self.options, [(o.i, o.c)], [o.i, o.b], [blob], seed)
            if "error" in answer:
                raise RuntimeError(answer["error"])
            answers.append(answer)
        return answers

    @step("simple reader: read(start) compared with readBetweenOffsets")
    def simple_reads(self) -> list[tuple[Any, Any, Rows, Rows]]:
        o = self.offsets()
        out = []
        for start in (o.i, o.b):
            rows, end = self.reader().simple_read(start)
            out.append((start, end, rows, self.reader().rows(start, end)))
        return out

    @step("admission control (latestOffset with a read limit)")
    def admission(self) -> Admission | None:
        o = self.offsets()
        r = self.reader()
        if not r.supports_limits():
            return None
        default = r.default_limit()
        if isinstance(default, ReadAllAvailable):
            return None  # Spark passes this source no limit but ReadAllAvailable
        limit: ReadLimit = default
        chosen = f"{default!r} from getDefaultReadLimit()"
        steps = _walk(r, o.i, limit, until=o.d)
        return Admission(limit, chosen, steps, _same(steps[-1], o.d))

    @step("an availableNow job (prepareForTriggerAvailableNow, then latestOffset to its target)")
    def available_now(self) -> AvailableNow | None:
        r = self.reader()
        if not r.supports_available_now():
            return None
        self.offsets()  # the story's data is in first, as a job would find it
        i = r.initial()
        available = self.reader().latest(i)
        r.prepare_available_now()
        limit = r.default_limit()
        steps = _walk(r, i, limit)
        self.ctx.add_data(self.batch_rows)  # data arriving while the job runs
        return AvailableNow(i, available, steps, r.latest(steps[-1], limit), self.reader().latest(steps[-1]))

    def admission_rows(self, adm: Admission) -> list[Rows]:
        r = self.reader()
        return [r.rows(a, b) for a, b in zip(adm.steps, adm.steps[1:], strict=False)]

    def close(self) -> None:
        for r in self._readers:
            r.stop()
        self.ctx.close()


def _walk(r: Reader, start: Any, limit: ReadLimit, until: Any = None) -> list[Any]:
    """``start``, then each ``r.latest(o, limit)`` until it stops moving (or reaches ``until``), at most
    :data:`MAX_ADMISSION_STEPS` calls: the batches a query plans under ``limit``."""
    steps, cur = [start], start
    for _ in range(MAX_ADMISSION_STEPS):
        nxt = r.latest(cur, limit)
        if _same(nxt, cur):
            break
        steps.append(nxt)
        cur = nxt
        if until is not None and _same(cur, until):
            break
    return steps


def _same(a: Any, b: Any) -> bool:
    return bool(a == b and dumps(a) == dumps(b))


def total_rows(rows: Rows) -> int:
    return sum(Counter(rows).values())
