"""Checkpoint nemesis: crash residue and storage faults applied to a stopped
query's checkpoint, to see how Spark copes when it restarts.

Each action takes the checkpoint directory, changes it on disk, and returns a
one-line description naming the file it damaged; it raises
:class:`NemesisError` when the checkpoint has nothing it can damage (e.g. no
middle commit to delete). The rule a restarted query must obey afterwards:
fail loudly with a clear error, or stay exactly-once — never silently lose
or duplicate (after :func:`reset_checkpoint` the query is a new one that reads
its source from its starting offsets, so rows delivered before it may come
again: :data:`REPLAYS_SOURCE`). What Spark does for each is in
``docs/nemesis.md``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from harness.errors import Observed
from harness.inspector.checkpoint import batch_ids


class NemesisError(Observed, RuntimeError):
    """The nemesis action cannot be applied to this checkpoint: it holds nothing to damage (what the run left,
    not a harness failure; a campaign discards such an example)."""


def _latest(ckpt: Path, log: str) -> Path:
    ids = batch_ids(ckpt / log)
    if not ids:
        raise NemesisError(f"{ckpt / log} has no batch files to damage")
    return ckpt / log / str(ids[-1])


def truncate_latest_offsets(ckpt: Path) -> str:
    """Cut the newest ``offsets/N`` in half (a torn write)."""
    path = _latest(ckpt, "offsets")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return f"truncated {path} from {len(data)} to {len(data) // 2} bytes"


def empty_latest_offsets(ckpt: Path) -> str:
    """Make the newest ``offsets/N`` an empty file."""
    path = _latest(ckpt, "offsets")
    path.write_bytes(b"")
    return f"emptied {path}"


def garbage_latest_offsets(ckpt: Path) -> str:
    """Replace the newest ``offsets/N`` with bytes that are not a log file."""
    path = _latest(ckpt, "offsets")
    path.write_bytes(b"\x00\xffnot an offset log\n")
    return f"replaced {path} with garbage"


def empty_latest_commit(ckpt: Path) -> str:
    """Make the newest ``commits/N`` an empty file."""
    path = _latest(ckpt, "commits")
    path.write_bytes(b"")
    return f"emptied {path}"


def delete_latest_commit(ckpt: Path) -> str:
    """Delete the newest ``commits/N`` (a crash just before it was written)."""
    path = _latest(ckpt, "commits")
    path.unlink()
    _drop_crc(path)
    return f"deleted {path} (batch {path.name} looks uncommitted)"


def delete_middle_commit(ckpt: Path) -> str:
    """Delete ``commits/K`` for a K strictly between the first and the last commit."""
    ids = batch_ids(ckpt / "commits")
    if len(ids) < 3:
        raise NemesisError(f"{ckpt / 'commits'} needs at least 3 commits to delete a middle one, has {len(ids)}")
    path = ckpt / "commits" / str(ids[len(ids) // 2])
    path.unlink()
    _drop_crc(path)
    return f"deleted middle commit {path}"


def remove_metadata(ckpt: Path) -> str:
    """Delete the checkpoint's ``metadata`` file (the query id)."""
    path = ckpt / "metadata"
    if not path.exists():
        raise NemesisError(f"{path} does not exist")
    path.unlink()
    _drop_crc(path)
    return f"deleted {path}"


def flip_offset_stale_crc(ckpt: Path) -> str:
    """Lower a digit of the newest committed ``offsets/N``, leaving a stale ``.crc``.

    Storage corruption Spark does not detect: it never verifies checksums."""
    committed = set(batch_ids(ckpt / "commits"))
    ids = [i for i in batch_ids(ckpt / "offsets") if i in committed]
    if not ids:
        raise NemesisError(f"{ckpt / 'offsets'} has no committed batch")
    path = ckpt / "offsets" / str(ids[-1])
    lines = path.read_text().split("\n")
    for i in range(2, len(lines)):
        m = re.search(r"[1-9]", lines[i])
        if m:
            digit = int(m.group()) - 1
            lines[i] = lines[i][: m.start()] + str(digit) + lines[i][m.end() :]
            path.write_text("\n".join(lines))
            return f"changed a digit of {path} line {i + 1} ({m.group()} -> {digit}); its .crc is now stale"
    raise NemesisError(f"{path} has no source offset digit to flip")


def rollback_latest_offsets(ckpt: Path) -> str:
    """Roll the newest ``offsets/N`` back to ``offsets/N-1``'s content, dropping ``commits/N``.

    A storage rollback: an older copy of the file is served."""
    ids = batch_ids(ckpt / "offsets")
    if len(ids) < 2:
        raise NemesisError(f"{ckpt / 'offsets'} needs 2 batches to roll back, has {len(ids)}")
    new, old = ckpt / "offsets" / str(ids[-1]), ckpt / "offsets" / str(ids[-2])
    new.write_bytes(old.read_bytes())
    commit = ckpt / "commits" / str(ids[-1])
    if commit.exists():
        commit.unlink()
        _drop_crc(commit)
    return f"rolled {new} back to the content of {old} and removed {commit}"


def reset_checkpoint(ckpt: Path) -> str:
    """Empty the checkpoint directory: the query restarted on a fresh checkpoint at the same place.

    An operator's usual way out of a checkpoint Spark refuses or a job that will not recover. The next query is a
    new one (a new id, batches from 0) that reads its source from its starting offsets, so rows delivered before
    may come again (:data:`REPLAYS_SOURCE`); what the sink does with batch ids it has seen is the question."""
    entries = sorted(ckpt.iterdir()) if ckpt.is_dir() else []
    if not entries:
        raise NemesisError(f"{ckpt} is empty already: no query has started from it")
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return f"emptied {ckpt} ({', '.join(e.name for e in entries)}): the query starts on a fresh checkpoint"


def _drop_crc(path: Path) -> None:
    crc = path.with_name(f".{path.name}.crc")
    if crc.exists():
        os.unlink(crc)


NEMESES: dict[str, Callable[[Path], str]] = {
    f.__name__: f
    for f in (
        truncate_latest_offsets,
        empty_latest_offsets,
        garbage_latest_offsets,
        empty_latest_commit,
        delete_latest_commit,
        delete_middle_commit,
        remove_metadata,
        flip_offset_stale_crc,
        rollback_latest_offsets,
        reset_checkpoint,
    )
}

#: The nemeses after which the query reads its source again from the start: rows it delivered before may be
#: delivered once more per such nemesis (:class:`~harness.verdict.checker.AllowedReplay`), none may be lost.
REPLAYS_SOURCE: frozenset[str] = frozenset({"reset_checkpoint"})


def checkpoint_nemeses() -> dict[str, Callable[[Path], str]]:
    """Every checkpoint nemesis by name: the built-ins (:data:`NEMESES`), then the installed plugins'
    (:mod:`fault_injectors.plugins`)."""
    from fault_injectors.plugins import plugin_nemeses

    return {**NEMESES, **plugin_nemeses()}


def apply_nemesis(name: str, checkpoint: str | os.PathLike[str]) -> str:
    """Apply the nemesis called ``name``; ``KeyError`` lists the known names."""
    known = checkpoint_nemeses()
    if name not in known:
        raise KeyError(f"unknown nemesis {name!r}; known: {', '.join(known)}")
    return known[name](Path(checkpoint))
