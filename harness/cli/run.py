"""``python -m harness run SCENARIO`` (one seeded kill/restart run and its verdict) and ``python -m harness list``
(scenarios, crash points, nemesis and fault actions)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from pathlib import Path

from fault_injectors.nemesis import checkpoint_nemeses
from fault_injectors.plan import (
    BOUNDARY_POINTS,
    CRASH_POINTS,
    STEP_POINT,
    STEP_POINTS,
    TIMED_POINT,
    TIMED_POINTS,
    FaultPlan,
    FaultPlanError,
    FaultRule,
)
from fault_injectors.registry import registered
from harness.cli.common import add_kafka_argument, kafka_problem
from harness.cli.common import fail as _fail
from harness.spark.connect import add_remote_argument
from harness.spark.standalone import add_cluster_argument, cluster_master
from harness.verdict.rowdiff import add_color_argument, use_color


def parse_kill(text: str) -> FaultRule:
    """:func:`harness.engine.spec.parse_kill_argument` for argparse (its ``ValueError`` as an ``ArgumentTypeError``)."""
    from harness.engine.spec import parse_kill_argument

    try:
        return parse_kill_argument(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "scenario",
        help="a built-in scenario's name (see `python -m harness list`) or "
        "package.module:ATTRIBUTE naming your own Scenario",
    )
    p.add_argument("--seed", type=int, default=None, help="seed for data and fault schedule (default: random, printed)")
    p.add_argument(
        "--kills", type=int, default=None, help="seeded SIGKILLs at crash points (default 3, or 0 with --kill)"
    )
    p.add_argument("--rounds", type=int, default=None, help="add-data/run rounds (default max(2, kills))")
    p.add_argument(
        "--volume",
        type=int,
        default=None,
        metavar="ROWS",
        help="rows of input in all, spread evenly over rounds and partitions (e.g. 1000000)",
    )
    p.add_argument(
        "--batch-rows",
        type=int,
        default=None,
        metavar="ROWS",
        help="rows a batch may take (fewer: more batches; default the scenario's, or about 2 batches a round with "
        "--volume)",
    )
    p.add_argument(
        "--state-store",
        default=None,
        choices=("hdfs", "rocksdb", "rocksdb-changelog"),
        help="state store of a stateful query (default Spark's, HDFS-backed)",
    )
    p.add_argument(
        "--checkpoint-format", type=int, default=None, choices=(1, 2), help="state checkpoint format version"
    )
    p.add_argument("--shuffle-partitions", type=int, default=None, metavar="N", help="state store partitions")
    p.add_argument(
        "--kill",
        action="append",
        type=parse_kill,
        default=[],
        metavar="POINT:BATCH[:PART[:ROWS]]",
        help=(
            f"an explicit kill; repeatable. {STEP_POINT}:BATCH:STEP[:WRAPPER[:PART]] kills just after step STEP of "
            "the sink's own code (see `python -m harness census`); "
            f"{TIMED_POINT}:BATCH:MS kills MS ms after offsets/BATCH is written (timed, not deterministic); "
            "a suffix @raise or @exit changes the action"
        ),
    )
    p.add_argument(
        "--fault-plan",
        type=Path,
        default=None,
        metavar="PLAN.json",
        help="fault rules from a JSON plan file (validated before Spark starts)",
    )
    p.add_argument(
        "--nemesis",
        action="append",
        default=[],
        metavar="ACTION",
        help="damage the checkpoint after the last round, or the source's input before the last round's run "
        "(Kafka: age_out_records, add_partitions); no query running; repeatable",
    )
    p.add_argument(
        "--upgrade-to",
        default=None,
        metavar="SCENARIO",
        help="an upgrade run: deploy this next version over the same checkpoint and sink (default: the scenario's "
        "upgrade_to, if it names one)",
    )
    p.add_argument(
        "--deploy",
        default=None,
        metavar="WHEN",
        help="when to deploy --upgrade-to: after-round:K (a graceful stop after round K; default after-round:1) or "
        "after-fault:ID (the driver killed by fault rule ID, e.g. x1 for the first --kill, restarts as the new "
        "version)",
    )
    p.add_argument(
        "--old-pyspark",
        default=None,
        metavar="PYTHON",
        help="a Spark upgrade run: this older PySpark's Python (bin/test-spark-upgrade builds .venv-spark/<version>) "
        "runs the first --old-rounds rounds fault-free, then this PySpark resumes its checkpoint (file sources only)",
    )
    p.add_argument("--old-rounds", type=int, default=1, metavar="K", help="rounds the --old-pyspark runs (default 1)")
    p.add_argument(
        "--trigger",
        default=None,
        metavar="KIND[:INTERVAL]",
        help="how the query runs: available-now or once (each round one scheduled job; a killed job is over and the "
        "next goes on), processing-time:INTERVAL, continuous:INTERVAL, real-time:INTERVAL (e.g. 'continuous:1 "
        "second'); default: rounds, each restarted until caught up (see docs/triggers.md)",
    )
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the result as JSON here")
    p.add_argument(
        "--html", type=Path, default=None, metavar="PATH", help="draw the run's timeline as an HTML page here"
    )
    add_color_argument(p)
    p.add_argument(
        "--run-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep everything of the run here (default: temp dir, removed on success)",
    )
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="watchdog per driver command (s)")
    p.add_argument("--master", default=None, help="Spark master of the driver (default local[2])")
    add_remote_argument(p)
    add_cluster_argument(p)
    add_kafka_argument(p)
    p.add_argument(
        "--census",
        action="store_true",
        help="record the steps of every wrapped sink call in the run directory (faults/census.jsonl)",
    )
    p.add_argument(
        "--standby",
        nargs="?",
        const="warm",
        default=None,
        choices=("ready", "warm", "none"),
        help="a second driver that takes over after a hard kill: 'ready' (its SparkSession up; the default when "
        "the plan kills the driver twice or more), 'warm' (its Python workers and sinks warmed too; the bare "
        "flag), 'none'",
    )


def cmd_run(args: argparse.Namespace) -> int:
    from harness.engine.report import render_text, to_json
    from harness.engine.runner import HarnessError, run_spec
    from harness.engine.spec import RunSpec
    from harness.spark.connect import parse_remote
    from harness.spark.session import DEFAULT_MASTER
    from scenarios import get_scenario

    try:
        upgrade_to = args.upgrade_to or get_scenario(args.scenario).upgrade_to
        if upgrade_to is not None:
            get_scenario(upgrade_to)
    except KeyError as exc:
        return _fail(str(exc.args[0]))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    kills = args.kills if args.kills is not None else (0 if args.kill or args.fault_plan else 3)
    try:
        master = cluster_master(args.cluster, parse_remote(args.remote, args.master or DEFAULT_MASTER))
    except ValueError as exc:
        return _fail(str(exc))
    try:
        faults = [dataclasses.replace(r, id=f"x{i + 1}") for i, r in enumerate(args.kill)]
        if args.fault_plan:
            faults += FaultPlan.load(args.fault_plan).rules
        spec = RunSpec(
            args.scenario,
            seed,
            kills,
            args.rounds,
            tuple(faults),
            fault_plan=str(args.fault_plan.resolve()) if args.fault_plan else None,
            nemesis=tuple(args.nemesis),
            command_timeout_s=args.timeout,
            census=args.census,
            volume=args.volume,
            batch_rows=args.batch_rows,
            state_store=args.state_store,
            checkpoint_format=args.checkpoint_format,
            shuffle_partitions=args.shuffle_partitions,
            master=master,
            upgrade_to=upgrade_to,
            deploy=args.deploy,
            old_pyspark=args.old_pyspark,
            old_rounds=args.old_rounds,
            trigger=args.trigger,
        )
        from harness.engine.schedule import build_schedule, known_nemeses

        known = known_nemeses(get_scenario(args.scenario))
        unknown = [n for n in args.nemesis if n not in known]
        if unknown:
            return _fail(f"unknown --nemesis {unknown[0]!r}; known: {', '.join(known)}")

        build_schedule(spec, get_scenario(args.scenario))
    except (ValueError, FaultPlanError) as exc:
        return _fail(str(exc))
    if args.html is not None and args.html.is_dir():
        return _fail(f"--html {args.html} is a directory; give the path of the page to write")
    if problem := kafka_problem(args.scenario, args.kafka):
        return _fail(problem)
    print(f"seed {seed}; replay: {spec.replay_command()}", file=sys.stderr, flush=True)
    try:
        from harness.cli.replay import html_writer
        from scenarios.kafka.resource import given_broker

        with given_broker(args.kafka):
            standby = False if args.standby == "none" else args.standby
            outcome = run_spec(spec, args.run_dir, standby=standby, finished=html_writer(args.html))
    except HarnessError as exc:
        return _fail(str(exc))
    print(render_text(outcome, color=use_color(sys.stdout, args.no_color)))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(to_json(outcome), indent=2, default=str))
    return outcome.exit_code


def cmd_list(args: argparse.Namespace) -> int:
    from scenarios import all_scenarios

    print("scenarios:")
    for s in all_scenarios().values():
        print(f"  {s.name:<28} {s.summary}")
    print("crash points:")
    for name, doc in CRASH_POINTS.items():
        print(f"  {name:<28} {doc}")
    print(f"steps of the sink's own code (--kill {STEP_POINT}:BATCH:STEP[:WRAPPER[:PART]]; see `census`):")
    for name, doc in STEP_POINTS.items():
        print(f"  {name:<28} {doc}")
    print(f"timed kills (--kill {TIMED_POINT}:BATCH:MS):")
    for name, doc in TIMED_POINTS.items():
        print(f"  {name:<28} {doc}")
    print("state maintenance moments (--kill POINT:BATCH; stateful queries, maintenance running):")
    for name, doc in BOUNDARY_POINTS.items():
        print(f"  {name:<28} {doc}")
    from harness.engine.trigger import KINDS

    print(f"triggers (--trigger KIND[:INTERVAL]; docs/triggers.md): {', '.join(KINDS)}")
    special = [s for s in all_scenarios().values() if set(s.triggers) - {"available-now", "once", "processing-time"}]
    for sc in special:
        print(
            f"  {sc.name:<28} {', '.join(sc.triggers)}"
            + (f" (default {sc.default_trigger})" if sc.default_trigger else "")
        )
    print("checkpoint nemesis actions (--nemesis):")
    for name, fn in checkpoint_nemeses().items():
        print(f"  {name:<28} {(fn.__doc__ or '').split(chr(10))[0]}")
    print("source nemesis actions (--nemesis; a Kafka scenario's topic, before the last round's run):")
    from scenarios.kafka.faults import KAFKA_NEMESES

    for name, doc in KAFKA_NEMESES.items():
        print(f"  {name:<28} {doc}")
    print("fault actions (an installed plugin's carry its prefix):")
    for name, act in registered().items():
        print(f"  {name:<28} {act.doc}")
    return 0
