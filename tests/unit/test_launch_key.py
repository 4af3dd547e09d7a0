"""What makes a pool's live driver unfit for a run: the environment it keeps from its start (launch_key)."""

from __future__ import annotations

from harness.engine.driverproc import DRIVER_OWN, launch_key

BASE = {"PATH": "/usr/bin", "PYTHONPATH": "/repo", "HARNESS_CACHE_DIR": "/c", "SPARK_LOCAL_IP": "127.0.0.1"}


def test_an_import_root_a_broker_or_a_working_directory_changes_it() -> None:
    key = launch_key(BASE, "/work")
    assert launch_key({**BASE, "PYTHONPATH": "/repo:/project/connectors"}, "/work") != key
    assert launch_key({**BASE, "HARNESS_KAFKA_BOOTSTRAP": "127.0.0.1:9092"}, "/work") != key
    assert launch_key({**BASE, "PYSPARK_PYTHON": "/venv/bin/python"}, "/work") != key
    assert launch_key({**BASE, "JAVA_HOME": "/jdk25"}, "/work") != key
    assert launch_key(BASE, "/project") != key
    assert launch_key({k: v for k, v in BASE.items() if k != "HARNESS_CACHE_DIR"}, "/work") != key


def test_what_a_driver_does_not_keep_leaves_it_alone() -> None:
    key = launch_key(BASE, "/work")
    assert launch_key({**BASE, "PYTEST_CURRENT_TEST": "tests/test_x.py::test_y (call)"}, "/work") == key
    for own in sorted(DRIVER_OWN):  # set by a driver for itself, also when a process drives a run in itself
        assert launch_key({**BASE, own: "/runs/example-0001"}, "/work") == key, own
    assert launch_key({**BASE, "PYTHONPATH": "/repo::/repo"}, "/work") == key  # the same entries
    assert launch_key({**BASE, "PYTHONPATH": "/b:/a"}, "/work") == launch_key({**BASE, "PYTHONPATH": "/a:/b"}, "/work")
    assert launch_key({**BASE, "PATH": "/opt/bin:/usr/bin", "TMPDIR": "/tmp/x"}, "/work") == key
    assert launch_key(dict(reversed(list(BASE.items()))), "/work") == key  # order does not count
