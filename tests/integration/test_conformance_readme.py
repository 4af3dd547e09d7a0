"""The README example: a connector's own test suite runs the conformance kit in a few lines.

Here the "connector" is the repository's reference source and reference sink;
each class gets one test per check id (see ``harness.conformance.pytest_kit``).
"""

from harness.conformance import replayable_context
from harness.conformance.pytest_kit import SinkConformance, SourceConformance
from scenarios.replayable_source import ReplayableDataSource
from scenarios.sinks import TransactionalFileSink, read_visible


class TestReplayableSource(SourceConformance):
    source = ReplayableDataSource  # your DataSource subclass
    context = replayable_context  # feeds it test data: context(workdir) -> .options(), .add_data(rows), .close()
    kills = 1  # SIGKILLs in the end-to-end check (default 2)


class TestTransactionalSink(SinkConformance):
    sink = TransactionalFileSink  # a DataSource with a streamWriter, or a foreachBatch factory(path, **options)
    read_back = read_visible  # read_back(path) -> the rows the sink's readers see, as dicts
    guarantee = "exactly-once"
    faults = "soft"  # exceptions at the crash points (one JVM); "mixed" (default) and "hard" add SIGKILLs
    points = ("sink.write.mid", "sink.commit.after")
    steps = 2  # crash-anywhere: a fault after each of 2 sampled steps of the sink's own code (default 30)
