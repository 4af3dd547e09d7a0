"""The plugin's settings, as Spark users expect them: the ``harness_*`` ini options (``pyproject.toml``'s
``[tool.pytest.ini_options]``, ``pytest.ini``, ...; :mod:`harness.spark.project`) reach every driver through
the environment, the master of the ``spark`` fixture and of campaigns comes from ``harness_master``, and a
missing component (Java, a jar set, a broker) is a skip naming it, or a failure under ``--harness-strict``,
the ini option ``harness_strict`` or ``CI=true``: a CI job never goes green without the thing it tests."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: How a skip for an absent component begins (this project's own CI fails such skips: tests/ci_skips.py).
MISSING_PREFIX = "missing component: "

_TYPES = {"path": "string", "list": "linelist", "bool": "bool", "confs": "linelist"}


def add_options(parser: pytest.Parser, group: pytest.OptionGroup) -> None:
    """The ini options (:data:`harness.spark.project.OPTIONS`, ``harness_master``, ``harness_strict``) and
    ``--harness-strict``."""
    from harness.spark.project import OPTIONS

    for name, (variable, kind, text) in OPTIONS.items():
        parser.addini(name, f"{text} (env {variable} wins)", type=_TYPES[kind])  # type: ignore[arg-type]
    parser.addini("harness_master", "Spark master of the spark fixture and of campaigns (default local[2])")
    parser.addini("harness_strict", "a missing Java, jar set or broker fails the test instead of skipping", "bool")
    group.addoption(
        "--harness-strict",
        action="store_true",
        default=None,
        help="a missing Java, jar set or broker fails the test instead of skipping it (always under CI=true)",
    )


def configure(config: pytest.Config) -> None:
    """Export the ini options to the environment the drivers inherit (a variable already set wins); a value
    that cannot be used stops the session with a usage error naming the file and the option."""
    from harness.spark.project import OPTIONS, export

    where = str(config.inipath or "the pytest ini file")
    values: dict[str, object] = {}
    for name, (_, kind, _) in OPTIONS.items():
        value = config.getini(name)
        if kind == "path" and value and config.inipath is not None:
            value = str(config.inipath.parent / os.path.expanduser(str(value)))  # relative to the ini file
        values[name] = value
    try:
        export(values, where)  # type: ignore[arg-type]
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def master(config: pytest.Config) -> str:
    """The ini option ``harness_master``, else ``local[2]``."""
    from harness.spark.session import DEFAULT_MASTER

    return str(config.getini("harness_master") or DEFAULT_MASTER).strip()


def strict(config: pytest.Config) -> bool:
    """Whether a missing component fails instead of skipping."""
    return bool(
        config.getoption("--harness-strict") or config.getini("harness_strict") or os.environ.get("CI") == "true"
    )


def missing_component(config: pytest.Config, reason: str) -> NoReturn:
    """Skip the test for a missing component (``reason`` says what to install or run); fail it when
    :func:`strict`."""
    if strict(config):
        pytest.fail(f"{reason} (a failure, not a skip: --harness-strict or CI=true)", pytrace=False)
    pytest.skip(MISSING_PREFIX + reason)


def java_problem() -> str | None:
    """Why no Spark driver can start here (no Java), or ``None``."""
    from harness.spark.ivy import java_binary

    if java_binary() is None:
        return "'java' not found: install a JDK 17+ (apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME"
    return None
