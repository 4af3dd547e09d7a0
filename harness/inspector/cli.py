"""``python -m harness inspect``: read and check a checkpoint without Spark (a Structured Streaming one, or a
DStream ``StreamingContext``'s: :mod:`harness.inspector.dstream`).

Usage::

    python -m harness inspect CHECKPOINT [--json] [--sink-dir DIR] [--limit N] [--no-checksums] [--state]
                                         [--delta TABLE [--txn-app-id ID]]
    python -m harness inspect diff A B [--json]

Exit codes: 0 every invariant holds (diff: B is a consistent continuation of A),
1 a violation (diff: a conflict; --state: Spark's readers disagree with the files), 2 the input
cannot be read (or the options do not fit together) — reported as one line naming the path,
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from harness.inspector.checkpoint import CheckpointError

if TYPE_CHECKING:
    from harness.inspector.spark_view import SparkStateView

HELP = "read and check a Structured Streaming checkpoint (no Spark needed); `inspect diff A B` compares two"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``inspect`` subcommand."""
    p.description = __doc__.split("\n\n")[0] if __doc__ else None
    p.usage = (
        "python -m harness inspect CHECKPOINT [--json] [--sink-dir DIR] [--limit N] [--no-checksums] [--spark-state]\n"
        "                                            [--delta TABLE [--txn-app-id ID]]\n"
        "       python -m harness inspect diff A B [--json]"
    )
    p.add_argument(
        "target", nargs="+", metavar="TARGET", help="a checkpoint directory, or: diff A B (dirs or --json files)"
    )
    p.add_argument("--json", action="store_true", help="print everything as JSON (for machines) instead of text")
    p.add_argument("--sink-dir", type=Path, default=None, metavar="DIR", help="the file sink's output directory")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="timeline rows shown (newest; 0 = all)")
    p.add_argument(
        "--delta",
        default=None,
        metavar="TABLE",
        help="the Delta table the query writes: check that each committed batch is in its log exactly once "
        "(by the txn(appId, batch id) of each Delta commit)",
    )
    p.add_argument(
        "--txn-app-id",
        default=None,
        metavar="ID",
        help="the appId of the table's txn actions (default: the query id in the checkpoint's metadata, what "
        "Delta's streaming sink uses; foreachBatch writers set their own txnAppId)",
    )
    p.add_argument("--no-checksums", action="store_true", help="skip verifying .crc sidecars (faster on big state)")
    p.add_argument(
        "--state",
        "--spark-state",
        dest="spark_state",
        action="store_true",
        help="also read the state through Spark's state-metadata/statestore readers and cross-check them with the "
        "inspector's own reading of the files (starts a local Spark, ~10 s; exit 1 if they disagree)",
    )


def _error(path: str, problem: str) -> int:
    print(f"harness inspect: {path}: {problem}", file=sys.stderr)
    return 2


def _emit(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `| head` closed the pipe: not an error worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _spark_view(checkpoint: str) -> SparkStateView:
    from pyspark.sql import SparkSession

    from harness.inspector.spark_view import spark_state_view
    from harness.spark.session import build_session

    existing = SparkSession.getActiveSession()
    spark = existing or build_session("harness-inspect")
    try:
        return spark_state_view(spark, checkpoint)
    finally:
        if existing is None:  # never stop a session the caller owns
            spark.stop()


def _inspect_dstream(args: argparse.Namespace, checkpoint: str) -> int:
    """A ``StreamingContext`` (DStream) checkpoint: :mod:`harness.inspector.dstream`."""
    from harness.inspector.dstream import dstream_json, inspect_dstream, render_dstream

    for flag, given in (("--sink-dir", args.sink_dir), ("--delta", getattr(args, "delta", None))):
        if given is not None:
            return _error(flag, f"applies to a Structured Streaming checkpoint; {checkpoint} is a DStream one")
    report = inspect_dstream(checkpoint)
    _emit(json.dumps(dstream_json(report), indent=2) if args.json else render_dstream(report))
    return report.exit_code


def _inspect(args: argparse.Namespace, checkpoint: str) -> int:
    from harness.inspector.dstream import is_dstream_checkpoint

    if is_dstream_checkpoint(checkpoint):
        return _inspect_dstream(args, checkpoint)
    from harness.inspector.cross_check import cross_check, render_cross_check
    from harness.inspector.inspection import inspect_checkpoint
    from harness.inspector.render import render_text, report_json
    from harness.inspector.spark_view import render_spark_view, view_json

    report = inspect_checkpoint(
        checkpoint,
        args.sink_dir,
        verify_checksums=not args.no_checksums,
        delta_table=getattr(args, "delta", None),
        txn_app_id=getattr(args, "txn_app_id", None),
    )
    view = _spark_view(checkpoint) if args.spark_state else None
    checked = cross_check(view, report.model) if view is not None else None
    if args.json:
        doc = report_json(report)
        if view is not None and checked is not None:
            doc["spark_state"] = view_json(view)
            doc["spark_state"]["cross_check"] = asdict(checked)
        _emit(json.dumps(doc, indent=2, default=str))
    else:
        shown = "" if view is None or checked is None else f"\n{render_spark_view(view)}\n{render_cross_check(checked)}"
        _emit(render_text(report, args.limit) + shown)
    return max(report.exit_code, 1 if checked is not None and checked.disagree else 0)


def _diff(args: argparse.Namespace, a: str, b: str) -> int:
    from harness.inspector.diff import diff_json, diff_snapshots, load_snapshot, render_diff

    d = diff_snapshots(load_snapshot(a), load_snapshot(b))
    _emit(json.dumps(diff_json(d), indent=2) if args.json else render_diff(d))
    return d.exit_code


def run(args: argparse.Namespace) -> int:
    """Handler of the ``inspect`` subcommand; returns the exit code."""
    target: list[str] = args.target
    delta, app_id = getattr(args, "delta", None), getattr(args, "txn_app_id", None)
    if app_id is not None and delta is None:
        return _error("--txn-app-id", "applies only with --delta TABLE (the Delta table whose txns it names)")
    try:
        if target[0] == "diff" and not (len(target) == 1 and Path("diff").is_dir()):
            if delta is not None:
                return _error("--delta", "applies to one checkpoint, not to inspect diff")
            if len(target) != 3:
                return _error("diff", "expected exactly two inputs: inspect diff A B (checkpoint dirs or --json files)")
            return _diff(args, target[1], target[2])
        if len(target) != 1:
            return _error(" ".join(target), "expected one checkpoint directory (or: inspect diff A B)")
        return _inspect(args, target[0])
    except CheckpointError as exc:
        return _error(exc.path, exc.problem)
    except OSError as exc:
        return _error(str(exc.filename or target[-1]), f"cannot be read ({exc.strerror or exc})")
    except Exception as exc:  # never a traceback for users; HARNESS_DEBUG=1 shows it
        if os.environ.get("HARNESS_DEBUG"):
            raise
        return _error(target[-1], f"internal error {type(exc).__name__}: {exc} (rerun with HARNESS_DEBUG=1)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness inspect")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
