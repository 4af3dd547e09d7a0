"""``harness setup``: fill the cache for the installed PySpark, and say what it fetched and how long it took.

For each built-in jar set (:data:`harness.spark.releases.BUILT_IN`) and the team's ``--packages``: present in
the cache (:func:`harness.spark.jars.is_complete`) -> nothing to do; else resolved with Ivy
(:mod:`harness.spark.ivy`) into a directory beside it and renamed into place, so an interrupted set-up never
leaves a set that looks complete. Then the driver's class-data archive (:mod:`harness.spark.cds_build`).
Offline, nothing is fetched: every missing set is named, with the command that fetches it. One set-up at a
time per cache (a lock file), so two test workers starting together resolve once.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SetupError
from harness.spark import ivy
from harness.spark.cache import cache_dir, setup_command
from harness.spark.cds import CDS_ENV
from harness.spark.jars import (
    PACKAGES,
    PACKAGES_ENV,
    SETS,
    coordinates,
    is_complete,
    set_dir,
    shipped_artifacts,
    write_stamp,
    write_unserved,
)
from harness.spark.releases import BUILT_IN, KAFKA_CONNECTOR, Release, Unserved, current


class SetupFailed(SetupError, RuntimeError):
    """Set-up could not complete: one line saying what is missing and what to do."""


@dataclass(frozen=True)
class Step:
    """One set's outcome: ``status`` is ``present``, ``fetched`` or ``unserved`` (no artifact for this Spark)."""

    name: str
    coordinates: tuple[str, ...]
    status: str
    jars: int = 0
    downloads: int = 0
    seconds: float = 0.0
    note: str = ""


def _sets(packages: Sequence[str]) -> list[str]:
    return [*BUILT_IN, *([PACKAGES] if packages else [])]


def _missing_offline(release: Release, names: list[str]) -> list[str]:
    out = []
    for name in names:
        try:
            coords = coordinates(name, release)
        except Unserved:
            continue
        if not is_complete(set_dir(name, release), coords):
            out.append(f"{name} ({', '.join(coords)})")
    return out


def fetch(
    *, packages: Sequence[str] = (), offline: bool = False, urls: Sequence[str] = (), echo: Callable[[str], None]
) -> list[Step]:
    """Make every set present for the installed PySpark; :class:`SetupFailed` with one line on any failure.
    ``packages`` is the team's ``--packages`` (given to this process as :data:`PACKAGES_ENV` too)."""
    import os

    release = current()
    if packages:
        os.environ[PACKAGES_ENV] = ",".join(packages)
    names = _sets(packages)
    if offline:
        missing = _missing_offline(release, names)
        if missing:
            extra = ("--packages", ",".join(packages)) if packages else ()
            raise SetupFailed(
                f"offline, and the cache {cache_dir()} lacks {'; '.join(missing)}: run `{setup_command(*extra)}` "
                "once with network access (or point HARNESS_CACHE_DIR at a cache that has them)"
            )
    registries = ivy.repositories(urls)
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one set-up per cache at a time
        return [_one(name, release, registries, root, offline, echo) for name in names]


def _one(
    name: str, release: Release, urls: Sequence[str], root: Path, offline: bool, echo: Callable[[str], None]
) -> Step:
    try:
        coords = coordinates(name, release)
    except Unserved as exc:
        echo(f"setup: {name:<16} not for PySpark {release.spark}: {exc}")
        return Step(name, (), "unserved", note=str(exc))
    target = set_dir(name, release)
    if is_complete(target, coords):
        return Step(name, coords, "present", jars=len(list(target.glob("*.jar"))))
    assert not offline  # fetch() refused before taking the lock
    echo(f"setup: {name:<16} resolving {', '.join(coords)} from {', '.join(urls)} ...")
    staged = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(staged, ignore_errors=True)
    exclude = shipped_artifacts() if SETS[name].for_spark else frozenset()
    resolved = coords
    try:
        try:
            got = ivy.resolve(
                coords, staged, cache=root / "ivy", urls=urls, exclude=exclude, log=root / "logs" / f"{name}.log"
            )
        except ivy.ResolveError as exc:
            if not (exc.not_served and name == KAFKA_CONNECTOR):
                raise
            got, resolved = _earlier_patch(name, release, staged, root, urls, exclude, exc)
            echo(f"setup: {name:<16} {coords[0]} is not served yet; {resolved[0]} (same Spark line) instead")
    except ivy.ResolveError as exc:
        shutil.rmtree(staged, ignore_errors=True)
        if not (exc.not_served and name in BUILT_IN):  # a team's own package must resolve
            raise SetupFailed(f"jar set {name}: {exc}") from None
        # A release the registries do not serve this set for yet (a new Spark before its connector): its
        # scenarios are refused in one line naming it; everything else is set up.
        shutil.rmtree(target, ignore_errors=True)
        write_unserved(target, coords, str(exc))
        echo(f"setup: {name:<16} not served for PySpark {release.spark}: {exc}")
        return Step(name, coords, "unserved", note=str(exc))
    write_stamp(staged, coords, [j.name for j in got.jars], got.seconds, resolved)
    shutil.rmtree(target, ignore_errors=True)
    staged.rename(target)
    step = Step(name, coords, "fetched", len(got.jars), got.downloads, got.seconds)
    echo(f"setup: {name:<16} {step.jars} jars ({step.downloads} downloaded) in {step.seconds:.1f} s")
    return step


def _earlier_patch(
    name: str,
    release: Release,
    staged: Path,
    root: Path,
    urls: Sequence[str],
    exclude: frozenset[str],
    first: ivy.ResolveError,
) -> tuple[ivy.Resolution, tuple[str, ...]]:
    """The set resolved for the newest earlier patch of ``release``'s line that a registry serves; ``first`` (the
    asked release's error) when none is."""
    for earlier in release.earlier_patches():
        coords = coordinates(name, earlier)
        shutil.rmtree(staged, ignore_errors=True)
        try:
            return ivy.resolve(
                coords, staged, cache=root / "ivy", urls=urls, exclude=exclude, log=root / "logs" / f"{name}.log"
            ), coords
        except ivy.ResolveError as exc:
            if not exc.not_served:
                raise
    raise first


def run_setup(
    *,
    packages: Sequence[str] = (),
    offline: bool = False,
    urls: Sequence[str] = (),
    cds: bool = True,
    echo: Callable[[str], None],
) -> int:
    """The ``setup`` command: 0 when everything is in place, 2 (after one line saying why) otherwise."""
    t0 = time.monotonic()
    release = current()
    echo(f"setup: PySpark {release.spark} (Scala {release.scala}); cache {cache_dir()}")
    try:
        steps = fetch(packages=packages, offline=offline, urls=urls, echo=echo)
    except (SetupFailed, ValueError) as exc:
        echo(f"harness: setup: {exc}")
        return 2
    present = [s.name for s in steps if s.status == "present"]
    if present:
        echo(f"setup: already in the cache: {', '.join(present)}")
    if cds and os.environ.get(CDS_ENV) == "0":  # drivers would not use it: building it costs ~40 s for nothing
        echo(f"cds: off ({CDS_ENV}=0): the driver class-data archive is not built")
    elif cds:
        from harness.spark.cds_build import ensure_archive

        ensure_archive(echo)  # never fails set-up: drivers start without it, only slower
    fetched = sum(1 for s in steps if s.status == "fetched")
    echo(f"setup: done in {time.monotonic() - t0:.1f} s ({fetched} set(s) fetched)")
    return 0
