"""A fresh checkpoint (the nemesis ``reset_checkpoint``): the checkpoint emptied, the rows the tap held at that
moment allowed to come once more, every loss and every further copy still a violation."""

from __future__ import annotations

from pathlib import Path

import pytest

from fault_injectors.nemesis import NEMESES, REPLAYS_SOURCE, NemesisError, apply_nemesis
from harness.engine.between import (
    Applied,
    NemesisFailed,
    allowed_replays,
    apply_between_runs,
    inapplicable,
    is_inapplicable,
)
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.allowed import allow_losses, allow_replays, allowed_summary
from harness.verdict.checker import AllowedLoss, AllowedReplay, CheckResult, check_exactly_once
from scenarios import get_scenario
from scenarios.tap import advance, init_tap

pytestmark = pytest.mark.unit

SETTING = "a fresh checkpoint (nemesis reset_checkpoint: the query reads its source from the start)"


def _row(partition: int, offset: int) -> dict[str, object]:
    return {"partition": partition, "offset": offset, "seq": 0, "v": offset}


def test_rows_added_before_a_reset_may_come_once_more_per_reset() -> None:
    expected = [_row(p, o) for p in (0, 1) for o in range(10)]
    again = [r for r in expected if r["offset"] < 6]  # type: ignore[operator]
    result = check_exactly_once(expected, [*expected, *again])
    assert result.counts() == {"duplicate": 12}
    replays = [AllowedReplay(0, 6, SETTING), AllowedReplay(1, 6, SETTING)]
    allowed = allow_replays(result, replays)
    assert allowed.verdict == "exactly-once" and allowed.anomalies == []
    assert len(allowed.allowed) == 12 and allowed.allowed_replays == replays
    assert allowed_summary(allowed) == (
        f"12 row(s) delivered again as allowed by {SETTING} (partition 0 offsets [0, 6); partition 1 offsets [0, 6))"
    )
    # A row added after the reset, a third copy with one reset, another partition: still violations.
    later = allow_replays(result, [AllowedReplay(0, 4, SETTING), AllowedReplay(1, 6, SETTING)])
    assert later.verdict == "violated" and sorted(a.offset or 0 for a in later.anomalies) == [4, 5]
    third = check_exactly_once(expected, [*expected, *again, expected[0]])
    kept = allow_replays(third, replays)
    assert [(a.partition, a.offset, a.observed_count) for a in kept.anomalies] == [(0, 0, 3)]
    assert allow_replays(third, [*replays, AllowedReplay(0, 6, SETTING)]).verdict == "exactly-once"


def test_a_reset_never_allows_a_loss_and_leaves_unknown_alone() -> None:
    expected = [_row(0, o) for o in range(10)]
    lost = check_exactly_once(expected, expected[:7])
    assert allow_replays(lost, [AllowedReplay(0, 10, SETTING)]).verdict == "violated"
    unknown = CheckResult("unknown", error="unreadable")
    assert allow_replays(unknown, [AllowedReplay(0, 10, SETTING)]) is unknown
    assert allow_replays(lost, []) is lost
    # Both allowances in one result: each named in the summary.
    both = check_exactly_once(expected, [*expected[:7], expected[1], expected[9]])
    result = allow_replays(allow_losses(both, [AllowedLoss(0, 7, 9, "topic t", "failOnDataLoss=false")]),
                           [AllowedReplay(0, 5, SETTING)])  # fmt: skip
    assert result.verdict == "exactly-once", result.anomalies
    summary = allowed_summary(result)
    assert summary.startswith("2 row(s) lost as allowed by failOnDataLoss=false")
    assert "1 row(s) delivered again" in summary


def _checkpoint(root: Path) -> Path:
    ckpt = root / "checkpoint"
    for log in ("offsets", "commits", "sources/0"):
        (ckpt / log).mkdir(parents=True)
    (ckpt / "metadata").write_text('{"id":"q"}\n')
    (ckpt / "offsets" / "0").write_text('v1\n{}\n{"0": 5}')
    (ckpt / "offsets" / ".0.crc").write_bytes(b"crc")
    (ckpt / "commits" / "0").write_text('v1\n{"nextBatchWatermarkMs":0}')
    return ckpt


def test_reset_checkpoint_empties_the_directory_and_refuses_an_empty_one(tmp_path: Path) -> None:
    assert "reset_checkpoint" in NEMESES and set(NEMESES) >= REPLAYS_SOURCE
    ckpt = _checkpoint(tmp_path)
    said = apply_nemesis("reset_checkpoint", ckpt)
    assert ckpt.is_dir() and list(ckpt.iterdir()) == []
    assert said.startswith(f"emptied {ckpt} (commits, metadata, offsets, sources)")
    with pytest.raises(NemesisError, match=f"{ckpt} is empty already"):
        apply_nemesis("reset_checkpoint", ckpt)
    # A query that started and failed before its first batch left only its id: that is reset too.
    (ckpt / "metadata").write_text('{"id":"q"}\n')
    assert apply_nemesis("reset_checkpoint", ckpt).startswith(f"emptied {ckpt} (metadata)")
    assert list(ckpt.iterdir()) == []


def test_a_reset_allows_again_what_the_old_query_had_planned_to_read(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    paths.create()
    ckpt = _checkpoint(tmp_path / "run")
    (ckpt / "offsets" / "1").write_text('v1\n{}\n{"0": 9, "1": 4}')  # planned, never committed: delivered maybe
    init_tap(paths.tap, 2)
    advance(paths.tap, {0: 50, 1: 30})  # available, never read: not delivered before the reset
    spec = RunSpec("file_sink_stateless", seed=1)
    applied = apply_between_runs("reset_checkpoint", paths, spec, get_scenario("file_sink_stateless"))
    assert applied.replayed == ((0, 9), (1, 4)) and applied.target == "checkpoint"
    assert allowed_replays([applied]) == [AllowedReplay(0, 9, SETTING), AllowedReplay(1, 4, SETTING)]
    # Other checkpoint damage replays nothing; nor does a reset of a source whose rows carry no provenance.
    assert allowed_replays([Applied("remove_metadata", "deleted")]) == []
    ckpt = _checkpoint(tmp_path / "rate")
    rate = RunPaths(tmp_path / "rate")
    rate.create()
    assert apply_between_runs("reset_checkpoint", rate, spec, get_scenario("rate_continuous")).replayed == ()


def test_nothing_to_damage_is_told_apart_from_a_nemesis_that_cannot_run(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    paths.create()
    spec, scenario = RunSpec("file_sink_stateless", seed=1), get_scenario("file_sink_stateless")
    with pytest.raises(NemesisError, match="is empty already"):
        apply_between_runs("reset_checkpoint", paths, spec, scenario)
    assert is_inapplicable(inapplicable("reset_checkpoint", "x is empty already"))
    with pytest.raises(NemesisFailed, match="unknown nemesis 'age_out_records'"):
        apply_between_runs("age_out_records", paths, spec, scenario)
    ckpt = _checkpoint(tmp_path / "run")
    (ckpt / "offsets" / "0").write_bytes(b"\x00garbage")
    with pytest.raises(NemesisFailed, match="offset log is unreadable"):
        apply_between_runs("reset_checkpoint", paths, spec, scenario)
    assert not is_inapplicable("nemesis reset_checkpoint failed: the checkpoint's offset log is unreadable")
