from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import timedelta

import pytest

from scenarios.rowgen import PROVENANCE, ConfigError, SourceConfig


def test_rows_are_pure_functions_of_seed_partition_offset() -> None:
    a, b = SourceConfig(seed=7), SourceConfig(seed=7)
    assert list(a.rows(1, 10, 60)) == list(b.rows(1, 10, 60))
    assert list(a.rows(0, 0, 50)) != list(SourceConfig(seed=8).rows(0, 0, 50))


def test_rows_identical_in_another_process() -> None:
    code = (
        "from scenarios.rowgen import SourceConfig; "
        "print(repr(list(SourceConfig(seed=3, key_skew=1.2).rows(1, 5, 25))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == repr(list(SourceConfig(seed=3, key_skew=1.2).rows(1, 5, 25)))


def test_rows_carry_provenance_and_rows_per_offset() -> None:
    cfg = SourceConfig(seed=1, rows_per_offset=3)
    rows = list(cfg.rows(1, 4, 6))
    assert PROVENANCE == ("partition", "offset", "seq")
    assert [(r[0], r[1], r[2]) for r in rows] == [(1, o, s) for o in (4, 5) for s in range(3)]
    assert cfg.row(1, 5, 2) == rows[-1]


def test_ranges_compose_without_gaps_or_overlap() -> None:
    cfg = SourceConfig(seed=11)
    assert list(cfg.rows(0, 0, 30)) + list(cfg.rows(0, 30, 70)) == list(cfg.rows(0, 0, 70))


def test_key_skew_concentrates_keys() -> None:
    uniform = Counter(r[3] for r in SourceConfig(seed=5, num_keys=10).rows(0, 0, 5000))
    skewed = Counter(r[3] for r in SourceConfig(seed=5, num_keys=10, key_skew=1.5).rows(0, 0, 5000))
    assert set(uniform) == set(range(10))
    assert uniform[0] < 700
    assert skewed[0] > 2000
    assert skewed.most_common(1)[0][0] == 0


def test_disorder_and_lateness_stay_within_bounds() -> None:
    base = SourceConfig(seed=2)
    cfg = SourceConfig(seed=2, disorder_ms=300, late_fraction=0.2, lateness_ms=10_000)
    late = 0
    for o in range(500):
        nominal = base.row(0, o)[5]
        t = cfg.row(0, o)[5]
        delta = nominal - t
        assert timedelta(0) <= delta <= timedelta(milliseconds=10_300)
        late += delta >= timedelta(milliseconds=10_000)
    assert 60 < late < 140  # ~20% of 500


def test_event_times_are_utc_and_monotone_without_disorder() -> None:
    times = [r[5] for r in SourceConfig(seed=4).rows(0, 0, 20)]
    assert times == sorted(times)
    assert all(t.tzinfo is not None and t.utcoffset() == timedelta(0) for t in times)


def test_options_round_trip() -> None:
    cfg = SourceConfig(seed=9, partitions=3, rows_per_offset=2, key_skew=0.5, disorder_ms=10)
    assert SourceConfig.from_options(cfg.to_options()) == cfg
    assert SourceConfig.from_options({"SEED": "9", "unrelated": "x"}).seed == 9


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"seed": "abc"}, "seed='abc'"),
        ({"partitions": "0"}, "partitions must be >= 1"),
        ({"late_fraction": "2"}, "late_fraction"),
    ],
)
def test_bad_options_are_named(options: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        SourceConfig.from_options(options)
