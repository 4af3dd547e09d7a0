"""``certify`` on a reduced subset (memory and console sinks: one real SIGKILL and
two, a refused restart and replayed output; Spark's Delta sink: a SIGKILL after batch 1's Delta
commit and before ``commits/1``, the replay skipped), its JSON and HTML, and the HTML
rendered in headless Chromium (skipped with the reason when Chromium is absent). The
Kafka sink's row (two SIGKILLs against a throw-away broker, duplicates) and the Kafka
source's are in the heavy tier (CI time: a broker and two kills each, 8-15 s a kill under
load); the source's kill plan, ``after_offsets_logged:0`` and ``after_commit_logged:1`` on
``kafka_file_sink``, runs in the default suite in ``test_kafka_scenarios.py``. Of the Delta rows only the Delta
sink's is in the default suite (about 40 s): its commit window is reached by certify's
own watcher and by nothing else in the suite (the MERGE pair's window runs in
``test_delta_scenarios.py``); the six ``foreachBatch`` and delta-rs rows run in the
heavy tier."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from scenarios.delta.log import read_log
from tests.ci_skips import missing
from tests.integration.clirun import CHROMIUM, chromium, harness, leftover_processes
from tests.integration.userenv import install_wheel, remove_heavy_parts

#: The rows measured here: two of Spark's own sinks without a scenario elsewhere and the Delta sink. The Kafka
#: sink's row is the heavy tier's (CI time, ~30 s with its broker): the default suite's Kafka sink duplicates are
#: test_triggers.py's (continuous processing into it).
ROWS = ("sink:memory", "sink:console", "sink:delta")
#: The Delta rows of the heavy tier: each ``foreachBatch`` writer with its one-bug twin, and delta-rs.
HEAVY_DELTA = {
    "sink:delta-foreachbatch-txn": "exactly-once",
    "sink:delta-foreachbatch-naive": "at-least-once",
    "sink:delta-merge-session-txn": "exactly-once",
    "sink:delta-merge-no-txn": "at-least-once",
    "sink:deltars-txn": "exactly-once",
    "sink:deltars-unchecked": "at-least-once",
}
#: Batch 1 in two Delta versions, as a twin's evidence names it (a duplicate row's batch, or a group over-counted).
TWICE = re.compile(r"batch 1 in version\(s\) \d+, \d+\)|written more than once: 1 \(versions \d+, \d+\)")


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("certify")
    rc, stdout, stderr = harness(
        "certify",
        "--only",
        ",".join(ROWS),
        "--json",
        str(out / "c.json"),
        "--html",
        str(out / "c.html"),
        "--keep",
        str(out / "runs"),
        timeout=1200,
    )
    doc = json.loads((out / "c.json").read_text()) if (out / "c.json").exists() else {}
    return {
        "rc": rc,
        "out": stdout,
        "err": stderr[-4000:],
        "doc": doc,
        "html": out / "c.html",
        "dir": out,
        "leftovers": leftover_processes(),
    }


def test_every_row_measured_and_flagged_where_it_differs(certified: dict[str, Any]) -> None:
    assert certified["rc"] == 0, certified["out"] + certified["err"]
    rows = {r["key"]: r for r in certified["doc"]["rows"]}
    assert set(rows) == set(ROWS)
    memory, console = rows["sink:memory"], rows["sink:console"]
    assert (memory["documented"], memory["measured"], memory["status"]) == ("none", "none", "agrees")
    assert "does not support recovering from checkpoint" in memory["evidence"]
    assert (console["documented"], console["measured"], console["status"]) == ("none", "at-least-once", "stronger")
    assert console["kills"] == 2 and "duplicate" in console["evidence"]
    assert "Programming Guide" in console["where"]
    lines = certified["out"].splitlines()
    assert lines[0].startswith(f"certify: {len(ROWS)} row(s)") and "1 flagged" in lines[0]
    assert any("console sink" in line and "FLAG stronger" in line for line in lines)
    assert certified["leftovers"] == []


def test_timelines_hold_batches_kills_and_restarts(certified: dict[str, Any]) -> None:
    tl = certified["doc"]["timelines"]["sink:console"]
    assert len(tl["batches"]) >= 2 and all(b["committed_ns"] for b in tl["batches"])
    assert [k["point"] for k in tl["kills"]] == ["after_offsets_logged", "sink.commit.after"]
    assert sum(d["ended"] == "killed" for d in tl["drivers"]) == 2
    assert tl["batches"][1]["anomalies"].get("duplicate", 0) > 0
    memory = certified["doc"]["timelines"]["sink:memory"]
    assert memory["failures"] and "recovering from checkpoint" in memory["failures"][0]["message"]


def _skip_unless_measured(row: dict[str, Any]) -> None:
    if str(row["error"]).startswith("skipped"):
        pytest.skip(missing(f"row {row['key']} not measured: {row['error']}"))


def _ledger(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "faults" / "ledger.jsonl").read_text().splitlines()]


def test_delta_sink_skips_the_batch_replayed_after_its_delta_commit(certified: dict[str, Any]) -> None:
    """The kill after batch 1's Delta commit (a txn of the query id and batch 1) and before commits/1 lost and
    duplicated nothing, as Delta's documentation states: the replay of batch 1 committed no second version."""
    row = {r["key"]: r for r in certified["doc"]["rows"]}["sink:delta"]
    _skip_unless_measured(row)
    assert (row["documented"], row["measured"], row["status"]) == ("exactly-once", "exactly-once", "agrees")
    assert "sink.write.mid@0, sink.commit.after@1" in row["evidence"] and "none lost" in row["evidence"], row
    assert "Delta table as a sink" in row["where"] and "exactly-once processing" in row["quote"]
    run = certified["dir"] / "runs" / "sink-delta"
    [kill] = [k for k in _ledger(run) if k["rule"]["point"] == "sink.commit.after"]
    assert kill["context"]["via"] == "delta-commit-watcher" and not kill["context"]["commit_logged"], kill
    query_id = json.loads((run / "checkpoint" / "metadata").read_text())["id"]
    holding = [c.version for c in read_log(run / "output" / "table") if (query_id, 1) in c.txns]
    assert holding == [kill["context"]["delta_version"]], holding  # committed before the kill, never again


