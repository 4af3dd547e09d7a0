"""``python -m harness replay BUNDLE [--times N] [--html PATH]``: rerun a saved bundle (a scenario's or a
source campaign's) and compare verdict and anomalies; ``html_writer`` draws a run's timeline page."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.cli.common import fail as _fail
from harness.verdict.rowdiff import add_color_argument, row_diff, use_color


def _replay_source(args: argparse.Namespace, file: Path) -> int:
    """``replay`` of a source campaign's bundle (:func:`harness.conformance.source.bundle.replay_source_bundle`)."""
    from harness.conformance.source.bundle import replay_source_bundle
    from harness.sources.loading import LoadError

    if args.times < 1:
        return _fail("--times must be >= 1")
    work = Path(tempfile.mkdtemp(prefix="harness-replay-source-"))
    print(f"replaying source bundle {args.bundle} in {work}", file=sys.stderr)
    try:
        code, reproduced, last = replay_source_bundle(json.loads(file.read_text()), args.times, work, print)
    except (KeyError, TypeError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        return _fail(f"{file}: not a source campaign bundle ({type(exc).__name__}: {exc})")
    except (LoadError, ValueError, OSError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        return _fail(f"{file}: {str(exc).splitlines()[0]}")
    if args.json:
        doc = {"kind": "source", "bundle": str(args.bundle), "times": args.times, "reproduced": reproduced}
        args.json.write_text(json.dumps({**doc, "verdict": last, "exit_code": code}, indent=2))
    if code != 2:
        shutil.rmtree(work, ignore_errors=True)
    return code


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle", type=Path, help="a bundle directory (or its bundle.json)")
    p.add_argument("--times", type=int, default=1, help="replay this many times (default 1)")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the last replay's result as JSON")
    p.add_argument(
        "--html", type=Path, default=None, metavar="PATH", help="draw the last replay's timeline as an HTML page"
    )
    add_color_argument(p)


def cmd_replay(args: argparse.Namespace) -> int:
    from harness.chaos.bundle import anomaly_keys, load_bundle, timed_landings
    from harness.engine.pool import DriverPool
    from harness.engine.report import render_text, summary_line, to_json
    from harness.engine.runner import HarnessError, default_standby, run_spec
    from harness.engine.schedule import build_schedule
    from scenarios import get_scenario

    if args.html is not None and args.html.is_dir():
        return _fail(f"--html {args.html} is a directory; give the path of the page to write")
    file = args.bundle / "bundle.json" if args.bundle.is_dir() else args.bundle
    try:
        kind = json.loads(file.read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None  # load_bundle names the problem
    if kind == "source":
        return _replay_source(args, file)
    try:
        spec, recorded = load_bundle(args.bundle)
    except ValueError as exc:
        return _fail(str(exc))
    want = (recorded["verdict"], anomaly_keys(recorded["anomalies"]))
    print(
        f"replaying {args.bundle}: recorded {recorded['verdict']} with {len(want[1])} anomaly row(s)", file=sys.stderr
    )
    if not spec.deterministic:
        landed = ", ".join(
            f"{t['id']} planned {t['planned_ms']} ms, landed {t['measured_ms']} ms"
            for t in recorded.get("timed_kills", [])
        )
        print(
            f"timed kill(s) ({landed or 'none fired'}): not deterministic, a replay lands a few ms elsewhere "
            "and reproduces only some of the time",
            file=sys.stderr,
        )
    reproduced = 0
    code = 2
    color = use_color(sys.stdout, args.no_color)
    logs = Path(tempfile.mkdtemp(prefix="harness-replay-logs-"))
    try:
        standby = default_standby(build_schedule(spec, get_scenario(spec.scenario)))
    except Exception:  # the run itself reports a bad scenario or schedule, in its own words
        standby = False
    # One driver for every replay, as a campaign has, and a ready standby where the plan kills it twice or more.
    with DriverPool(logs, spec.master, spec.confs, standby=standby) as pool:
        for i in range(1, args.times + 1):
            try:
                last = i == args.times
                outcome = run_spec(spec, echo=lambda m: None, pool=pool, finished=html_writer(args.html, last))
            except HarnessError as exc:
                return _fail(f"{exc} (driver logs in {logs})")
            doc = to_json(outcome)
            got = (doc["verdict"], anomaly_keys(doc["anomalies"]))
            same = got == want
            reproduced += same
            landed = "".join(f" [{t['id']} landed {t['measured_ms']} ms]" for t in timed_landings(outcome.kills_fired))
            print(f"replay {i}/{args.times}: {'reproduced' if same else 'DIFFERENT'}: {summary_line(outcome)}{landed}")
            if not same:
                print(render_text(outcome, color=color))
            elif i == args.times and (diff := row_diff(doc["anomalies"], color=color)):
                print(diff)
            code = outcome.exit_code if same else (0 if outcome.verdict == "exactly-once" else 2)
            if args.json:
                args.json.write_text(json.dumps(doc, indent=2, default=str))
    if reproduced == args.times:
        shutil.rmtree(logs, ignore_errors=True)
    rate = f"reproduced {reproduced}/{args.times} time(s)"
    if spec.deterministic:
        print(rate)
        return code if reproduced == args.times else (0 if code == 0 else 2)
    # A timed kill's bundle: a partial reproduction is what it promises; a violation reproduced once is real.
    print(f"{rate} (timed kill: not deterministic, a rate below {args.times}/{args.times} is expected)")
    return 1 if reproduced and recorded["verdict"] == "violated" else code


def html_writer(path: Path | None, wanted: bool = True) -> Any:
    """A ``run_spec(finished=...)`` hook that draws the run's timeline page to ``path`` (``None``: no hook)."""
    if path is None or not wanted:
        return None

    def write(outcome: Any) -> None:
        from harness.timeline.page import write_outcome_page

        try:
            print(f"timeline: {write_outcome_page(path, outcome)}", file=sys.stderr)
        except Exception as exc:  # the run's verdict and report matter more than its picture
            print(
                f"harness: --html {path}: the timeline was not written ({type(exc).__name__}: {exc})", file=sys.stderr
            )

    return write
