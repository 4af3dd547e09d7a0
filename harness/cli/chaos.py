"""``python -m harness chaos`` (a campaign over a scenario, or over a connector's source with ``--source``)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from harness.cli.common import add_kafka_argument, kafka_problem
from harness.cli.common import fail as _fail
from harness.spark.connect import add_remote_argument
from harness.spark.standalone import add_cluster_argument, cluster_master
from harness.verdict.rowdiff import add_color_argument, use_color


def add_chaos_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", help="a scenario name (see `python -m harness list`) or module:ATTRIBUTE")
    p.add_argument(
        "--source",
        default=None,
        metavar="PATH.py:CLASS",
        help="instead of a scenario: campaign over this Python DataSource feeding the parquet file sink "
        "(with --context: rows added per round; without: its data arrives by itself, batches per round are drawn)",
    )
    p.add_argument(
        "--context",
        default=None,
        metavar="PATH.py:FUNCTION",
        help="with --source: the factory of a context that adds its data (omit for a source whose data arrives by "
        "itself: a poller, a live feed, a clock; a replay then reproduces the schedule, not the same rows)",
    )
    p.add_argument(
        "--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
        help="with --source: a source option (repeatable)",
    )  # fmt: skip
    p.add_argument("--examples", type=int, default=None, help="generated schedules to run (default: the profile's)")
    p.add_argument(
        "--volume",
        type=int,
        default=None,
        metavar="ROWS",
        help="rows per example: the drawn amounts and batches scaled up to it (e.g. 100000; default the profile's)",
    )
    p.add_argument(
        "--batch-rows",
        type=int,
        default=None,
        metavar="ROWS",
        help="rows a batch may take (fewer: longer schedules; 10+ batches aim faults at file-sink log compactions)",
    )
    p.add_argument(
        "--trigger",
        default="",
        metavar="T1,T2",
        help="triggers the examples run under, drawn per example (shrinks towards the first): available-now, once, "
        "processing-time:INTERVAL, continuous:INTERVAL, real-time:INTERVAL (default: rounds; docs/triggers.md)",
    )
    p.add_argument(
        "--rounds", type=int, default=None, metavar="N", help="rounds (job runs) of every example (default: drawn)"
    )
    p.add_argument("--seed", type=int, default=None, help="campaign seed (default: random, printed)")
    p.add_argument("--profile", default=None, help="dev | ci | nightly (default: $HARNESS_PROFILE or dev)")
    p.add_argument(
        "--shrink-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop shrinking a failure after this long and report the smallest found (default: the profile's)",
    )
    p.add_argument(
        "--nemesis",
        default="",
        metavar="A,B",
        help="nemesis actions the schedules may use (checkpoint ones; a Kafka scenario draws its source's anyway)",
    )
    p.add_argument("--master", default="local[2]", help="Spark master of the driver (default local[2])")
    add_remote_argument(p)
    add_cluster_argument(p)
    add_kafka_argument(p)
    p.add_argument("--work-dir", type=Path, default=None, help="keep examples and the bundle here")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="split the examples over this many processes, each with its own JVMs (pays only with spare cores)",
    )
    p.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="run shard I of N of the campaign's examples (blocks of 10; the N shards together run each once)",
    )
    p.add_argument(
        "--database",
        default=None,
        metavar="DIR|redis://HOST:PORT/DB|MODULE:ATTR",
        help="Hypothesis example database shared by shards and reruns: saved failures are replayed first",
    )
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the campaign result as JSON")
    add_color_argument(p)


def cmd_chaos(args: argparse.Namespace) -> int:
    from harness.chaos.campaign import run_campaign
    from harness.chaos.profiles import get_profile
    from harness.chaos.result import campaign_command, render_campaign
    from scenarios import get_scenario

    if (args.scenario is None) == (args.source is None):
        return _fail("give a scenario or --source PATH.py:CLASS (one of them)")
    if args.source is not None:
        return _cmd_chaos_source(args)
    try:
        get_scenario(args.scenario)
        profile = get_profile(args.profile).with_examples(args.examples).with_volume(args.volume, args.batch_rows)
        profile = profile.with_shrink_budget(args.shrink_budget)
        triggers = tuple(t.strip() for t in args.trigger.split(",") if t.strip())
        profile = profile.with_triggers(triggers, args.rounds)
    except KeyError as exc:
        return _fail(str(exc.args[0]))
    if args.rounds is not None and args.rounds < 1:
        return _fail("--rounds must be >= 1")
    try:
        from harness.engine.spec import RunSpec
        from harness.engine.trigger import run_trigger

        if triggers and get_scenario(args.scenario).upgrade_to:
            return _fail(f"scenario {args.scenario} is an upgrade run, which takes the default trigger: no --trigger")
        for text in triggers:
            run_trigger(RunSpec(args.scenario, 0, trigger=text), get_scenario(args.scenario))
    except ValueError as exc:
        return _fail(str(exc))
    if profile.examples < 1:
        return _fail("--examples must be >= 1")
    if (profile.volume is not None and profile.volume < 1) or (
        profile.batch_rows is not None and profile.batch_rows < 1
    ):
        return _fail("--volume and --batch-rows must be >= 1 row")
    if args.workers < 1:
        return _fail("--workers must be >= 1")
    if args.shrink_budget is not None and args.shrink_budget < 0:
        return _fail("--shrink-budget must be >= 0 seconds")
    from harness.chaos.database import DatabaseError, describe_database, open_database
    from harness.chaos.shards import Shard, idle_shard_message, shard_blocks

    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ValueError as exc:
        return _fail(str(exc))
    if (shard is not None or args.database) and args.workers > 1:
        return _fail("--shard and --database do not combine with --workers: run one shard per job (a CI matrix entry)")
    if shard is not None and args.seed is None:
        return _fail("--shard needs --seed: every shard of a campaign must draw from the same seed")
    if shard is not None and not shard_blocks(0, profile.examples, shard):
        return _fail(idle_shard_message(profile.examples, shard))
    try:
        if args.database:
            open_database(args.database)  # refused now, before any JVM, if it names nothing usable
    except DatabaseError as exc:
        return _fail(str(exc))
    from harness.spark.connect import parse_remote

    try:
        master = cluster_master(args.cluster, parse_remote(args.remote, args.master))
    except ValueError as exc:
        return _fail(str(exc))
    if problem := kafka_problem(args.scenario, args.kafka):
        return _fail(problem)
    nemesis = tuple(n for n in args.nemesis.split(",") if n)
    from harness.engine.schedule import known_nemeses

    known = known_nemeses(get_scenario(args.scenario))
    unknown = [n for n in nemesis if n not in known]
    if unknown:
        return _fail(f"unknown nemesis {unknown[0]!r}; known: {', '.join(known)}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    keep = args.work_dir is not None
    if keep and args.work_dir.is_dir() and any(args.work_dir.iterdir()):
        return _fail(f"--work-dir {args.work_dir} is not empty (it holds an earlier campaign); give a new one")
    from harness.engine.rundir import safe_name

    label = safe_name(args.scenario)
    work = args.work_dir.resolve() if keep else Path(tempfile.mkdtemp(prefix=f"harness-chaos-{label}-"))
    share = f" (shard {shard}: {sum(b.examples for b in shard_blocks(seed, profile.examples, shard))} of them)"
    rerun = campaign_command(
        args.scenario,
        seed,
        profile,
        shard=str(shard) if shard else None,
        database=describe_database(args.database) if args.database else None,
        nemesis=nemesis,
        workers=args.workers,
        master=master,
    )
    print(
        f"chaos {args.scenario}: {profile.examples} example(s){share if shard else ''}, seed {seed}, "
        f"profile {profile.name}; work dir {work}\nrerun: {rerun}",
        file=sys.stderr,
        flush=True,
    )
    common = {"seed_value": seed, "profile": profile, "work_dir": work, "nemesis": nemesis, "master": master}
    from scenarios.kafka.resource import given_broker

    with given_broker(args.kafka):
        if args.workers > 1:
            from harness.chaos.parallel import run_parallel_campaign

            result = run_parallel_campaign(args.scenario, workers=args.workers, **common)  # type: ignore[arg-type]
        else:
            result = run_campaign(args.scenario, shard=shard, database=args.database, **common)  # type: ignore[arg-type]
    print(render_campaign(result, color=use_color(sys.stdout, args.no_color)))
    if args.json:
        from harness.chaos.result import campaign_doc

        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(campaign_doc(result, args.json.parent), indent=2, default=str))
    if not keep and result.verdict == "exactly-once":
        shutil.rmtree(work, ignore_errors=True)
    return result.exit_code


def _cmd_chaos_source(args: argparse.Namespace) -> int:
    """``chaos --source``: a campaign over a connector's own source (:mod:`harness.conformance.source.campaign`)."""
    from harness.chaos.profiles import get_profile
    from harness.chaos.result import source_campaign_command
    from harness.conformance.source.campaign import render_source_campaign, run_source_campaign
    from harness.conformance.source.schedule import SourceSubject
    from harness.sources.loading import LoadError, parse_options

    unsupported = [
        flag
        for flag, used in (
            ("--workers", args.workers != 1),
            ("--master", args.master != "local[2]"),
            ("--cluster", args.cluster is not None),
            ("--nemesis", bool(args.nemesis)),
            ("--remote", bool(getattr(args, "remote", None))),
            ("--volume", args.volume is not None),
            ("--batch-rows", args.batch_rows is not None),
            ("--shard", args.shard is not None),
            ("--shrink-budget", args.shrink_budget is not None),
            ("--database", args.database is not None),
            ("--trigger", bool(args.trigger)),
            ("--rounds", args.rounds is not None),
        )
        if used
    ]
    if unsupported:
        return _fail(f"chaos --source does not take {', '.join(unsupported)} (one local driver, no nemesis)")
    try:
        profile = get_profile(args.profile).with_examples(args.examples)
        subject = SourceSubject(args.source, args.context, parse_options(args.options))
    except (KeyError, LoadError, ValueError) as exc:
        return _fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc).splitlines()[0])
    if profile.examples < 1:
        return _fail("--examples must be >= 1")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    keep = args.work_dir is not None
    if keep and args.work_dir.is_dir() and any(args.work_dir.iterdir()):
        return _fail(f"--work-dir {args.work_dir} is not empty (it holds an earlier campaign); give a new one")
    work = args.work_dir.resolve() if keep else Path(tempfile.mkdtemp(prefix="harness-chaos-source-"))
    print(
        f"chaos {subject.command()}: {profile.examples} example(s), seed {seed}, profile {profile.name}; "
        f"work dir {work}\nrerun: {source_campaign_command(subject.argv(), profile, seed)}",
        file=sys.stderr,
        flush=True,
    )
    try:
        result = run_source_campaign(
            subject, seed_value=seed, profile=profile, work_dir=work, echo=lambda m: print(m, file=sys.stderr)
        )
    except (LoadError, ValueError, TypeError) as exc:
        return _fail(str(exc).splitlines()[0])
    print(render_source_campaign(result, color=use_color(sys.stdout, args.no_color)))
    if args.json:
        doc = {
            "source": subject.source,
            "context": subject.context,
            "contextless": subject.contextless,
            "seed": seed,
            "profile": profile.name,
            "verdict": result.verdict,
            "examples": len(result.examples),
            "duration_s": round(result.duration_s, 1),
            "error": result.error,
            "discarded": len(result.discarded),
            "bundle": str(result.bundle) if result.bundle else None,
            "minimal_schedule": result.failure.schedule.describe() if result.failure else None,
            "anomaly_counts": result.failure.counts if result.failure else {},
        }
        args.json.write_text(json.dumps(doc, indent=2, default=str))
    if not keep and result.verdict == "exactly-once":
        shutil.rmtree(work, ignore_errors=True)
    return result.exit_code
