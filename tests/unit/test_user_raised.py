"""The subject's own exception in what Spark reported, on texts measured from real Spark 4.2 runs (no Spark here):
a pip-installed connector's frame, a value PySpark refused (no frame of the subject's code: the method that
returned it is named), compiled library frames, injected faults and exception chains."""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.conformance.raised import method_frame, source_raised
from harness.verdict.raised import (
    find_raised,
    is_subject_file,
    pipeline_message,
    rejected_value,
    spark_words,
    subject_roots,
)

pytestmark = pytest.mark.unit
PYSPARK = "/venv/lib/python3.11/site-packages/pyspark"
RUNNER = f"{PYSPARK}/sql/streaming/python_streaming_source_runner.py"
STDLIB = sysconfig.get_paths()["stdlib"]
HEAD = "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: "


def read_failed(frames: str, last: str) -> str:
    """Spark's error for a read that failed in the Python worker (simplified traceback, as Spark 4.2 sends it)."""
    return (
        f"{HEAD}[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):\n"
        f"{frames}{last}\n SQLSTATE: 38000 SQLSTATE: XXKST\n=== Streaming Query ===\nIdentifier: [id = 1]\n"
    )


def site_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A connector installed with pip: ``<site-packages>/acme_feed/source.py``, importable."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "acme_feed").mkdir(parents=True)
    (site / "acme_feed" / "__init__.py").write_text("")
    (site / "acme_feed" / "source.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    return site / "acme_feed" / "source.py"


def test_a_pip_installed_connectors_frame_is_the_subjects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = site_package(tmp_path, monkeypatch)
    text = read_failed(
        f'  File "{src}", line 74, in read\n    yield decode(record)\n'
        f'  File "{src}", line 54, in decode\n    body = record["payload"]\n',
        "KeyError: 'payload'",
    )
    assert find_raised([text]) is None  # under site-packages: a library, unless it is the subject's package
    roots = subject_roots("acme_feed.source")
    assert roots == (str(src.parent.resolve()),)
    raised = find_raised([text], roots)
    assert raised is not None and raised.exception == "KeyError: 'payload'"
    assert (raised.frame, raised.outer) == (f"{src}:54 in decode", f"{src}:74 in read")
    assert source_raised([text], "acme_feed.source") == raised


def test_user_code_under_pythons_prefix_but_outside_its_library_is_the_subjects() -> None:
    """A system Python's prefix (``/usr``, ``/usr/local``) also holds projects (``/usr/src/app``)."""
    assert is_subject_file(f"{sys.base_prefix}/src/app/feed.py")
    assert not is_subject_file(f"{STDLIB}/json/encoder.py") and not is_subject_file(f"{PYSPARK}/worker.py")
    assert not is_subject_file("pyarrow/error.pxi")  # a Cython frame: relative, but a library's


class Reader:
    def latestOffset(self, start: dict[str, int], limit: object) -> dict[str, object]:
        return {}

    def read(self, partition: object) -> object:
        return iter(())


def test_an_offset_json_dumps_refuses_names_latestOffset_and_where_it_is_defined() -> None:
    """Measured: a stand-in API's ``Decimal`` returned by ``latestOffset``; the traceback holds only PySpark's
    runner and the standard library, ending at runner line 281 in the report the issue quotes."""
    text = (
        f"{HEAD}[PYTHON_STREAMING_DATA_SOURCE_RUNTIME_ERROR] Failed when Python streaming data source perform "
        "latestOffset: Traceback (most recent call last):\n"
        f'  File "{RUNNER}", line 281, in main\n    latest_offset_admission_control_func(reader, infile, outfile)\n'
        f'  File "{RUNNER}", line 193, in latest_offset_admission_control_func\n    write_with_length(...)\n'
        f'  File "{STDLIB}/json/encoder.py", line 180, in default\n    raise TypeError(...)\n'
        "TypeError: Object of type Decimal is not JSON serializable\n SQLSTATE: 38000\n"
    )
    assert find_raised([text]) is None
    raised = source_raised([text], __name__, Reader)
    assert raised is not None and raised.returned and raised.method == "latestOffset"
    line = Reader.latestOffset.__code__.co_firstlineno
    assert raised.frame == f"{__file__}:{line} in Reader.latestOffset"
    assert raised.describe() == (
        "TypeError: Object of type Decimal is not JSON serializable, raised by PySpark on what latestOffset returned "
        f"(Reader.latestOffset at tests/unit/test_user_raised.py:{line})"
    )


def test_a_row_of_the_wrong_shape_names_read() -> None:
    """Measured: ``worker.py`` line 3622 first (PySpark keeps its frames when none is the user's)."""
    mismatch = read_failed(
        f'  File "{PYSPARK}/worker.py", line 3622, in main\n    process()\n'
        f'  File "{PYSPARK}/sql/worker/plan_data_source_read.py", line 131, in records_to_arrow_batches\n    raise\n',
        "pyspark.errors.exceptions.base.PySparkRuntimeError: [DATA_SOURCE_RETURN_SCHEMA_MISMATCH] Return schema "
        "mismatch in the result from 'read' method. Expected: 3 columns, Found: 2 columns.",
    )
    arrow = read_failed(
        '  File "pyarrow/table.pxi", line 3539, in pyarrow.lib.RecordBatch.from_arrays\n'
        '  File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status\n',
        "pyarrow.lib.ArrowInvalid: Could not convert '0' with type str: tried to convert to int64",
    )
    for text, exception in (
        (mismatch, "PySparkRuntimeError: [DATA_SOURCE_RETURN_SCHEMA_MISMATCH] Return schema mismatch"),
        (arrow, "ArrowInvalid: Could not convert '0' with type str"),
    ):
        assert find_raised([text]) is None, text
        raised = source_raised([text], __name__, Reader)
        assert raised is not None and raised.method == "read" and raised.exception.startswith(exception)
        assert raised.frame == method_frame(Reader, "read") and "in Reader.read" in raised.frame


def test_no_traceback_or_a_workers_dying_words_in_a_log_are_nobodys_rejected_value() -> None:
    broken_pipe = (
        "Traceback (most recent call last):\n"
        f'  File "{PYSPARK}/worker.py", line 3622, in main\n    process()\n'
        "BrokenPipeError: [Errno 32] Broken pipe\n"
    )
    assert source_raised(["the query did not finish within 300 s", broken_pipe], __name__, Reader) is None
    assert rejected_value(["no traceback here"]) is None


def test_an_injected_fault_is_never_the_subjects_even_through_its_frames() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/sink.py", line 12, in write_batch\n    cur.execute(sql)\n'
        '  File "/work/x/fault_injectors/steps.py", line 90, in trace\n    fire()\n'
        "fault_injectors.kills.InjectedFault: injected fault k1: raise at sink.step of batch 2\n"
    )
    assert find_raised([text]) is None


