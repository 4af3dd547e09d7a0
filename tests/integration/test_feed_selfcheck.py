"""Before blaming a pipeline, the harness checks its own step: input it published that the query never read ends
the run as no verdict naming what was missed, not as rows "lost" by the pipeline.

- A DStream batch whose published files its own observer never read names the batch and the files. Simulated
  with the trap that found it: a run directory holding ``:`` (the command line refuses one now; the engine's
  API takes it), under which Spark's file stream finds nothing.
- A Kafka round whose query never advanced on the topic the harness filled names the topic, the partitions and
  the offsets. Simulated with a source that subscribes the query to another topic than the one it fills."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec
from scenarios import get_scenario
from scenarios.kafka import KafkaTopic, client
from scenarios.sources import SourceRun

APP = "tests.integration.user_modules.orders_dstream:ORDERS"


#: The topic the query is subscribed to instead: it exists and stays empty.
ELSEWHERE_TOPIC = "harness-selfcheck-elsewhere"


@dataclasses.dataclass(frozen=True)
class ElsewhereTopic(KafkaTopic):
    """Fills the run's topic, but subscribes the query to another one: the harness's own step gone wrong."""

    def publish(self, run: SourceRun) -> dict[int, int]:
        produced = super().publish(run)
        bootstrap, _ = self.where(run)
        if not client.topic_exists(bootstrap, ELSEWHERE_TOPIC):
            client.create_topic(bootstrap, ELSEWHERE_TOPIC, 1)
        return produced

    def _reader_options(self, run: SourceRun) -> dict[str, Any]:
        return {**super()._reader_options(run), "subscribe": ELSEWHERE_TOPIC}


ELSEWHERE = dataclasses.replace(get_scenario("kafka_file_sink"), name="kafka_elsewhere", source=ElsewhereTopic())


def test_input_the_application_never_read_is_no_verdict_naming_batch_and_files(tmp_path: Path) -> None:
    outcome = run_spec(RunSpec(APP, 7, kills=0, rounds=1), tmp_path / "run:dir", echo=lambda m: None)
    assert outcome.verdict == "unknown" and outcome.exit_code == 2, (outcome.verdict, outcome.error)
    error = outcome.error or ""
    assert "DStream batch 0 " in error and "read 0 row(s), but the harness published p0000-" in error, error
    assert "the harness's feed, not the pipeline: no verdict" in error
    assert outcome.result is None or not outcome.result.anomalies  # nothing blamed on the pipeline


def test_a_kafka_topic_the_query_never_advanced_on_is_no_verdict_naming_the_offsets(tmp_path: Path) -> None:
    ref = f"{__name__}:ELSEWHERE"
    outcome = run_spec(RunSpec(ref, 3, kills=0, rounds=1), tmp_path / "run", echo=lambda m: None)
    assert outcome.verdict == "unknown" and outcome.exit_code == 2, (outcome.verdict, outcome.error)
    error = outcome.error or ""
    # Spark commits a batch of the empty topic it was subscribed to: nothing of the harness's topic.
    assert re.search(r"the round's query (committed no batch|ended at batch \d+) and never read input the harness "
                     r"published for it \(topic harness-", error), error  # fmt: skip
    assert "partition 0 at offset 0 of " in error and "not the pipeline: no verdict" in error, error
    assert outcome.result is None or not outcome.result.anomalies