@pytest.mark.heavy
def test_kafka_sink_duplicates_the_batch_killed_after_its_records_were_written(tmp_path: Path) -> None:
    """The kill after every record of batch 1 was in the topic and before commits/1 duplicated that batch's
    records, as the Kafka sink's documentation warns (at-least-once); the broker was started once and is gone."""
    rc, out, err = harness("certify", "--only", "sink:kafka", "--json", str(tmp_path / "k.json"), timeout=900)
    doc = json.loads((tmp_path / "k.json").read_text()) if (tmp_path / "k.json").exists() else {}
    [sink] = doc.get("rows") or [{"key": "sink:kafka", "error": f"no JSON: {err[-2000:]}"}]
    _skip_unless_measured(sink)
    assert rc == 0, out + err[-4000:]
    assert (sink["documented"], sink["measured"], sink["status"]) == ("at-least-once", "at-least-once", "agrees")
    assert "sink.write.mid@0, sink.commit.after@1" in sink["evidence"], sink["evidence"]
    assert "Kafka Integration Guide > Writing Data to Kafka" in sink["where"]
    assert "at least once write semantics" in sink["quote"]
    tl = doc["timelines"]["sink:kafka"]
    killed = [k for k in tl["kills"] if k["point"] == "sink.commit.after"]
    assert killed and not killed[0]["commit_logged"], tl["kills"]  # in the window: commits/1 not yet written
    dupes = {b["batch_id"]: b["anomalies"].get("duplicate", 0) for b in tl["batches"]}
    assert dupes[1] > 0 and f"{sum(dupes.values())} duplicate" in sink["evidence"], (dupes, sink["evidence"])
    assert err.count("one Kafka broker for the Kafka rows") == 1, err[-2000:]
    assert leftover_processes() == []


@pytest.mark.heavy
def test_kafka_source_replays_under_kills(tmp_path: Path) -> None:
    """Spark's Kafka source behind the exactly-once file sink: kills after offsets/0 and after commits/1 lose
    and duplicate nothing (replayable, as documented); its broker is started once and stopped."""
    rc, out, err = harness("certify", "--only", "source:kafka", "--json", str(tmp_path / "k.json"), timeout=900)
    doc = json.loads((tmp_path / "k.json").read_text()) if (tmp_path / "k.json").exists() else {}
    [row] = doc.get("rows") or [{"key": "source:kafka", "error": f"no JSON: {err[-2000:]}"}]
    _skip_unless_measured(row)
    assert rc == 0, out + err[-4000:]
    assert (row["documented"], row["measured"], row["status"]) == ("replayable", "replayable", "agrees")
    assert row["kills"] == 2 and "none lost or duplicated" in row["evidence"], row["evidence"]
    assert "Input Sources (Kafka Source)" in row["where"]
    assert err.count("one Kafka broker for the Kafka rows") == 1, err[-2000:]
    assert leftover_processes() == []


