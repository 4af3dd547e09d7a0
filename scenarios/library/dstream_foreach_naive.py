"""The DStream application of :mod:`scenarios.library.dstream_foreach` with one bug: it appends every batch.

Purpose: the ``foreachRDD`` output most DStream applications start with. The function appends each batch's rows to
one file, ``rows.jsonl``.
Faults: as its correct twin (``dstream.batch.start``, ``dstream.batch.end``, ``sink.step`` inside the function).
Guarantee checked: at-least-once, as Spark documents output operations: a batch the checkpoint still holds as
pending after a restart runs again and is appended twice. Expected: duplicates, each named by its batch, batch time
and input file; a kill at ``dstream.batch.start`` (nothing written yet) leaves no anomaly.
"""

from __future__ import annotations

from functools import partial

from scenarios.dstream import dstream_scenario
from scenarios.library.dstream_foreach import append_batch, build, read_output, transform

SCENARIO = dstream_scenario(
    name="dstream_foreach_naive",
    summary="DStream textFileStream -> map/filter -> foreachRDD appending to one file (expected: duplicates)",
    guarantee="at-least-once",
    setup=partial(build, append_batch),
    transform=transform,
    read_output=read_output,
)
