"""``harness setup``: everything the harness needs besides pip, for the installed PySpark, into the user's
cache (:mod:`harness.spark.setup`). A no-op when the cache is complete."""

from __future__ import annotations

import argparse
import os
import sys

from harness.cli.common import fail


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--packages",
        action="append",
        default=[],
        metavar="G:A:V[,G:A:V]",
        help="your own connectors (Iceberg, Hudi, a vendor's sink) to resolve and hand to every driver; "
        "repeatable (default: the ini option harness_packages, or $HARNESS_PACKAGES)",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="never touch the network: succeed if the cache is complete, else name what it lacks "
        "(also $HARNESS_OFFLINE=1, or the ini option harness_offline)",
    )
    p.add_argument(
        "--repository",
        action="append",
        default=[],
        metavar="URL",
        help="a Maven registry to resolve from instead of Maven Central (a mirror); repeatable, tried in order",
    )
    p.add_argument(
        "--cache-dir", default=None, metavar="DIR", help="the cache to fill (default: $HARNESS_CACHE_DIR or ~/.cache)"
    )
    p.add_argument("--no-cds", action="store_true", help="do not build the driver's class-data archive")


def cmd_setup(args: argparse.Namespace) -> int:
    from harness.spark.cache import CACHE_ENV, offline
    from harness.spark.jars import user_packages
    from harness.spark.releases import parse_coordinates
    from harness.spark.setup import run_setup

    if args.cache_dir:
        os.environ[CACHE_ENV] = args.cache_dir
    try:
        packages = parse_coordinates(",".join(args.packages)) if args.packages else user_packages()
    except ValueError as exc:
        return fail(f"setup --packages: {exc}")
    return run_setup(
        packages=packages,
        offline=args.offline or offline(),
        urls=args.repository,
        cds=not args.no_cds,
        echo=lambda m: print(m, file=sys.stderr, flush=True),
    )


def cmd_cds(args: argparse.Namespace) -> int:
    """``harness cds``: build the driver's class-data archive if it is missing (set-up does this too)."""
    from harness.spark.cds_build import main

    return main([])
