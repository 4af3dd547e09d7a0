"""Certify's DStream rows: ``foreachRDD`` outputs and ``saveAsTextFiles``, measured under SIGKILLs with
``getOrCreate`` recovery (:mod:`scenarios.dstream`).

Each row kills once at ``dstream.batch.start`` of batch 0 (the batch's checkpoint written, its output not begun)
and once at ``dstream.batch.end`` of batch 1 (its output done, the checkpoint marking it done not written); the
``foreachRDD`` rows add kills after steps of the function (drawn from a census of the run's data). What Spark's
guide documents for each is in :mod:`.documented` (the Spark Streaming Programming Guide, "Semantics of output
operations"); ``docs/dstreams.md`` puts the same pipelines beside their Structured Streaming twins.
"""

from __future__ import annotations

from harness.conformance.certify.runs import Row

POINTS = ("dstream.batch.start", "dstream.batch.end")

DSTREAM_ROWS: tuple[Row, ...] = (
    Row("dstream:foreachRDD-naive", "dstream", "foreachRDD appending to one file", POINTS, "dstream_foreach_naive"),
    Row(
        "dstream:foreachRDD-idempotent",
        "dstream",
        "foreachRDD writing a file per batch time",
        POINTS,
        "dstream_foreach",
        steps=2,
    ),
    Row(
        "dstream:saveAsTextFiles",
        "dstream",
        "saveAsTextFiles (a directory per batch time)",
        POINTS,
        "dstream_save_text",
    ),
)
