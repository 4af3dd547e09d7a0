from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from scenarios.admission import admit, offsets_from_json, offsets_to_json, plan_batches
from scenarios.tap import TapError, advance, init_tap, read_tap


def test_admit_all_without_limit() -> None:
    assert admit({0: 3, 1: 0}, {0: 10, 1: 4}, None) == {0: 10, 1: 4}


def test_admit_shares_budget_fairly_and_never_goes_back() -> None:
    assert admit({0: 0, 1: 0}, {0: 100, 1: 100}, 40) == {0: 20, 1: 20}
    assert admit({0: 0, 1: 0}, {0: 5, 1: 100}, 40) == {0: 5, 1: 35}
    assert admit({0: 0, 1: 0}, {0: 100, 1: 100}, 41) == {0: 21, 1: 20}
    assert admit({0: 50, 1: 0}, {0: 10, 1: 0}, 10) == {0: 50, 1: 0}


def test_plan_batches_tile_the_range() -> None:
    batches = plan_batches({0: 0, 1: 0}, {0: 97, 1: 13}, 25)
    assert all(sum(e[p] - s[p] for p in e) <= 25 for s, e in batches)
    assert batches[0][0] == {0: 0, 1: 0}
    assert batches[-1][1] == {0: 97, 1: 13}
    for (_, end), (start, _) in itertools.pairwise(batches):
        assert end == start
    assert plan_batches({0: 5}, {0: 5}, 10) == []


def test_offsets_json_is_canonical() -> None:
    assert json.dumps(offsets_to_json({1: 4, 0: 2})) == json.dumps(offsets_to_json({0: 2, 1: 4}))
    assert offsets_from_json({"0": 2, "1": 4}) == {0: 2, 1: 4}
    with pytest.raises(ValueError):
        offsets_from_json({"x": 1})


def test_tap_advances_atomically_and_refuses_shrinking(tmp_path: Path) -> None:
    tap = tmp_path / "tap.json"
    init_tap(tap, 2)
    assert read_tap(tap) == {0: 0, 1: 0}
    assert advance(tap, {0: 5}) == {0: 5, 1: 0}
    assert advance(tap, {1: 3}) == {0: 5, 1: 3}
    with pytest.raises(TapError, match="cannot remove"):
        advance(tap, {0: -1})
    with pytest.raises(TapError, match="no partition"):
        advance(tap, {7: 1})
    assert [p.name for p in tmp_path.iterdir()] == ["tap.json"]


def test_tap_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TapError, match=str(tmp_path / "missing.json")):
        read_tap(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TapError, match=r"bad.json.*unreadable"):
        read_tap(bad)
