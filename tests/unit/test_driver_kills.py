"""Which process groups a driver kill takes down, and when ``kill_python`` takes the Python alone (pure logic:
``os.killpg`` is replaced; the real kills are in tests/integration/test_kill_python.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from fault_injectors import kills


class Killed(Exception):
    """Stands for this process dying: the kill functions do not return after their own group's SIGKILL."""


@pytest.fixture
def killed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    groups: list[int] = []

    def killpg(group: int, sig: int) -> None:
        assert sig == signal.SIGKILL
        groups.append(group)
        if group == os.getpgid(0):
            raise Killed

    monkeypatch.setattr(kills.os, "killpg", killpg)
    monkeypatch.delenv(kills.DRIVER_GROUPS_ENV, raising=False)
    monkeypatch.delenv(kills.DRIVER_PGID_ENV, raising=False)
    return groups


def test_groups_of_a_hosted_driver_python_first_host_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = tmp_path / "driver-groups"
    listing.write_text("301 302 300\n")  # active driver, spare, host
    monkeypatch.setenv(kills.DRIVER_GROUPS_ENV, str(listing))
    monkeypatch.setenv(kills.DRIVER_PGID_ENV, "300")  # a Python worker of the host's JVM
    assert kills.driver_groups() == [301, 302, 300]
    listing.unlink()  # the pool is gone: the environment's group is all that is known
    assert kills.driver_groups() == [300]
    monkeypatch.setenv(kills.DRIVER_PGID_ENV, "not-a-pid")
    assert kills.driver_groups() == []


def test_kill_python_in_the_hosted_driver_kills_its_own_group_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed: list[int]
) -> None:
    own = os.getpgid(0)
    listing = tmp_path / "driver-groups"
    listing.write_text(f"{own} 302 300\n")
    monkeypatch.setenv(kills.DRIVER_GROUPS_ENV, str(listing))
    monkeypatch.setenv(kills.DRIVER_PGID_ENV, str(own))
    monkeypatch.setattr(kills.os, "getpid", lambda: own)  # this process leads its group, as a driver does
    with pytest.raises(Killed):
        kills.kill_driver_python()
    assert killed == [own]


def test_kill_python_elsewhere_kills_the_whole_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed: list[int]
) -> None:
    own = os.getpgid(0)
    monkeypatch.setenv(kills.DRIVER_PGID_ENV, "300")
    with pytest.raises(Killed):  # no hosted JVM: the driver's group, then this process's
        kills.kill_driver_python()
    assert killed == [300, own]
    killed.clear()
    listing = tmp_path / "driver-groups"
    listing.write_text("301 302 300\n")
    monkeypatch.setenv(kills.DRIVER_GROUPS_ENV, str(listing))
    with pytest.raises(Killed):  # a Python worker of a hosted JVM: every listed group, host last, then its own
        kills.kill_driver_python()
    assert killed == [301, 302, 300, own]
