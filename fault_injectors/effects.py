"""Which steps of a sink's code may change something outside the driver, and where kills can differ.

A step (:mod:`fault_injectors.steps`) is described as ``file.py:LINE function -> callee``.
:func:`is_effect` classifies it from the **callee alone**, so a census file written
before this module existed is classified the same way as a new one:

- **Effect-free**: the pure standard-library modules of :data:`PURE_MODULES` (a C
  module's leading ``_`` ignored: ``_json``, ``_hashlib``), the built-ins except
  :data:`_EFFECT_BUILTINS` (``print``, ``open``, ``exec``, ...), and pyspark: ``Row``
  fields, types, columns, functions, ``DataFrame`` transformations and *read* actions
  (``collect``, ``count``, ``toPandas``, ``toLocalIterator``, ...) change nothing
  that outlives the driver.
- **Effects**: pyspark calls that write (:data:`_PYSPARK_WRITES`: ``DataFrameWriter``
  and ``DataFrameWriterV2`` terminal methods, ``MergeIntoWriter.merge``,
  ``DataStreamWriter.start``, ``SparkSession.sql``, which may be DML,
  ``DataFrame.foreach``/``foreachPartition``, RDD ``save*``/``foreach*``; every
  ``Catalog`` method but its reads; everything on a ``StreamingQuery``), and
  **anything else**: database drivers (``sqlite3``, ``psycopg``), ``os``, ``io``,
  ``socket``, ``subprocess``, ``shutil``, ``logging``, py4j (a direct JVM call can do
  anything), third-party libraries, the harness. Unknown means effect.

A kill after an effect-free step is the same experiment as a kill after the step
before it, so the distinct kill points of one call (:func:`boundaries`) are: the
step just before the first effect (if the effect is not step 1), and each effect
step. A call without effects has one kill point, its last step. A step that
returns while an effect call it is nested in is still running (``executemany``
pulling rows from the user's generator, each insert committed) is a kill point too,
since how much of that effect happened differs; these come last when kills are
sampled (:func:`inside_effects`). The census records each step's nesting depth for
that; calls recorded without depths count as not nested.

Not seen (as for steps): a callable the user's code hands to a library, which the
library calls (``functools.reduce(conn.execute, ...)``), is not a step of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Standard-library modules whose functions change nothing outside the process.
PURE_MODULES = frozenset(
    {"json", "re", "math", "cmath", "datetime", "decimal", "fractions", "numbers", "collections", "itertools"}
    | {"functools", "operator", "copy", "dataclasses", "enum", "typing", "types", "string", "struct", "base64"}
    | {"binascii", "hashlib", "hmac", "random", "uuid", "time", "zlib", "bisect", "heapq", "statistics"}
    | {"textwrap", "abc", "array", "unicodedata", "calendar", "zoneinfo", "ipaddress", "secrets"}
)
#: Built-ins that reach outside the process (or run arbitrary code the census cannot see into).
_EFFECT_BUILTINS = frozenset({"print", "input", "open", "exec", "eval", "breakpoint", "__import__"})
#: ``Class.method`` of pyspark (any module: classic and Connect alike) that writes outside the driver.
_PYSPARK_WRITES = frozenset(
    {f"DataFrameWriter.{m}" for m in ("save", "saveAsTable", "insertInto", "parquet", "json", "csv", "orc")}
    | {f"DataFrameWriter.{m}" for m in ("text", "jdbc", "xml")}
    | {f"DataFrameWriterV2.{m}" for m in ("append", "create", "replace", "createOrReplace", "overwrite")}
    | {"DataFrameWriterV2.overwritePartitions", "MergeIntoWriter.merge", "DataStreamWriter.start"}
    | {"DataStreamWriter.toTable", "SparkSession.sql", "DataFrame.foreach", "DataFrame.foreachPartition"}
    | {"DataFrame.checkpoint"}
)
#: ``Catalog`` methods that only read.
_CATALOG_READS = ("list", "get", "current", "isCached", "tableExists", "databaseExists", "functionExists")


def callee_of(description: str) -> str:
    """The callee of a step description (``a.py:3 f -> sqlite3.Connection.commit`` -> ``sqlite3.Connection.commit``);
    a bare callee name is returned as is."""
    return description.rsplit(" -> ", 1)[-1]


def is_effect(description: str) -> bool:
    """Whether the step (a description or a bare callee name) may change something outside the driver."""
    callee = callee_of(description)
    module, _, rest = callee.partition(".")
    if module == "pyspark":
        return _pyspark_effect(rest.split("."))
    if module == "builtins":
        return rest in _EFFECT_BUILTINS
    return module.lstrip("_") not in PURE_MODULES


def _pyspark_effect(parts: list[str]) -> bool:
    """``parts``: the callee after ``pyspark.``, e.g. ``['sql', 'readwriter', 'DataFrameWriter', 'parquet']``."""
    if len(parts) < 2:
        return False
    owner, method = parts[-2], parts[-1]
    if f"{owner}.{method}" in _PYSPARK_WRITES:
        return True
    if owner == "RDD":
        return method.startswith(("save", "foreach"))
    if owner == "Catalog":
        return not method.startswith(_CATALOG_READS)
    return owner.startswith("StreamingQuery")


def _marks(steps: Sequence[str], depths: Sequence[int]) -> tuple[list[bool], list[bool]]:
    """Per step: whether it is an effect, and whether it returned inside a running effect call."""
    own = [is_effect(d) for d in steps]
    inside = [False] * len(steps)
    # Backwards, a step's enclosing step is met before the steps nested in it: keep the chain of enclosing
    # steps (depth, effect-or-inside-one) and pop what is not an ancestor of the step at hand.
    chain: list[tuple[int, bool]] = []
    for i in range(len(steps) - 1, -1, -1):
        depth = depths[i] if i < len(depths) else 0
        while chain and chain[-1][0] >= depth:
            chain.pop()
        inside[i] = bool(chain) and chain[-1][1]
        chain.append((depth, own[i] or inside[i]))
    return own, inside


def boundaries(steps: Sequence[str], depths: Sequence[int] = ()) -> list[int]:
    """The distinct kill points of one call, as 1-based step numbers in order: the step before the first
    effect (when that is not step 1), every effect, and every step that returned inside a running effect
    call (``depths[i]``: how many steps were still running when step ``i + 1`` returned; empty or short
    means not nested). The last step when there is none of those; nothing for a call without steps."""
    own, inside = _marks(steps, depths)
    marked = [k for k, (e, i) in enumerate(zip(own, inside, strict=True), 1) if e or i]
    if not marked:
        return [len(steps)] if steps else []
    return ([marked[0] - 1] if marked[0] > 1 else []) + marked


def inside_effects(steps: Sequence[str], depths: Sequence[int] = ()) -> set[int]:
    """The effect-free steps that returned inside a running effect call: kill points that each see a part
    of one effect (how many rows an ``executemany`` had written), tried after the other boundaries."""
    own, inside = _marks(steps, depths)
    return {k for k, (e, i) in enumerate(zip(own, inside, strict=True), 1) if i and not e}
