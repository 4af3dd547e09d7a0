"""The JVM host: Spark's driver JVM kept by a process of its own, for driver processes that attach to it.

A kill of a ``foreachBatch`` function's Python process (the ``kill_python`` fault action) leaves the JVM of a
hosted pool alive, and the next driver process attaches to it (:mod:`harness.spark.attach`) instead of paying
for a JVM, a SparkContext and cold Python workers again. Started by :mod:`harness.engine.pool` as
``python -m harness.engine.jvmhost --master M --confs JSON`` in a process group of its own: it builds the
session with the pool's confs, runs the warm-up query (:mod:`harness.spark.warm`), answers
``{"event": "hosting", "port": P, "secret": S, "pgid": G}`` and waits; ``{"cmd": "exit"}`` (or the end of its
stdin) stops Spark. Start-up errors answer ``{"event": "error", "message": ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

from fault_injectors.kills import DRIVER_PGID_ENV
from harness.spark.session import DEFAULT_MASTER, build_session
from harness.spark.warm import warm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.engine.jvmhost")
    parser.add_argument("--master", default=DEFAULT_MASTER)
    parser.add_argument("--confs", default="{}", help="JSON object of Spark confs")
    parser.add_argument("--incarnation", type=int, default=0, help="unused: the pool passes every child one")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # nothing Spark prints may corrupt the protocol
    # The host's JVM starts the Python workers: a kill from one of them takes this group down.
    os.environ[DRIVER_PGID_ENV] = str(os.getpgid(0))
    try:
        spark = build_session("exactly-once-harness", args.master, json.loads(args.confs))
        warm(spark)
    except Exception as exc:  # reported to the pool, which names the log file
        message = {"event": "error", "message": f"JVM host start-up failed: {exc}", "traceback": traceback.format_exc()}
        proto.write(json.dumps(message) + "\n")
        return 2
    params = spark.sparkContext._gateway.gateway_parameters  # type: ignore[union-attr]
    hosting = {"event": "hosting", "port": params.port, "secret": params.auth_token, "pgid": os.getpgid(0)}
    proto.write(json.dumps(hosting) + "\n")
    for line in sys.stdin:
        if json.loads(line).get("cmd") == "exit":
            break
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
