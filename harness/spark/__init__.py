"""Spark plumbing: sessions (classic and Connect), the driver's class-data archive, process groups and run
tokens, warming a session, and the ``sitecustomize`` that keeps Spark's Python processes off ``pyspark.zip``.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "ConnectServer": ("harness.spark.connect", "ConnectServer"),
    "DEFAULT_CONFS": ("harness.spark.session", "DEFAULT_CONFS"),
    "DEFAULT_MASTER": ("harness.spark.session", "DEFAULT_MASTER"),
    "apply_run_confs": ("harness.spark.session", "apply_run_confs"),
    "build_session": ("harness.spark.session", "build_session"),
    "ensure_archive": ("harness.spark.cds_build", "ensure_archive"),
    "is_connect": ("harness.spark.connect", "is_connect"),
    "java_options": ("harness.spark.cds", "java_options"),
    "kill_group": ("harness.spark.procs", "kill_group"),
    "kill_token": ("harness.spark.procs", "kill_token"),
    "new_token": ("harness.spark.procs", "new_token"),
    "parse_remote": ("harness.spark.connect", "parse_remote"),
    "spark_env": ("harness.spark.session", "spark_env"),
    "warm": ("harness.spark.warm", "warm"),
}

__all__ = [
    "DEFAULT_CONFS",
    "DEFAULT_MASTER",
    "ConnectServer",
    "apply_run_confs",
    "build_session",
    "ensure_archive",
    "is_connect",
    "java_options",
    "kill_group",
    "kill_token",
    "new_token",
    "parse_remote",
    "spark_env",
    "warm",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
