"""Reading a source in another Python process, as Spark does.

Spark plans partitions on the driver, pickles them, and calls ``read`` in a
separate Python worker; after a restart everything runs in new processes.
:func:`read_elsewhere` starts ``python -m harness.conformance.source.crossproc``
with a given ``PYTHONHASHSEED`` (:func:`other_hash_seeds`, so ``hash()``-dependent row values or
set-ordered offsets show up), sends the source reference, its options and
the parent's pickled partitions, and gets back what that process saw: the
initial offset's JSON text, ``latestOffset`` texts, rows of each range as the
child plans them and rows of the parent's partitions read in the child.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.sources.loading import Ref

TIMEOUT_S = 120.0


def other_hash_seeds(count: int = 2) -> list[str]:
    """``count`` hash seeds different from this process's (if it has a fixed one)."""
    mine = os.environ.get("PYTHONHASHSEED")
    return [s for s in ("1", "2", "3") if s != mine][:count]


def _child_env(ref: Ref, hash_seed: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = hash_seed
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    for extra in (project, ref.root):
        if extra and extra not in paths:
            paths.append(extra)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def read_elsewhere(
    ref: Ref,
    options: dict[str, str],
    ranges: Sequence[tuple[Any, Any]],
    latest_starts: Sequence[Any],
    parent_partitions: Sequence[bytes | None],
    hash_seed: str,
    timeout_s: float = TIMEOUT_S,
) -> dict[str, Any]:
    """Run the reads in a child process. ``parent_partitions[i]`` is the
    cloudpickled partition list the parent planned for ``ranges[i]`` (``None``
    for simple readers). Returns the child's answer; ``{"error": text}`` when
    the child failed (the text is the child's traceback or stderr tail)."""
    request = {
        "ref": (ref.module, ref.attr),
        "options": options,
        "ranges": list(ranges),
        "latest_starts": list(latest_starts),
        "partitions": list(parent_partitions),
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "harness.conformance.source.crossproc"],
            input=pickle.dumps(request),
            capture_output=True,
            timeout=timeout_s,
            env=_child_env(ref, hash_seed),
        )
    except subprocess.TimeoutExpired:
        return {"error": f"the reading process did not finish within {timeout_s:.0f} s"}
    try:
        answer = pickle.loads(proc.stdout)
    except Exception:
        return {"error": f"the reading process failed (exit {proc.returncode}): {proc.stderr.decode()[-1500:]}"}
    return answer if isinstance(answer, dict) else {"error": f"unexpected answer {answer!r}"}


def _serve(request: dict[str, Any]) -> dict[str, Any]:
    import importlib

    from pyspark import cloudpickle

    from harness.conformance.source.offsets import dumps
    from harness.sources.reader import SourceUnderTest

    module, attr = request["ref"]
    source = SourceUnderTest(getattr(importlib.import_module(module), attr), request["options"])
    reader = source.reader()
    answer: dict[str, Any] = {"hash_seed": os.environ.get("PYTHONHASHSEED"), "kind": reader.kind}
    answer["initial_json"] = dumps(reader.initial())
    answer["latest_json"] = [dumps(reader.latest(s)) for s in request["latest_starts"]]
    answer["rows"] = [reader.rows(a, b) for a, b in request["ranges"]]
    parent_rows: list[Counter[Any] | None] = []
    for blob in request["partitions"]:
        if blob is None:
            parent_rows.append(None)
            continue
        total: Counter[Any] = Counter()
        for part in cloudpickle.loads(blob):
            total.update(reader.read_partition(part))
        parent_rows.append(total)
    answer["parent_partition_rows"] = parent_rows
    reader.stop()
    return answer


def main() -> int:
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # user code printing must not corrupt the answer
    try:
        answer = _serve(pickle.loads(sys.stdin.buffer.read()))
    except Exception as exc:
        answer = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    try:
        payload = pickle.dumps(answer)
    except Exception as exc:  # rows holding unpicklable values
        payload = pickle.dumps({"error": f"cannot send the rows back: {exc}"})
    out.write(payload)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