@pytest.mark.heavy  # about 3 min: six rows, two SIGKILLs each
def test_delta_foreachbatch_and_deltars_rows_agree_with_their_documentation(tmp_path: Path) -> None:
    """Each correct writer (txn options, MERGE with the session confs, delta-rs with its txn checked) holds and
    each twin repeats batch 1 after the kill between its Delta commit and commits/1, as documented."""
    keys = ",".join(HEAVY_DELTA)
    rc, out, err = harness(
        "certify", "--only", keys, "--json", str(tmp_path / "d.json"), "--keep", str(tmp_path / "runs"), timeout=1200
    )
    doc = json.loads((tmp_path / "d.json").read_text()) if (tmp_path / "d.json").exists() else {}
    rows = {r["key"]: r for r in doc.get("rows", [])}
    assert set(rows) == set(HEAVY_DELTA), out + err[-4000:]
    for row in rows.values():
        _skip_unless_measured(row)
    assert rc == 0, out + err[-4000:]
    for key, level in HEAVY_DELTA.items():
        row = rows[key]
        assert (row["documented"], row["measured"], row["status"]) == (level, level, "agrees"), row
        assert "sink.write.mid@0, sink.commit.after@1" in row["evidence"], row["evidence"]
        ledger = _ledger(tmp_path / "runs" / key.replace(":", "-"))
        [kill] = [k for k in ledger if k["rule"]["point"] == "sink.commit.after"]
        assert not kill["context"]["commit_logged"], kill  # in the window: commits/1 not yet written
        if level == "at-least-once":  # the twin's replay of batch 1 wrote a second Delta version
            assert TWICE.search(row["evidence"]), row["evidence"]
    assert leftover_processes() == []


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=missing("headless Chromium not installed (apt-get install -y chromium)")
)
def test_html_report_renders_in_headlesschromium(certified: dict[str, Any]) -> None:
    html, work = certified["html"], certified["dir"]
    assert html.exists(), certified["err"]
    dom = chromium(html, work, "--dump-dom").stdout
    assert 'data-layout-check="ok"' in dom, "labels leave the picture or overlap: " + dom[:300]
    measured = [r for r in certified["doc"]["rows"] if not str(r["error"]).startswith("skipped")]
    assert dom.count('<svg class="timeline"') == len(measured)
    for text in ("console sink", "memory sink", "stronger than documented", "sink.commit.after", "driver-", "batch 1"):
        assert text in dom
    shot = work / "report.png"
    chromium(html, work, f"--screenshot={shot}")
    assert shot.exists() and shot.stat().st_size > 20_000
    shutil.rmtree(work / "profile-dump-dom", ignore_errors=True)


@pytest.mark.heavy  # a fresh environment holding PySpark 4.1.4 and the wheel (~1 min), two rows measured there
def test_certify_measures_the_pyspark_of_another_environment(tmp_path: Path) -> None:
    user = install_wheel(tmp_path, "pyspark==4.1.4", extras="")
    try:
        # Outside the checkout: the child runs the harness installed there (-P), the wheel.
        rc, out, err = harness("certify", "--pyspark", user.bin("python"), "--only", "sink:memory,sink:console",
                               "--json", str(tmp_path / "c.json"), timeout=1200, cwd=tmp_path)  # fmt: skip
    finally:
        remove_heavy_parts(tmp_path)
    assert rc == 0, out + err[-3000:]
    assert f"certify: PySpark 4.1.4 of {user.bin('python')}" in err
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["meta"].startswith("PySpark 4.1.4, local[2]"), doc["meta"]
    rows = {r["key"]: (r["measured"], r["status"]) for r in doc["rows"]}
    assert rows == {"sink:memory": ("none", "agrees"), "sink:console": ("at-least-once", "stronger")}, doc["rows"]
    assert leftover_processes() == []
