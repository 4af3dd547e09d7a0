from __future__ import annotations

import pytest

from fault_injectors.plan import FaultRule
from harness.engine.spec import RunSpec
from harness.spark.connect import inner_master, is_connect, parse_remote


def test_remote_local_wraps_the_master_and_external_servers_are_refused() -> None:
    assert parse_remote(None, "local[2]") == "local[2]"
    assert parse_remote("local", "local[2]") == "connect:local[2]"
    assert parse_remote("local", "connect:local[2]") == "connect:local[2]"
    assert parse_remote("local", "local-cluster[2,1,1024]") == "connect:local-cluster[2,1,1024]"
    with pytest.raises(ValueError, match="only 'local' is supported"):
        parse_remote("sc://host:15002", "local[2]")
    assert is_connect("connect:local[2]") and not is_connect("local[2]")
    assert inner_master("connect:local[4]") == "local[4]" and inner_master("local[4]") == "local[4]"


def test_executor_kills_need_executors_behind_a_connect_server_too() -> None:
    rule = FaultRule("e1", "sink.write.mid", 0, 0, 1, action="kill_executor")
    with pytest.raises(ValueError, match="needs executors separate from the driver"):
        RunSpec("file_sink_stateless", 1, extra_faults=(rule,), master="connect:local[2]")
    RunSpec("file_sink_stateless", 1, extra_faults=(rule,), master="connect:local-cluster[2,1,1024]")


def test_a_listener_is_ours_only_if_our_process_holds_the_socket() -> None:
    import os
    import socket

    from harness.spark.connect import _owns_listener

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert _owns_listener(os.getpid(), port)
        assert not _owns_listener(os.getpid(), port + 1 if port < 65535 else port - 1)
    assert not _owns_listener(os.getpid(), port)  # closed: nobody listens
