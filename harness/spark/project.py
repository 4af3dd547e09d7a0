"""A project's harness settings, kept where its pytest settings are: the ``harness_*`` ini options.

pytest reads them itself (the plugin declares them); the command line reads the same file, found as pytest
finds its ini file (walking up from the current directory: ``pytest.ini``, ``pyproject.toml`` with
``[tool.pytest.ini_options]``, ``tox.ini`` with ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``), so
``harness run`` in a project behaves as its tests do. Each option reaches every process the harness starts
through an environment variable; a variable the user set already wins over the file.
"""

from __future__ import annotations

import configparser
import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from harness.spark.cache import CACHE_ENV, OFFLINE_ENV
from harness.spark.ivy import REPOSITORIES_ENV
from harness.spark.jars import PACKAGES_ENV

#: Extra Spark confs every driver starts with, as a JSON object (``spark.sql.extensions``/``spark.jars`` are
#: appended to the harness's own, any other key replaces its default).
SPARK_CONFS_ENV = "HARNESS_SPARK_CONFS"

#: ini option -> (environment variable, kind, help). Kinds: ``path``, ``list`` (comma or line separated),
#: ``bool``, ``confs`` (``key=value`` lines).
OPTIONS: dict[str, tuple[str, str, str]] = {
    "harness_cache_dir": (CACHE_ENV, "path", "where set-up keeps jars and the class-data archive"),
    "harness_packages": (PACKAGES_ENV, "list", "your connectors' Maven coordinates, handed to every driver"),
    "harness_offline": (OFFLINE_ENV, "bool", "never touch the network; name what the cache lacks"),
    "harness_repositories": (REPOSITORIES_ENV, "list", "Maven registries to resolve from (default Central)"),
    "harness_spark_confs": (SPARK_CONFS_ENV, "confs", "key=value lines: Spark confs every driver starts with"),
}


def _items(value: str | Iterable[str]) -> list[str]:
    lines = value.replace(",", "\n").splitlines() if isinstance(value, str) else list(value)
    return [x.strip() for x in lines if x.strip()]


def parse_confs(value: str | Iterable[str], where: str) -> dict[str, str]:
    """``key=value`` lines -> a dict; ``ValueError`` naming ``where`` and the bad line."""
    lines = value.splitlines() if isinstance(value, str) else list(value)
    out: dict[str, str] = {}
    for line in (x.strip() for x in lines):
        if not line:
            continue
        key, sep, val = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{where}: {line!r} is not key=value")
        out[key.strip()] = val.strip()
    return out


def env_value(option: str, value: str | Iterable[str] | bool, where: str) -> str:
    """An ini value as the environment variable of ``option`` carries it."""
    _, kind, _ = OPTIONS[option]
    if kind == "bool":
        text = str(value).strip().lower()
        return "1" if value is True or text in ("1", "true", "yes", "on") else "0"
    if kind == "list":
        return ",".join(_items(value))  # type: ignore[arg-type]
    if kind == "confs":
        return json.dumps(parse_confs(value, where))  # type: ignore[arg-type]
    return str(Path(str(value)).expanduser())


def export(values: Mapping[str, str | Iterable[str] | bool], where: str) -> None:
    """Set the environment variable of every option given (non-empty) that the environment does not set."""
    for option, value in values.items():
        if option not in OPTIONS or value in ("", None, []):
            continue
        variable = OPTIONS[option][0]
        if not os.environ.get(variable):
            os.environ[variable] = env_value(option, value, f"{where} {option}")


def _read(path: Path) -> dict[str, object] | None:
    """The pytest section of ``path``, or ``None`` when the file is not a pytest ini file."""
    if path.name == "pyproject.toml":
        section = tomllib.loads(path.read_text()).get("tool", {}).get("pytest", {}).get("ini_options")
        return dict(section) if isinstance(section, dict) else None
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    name = {"pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}[path.name]
    if parser.has_section(name):
        return dict(parser.items(name))
    return {} if path.name == "pytest.ini" else None


def find_settings(start: Path | None = None) -> tuple[Path, dict[str, object]] | None:
    """The first pytest ini file from ``start`` (default: the current directory) upwards, and its options."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            candidate = directory / name
            if candidate.is_file():
                try:
                    found = _read(candidate)
                except (OSError, ValueError, configparser.Error):
                    found = None
                if found is not None:
                    return candidate, found
    return None


def load_project_settings(start: Path | None = None) -> Path | None:
    """Export the ``harness_*`` options of the project's ini file (see the module); returns the file read.
    ``ValueError`` names the file and option when a value cannot be used."""
    found = find_settings(start)
    if found is None:
        return None
    path, options = found
    export({k: v for k, v in options.items() if k in OPTIONS}, str(path))  # type: ignore[misc]
    return path


def spark_confs() -> dict[str, str]:
    """The confs :data:`SPARK_CONFS_ENV` names (``ValueError`` if it is not a JSON object of strings)."""
    raw = os.environ.get(SPARK_CONFS_ENV, "").strip()
    if not raw:
        return {}
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"{SPARK_CONFS_ENV} must be a JSON object of Spark confs, got {raw[:80]!r}")
    return {str(k): str(v) for k, v in value.items()}