def test_in_a_chain_the_link_that_propagated_is_named() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/feed.py", line 10, in head\n    return resp["cursor"]\n'
        "KeyError: 'cursor'\n\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/feed.py", line 20, in latestOffset\n    raise FeedError("no cursor") from e\n'
        "feed.FeedError: no cursor\n"
    )
    raised = find_raised([text])
    assert raised is not None and (raised.exception, raised.frame) == (
        "feed.FeedError: no cursor",
        "/home/me/feed.py:20 in latestOffset",
    )


def test_spark_words_drop_the_harness_prefix_the_query_ids_and_the_traceback() -> None:
    error = f"the streaming query failed loudly in driver-2: {read_failed('', 'KeyError: 1')}"
    assert spark_words(error) == "[PYTHON_EXCEPTION] An exception was thrown from the Python worker"


def _harness_code(name: str, code: str) -> Callable[..., Any]:
    """Function ``name`` of ``code``, compiled as a file of the harness's own packages."""
    here = Path(__file__).resolve().parents[2] / "harness" / "engine" / "catch.py"
    scope: dict[str, Any] = {}
    exec(compile(code, str(here), "exec"), scope)
    fn: Callable[..., Any] = scope[name]
    return fn


#: Catches ``f``'s exception in a frame of the harness (as the driver does).
CATCH = _harness_code("catch", "def catch(f):\n    try:\n        f()\n    except Exception as e:\n        return e\n")
HARNESS_BUG = _harness_code("bug", "def bug():\n    raise RuntimeError('a harness bug')\n")


def test_a_live_exception_is_the_pipelines_only_through_its_own_frame() -> None:
    from fault_injectors.kills import InjectedFault

    def transform() -> None:
        {"a": 1}["missing_col"]

    def injected() -> None:
        raise InjectedFault("injected fault k1: raise at sink.commit.before of batch 0")

    message = pipeline_message(CATCH(transform), "before its query started")
    assert message is not None and message.startswith("the pipeline's own code raised before its query started: ")
    raised = find_raised([message])
    assert raised is not None and raised.exception == "KeyError: 'missing_col'"
    assert raised.frame == f"{__file__}:{transform.__code__.co_firstlineno + 1} in transform"
    assert pipeline_message(CATCH(injected), "before its query started") is None
    assert pipeline_message(CATCH(HARNESS_BUG), "before its query started") is None
