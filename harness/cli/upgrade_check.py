"""``python -m harness upgrade-check CHECKPOINT NEW``: can the next version resume from this checkpoint?

Answers on one screen, with the exit code a release job tests: 0 resumable as is; 1 refused by Spark, or a
change Spark accepts that the programming guide forbids and the checkpoint shows; 2 resumable with a
documented risk the checkpoint cannot rule out, or no answer (the new query never started, or bad input, said
in one line). The answer's first line says which. Nothing is
written to the checkpoint and no new data is processed (:mod:`harness.upgrade.probe`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
from pathlib import Path

from harness.cli.common import fail


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = __doc__.split("\n\n")[0] if __doc__ else None
    p.add_argument("checkpoint", type=Path, help="the checkpoint (a copy of production's)")
    p.add_argument(
        "new",
        metavar="NEW",
        help="the next version: a library scenario, or path.py:NAME / module:NAME naming a Scenario or a function "
        "(spark) -> streaming DataFrame",
    )
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the answer as JSON here")
    p.add_argument(
        "--work",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the checkpoint copies and probe.json here (default: a temporary directory, removed)",
    )
    p.add_argument(
        "--sink-path",
        default=None,
        metavar="DIR",
        help="the file sink's output directory the new version writes (a scenario's own sink names it): checked "
        "against the checkpoint's committed batches",
    )
    p.add_argument("--master", default="local[2]", help="Spark master of the probe (default local[2])")
    p.add_argument(
        "--output-mode",
        choices=("append", "update", "complete"),
        default=None,
        help="the output mode production's writer uses (default: the first the new query starts in)",
    )


def render(answer: object, checkpoint: Path, name: str) -> str:
    from harness.upgrade.decide import Answer

    assert isinstance(answer, Answer)
    head = {
        "resumable": "resumable as is",
        "refused": "NOT resumable",
        "risk": "resumable, with a documented risk",
        "no-answer": "not checked: no answer",
    }[answer.answer]
    lines = [
        f"upgrade-check {checkpoint}: {name} is {head} (exit {answer.exit_code})",
        f"  probe: batch {answer.batch} replayed by the new version on a copy, into Spark's noop sink",
    ]
    if answer.error_class:
        lines.append(f"  Spark's error class: {answer.error_class}")
    for f in answer.findings:
        lines.append(f"  - {f.kind}: {f.detail}")
        if f.rule is not None:
            lines.append(f'    the guide ({f.rule.id}: {f.rule.change} is {f.rule.category}): "{f.rule.says}"')
    if not answer.findings:
        lines.append("  - Spark ran its restart checks and the state schemas are unchanged, field for field")
    return "\n".join(lines)


def cmd_upgrade_check(args: argparse.Namespace) -> int:
    from harness.inspector import CheckpointError, batch_ids, read_offsets

    checkpoint: Path = args.checkpoint
    if not (checkpoint / "offsets").is_dir():
        return fail(f"{checkpoint}: not a streaming checkpoint (no offsets/ directory)")
    planned = batch_ids(checkpoint / "offsets")
    if not planned:
        return fail(f"{checkpoint / 'offsets'}: no batch was ever planned; there is nothing to resume")
    try:
        read_offsets(checkpoint, planned[-1])
    except CheckpointError as exc:
        return fail(f"cannot read the checkpoint's offset log: {exc}")
    work = args.work or Path(tempfile.mkdtemp(prefix="harness-upgrade-check-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _check(args, checkpoint, work)
    finally:
        if args.work is None:  # the copies of the checkpoint are kept only when asked for
            shutil.rmtree(work, ignore_errors=True)


def _check(args: argparse.Namespace, checkpoint: Path, work: Path) -> int:
    from harness.inspector import CheckpointError
    from harness.spark.session import build_session
    from harness.upgrade.decide import RESTORED_CONFS, decide
    from harness.upgrade.pipeline import PipelineError, load_pipeline
    from harness.upgrade.probe import OUTPUT_MODES, ProbeError, file_sink_facts, probe

    try:
        pipeline = load_pipeline(args.new, checkpoint, work, args.sink_path)
    except PipelineError as exc:
        return fail(str(exc))
    # Spark's log (a refusal comes with an 80-line Java stack trace) goes to a file kept after the work dir.
    log = work / "spark.log" if args.work else Path(tempfile.mkstemp(prefix="harness-upgrade-check-", suffix=".log")[1])
    print(f"upgrade-check: probing {pipeline.name} on copies of {checkpoint} in {work}; Spark's log: {log}",
          file=sys.stderr)  # fmt: skip
    modes = (args.output_mode,) if args.output_mode else OUTPUT_MODES
    spark = build_session("harness-upgrade-check", args.master, log_file=log)
    try:
        found = probe(spark, checkpoint, pipeline.stream, work, list(RESTORED_CONFS), pipeline.confs, modes)
        found = dataclasses.replace(found, sink=file_sink_facts(pipeline.sink_path, spark))
    except (ProbeError, CheckpointError, OSError) as exc:
        return fail(str(exc))
    finally:
        spark.stop()
    found.save(work / "probe.json")
    try:
        answer = decide(checkpoint, found)
    except CheckpointError as exc:
        return fail(f"cannot read the checkpoint's state: {exc}")
    print(render(answer, checkpoint, pipeline.name))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"new": pipeline.name, **answer.to_json()}, indent=2, default=str))
    return answer.exit_code
