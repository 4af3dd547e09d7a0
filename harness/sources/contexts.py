"""External contexts: how the kit feeds test data to a source under test.

A source that reads an external system (a queue, a directory, a database) can
only be tested if something puts data there. The connector author supplies a
*context factory*: a callable taking a fresh, empty work directory and
returning an object with

- ``options() -> Mapping[str, str]``: the options the source needs to read the
  context's data (merged under the user's own options);
- ``add_data(rows: int) -> None``: make about ``rows`` more rows available,
  durably, before returning (the context decides how to spread them);
- ``close() -> None``: release what it holds.

The factory must be importable (``module:function``) and deterministic: the
kit calls it again in other processes to read the same directory. A source
that needs no external system runs with :class:`NullContext` (no data ever
arrives, so the checks that need new data are skipped with that reason).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from scenarios.rowgen import SourceConfig
from scenarios.tap import advance, init_tap


@runtime_checkable
class SourceContext(Protocol):
    """What a context factory returns (see the module docstring)."""

    def options(self) -> Mapping[str, str]: ...

    def add_data(self, rows: int) -> None: ...

    def close(self) -> None: ...


#: ``factory(workdir) -> SourceContext``: called with a fresh work directory (the run's ``input/``),
#: again in other processes on the same directory, so it must be deterministic; the object it
#: returns has ``options()``, ``add_data(rows)`` and ``close()`` (:class:`SourceContext`).
ContextFactory = Callable[[Path], SourceContext]


class NullContext:
    """No external system: the source's options alone decide its data."""

    feeds_data = False

    def __init__(self, workdir: Path | None = None) -> None:
        self.workdir = workdir

    def options(self) -> dict[str, str]:
        return {}

    def add_data(self, rows: int) -> None:
        """Nothing can be added."""

    def close(self) -> None:
        """Nothing to release."""


class ReplayableContext:
    """The external context of the reference source (``scenarios.replayable_source``):
    a tap file whose per-partition end offsets :meth:`add_data` raises."""

    feeds_data = True

    def __init__(self, workdir: Path, seed: int = 7, partitions: int = 2, max_rows_per_batch: int | None = 15) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config = SourceConfig(seed=seed, partitions=partitions)
        self.tap = self.workdir / "tap.json"
        if not self.tap.exists():
            init_tap(self.tap, partitions)
        self.max_rows_per_batch = max_rows_per_batch

    def options(self) -> dict[str, str]:
        opts = {**self.config.to_options(), "tap": str(self.tap)}
        if self.max_rows_per_batch is not None:
            opts["max_rows_per_batch"] = str(self.max_rows_per_batch)
        return opts

    def add_data(self, rows: int) -> None:
        per = max(1, math.ceil(rows / self.config.partitions))
        advance(self.tap, {p: per for p in range(self.config.partitions)})

    def close(self) -> None:
        """The tap is a file in the work directory: nothing to release."""


def replayable_context(workdir: Path) -> ReplayableContext:
    """Context factory for ``scenarios.replayable_source:ReplayableDataSource``."""
    return ReplayableContext(workdir)


def feeds_data(ctx: object) -> bool:
    """Whether ``ctx.add_data`` makes new data appear (``feeds_data`` attribute, default True)."""
    return bool(getattr(ctx, "feeds_data", True))


def check_context(ctx: object, where: str) -> SourceContext:
    """``ctx`` if it has the three methods, else a one-line ``TypeError``."""
    missing = [m for m in ("options", "add_data", "close") if not callable(getattr(ctx, m, None))]
    if missing:
        raise TypeError(f"{where} returned {type(ctx).__name__}, which lacks {', '.join(missing)}(); see SourceContext")
    return ctx  # type: ignore[return-value]


def make_context(factory: ContextFactory | None, workdir: Path) -> SourceContext:
    """The context ``factory`` makes in ``workdir`` (a :class:`NullContext` without one), checked;
    ``ValueError`` in one line when the user's factory raises or returns something else."""
    workdir.mkdir(parents=True, exist_ok=True)
    if factory is None:
        return NullContext(workdir)
    name = f"context factory {getattr(factory, '__name__', factory)!r}"
    try:
        ctx = factory(workdir)
    except Exception as exc:  # the user's fixture: report it as bad input, in one line
        raise ValueError(f"{name} raised {type(exc).__name__}: {exc}") from exc
    return check_context(ctx, name)
