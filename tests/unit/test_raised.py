"""Finding the subject's own exception in what Spark reported (no Spark): the innermost frame of the
connector's code, past Spark's wrapper and the harness's frames; nothing when no frame is the subject's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.conformance.raised import find_raised, is_subject_file, subject_frame

pytestmark = pytest.mark.unit
RUNNER = "/venv/lib/python3.11/site-packages/pyspark/sql/streaming/python_streaming_source_runner.py"
STREAM_FAILED = f"""'run' failed in driver-1: the query failed: [STREAM_FAILED] Query [id = 1] terminated with exception
org.apache.spark.api.python.PythonException: [PYTHON_DATA_SOURCE_ERROR] Failed when Python streaming data source
perform latestOffset: Traceback (most recent call last):
  File "{RUNNER}", line 281, in main
    latest_offset_func(reader, infile, outfile)
  File "{RUNNER}", line 90, in latest_offset_func
    offset = reader.latestOffset(start, limit)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/me/feeds/poller.py", line 57, in latestOffset
    return {{"n": self.fetch_head()}}
  File "/home/me/feeds/poller.py", line 31, in fetch_head
    raise ConnectionError("feed returned HTTP 503")
ConnectionError: feed returned HTTP 503

\tat org.apache.spark.sql.execution.python.streaming.PythonStreamingSourceRunner.latestOffset(x.scala:1)
"""


def test_the_subjects_innermost_frame_is_named_past_sparks_runner() -> None:
    raised = find_raised(["nothing here", STREAM_FAILED])
    assert raised is not None
    assert (raised.type, raised.message) == ("ConnectionError", "feed returned HTTP 503")
    assert raised.frame == "/home/me/feeds/poller.py:31 in fetch_head"
    assert raised.outer == "/home/me/feeds/poller.py:57 in latestOffset"
    assert raised.describe().endswith("(called from /home/me/feeds/poller.py:57 in latestOffset)")


def test_a_traceback_of_only_library_and_harness_frames_is_not_the_subjects() -> None:
    harness = Path(__file__).resolve().parents[2] / "harness" / "engine" / "driver.py"
    text = f"""Traceback (most recent call last):
  File "{harness}", line 240, in main
    reply = driver.run()
  File "{RUNNER}", line 90, in latest_offset_func
    x
py4j.protocol.Py4JNetworkError: Answer from Java side is empty
"""
    assert find_raised([text]) is None
    assert not is_subject_file(str(harness)) and not is_subject_file(RUNNER)
    assert not is_subject_file(sys.modules["json"].__file__ or "") and not is_subject_file("<string>")
    assert is_subject_file("/home/me/feeds/poller.py")


def test_a_custom_exception_class_and_a_message_with_colons_are_kept_whole() -> None:
    text = 'Traceback (most recent call last):\n  File "/src/conn.py", line 3, in read\n    x\nconn.Bad: a: b\n'
    raised = find_raised([text])
    assert raised is not None and (raised.type, raised.message, raised.frame) == (
        "conn.Bad",
        "a: b",
        "/src/conn.py:3 in read",
    )


def test_subject_frame_of_a_live_exception_skips_the_standard_library(tmp_path: Path) -> None:
    import json

    try:
        json.loads("{not json")
    except ValueError as exc:
        frame = subject_frame(exc)
    assert (
        frame is not None
        and frame.startswith(f"{__file__}:")
        and frame.endswith("in test_subject_frame_of_a_live_exception_skips_the_standard_library")
    )
