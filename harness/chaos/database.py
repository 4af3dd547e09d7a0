"""The example database a campaign shares with its other shards and its reruns (``--database``).

Hypothesis saves each failing example it shrank under a key and replays every saved example first, in the
reuse phase, on the next run with the same key. :func:`campaign_key` makes that key from what decides how an
example's choices become a schedule (the scenario, the profile's shape, nemesis, master, volume), so every
shard and every block of one campaign shares its failures, and a failure of another scenario is never
replayed as this one's.

``--database`` takes a directory (Hypothesis's ``DirectoryBasedExampleDatabase``, safe for concurrent
writers), a Redis URL ``redis://HOST:PORT/DB`` (``hypothesis[redis]``'s ``RedisExampleDatabase``, for shards
running at the same time on different machines), or ``module:ATTRIBUTE`` naming any ``ExampleDatabase`` or a
function of no arguments returning one (e.g. a function of yours returning Hypothesis's
``GitHubArtifactDatabase(owner, repo)``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from harness.chaos.profiles import Profile
from harness.errors import UsageError


class DatabaseError(UsageError, ValueError):
    """``--database`` names nothing usable; the message says what was tried and what to give."""


def open_database(where: str | Path) -> ExampleDatabase:
    """The database ``where`` names (see the module docstring); a Redis server is pinged first, so an
    unreachable one is a :class:`DatabaseError` now, not a failure in the middle of a campaign."""
    text = str(where)
    if text.startswith(("redis://", "rediss://", "unix://")):
        return _redis(text)
    if ":" in text and not Path(text).exists() and not text.startswith(("/", ".")):
        return _imported(text)
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise DatabaseError(f"--database {text}: is a file; give a directory (created if missing) or redis://...")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(f"--database {text}: cannot create the directory ({exc.strerror})") from None
    return DirectoryBasedExampleDatabase(str(path))


def _redis(url: str) -> ExampleDatabase:
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise DatabaseError(
            f"--database {url}: the redis client is not installed; pip install 'hypothesis[redis]'"
        ) from None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30)
    except ValueError as exc:
        raise DatabaseError(f"--database {url}: not a Redis URL ({exc}); give redis://HOST:PORT/DB") from None
    try:
        client.ping()
    except redis.RedisError as exc:
        raise DatabaseError(
            f"--database {url}: no Redis server answers there ({exc}); start one or fix the URL"
        ) from None
    return RedisExampleDatabase(client)


def _imported(ref: str) -> ExampleDatabase:
    module, _, attribute = ref.partition(":")
    try:
        found: Any = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise DatabaseError(f"--database {ref}: cannot import it ({exc}); give a directory, redis://... or "
                            "module:ATTRIBUTE naming an ExampleDatabase") from None  # fmt: skip
    try:
        database = found() if callable(found) and not isinstance(found, ExampleDatabase) else found
    except TypeError as exc:
        raise DatabaseError(
            f"--database {ref}: cannot call it without arguments ({exc}); name a function of no arguments that "
            "returns the database (e.g. one returning GitHubArtifactDatabase(owner, repo))"
        ) from None
    if not isinstance(database, ExampleDatabase):
        raise DatabaseError(f"--database {ref}: is a {type(database).__name__}, not a Hypothesis ExampleDatabase")
    return database


def campaign_key(scenario: str, profile: Profile, nemesis: tuple[str, ...], master: str, steps: bool = False) -> bytes:
    """The database key of a campaign's examples: equal for every shard, block, seed and example count of one
    campaign shape, different when the same choices would draw another schedule (the nemesis list in its
    order: the strategy samples from it as given; ``steps``: whether ``sink.step`` faults are drawn)."""
    shape = {
        "scenario": scenario,
        "max_rounds": profile.max_rounds,
        "max_faults": profile.max_faults,
        "hard_kill_ratio": profile.hard_kill_ratio,
        "timed_kills": profile.timed_kills,
        "volume": profile.volume,
        "batch_rows": profile.batch_rows,
        "nemesis": list(nemesis),
        "master": master,
        "steps": steps,
    }
    if profile.triggers or profile.rounds is not None:  # only then: earlier campaigns keep their keys
        shape |= {"triggers": list(profile.triggers), "rounds": profile.rounds}
    return b"harness-chaos:" + hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:32].encode()


def saved_failures(database: ExampleDatabase, key: bytes) -> int:
    """How many failing examples ``database`` holds under ``key`` (they are replayed first)."""
    return sum(1 for _ in database.fetch(key))


def describe_database(where: str | Path) -> str:
    """``where`` as shown in reports and rerun commands (a Redis URL without its password)."""
    text = str(where)
    if "@" in text and text.startswith(("redis://", "rediss://")):
        scheme, _, rest = text.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return text
